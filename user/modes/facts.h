/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Set-up facts (docs/design.md §7.10): the records that set something up
 * once in a process's life, which a fresh engine or a new piece of a
 * recording needs restated: which device a thread's context is on
 * (IG_CU_CTX), how a stream was created (IG_CU_STREAM_NEW), a
 * communicator's id, rank and size (IG_NC_COMM, IG_NC_COMM_INFO).  The
 * latest per thread, stream or communicator is kept, 8192 at most.
 * Used by the agent's windows and by the periods and pieces of `run`
 * and `attach`.
 */
#ifndef IG_MODES_FACTS_H
#define IG_MODES_FACTS_H

#include <stddef.h>
#include <sys/types.h>
#include "stream/records.h"

struct ig_fact;

struct ig_facts {
	struct ig_fact *v;
	size_t n, cap;
};

/* Keeps @rec when it is a set-up fact. */
void ig_facts_seen(struct ig_facts *f, const struct ig_hdr *rec);
/* Forgets the facts of a process (its exec or exit). */
void ig_facts_forget(struct ig_facts *f, pid_t tgid);
/* Hands each fact to @emit, stamped at @ts; returns how many. */
int ig_facts_announce(const struct ig_facts *f, __u64 ts,
		      void (*emit)(const struct ig_hdr *rec, void *ctx), void *ctx);
void ig_facts_free(struct ig_facts *f);

#endif
