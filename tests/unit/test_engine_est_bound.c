// SPDX-License-Identifier: GPL-2.0
/* The estimate's bounds (engine/estimate/est_bound.c): the simplex method on small
 * packing programs, the largest durations that marks which found the
 * queue ended allow, and their check on marks held out. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "engine/estimate/est_bound.h"

#define US	1000ULL
#define MS	1000000ULL
#define T0	(1000 * MS)

/* max 3x + 2y, x + y <= 4, x + 3y <= 6, x <= 3: x = 3, y = 1, 11 */
static void test_lp_small(void **state)
{
	const double a[] = { 1, 1, 1, 3, 1, 0 }, b[] = { 4, 6, 3 }, c[] = { 3, 2 };
	double x[2], opt;

	(void)state;
	assert_int_equal(ig_est_lp_max(a, b, c, 3, 2, x, &opt), 0);
	assert_true(fabs(x[0] - 3) < 1e-9 && fabs(x[1] - 1) < 1e-9);
	assert_true(fabs(opt - 11) < 1e-9);
}

/* Degenerate rows (b = 0) and a variable no row bounds. */
static void test_lp_edges(void **state)
{
	const double a[] = { 1, 1, 0, 1, 1, 0 }, b[] = { 0, 5, 2 }, c[] = { 1, 1 };
	const double a2[] = { 0, 1 }, b2[] = { 1 }, c2[] = { 1, 0 };
	const double neg[] = { -1 };
	double x[2], opt;

	(void)state;
	assert_int_equal(ig_est_lp_max(a, b, c, 3, 2, x, &opt), 0);
	assert_true(fabs(opt) < 1e-9 && fabs(x[0]) < 1e-9 && fabs(x[1]) < 1e-9);
	assert_int_equal(ig_est_lp_max(a2, b2, c2, 1, 2, x, &opt), 1);
	assert_int_equal(ig_est_lp_max(a2, neg, c2, 1, 2, x, &opt), -1);
}

struct job {
	struct est_launch l[4096];
	struct est_mark m[512];
	uint32_t nl, nm;
};

/* @steps steps of @n launches @gap apart (signature 0, or 0 and 1
 * alternating when @two), then a mark entered @host after the last launch
 * and returning at once; step s's host time is @host + (s % 7) * 10 us
 * except for @tight steps (every 9th), which return @host after it. */
static void make(struct job *j, uint32_t steps, uint32_t n, uint64_t gap,
		 uint64_t host, int two)
{
	uint64_t t = T0;
	uint32_t s, i;

	j->nl = j->nm = 0;
	for (s = 0; s < steps; s++) {
		for (i = 0; i < n; i++) {
			j->l[j->nl].t = t;
			j->l[j->nl].sig = two ? (i + s) % 2 : 0;
			j->nl++;
			t += gap;
		}
		t += host - gap + (s % 9 ? (s % 7) * 10 * US : 0);
		j->m[j->nm].t_in = t;
		j->m[j->nm].t_end = t;
		j->m[j->nm].waited = 0;
		j->m[j->nm].fold = j->nm % 5;
		j->nm++;
		t += 300 * US;
	}
}

/* One signature: the bound is the tightest mark's time after its chain's
 * last launch, and the held-out check finds no overshoot where that mark
 * recurs in every fold. */
static void test_bound_one(void **state)
{
	static struct job j;
	struct est_model md;
	double w[2] = { 1, 0 }, err[512];
	uint32_t nerr = 0, f;

	(void)state;
	make(&j, 90, 10, 100 * US, 50 * US, 0);
	assert_int_equal(ig_est_bound_fit(j.l, j.nl, j.m, j.nm, 1, w, 1e9, -1, &md), 0);
	assert_true(fabs(md.d[0] - 50.0 * US) < 1);
	for (f = 0; f < 5; f++) {
		assert_int_equal(ig_est_bound_fit(j.l, j.nl, j.m, j.nm, 1, w, 1e9,
						  (int)f, &md), 0);
		ig_est_bound_check(&md, j.l, j.nl, j.m, j.nm, (int)f, err, &nerr);
	}
	assert_int_equal(nerr, 90);
	for (f = 0; f < nerr; f++)
		assert_true(err[f] < 0.01);
}

/* A chain's earlier launches bind where they come faster than the
 * bound: 10 launches 1 us apart, the mark 20 us after the last: each
 * duration at most (20 + 9) / 10 us. */
static void test_bound_chain(void **state)
{
	static struct job j;
	struct est_model md;
	double w[1] = { 1 };

	(void)state;
	make(&j, 9, 10, 1 * US, 20 * US, 0);
	assert_int_equal(ig_est_bound_fit(j.l, j.nl, j.m, j.nm, 1, w, 1e9, -1, &md), 0);
	assert_true(fabs(md.d[0] - 2.9 * US) < 1);
}

/* Two signatures: the program puts the most busy time where the weights
 * say, within every mark; a cap bounds a signature no mark covers. */
static void test_bound_two(void **state)
{
	static struct job j;
	struct est_model md;
	double w[3] = { 1, 3, 5 }, busy;
	uint32_t k;

	(void)state;
	make(&j, 45, 4, 100 * US, 50 * US, 1);
	assert_int_equal(ig_est_bound_fit(j.l, j.nl, j.m, j.nm, 3, w, 1e6, -1, &md), 0);
	/* every mark: the replay with md ends by its return */
	for (k = 0; k < j.nm; k++) {
		double err[1];
		uint32_t n = 0;
		struct est_mark one = j.m[k];

		one.fold = 0;
		ig_est_bound_check(&md, j.l, j.nl, &one, 1, 0, err, &n);
		assert_int_equal(n, 1);
		assert_true(err[0] < 0.01);
	}
	busy = md.d[0] + 3 * md.d[1];
	assert_true(md.d[1] > 0 && busy > 0);
	assert_true(fabs(md.d[2] - 1e6) < 1e-3);	/* no launch: the cap */
	/* the last launch alternates: each duration is at most 50 us */
	assert_true(md.d[0] <= 50.0 * US + 1 && md.d[1] <= 50.0 * US + 1);
}

