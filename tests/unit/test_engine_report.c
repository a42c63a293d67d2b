// SPDX-License-Identifier: GPL-2.0
/* The reports: JSON contract, text layout, drops, gap lists. */
#include "test_engine_util.h"

#define L	IG_STREAM_LEGACY
#define EPS	1e-9

/* n gaps of 1..n ms, in a shuffled order of lengths. */
static void gaps_stream(struct tstream *s, unsigned int n)
{
	uint64_t t = 10 * MS;
	unsigned int i;

	t_meta(s, 0);
	t_task(s, 0, 100, 100, 1, "python3");
	for (i = 0; i < n; i++) {
		uint64_t len = ((i * 37) % n + 1) * MS;

		t_submit(s, 100, 100, t, L);
		t_sync(s, 100, 100, t + 1 * MS, t + 2 * MS, t + 2 * MS, L, t);
		t += 2 * MS + len;
	}
	t_submit(s, 100, 100, t, L);
	t_sync(s, 100, 100, t + 1 * MS, t + 2 * MS, t + 2 * MS, L, t);
	t_end(s, t + 10 * MS);
}

static void assert_type(struct json_object *j, const char *path,
			enum json_type type)
{
	struct json_object *o = jpath(j, path);

	if (!json_object_is_type(o, type))
		fail_msg("%s: type %s, want %s", path,
			 json_type_to_name(json_object_get_type(o)),
			 json_type_to_name(type));
}

static void assert_number(struct json_object *j, const char *path)
{
	struct json_object *o = jpath(j, path);

	if (!json_object_is_type(o, json_type_double) &&
	    !json_object_is_type(o, json_type_int))
		fail_msg("%s is not a number", path);
}

