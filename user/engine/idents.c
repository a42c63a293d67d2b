// SPDX-License-Identifier: GPL-2.0
/* Each process's workload identity (idents.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/idents.h"
#include "engine/jsonval.h"
#include "engine/model.h"

struct ig_idents {
	struct ig_htab by_pid;	/* tgid -> struct ig_ident (owned) */
};

static struct ig_idents *idents_get(struct ig_engine *e)
{
	if (e->idents)
		return e->idents;
	e->idents = calloc(1, sizeof(*e->idents));
	if (e->idents && ig_htab_init(&e->idents->by_pid, 64)) {
		free(e->idents);
		e->idents = NULL;
	}
	return e->idents;
}

/* Fields are NUL-terminated within their size, whatever a file held. */
static void terminate(struct ig_ident *r)
{
	r->pod_uid[sizeof(r->pod_uid) - 1] = '\0';
	r->container[sizeof(r->container) - 1] = '\0';
	r->runtime[sizeof(r->runtime) - 1] = '\0';
	r->pod[sizeof(r->pod) - 1] = '\0';
	r->namespace[sizeof(r->namespace) - 1] = '\0';
}

static void put(struct ig_engine *e, uint32_t pid, const struct ig_ident *src)
{
	struct ig_idents *ids = idents_get(e);
	struct ig_ident *r;

	if (!ids || !pid)
		return;
	r = ig_htab_get(&ids->by_pid, pid);
	if (!r) {
		if (ids->by_pid.n >= IG_IDENTS_MAX)
			return;
		r = malloc(sizeof(*r));
		if (!r)
			return;
		if (ig_htab_put(&ids->by_pid, pid, r)) {
			free(r);
			return;
		}
	}
	*r = *src;
	r->h.tid = r->h.tgid = pid;
	terminate(r);
}

void ig_engine_ident_on_rec(struct ig_engine *e, const struct ig_ident *r)
{
	put(e, r->h.tgid, r);
}

void ig_engine_ident_on_fork(struct ig_engine *e, uint32_t parent, uint32_t child)
{
	const struct ig_ident *p;

	if (!e->idents || parent == child)
		return;
	p = ig_htab_get(&e->idents->by_pid, parent);
	if (p) {
		struct ig_ident copy = *p;

		put(e, child, &copy);
	} else {
		free(ig_htab_del(&e->idents->by_pid, child));	/* a reused pid */
	}
}

const struct ig_ident *ig_engine_ident_of(const struct ig_engine *e, uint32_t pid)
{
	return e->idents ? ig_htab_get(&e->idents->by_pid, pid) : NULL;
}

static struct json_object *str_or_null(const char *s)
{
	return s && *s ? jstr(s) : NULL;
}

void ig_engine_ident_json(const struct ig_engine *e, struct json_object *o,
			  uint32_t pid)
{
	ig_engine_ident_json_common(e, o, &pid, 1);
}

void ig_engine_ident_json_common(const struct ig_engine *e, struct json_object *o,
				 const uint32_t *pids, size_t n)
{
	const struct ig_ident *first = n ? ig_engine_ident_of(e, pids[0]) : NULL;
	bool pod = first != NULL, ns = pod, uid = pod;
	size_t i;

	for (i = 1; first && i < n; i++) {
		const struct ig_ident *r = ig_engine_ident_of(e, pids[i]);

		pod = pod && r && !strcmp(r->pod, first->pod) &&
		      !strcmp(r->pod_uid, first->pod_uid);
		ns = ns && r && !strcmp(r->namespace, first->namespace);
		uid = uid && r && !strcmp(r->pod_uid, first->pod_uid);
	}
	json_object_object_add(o, "pod", str_or_null(pod ? first->pod : NULL));
	json_object_object_add(o, "namespace", str_or_null(ns ? first->namespace : NULL));
	json_object_object_add(o, "pod_uid", str_or_null(uid ? first->pod_uid : NULL));
}

void ig_engine_ident_text(const struct ig_engine *e, uint32_t pid, char *buf,
			  size_t n)
{
	const struct ig_ident *r = ig_engine_ident_of(e, pid);

	buf[0] = '\0';
	if (!r)
		return;
	if (r->pod[0] && r->namespace[0])
		snprintf(buf, n, " pod %s/%s", r->namespace, r->pod);
	else if (r->pod[0])
		snprintf(buf, n, " pod %s", r->pod);
	else if (r->pod_uid[0])
		snprintf(buf, n, " pod %s", r->pod_uid);
}

void ig_engine_idents_free(struct ig_engine *e)
{
	struct ig_ident *r;
	uint32_t it = 0;

	if (!e->idents)
		return;
	while ((r = ig_htab_next(&e->idents->by_pid, &it)))
		free(r);
	ig_htab_free(&e->idents->by_pid);
	free(e->idents);
	e->idents = NULL;
}
