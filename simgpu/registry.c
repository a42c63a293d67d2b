// SPDX-License-Identifier: GPL-2.0
/*
 * Live handles, so that a stale or made-up CUstream/CUevent/... is answered
 * with CUDA_ERROR_INVALID_HANDLE instead of being dereferenced.  Open
 * addressing keyed by pointer; all calls hold sim.lock.
 */
#include <stdlib.h>

#include "simgpu.h"

#define TOMB ((uintptr_t)1)

struct slot {
	uintptr_t key;
	enum obj_type type;
};

static struct slot *tab;
static size_t cap, used;	/* used counts live keys and tombstones */

static size_t hash(uintptr_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k;
}

static struct slot *find(uintptr_t k)
{
	size_t i;

	if (!cap)
		return NULL;
	for (i = hash(k) & (cap - 1); tab[i].key; i = (i + 1) & (cap - 1))
		if (tab[i].key == k)
			return &tab[i];
	return NULL;
}

static void insert(uintptr_t k, enum obj_type t)
{
	size_t i = hash(k) & (cap - 1);

	while (tab[i].key && tab[i].key != TOMB)
		i = (i + 1) & (cap - 1);
	if (!tab[i].key)
		used++;
	tab[i].key = k;
	tab[i].type = t;
}

/* Rehash, dropping tombstones; size for four slots per live handle. */
static void grow(void)
{
	struct slot *old = tab;
	size_t i, live = 0, ocap = cap;

	for (i = 0; i < ocap; i++)
		if (old[i].key && old[i].key != TOMB)
			live++;
	for (cap = 256; cap < (live + 1) * 4; cap *= 2)
		;
	tab = calloc(cap, sizeof(*tab));
	if (!tab)
		abort();
	used = 0;
	for (i = 0; i < ocap; i++)
		if (old[i].key && old[i].key != TOMB)
			insert(old[i].key, old[i].type);
	free(old);
}

void reg_add(const void *p, enum obj_type t)
{
	if ((used + 1) * 2 > cap)
		grow();
	insert((uintptr_t)p, t);
}

void reg_del(const void *p)
{
	struct slot *s = find((uintptr_t)p);

	if (s)
		s->key = TOMB;
}

bool reg_has(const void *p, enum obj_type t)
{
	struct slot *s;

	if ((uintptr_t)p <= TOMB)
		return false;
	s = find((uintptr_t)p);
	return s && s->type == t;
}

void reg_reset(void)
{
	tab = NULL;
	cap = used = 0;
}
