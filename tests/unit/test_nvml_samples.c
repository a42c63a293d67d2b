// SPDX-License-Identifier: GPL-2.0
/*
 * NVML's utilization samples as windows (user/host/nvml_samples.c): a
 * run of samples read over several reads, each read with its own offset
 * between the wall clock and CLOCK_MONOTONIC (a read preempted between
 * its clock reads is off by milliseconds), makes windows each starting
 * exactly where the one before it ended, so that a run of 0% windows
 * (the head, docs/design.md §4.12) does not break at a read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "host/nvml_samples.h"

#define MS 1000000LL
#define P_US 166667ULL			/* NVML's 1/6 s */
#define T0_US 1700000000000000ULL	/* a wall-clock time, µs */

struct got {
	struct ig_nvml_win w[256];
	unsigned int dev[256];
	unsigned int n;
};

static void take(void *ctx, unsigned int dev, const struct ig_nvml_win *w)
{
	struct got *g = ctx;

	assert_true(g->n < 256);
	g->dev[g->n] = dev;
	g->w[g->n++] = *w;
}

/* samples [from, to) of the run, ends at T0_US + (k+1) * P_US, each
 * @pct busy, newest first as NVML may give them */
static unsigned int samples(struct ig_nvml_util_sample *v, unsigned int from,
			    unsigned int to, unsigned int pct)
{
	unsigned int k, n = 0;

	for (k = to; k-- > from;)
		v[n++] = (struct ig_nvml_util_sample){ T0_US + (k + 1) * P_US, pct };
	return n;
}

static void test_reads_touch(void **state)
{
	/* three reads, their offsets 3 ms apart as a preempted read makes */
	static const int64_t off[] = { 1000 * MS, 1003 * MS, 997 * MS };
	struct ig_nvml_sampling st = { 0 };
	struct ig_nvml_util_sample v[16];
	struct got g = { .n = 0 };
	unsigned int i, n;

	(void)state;
	for (i = 0; i < 3; i++) {
		n = samples(v, i * 6, i * 6 + 6, 0);
		ig_nvml_sample_windows(&st, v, n, off[i], 2, take, &g);
	}
	/* the first sample ever seen only starts the next */
	assert_int_equal(g.n, 17);
	for (i = 0; i < g.n; i++) {
		assert_int_equal(g.dev[i], 2);
		assert_int_equal(g.w[i].busy_ppm, 0);
		assert_int_equal(g.w[i].kind, IG_NVML_SAMPLES);
		assert_int_equal(g.w[i].quant_ppm, 10000);
		assert_true(g.w[i].t1 > g.w[i].t0);
		if (i)	/* one run: each starts where the one before ended */
			assert_true(g.w[i].t0 == g.w[i - 1].t1);
	}
	/* each end is its sample's, on the offset of its own read */
	assert_true(g.w[0].t0 == (T0_US + P_US) * 1000 - (uint64_t)off[0]);
	assert_true(g.w[16].t1 == (T0_US + 18 * P_US) * 1000 - (uint64_t)off[2]);
}

static void test_seen_and_far(void **state)
{
	struct ig_nvml_sampling st = { 0 };
	struct ig_nvml_util_sample v[16];
	struct got g = { .n = 0 };
	unsigned int n;

	(void)state;
	n = samples(v, 0, 4, 7);
	assert_int_equal(ig_nvml_sample_windows(&st, v, n, 0, 0, take, &g), 3);
	assert_int_equal(g.w[0].busy_ppm, 70000);
	/* the same samples again, and older: nothing new */
	n = samples(v, 0, 4, 7);
	assert_int_equal(ig_nvml_sample_windows(&st, v, n, 0, 0, take, &g), 0);
	/* after 3 s without a sample: the next only starts a new run */
	n = samples(v, 22, 24, 0);
	assert_int_equal(ig_nvml_sample_windows(&st, v, n, 0, 0, take, &g), 1);
	assert_int_equal(g.n, 4);
	assert_true(g.w[3].t0 == (T0_US + 23 * P_US) * 1000);
	/* a value no percentage has: no window, but the run goes on */
	n = samples(v, 24, 25, 250);
	assert_int_equal(ig_nvml_sample_windows(&st, v, n, 0, 0, take, &g), 0);
	n = samples(v, 25, 26, 0);
	assert_int_equal(ig_nvml_sample_windows(&st, v, n, 0, 0, take, &g), 1);
	assert_true(g.w[4].t0 == (T0_US + 25 * P_US) * 1000);
}

static void test_wall_offset(void **state)
{
	(void)state;
	/* the wall clock is past the time since boot */
	assert_true(ig_nvml_wall_offset() > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_touch),
		cmocka_unit_test(test_seen_and_far),
		cmocka_unit_test(test_wall_offset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
