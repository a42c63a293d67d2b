// SPDX-License-Identifier: GPL-2.0
/* The GPU evidence model: known idle, known busy and unresolved time. */
#include "test_engine_util.h"

#define L	IG_STREAM_LEGACY
#define SA	0x7f0000001000ULL
#define SB	0x7f0000002000ULL
#define EPS	1e-9

static void assert_span(struct json_object *j, double busy_ms, double idle_ms,
			double unres_ms)
{
	assert_near(jd(j, "gpu.busy_s"), S(busy_ms), EPS);
	assert_near(jd(j, "gpu.idle_s"), S(idle_ms), EPS);
	assert_near(jd(j, "gpu.unresolved_s"), S(unres_ms), EPS);
}

static struct json_object *gap(struct json_object *j, size_t i)
{
	struct json_object *a = jpath(j, "gpu.gap_list");

	assert_true(i < json_object_array_length(a));
	return json_object_array_get_idx(a, i);
}

/* One stream: launches, a blocking sync, host work, launches again. */
static void test_one_stream(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_submit(&s, 100, 100, 10 * MS, L);
	/* blocked in the sync 21..30, runnable 30..31 behind "stress" */
	OFF(&s, .tid = 100, .t_off = 21 * MS, .t_wake = 30 * MS,
	    .t_on = 31 * MS, .reason = IG_R_FUTEX,
	    .flags = IG_F_FUTEX_BITSET | IG_F_IN_CUDA_SYNC, .prev_tid = 555,
	    .prev_comm = "stress", .cpu = 3);
	t_sync(&s, 100, 100, 20 * MS, 30 * MS, 31 * MS, L, 18 * MS);
	CU(&s, .kind = IG_CU_API, .api = IG_API_cuMemAlloc_v2, .tid = 100,
	   .ts = 45 * MS, .t_begin = 40 * MS);
	t_submit(&s, 100, 100, 50 * MS, L);
	t_sync(&s, 100, 100, 60 * MS, 69 * MS, 70 * MS, L, 58 * MS);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);

	/* [10,18] unresolved, [18,30] busy, [30,50] idle, [50,58]
	 * unresolved, [58,69] busy; the gap open from 69 is out of the
	 * span, idle with no cause yet up to the trace's end (idle_open) */
	assert_span(j, 23, 20, 16);
	assert_near(jd(j, "gpu.idle_open_s"), 0.031, EPS);
	assert_int_equal(ji(j, "gpu.gaps"), 1);
	assert_int_equal(ji(j, "gpu.span_start_ns"), 10 * MS);
	assert_int_equal(ji(j, "gpu.span_end_ns"), 69 * MS);
	assert_int_equal(ji(gap(j, 0), "start_ns"), 30 * MS);
	assert_int_equal(ji(gap(j, 0), "end_ns"), 50 * MS);
	assert_int_equal(ji(gap(j, 0), "tid"), 100);
	assert_near(jd(j, "duration_s"), 0.1, EPS);

	/* the runnable ms after the wakeup is starvation, by "stress" */
	assert_near(cause_s(j, "causes", "cpu_starvation"), S(1), EPS);
	assert_near(detail_s(j, "causes", "cpu_starvation", "process", "comm",
			     "stress"), S(1), EPS);
	assert_near(cause_s(j, "causes", "cuda_api"), S(5), EPS);
	assert_near(detail_s(j, "causes", "cuda_api", "api", "api",
			     "cuMemAlloc_v2"), S(5), EPS);
	assert_near(cause_s(j, "causes", "host_compute"), S(14), EPS);
	/* unresolved spans: the feeder was launching on CPU */
	assert_near(cause_s(j, "unresolved_causes", "host_compute"), S(16),
		    EPS);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Idle only while every stream is drained. */
static void test_two_streams(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_task(&s, 0, 101, 100, 1, "python3");
	t_submit(&s, 100, 100, 10 * MS, SA);
	t_submit(&s, 101, 100, 12 * MS, SB);
	t_sync(&s, 100, 100, 20 * MS, 29 * MS, 30 * MS, SA, 11 * MS);
	t_sync(&s, 101, 100, 25 * MS, 39 * MS, 40 * MS, SB, 12 * MS);
	t_submit(&s, 100, 100, 60 * MS, SA);
	t_sync(&s, 100, 100, 70 * MS, 79 * MS, 80 * MS, SA, 61 * MS);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);

	/* A drained at 29 while B stayed pending until 39 */
	assert_span(j, 46, 21, 2);
	assert_int_equal(ji(j, "gpu.gaps"), 1);
	assert_int_equal(ji(gap(j, 0), "start_ns"), 39 * MS);
	assert_int_equal(ji(gap(j, 0), "end_ns"), 60 * MS);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* A drained point (a wakeup) older than another stream's submission that
 * was already seen: the gap between them is found late, and its feeder is
 * the other thread. */
