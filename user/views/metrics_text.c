// SPDX-License-Identifier: GPL-2.0
/*
 * The text exposition (Prometheus format 0.0.4) of the registry in
 * metrics.c: HELP and TYPE once per family, then its series; label values
 * escaped as the format asks (\\, \", \n), and UTF-8 as it asks too
 * (a byte that starts no character becomes U+FFFD, escape.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/escape.h"
#include "views/metrics_impl.h"

struct out {
	FILE *f;
	const struct ig_metrics *m;
};

static void family(struct out *o, const char *name, const char *type,
		   const char *help)
{
	fprintf(o->f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{target labels,--labels,k1="v1",k2="v2"} value; k2 may be NULL */
static void series_kv(struct out *o, const char *name, const char *key,
		      const char *k1, const char *v1, const char *k2,
		      const char *v2, const char *fmt, double v)
{
	const char *sep = "";
	size_t i;

	fputs(name, o->f);
	if ((key && *key) || o->m->nlabels || k1)
		fputc('{', o->f);
	if (key && *key) {
		fputs(key, o->f);
		sep = ",";
	}
	for (i = 0; i < o->m->nlabels; i++) {
		const char *kv = o->m->labels[i], *eq = strchr(kv, '=');

		fprintf(o->f, "%s%.*s=\"", sep, (int)(eq - kv), kv);
		ig_metrics_put_value(o->f, eq + 1);
		fputc('"', o->f);
		sep = ",";
	}
	for (i = 0; i < 2; i++) {
		const char *k = i ? k2 : k1, *val = i ? v2 : v1;

		if (!k)
			continue;
		fprintf(o->f, "%s%s=\"", sep, k);
		ig_metrics_put_value(o->f, val);
		fputc('"', o->f);
		sep = ",";
	}
	if ((key && *key) || o->m->nlabels || k1)
		fputc('}', o->f);
	fputc(' ', o->f);
	fprintf(o->f, fmt, v);
	fputc('\n', o->f);
}

/* name{target labels,--labels,extra} value */
static void series(struct out *o, const char *name, const char *key,
		   const char *extra_k, const char *extra_v, const char *fmt,
		   double v)
{
	series_kv(o, name, key, extra_k, extra_v, NULL, NULL, fmt, v);
}

static void states(struct out *o)
{
	static const char *const names[IG_ST__MAX] = {
		[IG_ST_BUSY] = "busy", [IG_ST_IDLE] = "idle",
		[IG_ST_UNRES_HOST] = "unresolved_host_bound",
		[IG_ST_UNRES_GPU] = "unresolved_gpu_bound",
		[IG_ST_UNRES_OPEN] = "unresolved_open",
		[IG_ST_PEER_WAIT] = "peer_wait",
		[IG_ST_IDLE_OPEN] = "idle_open",
	};
	size_t i, s;

	family(o, "idlegap_gpu_seconds_total", "counter",
	       "Observed GPU-span time by state: busy, idle with a proven host cause, or unresolved.");
	for (i = 0; i < o->m->ntargets; i++) {
		const struct ig_target *t = o->m->targets[i];

		for (s = 0; t->has_state && s < IG_ST__MAX; s++)
			/* peer_wait: only for GPUs of ranks of a
			 * communicator; idle_open: only once a window
			 * counted some */
			if ((s != IG_ST_PEER_WAIT && s != IG_ST_IDLE_OPEN) || t->state[s] > 0 ||
			    (s == IG_ST_PEER_WAIT && t->has_peers))
				series(o, "idlegap_gpu_seconds_total", t->key, "state",
				       names[s], "%.9g", t->state[s]);
	}
}

/* idlegap_gpu_peer_wait_seconds_total{late_rank,cause} */
static void peer_wait(struct out *o)
{
	char key[64];
	uint32_t i;

	if (!o->m->npeer)
		return;
	family(o, "idlegap_gpu_peer_wait_seconds_total", "counter",
	       "GPU time other ranks waited in collectives for a late rank, by the cause of its lateness.");
	for (i = 0; i < o->m->npeer; i++) {
		snprintf(key, sizeof(key), "late_rank=\"%s\"", o->m->peer[i].rank);
		series(o, "idlegap_gpu_peer_wait_seconds_total", key, "cause",
		       o->m->peer[i].cause, "%.9g", o->m->peer[i].s);
	}
}

