// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON report (docs/design.md §7.4). Field names are a contract: add, never
 * rename.  Numbers are printed with fixed precision so that scripts see
 * 17.4, not 17.399999999999999.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "engine/estimate/estimate.h"
#include "engine/report/report.h"
#include "engine/report/report_causes.h"
#include "engine/attrib/files.h"
#include "engine/attrib/atattach.h"
#include "engine/attrib/stacks.h"
#include "engine/jsonval.h"
#include "engine/peers/peers.h"
#include "engine/merge.h"

static jo *meta_json(const struct ig_engine *e)
{
	jo *m = json_object_new_object();

	if (!e->win.have_meta)
		return m;
	add(m, "host", jstr(e->win.meta.host));
	add(m, "kernel", jstr(e->win.meta.kernel));
	add(m, "command", jstr(e->win.meta.command));
	add(m, "ncpus", ju64(e->win.meta.ncpus));
	add(m, "format_version", ju64(e->win.meta.version));
	add(m, "start_ns", ju64(e->win.meta_ts));
	add(m, "realtime_ns", ju64(e->win.meta.realtime_ns));
	return m;
}

static jo *processes_json(const struct ig_engine *e)
{
	const struct ig_process **v;
	size_t n = ig_report_procs_sorted(e, &v), i;
	jo *a = json_object_new_array();

	for (i = 0; i < n; i++) {
		const struct ig_process *p = v[i];
		jo *o = json_object_new_object();

		add(o, "pid", ju64(p->pid));
		add(o, "comm", jstr(p->comm));
		if (e->merge)
			add(o, "host", jstr(ig_merge_host_of(e, p->pid)));
		add(o, "ppid", ju64(p->ppid));
		add(o, "exe", jstr(p->exe));
		add(o, "threads", ju64(p->nthreads_seen));
		add(o, "first_seen_ns", ju64(p->first_seen));
		add(o, "exit_ns", p->exit_ts == IG_NS_INF ? NULL
							  : ju64(p->exit_ts));
		add(o, "device", p->on_gpu && !ig_gpu_dev_unknown(ig_gpu_proc_device(p)) ?
			json_object_new_int(ig_gpu_proc_device(p)) : NULL);
		/* its own number for its GPU: 0 until a context says (the
		 * exporter reads its labels through its environment); null
		 * where nothing placed it: no GPU 0 by default */
		add(o, "ordinal", p->on_gpu && (p->device_set ||
			!ig_gpu_dev_unknown(ig_gpu_proc_device(p))) ?
			ju64(p->device_set ? (uint64_t)p->device : 0) : NULL);
		add(o, "device_source", p->on_gpu && ig_gpu_proc_device_source(p) ?
			jstr(ig_gpu_proc_device_source(p)) : NULL);
		add(o, "uuid", p->gd_seen && p->gd_uuid[0] ? jstr(p->gd_uuid) : NULL);
		/* the exporter's labels are that GPU's where it is the
		 * process's device */
		add(o, "node_device", ig_gpu_proc_node_device(p) >= 0 ?
			json_object_new_int(ig_gpu_proc_node_device(p) +
					    ig_merge_dev_base(p->pid)) : NULL);
		add(o, "env_rank", p->gd_seen && p->env_rank >= 0 ?
			json_object_new_int(p->env_rank) : NULL);
		add(o, "submissions", ju64(p->submissions));
		add(o, "launches", ju64(p->launches));
		add(o, "python", json_object_new_boolean(p->pyrt_end >
							 p->pyrt_start));
		if (p->on_gpu)
			add(o, "steps", ig_report_steps_json_pid(e, p->pid));
		json_object_array_add(a, o);
	}
	free(v);
	return a;
}

static int by_start(const void *a, const void *b)
{
	const struct ig_gap *x = a, *y = b;

	return (x->t0 > y->t0) - (x->t0 < y->t0);
}

