// SPDX-License-Identifier: GPL-2.0
/* Communicators created before tracing (docs/design.md §4.9): matched by
 * their calls' pattern and ends (peers_infer.c), or refused. */
#include "engine/peers/peers.h"	/* before "L" is a stream */
#include "test_engine_nccl.h"

#define N	16

static bool grouped;	/* each call inside ncclGroupStart/End */
static int with_id = -1;	/* the rank whose probes saw its creation */
static bool late_return;	/* rank 0 preempted after its odd launches */
#define KNOWN_ID 0xabcdef12345ULL

/* @n calls from sequence @s0: the same signature unless @odd (every
 * third call's bytes differ, as a pattern of two buckets would), the
 * launch 20 ms before the end, the ends every 100 ms, moved by @skew. */
static void calls(struct ig_infer_obs *o, size_t n, uint64_t s0, bool odd,
		  int64_t skew, uint64_t launch_lead)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t end = 1000 * MS + i * 100 * MS + (uint64_t)skew;

		o[i].seq = s0 + i;
		o[i].sig = odd && i % 3 == 0 ? 0xb0 + i % 2 : 0xa0;
		o[i].end = end + (i % 2 ? 7 * US : 0);	/* jitter */
		o[i].launch = end - launch_lead;
		o[i].exact = true;
	}
}

static void test_rule(void **state)
{
	struct ig_infer_obs a[N], b[N];
	int k = 99;

	(void)state;
	/* b one call ahead: its seq s+1 is a's s */
	calls(a, N, 1, false, 0, 20 * MS);
	calls(b, N, 2, false, 30 * US, 2 * MS);
	assert_true(ig_peers_infer_pair(a, N, b, N, &k));
	assert_int_equal(k, 1);
	assert_true(ig_peers_infer_pair(b, N, a, N, &k));
	assert_int_equal(k, -1);
	/* the same, with a's calls of another byte pattern */
	calls(a, N, 1, true, 0, 20 * MS);
	assert_false(ig_peers_infer_pair(a, N, b, N, &k));
	/* the same bytes, ends 1.5 ms apart: another job's */
	calls(a, N, 1, false, 0, 20 * MS);
	calls(b, N, 2, false, 1500 * US, 2 * MS);
	assert_false(ig_peers_infer_pair(a, N, b, N, &k));
	/* 500 us apart: within a 64th of the 100 ms between calls (a
	 * loaded host's wakeups), one job's */
	calls(b, N, 2, false, 500 * US, 2 * MS);
	assert_true(ig_peers_infer_pair(a, N, b, N, &k));
	/* ... but not with 10 ms between calls: 156 us at most there */
	for (k = 0; k < N; k++) {
		a[k].end = 1000 * MS + (uint64_t)k * 10 * MS;
		a[k].launch = a[k].end - 2 * MS;
		b[k].end = a[k].end + 500 * US;
		b[k].launch = b[k].end - 2 * MS;
	}
	assert_false(ig_peers_infer_pair(a, N, b, N, &k));
	for (k = 0; k < N; k++)
		b[k].end = a[k].end + 120 * US;
	assert_true(ig_peers_infer_pair(a, N, b, N, &k));
	/* ends seen by syncs that returned at once bound the end only: no
	 * evidence that they agree */
	calls(a, N, 1, false, 0, 20 * MS);
	calls(b, N, 2, false, 30 * US, 2 * MS);
	for (k = 0; k < N - IG_INFER_MIN_CALLS + 1; k++)
		b[k].exact = false;
	assert_false(ig_peers_infer_pair(a, N, b, N, &k));
	calls(b, N, 2, false, 30 * US, 2 * MS);
	/* ends together, but too few of them */
	calls(b, N, 2, false, 30 * US, 2 * MS);
	assert_false(ig_peers_infer_pair(a + N - (IG_INFER_MIN_CALLS - 1),
					 IG_INFER_MIN_CALLS - 1, b, N, &k));
	assert_true(ig_peers_infer_pair(a + N - (IG_INFER_MIN_CALLS + 1),
					IG_INFER_MIN_CALLS + 1, b, N, &k));
	/* a sync woken late now and then: 4 of the last 12 ends 2 ms
	 * late still agree, 5 do not */
	for (k = 0; k < 4; k++)
		b[N - 1 - 3 * k].end += 2 * MS;
	assert_true(ig_peers_infer_pair(a, N, b, N, &k));
	b[N - 2].end += 2 * MS;
	assert_false(ig_peers_infer_pair(a, N, b, N, &k));
	calls(b, N, 2, false, 30 * US, 2 * MS);
	/* one end before the other's launch: not one collective */
	b[5].launch = a[4].end + 1 * US;
	b[5].end = b[5].launch + 1 * US;
	assert_false(ig_peers_infer_pair(a, N, b, N, &k));
	/* more than IG_INFER_MAX_SHIFT apart: not looked for */
	calls(b, N, 1 + IG_INFER_MAX_SHIFT + 1, false, 30 * US, 2 * MS);
	assert_false(ig_peers_infer_pair(a, N, b, N, &k));
}

