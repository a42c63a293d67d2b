/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The list of the longest gaps for the report: a min-heap by length, so a
 * bounded list drops the shortest and counts what it dropped.
 */
#ifndef IG_ENGINE_GAPLIST_H
#define IG_ENGINE_GAPLIST_H

#include <stddef.h>
#include <stdint.h>

struct ig_gap {
	uint64_t t0, t1;
	uint32_t tid, tgid;
	int32_t device;
	uint32_t pad;
};

/* Keeps the longest gaps: unbounded when limit < 0. */
struct ig_gaplist {
	struct ig_gap *g;
	size_t n, cap;
	long limit;
	uint64_t omitted;
};

void ig_gaplist_add(struct ig_gaplist *l, const struct ig_gap *g);

#endif