static jo *spans_json(const struct ig_engine *e, const struct ig_gaplist *l)
{
	struct ig_gap *g = malloc((l->n + 1) * sizeof(*g));
	jo *a = json_object_new_array();
	uint64_t rec;
	size_t i;

	if (!g)
		return a;
	/* the heap keeps the longest; list them in time order */
	if (l->n)
		memcpy(g, l->g, l->n * sizeof(*g));
	qsort(g, l->n, sizeof(*g), by_start);
	for (i = 0; i < l->n; i++) {
		jo *o = json_object_new_object();

		add(o, "start_ns", ju64(g[i].t0));
		add(o, "end_ns", ju64(g[i].t1));
		add(o, "tid", ju64(g[i].tid));
		add(o, "pid", ju64(g[i].tgid));
		add(o, "device", ju64((uint64_t)g[i].device));
		/* walked through waits whose reason /proc gave at the start */
		rec = l == &e->attr.gaps ? ig_atattach_gap_ns(e, g[i].device, g[i].t0) : 0;
		if (rec) {
			add(o, "recovered_at_attach", json_object_new_boolean(1));
			add(o, "recovered_at_attach_s", jsec(rec));
		}
		json_object_array_add(a, o);
	}
	free(g);
	return a;
}

/* Every gap, not only the listed ones: cumulative counts per bound. */
static jo *gap_hist_json(const struct ig_hist *h)
{
#define IG_LE(ns) ns,
	static const uint64_t le[] = { IG_GAP_BOUNDS_NS(IG_LE) };
#undef IG_LE
	jo *o = json_object_new_object(), *b = json_object_new_array();
	jo *c = json_object_new_array();
	size_t i;

	for (i = 0; i < sizeof(le) / sizeof(le[0]); i++) {
		json_object_array_add(b, jsec(le[i]));
		json_object_array_add(c, ju64(ig_hist_count_le(h, le[i])));
	}
	add(o, "le_s", b);
	add(o, "counts", c);
	add(o, "count", ju64(h->n));
	add(o, "sum_s", jsec(h->sum));
	add(o, "exact", json_object_new_boolean(h->nexact == h->n));
	return o;
}

/* A GPU's share of the cause time: [{cause, seconds}], largest first. */
/* Evidence of a device's place, strongest first (§4.2). */
static int source_rank(const char *src)
{
	static const char *const order[] = {
		"context", "nvml", "device_node", "gpumap", "local_rank",
		"cuda_visible_devices",
	};
	size_t i;

	for (i = 0; src && i < sizeof(order) / sizeof(order[0]); i++)
		if (!strcmp(src, order[i]))
			return (int)i;
	return 99;
}

/* Which GPU the device entry is: "device" (null when nothing placed it),
 * "uuid" (NVML's), "device_source" (the strongest evidence among its
 * processes) and, for an unknown one, "pid". */
static void dev_where_json(const struct ig_engine *e, jo *o, int key)
{
	const struct ig_process **v;
	const char *src = NULL, *uuid = NULL;
	size_t n = ig_report_procs_sorted(e, &v), i;

	for (i = 0; i < n; i++) {
		const struct ig_process *p = v[i];
		const char *s;

		if (!p->on_gpu || ig_gpu_proc_device(p) != key)
			continue;
		s = ig_gpu_proc_device_source(p);
		if (s && source_rank(s) < source_rank(src))
			src = s;
		if (!uuid && p->gd_seen && p->gd_uuid[0] &&
		    p->gd_dev + ig_merge_dev_base(p->pid) == key)
			uuid = p->gd_uuid;
	}
	if (ig_gpu_dev_unknown(key)) {
		add(o, "device", NULL);
		add(o, "pid", ju64((uint64_t)(key & (IG_DEV_UNKNOWN - 1))));
	} else {
		add(o, "device", ju64((uint64_t)key));
	}
	add(o, "uuid", uuid ? jstr(uuid) : NULL);
	add(o, "device_source", src ? jstr(src) : NULL);
	free(v);
}

