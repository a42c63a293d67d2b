// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include "util/htab.h"

int ig_htab_init(struct ig_htab *h, uint32_t cap_hint)
{
	uint32_t cap = 16;

	while (cap < cap_hint)
		cap <<= 1;
	h->keys = calloc(cap, sizeof(*h->keys));
	h->vals = calloc(cap, sizeof(*h->vals));
	if (!h->keys || !h->vals) {
		free(h->keys);
		free(h->vals);
		h->keys = NULL;
		h->vals = NULL;
		return -ENOMEM;
	}
	h->cap = cap;
	h->n = 0;
	return 0;
}

void ig_htab_free(struct ig_htab *h)
{
	free(h->keys);
	free(h->vals);
	h->keys = NULL;
	h->vals = NULL;
	h->cap = h->n = 0;
}

void ig_htab_clear(struct ig_htab *h)
{
	uint32_t i;

	for (i = 0; h->vals && i < h->cap; i++)
		h->vals[i] = NULL;
	h->n = 0;
}

static void put_nogrow(struct ig_htab *h, uint64_t key, void *val)
{
	uint32_t mask = h->cap - 1;
	uint32_t i = (uint32_t)ig_hash64(key) & mask;

	while (h->vals[i] && h->keys[i] != key)
		i = (i + 1) & mask;
	if (!h->vals[i])
		h->n++;
	h->keys[i] = key;
	h->vals[i] = val;
}

static int grow(struct ig_htab *h)
{
	struct ig_htab nh;
	uint32_t i;

	if (ig_htab_init(&nh, h->cap * 2))
		return -ENOMEM;
	for (i = 0; i < h->cap; i++)
		if (h->vals[i])
			put_nogrow(&nh, h->keys[i], h->vals[i]);
	ig_htab_free(h);
	*h = nh;
	return 0;
}

int ig_htab_put(struct ig_htab *h, uint64_t key, void *val)
{
	/* keep the load under 1/2: probe runs stay short */
	if ((h->n + 1) * 2 > h->cap && grow(h))
		return -ENOMEM;
	put_nogrow(h, key, val);
	return 0;
}

/* Empties slot @i, which holds an entry. */
static void del_at(struct ig_htab *h, uint32_t i)
{
	uint32_t mask = h->cap - 1, j;

	h->vals[i] = NULL;
	h->n--;
	/* backward shift: move later members of the run into the hole when
	 * their home slot does not lie cyclically in (hole, j] */
	j = i;
	for (;;) {
		uint32_t home;

		j = (j + 1) & mask;
		if (!h->vals[j])
			break;
		home = (uint32_t)ig_hash64(h->keys[j]) & mask;
		if (((j - home) & mask) < ((j - i) & mask))
			continue;
		h->keys[i] = h->keys[j];
		h->vals[i] = h->vals[j];
		h->vals[j] = NULL;
		i = j;
	}
}

void *ig_htab_del(struct ig_htab *h, uint64_t key)
{
	uint32_t mask = h->cap - 1;
	uint32_t i = (uint32_t)ig_hash64(key) & mask;
	void *old;

	while (h->vals[i] && h->keys[i] != key)
		i = (i + 1) & mask;
	if (!h->vals[i])
		return NULL;
	old = h->vals[i];
	del_at(h, i);
	return old;
}

void ig_htab_del_where(struct ig_htab *h,
		       bool (*goes)(uint64_t key, void *val, void *ctx),
		       void *ctx)
{
	uint32_t mask = h->cap - 1, start = 0, k = 0, i;

	if (!h->n)
		return;
	/*
	 * From an empty slot (the load stays under 1/2), once round: no run
	 * of entries wraps past it, so a backward shift brings into the slot
	 * just emptied only entries not yet seen.  That slot is looked at
	 * again; each entry is seen once.
	 */
	while (h->vals[start])
		start++;
	while (k < h->cap) {
		i = (start + k) & mask;
		if (h->vals[i] && goes(h->keys[i], h->vals[i], ctx))
			del_at(h, i);
		else
			k++;
	}
}

size_t ig_htab_bytes(const struct ig_htab *h)
{
	return (size_t)h->cap * (sizeof(*h->keys) + sizeof(*h->vals));
}
