// SPDX-License-Identifier: GPL-2.0
/*
 * Collectives by communicator in the registry (docs/design.md §7.5): for
 * each rank the window reports name in collectives.by_communicator, the
 * collectives whose end its GPU was seen at and their launch-to-end time,
 * under the rank's own workload labels (metrics.c gives them) and the
 * communicator's id, rank and size.  What one host knows without its
 * peers; a rule over every host's series compares the ranks of a
 * communicator (deploy/prometheus/idlegap.rules.yml).  The exposition is
 * metrics_text.c's; this file calls no other of the registry's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "views/metrics_impl.h"

static int64_t jint(struct json_object *o, const char *k, int64_t dflt)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_int))
		return dflt;
	return json_object_get_int64(v);
}

static double jsec(struct json_object *o, const char *k)
{
	struct json_object *v;
	double d;

	if (!json_object_object_get_ex(o, k, &v) ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return 0;
	d = json_object_get_double(v);
	return d > 0 && d < 1e15 ? d : 0;
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

void ig_metrics_coll_add(struct ig_metrics *m, const char *labels,
			 struct json_object *c)
{
	struct json_object *idv;
	int64_t rank = jint(c, "rank", -1), size = jint(c, "size", 0);
	int64_t ended = jint(c, "ended", 0);
	struct ig_coll_sum *t;
	char *key = NULL;
	size_t len = 0;
	FILE *f;

	if (!json_object_object_get_ex(c, "communicator", &idv) ||
	    !json_object_is_type(idv, json_type_string) ||
	    !hex_id(json_object_get_string(idv)) || rank < 0 || size <= 0 ||
	    rank >= size || size > 1 << 20)
		return;
	f = open_memstream(&key, &len);
	if (!f)
		return;
	fprintf(f, "%s%scommunicator=\"%s\",comm_rank=\"%lld\",comm_size=\"%lld\"",
		labels, *labels ? "," : "", json_object_get_string(idv),
		(long long)rank, (long long)size);
	if (fclose(f)) {
		free(key);
		return;
	}
	t = sum_get(m, key);
	if (!t)
		return;
	t->last = m->windows;
	t->ended += (double)(ended > 0 ? ended : 0);
	t->lead_s += jsec(c, "launch_to_end_s");
}

void ig_metrics_coll_expire(struct ig_metrics *m)
{
	size_t i, j;

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

void ig_metrics_coll_free(struct ig_metrics *m)
{
	size_t i;

	for (i = 0; i < m->ncoll; i++)
		free(m->coll[i].key);
	free(m->coll);
	m->coll = NULL;
	m->ncoll = 0;
}
