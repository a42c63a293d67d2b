// SPDX-License-Identifier: GPL-2.0
/* Steps (docs/design.md §4.11): found from the loop's period, cut at the
 * sync's return, charged their time by cause; slow steps, what-if, no
 * steps for an irregular job, a marker, and bounded memory on a long run. */
#include "test_engine_util.h"
#include "engine/steps/steps.h"

#define L	IG_STREAM_LEGACY

struct loop {
	int steps, kernels;
	int slow_every;		/* a storage wait of slow_ms every Nth step */
	uint64_t slow_ms;
	bool irregular;		/* a random count of kernels each time */
	bool copy_sync;		/* a synchronous copy before the kernels */
	int setup_copies;	/* before the loop, as many such copies */
};

static void launches(struct tstream *s, uint64_t ts, uint64_t func,
		     uint32_t grid);

/* A synchronous copy at @a: its call, its launch record, its return. */
static void copy_sync(struct tstream *s, uint64_t a)
{
	CU(s, .kind = IG_CU_SYNC_BEGIN, .api = IG_API_cuMemcpyHtoD_v2,
	   .tid = 100, .tgid = 100, .ts = a, .stream = L, .nsub = 1);
	launches(s, a, IG_API_cuMemcpyHtoD_v2, IG_LB_NOTKERNEL);
	CU(s, .kind = IG_CU_SYNC_END, .api = IG_API_cuMemcpyHtoD_v2,
	   .tid = 100, .tgid = 100, .ts = a + 100 * US, .stream = L,
	   .t_begin = a, .last_submit = a);
}

static void launches(struct tstream *s, uint64_t ts, uint64_t func,
		     uint32_t grid)
{
	union ig_rec *r = ts_new(s, IG_REC_LAUNCHES,
				 offsetof(struct ig_launches, e) +
				 sizeof(struct ig_launch), 100, 100, ts);
	struct ig_launches *l = (struct ig_launches *)r;

	l->stream = L;
	l->n = 1;
	l->e[0].ts = ts;
	l->e[0].func = func;
	l->e[0].grid = grid;
}

/* Thread 100 of process 100 runs the loop; each step's end (the sync's
 * return) into @ends.  Returns when the last step ended. */
static uint64_t run_loop(struct ig_engine *e, const struct loop *lp,
			 uint64_t *ends)
{
	struct tstream s = { 0 };
	uint64_t t = 10 * MS, a, s0;
	unsigned int seed = 7;
	int i, j, k;

	t_task(&s, 1 * MS, 100, 100, 1, "train");
	ts_feed(&s, e);
	for (i = 0; i < lp->setup_copies; i++, t += 1 * MS)
		copy_sync(&s, t);
	for (i = 0; i < lp->steps; i++) {
		bool slow = lp->slow_every && i && i % lp->slow_every == 0;

		/* the batch: cached (on CPU 300 us) or read from disk */
		if (slow) {
			OFF(&s, .tid = 100, .t_off = t, .t_wake = t + lp->slow_ms * MS,
			    .t_on = t + lp->slow_ms * MS + 10 * US,
			    .reason = IG_R_STORAGE);
			t += lp->slow_ms * MS + 10 * US;
		}
		a = t + 300 * US;
		if (lp->copy_sync) {
			copy_sync(&s, a);
			a += 150 * US;
		}
		k = lp->irregular ? 1 + (int)(rand_r(&seed) % 40) : lp->kernels;
		for (j = 0; j < k; j++) {
			if (!j)
				t_submit(&s, 100, 100, a, L);
			launches(&s, a, 0x1000 + (uint64_t)j, 64);
			a += 5 * US;
		}
		/* the loss read back: the GPU runs 2 ms */
		s0 = a + 5 * US;
		OFF(&s, .tid = 100, .t_off = s0 + 2 * US, .t_wake = s0 + 2 * MS,
		    .t_on = s0 + 2 * MS + 5 * US, .reason = IG_R_FUTEX);
		t_sync(&s, 100, 100, s0, s0 + 2 * MS, s0 + 2 * MS + 10 * US, L,
		       a - 5 * US);
		t = s0 + 2 * MS + 10 * US;
		if (ends)
			ends[i] = t;
		ts_feed(&s, e);
	}
	t_end(&s, t + 5 * MS);
	ts_feed(&s, e);
	ts_free(&s);
	return t;
}