static void test_late_drain(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_task(&s, 0, 101, 100, 1, "python3");
	t_submit(&s, 100, 100, 10 * MS, SA);
	t_sync(&s, 100, 100, 20 * MS, 30 * MS, 35 * MS, SA, 10 * MS);
	t_submit(&s, 101, 100, 32 * MS, SB);
	t_sync(&s, 101, 100, 40 * MS, 49 * MS, 50 * MS, SB, 32 * MS);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);

	assert_span(j, 37, 2, 0);
	assert_int_equal(ji(j, "gpu.gaps"), 1);
	assert_int_equal(ji(gap(j, 0), "start_ns"), 30 * MS);
	assert_int_equal(ji(gap(j, 0), "end_ns"), 32 * MS);
	assert_int_equal(ji(gap(j, 0), "tid"), 101);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Two processes share device 0; a third uses device 1. */
static double causes_sum(struct json_object *a)
{
	double sum = 0;
	size_t i;

	assert_non_null(a);
	for (i = 0; i < json_object_array_length(a); i++)
		sum += jd(json_object_array_get_idx(a, i), "seconds");
	return sum;
}

static void test_processes_devices(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *devs, *d0, *d1;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "train0");
	t_task(&s, 0, 200, 200, 1, "train1");
	t_task(&s, 0, 300, 300, 1, "train2");
	/* 100 set its context up before the probes came: NVML says where */
	t_gpudev(&s, 0, 100, 0, IG_GD_NVML, -1, "GPU-aaaa");
	CU(&s, .kind = IG_CU_CTX, .api = IG_API_cuDevicePrimaryCtxRetain,
	   .tid = 200, .ts = 1 * MS, .arg = 0);
	CU(&s, .kind = IG_CU_CTX, .api = IG_API_cuDevicePrimaryCtxRetain,
	   .tid = 300, .ts = 1 * MS, .arg = 1);
	t_submit(&s, 100, 100, 10 * MS, L);
	t_submit(&s, 200, 200, 15 * MS, L);
	t_sync(&s, 100, 100, 20 * MS, 30 * MS, 31 * MS, L, 10 * MS);
	t_sync(&s, 200, 200, 20 * MS, 40 * MS, 41 * MS, L, 15 * MS);
	t_submit(&s, 100, 100, 60 * MS, L);
	t_sync(&s, 100, 100, 61 * MS, 70 * MS, 71 * MS, L, 60 * MS);

	t_submit(&s, 300, 300, 20 * MS, L);
	t_sync(&s, 300, 300, 21 * MS, 25 * MS, 26 * MS, L, 20 * MS);
	t_submit(&s, 300, 300, 50 * MS, L);
	t_sync(&s, 300, 300, 51 * MS, 55 * MS, 56 * MS, L, 50 * MS);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);

	devs = jpath(j, "gpu.devices");
	assert_int_equal(json_object_array_length(devs), 2);
	d0 = json_object_array_get_idx(devs, 0);
	d1 = json_object_array_get_idx(devs, 1);
	assert_int_equal(ji(d0, "device"), 0);
	assert_int_equal(ji(d1, "device"), 1);
	assert_string_equal(json_object_get_string(jpath(d0, "device_source")),
			    "context");
	assert_string_equal(json_object_get_string(jpath(d0, "uuid")),
			    "GPU-aaaa");
	/* device 0 is idle only after both processes drained (40) */
	assert_near(jd(d0, "busy_s"), S(40), EPS);
	assert_near(jd(d0, "idle_s"), S(20), EPS);
	assert_near(jd(d0, "unresolved_s"), 0, EPS);
	assert_near(jd(d1, "busy_s"), S(10), EPS);
	assert_near(jd(d1, "idle_s"), S(25), EPS);
	assert_int_equal(ji(d0, "gaps"), 1);
	assert_int_equal(ji(d1, "gaps"), 1);
	assert_span(j, 50, 45, 0);
	assert_int_equal(ji(j, "gpu.gaps"), 2);
	/* each GPU's cause time is its own idle time, and the two make the
	 * whole; so do their gaps */
	assert_near(causes_sum(jpath(d0, "causes")), S(20), EPS);
	assert_near(causes_sum(jpath(d1, "causes")), S(25), EPS);
	assert_near(causes_sum(jpath(j, "causes")), S(45), EPS);
	assert_int_equal(ji(d0, "gap_histogram.count"), 1);
	assert_int_equal(ji(d1, "gap_histogram.count"), 1);
	assert_near(jd(d1, "gap_histogram.sum_s"), S(25), EPS);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Nothing places a process's GPU: a device of its own, "device": null,
 * never another process's GPU 0; LOCAL_RANK (an older recording's
 * gpudev) places nothing either, a rank is not a GPU, and the RANK it
 * gives is labelled self-reported. */
