// SPDX-License-Identifier: GPL-2.0
/*
 * Windows that drop no gap (docs/design.md §7.10).  A window ends at its
 * END; a gap open then is held: the engine goes on taking the threads'
 * records, and the GPU's only to see what ends that gap.  A submission
 * ends it as an idle gap, attributed like any other by a walk of the
 * submitter's timeline, in the window's part of it (clip: up to the
 * window's end, the next window counting the rest, carried in) or whole
 * (a duty cycle's window, extended).  Work never seen submitted makes it
 * unresolved; the end of its processes drops it, as at a trace's end;
 * still open at finish, it is idle_open: idle, with no cause.
 */
#include <string.h>
#include "engine/model.h"
#include "engine/tasks.h"
#include "engine/gpu/gpu.h"
#include "engine/jsonval.h"

bool ig_carry_wants(uint32_t type)
{
	switch (type) {
	case IG_REC_OFFCPU:
	case IG_REC_SAMPLE:
	case IG_REC_CUDA:
	case IG_REC_BIO:
	case IG_REC_PROC:
	case IG_REC_TASK:
	case IG_REC_FILE:
	case IG_REC_PYSTACK:
	case IG_REC_USTACK:
	case IG_REC_PYCODE:
	case IG_REC_USYM:
	case IG_REC_PYRT:
		return true;
	default:
		/* the next window's META, announcements, counters, END */
		return false;
	}
}


void ig_engine_hold(struct ig_engine *e, uint64_t t, bool clip)
{
	uint32_t i;

	if (!e || e->gpu.held_at || e->win.finished)
		return;
	for (i = 0; i < e->gpu.ndevs; i++) {
		struct ig_device *d = e->gpu.devs[i];

		if (!d->active)
			continue;
		/* the window went to t: work pending at the end was pending
		 * until then, a drained device idle (a gap opens at its last
		 * drain even when no record came after it) */
		d->last_ev = ig_max64(d->last_ev, t);
		ig_gpu_dev_end(e, d);
		if (d->idle_open && !d->nopen && ig_gpu_dev_has_procs(d) && d->final_until < t) {
			d->held = true;
			d->held_from = d->final_until;
		} else {
			d->frozen = true;
		}
	}
	e->gpu.held_at = t;
	e->gpu.held_clip = clip;
}

void ig_carry_tail(struct ig_engine *e, uint64_t t)
{
	uint32_t i;

	for (i = 0; i < e->gpu.ndevs; i++) {
		struct ig_device *d = e->gpu.devs[i];

		/* after the span (span_end_ns): the span's states still sum
		 * to it */
		if (d->active && d->idle_open && !d->nopen &&
		    ig_gpu_dev_has_procs(d) && d->final_until < t)
			d->idle_open_ns += t - d->final_until;
	}
}

unsigned int ig_engine_held_open(const struct ig_engine *e)
{
	unsigned int n = 0;
	uint32_t i;

	for (i = 0; e && i < e->gpu.ndevs; i++)
		n += e->gpu.devs[i]->held;
	return n;
}

uint64_t ig_engine_held_ended(const struct ig_engine *e)
{
	uint64_t t = 0;
	uint32_t i;

	for (i = 0; e && i < e->gpu.ndevs; i++)
		t = ig_max64(t, e->gpu.devs[i]->held_end);
	return t;
}

/* When the held gap opened: in an earlier window for one carried in and
 * still open. */
static uint64_t held_start(const struct ig_device *d)
{
	return d->carry_start && d->held_from == d->span_start ? d->carry_start :
								  d->held_from;
}

static void add_pid(struct ig_open_gap *g, uint32_t pid)
{
	uint32_t i;

	for (i = 0; i < g->npids; i++)
		if (g->pids[i] == pid)
			return;
	if (g->npids < IG_CARRY_PIDS)
		g->pids[g->npids++] = pid;
}

static void gap_pids(const struct ig_engine *e, const struct ig_device *d,
		     struct ig_open_gap *g)
{
	const struct ig_process *p;
	const struct ig_stream *s;
	uint32_t it = 0, k, i;

	for (i = 0; i < d->ncarry; i++)
		add_pid(g, d->carry_pids[i]);
	while ((p = ig_htab_next((struct ig_htab *)&e->tasks.procs, &it))) {
		if (p->exit_ts != IG_NS_INF)
			continue;
		k = 0;
		while ((s = ig_htab_next((struct ig_htab *)&p->streams, &k)))
			if (s->dev == d) {
				add_pid(g, p->pid);
				break;
			}
	}
}

