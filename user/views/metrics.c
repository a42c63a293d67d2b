// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus registry (metrics.h): each window's JSON report folded
 * into counters keyed by label set (metrics_labels.c).  The exposition
 * is metrics_text.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "util/escape.h"
#include "views/metrics_impl.h"

struct ig_metrics *ig_metrics_new(const struct ig_metrics_opts *o)
{
	struct ig_metrics *m;
	size_t i;

	for (i = 0; o && i < o->nlabels; i++) {
		if (ig_metrics_check_label(o->labels[i])) {
			errno = EINVAL;
			return NULL;
		}
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->keep = o && o->keep_windows ? o->keep_windows : 10;
	m->max = o && o->max_series ? o->max_series : 1024;
	m->version = o && o->version ? o->version : "unknown";
	m->labels = o ? o->labels : NULL;
	m->nlabels = o ? o->nlabels : 0;
	pthread_mutex_init(&m->lock, NULL);
	return m;
}

static void target_free(struct ig_target *t)
{
	if (t)
		free(t->key);
	free(t);
}

void ig_metrics_free(struct ig_metrics *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->ntargets; i++)
		target_free(m->targets[i]);
	free(m->targets);
	ig_metrics_coll_free(m);
	free(m->unknown);
	free(m->refused);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/* ---- targets ------------------------------------------------------------- */

static struct ig_target *target_get(struct ig_metrics *m, const struct ig_lset *s)
{
	struct ig_target *t, **v;
	char *key = ig_metrics_lset_text(s);
	size_t i;

	if (!key)
		return NULL;
	for (i = 0; i < m->ntargets; i++) {
		if (!strcmp(m->targets[i]->key, key)) {
			free(key);
			m->targets[i]->last = m->windows;
			return m->targets[i];
		}
	}
	if (m->ntargets >= m->max) {
		/* once per label set and window: devices and causes share one */
		if (m->refused_at != m->windows || !m->refused ||
		    strcmp(m->refused, key))
			m->dropped_limit++;
		free(m->refused);
		m->refused = key;
		m->refused_at = m->windows;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	v = realloc(m->targets, (m->ntargets + 1) * sizeof(*v));
	if (!t || !v) {
		free(t);
		free(key);
		if (v)
			m->targets = v;
		return NULL;
	}
	m->targets = v;
	t->key = key;
	t->last = m->windows;
	m->targets[m->ntargets++] = t;
	return t;
}

/* @method: the estimate's (docs/design.md §4.10), "" for the others. */
static void add_cause(struct ig_cause_sum *c, uint32_t *n, const char *name,
		      const char *method, double s)
{
	uint32_t i;

	if (strlen(name) >= sizeof(c[0].name) || !ig_metrics_name_ok(name, strlen(name)))
		return;
	for (i = 0; i < *n && (strcmp(c[i].name, name) || strcmp(c[i].method, method)); i++)
		;
	if (i == *n) {
		if (*n == IG_MAX_CAUSES)
			return;
		snprintf(c[i].name, sizeof(c[i].name), "%s", name);
		snprintf(c[i].method, sizeof(c[i].method), "%s", method);
		(*n)++;
	}
	c[i].s += s;
}

static void add_causes(struct ig_cause_sum *c, uint32_t *n,
		       struct json_object *arr, const char *method)
{
	size_t i, len = arr ? json_object_array_length(arr) : 0;

	for (i = 0; i < len; i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);
		struct json_object *name = ig_metrics_jget(o, "cause", json_type_string);