static void test_device_unknown(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *devs, *d, *sr;
	int i, nnull = 0;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "train0");
	t_task(&s, 0, 200, 200, 1, "train1");
	t_task(&s, 0, 300, 300, 1, "train2");
	CU(&s, .kind = IG_CU_CTX, .api = IG_API_cuDevicePrimaryCtxRetain,
	   .tid = 200, .ts = 1 * MS, .arg = 0);
	/* NVML lists it nowhere, its environment says nothing */
	t_gpudev(&s, 0, 100, -1, IG_GD_NONE, -1, NULL);
	/* LOCAL_RANK=3, RANK=7 */
	t_gpudev(&s, 0, 300, 3, IG_GD_LOCAL_RANK, 7, NULL);
	t_submit(&s, 100, 100, 10 * MS, L);
	t_sync(&s, 100, 100, 11 * MS, 20 * MS, 21 * MS, L, 10 * MS);
	t_submit(&s, 200, 200, 10 * MS, L);
	t_sync(&s, 200, 200, 11 * MS, 30 * MS, 31 * MS, L, 10 * MS);
	t_submit(&s, 300, 300, 10 * MS, L);
	t_sync(&s, 300, 300, 11 * MS, 40 * MS, 41 * MS, L, 10 * MS);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);
	devs = jpath(j, "gpu.devices");
	assert_int_equal(json_object_array_length(devs), 3);
	for (i = 0; i < 3; i++) {
		d = json_object_array_get_idx(devs, i);
		sr = jpath(d, "self_reported");
		if (!jpath(d, "device") && ji(d, "pid") == 100) {
			nnull++;
			assert_null(jpath(d, "device_source"));
			assert_near(jd(d, "busy_s"), S(10), EPS);
		} else if (!jpath(d, "device")) {
			nnull++;
			assert_int_equal(ji(d, "pid"), 300);
			assert_null(jpath(d, "device_source"));
			assert_near(jd(d, "busy_s"), S(30), EPS);
			assert_int_equal(ji(d, "rank"), 7);
			assert_string_equal(json_object_get_string(
				jpath(d, "rank_source")), "environment");
			assert_int_equal(json_object_array_length(sr), 1);
		} else {
			assert_int_equal(ji(d, "device"), 0);
			assert_near(jd(d, "busy_s"), S(20), EPS);
			assert_int_equal(json_object_array_length(sr), 0);
		}
	}
	assert_int_equal(nnull, 2);
	/* no ordinal 0 by default either: the exporter would read GPU 0 */
	for (i = 0; i < 3; i++) {
		struct json_object *p = json_object_array_get_idx(jpath(j, "processes"), i);

		if (ji(p, "pid") == 200)
			assert_int_equal(ji(p, "ordinal"), 0);
		else
			assert_null(jpath(p, "ordinal"));
	}
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Two containers' processes each see their own GPU as ordinal 0: with
 * the host GPU of each ordinal given (IG_REC_GPUMAP), they are two
 * devices, not one GPU busy whenever either is. */
