// SPDX-License-Identifier: GPL-2.0
/* The duration model (engine/estimate/est_fit.c): fitting durations per launch
 * signature to the ends of queue that waiting syncs proved, the held-out
 * prediction, the replay of the queue, and the bounds of its interval. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "engine/estimate/est_fit.h"

#define US	1000ULL
#define MS	1000000ULL
#define T0	(1000 * MS)


struct job {
	struct est_launch l[4096];
	struct est_mark m[512];
	uint32_t nl, nm;
};

/* @steps steps: per step, kernels of signature 0 (@d0) and 1 (@d1)
 * alternating, @n of them launched @gap apart, then a sync that waits
 * for the queue (the true end) when @wait, else entered @host later.
 * The queue is simulated exactly: start = max(launch + lat, prev end). */
static void make(struct job *j, uint32_t steps, uint32_t n, uint64_t gap,
		 uint64_t d0, uint64_t d1, uint64_t lat, uint64_t noise)
{
	uint64_t t = T0, e = 0;
	uint32_t s, i;

	j->nl = j->nm = 0;
	for (s = 0; s < steps; s++) {
		for (i = 0; i < n; i++) {
			uint64_t d = (i + s) % 2 ? d1 : d0, st;

			j->l[j->nl].t = t;
			j->l[j->nl].sig = (i + s) % 2;
			j->nl++;
			st = t + lat > e ? t + lat : e;
			e = st + d;
			t += gap;
		}
		j->m[j->nm].t_in = t;
		j->m[j->nm].t_end = (e > t ? e : t) + (noise ? (s * 7919) % noise : 0);
		j->m[j->nm].waited = e > t;
		j->m[j->nm].fold = j->nm % 5;
		j->nm++;
		t = (e > t ? e : t) + 300 * US;	/* host work after the sync */
	}
}

/* Two signatures in varying order: both durations come out. */
static void test_two_signatures(void **state)
{
	static struct job j;
	struct est_model md;

	(void)state;
	make(&j, 100, 3, 20 * US, 500 * US, 100 * US, 5 * US, 0);
	assert_int_equal(ig_est_fit(j.l, j.nl, j.m, j.nm, 2, -1, -1, &md), 0);
	assert_true(fabs(md.d[0] - 500e3) < 5e3);
	assert_true(fabs(md.d[1] - 100e3) < 5e3);
}

/* Held out of the fit, waiting syncs are predicted to within the
 * noise added to their ends. */
static void test_held_out(void **state)
{
	static struct job j;
	struct est_model md;
	double err[512], rel[512];
	uint32_t ne = 0, nr = 0, f, i;

	(void)state;
	make(&j, 200, 4, 30 * US, 400 * US, 200 * US, 5 * US, 20 * US);
	for (f = 0; f < 5; f++) {
		assert_int_equal(ig_est_fit(j.l, j.nl, j.m, j.nm, 2, (int)f, -1, &md), 0);
		ig_est_predict(&md, j.l, j.nl, j.m, j.nm, (int)f, err, &ne, rel, &nr);
	}
	assert_int_equal(ne, 200);
	for (i = 0; i < ne; i++)
		assert_true(err[i] < 40.0);	/* us */
}

/* A few syncs that waited far longer (a preempted driver) do not move
 * the fit. */
static void test_outliers(void **state)
{
	static struct job j;
	struct est_model md;
	uint32_t i;

	(void)state;
	make(&j, 100, 2, 10 * US, 300 * US, 300 * US, 5 * US, 0);
	for (i = 0; i < j.nm; i += 10)
		j.m[i].t_end += 5 * MS;
	assert_int_equal(ig_est_fit(j.l, j.nl, j.m, j.nm, 2, -1, -1, &md), 0);
	assert_true(fabs(md.d[0] - 300e3) < 10e3);
	assert_true(fabs(md.d[1] - 300e3) < 10e3);
}

/* The replay: busy intervals in order, disjoint, each at least its
 * launch, and none past the end a sync proved. */
