// SPDX-License-Identifier: GPL-2.0
/* One window of the agent: a fresh engine fed by the window's records
 * (agent_track.c), closed into its JSON report, which goes into the
 * metrics registry with the identity of each process and, with
 * --reports, into a file. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>
#include "host/gpudev.h"
#include "modes/agent_int.h"
#include "modes/feed.h"
#include "probes/discovery.h"
#include "engine/engine.h"
#include "host/identity.h"
#include "probes/log.h"
#include "util/outfile.h"
#include "host/procfs.h"
#include "probes/pyframes.h"
#include "stacks/symbolize.h"
#include "probes/tracer.h"
#include "util/util.h"

/* how long a window's close reads what the kernel still holds */
#define CLOSE_DRAIN_NS	(500ULL * 1000000)

/* Whether @pid's identity changed in this window (exec'd or ended:
 * ig_agent_forget_identity), so that the next one reads it again. */
static bool changed(const struct agent *a, pid_t pid)
{
	size_t i;

	for (i = 0; i < a->nchanged; i++)
		if (a->changed[i] == pid)
			return true;
	return false;
}

static void emit_meta(struct agent *a, __u64 ts)
{
	struct ig_meta m = {
		.h = { .type = IG_REC_META, .size = sizeof(m), .ts = ts },
		.version = IG_FORMAT_VERSION,
	};
	struct timespec rt;
	struct utsname u;
	size_t off = 0;
	int i;

	clock_gettime(CLOCK_REALTIME, &rt);
	m.realtime_ns = (__u64)rt.tv_sec * 1000000000ULL + rt.tv_nsec;
	m.ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (!uname(&u)) {
		ig_strcpy(m.host, sizeof(m.host), u.nodename);
		ig_strcpy(m.kernel, sizeof(m.kernel), u.release);
	}
	for (i = 0; i < a->o->self_argc && off < sizeof(m.command) - 1; i++)
		off += snprintf(m.command + off, sizeof(m.command) - off, "%s%s",
				i ? " " : "idlegap ", a->o->self_argv[i]);
	ig_agent_emit(a, &m.h);
}

/* Continuous windows: the gaps open and the work pending at the last
 * window's end go on in this one (docs/design.md §7.10); a GPU named by
 * its UUID or container keeps its name, and gets this window's number. */
static void carry_in(struct agent *a, __u64 now)
{
	size_t i;
	int d;

	for (i = 0; a->handover && i < a->ncarry; i++) {
		if (a->carry_tok[i][0]) {
			d = ig_agent_gpu_id(a, a->carry_tok[i]);
			if (d < 0)
				continue;
			a->carry[i].device = d;
		}
		ig_engine_carry_in(a->engine, &a->carry[i], now);
	}
	a->ncarry = 0;
}

/* The gaps open and the work pending at the window's end, for the next. */
static void carry_out(struct agent *a)
{
	size_t i;
	int d;

	a->ncarry = ig_engine_open_gaps(a->engine, a->carry, IG_AGENT_MAX_CARRY);
	for (i = 0; i < a->ncarry; i++) {
		d = a->carry[i].device - IG_GPU_NAMED;
		a->carry_tok[i][0] = '\0';
		if (d >= 0 && (size_t)d < a->ngpus)
			snprintf(a->carry_tok[i], sizeof(a->carry_tok[i]), "%s", a->gpus[d]);
	}
}

int ig_agent_window_open(struct agent *a, __u64 now)
{
	size_t i;
	int err;

	a->engine = ig_engine_new(&a->o->engine);
	a->reorder = a->engine ? ig_feed_engine(true, a->engine) : NULL;
	if (!a->ids)
		a->ids = calloc(IG_AGENT_MAX_IDS, sizeof(*a->ids));
	if (!a->reorder || !a->ids) {
		ig_err("cannot start a window's analysis: out of memory");
		ig_agent_window_free(a);
		return 1;
	}
	if (ig_tracer_stats(a->cap.tracer, &a->base))
		memset(&a->base, 0, sizeof(a->base));
	/* this engine has none of the stacks and names sent before */
	ig_capture_forget_sent(&a->cap);
	err = ig_tracer_pause(a->cap.tracer, false);
	if (err)
		ig_debug("resuming capture: %s", strerror(-err));
	a->nprev = 0;
	if (a->handover && a->nids) {
		if (!a->prev_ids)
			a->prev_ids = calloc(IG_AGENT_MAX_IDS, sizeof(*a->prev_ids));
		for (i = 0; a->prev_ids && i < a->nids; i++)
			if (!changed(a, a->ids[i].pid))
				a->prev_ids[a->nprev++] = a->ids[i];
	}
	a->nchanged = 0;
	a->nids = 0;
	a->ngpus = 0;
	a->ngpulib = 0;
	carry_in(a, now);
	a->opened_at = now;
	a->nrecords = 0;
	a->in_window = true;
	emit_meta(a, now);
	return 0;
}

