// SPDX-License-Identifier: GPL-2.0
/* The longest gaps, kept in a min-heap by length; see gaplist.h. */
#include "engine/gaplist.h"
#include "util/util.h"

static uint64_t gap_len(const struct ig_gap *g)
{
	return g->t1 - g->t0;
}

static void heap_down(struct ig_gap *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct ig_gap t;

		if (l < n && gap_len(&h[l]) < gap_len(&h[m]))
			m = l;
		if (l + 1 < n && gap_len(&h[l + 1]) < gap_len(&h[m]))
			m = l + 1;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void heap_up(struct ig_gap *h, size_t i)
{
	while (i) {
		size_t p = (i - 1) / 2;
		struct ig_gap t;

		if (gap_len(&h[p]) <= gap_len(&h[i]))
			return;
		t = h[i];
		h[i] = h[p];
		h[p] = t;
		i = p;
	}
}

/* Keep the `limit` longest (all when limit < 0); count the rest. */
void ig_gaplist_add(struct ig_gaplist *l, const struct ig_gap *g)
{
	if (l->limit == 0) {
		l->omitted++;
		return;
	}
	if (l->limit > 0 && l->n == (size_t)l->limit) {
		l->omitted++;
		if (gap_len(g) <= gap_len(&l->g[0]))
			return;
		l->g[0] = *g;
		heap_down(l->g, l->n, 0);
		return;
	}
	if (!ig_grow_from((void **)&l->g, &l->cap, l->n, sizeof(*l->g), 64)) {
		l->omitted++;
		return;
	}
	l->g[l->n] = *g;
	heap_up(l->g, l->n++);
}

