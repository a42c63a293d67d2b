// SPDX-License-Identifier: GPL-2.0
/* Set-up facts kept for a fresh engine or a new recording piece
 * (facts.h, docs/design.md §7.10). */
#include <stdlib.h>
#include <string.h>
#include "modes/facts.h"
#include "util/util.h"

/* facts of every process together, at most (the oldest is dropped) */
#define MAX_FACTS	8192

struct ig_fact {
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

static void drop(struct ig_facts *f, size_t i)
{
	memmove(&f->v[i], &f->v[i + 1], (f->n - i - 1) * sizeof(*f->v));
	f->n--;
}

void ig_facts_seen(struct ig_facts *f, const struct ig_hdr *rec)
{
	unsigned int kind = 0, k;
	__u64 key = fact_key(rec, &kind);
	size_t i;

	if (!key)
		return;
	for (i = 0; i < f->n; i++)
		if (f->v[i].r.h.tgid == rec->tgid && fact_key(&f->v[i].r.h, &k) == key &&
		    (k == kind || (kind & 0x100 && k & 0x100))) {
			drop(f, i);	/* the latest says it */
			break;
		}
	if (kind == (0x100 | IG_NC_COMM_FREE))
		return;
	if (f->n == MAX_FACTS)
		drop(f, 0);
	if (!ig_grow((void **)&f->v, &f->cap, f->n, sizeof(*f->v)))
		return;
	memset(&f->v[f->n], 0, sizeof(f->v[0]));
	memcpy(&f->v[f->n++].r, rec, rec->size < sizeof(f->v[0].r) ?
	       rec->size : sizeof(f->v[0].r));
}

void ig_facts_forget(struct ig_facts *f, pid_t tgid)
{
	size_t i, j;

	for (i = j = 0; i < f->n; i++)
		if (f->v[i].r.h.tgid != (__u32)tgid)
			f->v[j++] = f->v[i];
	f->n = j;
}

int ig_facts_announce(const struct ig_facts *f, __u64 ts,
		      void (*emit)(const struct ig_hdr *rec, void *ctx), void *ctx)
{
	struct ig_fact x;
	size_t i;

	for (i = 0; i < f->n; i++) {
		x = f->v[i];
		x.r.h.ts = ts;
		if (x.r.h.type == IG_REC_CUDA)
			x.r.cu.t_begin = ts;
		else
			x.r.nc.t_begin = ts;
		emit(&x.r.h, ctx);
	}
	return (int)f->n;
}

void ig_facts_free(struct ig_facts *f)
{
	free(f->v);
	memset(f, 0, sizeof(*f));
}