enum { C_IDLE, C_UNRES, C_EST };

/* Each rank's collectives by communicator (metrics_coll.c). */
static void collectives(struct out *o)
{
	size_t i;

	if (!o->m->ncoll)
		return;
	family(o, "idlegap_collectives_ended_total", "counter",
	       "Collectives this rank launched whose end its GPU was seen at.");
	for (i = 0; i < o->m->ncoll; i++)
		series(o, "idlegap_collectives_ended_total", o->m->coll[i].key,
		       NULL, NULL, "%.0f", o->m->coll[i].ended);
	family(o, "idlegap_collective_launch_to_end_seconds_total", "counter",
	       "Time from this rank's launch of each of those collectives to its end on this rank's GPU.");
	for (i = 0; i < o->m->ncoll; i++)
		series(o, "idlegap_collective_launch_to_end_seconds_total",
		       o->m->coll[i].key, NULL, NULL, "%.9g", o->m->coll[i].lead_s);
}

static void causes(struct out *o, int kind)
{
	static const char *const names[] = {
		[C_IDLE] = "idlegap_gpu_idle_seconds_total",
		[C_UNRES] = "idlegap_gpu_unresolved_seconds_total",
		[C_EST] = "idlegap_gpu_estimated_idle_seconds_total",
	};
	static const char *const help[] = {
		[C_IDLE] = "GPU idle time by the host cause that made the GPU wait.",
		[C_UNRES] = "Unresolved GPU time by the host activity seen during it (not proven).",
		[C_EST] = "Estimated GPU idle time inside unresolved time, by host cause (a model's, not proven).",
	};
	const char *name = names[kind];
	size_t i, c;

	family(o, name, "counter", help[kind]);
	for (i = 0; i < o->m->ntargets; i++) {
		const struct ig_target *t = o->m->targets[i];
		const struct ig_cause_sum *cs = kind == C_UNRES ? t->unres :
						kind == C_EST ? t->est : t->idle;
		uint32_t n = kind == C_UNRES ? t->nunres : kind == C_EST ? t->nest : t->nidle;

		for (c = 0; c < n; c++)	/* estimated idle: by its method too */
			series_kv(o, name, t->key, "cause", cs[c].name,
				  kind == C_EST ? "method" : NULL, cs[c].method,
				  "%.9g", cs[c].s);
	}
}

/* One label set's histogram @name: its buckets (@le ns, @counts), +Inf,
 * sum and count. */
static void hist_series(struct out *o, const char *name, const char *key,
			const uint64_t *le, const uint64_t *counts, size_t n,
			uint64_t count, double sum)
{
	char bucket[96], buf[32];
	size_t b;

	snprintf(bucket, sizeof(bucket), "%s_bucket", name);
	for (b = 0; b < n; b++) {
		snprintf(buf, sizeof(buf), "%g", (double)le[b] / 1e9);
		series(o, bucket, key, "le", buf, "%.0f", (double)counts[b]);
	}
	series(o, bucket, key, "le", "+Inf", "%.0f", (double)count);
	snprintf(bucket, sizeof(bucket), "%s_sum", name);
	series(o, bucket, key, NULL, NULL, "%.9g", sum);
	snprintf(bucket, sizeof(bucket), "%s_count", name);
	series(o, bucket, key, NULL, NULL, "%.0f", (double)count);
}

static void histogram(struct out *o)
{
#define IG_LE(ns) ns,
	static const uint64_t le[] = { IG_GAP_BOUNDS_NS(IG_LE) };
#undef IG_LE
	size_t i;

	family(o, "idlegap_gpu_gap_seconds", "histogram",
	       "Lengths of the GPU idle gaps, every gap of every window.");
	for (i = 0; i < o->m->ntargets; i++) {
		const struct ig_target *t = o->m->targets[i];

		if (t->has_hist)
			hist_series(o, "idlegap_gpu_gap_seconds", t->key, le,
				    t->hist, IG_NBOUNDS, t->hist_count,
				    t->hist_sum);
	}
}

