// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/htab.h"

static size_t busy_words(uint32_t cap)
{
	return (cap + 63) / 64;
}

int ig_htab_init_ents(struct ig_htab *h, uint32_t cap_hint, size_t esize,
		      unsigned int load)
{
	uint32_t cap = 16;

	if (esize < sizeof(uint64_t) || esize % sizeof(uint64_t) ||
	    esize > UINT16_MAX || load < 2 || load > 3)
		return -EINVAL;
	while (cap < cap_hint)
		cap <<= 1;
	h->ents = calloc(cap, esize);
	h->busy = calloc(busy_words(cap), sizeof(*h->busy));
	if (!h->ents || !h->busy) {
		free(h->ents);
		free(h->busy);
		h->ents = NULL;
		h->busy = NULL;
		h->cap = h->n = 0;
		return -ENOMEM;
	}
	h->cap = cap;
	h->n = 0;
	h->esize = (uint16_t)esize;
	h->load = (uint8_t)load;
	return 0;
}

int ig_htab_init(struct ig_htab *h, uint32_t cap_hint)
{
	/* at most half full: probe runs stay short */
	return ig_htab_init_ents(h, cap_hint, sizeof(struct ig_htab_kv), 2);
}

void ig_htab_free(struct ig_htab *h)
{
	free(h->ents);
	free(h->busy);
	h->ents = NULL;
	h->busy = NULL;
	h->cap = h->n = 0;
}

void ig_htab_clear(struct ig_htab *h)
{
	if (h->busy)
		memset(h->busy, 0, busy_words(h->cap) * sizeof(*h->busy));
	h->n = 0;
}

static void busy_set(struct ig_htab *h, uint32_t i)
{
	h->busy[i >> 6] |= 1ULL << (i & 63);
}

static void busy_clear(struct ig_htab *h, uint32_t i)
{
	h->busy[i >> 6] &= ~(1ULL << (i & 63));
}

/* The slot of @key, or the empty one where it would go. */
static uint32_t find_slot(const struct ig_htab *h, uint64_t key)
{
	uint32_t mask = h->cap - 1;
	uint32_t i = (uint32_t)ig_hash64(key) & mask;

	while (ig_htab_busy(h, i) && ig_htab_key_at(h, i) != key)
		i = (i + 1) & mask;
	return i;
}

/* The entry of @key, a new one (zeroed but for the key) if there was none. */
static void *put_nogrow(struct ig_htab *h, uint64_t key)
{
	uint32_t i = find_slot(h, key);
	void *e = ig_htab_slot(h, i);

	if (!ig_htab_busy(h, i)) {
		memset(e, 0, h->esize);
		memcpy(e, &key, sizeof(key));
		busy_set(h, i);
		h->n++;
	}
	return e;
}

static int grow(struct ig_htab *h)
{
	struct ig_htab nh;
	uint32_t i;

	/* a zeroed table is an empty table of pointers */
	if (h->esize ? ig_htab_init_ents(&nh, h->cap * 2, h->esize, h->load) :
		       ig_htab_init(&nh, 16))
		return -ENOMEM;
	for (i = 0; i < h->cap; i++)
		if (ig_htab_busy(h, i))
			memcpy(put_nogrow(&nh, ig_htab_key_at(h, i)),
			       ig_htab_slot(h, i), h->esize);
	ig_htab_free(h);
	*h = nh;
	return 0;
}

/* The entry of @key, a new one if there was none; NULL on ENOMEM. */
static void *put(struct ig_htab *h, uint64_t key)
{
	/* keep the load at most load/4 */
	if ((uint64_t)(h->n + 1) * 4 > (uint64_t)h->cap * h->load && grow(h))
		return NULL;
	return put_nogrow(h, key);
}

int ig_htab_put(struct ig_htab *h, uint64_t key, void *val)
{
	struct ig_htab_kv *kv = put(h, key);

	if (!kv)
		return -ENOMEM;
	kv->val = val;
	return 0;
}

void *ig_htab_ent_add(struct ig_htab *h, uint64_t key)
{
	return put(h, key);
}

void ig_htab_del_slot(struct ig_htab *h, uint32_t i)
{
	uint32_t mask = h->cap - 1, j;

	busy_clear(h, i);
	h->n--;
	/* backward shift: move later members of the run into the hole when
	 * their home slot does not lie cyclically in (hole, j] */
	j = i;
	for (;;) {
		uint32_t home;

		j = (j + 1) & mask;
		if (!ig_htab_busy(h, j))
			break;
		home = (uint32_t)ig_hash64(ig_htab_key_at(h, j)) & mask;
		if (((j - home) & mask) < ((j - i) & mask))
			continue;
		memcpy(ig_htab_slot(h, i), ig_htab_slot(h, j), h->esize);
		busy_set(h, i);
		busy_clear(h, j);
		i = j;
	}
}

void *ig_htab_del(struct ig_htab *h, uint64_t key)
{
	uint32_t i;
	void *old;

	if (!h->cap)
		return NULL;
	i = find_slot(h, key);
	if (!ig_htab_busy(h, i))
		return NULL;
	old = ((struct ig_htab_kv *)ig_htab_slot(h, i))->val;
	ig_htab_del_slot(h, i);
	return old;
}

size_t ig_htab_bytes(const struct ig_htab *h)
{
	return (size_t)h->cap * h->esize +
	       busy_words(h->cap) * sizeof(*h->busy);
}