/* "self_reported": the device entry's fields that only the processes'
 * environment gives (§7.7). */
static void dev_self_json(jo *o)
{
	jo *src = NULL, *rs = NULL, *a = json_object_new_array();
	const char *s;

	if (json_object_object_get_ex(o, "device_source", &src) && src &&
	    (s = json_object_get_string(src)) &&
	    (!strcmp(s, "local_rank") || !strcmp(s, "cuda_visible_devices") ||
	     !strcmp(s, "gpumap")))
		json_object_array_add(a, jstr("device"));
	if (json_object_object_get_ex(o, "rank_source", &rs) && rs &&
	    !strcmp(json_object_get_string(rs), "environment"))
		json_object_array_add(a, jstr("rank"));
	add(o, "self_reported", a);
}

static jo *dev_causes_json(const struct ig_engine *e, int ordinal, bool idle)
{
	const uint64_t *ns = ig_attrib_dev_causes(e, ordinal, idle);
	unsigned int order[IG_C__MAX];
	size_t n = ig_names_by_ns(ns, order), i;
	jo *a = json_object_new_array();

	for (i = 0; i < n; i++) {
		jo *o = json_object_new_object();

		add(o, "cause", jstr(ig_names_cause(order[i])));
		add(o, "seconds", jsec(ns[order[i]]));
		json_object_array_add(a, o);
	}
	return a;
}

static jo *devices_json(const struct ig_engine *e)
{
	jo *a = json_object_new_array();
	uint32_t i;

	for (i = 0; i < e->gpu.ndevs; i++) {
		const struct ig_device *d = e->gpu.devs[i];
		uint64_t busy = d->busy_ns, unres = d->unres_ns, ugpu = d->unres_gpu_ns, pw = 0;
		jo *o;

		if (!d->active)
			continue;
		ig_report_peer_carve(e, d->ordinal, &busy, &unres, &ugpu, &pw);
		o = json_object_new_object();
		dev_where_json(e, o, d->ordinal);
		add(o, "busy_s", jsec(busy));
		add(o, "idle_s", jsec(d->idle_ns));
		add(o, "idle_open_s", jsec(d->idle_open_ns));
		add(o, "unresolved_s", jsec(unres));
		add(o, "unresolved_host_bound_s", jsec(d->unres_host_ns));
		add(o, "unresolved_gpu_bound_s", jsec(ugpu));
		add(o, "unresolved_open_s", jsec(unres > d->unres_host_ns + ugpu ?
						 unres - d->unres_host_ns - ugpu : 0));
		ig_peers_json_dev(e, o, d->ordinal);
		dev_self_json(o);
		add(o, "gaps", ju64(d->gaps));
		add(o, "unresolved_spans", ju64(d->unres_spans));
		add(o, "span_start_ns", ju64(d->span_start));
		add(o, "span_end_ns", ju64(ig_gpu_span_end(d)));
		add(o, "head", ig_report_head_json(e, d->ordinal));
		add(o, "streams", ju64(d->nstreams));
		add(o, "causes", dev_causes_json(e, d->ordinal, true));
		add(o, "unresolved_causes", dev_causes_json(e, d->ordinal, false));
		ig_est_json(ig_est_device(e, d->ordinal), o);
		add(o, "gap_histogram", gap_hist_json(&d->gap_hist));
		add(o, "steps", ig_report_steps_json(e, d->ordinal, false));
		json_object_array_add(a, o);
	}
	return a;
}

