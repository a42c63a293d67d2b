/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Each process's workload identity (its IDENT record: pod, namespace,
 * container), kept for the whole analysis, past the process's exit, so
 * that a report names the pod of a rank that has ended (docs/design.md
 * §4.9, §7.4).  A forked child has its parent's until its own record.
 */
#ifndef IG_ENGINE_IDENTS_H
#define IG_ENGINE_IDENTS_H

#include <stdint.h>
#include "stream/records.h"

#define IG_IDENTS_MAX	65536	/* processes whose identity is kept */

struct ig_engine;
struct json_object;

void ig_engine_ident_on_rec(struct ig_engine *e, const struct ig_ident *r);
/* A fork: @child has @parent's identity, or none. */
void ig_engine_ident_on_fork(struct ig_engine *e, uint32_t parent, uint32_t child);
/* NULL when the node named no pod or container for @pid. */
const struct ig_ident *ig_engine_ident_of(const struct ig_engine *e, uint32_t pid);
/* Adds "pod", "namespace" and "pod_uid" of @pid to @o, each null when
 * unknown. */
void ig_engine_ident_json(const struct ig_engine *e, struct json_object *o,
			  uint32_t pid);
/* The same for a set of processes (a GPU's ranks): the values they all
 * share, null where they differ or one is unknown; @n 0 gives nulls. */
void ig_engine_ident_json_common(const struct ig_engine *e, struct json_object *o,
				 const uint32_t *pids, size_t n);
/* " pod NAMESPACE/NAME" or " pod UID" into @buf, "" when unknown. */
void ig_engine_ident_text(const struct ig_engine *e, uint32_t pid, char *buf,
			  size_t n);
void ig_engine_idents_free(struct ig_engine *e);

#endif