		if (name)
			add_cause(c, n, json_object_get_string(name), method,
				  ig_metrics_jsec(o, "seconds"));
	}
}

/* The method of the estimate in @o: one of the report's, else "unknown"
 * (an agent's label values are a closed set). */
static const char *est_method(struct json_object *o)
{
	static const char *const known[] = { "fit", "bound", "device", "mixed" };
	struct json_object *m = ig_metrics_jget(o, "estimate_method", json_type_string);
	const char *s = m ? json_object_get_string(m) : NULL;
	size_t i;

	for (i = 0; s && i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(s, known[i]))
			return known[i];
	return "unknown";
}

static void add_hist(struct ig_target *t, struct json_object *h)
{
	struct json_object *c = ig_metrics_jget(h, "counts", json_type_array);
	size_t i;

	if (!c || json_object_array_length(c) != IG_NBOUNDS)
		return;
	for (i = 0; i < IG_NBOUNDS; i++) {
		int64_t v = json_object_get_int64(json_object_array_get_idx(c, i));

		t->hist[i] += v > 0 ? (uint64_t)v : 0;
	}
	t->hist_count += (uint64_t)(ig_metrics_jint(h, "count", 0) > 0 ?
				    ig_metrics_jint(h, "count", 0) : 0);
	t->hist_sum += ig_metrics_jsec(h, "sum_s");
	t->has_hist = true;
}

/* A device's whole steps (docs/design.md §4.11): a step cut by the
 * window's start or end is partial in the report, and counted in no
 * window.  Steps the report left out of its list (a window of more than
 * thousands of steps) are not counted either. */
static void add_steps(struct ig_target *t, struct json_object *st)
{
#define IG_LE(ns) ns,
	static const uint64_t le[] = { IG_STEP_BOUNDS_NS(IG_LE) };
#undef IG_LE
	struct json_object *list = ig_metrics_jget(st, "list", json_type_array);
	size_t i, n = list ? json_object_array_length(list) : 0, b;

	for (i = 0; i < n; i++) {
		struct json_object *x = json_object_array_get_idx(list, i), *c, *p;
		double w = ig_metrics_jsec(x, "wall_s");

		p = ig_metrics_jget(x, "partial", json_type_boolean);
		if (!p || json_object_get_boolean(p) || w <= 0)
			continue;
		for (b = 0; b < IG_NSTEP_BOUNDS; b++)
			t->step_hist[b] += w * 1e9 <= (double)le[b];
		t->step_count++;
		t->step_sum += w;
		c = ig_metrics_jget(x, "causes", json_type_object);
		if (c) {
			json_object_object_foreach(c, k, v)
				add_cause(t->step_idle, &t->nstep_idle, k, "",
					  json_object_get_double(v));
		}
	}
	t->has_steps |= st != NULL;
}

/* Cause time from @o and gaps from @h: a device's, or the window's. */
static void add_cause_series(struct ig_target *t, struct json_object *o,
			     struct json_object *h)
{
	struct json_object *est;

	add_causes(t->idle, &t->nidle, ig_metrics_jget(o, "causes", json_type_array), "");
	add_causes(t->unres, &t->nunres,
		   ig_metrics_jget(o, "unresolved_causes", json_type_array), "");
	/* a device's estimate is in its object, the window's in "gpu" */
	est = ig_metrics_jget(o, "estimated_causes", json_type_array);
	if (est)
		add_causes(t->est, &t->nest, est, est_method(o));
	else
		add_causes(t->est, &t->nest,
			   ig_metrics_jget(h, "estimated_causes", json_type_array),
			   est_method(h));
	add_hist(t, ig_metrics_jget(h, "gap_histogram", json_type_object));
	t->has_causes = true;
}

/* The processes[] entry of @pid, or NULL. */
static struct json_object *proc_of(struct json_object *procs, int64_t pid)
{
	size_t i, n = procs ? json_object_array_length(procs) : 0;