static jo *gpu_json(const struct ig_engine *e)
{
	struct ig_gpu_totals t;
	jo *g = json_object_new_object();

	ig_report_gpu_totals(e, &t);
	add(g, "busy_s", jsec(t.busy_ns));
	add(g, "idle_s", jsec(t.idle_ns));
	add(g, "idle_open_s", jsec(t.idle_open_ns));
	add(g, "peer_wait_s", jsec(t.peer_wait_ns));
	add(g, "unresolved_s", jsec(t.unres_ns));
	add(g, "unresolved_host_bound_s", jsec(t.unres_host_ns));
	add(g, "unresolved_gpu_bound_s", jsec(t.unres_gpu_ns));
	add(g, "unresolved_open_s", jsec(t.unres_open_ns));
	add(g, "at_once_threshold_us", jnum(IG_AT_ONCE_NS / 1e3, 1));
	ig_est_json(ig_est_total(e), g);
	add(g, "span_s", jsec(t.span_ns));
	add(g, "gaps", ju64(t.gaps));
	add(g, "gap_p50_ms", jms(ig_hist_quantile(&e->attr.gap_hist, 0.50)));
	add(g, "gap_p99_ms", jms(ig_hist_quantile(&e->attr.gap_hist, 0.99)));
	add(g, "gap_max_ms", jms(e->attr.gap_hist.max));
	add(g, "gap_histogram", gap_hist_json(&e->attr.gap_hist));
	add(g, "span_start_ns", ju64(t.span_start));
	add(g, "span_end_ns", ju64(t.span_end));
	add(g, "devices", devices_json(e));
	add(g, "heads", ig_report_heads_json(e));
	add(g, "tails", ig_report_tails_json(e));
	add(g, "gap_list", spans_json(e, &e->attr.gaps));
	add(g, "gap_list_omitted", ju64(e->attr.gaps.omitted));
	add(g, "unresolved_list", spans_json(e, &e->attr.unres_list));
	add(g, "unresolved_list_omitted", ju64(e->attr.unres_list.omitted));
	add(g, "submissions", ju64(e->acct.submissions));
	add(g, "launches", ju64(e->acct.launches));
	add(g, "evidence_lost", json_object_new_boolean(e->lost.any));
	add(g, "samples", ju64(e->acct.nsamples));
	add(g, "samples_in_driver", ju64(e->acct.nsamples_cuda));
	return g;
}

/* What was summarized or dropped to keep memory bounded (design §3.5). */
static jo *folded_json(const struct ig_engine *e)
{
	jo *o = json_object_new_object();
	struct ig_est_bounds b;

	ig_est_bounds(e, &b);
	add(o, "estimate_blocks", ju64(b.blocks));
	add(o, "counter_windows_folded", ju64(b.windows_folded));
	add(o, "counter_pieces_dropped", ju64(b.pieces_dropped));
	add(o, "counter_uncovered_s", jsec(b.pieces_dropped_ns));
	add(o, "track_stretches_left_off", ju64(b.stretches_left_off));
	add(o, "held_out_errors", ju64(b.errs_seen));
	add(o, "held_out_errors_kept", ju64(b.errs_kept));
	return o;
}

