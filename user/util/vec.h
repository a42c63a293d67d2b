/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A growable array of fixed-size elements, for the device evidence lists
 * that are appended to and filtered in place.  It shrinks again after a
 * burst, like the ring.
 */
#ifndef IG_UTIL_VEC_H
#define IG_UTIL_VEC_H

#include <stdbool.h>
#include <stdint.h>

struct ig_vec {
	void *v;
	uint32_t n, cap, esz;
};

/* Slot for a new last element (uninitialised), NULL on ENOMEM. */
void *ig_vec_push(struct ig_vec *v);
/* Keep the elements for which gone(el, arg) is false, in order. */
void ig_vec_drop_where(struct ig_vec *v, bool (*gone)(const void *, uint64_t),
		       uint64_t arg);
/* After elements were dropped: the array halved while it would stay at
 * least four times as large as its elements (64 slots at least), so that
 * one burst does not hold its memory for the rest of a long run. */
void ig_vec_fit(struct ig_vec *v);

#endif