static void test_gpumap(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *devs, *p;
	uint32_t tgid;
	size_t i;

	(void)state;
	t_meta(&s, 0);
	for (tgid = 100; tgid <= 200; tgid += 100) {
		union ig_rec *r = ts_new(&s, IG_REC_GPUMAP, sizeof(struct ig_gpumap),
					 tgid, tgid, 1 * MS);

		r->g.n = 1;
		r->g.dev[0] = tgid == 100 ? 5 : 7;
		t_task(&s, 0, tgid, tgid, 1, tgid == 100 ? "ctr-a" : "ctr-b");
	}
	t_submit(&s, 100, 100, 10 * MS, L);
	t_sync(&s, 100, 100, 11 * MS, 20 * MS, 21 * MS, L, 10 * MS);
	t_submit(&s, 200, 200, 30 * MS, L);
	t_sync(&s, 200, 200, 31 * MS, 40 * MS, 41 * MS, L, 30 * MS);
	t_submit(&s, 100, 100, 50 * MS, L);
	t_sync(&s, 100, 100, 51 * MS, 60 * MS, 61 * MS, L, 50 * MS);
	t_submit(&s, 200, 200, 70 * MS, L);
	t_sync(&s, 200, 200, 71 * MS, 80 * MS, 81 * MS, L, 70 * MS);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);
	devs = jpath(j, "gpu.devices");
	assert_int_equal(json_object_array_length(devs), 2);
	assert_int_equal(ji(json_object_array_get_idx(devs, 0), "device"), 5);
	assert_int_equal(ji(json_object_array_get_idx(devs, 1), "device"), 7);
	/* each its own idle gap: 20..50 on 5, 40..70 on 7 */
	assert_near(jd(json_object_array_get_idx(devs, 0), "idle_s"), S(30), EPS);
	assert_near(jd(json_object_array_get_idx(devs, 1), "idle_s"), S(30), EPS);
	for (i = 0; i < 2; i++) {
		p = json_object_array_get_idx(jpath(j, "processes"), i);
		assert_int_equal(ji(p, "device"), ji(p, "pid") == 100 ? 5 : 7);
		assert_int_equal(ji(p, "ordinal"), 0);
	}
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* The stream drain rule (docs/design.md §4.2), both sides' one copy. */
static void test_syncs_with(void **state)
{
	const uint64_t pa = IG_STREAM_PTD_BIT | 10, pb = IG_STREAM_PTD_BIT | 11;

	(void)state;
	assert_true(ig_stream_syncs_with(L, 0, L, 0));
	assert_true(ig_stream_syncs_with(L, 0, pa, 0));
	assert_true(ig_stream_syncs_with(L, 0, SA, 1));
	assert_false(ig_stream_syncs_with(L, 0, SA, 0));
	assert_true(ig_stream_syncs_with(pa, 0, pa, 0));
	assert_true(ig_stream_syncs_with(pa, 0, L, 0));
	assert_false(ig_stream_syncs_with(pa, 0, pb, 0));
	assert_false(ig_stream_syncs_with(pa, 0, SA, 1));
	assert_true(ig_stream_syncs_with(SA, 1, L, 0));
	assert_false(ig_stream_syncs_with(SA, 0, L, 0));
	assert_true(ig_stream_syncs_with(SA, 0, SA, 0));
	assert_false(ig_stream_syncs_with(SA, 1, SB, 1));
}

/*
 * Thread 101 launches on stream @pb (its per-thread stream, or a blocking
 * stream it created) at 5; thread 100 copies synchronously over [10, 30];
 * thread 101 launches again at 60 and syncs until 70.  A legacy copy
 * waited for @pb: idle [30, 60].  A copy on thread 100's own per-thread
 * stream did not: no idle.
 */
static void ptd_copy_case(uint64_t copy_stream, uint32_t api, uint64_t pb,
			  double idle_ms)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_task(&s, 0, 101, 100, 1, "python3");
	if (!(pb & IG_STREAM_PTD_BIT))
		CU(&s, .kind = IG_CU_STREAM_NEW, .api = IG_API_cuStreamCreate,
		   .tid = 101, .tgid = 100, .ts = 1 * MS, .stream = pb);
	t_submit(&s, 101, 100, 5 * MS, pb);
	CU(&s, .kind = IG_CU_SYNC_BEGIN, .api = api, .tid = 100,
	   .ts = 10 * MS, .stream = copy_stream, .nsub = 1);
	CU(&s, .kind = IG_CU_SYNC_END, .api = api, .tid = 100,
	   .ts = 30 * MS, .stream = copy_stream, .t_begin = 10 * MS,
	   .t_wake = 28 * MS, .last_submit = 10 * MS, .flags = IG_CF_BLOCKED);
	t_submit(&s, 101, 100, 60 * MS, pb);
	t_sync(&s, 101, 100, 61 * MS, 70 * MS, 70 * MS, pb, 60 * MS);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);
	assert_near(jd(j, "gpu.idle_s"), S(idle_ms), EPS);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