static void test_replay(void **state)
{
	static struct job j;
	static struct est_ival k[4096];
	struct est_model md;
	uint32_t nk = 0, i, mi = 0;

	(void)state;
	make(&j, 50, 3, 50 * US, 100 * US, 20 * US, 5 * US, 0);
	assert_int_equal(ig_est_fit(j.l, j.nl, j.m, j.nm, 2, -1, -1, &md), 0);
	ig_est_replay(&md, j.l, j.nl, j.m, j.nm, k, &nk);
	assert_true(nk > 0 && nk <= j.nl);
	for (i = 0; i < nk; i++) {
		assert_true(k[i].t1 >= k[i].t0);
		if (i)
			assert_true(k[i].t0 >= k[i - 1].t1);
		while (mi < j.nm && j.m[mi].t_end < k[i].t0)
			mi++;
		if (mi < j.nm && j.m[mi].t_in > k[i].t0)
			assert_true(k[i].t1 <= j.m[mi].t_end);
	}
}

/* The same mix before every sync (one of each signature): the syncs pin
 * the sum only.  The plain fit keeps both near their start; the variant
 * that pulls one to 0 gives the other the whole, and both still predict
 * every sync. */
static void test_variant(void **state)
{
	static struct job j;
	struct est_model md, v0;
	double err[512], rel[512];
	uint32_t ne = 0, nr = 0, i;

	(void)state;
	j.nl = j.nm = 0;
	for (i = 0; i < 50; i++) {
		uint64_t t = T0 + i * 5 * MS;

		j.l[j.nl++] = (struct est_launch){ .t = t, .sig = 0 };
		j.l[j.nl++] = (struct est_launch){ .t = t + 10 * US, .sig = 1 };
		j.m[j.nm++] = (struct est_mark){ .t_in = t + 20 * US,
						 .t_end = t + 600 * US,
						 .waited = 1, .fold = i % 5 };
	}
	assert_int_equal(ig_est_fit(j.l, j.nl, j.m, j.nm, 2, -1, -1, &md), 0);
	assert_int_equal(ig_est_fit(j.l, j.nl, j.m, j.nm, 2, -1, 0, &v0), 0);
	assert_true(fabs(md.lat + md.d[0] + md.d[1] - 600e3) < 5e3);
	assert_true(v0.d[0] < 0.1 * v0.d[1]);
	/* the first kernel done at once, the second alone from its launch */
	assert_true(fabs(v0.lat + v0.d[1] - 590e3) < 5e3);
	ig_est_predict(&v0, j.l, j.nl, j.m, j.nm, 0, err, &ne, rel, &nr);
	for (i = 0; i < ne; i++)
		assert_true(err[i] < 5.0);	/* us */
}

/* Each step's first launch (a copy) starts just before the next launch's
 * entry, a latency that varies per step (the call stages its data before
 * it queues the op), and every step has the same mix: the syncs cannot
 * tell the latency from the durations.  The plain fit keeps the latency
 * near 0 and misses that idle; the late variant starts each head at its
 * cap, the next submission's entry, and so covers it while still
 * predicting the syncs.  What busy time may hide covers the drained
 * points' delay. */
