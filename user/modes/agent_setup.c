// SPDX-License-Identifier: GPL-2.0
/*
 * The set-up facts the agent keeps across its windows (docs/design.md
 * §7.10): which device a thread's context is on (IG_CU_CTX), how a stream
 * was created (IG_CU_STREAM_NEW), a communicator's id, rank and size
 * (IG_NC_COMM, IG_NC_COMM_INFO).  The set-up probes that send them stay
 * attached between windows, but each window's engine starts empty: they
 * are kept from whenever they were seen, in a window or between two, and
 * announced to each window's engine at its start, as
 * ig_discovery_reannounce() announces the processes.
 *
 * And the processes the kernel tracks from their first libcuda mapping
 * (ig_tracer_gpulib_track) until the agent follows them: their records
 * before that, or all of them when one ends first, are no window's (such
 * a process is counted in gpu_processes.missed), but for its set-up
 * facts.
 */
#include <stdlib.h>
#include <string.h>
#include "modes/agent_int.h"
#include "util/util.h"

/* facts of every process together, at most (the oldest is dropped) */
#define MAX_FACTS	8192

struct ig_agent_fact {
	union {
		struct ig_hdr h;
		struct ig_cuda cu;
		struct ig_nccl nc;
	} r;
};

/* What a fact is about: a thread's context, a process's stream or
 * communicator; 0 for a record that is no set-up fact. */
static __u64 fact_key(const struct ig_hdr *rec, unsigned int *kind)
{
	const struct ig_cuda *cu = (const struct ig_cuda *)rec;
	const struct ig_nccl *nc = (const struct ig_nccl *)rec;

	if (rec->type == IG_REC_CUDA && rec->size >= sizeof(*cu) &&
	    (cu->kind == IG_CU_CTX || cu->kind == IG_CU_STREAM_NEW) && !cu->ret) {
		*kind = cu->kind;
		return cu->kind == IG_CU_CTX ? rec->tid : cu->stream;
	}
	if (rec->type == IG_REC_NCCL && rec->size >= sizeof(*nc) && nc->comm &&
	    (nc->kind == IG_NC_COMM || nc->kind == IG_NC_COMM_INFO ||
	     nc->kind == IG_NC_COMM_FREE)) {
		*kind = 0x100 | nc->kind;
		return nc->comm;
	}
	return 0;
}

static __u64 key_of(const struct ig_agent_fact *f, unsigned int *kind)
{
	return fact_key(&f->r.h, kind);
}

static void drop(struct agent *a, size_t i)
{
	memmove(&a->facts[i], &a->facts[i + 1], (a->nfacts - i - 1) * sizeof(*a->facts));
	a->nfacts--;
}

void ig_agent_setup_seen(struct agent *a, const struct ig_hdr *rec)
{
	unsigned int kind = 0, k;
	__u64 key = fact_key(rec, &kind);
	size_t i;

	if (!key)
		return;
	for (i = 0; i < a->nfacts; i++)
		if (a->facts[i].r.h.tgid == rec->tgid && key_of(&a->facts[i], &k) == key &&
		    (k == kind || (kind & 0x100 && k & 0x100))) {
			drop(a, i);	/* the latest says it */
			break;
		}
	if (kind == (0x100 | IG_NC_COMM_FREE))
		return;
	if (a->nfacts == MAX_FACTS)
		drop(a, 0);
	if (!ig_grow((void **)&a->facts, &a->capfacts, a->nfacts, sizeof(*a->facts)))
		return;
	memset(&a->facts[a->nfacts], 0, sizeof(a->facts[0]));
	memcpy(&a->facts[a->nfacts++].r, rec, rec->size < sizeof(a->facts[0].r) ?
	       rec->size : sizeof(a->facts[0].r));
}

void ig_agent_setup_forget(struct agent *a, pid_t tgid)
{
	size_t i, j;

	for (i = j = 0; i < a->nfacts; i++)
		if (a->facts[i].r.h.tgid != (__u32)tgid)
			a->facts[j++] = a->facts[i];
	a->nfacts = j;
}

int ig_agent_setup_announce(struct agent *a, __u64 ts)
{
	struct ig_agent_fact f;
	size_t i;

	for (i = 0; i < a->nfacts; i++) {
		f = a->facts[i];
		f.r.h.ts = ts;
		if (f.r.h.type == IG_REC_CUDA)
			f.r.cu.t_begin = ts;
		else
			f.r.nc.t_begin = ts;
		ig_agent_emit(a, &f.r.h);
	}
	return (int)a->nfacts;
}

bool ig_agent_pending(const struct agent *a, pid_t tgid)
{
	return a->npending && ig_htab_get(&a->pending, (__u64)tgid);
}

void ig_agent_pending_add(struct agent *a, pid_t tgid)
{
	if (!a->pending.cap && ig_htab_init(&a->pending, 64))
		return;
	if (!ig_htab_get(&a->pending, (__u64)tgid) &&
	    !ig_htab_put(&a->pending, (__u64)tgid, (void *)1))
		a->npending++;
}

void ig_agent_pending_done(struct agent *a, pid_t tgid)
{
	if (a->npending && ig_htab_del(&a->pending, (__u64)tgid))
		a->npending--;
}

void ig_agent_setup_free(struct agent *a)
{
	if (a->pending.cap)
		ig_htab_free(&a->pending);
	free(a->facts);
	a->facts = NULL;
	a->nfacts = a->capfacts = 0;
}