/* Whole steps (docs/design.md §4.11): their time, and their idle time
 * by cause. */
static void steps(struct out *o)
{
#define IG_LE(ns) ns,
	static const uint64_t le[] = { IG_STEP_BOUNDS_NS(IG_LE) };
#undef IG_LE
	size_t i, c;

	family(o, "idlegap_step_seconds", "histogram",
	       "Wall time of the training steps found (whole steps inside a window).");
	for (i = 0; i < o->m->ntargets; i++) {
		const struct ig_target *t = o->m->targets[i];

		if (t->has_steps)
			hist_series(o, "idlegap_step_seconds", t->key, le,
				    t->step_hist, IG_NSTEP_BOUNDS, t->step_count,
				    t->step_sum);
	}
	family(o, "idlegap_step_idle_seconds_total", "counter",
	       "GPU idle time inside the whole steps found, by the host cause.");
	for (i = 0; i < o->m->ntargets; i++) {
		const struct ig_target *t = o->m->targets[i];

		for (c = 0; c < t->nstep_idle; c++)
			series(o, "idlegap_step_idle_seconds_total", t->key,
			       "cause", t->step_idle[c].name, "%.9g",
			       t->step_idle[c].s);
	}
}

static void agent(struct out *o)
{
	const struct ig_metrics *m = o->m;
	/* the families of one series each: seconds with all their digits,
	 * the rest counts */
	const struct {
		const char *name, *type, *help;
		double v;
	} one[] = {
		{ "idlegap_observed_seconds_total", "counter",
		  "Time traced, summed over windows.", m->observed },
		{ "idlegap_windows_total", "counter", "Tracing windows reported.",
		  (double)m->windows },
		{ "idlegap_windows_partial_total", "counter",
		  "Windows whose report is partial (a target died, records lost).",
		  (double)m->partial },
		{ "idlegap_records_lost_total", "counter",
		  "Trace records dropped before the analysis.", (double)m->lost },
		{ "idlegap_gpu_processes_missed_total", "counter",
		  "GPU processes that mapped libcuda in a window and ended before they were followed.",
		  (double)m->gpu_missed },
		{ "idlegap_gpu_processes_unknown_device_total", "counter",
		  "GPU processes followed whose GPU nothing placed (no context seen, no NVML).",
		  (double)m->gpu_unknown },
		{ "idlegap_processes", "gauge", "GPU processes in the last window.",
		  (double)m->processes },
	};
	size_t i;

	for (i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
		family(o, one[i].name, one[i].type, one[i].help);
		series(o, one[i].name, NULL, NULL, NULL,
		       strstr(one[i].name, "_seconds") ? "%.9g" : "%.0f", one[i].v);
	}
	family(o, "idlegap_series_dropped_total", "counter",
	       "Label sets dropped: not seen for a while (stale) or over the limit.");
	series(o, "idlegap_series_dropped_total", NULL, "reason", "stale", "%.0f",
	       (double)m->dropped_stale);
	series(o, "idlegap_series_dropped_total", NULL, "reason", "limit", "%.0f",
	       (double)m->dropped_limit);
	family(o, "idlegap_build_info", "gauge", "The idlegap build, as labels.");
	series(o, "idlegap_build_info", NULL, "version", m->version, "%.0f", 1);
}

int ig_metrics_render(struct ig_metrics *m, char **buf, size_t *len)
{
	struct out o = { .m = m };
	int err = 0;

	*buf = NULL;
	*len = 0;
	o.f = open_memstream(buf, len);
	if (!o.f)
		return -ENOMEM;
	pthread_mutex_lock(&m->lock);
	states(&o);
	causes(&o, C_IDLE);
	causes(&o, C_UNRES);
	causes(&o, C_EST);
	peer_wait(&o);
	collectives(&o);
	histogram(&o);
	steps(&o);
	agent(&o);
	pthread_mutex_unlock(&m->lock);
	if (fclose(o.f))
		err = -ENOMEM;
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	return err;
}