static void test_late(void **state)
{
	static struct job j;
	static struct est_ival k[4096];
	struct est_model md, late;
	double err[512], rel[512], idle_plain = 0, idle_late = 0, truth = 0, h;
	uint32_t ne = 0, nr = 0, nk, i, f, x;

	(void)state;
	j.nl = j.nm = 0;
	for (i = 0; i < 100; i++) {
		uint64_t t = T0 + i * 5 * MS, cap = (20 + (i % 7) * 15) * US;
		uint64_t start = t + cap - 2 * US;

		j.l[j.nl++] = (struct est_launch){ .t = t, .sig = 0 };
		j.l[j.nl++] = (struct est_launch){ .t = t + cap, .sig = 1 };
		j.m[j.nm++] = (struct est_mark){ .t_in = t + cap + 10 * US,
						 .t_end = start + 540 * US + 30 * US,
						 .waited = 1, .fold = i % 5 };
		truth += (double)(start - t);
	}
	assert_int_equal(ig_est_fit(j.l, j.nl, j.m, j.nm, 2, -1, -1, &md), 0);
	assert_int_equal(ig_est_fit(j.l, j.nl, j.m, j.nm, 2, -1, EST_LATE, &late), 0);
	for (f = 0; f < 2; f++) {
		ig_est_replay(f ? &late : &md, j.l, j.nl, j.m, j.nm, k, &nk);
		for (i = 0, x = 0; i < j.nm; i++) {
			uint64_t t = j.l[2 * i].t;

			while (x < nk && k[x].t0 < t)
				x++;
			assert_true(x < nk);
			*(f ? &idle_late : &idle_plain) += (double)(k[x].t0 - t);
		}
	}
	assert_true(idle_plain < 0.5 * truth);
	assert_true(idle_late >= truth && idle_late < truth + 300 * US);
	for (f = 0; f < 5; f++)
		ig_est_predict(&late, j.l, j.nl, j.m, j.nm, (int)f, err, &ne, rel, &nr);
	assert_int_equal(ne, 100);
	for (i = 0; i < ne; i++)
		assert_true(err[i] < 5.0);	/* us */
	/* 30 us between each queue's end and its drained point */
	h = ig_est_hidden(&md, j.l, j.nl, j.m, j.nm);
	assert_true(h >= 100 * 30e3);
	assert_true(h <= 100 * (EST_WAKE_NS + 200e3));
}

/* A per-op loop (design §4.10, "Two starts"): per step a copy (signature
 * 0, 20 us), then 20 kernels (signature 1, 150 us) each launched after
 * 300 us of host work, and a sync entered 30 us after the last launch
 * that waits; its drained point lags the queue's end by 60-140 us.  From
 * the median time per launch the fit backs the queue up through every
 * launch, a replay the marks contradict; started short it finds the
 * kernels alone, longer than they ran by the lag only; with the queues
 * ended a wakeup's delay early no longer than they ran: its replay's
 * idle holds the truth's. */
static void test_per_op_loop(void **state)
{
	static struct job j;
	static struct est_ival k[4096];
	struct est_model md, sh, soon;
	uint64_t busy = 0, rb = 0, t = T0;
	uint32_t i, s, nk;

	(void)state;
	j.nl = j.nm = 0;
	for (s = 0; s < 150; s++) {
		uint64_t e = t + 20 * US;

		j.l[j.nl++] = (struct est_launch){ .t = t, .sig = 0 };
		busy += 20 * US;
		for (i = 0; i < 20; i++) {
			t += 300 * US + (s * 31 + i * 17) % 40 * US;
			j.l[j.nl++] = (struct est_launch){ .t = t, .sig = 1 };
			e = (t > e ? t : e) + 150 * US;
			busy += 150 * US;
		}
		j.m[j.nm++] = (struct est_mark){ .t_in = t + 30 * US,
			.t_end = e + (60 + (s * 7919) % 80) * US,
			.waited = 1, .fold = s % 5 };
		t = e + 500 * US;
	}
	assert_int_equal(ig_est_fit(j.l, j.nl, j.m, j.nm, 2, -1, -1, &md), 0);
	assert_int_equal(ig_est_fit(j.l, j.nl, j.m, j.nm, 2, -1, EST_SHORT, &sh), 0);
	assert_int_equal(ig_est_fit(j.l, j.nl, j.m, j.nm, 2, -1,
				    EST_SHORT | EST_SOON, &soon), 0);
	assert_true(md.d[1] > 250e3);	/* backed up: the marks say no */
	assert_true(ig_est_infeasible(&md, j.l, j.nl, j.m, j.nm) > 0.25);
	assert_true(ig_est_infeasible(&sh, j.l, j.nl, j.m, j.nm) < 0.05);
	assert_true(sh.d[1] >= 150e3 && sh.d[1] < 220e3);
	assert_true(soon.d[1] <= 150e3 && soon.d[0] <= 20e3);
	ig_est_replay(&soon, j.l, j.nl, j.m, j.nm, k, &nk);
	for (i = 0; i < nk; i++)
		rb += k[i].t1 - k[i].t0;
	assert_true(rb <= busy);	/* its busy no more than the truth's */
}

