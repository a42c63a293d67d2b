// SPDX-License-Identifier: GPL-2.0
/*
 * What the outputs ask of the collectives (docs/design.md §4.9, §7.4):
 * the rank of a process, a device's peer wait and time in collectives,
 * the stragglers, latest first.  Read once the records are in; peers.c
 * keeps what they read.
 */
#include <stdlib.h>
#include "engine/peers/peers.h"

int32_t ig_peers_rank_of(const struct ig_engine *e, uint32_t pid)
{
	uint32_t i;

	for (i = 0; e->peers && i < e->peers->nranks; i++)
		if (e->peers->ranks[i].pid == pid)
			return e->peers->ranks[i].rank;
	return -1;
}

void ig_peers_dev(const struct ig_engine *e, int ordinal, uint64_t *wait_ns,
		  uint64_t *coll_ns, int32_t *rank)
{
	uint32_t i;

	*wait_ns = *coll_ns = 0;
	*rank = -1;
	for (i = 0; e->peers && i < e->peers->ndevs; i++) {
		const struct peers_dev *d = &e->peers->devs[i];

		if (d->ordinal != ordinal)
			continue;
		*wait_ns = ig_peers_union_ns(&d->wait);
		*coll_ns = ig_peers_union_ns(&d->coll);
		*rank = d->rank >= 0 ? d->rank : -1;
	}
}

static int by_latest(const void *a, const void *b)
{
	const struct peers_rank *x = *(const struct peers_rank *const *)a;
	const struct peers_rank *y = *(const struct peers_rank *const *)b;

	if (x->late_ns != y->late_ns)
		return x->late_ns > y->late_ns ? -1 : 1;
	return x->last_late > y->last_late ? -1 : x->last_late < y->last_late;
}

size_t ig_peers_stragglers(const struct ig_engine *e, const struct peers_rank ***out)
{
	const struct peers_rank **v;
	uint64_t coll = 0;
	size_t n = 0;
	uint32_t i;

	*out = NULL;
	if (!e->peers || !e->peers->nranks)
		return 0;
	v = calloc(e->peers->nranks, sizeof(*v));
	if (!v)
		return 0;
	for (i = 0; i < e->peers->nranks; i++)
		coll += e->peers->ranks[i].coll_ns;
	for (i = 0; i < e->peers->nranks; i++)
		if (e->peers->ranks[i].late_ns &&
		    e->peers->ranks[i].late_ns >= IG_PEERS_LATE_SHARE * coll / e->peers->nranks)
			v[n++] = &e->peers->ranks[i];
	qsort(v, n, sizeof(*v), by_latest);
	*out = v;
	return n;
}
