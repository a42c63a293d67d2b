// SPDX-License-Identifier: GPL-2.0
/* Collectives across ranks (docs/design.md §4.9): matching by
 * (communicator, sequence), the peer-wait split, the late rank and why. */
#include "engine/peers/peers.h"
#include "test_engine_nccl.h"

static void ranks(struct tstream *s)
{
	int r;

	t_meta(s, 0);
	for (r = 0; r < NR; r++) {
		t_task(s, 0, 100 + r, 100 + r, 1, "trainer");
		t_gpumap(s, 100 + r, r);
		t_nccl(s, 100 + r, 1 * MS, IG_NC_COMM, r, 0, 0);
	}
}

/* One collective on rank @r: launched at @t, its kernel just after, then
 * a sync until @end (the collective's end everywhere). */
static void coll(struct tstream *s, int r, uint64_t seq, uint64_t t, uint64_t end)
{
	t_nccl(s, 100 + r, t, IG_NC_COLL, r, seq, 0);
	t_submit(s, 100 + r, 100 + r, t + 10 * US, L);
	t_sync(s, 100 + r, 100 + r, t + 20 * US, end - 10 * US, end, L, t + 10 * US);
}

/* Every rank's work of the step at @b: submitted at 1 ms, proven done by
 * a sync that waited until @done. */
static void computed(struct tstream *s, uint64_t b, uint64_t done)
{
	int r;

	for (r = 0; r < NR; r++) {
		t_submit(s, 100 + r, 100 + r, b + 1 * MS, L);
		t_sync(s, 100 + r, 100 + r, b + 1 * MS + 10 * US, done,
		       done + 10 * US, L, b + 1 * MS);
	}
}

static struct json_object *dev(struct json_object *j, int i)
{
	return json_object_array_get_idx(jpath(j, "gpu.devices"), i);
}

/* Rank 2 reads its batch from storage for 40 ms each step; the others
 * wait for it inside the all-reduce. */