static jo *events_json(const struct ig_engine *e)
{
	static const unsigned int types[] = {
		IG_REC_PROC, IG_REC_OFFCPU, IG_REC_BIO, IG_REC_CUDA,
		IG_REC_LIBOPEN, IG_REC_SAMPLE, IG_REC_META, IG_REC_TASK, IG_REC_PYRT,
		IG_REC_STATS, IG_REC_END, IG_REC_LIBCUDA, IG_REC_MAPPING,
		IG_REC_NVML, IG_REC_FILE,
	};
	jo *o = json_object_new_object(), *bt = json_object_new_object();
	jo *ck = json_object_new_object(), *k = json_object_new_object();
	const __u64 *st = e->acct.stats.stat;
	uint64_t other;
	size_t i;

	add(o, "total", ju64(e->acct.nrec));
	add(o, "dropped", ju64(st[IG_STAT_DROPS] + e->acct.stats.user_lost));
	other = e->acct.by_type[0];
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		unsigned int t = types[i];
		add(bt, ig_rec_type_name(t), ju64(e->acct.by_type[ig_rec_slot(t)]));
	}
	add(bt, "other", ju64(other));
	add(o, "by_type", bt);
	for (i = 1; i < IG_CU__MAX; i++)
		add(ck, ig_rec_cuda_kind_name((unsigned int)i),
		    ju64(e->acct.cuda_by_kind[i]));
	add(o, "cuda_by_kind", ck);
	add(o, "stats_seen", json_object_new_boolean(e->acct.have_stats));
	add(k, "events", ju64(st[IG_STAT_EVENTS]));
	add(k, "drops", ju64(st[IG_STAT_DROPS]));
	add(k, "map_full", ju64(st[IG_STAT_MAP_FULL]));
	add(k, "cuda_hits", ju64(st[IG_STAT_CUDA_HITS]));
	add(k, "launches", ju64(st[IG_STAT_LAUNCHES]));
	add(k, "switches", ju64(st[IG_STAT_SWITCHES]));
	add(k, "library_loads", ju64(st[IG_STAT_LIBLOADS]));
	add(k, "cuda_drops", ju64(st[IG_STAT_DROPS_CUDA]));
	add(o, "kernel", k);
	add(o, "user_lost", ju64(e->acct.stats.user_lost));
	add(o, "evidence_lost", json_object_new_boolean(e->lost.any));
	add(o, "stack_tables", ig_report_stack_tables_json(e));
	add(o, "history_trims", ju64(e->win.hist_trims));
	add(o, "history_kept_min_s", jsec(e->win.hist_kept_min));
	add(o, "evidence_folded", folded_json(e));
	return o;
}

static jo *offcpu_json(const struct ig_engine *e)
{
	jo *o = json_object_new_object(), *r = json_object_new_object();
	uint64_t total = 0;
	unsigned int i;

	for (i = 1; i < IG_R__MAX; i++) {
		total += e->acct.offcpu_ns[i];
		add(r, ig_rec_reason_name(i), jsec(e->acct.offcpu_ns[i]));
	}
	add(o, "total_s", jsec(total));
	add(o, "runnable_s", jsec(e->acct.runnable_ns));
	add(o, "by_reason", r);
	add(o, "switch_ins_unseen", ju64(e->acct.in_unseen));
	return o;
}

static jo *block_json(const struct ig_engine *e)
{
	jo *a = json_object_new_array();
	char buf[32];
	uint32_t i;

	for (i = 0; i < e->acct.nbiodev; i++) {
		const struct ig_biodev *b = &e->acct.biodev[i];
		jo *o = json_object_new_object();

		ig_report_fmt_dev(b->dev, buf, sizeof(buf));
		add(o, "dev", jstr(buf));
		add(o, "reads", ju64(b->reads));
		add(o, "bytes", ju64(b->bytes));
		add(o, "read_p50_ms", jms(ig_hist_quantile(&b->lat, 0.5)));
		add(o, "read_p99_ms", jms(ig_hist_quantile(&b->lat, 0.99)));
		json_object_array_add(a, o);
	}
	return a;
}

static jo *cuda_json(const struct ig_engine *e)
{
	jo *o = json_object_new_object(), *hits = json_object_new_object();
	jo *subs = json_object_new_object(), *lib = json_object_new_array();
	unsigned int i;

	for (i = 1; i < IG_API__MAX; i++) {
		if (e->acct.stats.api_hits[i])
			add(hits, ig_api_name(i), ju64(e->acct.stats.api_hits[i]));
		if (e->acct.sub_by_api[i]) {
			jo *s = json_object_new_object();

			add(s, "submissions", ju64(e->acct.sub_by_api[i]));
			add(s, "launches", ju64(e->acct.launch_by_api[i]));
			add(subs, ig_api_name(i), s);
		}
	}
	for (i = 0; i < e->acct.nlibcuda; i++) {
		const struct ig_libcuda *l = &e->acct.libcuda[i];
		jo *x = json_object_new_object();

		add(x, "pid", ju64(l->h.tgid));
		add(x, "path", jstrn(l->path, strnlen(l->path, sizeof(l->path))));
		add(x, "version", jstrn(l->version, strnlen(l->version, sizeof(l->version))));
		add(x, "symbols", ju64(l->nsyms));
		add(x, "attached", ju64(l->nattached));
		json_object_array_add(lib, x);
	}
	add(o, "api_hits", hits);
	add(o, "libcuda", lib);
	add(o, "by_api", subs);
	return o;
}