static struct json_object *steps_of(struct json_object *j)
{
	struct json_object *st = jpath(j, "steps");

	assert_non_null(st);
	return st;
}

static struct json_object *step_at(struct json_object *st, size_t i)
{
	return json_object_array_get_idx(jpath(st, "list"), i);
}

/* 100 steps, every 10th slowed 20 ms by storage: 99 whole steps ending at
 * the syncs' returns, the slow ones found with their cause, what-if. */
static void test_slow_storage(void **state)
{
	struct ig_engine *e = new_engine(0, 4);
	struct loop lp = { .steps = 100, .kernels = 8, .slow_every = 10,
			   .slow_ms = 20 };
	uint64_t ends[100];
	struct json_object *j, *st, *slow, *wi;
	size_t i, n;
	int nslow_storage = 0;

	(void)state;
	run_loop(e, &lp, ends);
	j = report(e);
	st = steps_of(j);
	assert_true(json_object_get_boolean(jpath(st, "found")));
	assert_string_equal(json_object_get_string(jpath(st, "source")),
			    "sync:cuStreamSynchronize");
	assert_int_equal(ji(st, "complete"), 99);
	n = json_object_array_length(jpath(st, "list"));
	assert_true(n >= 100);
	/* step k ends at the k-th sync's return; step 0 holds set-up */
	assert_true(json_object_get_boolean(jpath(step_at(st, 0), "partial")));
	for (i = 0; i < 100; i++)
		assert_int_equal(ji(step_at(st, i), "end_ns"), ends[i]);
	slow = jpath(st, "slow");
	for (i = 0; getenv("STEPS_DEBUG") && i < n; i++)
		print_message("# %s\n", json_object_to_json_string(step_at(st, i)));
	assert_int_equal(json_object_array_length(slow), 9);
	for (i = 0; i < 9; i++) {
		struct json_object *x = step_at(st, (size_t)
			json_object_get_int(json_object_array_get_idx(slow, i)));

		assert_int_equal(ji(x, "index") % 10, 0);
		nslow_storage += !strcmp(json_object_get_string(jpath(x, "cause")),
					 "storage");
		assert_true(jd(x, "causes.storage") > 0.019);
	}
	assert_int_equal(nslow_storage, 9);
	/* the time charged adds up to the step's wall time */
	for (i = 1; i < 99; i++) {
		struct json_object *x = step_at(st, i);

		assert_near(jd(x, "busy_s") + jd(x, "idle_s") + jd(x, "peer_wait_s") +
			    jd(x, "unresolved_s"), jd(x, "wall_s"), 2e-6);
	}
	/* without storage, the slow steps would be as the others */
	wi = json_object_array_get_idx(jpath(st, "what_if"), 0);
	assert_string_equal(json_object_get_string(jpath(wi, "cause")), "storage");
	assert_int_equal(ji(wi, "steps"), 9);
	assert_near(jd(wi, "step_mean_without_s"), jd(st, "p50_s"), 0.0005);
	assert_near(jd(st, "p50_s"), 0.002355, 0.0001);
	json_object_put(j);
	ig_engine_free(e);
}

/* A random number of kernels each time: no steps, and why. */
static void test_irregular(void **state)
{
	struct ig_engine *e = new_engine(0, 4);
	struct loop lp = { .steps = 200, .irregular = true };
	struct json_object *j, *st;
	char *txt;

	(void)state;
	run_loop(e, &lp, NULL);
	j = report(e);
	st = steps_of(j);
	assert_false(json_object_get_boolean(jpath(st, "found")));
	assert_int_equal(ji(st, "count"), 0);
	assert_int_equal(json_object_array_length(jpath(st, "list")), 0);
	assert_non_null(strstr(json_object_get_string(jpath(st, "why_none")),
			       "no repeating"));
	json_object_put(j);
	ig_engine_free(e);
	e = new_engine(0, 4);
	run_loop(e, &lp, NULL);
	txt = report_text(e);
	assert_non_null(strstr(txt, "Steps: none found (no repeating"));
	free(txt);
	ig_engine_free(e);
}

