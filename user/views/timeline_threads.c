// SPDX-License-Identifier: GPL-2.0
/*
 * The timeline builder's threads (timeline_int.h): each thread's process
 * and name, from the record stream and the walk's wakers, and its track
 * declared to the writer before its first slice (docs/design.md §7.8).
 * The thread tracks (timeline_build.c) and the collectives' tracks
 * (timeline_peers.c) both declare threads here; it calls neither.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "views/timeline_int.h"

static uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352d;
	x ^= x >> 15;
	return x;
}

static struct tl_thread *slot(struct tl_thread *t, uint32_t cap, uint32_t tid)
{
	uint32_t i = hash32(tid) & (cap - 1);

	while (t[i].tid && t[i].tid != tid)
		i = (i + 1) & (cap - 1);
	return &t[i];
}

int ig_timeline_threads_grow(struct ig_tlb *b)
{
	uint32_t cap = b->cap ? 2 * b->cap : 256, i;
	struct tl_thread *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (i = 0; i < b->cap; i++)
		if (b->thr[i].tid)
			*slot(t, cap, b->thr[i].tid) = b->thr[i];
	free(b->thr);
	b->thr = t;
	b->cap = cap;
	return 0;
}

struct tl_thread *ig_timeline_thread_get(struct ig_tlb *b, uint32_t tid, uint32_t tgid)
{
	struct tl_thread *t;

	if ((b->n + 1) * 2 > b->cap && ig_timeline_threads_grow(b))
		return NULL;
	t = slot(b->thr, b->cap, tid);
	if (!t->tid) {
		t->tid = tid;
		t->tgid = tgid ? tgid : tid;
		b->n++;
	}
	return t;
}

void ig_timeline_note_comm(struct ig_tlb *b, uint32_t tid, uint32_t tgid, const char *comm)
{
	struct tl_thread *t = tid && comm[0] ? ig_timeline_thread_get(b, tid, tgid) : NULL;

	if (!t || !strncmp(t->comm, comm, IG_COMM_LEN - 1))
		return;
	/* a new name (exec, prctl): declared again before the next slice */
	snprintf(t->comm, sizeof(t->comm), "%.*s", IG_COMM_LEN - 1, comm);
	t->declared = false;
}

int ig_timeline_declare(struct ig_tlb *b, uint32_t tid, uint32_t tgid)
{
	struct tl_thread *t = ig_timeline_thread_get(b, tid, tgid), *p;
	struct ig_tl_thread d;

	if (!t)
		return -ENOMEM;
	if (t->declared)
		return 0;
	p = t->tgid != tid ? ig_timeline_thread_get(b, t->tgid, t->tgid) : t;
	t = slot(b->thr, b->cap, tid);	/* the table may have grown */
	d.pid = t->tgid;
	d.tid = tid;
	d.comm = t->comm[0] ? t->comm : NULL;
	d.pcomm = p && p->comm[0] ? p->comm : NULL;
	t->declared = true;
	return ig_perfetto_thread(b->w, &d);
}
