// SPDX-License-Identifier: GPL-2.0
/* How unresolved spans ended: host-bound, GPU-bound or open. */
#include "test_engine_util.h"

#define L	IG_STREAM_LEGACY
#define EPS	1e-9

static void assert_bound(struct json_object *j, const char *where,
			 double host_ms, double gpu_ms, double open_ms)
{
	char p[128];
	double h, g, o, u;

	snprintf(p, sizeof(p), "%s.unresolved_host_bound_s", where);
	h = jd(j, p);
	snprintf(p, sizeof(p), "%s.unresolved_gpu_bound_s", where);
	g = jd(j, p);
	snprintf(p, sizeof(p), "%s.unresolved_open_s", where);
	o = jd(j, p);
	snprintf(p, sizeof(p), "%s.unresolved_s", where);
	u = jd(j, p);
	assert_near(h, S(host_ms), EPS);
	assert_near(g, S(gpu_ms), EPS);
	assert_near(o, S(open_ms), EPS);
	/* the three parts are the whole */
	assert_near(h + g + o, u, 3e-6);
}

static struct json_object *dev0(struct json_object *j)
{
	return json_object_array_get_idx(jpath(j, "gpu.devices"), 0);
}

/* Syncs that return at once, one of them after being preempted: the
 * unresolved time before them is host-bound, and the time after them is
 * known idle until the next submission. */
static void test_host_bound(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;
	char *txt;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_submit(&s, 100, 100, 10 * MS, L);
	t_submit(&s, 100, 100, 20 * MS, L);
	t_sync(&s, 100, 100, 30 * MS, 0, 30 * MS + 20 * US, L, 20 * MS);
	t_submit(&s, 100, 100, 40 * MS, L);
	/* 5 ms in the call, all but 30 us of it preempted */
	OFF(&s, .tid = 100, .t_off = 50 * MS + 10 * US,
	    .t_on = 55 * MS - 20 * US, .reason = IG_R_PREEMPT);
	t_sync(&s, 100, 100, 50 * MS, 0, 55 * MS, L, 40 * MS);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);

	/* [10,30.02] and [40,55] unresolved, [30.02,40] idle */
	assert_near(jd(j, "gpu.idle_s"), S(10) - S(0.02), EPS);
	assert_int_equal(ji(j, "gpu.gaps"), 1);
	assert_bound(j, "gpu", 20.02 + 15, 0, 0);
	assert_near(jd(dev0(j), "unresolved_host_bound_s"), S(35.02), EPS);
	assert_near(jd(j, "gpu.at_once_threshold_us"), IG_AT_ONCE_NS / 1e3,
		    1e-9);
	json_object_put(j);

	txt = report_text(e);
	assert_non_null(strstr(txt, "host-bound: in 100% of unresolved time"));
	assert_non_null(strstr(txt, "the host was computing ("));
	free(txt);
	ig_engine_free(e);
	ts_free(&s);
}

/* A sync that spins for the GPU (never sleeps) and one that sleeps: both
 * waited, so the unresolved time before them is GPU-bound; a stream never
 * synced again leaves its time open. */
static void test_gpu_bound_and_open(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;
	char *txt;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_submit(&s, 100, 100, 10 * MS, L);
	t_sync(&s, 100, 100, 12 * MS, 0, 30 * MS, L, 10 * MS);
	t_submit(&s, 100, 100, 40 * MS, L);
	t_submit(&s, 100, 100, 45 * MS, L);
	OFF(&s, .tid = 100, .t_off = 47 * MS, .t_wake = 60 * MS,
	    .t_on = 60 * MS, .reason = IG_R_FUTEX);
	t_sync(&s, 100, 100, 46 * MS, 60 * MS, 60 * MS + 10 * US, L,
	       45 * MS);
	t_submit(&s, 100, 100, 70 * MS, L);
	t_submit(&s, 100, 100, 73 * MS, L);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);

	/* [10,30] unresolved, ended by the spinning sync; [40,45]
	 * unresolved, then busy [45,60]; [70,73] never resolved */
	assert_near(jd(j, "gpu.busy_s"), S(15), EPS);
	assert_bound(j, "gpu", 0, 20 + 5, 3);
	assert_near(jd(dev0(j), "unresolved_gpu_bound_s"), S(25), EPS);
	assert_near(jd(dev0(j), "unresolved_open_s"), S(3), EPS);
	json_object_put(j);

	txt = report_text(e);
	assert_non_null(strstr(txt, "GPU-bound: in 89% of unresolved time"));
	free(txt);
	ig_engine_free(e);
	ts_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_bound),
		cmocka_unit_test(test_gpu_bound_and_open),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