static void pending_streams(const struct ig_device *d, struct ig_open_gap *g)
{
	uint32_t i;

	for (i = 0; i < d->nopen && g->nstreams < IG_CARRY_PIDS; i++) {
		const struct ig_stream *s = d->open[i];
		struct ig_open_stream *o = &g->streams[g->nstreams++];

		o->tgid = s->proc->pid;
		o->key = s->key;
		o->since = s->p_start;
		o->feeder_tid = s->feeder_tid;
		o->feeder_tgid = s->feeder_tgid;
		add_pid(g, s->proc->pid);
	}
}

size_t ig_engine_open_gaps(const struct ig_engine *e, struct ig_open_gap *out,
			   size_t max)
{
	size_t n = 0;
	uint32_t i;

	for (i = 0; e && i < e->gpu.ndevs && n < max; i++) {
		const struct ig_device *d = e->gpu.devs[i];

		if (d->active && !d->held && d->nopen && e->gpu.held_at) {
			memset(&out[n], 0, sizeof(out[n]));
			out[n].device = d->ordinal;
			out[n].pending = true;
			pending_streams(d, &out[n]);
			n++;
			continue;
		}
		if (!d->held)
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		out[n].device = d->ordinal;
		/* a gap carried in and carried on keeps its first start */
		out[n].gap_start = held_start(d);
		gap_pids(e, d, &out[n]);
		n++;
	}
	return n;
}

void ig_engine_carry_in(struct ig_engine *e, const struct ig_open_gap *g,
			uint64_t t)
{
	struct ig_device *d = e ? ig_gpu_dev_get(e, g->device) : NULL;
	uint32_t i;

	if (!d || d->active)
		return;
	d->active = true;
	d->span_start = d->final_until = d->last_ev = t;
	if (g->pending) {
		for (i = 0; i < g->nstreams && i < IG_CARRY_PIDS; i++) {
			const struct ig_open_stream *o = &g->streams[i];
			struct ig_process *p = ig_tasks_process_get(e, o->tgid, t);
			struct ig_stream *s = p && !ig_htab_get(&p->streams, o->key) ?
					      ig_gpu_stream_new(p, o->key, d) : NULL;

			if (s) {
				ig_gpu_stream_open(s, t, t, o->feeder_tid, o->feeder_tgid);
				/* the sweep counts it from t only */
				s->p_start = ig_min64(o->since, t);
			}
		}
		return;
	}
	d->idle_open = true;
	d->carry_from = t;
	d->carry_start = g->gap_start < t ? g->gap_start : t;
	d->ncarry = g->npids < IG_CARRY_PIDS ? g->npids : IG_CARRY_PIDS;
	memcpy(d->carry_pids, g->pids, d->ncarry * sizeof(d->carry_pids[0]));
}

/* The held gap of @d ended at @t1: by a submission of @tid (@idle), or by
 * work never seen submitted. */
static void held_end(struct ig_engine *e, struct ig_device *d, uint64_t t1,
		     uint32_t tid, uint32_t tgid, bool idle)
{
	uint64_t t0 = d->final_until;
	uint64_t end = e->gpu.held_clip ? ig_min64(t1, e->gpu.held_at) : t1;
	struct ig_piece p = { .t0 = t0, .t1 = end, .tid = tid, .tgid = tgid,
			      .device = d->ordinal };
	struct ig_gap g = { .t0 = t0, .t1 = end, .tid = tid, .tgid = tgid,
			    .device = d->ordinal };

	d->held = false;
	d->frozen = true;
	d->held_end = t1;
	d->held_how = idle ? IG_HELD_LAUNCH : IG_HELD_WORK;
	d->idle_open = false;
	if (end <= t0)
		return;
	d->held_ns = end - t0;
	d->final_until = end;
	if (!idle) {
		/* pending since the drain, as the model would have it */
		d->unres_ns += end - t0;
		e->gpu.sink.unresolved(e->gpu.sink.ctx, &p);
		return;
	}
	d->idle_ns += end - t0;
	/* the gap is one gap, counted where it ends (the next window
	 * counts it, with its whole length, when this one is clipped) */
	if (!e->gpu.held_clip) {
		d->gaps++;
		ig_hist_add(&e->attr.gap_hist, t1 - t0);
		ig_hist_add(&d->gap_hist, t1 - t0);
	}
	ig_gaplist_add(&e->attr.gaps, &g);
	e->gpu.sink.idle_gap(e->gpu.sink.ctx, &g);
}

/* Did @c say the GPU got work: a submission, a copy, or a queue found
 * busy or drained of work submitted after the gap opened? */
