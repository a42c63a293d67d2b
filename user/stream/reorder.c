// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "stream/reorder.h"

struct slot {
	__u64 ts;
	struct ig_hdr *rec;
};

struct ig_reorder {
	__u64 window, user_lag;
	__u64 max_ts;		/* what the releases go by (see ig_reorder_new) */
	__u64 released_ts;	/* newest timestamp released */
	unsigned long late;
	struct slot *v;		/* sorted: v[head..tail) */
	size_t head, tail, cap;
	ig_reorder_out out;
	void *ctx;
};

struct ig_reorder *ig_reorder_new(__u64 window_ns, __u64 user_lag_ns,
				  ig_reorder_out out, void *ctx)
{
	struct ig_reorder *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->window = window_ns;
	r->user_lag = user_lag_ns;
	r->out = out;
	r->ctx = ctx;
	return r;
}

static int make_room(struct ig_reorder *r)
{
	size_t n = r->tail - r->head;

	if (r->tail < r->cap)
		return 0;
	if (r->cap && r->head >= r->cap / 2) {
		memmove(r->v, r->v + r->head, n * sizeof(*r->v));
	} else {
		size_t cap = r->cap ? r->cap * 2 : 4096;
		struct slot *v = malloc(cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		if (n)
			memcpy(v, r->v + r->head, n * sizeof(*v));
		free(r->v);
		r->v = v;
		r->cap = cap;
	}
	r->head = 0;
	r->tail = n;
	return 0;
}

static void release(struct ig_reorder *r, struct slot *s)
{
	r->released_ts = s->ts;
	r->out(s->rec, r->ctx);
	free(s->rec);
}

int ig_reorder_push(struct ig_reorder *r, const struct ig_hdr *rec)
{
	struct ig_hdr *copy = malloc(rec->size);
	size_t lo, hi;
	__u64 ts = rec->ts;

	if (!copy || make_room(r)) {
		free(copy);
		return -ENOMEM;
	}
	memcpy(copy, rec, rec->size);
	if (ts < r->released_ts) {
		/* Too late to sort: deliver with the oldest timestamp still
		 * allowed, so the engine's clock never runs backwards. */
		r->late++;
		copy->ts = r->released_ts;
		ts = r->released_ts;
	}
	/* Upper bound: first slot with a larger timestamp.  Nearly always
	 * the end, so check that first. */
	lo = r->head;
	hi = r->tail;
	if (hi > lo && r->v[hi - 1].ts > ts) {
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (r->v[mid].ts <= ts)
				lo = mid + 1;
			else
				hi = mid;
		}
		memmove(r->v + lo + 1, r->v + lo, (r->tail - lo) * sizeof(*r->v));
	} else {
		lo = r->tail;
	}
	r->v[lo].ts = ts;
	r->v[lo].rec = copy;
	r->tail++;
	/* user space's records are stamped when it writes them, ahead of
	 * what the ring still holds when it is read late */
	if (rec->type >= IG_REC_USER_BASE)
		ts = ts > r->user_lag ? ts - r->user_lag : 0;
	ig_reorder_advance(r, ts);
	return 0;
}

void ig_reorder_advance(struct ig_reorder *r, __u64 ts)
{
	if (ts > r->max_ts)
		r->max_ts = ts;
	while (r->head < r->tail && r->v[r->head].ts + r->window < r->max_ts)
		release(r, &r->v[r->head++]);
}

void ig_reorder_flush(struct ig_reorder *r)
{
	while (r->head < r->tail)
		release(r, &r->v[r->head++]);
}

unsigned long ig_reorder_late(const struct ig_reorder *r)
{
	return r->late;
}

void ig_reorder_free(struct ig_reorder *r)
{
	if (!r)
		return;
	while (r->head < r->tail)
		free(r->v[r->head++].rec);
	free(r->v);
	free(r);
}