static void test_storage_straggler(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *st;
	uint64_t k, b;
	int r;

	(void)state;
	ranks(&s);
	for (k = 0; k < 3; k++) {
		b = 10 * MS + k * 100 * MS;
		computed(&s, b, b + 11 * MS);
		OFF(&s, .tid = 102, .t_off = b + 12 * MS, .t_wake = b + 52 * MS,
		    .t_on = b + 52 * MS, .reason = IG_R_STORAGE, .flags = IG_F_IOWAIT,
		    .name = "shard.bin", .cpu = 1);
		for (r = 0; r < NR; r++)
			coll(&s, r, k + 1, r == 2 ? b + 53 * MS : b + 12 * MS, b + 60 * MS);
	}
	t_end(&s, 400 * MS);
	ts_feed(&s, e);
	j = report(e);
	st = jpath(j, "stragglers");
	assert_int_equal(json_object_array_length(st), 1);
	st = json_object_array_get_idx(st, 0);
	assert_int_equal(ji(st, "rank"), 2);
	assert_int_equal(ji(st, "pid"), 102);
	assert_int_equal(ji(st, "collectives"), 3);
	/* three ranks, 41 ms each, three steps */
	assert_near(jd(st, "late_s"), S(369), 1e-6);
	assert_string_equal(json_object_get_string(jpath(json_object_array_get_idx(
		jpath(st, "causes"), 0), "cause")), "storage");
	/* the others' GPUs reach the collective at their kernels' submission,
	 * 10 us into the call: 39.99 ms of each wait inside rank 2's read */
	assert_near(jd(json_object_array_get_idx(jpath(st, "causes"), 0), "seconds"),
		    (9 * (40 * MS - 10 * US)) / 1e9, 1e-6);
	for (r = 0; r < NR; r++) {
		assert_int_equal(ji(dev(j, r), "rank"), r);
		assert_near(jd(dev(j, r), "peer_wait_s"), r == 2 ? 0 : S(123), 1e-6);
	}
	assert_near(jd(j, "gpu.peer_wait_s"), S(369), 1e-6);
	assert_int_equal(ji(j, "collectives.matched"), 3);
	assert_int_equal(ji(j, "collectives.unmatched_calls"), 0);
	/* never busy: the devices' states still add up to their spans */
	for (r = 0; r < NR; r++) {
		struct json_object *d = dev(j, r);
		double span = (ji(d, "span_end_ns") - ji(d, "span_start_ns")) / 1e9;

		assert_near(jd(d, "busy_s") + jd(d, "idle_s") + jd(d, "unresolved_s") +
			    jd(d, "peer_wait_s"), span, 1e-6);
	}
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Rank 1's GPU still runs its earlier work when it launches the
 * collective: imbalance, peer_compute. */
static void test_peer_compute(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *st;
	uint64_t k, b;
	int r;

	(void)state;
	ranks(&s);
	for (k = 0; k < 3; k++) {
		b = 10 * MS + k * 100 * MS;
		for (r = 0; r < NR; r++) {
			t_submit(&s, 100 + r, 100 + r, b + 1 * MS, L);
			if (r != 1)	/* the others' work proven done */
				t_sync(&s, 100 + r, 100 + r, b + 1 * MS + 10 * US,
				       b + 5 * MS, b + 5 * MS + 10 * US, L, b + 1 * MS);
		}
		for (r = 0; r < NR; r++)
			t_nccl(&s, 100 + r, r == 1 ? b + 10 * MS : b + 6 * MS,
			       IG_NC_COLL, r, k + 1, 0);
		for (r = 0; r < NR; r++)
			t_sync(&s, 100 + r, 100 + r, b + 11 * MS, b + 40 * MS,
			       b + 40 * MS + 10 * US, L, b + 10 * MS);
	}
	t_end(&s, 400 * MS);
	ts_feed(&s, e);
	j = report(e);
	st = json_object_array_get_idx(jpath(j, "stragglers"), 0);
	assert_non_null(st);
	assert_int_equal(ji(st, "rank"), 1);
	assert_string_equal(json_object_get_string(jpath(json_object_array_get_idx(
		jpath(st, "causes"), 0), "cause")), "peer_compute");
	assert_near(jd(st, "late_s"), S(36), 1e-6);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Every rank launches within 20 us: no straggler; a grouped call
 * launches at its group's end; a rank not traced leaves its calls
 * unmatched, not charged. */
static void test_balanced_grouped(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;
	uint64_t k, b;
	int r;

	(void)state;
	ranks(&s);
	for (k = 0; k < 5; k++) {
		b = 10 * MS + k * 50 * MS;
		for (r = 0; r < NR; r++) {
			t_nccl(&s, 100 + r, b + r * 5 * US, IG_NC_COLL, r, 2 * k + 1,
			       IG_NCF_GROUPED);
			t_nccl(&s, 100 + r, b + 1 * MS + r * 5 * US, IG_NC_GROUP_END, -1, 0, 0);
			t_submit(&s, 100 + r, 100 + r, b + 1 * MS + 6 * US * r + 30 * US, L);
			t_sync(&s, 100 + r, 100 + r, b + 2 * MS, b + 20 * MS,
			       b + 20 * MS + 10 * US, L, b + 1 * MS + 50 * US);
			if (r != 3)	/* rank 3 makes no such call */
				t_nccl(&s, 100 + r, b + 25 * MS, IG_NC_COLL, r, 2 * k + 2, 0);
		}
	}
	t_end(&s, 400 * MS);
	ts_feed(&s, e);
	j = report(e);
	assert_int_equal(json_object_array_length(jpath(j, "stragglers")), 0);
	assert_int_equal(ji(j, "collectives.matched"), 5);
	assert_int_equal(ji(j, "collectives.unmatched_calls"), 15);
	/* launched at the group's end, 5 us apart: rank 0 waited 15 us each */
	assert_near(jd(dev(j, 0), "peer_wait_s"), 5 * 15e-6, 1e-9);
	assert_true(jd(j, "gpu.peer_wait_s") <= 0.05 * jd(dev(j, 0), "collective_s") * NR);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Step K, from B, of the preemption tests: the ranks but 1 call and
 * submit their all-reduce at B + 12 ms and drain at B + 50 ms; rank 1
 * enters its own at ENTER, submits its kernel at SUBMIT, is preempted
 * from OFF until B + 40 ms, and then syncs until B + 50 ms. */
static void rank1_preempted(struct tstream *s, uint64_t k, uint64_t b,
			    uint64_t enter, uint64_t submit, uint64_t off)
{
	uint64_t back = b + 40 * MS;
	int r;

	computed(s, b, b + 5 * MS);
	for (r = 0; r < NR; r++)
		if (r != 1)
			coll(s, r, k + 1, b + 12 * MS, b + 50 * MS);
	t_nccl(s, 101, enter, IG_NC_COLL, 1, k + 1, 0);
	t_submit(s, 101, 101, submit, L);
	OFF(s, .tid = 101, .t_off = off, .t_wake = 0, .t_on = back,
	    .reason = IG_R_PREEMPT, .cpu = 1);
	t_sync(s, 101, 101, (submit > back ? submit : back) + 10 * US,
	       b + 50 * MS - 10 * US, b + 50 * MS, L, submit);
}

/* Rank 1's thread is preempted for 30 ms inside its all-reduce, between
 * the call's entry (first of all) and its kernel's submission (last of
 * all): its GPU reached the collective at the submission, so it is the
 * late rank, and the others waited from their own submissions. */
static void test_preempted_in_call(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *st;
	uint64_t k, b;
	int r;

	(void)state;
	ranks(&s);
	for (k = 0; k < 3; k++) {
		b = 10 * MS + k * 100 * MS;
		rank1_preempted(&s, k, b, b + 10 * MS, b + 40 * MS + 10 * US,
				b + 10 * MS + 5 * US);
	}
	t_end(&s, 400 * MS);
	ts_feed(&s, e);
	j = report(e);
	st = jpath(j, "stragglers");
	assert_int_equal(json_object_array_length(st), 1);
	st = json_object_array_get_idx(st, 0);
	assert_int_equal(ji(st, "rank"), 1);
	assert_int_equal(ji(st, "collectives"), 3);
	for (r = 0; r < NR; r++)
		assert_near(jd(dev(j, r), "peer_wait_s"),
			    r == 1 ? 0 : 3 * (28 * MS) / 1e9, 1e-6);
	/* what held it: the CPU, taken from it inside the call */
	assert_string_equal(json_object_get_string(jpath(json_object_array_get_idx(
		jpath(st, "causes"), 0), "cause")), "cpu_starvation");
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Rank 1's kernel submission is seen with everyone's, but its thread is
 * then preempted inside the launch for 28 ms: the kernel reached its GPU
 * when the thread was back on a CPU, before its next call (the sync), so
 * the others waited until then.  Rank 0 sleeps inside its own sync, after
 * its launch had returned: that moves nothing. */
static void test_preempted_in_launch(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;
	uint64_t k, b, t;
	int r;

	(void)state;
	ranks(&s);
	for (k = 0; k < 3; k++) {
		b = 10 * MS + k * 100 * MS;
		t = b + 12 * MS;
		rank1_preempted(&s, k, b, t, t + 10 * US, t + 15 * US);
		OFF(&s, .tid = 100, .t_off = t + 30 * US, .t_wake = b + 45 * MS,
		    .t_on = b + 45 * MS, .reason = IG_R_FUTEX, .cpu = 0);
	}
	t_end(&s, 400 * MS);
	ts_feed(&s, e);
	j = report(e);
	for (r = 0; r < NR; r++) {
		assert_near(jd(dev(j, r), "peer_wait_s"),
			    r == 1 ? 0 : 3 * (28 * MS - 10 * US) / 1e9, 1e-6);
		/* in it from the arrival to its stream's drain (its sync woke), not
		 * to the next step's (the drain before the next NCCL call) */
		assert_near(jd(dev(j, r), "collective_s"),
			    r == 1 ? 3 * (10 * MS - 10 * US) / 1e9 : 3 * (38 * MS - 20 * US) / 1e9, 1e-6);
	}
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* A submission on the collective's stream that is not the first since
 * the call's entry (the kernel went in unannounced, with work already
 * queued) says nothing of the arrival: the entry stays, a lower bound. */
static void test_submit_not_first(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;
	int r;

	(void)state;
	ranks(&s);
	computed(&s, 0, 5 * MS);
	t_nccl(&s, 100, 10 * MS, IG_NC_COLL, 0, 1, 0);
	for (r = 1; r < NR; r++)
		coll(&s, r, 1, 12 * MS, 50 * MS);
	CU(&s, .kind = IG_CU_SUBMIT, .api = IG_API_cuLaunchKernel, .nsub = 2,
	   .tid = 100, .tgid = 100, .ts = 30 * MS, .stream = L,
	   .last_submit = 10 * MS + 5 * US);
	t_sync(&s, 100, 100, 30 * MS + 10 * US, 50 * MS - 10 * US, 50 * MS, L, 30 * MS);
	t_end(&s, 400 * MS);
	ts_feed(&s, e);
	j = report(e);
	/* rank 0 arrived at its entry, first: it waited for the others'
	 * submissions, 12.01 ms, and nobody waited for it */
	assert_near(jd(dev(j, 0), "peer_wait_s"), (2 * MS + 10 * US) / 1e9, 1e-6);
	for (r = 1; r < NR; r++)
		assert_near(jd(dev(j, r), "peer_wait_s"), 0, 1e-9);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Ranks 2 and 3 are on another host: each collective of ranks 0 and 1,
 * one every @every for @secs s, is never whole.  It is dropped, its calls
 * unmatched, once older than the history window (or, past the cap, 5 s):
 * what is held stays bounded, whatever the run's length. */
static void partial(uint64_t every, uint64_t secs, uint32_t max_open, uint64_t min_dropped)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;
	uint64_t t, seq = 0;
	int r;

	ranks(&s);
	for (t = 10 * MS; t < secs * IG_NSEC; t += every) {
		seq++;
		for (r = 0; r < 2; r++)
			t_nccl(&s, 100 + r, t + r * US, IG_NC_COLL, r, seq, 0);
	}
	ts_feed(&s, e);
	assert_true(e->peers->groups.n <= max_open);
	t_end(&s, secs * IG_NSEC);
	j = report(e);
	assert_true((uint64_t)ji(j, "collectives.collectives_dropped") >= min_dropped);
	assert_int_equal(ji(j, "collectives.unmatched_calls"), 2 * seq);
	assert_int_equal(ji(j, "collectives.matched"), 0);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

static void test_partial_dropped(void **state)
{
	(void)state;
	/* 10 a second for 200 s: the last 60 s held */
	partial(100 * MS, 200, 61 * 10 + 1, 1300);
	/* 2,000 a second for 20 s: the cap */
	partial(500 * US, 20, 2 * 4096, 20000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_storage_straggler),
		cmocka_unit_test(test_peer_compute),
		cmocka_unit_test(test_balanced_grouped),
		cmocka_unit_test(test_preempted_in_call),
		cmocka_unit_test(test_preempted_in_launch),
		cmocka_unit_test(test_submit_not_first),
		cmocka_unit_test(test_partial_dropped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