static void held_free(struct agent_held *h);

void ig_agent_window_free(struct agent *a)
{
	held_free(&a->held);
	a->in_window = false;
	ig_reorder_free(a->reorder);
	ig_engine_free(a->engine);
	a->reorder = NULL;
	a->engine = NULL;
}

/* The kernel's counters over the window alone. */
static void emit_stats(struct agent *a, __u64 ts)
{
	struct ig_stats st = {
		.h = { .type = IG_REC_STATS, .size = sizeof(st), .ts = ts },
	};
	size_t i;

	if (!ig_tracer_stats(a->cap.tracer, &st)) {
		for (i = 0; i < IG_STAT__MAX; i++)
			st.stat[i] -= a->base.stat[i];
		for (i = 0; i < IG_API__MAX; i++)
			st.api_hits[i] -= a->base.api_hits[i];
	}
	st.user_lost = ig_reorder_late(a->reorder);
	ig_agent_emit(a, &st.h);
}

static void save_report(struct agent *a, const char *text, size_t len)
{
	const struct ig_agent_opts *o = a->o;
	int err;

	if (!o->reports_dir)
		return;
	err = ig_agent_reports_write(o->reports_dir, a->nwindows, text, len,
				     o->reports_keep, o->reports_max_bytes);
	if (err)
		ig_warn("%s: cannot write window report %llu: %s", o->reports_dir,
			a->nwindows, ig_outfile_strerror(err));
}

/* The records the window lost: the kernel's failed ring reservations
 * and the records that came too late for the reorder window. */
static unsigned long long window_lost(struct json_object *j)
{
	struct json_object *ev, *d;

	if (!j || !json_object_object_get_ex(j, "events", &ev) ||
	    !json_object_object_get_ex(ev, "dropped", &d))
		return 0;
	return (unsigned long long)json_object_get_int64(d);
}

/* What a window's report is made of: its engine, the processes it read
 * and those it saw map a libcuda. */
struct win_out {
	struct ig_engine *engine;
	const struct ig_pid_identity *ids;
	size_t nids;
	const struct ig_agent_gpulib *gpulib;
	size_t ngpulib;
	__u64 extended;		/* past its END, waiting for a gap's end */
};

/* The GPU processes seen mapping a libcuda in the window: how many, how
 * many were followed (in the report's processes), and those that ended
 * before they could be, by pid. */
static struct json_object *gpu_processes(const struct win_out *w,
					 unsigned long long *missed)
{
	struct json_object *o = json_object_new_object();
	struct json_object *l = json_object_new_array();
	size_t i, listed = 0;

	*missed = 0;
	for (i = 0; o && l && i < w->ngpulib; i++) {
		struct json_object *p;

		if (ig_agent_seen_in(w->ids, w->nids, w->gpulib[i].pid))
			continue;
		(*missed)++;
		if (listed == IG_AGENT_MISSED_LISTED)
			continue;
		p = json_object_new_object();
		json_object_object_add(p, "pid", json_object_new_int64(w->gpulib[i].pid));
		json_object_object_add(p, "comm", json_object_new_string(w->gpulib[i].comm));
		json_object_array_add(l, p);
		listed++;
	}
	if (!o || !l) {
		json_object_put(o);
		json_object_put(l);
		return NULL;
	}
	json_object_object_add(o, "mapped", json_object_new_int64((int64_t)w->ngpulib));
	json_object_object_add(o, "followed", json_object_new_int64((int64_t)(w->ngpulib - *missed)));
	json_object_object_add(o, "missed", json_object_new_int64((int64_t)*missed));
	json_object_object_add(o, "missed_list", l);
	json_object_object_add(o, "missed_list_omitted",
			       json_object_new_int64((int64_t)(*missed - listed)));
	return o;
}

/* The followed processes whose GPU nothing placed (docs/design.md
 * §4.2): each is a gpu.devices entry of its own, "device": null. */
static int64_t unknown_devices(struct json_object *j)
{
	struct json_object *g, *d, *v;
	size_t i, n;
	int64_t k = 0;

	if (!json_object_object_get_ex(j, "gpu", &g) ||
	    !json_object_object_get_ex(g, "devices", &d) ||
	    !json_object_is_type(d, json_type_array))
		return 0;
	n = json_object_array_length(d);
	for (i = 0; i < n; i++)
		k += json_object_object_get_ex(json_object_array_get_idx(d, i),
					       "device", &v) && !v;
	return k;
}