/* Rank @r's collective of its own sequence @seq, without an id (its
 * communicator created before tracing), launched at @t, its kernel just
 * after, then a sync until @end. */
static void coll(struct tstream *s, int r, uint64_t seq, uint64_t t, uint64_t end,
		 bool rank_known)
{
	t_nccl(s, 100 + r, t, IG_NC_COLL, rank_known ? r : -1, seq,
	       IG_NCF_NO_ID | (grouped ? IG_NCF_GROUPED : 0));
	s->r[s->n - 1].nc.id = 0;
	s->r[s->n - 1].nc.nranks = 0;
	s->r[s->n - 1].nc.peer = -1;
	if (r == with_id) {	/* its communicator's id, rank and size */
		s->r[s->n - 1].nc.id = KNOWN_ID;
		s->r[s->n - 1].nc.nranks = 3;
		s->r[s->n - 1].nc.rank = r;
		s->r[s->n - 1].nc.flags &= ~IG_NCF_NO_ID;
	}
	if (grouped) {	/* launched at the group's end, 5 us later */
		t_nccl(s, 100 + r, t + 5 * US, IG_NC_GROUP_END, 0, 0, 0);
		t += 5 * US;
	}
	t_submit(s, 100 + r, 100 + r, t + 10 * US, L);
	if (late_return && r == 0 && seq % 2) {
		/* off CPU from just after the launch returned until 2 ms
		 * after the collective's end, then a sync that finds it done */
		OFF(s, .tid = 100, .t_off = t + 15 * US, .t_wake = 0,
		    .t_on = end + 2 * MS, .reason = IG_R_PREEMPT, .cpu = 0);
		t_sync(s, 100, 100, end + 2 * MS + 10 * US, 0, end + 2 * MS + 20 * US,
		       L, t + 10 * US);
		return;
	}
	t_sync(s, 100 + r, 100 + r, t + 20 * US, end - 10 * US, end, L, t + 10 * US);
}

#define STEPS	40
static uint64_t nsteps = STEPS;	/* job()'s */

/* Three ranks attached in mid-run, rank 1 one call ahead in its own
 * count: rank 2 launches 40 ms after the others each step, and every
 * rank's stream drains at the collective's end. */
static void job(struct tstream *s, uint64_t apart, bool rank_known)
{
	uint64_t k, b;
	int r;

	t_meta(s, 0);
	for (r = 0; r < 3; r++) {
		t_task(s, 0, 100 + r, 100 + r, 1, "trainer");
		t_gpumap(s, 100 + r, r);
	}
	for (k = 0; k < nsteps; k++) {
		b = 10 * MS + k * 100 * MS;
		for (r = 0; r < 3; r++) {
			uint64_t t = b + (r == 2 ? 50 * MS : 10 * MS);
			/* the first @apart steps, rank 1's drains come 3 ms
			 * after the others' */
			uint64_t end = b + 55 * MS + (k < apart && r == 1 ? 3 * MS : r * 5 * US);

			t_submit(s, 100 + r, 100 + r, b + 1 * MS, L);
			t_sync(s, 100 + r, 100 + r, b + 1 * MS + 10 * US, b + 3 * MS,
			       b + 3 * MS + 10 * US, L, b + 1 * MS);
			coll(s, r, k + 1 + (r == 1), t, end, rank_known);
		}
	}
	t_end(s, (nsteps + 1) * 100 * MS);
}

