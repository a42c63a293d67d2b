// SPDX-License-Identifier: GPL-2.0
/* The estimate through the engine where no sync waits (docs/design.md
 * §4.10): launches and syncs that return at once, as records, give a
 * bounded estimate whose interval holds the truth, or a refusal that
 * names the bounds when they are too loose, with their lower end on idle
 * still given apart (idle_at_least_s); none where the bounds' check
 * fails or too few marks have launches before them. */
#include <stddef.h>

#include "test_engine_util.h"

#define L	IG_STREAM_LEGACY
#define STEPS	40
#define OPS	10
#define KERNEL	(5 * US)	/* the true duration, never recorded */

/* @steps steps of OPS launches 1 ms apart (host work between), then a
 * sync entered @tail after the last launch that returns 5 us later: the
 * marks allow kernels of up to @tail + 5 us.  @vary: each step launches
 * its own function, which no other step's marks bound. */
static struct json_object *job_n(struct ig_engine *e, uint64_t tail,
				 uint32_t steps, bool vary, double *true_idle,
				 double *unres)
{
	struct tstream s = { 0 };
	struct json_object *j;
	uint32_t k, i;

	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	for (k = 0; k < steps; k++) {
		uint64_t t = MS + k * 12 * MS, last = 0;

		for (i = 0; i < OPS; i++) {
			last = t + i * MS;
			t_launch(&s, last, 0x1000 + (vary ? k : 0));
		}
		t_sync(&s, 100, 100, last + tail, 0, last + tail + 5 * US, L, last);
	}
	t_end(&s, 500 * MS);
	ts_feed(&s, e);
	ts_free(&s);
	j = report(e);
	*unres = jd(j, "gpu.unresolved_s");
	*true_idle = *unres - S((double)steps * OPS * KERNEL / MS);
	return j;
}

static struct json_object *job(struct ig_engine *e, uint64_t tail,
			       double *true_idle, double *unres)
{
	return job_n(e, tail, STEPS, false, true_idle, unres);
}

static void test_bounded(void **state)
{
	struct ig_engine *e = new_engine(0, 0);
	double truth, unres, est, lo, hi;
	struct json_object *j;
	char *txt;

	(void)state;
	j = job(e, 20 * US, &truth, &unres);
	assert_true(unres > 0.3);
	assert_string_equal(json_object_get_string(jpath(j, "gpu.estimate_method")), "bound");
	est = jd(j, "gpu.idle_estimated_s");
	lo = jd(j, "gpu.idle_estimated_low_s");
	hi = jd(j, "gpu.idle_estimated_high_s");
	assert_true(lo <= est && est <= hi);
	assert_true(lo <= truth && truth <= hi);
	/* kernels of 25 us at most: 400 of them, 10 ms of 361 */
	assert_near(hi - lo, S(10), S(0.1));
	assert_near(hi, unres, 1e-6);
	assert_true(ji(j, "gpu.estimate_fit.syncs_checked") >= 20);
	assert_null(jpath(j, "gpu.estimate_refused"));
	/* the bound apart is the interval's low end where the point stands */
	assert_non_null(jpath(j, "gpu.idle_at_least_s"));
	assert_near(jd(j, "gpu.idle_at_least_s"), lo, 1e-6);
	json_object_put(j);
	txt = report_text(e);
	assert_non_null(strstr(txt, "syncs that returned at once"));
	assert_null(strstr(txt, "at least"));
	free(txt);
	ig_engine_free(e);
}

static void test_too_loose(void **state)
{
	struct ig_engine *e = new_engine(0, 0);
	double truth, unres, least;
	struct json_object *j, *dv;
	char *txt;

	(void)state;
	j = job(e, 900 * US, &truth, &unres);
	assert_null(jpath(j, "gpu.idle_estimated_s"));
	assert_null(jpath(j, "gpu.idle_estimated_low_s"));
	assert_null(jpath(j, "gpu.estimate_method"));
	assert_int_equal(json_object_array_length(jpath(j, "gpu.estimated_causes")), 0);
	assert_non_null(strstr(json_object_get_string(jpath(j, "gpu.estimate_refused")),
			       "syncs that returned at once bound idle only to"));
	/* refused for its width alone: the bounds' lower end stands apart,
	 * kernels of 905 us at most, 400 of them */
	assert_non_null(jpath(j, "gpu.idle_at_least_s"));
	least = jd(j, "gpu.idle_at_least_s");
	assert_true(least <= truth);
	assert_near(least, unres - S(400 * 0.905), S(0.5));
	dv = json_object_array_get_idx(jpath(j, "gpu.devices"), 0);
	assert_non_null(dv);
	assert_near(jd(dv, "idle_at_least_s"), least, 1e-6);
	assert_null(jpath(dv, "idle_estimated_s"));
	json_object_put(j);
	txt = report_text(e);
	assert_non_null(strstr(txt, "proven; at least"));
	assert_non_null(strstr(txt, "no estimate: the bounds leave"));
	free(txt);
	ig_engine_free(e);
}

/* Each step its own function: the other folds' marks never bound a
 * held-out step's kernels, the check fails, and no bound is given. */