static jo *dashboard_json(const struct ig_engine *e)
{
	jo *o = json_object_new_object(), *a;
	uint64_t n = 0, u = 0, m = 0;
	uint32_t i;

	add(o, "nvml", json_object_new_boolean(e->acct.nnvml != 0));
	if (!e->acct.nnvml)
		return o;
	a = json_object_new_array();
	for (i = 0; i < e->acct.nnvml; i++) {
		const struct ig_nvdev *d = &e->acct.nvml[i];
		jo *x = json_object_new_object();

		n += d->n;
		u += d->util_sum;
		m += d->mem_sum;
		add(x, "device", ju64(d->device));
		add(x, "samples", ju64(d->n));
		add(x, "util_mean_pct", jnum((double)d->util_sum / d->n, 1));
		add(x, "mem_mean_pct", jnum((double)d->mem_sum / d->n, 1));
		json_object_array_add(a, x);
	}
	add(o, "samples", ju64(n));
	add(o, "util_mean_pct", jnum((double)u / n, 1));
	add(o, "mem_mean_pct", jnum((double)m / n, 1));
	add(o, "devices", a);
	return o;
}

int ig_engine_report_json(struct ig_engine *e, FILE *out)
{
	const char *stop, *txt;
	jo *r, *win;
	int err = 0;

	if (!e || !out)
		return -EINVAL;
	ig_engine_finish(e);
	r = json_object_new_object();
	if (!r)
		return -ENOMEM;
	stop = e->win.have_end ? ig_rec_stop_reason_name(e->win.stop_reason) : NULL;
	add(r, "version", ju64(1));
	add(r, "duration_s", jsec(ig_report_duration_ns(e)));
	add(r, "complete", json_object_new_boolean(e->win.have_end));
	add(r, "stop_reason", stop ? jstr(stop) : NULL);
	add(r, "meta", meta_json(e));
	add(r, "processes", processes_json(e));
	/* exited ones dropped from the table (fork storms): not listed */
	add(r, "processes_not_kept", ju64(e->tasks.procs_freed));
	add(r, "gpu", gpu_json(e));
	add(r, "steps", ig_report_steps_json(e, 0, true));
	add(r, "causes", ig_report_causes_json(e, &e->attr.idle));
	add(r, "unresolved_causes", ig_report_causes_json(e, &e->attr.unres));
	add(r, "events", events_json(e));
	add(r, "offcpu", offcpu_json(e));
	add(r, "block", block_json(e));
	add(r, "cuda", cuda_json(e));
	add(r, "dashboard", dashboard_json(e));
	add(r, "stragglers", ig_peers_json_stragglers(e));
	add(r, "collectives", ig_peers_json_summary(e));
	if (e->merge)
		add(r, "clock_alignment", ig_merge_json(e));
	win = ig_carry_json(e);
	if (win)
		add(r, "window", win);
	txt = json_object_to_json_string_ext(r, JSON_C_TO_STRING_PRETTY |
			JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
	errno = 0;	/* a failed write's cause, for the caller's message */
	if (!txt)
		err = -ENOMEM;
	else if (fputs(txt, out) == EOF || fputc('\n', out) == EOF)
		err = errno ? -errno : -EIO;
	json_object_put(r);
	return err;
}

int ig_engine_report_json_buf(struct ig_engine *e, char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);
	int err;

	if (!f)
		return -errno;
	err = ig_engine_report_json(e, f);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err)
		free(*buf);
	return err;
}