	for (i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(procs, i);

		if (ig_metrics_jint(p, "pid", -1) == pid)
			return p;
	}
	return NULL;
}

/* Whether @pid's GPU is one nothing placed: a gpu.devices entry of its
 * own, "device": null (docs/design.md §4.2). */
static bool dev_unknown(struct json_object *gpu, int64_t pid)
{
	struct json_object *devs = ig_metrics_jget(gpu, "devices", json_type_array);
	size_t i, n = devs ? json_object_array_length(devs) : 0;

	for (i = 0; pid >= 0 && i < n; i++) {
		struct json_object *d = json_object_array_get_idx(devs, i);

		if (ig_metrics_jint(d, "device", -1) < 0 && ig_metrics_jint(d, "pid", -1) == pid)
			return true;
	}
	return false;
}

/* The labels of a process whose GPU nothing placed: its own workload
 * labels, gpu="unknown", and its pid and comm, so that two such
 * processes are two series and none is taken for another's GPU. */
static void unknown_lset(struct json_object *procs,
			 const struct ig_pid_identity *ids, size_t nids,
			 int64_t pid, struct ig_lset *s)
{
	struct ig_identity none = { 0 };
	const struct ig_identity *id = ig_metrics_who(ids, nids, pid);
	struct json_object *p = proc_of(procs, pid), *c;

	ig_metrics_lset_of(id ? id : &none, -1, s);
	snprintf(s->v[IG_MK_GPU], sizeof(s->v[IG_MK_GPU]), "unknown");
	snprintf(s->v[IG_MK_PID], sizeof(s->v[IG_MK_PID]), "%lld", (long long)pid);
	if (!s->v[IG_MK_COMM][0] && (c = ig_metrics_jget(p, "comm", json_type_string)))
		snprintf(s->v[IG_MK_COMM], sizeof(s->v[IG_MK_COMM]), "%s",
			 json_object_get_string(c));
}

/* Counts @pid among the processes followed without a known GPU, once
 * while it is seen in one window of every keep. */
static void count_unknown(struct ig_metrics *m, int64_t pid)
{
	size_t i;
	void *v;

	for (i = 0; i < m->nunknown; i++)
		if (m->unknown[i].pid == pid) {
			m->unknown[i].last = m->windows;
			return;
		}
	m->gpu_unknown++;
	if (m->nunknown == m->max)
		return;
	v = realloc(m->unknown, (m->nunknown + 1) * sizeof(*m->unknown));
	if (!v)
		return;
	m->unknown = v;
	m->unknown[m->nunknown].pid = pid;
	m->unknown[m->nunknown++].last = m->windows;
}

static void expire_unknown(struct ig_metrics *m)
{
	size_t i, j;

	for (i = j = 0; i < m->nunknown; i++)
		if (m->windows - m->unknown[i].last <= m->keep)
			m->unknown[j++] = m->unknown[i];
	m->nunknown = j;
}

/* Whether a rank of a communicator (collectives.ranks[]) is on this GPU:
 * by its device number, or its process's, or, on a GPU nothing placed, by
 * its pid. A rank that never waited for a peer still has a peer_wait
 * series, at 0, so that a query over a job's GPUs finds each of them
 * (docs/design.md §7.5). */
static bool rank_on(struct json_object *ranks, struct json_object *procs,
		    int64_t ord, int64_t pid)
{
	size_t i, n = ranks ? json_object_array_length(ranks) : 0;

	for (i = 0; i < n; i++) {
		struct json_object *r = json_object_array_get_idx(ranks, i);
		int64_t rpid = ig_metrics_jint(r, "pid", -1);
		int64_t dev = ig_metrics_jint(r, "device", -1);

		if (dev < 0)
			dev = ig_metrics_jint(proc_of(procs, rpid), "device", -1);
		if (ord >= 0 ? dev == ord : rpid == pid)
			return true;
	}
	return false;
}

/* Each GPU's series under the labels its processes share; false when the
 * report has no cause time per GPU (then the window's whole goes under
 * the labels all its processes share). */
static bool add_devices(struct ig_metrics *m, struct json_object *gpu,
			struct json_object *ranks, struct json_object *procs,
			const struct ig_pid_identity *ids, size_t nids)
{
	struct json_object *devs = ig_metrics_jget(gpu, "devices", json_type_array);
	size_t i, n = devs ? json_object_array_length(devs) : 0;
	bool per_dev = n > 0;

	for (i = 0; i < n; i++)
		per_dev &= ig_metrics_jget(json_object_array_get_idx(devs, i), "causes",
					   json_type_array) != NULL;

	for (i = 0; i < n; i++) {
		struct json_object *d = json_object_array_get_idx(devs, i);
		int64_t ord = ig_metrics_jint(d, "device", -1), pid = ig_metrics_jint(d, "pid", -1);
		struct ig_target *t;
		struct ig_lset s;

		if (ord < 0 && pid > 0) {	/* a GPU nothing placed */
			unknown_lset(procs, ids, nids, pid, &s);
			count_unknown(m, pid);
		} else if (ord < 0 || ord > IG_MAX_DEVICE_ID) {
			continue;
		} else {
			ig_metrics_window_lset(procs, ids, nids, ord, &s);
		}
		t = target_get(m, &s);
		if (!t)
			continue;
		t->per_pid = s.v[IG_MK_PID][0] != '\0';
		t->state[IG_ST_BUSY] += ig_metrics_jsec(d, "busy_s");
		t->state[IG_ST_IDLE] += ig_metrics_jsec(d, "idle_s");
		t->state[IG_ST_UNRES_HOST] += ig_metrics_jsec(d, "unresolved_host_bound_s");
		t->state[IG_ST_UNRES_GPU] += ig_metrics_jsec(d, "unresolved_gpu_bound_s");
		t->state[IG_ST_UNRES_OPEN] += ig_metrics_jsec(d, "unresolved_open_s");
		t->state[IG_ST_PEER_WAIT] += ig_metrics_jsec(d, "peer_wait_s");
		t->state[IG_ST_IDLE_OPEN] += ig_metrics_jsec(d, "idle_open_s");
		t->has_state = true;
		t->has_peers |= rank_on(ranks, procs, ord, pid);
		if (per_dev)
			add_cause_series(t, d, d);
		add_steps(t, ig_metrics_jget(d, "steps", json_type_object));
	}
	return per_dev;
}

/* Each straggler's lateness by cause, under its rank. */
static void add_stragglers(struct ig_metrics *m, struct json_object *arr)
{
	size_t i, k, j, n = arr ? json_object_array_length(arr) : 0;

	for (i = 0; i < n; i++) {
		struct json_object *st = json_object_array_get_idx(arr, i);
		struct json_object *cs = ig_metrics_jget(st, "causes", json_type_array);
		long long rank = ig_metrics_jint(st, "rank", -1);
		char r[16];

		snprintf(r, sizeof(r), "%lld", rank);
		if (rank < 0)
			snprintf(r, sizeof(r), "unknown");
		for (k = 0; cs && k < json_object_array_length(cs); k++) {
			struct json_object *c = json_object_array_get_idx(cs, k);
			struct json_object *name = ig_metrics_jget(c, "cause", json_type_string);

			if (!name)
				continue;
			for (j = 0; j < m->npeer; j++)
				if (!strcmp(m->peer[j].rank, r) &&
				    !strcmp(m->peer[j].cause, json_object_get_string(name)))
					break;
			if (j == m->npeer) {
				if (m->npeer == IG_MAX_PEER_SUMS)
					continue;
				snprintf(m->peer[j].rank, sizeof(m->peer[j].rank), "%s", r);
				snprintf(m->peer[j].cause, sizeof(m->peer[j].cause), "%s",
					 json_object_get_string(name));
				m->npeer++;
			}
			m->peer[j].s += ig_metrics_jsec(c, "seconds");
		}
	}
}

/* The process's own number for its GPU (processes[].ordinal), as its GPU
 * series take it; -1 when not known. */
static int ordinal_of(struct json_object *procs, int64_t pid)
{
	struct json_object *p = proc_of(procs, pid);
	int64_t ord = p ? ig_metrics_jint(p, "ordinal", ig_metrics_jint(p, "device", -1)) : -1;

	return ord >= 0 && ord <= IG_MAX_DEVICE_ID ? (int)ord : -1;
}

/* collectives.by_communicator: each rank under its own labels. */
static void add_collectives(struct ig_metrics *m, struct json_object *r,
			    struct json_object *procs,
			    const struct ig_pid_identity *ids, size_t nids)
{
	struct json_object *coll = ig_metrics_jget(r, "collectives", json_type_object);
	struct json_object *a = ig_metrics_jget(coll, "by_communicator", json_type_array);
	struct ig_identity none = { 0 };
	size_t i, n = a ? json_object_array_length(a) : 0;

	for (i = 0; i < n; i++) {
		struct json_object *c = json_object_array_get_idx(a, i);
		int64_t pid = ig_metrics_jint(c, "pid", -1);
		const struct ig_identity *id = ig_metrics_who(ids, nids, pid);
		struct ig_lset s;
		char *labels;

		if (dev_unknown(ig_metrics_jget(r, "gpu", json_type_object), pid))
			unknown_lset(procs, ids, nids, pid, &s);
		else
			ig_metrics_lset_of(id ? id : &none, ordinal_of(procs, pid), &s);
		labels = ig_metrics_lset_text(&s);
		if (labels)
			ig_metrics_coll_add(m, labels, c);
		free(labels);
	}
	ig_metrics_coll_expire(m);
}

static void drop_stale(struct ig_metrics *m)
{
	size_t i, j;

	for (i = j = 0; i < m->ntargets; i++) {
		if (m->windows - m->targets[i]->last >
		    (m->targets[i]->per_pid ? IG_METRICS_PID_KEEP : m->keep)) {
			target_free(m->targets[i]);
			m->dropped_stale++;
		} else {
			m->targets[j++] = m->targets[i];
		}
	}
	m->ntargets = j;
}

static void add_window(struct ig_metrics *m, struct json_object *r,
		       const struct ig_pid_identity *ids, size_t nids)
{
	struct json_object *gpu = ig_metrics_jget(r, "gpu", json_type_object);
	struct json_object *procs = ig_metrics_jget(r, "processes", json_type_array);
	struct json_object *ev = ig_metrics_jget(r, "events", json_type_object);
	struct json_object *done = ig_metrics_jget(r, "complete", json_type_boolean);
	struct ig_target *t;
	struct ig_lset s;
	size_t i, n = procs ? json_object_array_length(procs) : 0;

	m->windows++;
	m->partial += !done || !json_object_get_boolean(done);
	m->observed += ig_metrics_jsec(r, "duration_s");
	m->lost += (uint64_t)(ig_metrics_jint(ev, "dropped", 0) > 0 ?
			      ig_metrics_jint(ev, "dropped", 0) : 0);
	{
		struct json_object *gp = ig_metrics_jget(r, "gpu_processes", json_type_object);
		long long missed = gp ? ig_metrics_jint(gp, "missed", 0) : 0;

		m->gpu_missed += missed > 0 ? (uint64_t)missed : 0;
	}
	/* on a GPU: placed, or on one of its own nothing placed */
	for (m->processes = 0, i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(procs, i);

		m->processes += ig_metrics_jint(p, "device", -1) >= 0 ||
				dev_unknown(gpu, ig_metrics_jint(p, "pid", -1));
	}
	add_stragglers(m, ig_metrics_jget(r, "stragglers", json_type_array));
	add_collectives(m, r, procs, ids, nids);
	if (!add_devices(m, gpu,
			 ig_metrics_jget(ig_metrics_jget(r, "collectives", json_type_object),
					 "ranks", json_type_array),
			 procs, ids, nids)) {
		ig_metrics_window_lset(procs, ids, nids, -1, &s);
		t = target_get(m, &s);
		if (t)
			add_cause_series(t, r, gpu);
	}
	drop_stale(m);
	expire_unknown(m);
}

int ig_metrics_add_window(struct ig_metrics *m, struct json_object *report,
			  const struct ig_pid_identity *ids, size_t nids)
{
	if (!m || !ig_metrics_jget(report, "gpu", json_type_object) ||
	    ig_metrics_jint(report, "version", 0) != 1)
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	add_window(m, report, ids, nids);
	pthread_mutex_unlock(&m->lock);
	return 0;
}
