// SPDX-License-Identifier: GPL-2.0
/*
 * Collectives by communicator in the registry (docs/design.md §7.5): for
 * each rank the window reports name in collectives.by_communicator, the
 * collectives whose end its GPU was seen at and their launch-to-end time,
 * under the rank's own workload labels and the communicator's id, rank
 * and size.  What one host knows without its peers; a rule over every
 * host's series compares the ranks of a communicator
 * (deploy/prometheus/idlegap.rules.yml).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "views/metrics_impl.h"

static const struct ig_identity *who(const struct ig_pid_identity *ids,
				     size_t n, int64_t pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ids[i].pid == pid)
			return &ids[i].id;
	return NULL;
}

static int64_t jint(struct json_object *o, const char *k, int64_t dflt)
{
	struct json_object *v = ig_metrics_jget(o, k, json_type_int);

	return v ? json_object_get_int64(v) : dflt;
}

static bool hex_id(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= 16 && strspn(s, "0123456789abcdef") == n;
}

static struct ig_coll_sum *sum_get(struct ig_metrics *m, char *key)
{
	struct ig_coll_sum *v;
	size_t i;

	for (i = 0; i < m->ncoll; i++)
		if (!strcmp(m->coll[i].key, key)) {
			free(key);
			return &m->coll[i];
		}
	if (m->ncoll >= m->max) {
		m->dropped_limit++;
		free(key);
		return NULL;
	}
	v = realloc(m->coll, (m->ncoll + 1) * sizeof(*v));
	if (!v) {
		free(key);
		return NULL;
	}
	m->coll = v;
	memset(&v[m->ncoll], 0, sizeof(*v));
	v[m->ncoll].key = key;
	return &v[m->ncoll++];
}

/* The process's own number for its GPU (processes[].ordinal), as the
 * GPU series take it; -1 when not known. */
static int ordinal_of(struct json_object *procs, int64_t pid)
{
	size_t i, n = procs ? json_object_array_length(procs) : 0;

	for (i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(procs, i);
		int64_t ord = jint(p, "ordinal", jint(p, "device", -1));

		if (jint(p, "pid", -1) == pid)
			return ord >= 0 && ord <= IG_MAX_DEVICE_ID ? (int)ord : -1;
	}
	return -1;
}

/* One rank's entry: its labels, then the communicator's. */
static void add_one(struct ig_metrics *m, struct json_object *c,
		    struct json_object *procs,
		    const struct ig_pid_identity *ids, size_t nids)
{
	struct json_object *idv = ig_metrics_jget(c, "communicator", json_type_string);
	int64_t pid = jint(c, "pid", -1);
	int64_t rank = jint(c, "rank", -1), size = jint(c, "size", 0);
	const struct ig_identity *id = who(ids, nids, pid);
	struct ig_identity none = { 0 };
	struct ig_coll_sum *t;
	struct ig_lset s;
	char *lk, *key = NULL;
	size_t len = 0;
	FILE *f;

	if (!idv || !hex_id(json_object_get_string(idv)) || rank < 0 ||
	    size <= 0 || rank >= size || size > 1 << 20)
		return;
	ig_metrics_lset_of(id ? id : &none, ordinal_of(procs, pid), &s);
	lk = ig_metrics_lset_text(&s);
	f = lk ? open_memstream(&key, &len) : NULL;
	if (!f) {
		free(lk);
		return;
	}
	fprintf(f, "%s%scommunicator=\"%s\",comm_rank=\"%lld\",comm_size=\"%lld\"",
		lk, *lk ? "," : "", json_object_get_string(idv), (long long)rank,
		(long long)size);
	free(lk);
	if (fclose(f)) {
		free(key);
		return;
	}
	t = sum_get(m, key);
	if (!t)
		return;
	t->last = m->windows;
	t->ended += (double)(jint(c, "ended", 0) > 0 ? jint(c, "ended", 0) : 0);
	t->lead_s += ig_metrics_jsec(c, "launch_to_end_s");
}

void ig_metrics_coll_add(struct ig_metrics *m, struct json_object *report,
			 const struct ig_pid_identity *ids, size_t nids)
{
	struct json_object *coll = ig_metrics_jget(report, "collectives", json_type_object);
	struct json_object *a = ig_metrics_jget(coll, "by_communicator", json_type_array);
	struct json_object *procs = ig_metrics_jget(report, "processes", json_type_array);
	size_t i, j, n = a ? json_object_array_length(a) : 0;

	for (i = 0; i < n; i++)
		add_one(m, json_object_array_get_idx(a, i), procs, ids, nids);
	/* m->windows counts this window already */
	for (i = j = 0; i < m->ncoll; i++) {
		if (m->windows - m->coll[i].last > m->keep) {
			free(m->coll[i].key);
			m->dropped_stale++;
		} else {
			m->coll[j++] = m->coll[i];
		}
	}
	m->ncoll = j;
}

void ig_metrics_coll_render(FILE *f, const struct ig_metrics *m)
{
	size_t i;

	if (!m->ncoll)
		return;
	fprintf(f, "# HELP idlegap_collectives_ended_total %s\n# TYPE idlegap_collectives_ended_total counter\n",
		"Collectives this rank launched whose end its GPU was seen at.");
	for (i = 0; i < m->ncoll; i++)
		ig_metrics_series(f, m, "idlegap_collectives_ended_total",
				  m->coll[i].key, NULL, NULL, "%.0f", m->coll[i].ended);
	fprintf(f, "# HELP idlegap_collective_launch_to_end_seconds_total %s\n# TYPE idlegap_collective_launch_to_end_seconds_total counter\n",
		"Time from this rank's launch of each of those collectives to its end on this rank's GPU.");
	for (i = 0; i < m->ncoll; i++)
		ig_metrics_series(f, m, "idlegap_collective_launch_to_end_seconds_total",
				  m->coll[i].key, NULL, NULL, "%.9g", m->coll[i].lead_s);
}

void ig_metrics_coll_free(struct ig_metrics *m)
{
	size_t i;

	for (i = 0; i < m->ncoll; i++)
		free(m->coll[i].key);
	free(m->coll);
	m->coll = NULL;
	m->ncoll = 0;
}
