/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A table from (process, 64-bit key) to an entry, for the names of a
 * record stream (stacks by id, code objects and symbols by address): the
 * util hash table (user/util/htab.h) of processes, each with one of its
 * keys.  A zeroed table is empty; a process none of whose entries is left
 * leaves the table.  The entries lie in the tables themselves: an entry's
 * address holds until its table next gains or loses an entry.
 */
#ifndef IG_STACKS_PROCTAB_H
#define IG_STACKS_PROCTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "util/htab.h"

struct ig_proctab_ent {
	__u64 key;	/* first: util/htab.h's entries begin with their key */
	__u32 tgid;
	__u32 used;	/* the owner's: when last seen */
	void *val;	/* the owner's */
};

struct ig_proctab {
	struct ig_htab procs;	/* tgid -> struct ig_htab of key -> entry */
	size_t n;		/* entries */
};

/* The entry of (tgid, key), NULL when there is none. */
static inline struct ig_proctab_ent *ig_proctab_get(const struct ig_proctab *t,
						    __u32 tgid, __u64 key)
{
	const struct ig_htab *keys = ig_htab_get(&t->procs, tgid);

	return keys ? ig_htab_ent(keys, key) : NULL;
}

/* A new entry (zeroed but for the key and tgid) for a pair not in the
 * table; NULL on ENOMEM. */
struct ig_proctab_ent *ig_proctab_add(struct ig_proctab *t, __u32 tgid,
				      __u64 key);

/* Sets (tgid, key) to @val, freeing the value it replaces with val_free:
 * the entry, or NULL on ENOMEM with @val freed. */
struct ig_proctab_ent *ig_proctab_set(struct ig_proctab *t, __u32 tgid,
				      __u64 key, void *val,
				      void (*val_free)(void *));

/* Walks every entry; the table must not change during the walk:
 *	struct ig_proctab_it it = { 0 };
 *	while ((e = ig_proctab_next(t, &it))) ... */
struct ig_proctab_it {
	uint32_t proc, key;
	const struct ig_htab *keys;
};
static inline struct ig_proctab_ent *ig_proctab_next(const struct ig_proctab *t,
						     struct ig_proctab_it *it)
{
	struct ig_proctab_ent *e;

	for (;;) {
		if (it->keys && (e = ig_htab_ent_next(it->keys, &it->key)))
			return e;
		it->keys = ig_htab_next(&t->procs, &it->proc);
		it->key = 0;
		if (!it->keys)
			return NULL;
	}
}

/*
 * A walk over every entry that may drop the entry it is at, each entry
 * seen once (util/htab.h's sweep, of the processes and of each one's
 * keys); the table gains no entry during it:
 *	struct ig_proctab_sweep s;
 *	ig_proctab_sweep_start(t, &s);
 *	while ((e = ig_proctab_sweep_next(t, &s)))
 *		if (...) {
 *			(the owner frees e->val)
 *			ig_proctab_sweep_drop(t, &s);
 *		}
 * Dropping allocates nothing.
 */
struct ig_proctab_sweep {
	struct ig_htab_sweep proc, key;
	struct ig_htab *keys;	/* of the process the walk is at */
};

static inline void ig_proctab_sweep_start(const struct ig_proctab *t,
					  struct ig_proctab_sweep *s)
{
	ig_htab_sweep_start(&t->procs, &s->proc);
	s->keys = NULL;
}

static inline struct ig_proctab_ent *ig_proctab_sweep_next(const struct ig_proctab *t,
							   struct ig_proctab_sweep *s)
{
	const struct ig_htab_kv *kv;
	struct ig_proctab_ent *e;

	for (;;) {
		if (s->keys && (e = ig_htab_sweep_next(s->keys, &s->key)))
			return e;
		kv = ig_htab_sweep_next(&t->procs, &s->proc);
		if (!kv)
			return NULL;
		s->keys = kv->val;
		ig_htab_sweep_start(s->keys, &s->key);
	}
}

/* The process the walk is at, none of whose entries is left, leaves the
 * table (ig_proctab_sweep_drop()). */
void ig_proctab_sweep_proc_gone(struct ig_proctab *t, struct ig_proctab_sweep *s);

/* Drops the entry ig_proctab_sweep_next() gave last, whose value the
 * owner has freed. */
static inline void ig_proctab_sweep_drop(struct ig_proctab *t,
					 struct ig_proctab_sweep *s)
{
	ig_htab_sweep_del(s->keys, &s->key);
	t->n--;
	if (!s->keys->n)
		ig_proctab_sweep_proc_gone(t, s);
}
/* Removes the entries for which goes(ctx, e) is true, asking once for
 * each, and frees their values (with val_free): the sweep above, inline
 * so that goes and val_free run as their owner's own calls.  It allocates
 * nothing. */
static inline void ig_proctab_drop_where(struct ig_proctab *t,
					 bool (*goes)(void *ctx, const struct ig_proctab_ent *e),
					 void *ctx, void (*val_free)(void *))
{
	struct ig_proctab_sweep s;
	struct ig_proctab_ent *e;

	ig_proctab_sweep_start(t, &s);
	while ((e = ig_proctab_sweep_next(t, &s))) {
		if (!goes(ctx, e))
			continue;
		val_free(e->val);
		ig_proctab_sweep_drop(t, &s);
	}
}

/* The age (@clock - used) of the entry of rank @rank (< t->n) from the
 * youngest, in *age.  0 or -ENOMEM. */
int ig_proctab_age_at(const struct ig_proctab *t, __u32 clock, size_t rank,
		      __u32 *age);

/* A (process, key) pair: sorted lists of them name the entries of
 * another table that stay (the code objects or addresses of kept stacks). */
struct ig_proctab_pair {
	__u32 tgid;
	__u64 key;
};
/* The order of the lists, for qsort and bsearch: by tgid, then key. */
int ig_proctab_pair_cmp(const void *a, const void *b);

/* Every entry, with val_free for the values; the table is then empty. */
void ig_proctab_free(struct ig_proctab *t, void (*val_free)(void *));

#endif