/* "window": how long the window waited past its END for a gap's end,
 * beside what the engine says it carried in and out. */
static int window_json(struct json_object *j, __u64 extended)
{
	struct json_object *w;
	char num[32];

	if (!json_object_object_get_ex(j, "window", &w)) {
		w = json_object_new_object();
		if (!w)
			return -ENOMEM;
		json_object_object_add(w, "rule", json_object_new_string("split"));
		json_object_object_add(j, "window", w);
	}
	snprintf(num, sizeof(num), "%.6f", extended / 1e9);
	json_object_object_add(w, "extended_s", json_object_new_double_s(extended / 1e9, num));
	return 0;
}

/*
 * What the agent adds to the engine's report (docs/design.md §7.10): a
 * window that lost records is partial, as a recording that lost them is
 * ("complete": false, so the registry counts it in
 * idlegap_windows_partial_total), "gpu_processes" and "window".  The
 * report is written again from its parse, which keeps every number as
 * the engine printed it.
 */
static int amend(struct agent *a, const struct win_out *w, struct json_object *j,
		 char **text, size_t *len)
{
	struct json_object *gp;
	unsigned long long lost = window_lost(j), missed;
	const char *t;

	if (lost) {
		ig_warn("window %llu lost %llu records (the ring buffer was full, "
			"or records came too late): its report is partial",
			a->nwindows, lost);
		json_object_object_add(j, "complete", json_object_new_boolean(0));
	}
	gp = gpu_processes(w, &missed);
	if (!gp || window_json(j, w->extended))
		return -ENOMEM;
	json_object_object_add(gp, "unknown_device",
			       json_object_new_int64(unknown_devices(j)));
	json_object_object_add(j, "gpu_processes", gp);
	if (missed)
		ig_debug("window %llu: %llu GPU processes ended before they were followed",
			 a->nwindows, missed);
	t = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
			JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!t)
		return -ENOMEM;
	free(*text);
	*len = strlen(t) + 1;
	*text = malloc(*len + 1);
	if (!*text)
		return -ENOMEM;
	memcpy(*text, t, *len - 1);
	(*text)[*len - 1] = '\n';
	(*text)[*len] = '\0';
	return 0;
}

/* The window's report into --reports and the registry.  1 after one line
 * when it cannot be made. */
static int report_window(struct agent *a, const struct win_out *w)
{
	struct json_object *j;
	char *text = NULL;
	size_t len = 0;
	int err;

	ig_engine_finish(w->engine);
	err = ig_engine_report_json_buf(w->engine, &text, &len);
	if (err) {
		ig_err("cannot make window %llu's report: %s", a->nwindows + 1, strerror(-err));
		return 1;
	}
	a->nwindows++;
	j = json_tokener_parse(text);
	if (j && amend(a, w, j, &text, &len)) {
		ig_err("cannot make window %llu's report: out of memory", a->nwindows);
		json_object_put(j);
		free(text);
		return 1;
	}
	save_report(a, text, len);
	err = j ? ig_metrics_add_window(a->metrics, j, w->ids, w->nids) : -EINVAL;
	if (err)
		ig_warn("window %llu: not added to the metrics: %s", a->nwindows,
			strerror(-err));
	json_object_put(j);
	free(text);
	return 0;
}

/* No probe while the report is made, and until the next window. */
static void detach_probes(struct agent *a)
{
	__u64 t = ig_mono_ns();
	int err;

	ig_discovery_detach_all(a->cap.disc);
	a->unlink_mark = ig_tracer_unlink_mark();
	/* until the next window nothing reads a stack or a wait */
	err = ig_tracer_pause(a->cap.tracer, true);
	if (err)
		ig_debug("pausing capture: %s", strerror(-err));
	ig_debug("window %llu: probes removed in %.0f ms", a->nwindows + 1,
		 (ig_mono_ns() - t) / 1e6);
}

static void held_free(struct agent_held *h)
{
	ig_reorder_free(h->reorder);
	ig_engine_free(h->engine);
	free(h->ids);
	free(h->gpulib);
	memset(h, 0, sizeof(*h));
}

/* The window ends inside a gap: its engine, with copies of what it read
 * of its processes, waits for the gap's end, for one more window at
 * most.  @detach: its probes come off then (a duty cycle's window). */
