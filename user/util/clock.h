/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A clock's time in nanoseconds.  CLOCK_MONOTONIC is the records' clock
 * (docs/design.md §6.1).
 */
#ifndef IG_UTIL_CLOCK_H
#define IG_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t ig_clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t ig_mono_ns(void)
{
	return ig_clock_ns(CLOCK_MONOTONIC);
}

#endif
