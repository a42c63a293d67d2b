/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A growable FIFO of fixed-size elements: thread histories append at the
 * back and age out at the front.  Capacity is a power of two; it shrinks
 * again after a burst so a long trace holds only what the window needs.
 */
#ifndef IG_UTIL_RING_H
#define IG_UTIL_RING_H

#include <stdint.h>
#include <stddef.h>

struct ig_ring {
	unsigned char *buf;
	uint32_t head, len, cap;
	uint32_t esz;
};

static inline void ig_ring_init(struct ig_ring *r, uint32_t esz)
{
	r->buf = NULL;
	r->head = r->len = r->cap = 0;
	r->esz = esz;
}

static inline void *ig_ring_at(const struct ig_ring *r, uint32_t i)
{
	return r->buf + (size_t)((r->head + i) & (r->cap - 1)) * r->esz;
}

static inline void *ig_ring_back(const struct ig_ring *r)
{
	return r->len ? ig_ring_at(r, r->len - 1) : NULL;
}

/* Doubles the capacity (16 at first): 0, or -1 on ENOMEM. */
int ig_ring_grow(struct ig_ring *r);

/* Slot for a new last element (uninitialised), NULL on ENOMEM.  Inline,
 * as pop_front: each history record pushes, and only a full ring calls
 * into ring.c. */
static inline void *ig_ring_push(struct ig_ring *r)
{
	if (r->len == r->cap && ig_ring_grow(r))
		return NULL;
	r->len++;
	return ig_ring_at(r, r->len - 1);
}

static inline void ig_ring_pop_front(struct ig_ring *r, uint32_t n)
{
	if (n > r->len)
		n = r->len;
	r->len -= n;
	r->head = r->len ? (r->head + n) & (r->cap - 1) : 0;
}

/* Give memory back when mostly empty. */
void ig_ring_trim(struct ig_ring *r);
void ig_ring_free(struct ig_ring *r);

static inline size_t ig_ring_bytes(const struct ig_ring *r)
{
	return (size_t)r->cap * r->esz;
}

/* First index whose u64 key at byte offset `off` is > t (keys ascending). */
static inline uint32_t ig_ring_upper(const struct ig_ring *r, size_t off,
				     uint64_t t)
{
	uint32_t lo = 0, hi = r->len;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const uint64_t *k = (const uint64_t *)
			((const unsigned char *)ig_ring_at(r, mid) + off);

		if (*k <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