static int hold_window(struct agent *a, __u64 at, __u64 window_ns, bool detach)
{
	struct agent_held *h = &a->held;

	memset(h, 0, sizeof(*h));
	h->ids = a->nids ? malloc(a->nids * sizeof(*h->ids)) : NULL;
	h->gpulib = a->ngpulib ? malloc(a->ngpulib * sizeof(*h->gpulib)) : NULL;
	if ((a->nids && !h->ids) || (a->ngpulib && !h->gpulib)) {
		held_free(h);
		return -ENOMEM;
	}
	if (a->nids)
		memcpy(h->ids, a->ids, a->nids * sizeof(*h->ids));
	if (a->ngpulib)
		memcpy(h->gpulib, a->gpulib, a->ngpulib * sizeof(*h->gpulib));
	h->nids = a->nids;
	h->ngpulib = a->ngpulib;
	h->engine = a->engine;
	h->reorder = a->reorder;
	h->at = at;
	h->until = at + window_ns;
	h->detach = detach;
	a->engine = NULL;
	a->reorder = NULL;
	ig_debug("window %llu ends inside %u gaps: held until they end", a->nwindows + 1,
		 ig_engine_held_open(h->engine));
	return 0;
}

int ig_agent_held_poll(struct agent *a, bool force)
{
	struct agent_held *h = &a->held;
	struct ig_end end = {
		.h = { .type = IG_REC_END, .size = sizeof(end) },
		.reason = IG_STOP_DURATION,
	};
	__u64 now = ig_mono_ns(), last;
	struct win_out w;
	int rc;

	if (!h->engine || (!force && now < h->until && ig_engine_held_open(h->engine)))
		return 0;
	/* how far it went: the engine counts a gap still open up to here */
	end.h.ts = now < h->until ? now : h->until;
	ig_reorder_push(h->reorder, &end.h);
	ig_reorder_flush(h->reorder);
	/* extended until its gaps ended, when they did, not until seen */
	last = !ig_engine_held_open(h->engine) ? ig_engine_held_ended(h->engine) : 0;
	if (!last || last > end.h.ts)
		last = end.h.ts;
	w = (struct win_out){ h->engine, h->ids, h->nids, h->gpulib, h->ngpulib,
			      last > h->at ? last - h->at : 0 };
	ig_debug("window %llu: extended by %.3f s", a->nwindows + 1, w.extended / 1e9);
	rc = report_window(a, &w);
	if (h->detach)
		detach_probes(a);
	held_free(h);
	/* what the engine freed goes back to the system (ig_agent_run) */
	malloc_trim(0);
	return rc;
}

int ig_agent_window_close(struct agent *a, unsigned int why, bool keep_probes,
			  __u64 window_ns)
{
	struct ig_end end = {
		.h = { .type = IG_REC_END, .size = sizeof(end) },
		.reason = why,
	};
	struct win_out w;
	int rc, err;

	/* what the kernel still holds, for a bounded time: a job that sends
	 * faster than the agent reads would hold the window open, and its
	 * evidence, for as long (docs/design.md §7.10) */
	end.h.ts = ig_tracer_drain(a->cap.tracer, CLOSE_DRAIN_NS, &err);
	/* what was kept back after it goes to the next window (continuous),
	 * or is dropped as sent between windows */
	ig_tracer_stop_at(a->cap.tracer, 0);
	if (err)
		why = IG_STOP_ERROR;
	a->closed_at = end.h.ts;
	emit_stats(a, end.h.ts);
	end.nrecords = a->nrecords + 1;
	ig_agent_emit(a, &end.h);
	ig_reorder_flush(a->reorder);
	a->in_window = false;
	/* a window held before this one ends now: one window at most */
	rc = ig_agent_held_poll(a, true);
	/* the window ends at END (docs/design.md §7.10): continuous windows
	 * count a gap open then up to there and carry it on, and carry the
	 * work pending; a window ended by its duration inside a gap waits for
	 * its end, its probes kept */
	ig_engine_hold(a->engine, end.h.ts, keep_probes);
	a->ncarry = 0;
	if (keep_probes)
		carry_out(a);
	if (why == IG_STOP_DURATION && ig_engine_held_open(a->engine) &&
	    !hold_window(a, end.h.ts, window_ns, !keep_probes))
		return rc;
	/* no probe while its report is made, and until the next one;
	 * continuous windows keep them, and the records sent from END on
	 * wait in the ring buffer for the next window */
	if (!keep_probes)
		detach_probes(a);
	w = (struct win_out){ a->engine, a->ids, a->nids, a->gpulib, a->ngpulib, 0 };
	rc |= report_window(a, &w);
	ig_agent_window_free(a);
	malloc_trim(0);
	return rc | (err != 0);
}
