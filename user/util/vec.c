// SPDX-License-Identifier: GPL-2.0
/* A growable array of fixed-size elements; see vec.h. */
#include <stdlib.h>
#include <string.h>
#include "util/vec.h"

void *ig_vec_push(struct ig_vec *v)
{
	if (v->n == v->cap) {
		uint32_t cap = v->cap ? v->cap * 2 : 16;
		void *p = realloc(v->v, (size_t)cap * v->esz);

		if (!p)
			return NULL;
		v->v = p;
		v->cap = cap;
	}
	return (char *)v->v + (size_t)v->n++ * v->esz;
}

void ig_vec_drop_where(struct ig_vec *v, bool (*gone)(const void *, uint64_t),
		       uint64_t arg)
{
	uint32_t i, j = 0;

	for (i = 0; i < v->n; i++) {
		void *el = (char *)v->v + (size_t)i * v->esz;

		if (gone(el, arg))
			continue;
		if (i != j)
			memcpy((char *)v->v + (size_t)j * v->esz, el, v->esz);
		j++;
	}
	v->n = j;
	if (v->cap > 64 && v->n * 8 < v->cap) {
		void *p = realloc(v->v, (size_t)(v->cap / 4) * v->esz);

		if (p) {
			v->v = p;
			v->cap /= 4;
		}
	}
}

void ig_vec_fit(struct ig_vec *v)
{
	uint32_t cap = v->cap;
	void *p;

	while (cap > 64 && (uint64_t)v->n * 4 < cap)
		cap /= 2;
	if (cap == v->cap || !(p = realloc(v->v, (size_t)cap * v->esz)))
		return;
	v->v = p;
	v->cap = cap;
}
