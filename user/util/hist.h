/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Bounded distribution of durations (ns): exact while the sample is small,
 * a log-linear histogram (32 sub-buckets per power of two, ≤ 3% error)
 * after that, so percentiles cost constant memory on any run length.
 */
#ifndef IG_UTIL_HIST_H
#define IG_UTIL_HIST_H

#include <stdint.h>
#include <stddef.h>

#define IG_HIST_BUCKETS	1920
#define IG_HIST_EXACT	4096

struct ig_hist {
	uint64_t n;
	uint64_t sum;
	uint64_t max;
	uint64_t *exact;	/* first IG_HIST_EXACT values, NULL until used */
	uint32_t nexact;
	size_t capexact;
	uint64_t *buckets;	/* NULL until used */
};

void ig_hist_add(struct ig_hist *h, uint64_t v);
/* q in [0, 1]; nearest rank; 0 when empty. */
uint64_t ig_hist_quantile(const struct ig_hist *h, double q);
void ig_hist_free(struct ig_hist *h);
/* @dst (empty) becomes a copy of @src; -ENOMEM. */
int ig_hist_copy(struct ig_hist *dst, const struct ig_hist *src);
size_t ig_hist_bytes(const struct ig_hist *h);
/* Values <= @v: exact while every value is kept, else counted by bucket
 * (a bucket counts when its middle is <= @v: within 3% of @v). */
uint64_t ig_hist_count_le(const struct ig_hist *h, uint64_t v);

#endif