static void test_ptd_copy(void **state)
{
	const uint64_t pa = IG_STREAM_PTD_BIT | 100, pb = IG_STREAM_PTD_BIT | 101;

	(void)state;
	ptd_copy_case(L, IG_API_cuMemcpyHtoD_v2, pb, 30);
	ptd_copy_case(L, IG_API_cuMemcpyHtoD_v2, SA, 30);
	ptd_copy_case(pa, IG_API_cuMemcpyHtoD_v2_ptds, pb, 0);
	ptd_copy_case(pa, IG_API_cuMemcpyHtoD_v2_ptds, SA, 0);
}

/*
 * A synchronous copy is unresolved while it runs, never busy, and drained
 * only at its return: it may wait for earlier work (a wakeup early in the
 * call) and then stage and copy without waiting again.
 */
static void test_sync_copy(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	CU(&s, .kind = IG_CU_SYNC_BEGIN, .api = IG_API_cuMemcpyHtoD_v2,
	   .tid = 100, .ts = 10 * MS, .stream = L, .nsub = 1);
	CU(&s, .kind = IG_CU_SYNC_END, .api = IG_API_cuMemcpyHtoD_v2,
	   .tid = 100, .ts = 30 * MS, .stream = L, .t_begin = 10 * MS,
	   .t_wake = 12 * MS, .last_submit = 10 * MS, .flags = IG_CF_BLOCKED);
	t_submit(&s, 100, 100, 40 * MS, L);
	t_sync(&s, 100, 100, 41 * MS, 50 * MS, 51 * MS, L, 40 * MS);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);

	/* busy [40, 50], idle [30, 40], unresolved [10, 30] */
	assert_span(j, 10, 10, 20);
	assert_near(cause_s(j, "causes", "host_compute"), S(10), EPS);
	assert_near(cause_s(j, "causes", "cuda_api"), 0, EPS);
	/* the copy call itself is what the unresolved time was spent in */
	assert_near(cause_s(j, "unresolved_causes", "cuda_api"), S(20), EPS);
	assert_int_equal(ji(j, "gpu.submissions"), 2);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/*
 * A sync woken (by a lock holder, say) before the GPU finished, that then
 * ran on for long (spinning on the GPU), or was off CPU again before it
 * returned (polling): the wakeup does not mark the GPU's completion, the
 * return does.
 */
static void wake_case(bool preempted_after)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_submit(&s, 100, 100, 10 * MS, L);
	OFF(&s, .tid = 100, .t_off = 21 * MS, .t_wake = 22 * MS,
	    .t_on = 22 * MS + 10 * US, .reason = IG_R_FUTEX,
	    .flags = IG_F_FUTEX_PLAIN | IG_F_IN_CUDA_SYNC);
	if (preempted_after)
		OFF(&s, .tid = 100, .t_off = 22 * MS + 50 * US,
		    .t_on = 29 * MS + 950 * US, .reason = IG_R_PREEMPT,
		    .flags = IG_F_IN_CUDA_SYNC);
	t_sync(&s, 100, 100, 20 * MS, 22 * MS, 30 * MS, L, 10 * MS);
	t_submit(&s, 100, 100, 40 * MS, L);
	t_sync(&s, 100, 100, 41 * MS, 0, 50 * MS, L, 40 * MS);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);

	/* idle from the return (30), not from the wakeup (22) */
	assert_int_equal(ji(j, "gpu.gaps"), 1);
	assert_int_equal(ji(gap(j, 0), "start_ns"), 30 * MS);
	assert_int_equal(ji(gap(j, 0), "end_ns"), 40 * MS);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

static void test_wake_then_spin(void **state)
{
	(void)state;
	wake_case(false);
	wake_case(true);
}

/*
 * A sync woken by the holder of a mutex (a driver's internal lock, a plain
 * futex) before the GPU finished, left runnable on a loaded host, that then
 * ran, found the GPU done and returned at once: the GPU may have finished
 * any time before the thread ran again.  Idle from when it got back on the
 * CPU, not from the wakeup; the runnable time between is unresolved.  (A
 * wait that is not a mutex ends with the GPU's completion: test_one_stream.)
 */