static void test_json_shape(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *p, *c, *g;
	union ig_rec *r;
	size_t i;
	double prev = 1e30, sum = 0;

	(void)state;
	gaps_stream(&s, 20);
	/* inside the second gap, [15, 33] ms */
	OFF(&s, .tid = 100, .t_off = 16 * MS, .t_wake = 17 * MS,
	    .t_on = 18 * MS, .reason = IG_R_STORAGE, .name = "/d/f");
	r = ts_new(&s, IG_REC_NVML, sizeof(struct ig_nvml), 0, 0, 50 * MS);
	r->n.util_pct = 80;
	r = ts_new(&s, IG_REC_NVML, sizeof(struct ig_nvml), 0, 0, 60 * MS);
	r->n.util_pct = 60;
	r = ts_new(&s, IG_REC_STATS, sizeof(struct ig_stats), 0, 0, 900 * MS);
	r->st.stat[IG_STAT_EVENTS] = 12345;
	r->st.api_hits[IG_API_cuLaunchKernel] = 777;
	r = ts_new(&s, IG_REC_LIBCUDA, sizeof(struct ig_libcuda), 100, 100,
		   1 * MS);
	snprintf(r->l.path, sizeof(r->l.path), "/usr/lib/libcuda.so.1");
	r->l.nsyms = 80;
	r->l.nattached = 79;
	ts_feed(&s, e);
	j = report(e);

	assert_int_equal(ji(j, "version"), 1);
	assert_type(j, "version", json_type_int);
	assert_type(j, "duration_s", json_type_double);
	assert_type(j, "complete", json_type_boolean);
	assert_true(json_object_get_boolean(jpath(j, "complete")));
	assert_string_equal(json_object_get_string(jpath(j, "stop_reason")),
			    "duration");
	assert_type(j, "processes", json_type_array);
	p = json_object_array_get_idx(jpath(j, "processes"), 0);
	assert_type(p, "pid", json_type_int);
	assert_type(p, "comm", json_type_string);
	assert_type(p, "ppid", json_type_int);
	assert_type(p, "exe", json_type_string);
	assert_type(p, "threads", json_type_int);
	assert_string_equal(json_object_get_string(jpath(p, "comm")),
			    "python3");
	assert_string_equal(json_object_get_string(jpath(p, "exe")),
			    "/usr/bin/python3");

	g = jpath(j, "gpu");
	assert_type(g, "busy_s", json_type_double);
	assert_type(g, "idle_s", json_type_double);
	assert_type(g, "unresolved_s", json_type_double);
	assert_type(g, "gaps", json_type_int);
	assert_type(g, "gap_p50_ms", json_type_double);
	assert_type(g, "gap_p99_ms", json_type_double);
	assert_type(g, "span_start_ns", json_type_int);
	assert_type(g, "span_end_ns", json_type_int);
	assert_type(g, "devices", json_type_array);
	assert_type(g, "gap_list", json_type_array);
	assert_type(g, "unresolved_list", json_type_array);
	assert_number(g, "submissions");
	assert_number(g, "launches");
	assert_int_equal(ji(g, "gaps"), 20);
	assert_int_equal(ji(g, "submissions"), 21);
	/* busy + idle + unresolved = the span */
	assert_near(jd(g, "busy_s") + jd(g, "idle_s") + jd(g, "unresolved_s"),
		    (double)(ji(g, "span_end_ns") - ji(g, "span_start_ns")) /
		    1e9, 1e-6);

	c = jpath(j, "causes");
	assert_true(json_object_array_length(c) >= 2);
	for (i = 0; i < json_object_array_length(c); i++) {
		struct json_object *x = json_object_array_get_idx(c, i);

		assert_type(x, "cause", json_type_string);
		assert_type(x, "seconds", json_type_double);
		assert_type(x, "share", json_type_double);
		assert_type(x, "details", json_type_array);
		assert_true(jd(x, "seconds") <= prev);
		prev = jd(x, "seconds");
		sum += jd(x, "share");
	}
	assert_near(sum, 1.0, 1e-12);
	assert_type(j, "unresolved_causes", json_type_array);

	assert_type(j, "events.total", json_type_int);
	assert_type(j, "events.dropped", json_type_int);
	assert_type(j, "events.by_type", json_type_object);
	assert_int_equal(ji(j, "events.by_type.offcpu"), 1);
	assert_int_equal(ji(j, "events.by_type.nvml"), 2);
	assert_int_equal(ji(j, "events.total"), (int64_t)e->acct.nrec);
	assert_int_equal(ji(j, "events.dropped"), 0);
	assert_false(json_object_get_boolean(jpath(j, "events.evidence_lost")));
	assert_near(jd(j, "offcpu.by_reason.storage"), S(2), EPS);
	assert_near(jd(j, "offcpu.runnable_s"), S(1), EPS);
	assert_int_equal(ji(j, "cuda.api_hits.cuLaunchKernel"), 777);
	assert_type(j, "cuda.libcuda", json_type_array);
	assert_int_equal(ji(json_object_array_get_idx(jpath(j, "cuda.libcuda"),
						      0), "attached"), 79);
	assert_true(json_object_get_boolean(jpath(j, "dashboard.nvml")));
	assert_near(jd(j, "dashboard.util_mean_pct"), 70.0, EPS);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* The longest gaps are kept when the list is capped; percentiles. */
static void test_gap_list(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(3, 0);
	struct json_object *j, *a;
	int64_t prev = 0;
	size_t i;

	(void)state;
	gaps_stream(&s, 100);
	ts_feed(&s, e);
	j = report(e);
	assert_int_equal(ji(j, "gpu.gaps"), 100);
	a = jpath(j, "gpu.gap_list");
	assert_int_equal(json_object_array_length(a), 3);
	assert_int_equal(ji(j, "gpu.gap_list_omitted"), 97);
	for (i = 0; i < 3; i++) {
		struct json_object *g = json_object_array_get_idx(a, i);
		int64_t len = ji(g, "end_ns") - ji(g, "start_ns");

		assert_true(len >= (int64_t)(98 * MS));
		/* listed in time order */
		if (i)
			assert_true(ji(g, "start_ns") > prev);
		prev = ji(g, "start_ns");
	}
	assert_near(jd(j, "gpu.gap_p50_ms"), 50.0, EPS);
	assert_near(jd(j, "gpu.gap_p99_ms"), 99.0, EPS);
	assert_near(jd(j, "gpu.idle_s"), 5.050, 1e-9);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Percentiles stay close once the sample outgrows the exact buffer. */
static void test_hist_large(void **state)
{
	struct ig_hist h = { 0 };
	uint64_t v;

	(void)state;
	for (v = 1; v <= 100000; v++)
		ig_hist_add(&h, v * US);
	assert_true(h.nexact < h.n);
	assert_near((double)ig_hist_quantile(&h, 0.5), 50000.0 * US,
		    50000.0 * US * 0.03);
	assert_near((double)ig_hist_quantile(&h, 0.99), 99000.0 * US,
		    99000.0 * US * 0.03);
	assert_true(ig_hist_bytes(&h) < 64 * 1024);
	ig_hist_free(&h);
}

static void test_drops(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;
	union ig_rec *r;
	char *txt;

	(void)state;
	gaps_stream(&s, 3);
	r = ts_new(&s, IG_REC_STATS, sizeof(struct ig_stats), 0, 0, 900 * MS);
	r->st.stat[IG_STAT_DROPS] = 42;
	r->st.user_lost = 3;
	ts_feed(&s, e);
	j = report(e);
	assert_int_equal(ji(j, "events.dropped"), 45);
	assert_int_equal(ji(j, "events.kernel.drops"), 42);
	assert_true(json_object_get_boolean(jpath(j, "events.evidence_lost")));
	assert_true(json_object_get_boolean(jpath(j, "gpu.evidence_lost")));
	txt = report_text(e);
	assert_non_null(strstr(txt, "records were lost"));
	assert_non_null(strstr(txt, "dropped 45 (kernel 42, aggregator 3)"));
	free(txt);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

static void assert_80_columns(const char *txt)
{
	const char *p = txt, *nl;

	while (*p) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		if (nl - p > 80)
			fail_msg("line over 80 columns: %.*s", (int)(nl - p), p);
		p = *nl ? nl + 1 : nl;
	}
}

static void test_text(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	char *txt;

	(void)state;
	gaps_stream(&s, 10);
	t_proc(&s, 1 * MS, IG_PROC_FORK, 200, 200, 100,
	       "a_very_long_comm_name");
	OFF(&s, .tid = 100, .t_off = 16 * MS, .t_wake = 17 * MS,
	    .t_on = 17 * MS, .reason = IG_R_STORAGE,
	    .name = "/a/very/long/path/that/does/not/fit/in/the/column/file.bin");
	ts_feed(&s, e);
	txt = report_text(e);
	assert_80_columns(txt);
	/* the answer leads */
	assert_true(!strncmp(txt, "GPU busy ", 9));
	assert_non_null(strstr(txt, "Why the GPU was idle"));
	assert_non_null(strstr(txt, "time(s)"));
	assert_non_null(strstr(txt, "share(%)"));
	assert_non_null(strstr(txt, "storage"));
	/* long names keep their tail */
	assert_non_null(strstr(txt, "      ..."));
	assert_non_null(strstr(txt, "the/column/file.bin"));
	assert_non_null(strstr(txt, "dashboard utilization: NVML not available"));
	free(txt);
	ig_engine_free(e);
	ts_free(&s);
}

/* Host-only run: no GPU work, still the host summary. */
static void test_no_gpu(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;
	char *txt;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "make");
	OFF(&s, .tid = 100, .t_off = 10 * MS, .t_wake = 20 * MS,
	    .t_on = 21 * MS, .reason = IG_R_SLEEP);
	t_end(&s, 1000 * MS);
	ts_feed(&s, e);
	txt = report_text(e);
	assert_80_columns(txt);
	assert_true(!strncmp(txt, "No GPU activity", 15));
	assert_non_null(strstr(txt, "Off-CPU time of traced threads: 0.011 s"));
	assert_non_null(strstr(txt, "sleep"));
	j = report(e);
	assert_near(jd(j, "gpu.idle_s"), 0, EPS);
	assert_int_equal(ji(j, "gpu.gaps"), 0);
	assert_int_equal(json_object_array_length(jpath(j, "causes")), 0);
	assert_int_equal(json_object_array_length(jpath(j, "gpu.devices")), 0);
	assert_false(json_object_get_boolean(jpath(j, "dashboard.nvml")));
	assert_near(jd(j, "duration_s"), 1.0, EPS);
	json_object_put(j);
	free(txt);
	ig_engine_free(e);
	ts_free(&s);
}

/* Without END the report says it is incomplete. */
static void test_incomplete(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_submit(&s, 100, 100, 10 * MS, L);
	ts_feed(&s, e);
	j = report(e);
	assert_false(json_object_get_boolean(jpath(j, "complete")));
	assert_true(json_object_is_type(jpath(j, "stop_reason"),
					json_type_null));
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Unresolved causes sum to unresolved_s, and never into causes. */
static void test_unresolved_causes(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *c;
	char *txt, *u, *n;
	double sum = 0, share = 0;
	size_t i;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_submit(&s, 100, 100, 10 * MS, L);
	OFF(&s, .tid = 100, .t_off = 12 * MS, .t_wake = 15 * MS,
	    .t_on = 16 * MS, .reason = IG_R_STORAGE, .name = "/x",
	    .prev_tid = 555, .prev_comm = "stress");
	t_sync(&s, 100, 100, 20 * MS, 30 * MS, 31 * MS, L, 19 * MS);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);
	assert_near(jd(j, "gpu.unresolved_s"), S(9), EPS);
	assert_near(jd(j, "gpu.idle_s"), 0, EPS);
	assert_int_equal(json_object_array_length(jpath(j, "causes")), 0);
	c = jpath(j, "unresolved_causes");
	for (i = 0; i < json_object_array_length(c); i++) {
		sum += jd(json_object_array_get_idx(c, i), "seconds");
		share += jd(json_object_array_get_idx(c, i), "share");
	}
	assert_near(sum, S(9), 1e-9);
	assert_near(share, 1.0, 1e-12);
	assert_near(cause_s(j, "unresolved_causes", "storage"), S(3), EPS);
	assert_near(cause_s(j, "unresolved_causes", "cpu_starvation"), S(1),
		    EPS);
	assert_int_equal(json_object_array_length(
		jpath(j, "gpu.unresolved_list")), 1);
	/* more unresolved than idle time: the text leads with it */
	txt = report_text(e);
	u = strstr(txt, "While the GPU state was unresolved");
	n = strstr(txt, "No known idle gap");
	assert_non_null(u);
	assert_non_null(n);
	assert_true(u < n);
	free(txt);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_shape),
		cmocka_unit_test(test_gap_list),
		cmocka_unit_test(test_hist_large),
		cmocka_unit_test(test_drops),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_no_gpu),
		cmocka_unit_test(test_incomplete),
		cmocka_unit_test(test_unresolved_causes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