static int work_of(const struct ig_cuda *c, uint64_t since)
{
	switch (c->kind) {
	case IG_CU_SUBMIT:
		return 1;
	case IG_CU_SYNC_BEGIN:
		return ig_api_class_of(c->api) == IG_AC_SYNC_COPY;
	case IG_CU_QUERY_BUSY:
		return 2;
	case IG_CU_SYNC_END:
	case IG_CU_QUERY_DONE:
		return !c->ret && c->last_submit > since ? 2 : 0;
	default:
		return 0;
	}
}

void ig_carry_cuda(struct ig_engine *e, const struct ig_cuda *c)
{
	struct ig_process *p = ig_tasks_process_get(e, c->h.tgid, c->h.ts);
	struct ig_device *d;
	uint32_t i;
	int w;

	if (!p)
		return;
	for (i = 0, d = NULL; i < e->gpu.ndevs; i++)
		if (e->gpu.devs[i]->ordinal == ig_gpu_proc_device(p))
			d = e->gpu.devs[i];
	if (!d || !d->held || c->h.ts < d->final_until)
		return;
	w = work_of(c, d->final_until);
	if (w)
		held_end(e, d, c->h.ts, c->h.tid, c->h.tgid, w == 1);
}

void ig_carry_finish(struct ig_engine *e)
{
	uint64_t end;
	uint32_t i;

	for (i = 0; i < e->gpu.ndevs; i++) {
		struct ig_device *d = e->gpu.devs[i];

		if (!d->held)
			continue;
		end = e->gpu.held_clip ? e->gpu.held_at :
		      ig_max64(e->gpu.held_at, e->win.now);
		d->held = false;
		d->held_how = IG_HELD_BOUND;
		if (end > d->final_until) {
			d->idle_open_ns += end - d->final_until;
			d->held_ns = end - d->final_until;
			d->final_until = end;
		}
	}
}

/* ---- the report's "window" ---- */

static const char *how_name(uint8_t how)
{
	static const char *const n[] = {
		[IG_HELD_OPEN] = "open", [IG_HELD_LAUNCH] = "launch",
		[IG_HELD_WORK] = "work_unseen", [IG_HELD_EXIT] = "processes_ended",
		[IG_HELD_BOUND] = "bound",
	};

	return how < sizeof(n) / sizeof(n[0]) ? n[how] : "open";
}

static jo *carried_in(const struct ig_engine *e)
{
	jo *a = json_object_new_array();
	uint32_t i;

	for (i = 0; a && i < e->gpu.ndevs; i++) {
		const struct ig_device *d = e->gpu.devs[i];
		jo *o;

		if (!d->carry_start && !d->carry_how)
			continue;
		o = json_object_new_object();
		add(o, "device", ju64((uint64_t)d->ordinal));
		add(o, "gap_start_ns", ju64(d->carry_start));
		add(o, "from_ns", ju64(d->span_start));
		add(o, "ended_by", jstr(how_name(d->carry_how)));
		add(o, "counted_s", jsec(d->carry_ns));
		json_object_array_add(a, o);
	}
	return a;
}

static jo *carried_out(const struct ig_engine *e)
{
	jo *a = json_object_new_array();
	uint32_t i;

	for (i = 0; a && i < e->gpu.ndevs; i++) {
		const struct ig_device *d = e->gpu.devs[i];
		jo *o;

		if (!d->held_from)
			continue;
		o = json_object_new_object();
		add(o, "device", ju64((uint64_t)d->ordinal));
		add(o, "gap_start_ns", ju64(held_start(d)));
		add(o, "from_ns", ju64(d->held_from));
		add(o, "ended_ns", d->held_end ? ju64(d->held_end) : NULL);
		add(o, "ended_by", jstr(how_name(d->held_how)));
		add(o, "counted_s", jsec(d->held_ns));
		add(o, "state", jstr(d->held_how == IG_HELD_BOUND ? "idle_open" :
				     d->held_how == IG_HELD_WORK ? "unresolved" :
				     d->held_how == IG_HELD_EXIT ? "dropped" : "idle"));
		json_object_array_add(a, o);
	}
	return a;
}

jo *ig_carry_json(const struct ig_engine *e)
{
	uint32_t i;
	bool carried = false;
	jo *w;

	for (i = 0; i < e->gpu.ndevs; i++)
		carried |= e->gpu.devs[i]->carry_start || e->gpu.devs[i]->carry_how;
	if (!e->gpu.held_at && !carried)
		return NULL;
	w = json_object_new_object();
	add(w, "rule", jstr("split"));
	add(w, "end_ns", e->gpu.held_at ? ju64(e->gpu.held_at) : NULL);
	add(w, "held_gaps_clipped", json_object_new_boolean(e->gpu.held_clip));
	add(w, "carried_in", carried_in(e));
	add(w, "carried_out", carried_out(e));
	return w;
}