static void test_wake_then_preempted(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_submit(&s, 100, 100, 10 * MS, L);
	OFF(&s, .tid = 100, .t_off = 21 * MS, .t_wake = 22 * MS,
	    .t_on = 29 * MS + 900 * US, .reason = IG_R_FUTEX,
	    .flags = IG_F_FUTEX_PLAIN | IG_F_IN_CUDA_SYNC);
	t_sync(&s, 100, 100, 20 * MS, 22 * MS, 29 * MS + 910 * US, L,
	       10 * MS);
	t_submit(&s, 100, 100, 40 * MS, L);
	t_sync(&s, 100, 100, 41 * MS, 0, 50 * MS, L, 40 * MS);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);

	assert_int_equal(ji(j, "gpu.gaps"), 1);
	assert_int_equal(ji(gap(j, 0), "start_ns"), 29 * MS + 900 * US);
	assert_int_equal(ji(gap(j, 0), "end_ns"), 40 * MS);
	/* busy [10, 22] (slept with the queue non-empty), unresolved
	 * [22, 29.9] and [40, 50] (no sleep in the last sync) */
	assert_near(jd(j, "gpu.busy_s"), S(12), EPS);
	assert_near(jd(j, "gpu.idle_s"), 10e-3 + 100e-6, EPS);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* A stream nobody synchronises keeps the device from ever being idle. */
static void test_never_synced(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;
	uint64_t i;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	CU(&s, .kind = IG_CU_STREAM_NEW, .api = IG_API_cuStreamCreate,
	   .tid = 100, .ts = 5 * MS, .stream = SA, .arg = 1);
	t_submit(&s, 100, 100, 10 * MS, SA);
	for (i = 0; i < 5; i++) {
		uint64_t b = 20 * MS + i * 20 * MS;

		t_submit(&s, 100, 100, b, L);
		t_sync(&s, 100, 100, b + 5 * MS, b + 10 * MS, b + 11 * MS, L,
		       b);
	}
	t_end(&s, 200 * MS);
	ts_feed(&s, e);
	j = report(e);

	/* legacy syncs do not drain a non-blocking stream */
	assert_span(j, 50, 0, 51);
	assert_int_equal(ji(j, "gpu.gaps"), 0);
	assert_int_equal(json_object_array_length(jpath(j, "causes")), 0);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);

	/* only submissions, never a sync: all unresolved */
	e = new_engine(0, 0);
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_submit(&s, 100, 100, 10 * MS, L);
	t_submit(&s, 100, 100, 20 * MS, L);
	t_submit(&s, 100, 100, 30 * MS, L);
	t_end(&s, 200 * MS);
	ts_feed(&s, e);
	j = report(e);
	assert_span(j, 0, 0, 20);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* NOT_READY proves busy since the last submission; SUCCESS drains. */
static void test_queries(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_submit(&s, 100, 100, 10 * MS, L);
	CU(&s, .kind = IG_CU_QUERY_BUSY, .api = IG_API_cuStreamQuery,
	   .tid = 100, .ts = 20 * MS, .stream = L, .last_submit = 15 * MS,
	   .ret = 600);
	CU(&s, .kind = IG_CU_QUERY_DONE, .api = IG_API_cuStreamQuery,
	   .tid = 100, .ts = 25 * MS, .stream = L, .last_submit = 15 * MS);
	t_submit(&s, 100, 100, 40 * MS, L);
	CU(&s, .kind = IG_CU_QUERY_DONE, .api = IG_API_cuStreamQuery,
	   .tid = 100, .ts = 45 * MS, .stream = L, .last_submit = 40 * MS);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);

	assert_span(j, 5, 15, 15);
	assert_int_equal(ji(j, "gpu.span_end_ns"), 45 * MS);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