/* Every rank but the late one (pid 102) waited 40 ms a collective. */
static void fast_ranks_waited_40ms(struct json_object *j)
{
	struct json_object *a = jpath(j, "collectives.ranks");
	size_t i;

	for (i = 0; i < json_object_array_length(a); i++) {
		struct json_object *x = json_object_array_get_idx(a, i);

		if (ji(x, "pid") != 102)
			assert_near(jd(x, "peer_wait_s") / ji(j, "collectives.matched"),
				    0.040, 1e-6);
	}
}

static void test_attached_mid_run(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *st, *a;
	size_t i;

	(void)state;
	job(&s, 0, false);
	ts_feed(&s, e);
	j = report(e);
	/* the first calls are the evidence, then held calls are matched too */
	assert_true(ji(j, "collectives.matched") >= STEPS - 2);
	assert_int_equal(ji(j, "collectives.inferred_communicators"), 1);
	st = jpath(j, "stragglers");
	assert_true(json_object_array_length(st) >= 1);
	assert_int_equal(ji(json_object_array_get_idx(st, 0), "pid"), 102);
	/* rank unknown: the probes never saw it */
	assert_null(jpath(json_object_array_get_idx(st, 0), "rank"));
	fast_ranks_waited_40ms(j);
	a = jpath(j, "collectives.by_communicator");
	assert_int_equal(json_object_array_length(a), 3);
	for (i = 0; i < 3; i++) {
		struct json_object *x = json_object_array_get_idx(a, i);

		assert_true(json_object_get_boolean(jpath(x, "inferred")));
		assert_null(jpath(x, "size"));
	}
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Rank 0 is preempted after every other launch has returned, until after
 * the collective ended everywhere: its return to a CPU, later than the
 * others' ends, is no arrival.  The three are still one communicator
 * (the rule asks the submission), and rank 0 waited 40 ms for rank 2 in
 * every collective, as the others did. */
static void test_preempted_after_launch(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	late_return = true;
	job(&s, 0, false);
	late_return = false;
	ts_feed(&s, e);
	j = report(e);
	assert_true(ji(j, "collectives.matched") >= STEPS - 2);
	assert_int_equal(ji(j, "collectives.inferred_communicators"), 1);
	/* every rank's calls in it (rank 0's refuted it once, 80 of 120) */
	assert_true(ji(j, "collectives.inferred_calls") >= 3 * (STEPS - 2));
	fast_ranks_waited_40ms(j);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Rank 1's ends 3 ms from the others': it stays unmatched, the other
 * two are one inferred communicator of two. */
static void test_ends_apart(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *a;
	size_t i;

	(void)state;
	job(&s, STEPS, false);
	ts_feed(&s, e);
	j = report(e);
	assert_int_equal(ji(j, "collectives.inferred_communicators"), 1);
	a = jpath(j, "collectives.by_communicator");
	assert_int_equal(json_object_array_length(a), 2);
	for (i = 0; i < 2; i++)
		assert_int_not_equal(ji(json_object_array_get_idx(a, i), "pid"), 101);
	assert_true(ji(j, "collectives.calls_without_communicator") >= STEPS);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Rank 1's ends agree only from step 15 on: ranks 0 and 2, which agree
 * from the first steps, wait for it (its calls look like theirs), and the
 * three are one inferred communicator from the first calls held: rank
 * 1's 40 ms a collective, and the others' waits for rank 2, are counted
 * from there. */
static void test_waits_for_a_rank(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	job(&s, 15, false);
	ts_feed(&s, e);
	j = report(e);
	assert_int_equal(ji(j, "collectives.inferred_communicators"), 1);
	assert_int_equal(json_object_array_length(jpath(j, "collectives.by_communicator")), 3);
	assert_true(ji(j, "collectives.matched") >= STEPS - 2);
	fast_ranks_waited_40ms(j);
	assert_int_equal(ji(json_object_array_get_idx(jpath(j, "stragglers"), 0), "pid"), 102);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Rank 1's ends agree only from step 45 on, more than INFER_SETTLE_MAX
 * (32) calls after ranks 0 and 2 first agreed: those two are inferred
 * first, rank 1 joins them later, from a collective none had launched
 * yet; the collectives before are matched without it. */
static void test_joins_later(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *a, *x = NULL;
	size_t i;

	(void)state;
	nsteps = 80;
	job(&s, 45, false);
	nsteps = STEPS;
	ts_feed(&s, e);
	j = report(e);
	assert_int_equal(ji(j, "collectives.inferred_communicators"), 1);
	assert_int_equal(json_object_array_length(jpath(j, "collectives.by_communicator")), 3);
	a = jpath(j, "collectives.ranks");
	for (i = 0; i < json_object_array_length(a); i++)
		if (ji(json_object_array_get_idx(a, i), "pid") == 101)
			x = json_object_array_get_idx(a, i);
	assert_non_null(x);
	/* from when it joined, its wait of 40 ms a collective is counted */
	assert_true(jd(x, "peer_wait_s") >= 0.040 * 20 - 1e-6);
	assert_true(jd(x, "peer_wait_s") <= 0.040 * (80 - 45) + 1e-6);
	assert_int_equal(ji(json_object_array_get_idx(jpath(j, "stragglers"), 0), "pid"), 102);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* The probes came while ranks 0 and 1 were inside ncclCommInitRank,
 * waiting for rank 2, whose creation they saw: rank 2's calls have the
 * id, a size of 3 and its rank, the others' none.  Ranks 0 and 1 join
 * its communicator (its id, a rank slot each) from their first calls
 * held: every collective meets, and each fast rank's 40 ms a collective
 * waiting for rank 2 is peer wait, not busy. */
static void test_joins_known(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *a, *st;
	char want[24];
	size_t i;

	(void)state;
	with_id = 2;
	job(&s, 0, false);
	with_id = -1;
	ts_feed(&s, e);
	j = report(e);
	assert_true(ji(j, "collectives.matched") >= STEPS - 2);
	assert_int_equal(ji(j, "collectives.inferred_communicators"), 1);
	fast_ranks_waited_40ms(j);
	st = jpath(j, "stragglers");
	assert_true(json_object_array_length(st) >= 1);
	assert_int_equal(ji(json_object_array_get_idx(st, 0), "pid"), 102);
	assert_int_equal(ji(json_object_array_get_idx(st, 0), "rank"), 2);
	/* one communicator, the id the probes saw, in every rank */
	snprintf(want, sizeof(want), "%016llx", (unsigned long long)KNOWN_ID);
	a = jpath(j, "collectives.by_communicator");
	assert_int_equal(json_object_array_length(a), 3);
	for (i = 0; i < 3; i++)
		assert_string_equal(json_object_get_string(jpath(
			json_object_array_get_idx(a, i), "communicator")), want);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Each call inside a group: launched at the group's end. */
static void test_grouped(void **state)
{
	grouped = true;
	test_attached_mid_run(state);
	grouped = false;
}

/* The same for 80 s, past the history window: a held call not launched
 * yet is no older than now, so no collective is swept as stale but the
 * first, whose rank 1 call came before tracing (rank 1 is a call ahead). */
static void test_grouped_long(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	grouped = true;
	nsteps = 800;
	job(&s, 0, false);
	ts_feed(&s, e);
	j = report(e);
	assert_true(ji(j, "collectives.matched") >= (int64_t)nsteps - 2);
	assert_true(ji(j, "collectives.collectives_dropped") <= 1);
	grouped = false;
	nsteps = STEPS;
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* ncclCommUserRank seen after the attach: the straggler is named by its
 * rank, the size still unknown. */
static void test_rank_known(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *a;
	size_t i;

	(void)state;
	job(&s, 0, true);
	ts_feed(&s, e);
	j = report(e);
	assert_int_equal(ji(j, "collectives.inferred_communicators"), 1);
	assert_int_equal(ji(json_object_array_get_idx(jpath(j, "stragglers"), 0), "rank"), 2);
	a = jpath(j, "collectives.by_communicator");
	for (i = 0; i < json_object_array_length(a); i++) {
		struct json_object *x = json_object_array_get_idx(a, i);

		assert_int_equal(ji(x, "rank"), ji(x, "pid") - 100);
		assert_null(jpath(x, "size"));
	}
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_attached_mid_run),
		cmocka_unit_test(test_preempted_after_launch),
		cmocka_unit_test(test_ends_apart),
		cmocka_unit_test(test_rank_known),
		cmocka_unit_test(test_waits_for_a_rank),
		cmocka_unit_test(test_joins_later),
		cmocka_unit_test(test_joins_known),
		cmocka_unit_test(test_grouped),
		cmocka_unit_test(test_grouped_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
