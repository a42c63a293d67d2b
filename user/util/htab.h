/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small open-addressing hash table from a 64-bit key to a pointer, for
 * per-record lookups (the engine's thread by tid, process by tgid, stream
 * by key; the stack tables' names by process, then by address or id).
 * Linear probing with backward-shift deletion, so lookups never walk
 * tombstones and the table stays fast after heavy thread churn.
 */
#ifndef IG_UTIL_HTAB_H
#define IG_UTIL_HTAB_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

struct ig_htab {
	uint64_t *keys;
	void **vals;		/* NULL: empty slot */
	uint32_t cap;		/* power of two */
	uint32_t n;
};

int ig_htab_init(struct ig_htab *h, uint32_t cap_hint);
void ig_htab_free(struct ig_htab *h);
/* -ENOMEM on failure; replaces an existing value. val must not be NULL. */
int ig_htab_put(struct ig_htab *h, uint64_t key, void *val);
void *ig_htab_del(struct ig_htab *h, uint64_t key);
/*
 * Removes every entry for which goes(key, val, ctx) is true, calling it
 * once for each entry; goes may free the value it removes.  It allocates
 * nothing, so it cannot fail.
 */
void ig_htab_del_where(struct ig_htab *h,
		       bool (*goes)(uint64_t key, void *val, void *ctx),
		       void *ctx);
size_t ig_htab_bytes(const struct ig_htab *h);
/* Forget every entry; the values are the caller's to free. */
void ig_htab_clear(struct ig_htab *h);

static inline uint64_t ig_hash64(uint64_t x)
{
	/* splitmix64 finaliser: tids are small and dense, spread them */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static inline void *ig_htab_get(const struct ig_htab *h, uint64_t key)
{
	uint32_t mask = h->cap - 1;
	uint32_t i = (uint32_t)ig_hash64(key) & mask;

	for (;;) {
		if (!h->vals[i])
			return NULL;
		if (h->keys[i] == key)
			return h->vals[i];
		i = (i + 1) & mask;
	}
}

/*
 * The next value in slot order, from a cursor that starts at 0; NULL at the
 * end.  The table must not change during the walk:
 *	uint32_t it = 0;
 *	while ((v = ig_htab_next(h, &it))) ...
 */
static inline void *ig_htab_next(const struct ig_htab *h, uint32_t *it)
{
	while (h->vals && *it < h->cap) {
		void *v = h->vals[(*it)++];

		if (v)
			return v;
	}
	return NULL;
}

#endif