static void event_sync(struct tstream *s, unsigned int evflag)
{
	t_meta(s, 0);
	t_task(s, 0, 100, 100, 1, "python3");
	t_submit(s, 100, 100, 10 * MS, L);
	CU(s, .kind = IG_CU_SYNC_BEGIN, .api = IG_API_cuEventSynchronize,
	   .tid = 100, .ts = 20 * MS, .stream = L);
	CU(s, .kind = IG_CU_SYNC_END, .api = IG_API_cuEventSynchronize,
	   .tid = 100, .ts = 30 * MS, .stream = L, .t_begin = 20 * MS,
	   .t_wake = 29 * MS, .last_submit = 10 * MS,
	   .flags = IG_CF_BLOCKED | evflag);
	t_submit(s, 100, 100, 40 * MS, L);
	CU(s, .kind = IG_CU_SYNC_BEGIN, .api = IG_API_cuCtxSynchronize,
	   .tid = 100, .ts = 50 * MS);
	CU(s, .kind = IG_CU_SYNC_END, .api = IG_API_cuCtxSynchronize,
	   .tid = 100, .ts = 60 * MS, .t_begin = 50 * MS, .t_wake = 59 * MS,
	   .last_submit = 40 * MS, .flags = IG_CF_BLOCKED);
	t_submit(s, 100, 100, 70 * MS, L);
	t_sync(s, 100, 100, 71 * MS, 80 * MS, 81 * MS, L, 70 * MS);
	t_end(s, 100 * MS);
}

/* An event older than the last submission proves nothing drained. */
static void test_event_sync(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	event_sync(&s, IG_CF_EVENT_PARTIAL);
	ts_feed(&s, e);
	j = report(e);
	assert_span(j, 29, 11, 30);
	json_object_put(j);
	ig_engine_free(e);

	e = new_engine(0, 0);
	event_sync(&s, IG_CF_EVENT_ALL);
	ts_feed(&s, e);
	j = report(e);
	/* now [29,40] is a second gap and [10,29] busy */
	assert_span(j, 48, 22, 0);
	assert_int_equal(ji(j, "gpu.gaps"), 2);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Work submitted after the sync's drained point (no SUBMIT seen for it):
 * nothing is proven idle. */
static void test_submit_after_drain(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_submit(&s, 100, 100, 10 * MS, L);
	t_sync(&s, 100, 100, 20 * MS, 30 * MS, 35 * MS, L, 32 * MS);
	t_submit(&s, 100, 100, 50 * MS, L);
	t_sync(&s, 100, 100, 55 * MS, 60 * MS, 61 * MS, L, 50 * MS);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);
	assert_span(j, 10, 0, 40);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Another thread queues work while the sync waits: the sync proves only
 * what was queued when it was called. */
static void test_submit_during_sync(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_task(&s, 0, 101, 100, 1, "python3");
	t_submit(&s, 100, 100, 10 * MS, SA);
	t_submit(&s, 101, 100, 25 * MS, SA);
	t_sync(&s, 100, 100, 20 * MS, 30 * MS, 31 * MS, SA, 25 * MS);
	t_sync(&s, 100, 100, 40 * MS, 45 * MS, 46 * MS, SA, 25 * MS);
	t_submit(&s, 100, 100, 60 * MS, SA);
	t_sync(&s, 100, 100, 61 * MS, 70 * MS, 71 * MS, SA, 60 * MS);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);
	assert_int_equal(ji(j, "gpu.gaps"), 1);
	assert_int_equal(ji(gap(j, 0), "start_ns"), 45 * MS);
	assert_int_equal(ji(gap(j, 0), "end_ns"), 60 * MS);
	/* still busy from the late submission to each wakeup */
	assert_span(j, 30, 15, 15);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* A process that exits takes its queues with it. */
static void test_process_exit(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "train");
	t_task(&s, 0, 200, 200, 1, "helper");
	t_gpudev(&s, 0, 100, 0, IG_GD_NVML, -1, NULL);
	t_gpudev(&s, 0, 200, 0, IG_GD_NVML, -1, NULL);
	t_submit(&s, 100, 100, 10 * MS, L);
	t_submit(&s, 200, 200, 12 * MS, L);
	t_sync(&s, 100, 100, 20 * MS, 30 * MS, 31 * MS, L, 10 * MS);
	t_proc(&s, 50 * MS, IG_PROC_GROUP_EXIT, 200, 200, 0, NULL);
	t_submit(&s, 100, 100, 70 * MS, L);
	t_sync(&s, 100, 100, 71 * MS, 80 * MS, 81 * MS, L, 70 * MS);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);
	assert_int_equal(ji(j, "gpu.gaps"), 1);
	assert_int_equal(ji(gap(j, 0), "start_ns"), 50 * MS);
	assert_int_equal(ji(gap(j, 0), "end_ns"), 70 * MS);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Evidence lost in a range: no idle time is proven there. */
