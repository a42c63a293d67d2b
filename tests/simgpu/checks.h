/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every simulator test program shares: checks that count failures
 * (the program exits non-zero when one failed) and the monotonic clock,
 * the clock of the simulator's trace.
 */
#ifndef SIMGPU_CHECKS_H
#define SIMGPU_CHECKS_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

static int failures;

#define CHECK(cond, ...)                                                  \
	do {                                                              \
		if (!(cond)) {                                            \
			failures++;                                       \
			printf("# %s:%d: check failed: %s: ", __FILE__,   \
			       __LINE__, #cond);                          \
			printf(__VA_ARGS__);                              \
			printf("\n");                                     \
		}                                                         \
	} while (0)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