/* Durations that vary: one fold's marks are far tighter than the rest;
 * held out, the others' bound overshoots them. */
static void test_bound_check_overshoot(void **state)
{
	static struct job j;
	struct est_model md;
	double w[1] = { 1 }, err[512];
	uint32_t nerr = 0, k, over = 0;

	(void)state;
	make(&j, 50, 10, 100 * US, 200 * US, 0);
	for (k = 0; k < j.nm; k += 5)	/* fold 0: 20 us after the last */
		j.m[k].t_end = j.m[k].t_in = j.l[10 * k + 9].t + 20 * US;
	assert_int_equal(ig_est_bound_fit(j.l, j.nl, j.m, j.nm, 1, w, 1e9, 0, &md), 0);
	ig_est_bound_check(&md, j.l, j.nl, j.m, j.nm, 0, err, &nerr);
	assert_int_equal(nerr, 10);
	for (k = 0; k < nerr; k++)
		over += err[k] > 100;
	assert_int_equal(over, 10);
}

/* Many marks, each after a launch or two of three signatures (a query
 * after every op): the program settles with a bounded tableau, and the
 * replay with its durations ends by every mark. */
static void test_bound_many(void **state)
{
	uint32_t nm = 20000, k, nl = 0, nerr = 0, f;
	struct est_launch *l = calloc(2 * nm, sizeof(*l));
	struct est_mark *m = calloc(nm, sizeof(*m));
	double *err = calloc(nm, sizeof(*err)), w[3] = { 1, 1, 1 };
	struct est_model md;
	uint64_t t = T0;

	(void)state;
	assert_non_null(l);
	assert_non_null(m);
	assert_non_null(err);
	for (k = 0; k < nm; k++) {
		uint32_t i, n = 1 + k % 2;

		for (i = 0; i < n; i++) {
			l[nl].t = t;
			l[nl++].sig = (k * 7 + i) % 3;
			t += 5 * US;
		}
		/* the mark (k * 13) % 97 us after the last launch, at least 3 */
		m[k].t_in = m[k].t_end = t - 5 * US + (3 + (k * 13) % 97) * US;
		m[k].fold = k % 5;
		t = m[k].t_end + 20 * US;
	}
	assert_int_equal(ig_est_bound_fit(l, nl, m, nm, 3, w, 1e9, -1, &md), 0);
	for (f = 0; f < 5; f++)
		ig_est_bound_check(&md, l, nl, m, nm, (int)f, err, &nerr);
	assert_int_equal(nerr, nm);
	for (k = 0; k < nerr; k++)
		assert_true(err[k] < 0.02);	/* within VIOL_NS */
	for (f = 0; f < 3; f++)
		assert_true(md.d[f] >= 3.0 * US - 1 && md.d[f] <= 8.0 * US);
	free(l);
	free(m);
	free(err);
}

/* The point: where the most busy time is reached with one duration at 0
 * (a copy before each step's kernels takes all the slack), every
 * signature is at the same fraction of its own range, the busy time half
 * the largest, and the replay still ends by every mark. */
static void test_bound_point(void **state)
{
	static struct job j;
	struct est_model hi, pt;
	double w[2], err[512];
	uint32_t k, nerr = 0;

	(void)state;
	make(&j, 45, 4, 100 * US, 50 * US, 0);
	for (k = 0; k < j.nl; k += 4)
		j.l[k].sig = 1;		/* each step: 1 copy, 3 kernels */
	w[0] = 3 * 45;
	w[1] = 45;
	assert_int_equal(ig_est_bound_fit(j.l, j.nl, j.m, j.nm, 2, w, 1e9, -1, &hi), 0);
	assert_int_equal(ig_est_bound_point(j.l, j.nl, j.m, j.nm, 2, w, 1e9, &hi, &pt), 0);
	assert_true(pt.d[0] > 0 && pt.d[1] > 0);
	assert_true(fabs(w[0] * pt.d[0] + w[1] * pt.d[1] -
			 (w[0] * hi.d[0] + w[1] * hi.d[1]) / 2) < 1);
	/* the same fraction of each one's own largest: 50 us for a kernel
	 * (the last launch), 350 us for the copy (its chain, kernels at 0) */
	assert_true(fabs(pt.d[0] / (50.0 * US) - pt.d[1] / (350.0 * US)) < 1e-6);
	for (k = 0; k < 5; k++)
		ig_est_bound_check(&pt, j.l, j.nl, j.m, j.nm, (int)k, err, &nerr);
	assert_int_equal(nerr, 45);
	for (k = 0; k < nerr; k++)
		assert_true(err[k] < 0.01);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lp_small),
		cmocka_unit_test(test_lp_edges),
		cmocka_unit_test(test_bound_one),
		cmocka_unit_test(test_bound_chain),
		cmocka_unit_test(test_bound_two),
		cmocka_unit_test(test_bound_check_overshoot),
		cmocka_unit_test(test_bound_many),
		cmocka_unit_test(test_bound_point),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
