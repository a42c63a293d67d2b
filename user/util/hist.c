// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util/hist.h"
#include "util/util.h"

static unsigned int bucket_of(uint64_t v)
{
	unsigned int e;

	if (v < 32)
		return (unsigned int)v;
	e = 63 - (unsigned int)__builtin_clzll(v);
	return (e - 4) * 32 + (unsigned int)((v >> (e - 5)) & 31);
}

/* middle of the bucket's value range */
static uint64_t bucket_mid(unsigned int b)
{
	unsigned int e, sub;

	if (b < 32)
		return b;
	e = b / 32 + 4;
	sub = b % 32;
	return ((32ULL + sub) << (e - 5)) + ((1ULL << (e - 5)) >> 1);
}

void ig_hist_add(struct ig_hist *h, uint64_t v)
{
	h->n++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
	if (h->nexact < IG_HIST_EXACT) {
		if (ig_grow_from((void **)&h->exact, &h->capexact, h->nexact,
				 sizeof(*h->exact), 64))
			h->exact[h->nexact++] = v;
	}
	if (!h->buckets)
		h->buckets = calloc(IG_HIST_BUCKETS, sizeof(*h->buckets));
	if (h->buckets)
		h->buckets[bucket_of(v)]++;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t ig_hist_quantile(const struct ig_hist *h, double q)
{
	uint64_t rank, seen = 0, v;
	unsigned int b;

	if (!h->n)
		return 0;
	rank = (uint64_t)ceil(q * (double)h->n);
	if (rank < 1)
		rank = 1;
	if (rank > h->n)
		rank = h->n;
	if (h->nexact == h->n) {
		uint64_t *tmp = malloc(h->n * sizeof(*tmp));

		if (tmp) {
			memcpy(tmp, h->exact, h->n * sizeof(*tmp));
			qsort(tmp, h->n, sizeof(*tmp), cmp_u64);
			v = tmp[rank - 1];
			free(tmp);
			return v;
		}
	}
	if (!h->buckets)
		return 0;
	for (b = 0; b < IG_HIST_BUCKETS; b++) {
		seen += h->buckets[b];
		if (seen >= rank) {
			v = bucket_mid(b);
			return v > h->max ? h->max : v;
		}
	}
	return h->max;
}

void ig_hist_free(struct ig_hist *h)
{
	free(h->exact);
	free(h->buckets);
	memset(h, 0, sizeof(*h));
}

int ig_hist_copy(struct ig_hist *dst, const struct ig_hist *src)
{
	*dst = *src;
	dst->exact = NULL;
	dst->buckets = NULL;
	if (src->exact) {
		dst->exact = malloc(src->capexact * sizeof(*dst->exact));
		if (!dst->exact)
			goto fail;
		memcpy(dst->exact, src->exact, src->nexact * sizeof(*dst->exact));
	}
	if (src->buckets) {
		dst->buckets = malloc(IG_HIST_BUCKETS * sizeof(*dst->buckets));
		if (!dst->buckets)
			goto fail;
		memcpy(dst->buckets, src->buckets,
		       IG_HIST_BUCKETS * sizeof(*dst->buckets));
	}
	return 0;
fail:
	ig_hist_free(dst);
	return -ENOMEM;
}

size_t ig_hist_bytes(const struct ig_hist *h)
{
	return (size_t)h->capexact * sizeof(uint64_t) +
	       (h->buckets ? IG_HIST_BUCKETS * sizeof(uint64_t) : 0);
}

uint64_t ig_hist_count_le(const struct ig_hist *h, uint64_t v)
{
	uint64_t n = 0;
	unsigned int b;
	uint32_t i;

	if (h->nexact == h->n) {
		for (i = 0; i < h->nexact; i++)
			n += h->exact[i] <= v;
		return n;
	}
	for (b = 0; h->buckets && b < IG_HIST_BUCKETS; b++)
		if (bucket_mid(b) <= v)
			n += h->buckets[b];
	return n;
}
