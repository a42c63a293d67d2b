// SPDX-License-Identifier: GPL-2.0
/* The --html page's strips (user/views/html_strip.c): each state's time
 * stays exact through the bins' merges, a stretch older than the first
 * one seen moves the strip's start back, a wait for peers comes out of
 * busy time then unresolved, and the bins stay within their bound. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "views/html_strip.h"

static void span(struct ig_html_strip *st, enum ig_obs_kind k, int dev, uint64_t t0,
		 uint64_t t1)
{
	struct ig_obs_span s = { .kind = k, .device = dev, .t0 = t0, .t1 = t1,
				 .wait_until = t1 };

	ig_html_strip_span(st, &s);
}

static void gap(struct ig_html_strip *st, int dev, uint64_t t0, uint64_t t1)
{
	/* 3/4 storage, 1/4 lock */
	struct ig_obs_cause all[2] = { { "storage", (t1 - t0) * 3 / 4 },
				       { "lock", (t1 - t0) / 4 } };
	struct ig_obs_span s = { .kind = IG_OBS_IDLE, .device = dev, .t0 = t0, .t1 = t1,
				 .all = all, .nall = 2 };

	ig_html_strip_span(st, &s);
}

static double seconds(struct json_object *dev, const char *state)
{
	struct json_object *secs, *v;

	assert_true(json_object_object_get_ex(dev, "seconds", &secs));
	return json_object_object_get_ex(secs, state, &v) ? json_object_get_double(v) : 0;
}

static long long per_mille_sum(struct json_object *dev, const char *state)
{
	struct json_object *states, *a;
	long long sum = 0;
	size_t i;

	assert_true(json_object_object_get_ex(dev, "states", &states));
	if (!json_object_object_get_ex(states, state, &a))
		return 0;
	for (i = 0; i < json_object_array_length(a); i++)
		sum += json_object_get_int64(json_object_array_get_idx(a, i));
	return sum;
}

static uint64_t field(struct json_object *dev, const char *k)
{
	return (uint64_t)json_object_get_int64(json_object_object_get(dev, k));
}

/* 100 s of 10 ms rounds (3 busy, 4 idle, 3 unresolved), then one round
 * 1 s before the first: exact seconds, merged bins, the start moved. */
static void exact_through_merges(void **state)
{
	struct ig_html_strip *st = ig_html_strip_new();
	const uint64_t T = 1000000000000ull, R = 10000000;
	struct json_object *a, *d;
	uint64_t t, bins;

	(void)state;
	for (t = T; t < T + 100000000000ull; t += R) {
		span(st, IG_OBS_BUSY, 0, t, t + 3000000);
		gap(st, 0, t + 3000000, t + 7000000);
		span(st, IG_OBS_UNRES, 0, t + 7000000, t + R);
	}
	span(st, IG_OBS_BUSY, 0, T - 1000000000ull, T - 1000000000ull + R);
	a = ig_html_strip_json(st);
	assert_int_equal(json_object_array_length(a), 1);
	d = json_object_array_get_idx(a, 0);
	assert_float_equal(seconds(d, "busy"), 30.0 + 0.01, 1e-6);
	assert_float_equal(seconds(d, "idle:storage"), 30.0, 1e-6);
	assert_float_equal(seconds(d, "idle:lock"), 10.0, 1e-6);
	assert_float_equal(seconds(d, "unresolved"), 30.0, 1e-6);
	assert_float_equal(seconds(d, "idle"), 0.0, 1e-9);
	bins = field(d, "nbins");
	assert_true(bins <= IG_HTML_BINS && bins > IG_HTML_BINS / 2);
	assert_true(field(d, "t0_ns") <= T - 1000000000ull);
	assert_true(field(d, "t0_ns") + bins * field(d, "bin_ns") >= T + 100000000000ull);
	/* per mille of each bin, summed: the seconds, within one unit */
	assert_true(llabs(per_mille_sum(d, "idle:lock") -
			  (long long)(10e9 * 1000 / (double)field(d, "bin_ns"))) <= 1);
	json_object_put(a);
	ig_html_strip_free(st);
}

/* A wait for peers inside busy time, and one longer than the busy time
 * under it, which takes unresolved time next. */
static void peer_wait_carved(void **state)
{
	struct ig_html_strip *st = ig_html_strip_new();
	const uint64_t T = 5000000000ull;
	struct json_object *a, *d;

	(void)state;
	span(st, IG_OBS_BUSY, 1, T, T + 4000000);
	span(st, IG_OBS_UNRES, 1, T + 4000000, T + 10000000);
	span(st, IG_OBS_COLLECTIVE, 1, T + 1000000, T + 2000000);
	a = ig_html_strip_json(st);
	d = json_object_array_get_idx(a, 0);
	assert_float_equal(seconds(d, "peer_wait"), 0.001, 1e-9);
	assert_float_equal(seconds(d, "busy"), 0.003, 1e-9);
	assert_float_equal(seconds(d, "unresolved"), 0.006, 1e-9);
	json_object_put(a);
	ig_html_strip_free(st);
}

/* Many devices: the page keeps IG_HTML_BINS_ALL bins in all, and counts
 * the devices past IG_HTML_DEVS. */
static void bounded(void **state)
{
	struct ig_html_strip *st = ig_html_strip_new();
	const uint64_t T = 1000000000ull;
	struct json_object *a;
	uint64_t all = 0;
	size_t i;
	int dev;

	(void)state;
	for (dev = 0; dev < IG_HTML_DEVS + 3; dev++) {
		span(st, IG_OBS_BUSY, dev, T, T + 1000);
		span(st, IG_OBS_BUSY, dev, T + 4000000000ull, T + 4000001000ull);
	}
	a = ig_html_strip_json(st);
	assert_int_equal(json_object_array_length(a), IG_HTML_DEVS);
	assert_int_equal(ig_html_strip_dropped(st), 3);
	for (i = 0; i < json_object_array_length(a); i++)
		all += field(json_object_array_get_idx(a, i), "nbins");
	assert_true(all <= IG_HTML_BINS_ALL);
	json_object_put(a);
	ig_html_strip_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exact_through_merges),
		cmocka_unit_test(peer_wait_carved),
		cmocka_unit_test(bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