static void test_check_failed(void **state)
{
	struct ig_engine *e = new_engine(0, 0);
	double truth, unres;
	struct json_object *j;
	char *txt;

	(void)state;
	j = job_n(e, 20 * US, STEPS, true, &truth, &unres);
	assert_null(jpath(j, "gpu.idle_estimated_s"));
	assert_non_null(strstr(json_object_get_string(jpath(j, "gpu.estimate_refused")),
			       "durations vary"));
	assert_null(jpath(j, "gpu.idle_at_least_s"));
	json_object_put(j);
	txt = report_text(e);
	assert_null(strstr(txt, "at least"));
	free(txt);
	ig_engine_free(e);
}

/* Five steps: too few marks to check the bounds, no bound. */
static void test_too_few(void **state)
{
	struct ig_engine *e = new_engine(0, 0);
	double truth, unres;
	struct json_object *j;

	(void)state;
	j = job_n(e, 20 * US, 5, false, &truth, &unres);
	assert_null(jpath(j, "gpu.idle_estimated_s"));
	assert_non_null(strstr(json_object_get_string(jpath(j, "gpu.estimate_refused")),
			       "too few syncs"));
	assert_null(jpath(j, "gpu.idle_at_least_s"));
	json_object_put(j);
	ig_engine_free(e);
}

/* Every fourth step's last launch call is preempted for 3 ms before its
 * op is queued, and its sync then sleeps 10 us: returned at once as the
 * syncs go (so no waiting mark), yet it proves the queue non-empty from
 * the last submission's entry to its wakeup (design §4.5), 3 ms the GPU
 * sat idle.  The interval's high end takes that busy time as possibly
 * idle, so the truth lies inside it. */
static struct json_object *preempted_job(struct ig_engine *e, uint32_t every, uint64_t sleep)
{
	struct tstream s = { 0 };
	uint32_t k, i;

	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	for (k = 0; k < STEPS; k++) {
		uint64_t t = MS + k * 15 * MS, last = 0, in;

		for (i = 0; i < OPS; i++) {
			last = t + i * MS;
			t_launch(&s, last, 0x1000);
		}
		if (k % every) {
			t_sync(&s, 100, 100, last + 20 * US, 0, last + 25 * US, L, last);
			continue;
		}
		in = last + 3 * MS + 20 * US;
		OFF(&s, .tid = 100, .t_off = last + 2 * US, .t_on = last + 3 * MS,
		    .reason = IG_R_PREEMPT, .prev_tid = 555, .prev_comm = "other");
		t_sync(&s, 100, 100, in, in + sleep, in + sleep + 5 * US, L, last);
	}
	t_end(&s, 700 * MS);
	ts_feed(&s, e);
	ts_free(&s);
	return report(e);
}

static void test_preempted_launch(void **state)
{
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;
	double span, truth, idle, lo, hi;

	(void)state;
	j = preempted_job(e, 4, 10 * US);
	span = jd(j, "gpu.span_s");
	idle = jd(j, "gpu.idle_s");
	/* the GPU ran STEPS * OPS kernels of KERNEL, one at a time */
	truth = span - S((double)STEPS * OPS * KERNEL / MS);
	assert_true(jd(j, "gpu.busy_s") >= S(STEPS / 4 * 3.0));
	assert_string_equal(json_object_get_string(jpath(j, "gpu.estimate_method")), "bound");
	lo = idle + jd(j, "gpu.idle_estimated_low_s");
	hi = idle + jd(j, "gpu.idle_estimated_high_s");
	assert_true(lo <= truth);
	assert_true(truth <= hi);
	json_object_put(j);
	ig_engine_free(e);
}

/* Every step's launch preempted: what proven busy time may hide is most
 * of the busy time, over blocks and marks; the high end never passes the
 * span less the proven idle (the GPU idle all the time at most). */
static void test_high_within_span(void **state)
{
	uint32_t every[] = { 1, 2, 3, 1, 2, 3, 1, 2 }, i;
	uint64_t sleep[] = { 10 * US, 10 * US, 10 * US, 2 * MS, 2 * MS, 2 * MS, 200 * US, 200 * US };

	(void)state;
	for (i = 0; i < sizeof(every) / sizeof(every[0]); i++) {
		struct ig_engine *e = new_engine(0, 0);
		struct json_object *j = preempted_job(e, every[i], sleep[i]);
		double span = jd(j, "gpu.span_s"), idle = jd(j, "gpu.idle_s");

		print_message("every %u sleep %llu: span %.6f, idle %.6f + high %.6f (%s)\n", every[i],
			      (unsigned long long)sleep[i], span,
			      idle, jd(j, "gpu.idle_estimated_high_s"),
			      json_object_get_string(jpath(j, "gpu.estimate_method")));
		assert_true(idle + jd(j, "gpu.idle_estimated_high_s") <= span + 1e-9);
		json_object_put(j);
		ig_engine_free(e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_too_loose),
		cmocka_unit_test(test_check_failed),
		cmocka_unit_test(test_too_few),
		cmocka_unit_test(test_preempted_launch),
		cmocka_unit_test(test_high_within_span),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
