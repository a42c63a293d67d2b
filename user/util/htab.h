/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small open-addressing hash table keyed by a 64-bit key, for per-record
 * lookups (the engine's thread by tid, process by tgid, stream by key; the
 * stack tables' names by process, then by address or id).  Linear probing
 * with backward-shift deletion, so lookups never walk tombstones and the
 * table stays fast after heavy thread churn.
 *
 * Its entries lie in one array, each beginning with its key, and a bit per
 * slot says which are in use.  A table set up by ig_htab_init maps a key to
 * a pointer (entries of struct ig_htab_kv, at most half the slots in use).
 * One set up by ig_htab_init_ents holds entries of the caller's own layout
 * and size in place, no allocation for each, and may fill three quarters of
 * its slots: a table of many small entries (the stack tables') takes what
 * the entries need and no more.  A zeroed table is empty; the first
 * ig_htab_put makes it a table of pointers.
 */
#ifndef IG_UTIL_HTAB_H
#define IG_UTIL_HTAB_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

struct ig_htab {
	unsigned char *ents;	/* cap entries of esize bytes, each from its key */
	uint64_t *busy;		/* a bit per slot: an entry is there */
	uint32_t cap;		/* power of two; 0 before init and after free */
	uint32_t n;
	uint16_t esize;		/* a multiple of 8, the key included */
	uint8_t load;		/* at most load entries per four slots: 2 or 3 */
};

/* The entry of a table of pointers. */
struct ig_htab_kv {
	uint64_t key;
	void *val;
};

/* A table of pointers.  0 or -ENOMEM. */
int ig_htab_init(struct ig_htab *h, uint32_t cap_hint);
/*
 * A table of entries of @esize bytes (a multiple of 8) kept in place, each
 * beginning with its uint64_t key, at most @load (2 or 3) in four slots
 * used.  An entry's address holds until the table next gains or loses an
 * entry.  0, -EINVAL or -ENOMEM.
 */
int ig_htab_init_ents(struct ig_htab *h, uint32_t cap_hint, size_t esize,
		      unsigned int load);
void ig_htab_free(struct ig_htab *h);
/* -ENOMEM on failure; replaces an existing value. val must not be NULL. */
int ig_htab_put(struct ig_htab *h, uint64_t key, void *val);
void *ig_htab_del(struct ig_htab *h, uint64_t key);
size_t ig_htab_bytes(const struct ig_htab *h);
/* Forget every entry; the values are the caller's to free. */
void ig_htab_clear(struct ig_htab *h);

/* A table of entries in place (ig_htab_init_ents): a new entry for @key,
 * which the table does not hold, zeroed but for its key; NULL on ENOMEM. */
void *ig_htab_ent_add(struct ig_htab *h, uint64_t key);
/* Empties slot @i, which holds an entry: the later entries of its run
 * shift back (ig_htab_sweep_del()). */
void ig_htab_del_slot(struct ig_htab *h, uint32_t i);

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

static inline bool ig_htab_busy(const struct ig_htab *h, uint32_t i)
{
	return h->busy[i >> 6] >> (i & 63) & 1;
}

static inline void *ig_htab_slot(const struct ig_htab *h, uint32_t i)
{
	return h->ents + (size_t)i * h->esize;
}

static inline uint64_t ig_htab_key_at(const struct ig_htab *h, uint32_t i)
{
	uint64_t key;

	memcpy(&key, ig_htab_slot(h, i), sizeof(key));
	return key;
}

/* The entry of @key, NULL when there is none. */
static inline void *ig_htab_ent(const struct ig_htab *h, uint64_t key)
{
	uint32_t mask = h->cap - 1;
	uint32_t i = (uint32_t)ig_hash64(key) & mask;

	if (!h->cap)
		return NULL;
	for (;;) {
		if (!ig_htab_busy(h, i))
			return NULL;
		if (ig_htab_key_at(h, i) == key)
			return ig_htab_slot(h, i);
		i = (i + 1) & mask;
	}
}

static inline void *ig_htab_get(const struct ig_htab *h, uint64_t key)
{
	const struct ig_htab_kv *kv = ig_htab_ent(h, key);

	return kv ? kv->val : NULL;
}

/*
 * The next entry in slot order, from a cursor that starts at 0; NULL at the
 * end.  The table must not change during the walk:
 *	uint32_t it = 0;
 *	while ((e = ig_htab_ent_next(h, &it))) ...
 */
static inline void *ig_htab_ent_next(const struct ig_htab *h, uint32_t *it)
{
	while (*it < h->cap) {
		uint32_t i = (*it)++;

		if (ig_htab_busy(h, i))
			return ig_htab_slot(h, i);
	}
	return NULL;
}

/* The same walk over a table of pointers: the next value. */
static inline void *ig_htab_next(const struct ig_htab *h, uint32_t *it)
{
	const struct ig_htab_kv *kv = ig_htab_ent_next(h, it);

	return kv ? kv->val : NULL;
}

/*
 * A walk that may remove the entry it is at, each entry seen once:
 *	struct ig_htab_sweep s;
 *	ig_htab_sweep_start(h, &s);
 *	while ((e = ig_htab_sweep_next(h, &s)))
 *		if (...)
 *			ig_htab_sweep_del(h, &s);
 * It starts from an empty slot (the load stays under 1) and goes once
 * round: no run of entries wraps past it, so a backward shift brings into
 * the slot just emptied only entries not yet seen, and that slot is looked
 * at again.  The table gains no entry during the walk; removing allocates
 * nothing, so it cannot fail.
 */
struct ig_htab_sweep {
	uint32_t start;		/* an empty slot */
	uint32_t k;		/* slots looked at from it */
};

static inline void ig_htab_sweep_start(const struct ig_htab *h,
				       struct ig_htab_sweep *s)
{
	s->start = 0;
	s->k = h->n ? 0 : h->cap;
	if (h->n)
		while (ig_htab_busy(h, s->start))
			s->start++;
}

static inline void *ig_htab_sweep_next(const struct ig_htab *h,
				       struct ig_htab_sweep *s)
{
	while (s->k < h->cap) {
		uint32_t i = (s->start + s->k++) & (h->cap - 1);

		if (ig_htab_busy(h, i))
			return ig_htab_slot(h, i);
	}
	return NULL;
}

/* Removes the entry ig_htab_sweep_next() gave last. */
static inline void ig_htab_sweep_del(struct ig_htab *h, struct ig_htab_sweep *s)
{
	s->k--;
	ig_htab_del_slot(h, (s->start + s->k) & (h->cap - 1));
}

#endif