/* Idle inside [@a, @b) outside the busy intervals @k (in order, disjoint). */
static double idle_in(const struct est_ival *k, uint32_t nk, uint64_t a,
		      uint64_t b)
{
	double busy = 0;
	uint32_t i;

	for (i = 0; i < nk; i++) {
		uint64_t x = k[i].t0 > a ? k[i].t0 : a, y = k[i].t1 < b ? k[i].t1 : b;

		if (y > x)
			busy += (double)(y - x);
	}
	return (double)(b - a) - busy;
}

/* Drained points late by the same delay at every sync (design §4.10,
 * "The interval of a fit"): per step a copy (signature 0, 44 us) and 20
 * kernels (signature 1, 150 us) launched 40 us apart, each op starting
 * 20 us after its launch where the queue is empty; in every third step
 * the host stalls 2 ms after the eighth kernel, so the queue runs dry and
 * a kernel heads the next chain.  Each sync waits, and its drained point
 * lags the queue's end by 150-210 us, a loaded host's wakeup.  The plain
 * fit takes that delay as the launch latency and starts every head late:
 * its replay finds more idle between the first launch and the sync than
 * there was.  With the latency held at 0 (EST_LAT0) it finds no more. */
static void test_drained_delay(void **state)
{
	static struct job j;
	static struct est_ival k[4096], tr[4096];
	struct est_model md, z;
	uint64_t t = T0, e = 0, span[150][2];
	double truth = 0, plain = 0, lat0 = 0;
	uint32_t i, s, nk, nt = 0;

	(void)state;
	j.nl = j.nm = 0;
	for (s = 0; s < 150; s++) {
		span[s][0] = t;
		for (i = 0; i <= 20; i++) {
			uint64_t st = t + 20 * US > e ? t + 20 * US : e;

			j.l[j.nl++] = (struct est_launch){ .t = t, .sig = i > 0 };
			e = st + (i ? 150 : 44) * US;
			tr[nt++] = (struct est_ival){ st, e };
			t += 40 * US;
			if (i == 8 && s % 3 == 0)
				t = e + 2 * MS;
		}
		span[s][1] = t + 30 * US;
		j.m[j.nm++] = (struct est_mark){ .t_in = t + 30 * US,
			.t_end = e + (150 + (s * 7919) % 60) * US,
			.waited = 1, .fold = s % 5 };
		t = j.m[j.nm - 1].t_end + 500 * US;
	}
	assert_int_equal(ig_est_fit(j.l, j.nl, j.m, j.nm, 2, -1, -1, &md), 0);
	assert_int_equal(ig_est_fit(j.l, j.nl, j.m, j.nm, 2, -1, EST_LAT0, &z), 0);
	assert_true(md.lat > 100e3);	/* the wakeup's delay, as a latency */
	assert_true(z.lat == 0);
	for (s = 0; s < 150; s++)
		truth += idle_in(tr, nt, span[s][0], span[s][1]);
	ig_est_replay(&md, j.l, j.nl, j.m, j.nm, k, &nk);
	for (s = 0; s < 150; s++)
		plain += idle_in(k, nk, span[s][0], span[s][1]);
	ig_est_replay(&z, j.l, j.nl, j.m, j.nm, k, &nk);
	for (s = 0; s < 150; s++)
		lat0 += idle_in(k, nk, span[s][0], span[s][1]);
	assert_true(plain > truth + 150 * 100 * US);
	assert_true(lat0 <= truth);
}

/* No sync waited: nothing pins a duration. */
static void test_nothing_pinned(void **state)
{
	static struct job j;
	struct est_model md;

	(void)state;
	make(&j, 20, 2, 500 * US, 10 * US, 10 * US, 5 * US, 0);
	assert_int_equal(ig_est_fit(j.l, j.nl, j.m, j.nm, 2, -1, -1, &md), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_signatures),
		cmocka_unit_test(test_held_out),
		cmocka_unit_test(test_outliers),
		cmocka_unit_test(test_replay),
		cmocka_unit_test(test_variant),
		cmocka_unit_test(test_late),
		cmocka_unit_test(test_nothing_pinned),
		cmocka_unit_test(test_per_op_loop),
		cmocka_unit_test(test_drained_delay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
