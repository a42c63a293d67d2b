// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "util/ring.h"

static int resize(struct ig_ring *r, uint32_t cap)
{
	unsigned char *nb = malloc((size_t)cap * r->esz);
	uint32_t first;

	if (!nb)
		return -1;
	if (r->len) {
		first = r->cap - r->head;
		if (first > r->len)
			first = r->len;
		memcpy(nb, r->buf + (size_t)r->head * r->esz,
		       (size_t)first * r->esz);
		memcpy(nb + (size_t)first * r->esz, r->buf,
		       (size_t)(r->len - first) * r->esz);
	}
	free(r->buf);
	r->buf = nb;
	r->cap = cap;
	r->head = 0;
	return 0;
}

int ig_ring_grow(struct ig_ring *r)
{
	return resize(r, r->cap ? r->cap * 2 : 16);
}

void ig_ring_trim(struct ig_ring *r)
{
	if (!r->len) {
		free(r->buf);
		r->buf = NULL;
		r->cap = r->head = 0;
		return;
	}
	if (r->cap > 64 && r->len * 8 < r->cap)
		resize(r, r->cap / 4);
}

void ig_ring_free(struct ig_ring *r)
{
	free(r->buf);
	ig_ring_init(r, r->esz);
}