static void test_marked_loss(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_submit(&s, 100, 100, 10 * MS, L);
	t_sync(&s, 100, 100, 20 * MS, 30 * MS, 31 * MS, L, 10 * MS);
	ts_feed(&s, e);
	/* records from 40 to 45 ms may be missing */
	ig_gpu_mark_lost(e, 40 * MS, 45 * MS);
	t_submit(&s, 100, 100, 60 * MS, L);
	t_sync(&s, 100, 100, 61 * MS, 70 * MS, 71 * MS, L, 60 * MS);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);
	/* [30,40] and [45,60] idle, [40,45] unresolved */
	assert_span(j, 30, 25, 5);
	assert_int_equal(ji(j, "gpu.gaps"), 2);
	assert_true(json_object_get_boolean(jpath(j, "gpu.evidence_lost")));
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* The aggregator's own records are no CPU's: one placed between a CPU's
 * last record before a loss and its marked one (the dashboard sample taken
 * as the tracer resumes) does not shorten the loss range. */
static void test_loss_after_user_record(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;
	union ig_rec *r;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_submit(&s, 100, 100, 10 * MS, L);
	t_sync(&s, 100, 100, 20 * MS, 30 * MS, 31 * MS, L, 10 * MS);
	/* CPU 0's last record before its reserves fail */
	OFF(&s, .tid = 100, .t_off = 38 * MS, .t_on = 40 * MS, .reason = IG_R_PREEMPT);
	/* user space, cpu 0 like all its records, at a time of its own */
	r = ts_new(&s, IG_REC_NVML, sizeof(struct ig_nvml), 0, 0, 50 * MS);
	r->n.util_pct = 10;
	/* CPU 0's next record: the ones in between may be missing */
	OFF(&s, .tid = 100, .t_off = 58 * MS, .t_on = 60 * MS, .reason = IG_R_PREEMPT);
	s.r[s.n - 1].h.cpu |= IG_HDR_LOST_BEFORE;
	t_submit(&s, 100, 100, 70 * MS, L);
	t_sync(&s, 100, 100, 71 * MS, 80 * MS, 81 * MS, L, 70 * MS);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);
	/* [30,40] and [60,70] idle, [40,60] unresolved */
	assert_span(j, 30, 20, 20);
	assert_int_equal(ji(j, "gpu.gaps"), 2);
	assert_int_equal(ji(gap(j, 0), "end_ns"), 40 * MS);
	assert_int_equal(ji(gap(j, 1), "start_ns"), 60 * MS);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Loss ranges come in the order of their ends, each from its CPU's
 * previous record: one that reaches back over the newest takes them in,
 * so that the list stays sorted and disjoint. */
static void test_loss_ranges_merge(void **state)
{
	struct ig_engine *e = new_engine(0, 0);
	const struct ig_lost *l;

	(void)state;
	ig_gpu_mark_lost(e, 40 * MS, 60 * MS);
	ig_gpu_mark_lost(e, 50 * MS, 62 * MS);
	ig_gpu_mark_lost(e, 20 * MS, 65 * MS);
	ig_gpu_mark_lost(e, 70 * MS, 80 * MS);
	l = e->lost.ranges.v;
	assert_int_equal(e->lost.ranges.n, 2);
	assert_int_equal(l[0].t0, 20 * MS);
	assert_int_equal(l[0].t1, 65 * MS);
	assert_int_equal(l[1].t0, 70 * MS);
	assert_int_equal(l[1].t1, 80 * MS);
	ig_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_stream),
		cmocka_unit_test(test_two_streams),
		cmocka_unit_test(test_late_drain),
		cmocka_unit_test(test_processes_devices),
		cmocka_unit_test(test_device_unknown),
		cmocka_unit_test(test_gpumap),
		cmocka_unit_test(test_syncs_with),
		cmocka_unit_test(test_sync_copy),
		cmocka_unit_test(test_ptd_copy),
		cmocka_unit_test(test_wake_then_spin),
		cmocka_unit_test(test_wake_then_preempted),
		cmocka_unit_test(test_never_synced),
		cmocka_unit_test(test_queries),
		cmocka_unit_test(test_event_sync),
		cmocka_unit_test(test_submit_after_drain),
		cmocka_unit_test(test_submit_during_sync),
		cmocka_unit_test(test_process_exit),
		cmocka_unit_test(test_marked_loss),
		cmocka_unit_test(test_loss_after_user_record),
		cmocka_unit_test(test_loss_ranges_merge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