/* Runs @lp (60 steps, a synchronous copy and the loss's sync each):
 * the steps end at the loss's sync, each where the loop ended one; how
 * many were slow. */
static size_t at_loss_sync(const struct loop *lp)
{
	struct ig_engine *e = new_engine(0, 4);
	uint64_t ends[60];
	struct json_object *j, *st;
	size_t i, nslow;

	assert_int_equal(lp->steps, 60);
	run_loop(e, lp, ends);
	j = report(e);
	st = steps_of(j);
	assert_true(json_object_get_boolean(jpath(st, "found")));
	assert_string_equal(json_object_get_string(jpath(st, "source")),
			    "sync:cuStreamSynchronize");
	assert_int_equal(ji(st, "complete"), 59);
	for (i = 0; i < 60; i++)
		assert_int_equal(ji(step_at(st, i), "end_ns"), ends[i]);
	nslow = json_object_array_length(jpath(st, "slow"));
	json_object_put(j);
	ig_engine_free(e);
	return nslow;
}

/* Two syncs a step (a synchronous copy, the loss): the period is two
 * segments, and steps end at the loss's sync, not at the copy. */
static void test_two_syncs(void **state)
{
	struct loop lp = { .steps = 60, .kernels = 4, .copy_sync = true,
			   .slow_every = 7, .slow_ms = 10 };

	(void)state;
	assert_int_equal(at_loss_sync(&lp), 8);
}

/* The same loop after set-up's 8 synchronous copies (a model's weights
 * moved to the GPU one by one): those copies repeat each other at any
 * period, and are no steps; the steps still end at the loss's sync.  On
 * a real GPU a PyTorch loop's steps had ended at its batch's copy, with
 * 6 steps of set-up, 0.5 ms each, among them. */
static void test_setup_copies(void **state)
{
	struct loop lp = { .steps = 60, .kernels = 4, .copy_sync = true,
			   .setup_copies = 8 };

	(void)state;
	assert_int_equal(at_loss_sync(&lp), 0);
}

/* --step cuda:cuMemcpyHtoD_v2: the user's marker ends the steps. */
static void test_marker(void **state)
{
	struct ig_engine_opts o = { .sz = sizeof(o),
				    .step_api = IG_API_cuMemcpyHtoD_v2 + 1 };
	struct ig_engine *e = ig_engine_new(&o);
	struct loop lp = { .steps = 30, .kernels = 4, .copy_sync = true };
	struct json_object *j, *st;

	(void)state;
	assert_non_null(e);
	run_loop(e, &lp, NULL);
	j = report(e);
	st = steps_of(j);
	assert_string_equal(json_object_get_string(jpath(st, "source")),
			    "marker:cuda:cuMemcpyHtoD_v2");
	/* cut at each copy: the first step is set-up and the first copy,
	 * the last runs from the last copy to the trace's end */
	assert_int_equal(ji(st, "complete"), 29);
	json_object_put(j);
	ig_engine_free(e);
}

/* 12,000 steps: the steps' memory stays bounded (older steps folded),
 * and every step is counted. */
static void test_long_run_bounded(void **state)
{
	struct ig_engine_opts o = { .sz = sizeof(o), .window_s = 1.0 };
	struct ig_engine *e = ig_engine_new(&o);
	struct loop lp = { .steps = 12000, .kernels = 4, .slow_every = 100,
			   .slow_ms = 10 };
	struct json_object *j, *st;

	(void)state;
	assert_non_null(e);
	run_loop(e, &lp, NULL);
	print_message("# steps: %zu KiB held\n", ig_steps_bytes(e) / 1024);
	assert_true(ig_steps_bytes(e) < 2u << 20);
	j = report(e);
	st = steps_of(j);
	assert_int_equal(ji(st, "complete"), 11999);
	assert_int_equal(ji(st, "count"), 12000);
	assert_int_equal(json_object_array_length(jpath(st, "slow")), 119);
	assert_int_equal(ji(st, "segments_dropped"), 0);
	assert_true(ji(st, "list_omitted") > 0);
	json_object_put(j);
	ig_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slow_storage),
		cmocka_unit_test(test_irregular),
		cmocka_unit_test(test_two_syncs),
		cmocka_unit_test(test_setup_copies),
		cmocka_unit_test(test_marker),
		cmocka_unit_test(test_long_run_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
