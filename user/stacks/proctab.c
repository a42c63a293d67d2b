// SPDX-License-Identifier: GPL-2.0
/* A table from (process, key) to an entry; see proctab.h. */
#include <errno.h>
#include <stdlib.h>
#include "stacks/proctab.h"

/* The keys of process @tgid, a new table when it had none. */
static struct ig_htab *keys_new(struct ig_proctab *t, __u32 tgid)
{
	struct ig_htab *keys = ig_htab_get(&t->procs, tgid);

	if (keys)
		return keys;
	if (!t->procs.cap && ig_htab_init(&t->procs, 16))
		return NULL;
	keys = malloc(sizeof(*keys));
	if (!keys)
		return NULL;
	/* the entries in place, at most three quarters of the slots used:
	 * 32 to 64 bytes an entry, with no allocation of its own */
	if (ig_htab_init_ents(keys, 16, sizeof(struct ig_proctab_ent), 3)) {
		free(keys);
		return NULL;
	}
	if (ig_htab_put(&t->procs, tgid, keys)) {
		ig_htab_free(keys);
		free(keys);
		return NULL;
	}
	return keys;
}

struct ig_proctab_ent *ig_proctab_add(struct ig_proctab *t, __u32 tgid,
				      __u64 key)
{
	struct ig_htab *keys = keys_new(t, tgid);
	struct ig_proctab_ent *e;

	if (!keys)
		return NULL;
	e = ig_htab_ent_add(keys, key);
	if (!e) {
		if (!keys->n) {
			ig_htab_del(&t->procs, tgid);
			ig_htab_free(keys);
			free(keys);
		}
		return NULL;
	}
	e->tgid = tgid;
	t->n++;
	return e;
}

struct ig_proctab_ent *ig_proctab_set(struct ig_proctab *t, __u32 tgid,
				      __u64 key, void *val,
				      void (*val_free)(void *))
{
	struct ig_proctab_ent *e = ig_proctab_get(t, tgid, key);

	if (e) {
		val_free(e->val);
	} else if (!(e = ig_proctab_add(t, tgid, key))) {
		val_free(val);
		return NULL;
	}
	e->val = val;
	return e;
}

void ig_proctab_sweep_proc_gone(struct ig_proctab *t, struct ig_proctab_sweep *s)
{
	ig_htab_sweep_del(&t->procs, &s->proc);
	ig_htab_free(s->keys);
	free(s->keys);
	s->keys = NULL;
}

static int by_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

int ig_proctab_age_at(const struct ig_proctab *t, __u32 clock, size_t rank,
		      __u32 *age)
{
	struct ig_proctab_it it = { 0 };
	const struct ig_proctab_ent *e;
	__u32 *ages = malloc(t->n * sizeof(*ages));
	size_t k = 0;

	if (!ages)
		return -ENOMEM;
	while ((e = ig_proctab_next(t, &it)))
		ages[k++] = clock - e->used;
	qsort(ages, k, sizeof(*ages), by_u32);
	*age = ages[rank];
	free(ages);
	return 0;
}

int ig_proctab_pair_cmp(const void *a, const void *b)
{
	const struct ig_proctab_pair *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static bool every(void *ctx, const struct ig_proctab_ent *e)
{
	(void)ctx;
	(void)e;
	return true;
}

void ig_proctab_free(struct ig_proctab *t, void (*val_free)(void *))
{
	ig_proctab_drop_where(t, every, NULL, val_free);
	ig_htab_free(&t->procs);
}
