// SPDX-License-Identifier: GPL-2.0
/*
 * The head of a trace that joined a job mid-stream (docs/design.md §4.12)
 * and the threads' states at the start (§5.14).  A feeder (100) blocked
 * in poll on its loader queue when tracing began, woken at 806 ms by a
 * worker (200) that was blocked reading a shard since before tracing;
 * the first GPU work at 810 ms.  The GPU's counter reads 0% up to
 * 666.7 ms, then 10%.
 */
#include "test_engine_gap.h"

#define PERIOD		(500 * MS / 3)	/* NVML's 1/6 s */
#define FIRST		(810 * MS)
#define KEY		0xfe00000000001234ULL

static void t_tstate(struct tstream *s, uint32_t tid, uint32_t tgid, uint64_t read,
		     char state, int syscall, unsigned int reason,
		     unsigned int oflags, uint64_t arg, const char *name)
{
	union ig_rec *r = ts_new(s, IG_REC_TSTATE, sizeof(struct ig_tstate), tid, tgid, 0);
	struct ig_tstate *t = (struct ig_tstate *)&r->h;

	t->read_ns = read;
	t->state = state;
	t->syscall = syscall;
	t->reason = (uint16_t)reason;
	t->oflags = (uint16_t)oflags;
	t->arg = arg;
	if (name)
		snprintf(t->detail.name, IG_NAME_LEN, "%s", name);
}

static void t_file(struct tstream *s)
{
	union ig_rec *r = ts_new(s, IG_REC_FILE, sizeof(struct ig_file), 200, 200, 0);

	r->f.key = KEY;
	r->f.ncomp = 2;
	r->f.nmount = 2;
	snprintf(r->f.fstype, sizeof(r->f.fstype), "ext4");
	snprintf(r->f.comp[0], IG_NAME_LEN, "shard-3.bin");
	snprintf(r->f.comp[1], IG_NAME_LEN, "data");
}

/* One window of the GPU's counter, [t, t + PERIOD), read a ms after. */
static void counter_win(struct tstream *s, uint64_t t, uint32_t busy_ppm)
{
	union ig_rec *r = ts_new(s, IG_REC_NVWIN, sizeof(struct ig_nvwin), 0, 0,
				 t + PERIOD + MS);

	r->nw.kind = IG_NVW_SAMPLES;
	r->nw.nproc = 1;
	r->nw.t0 = t;
	r->nw.t1 = t + PERIOD;
	r->nw.busy_ppm = busy_ppm;
	r->nw.quant_ppm = 10000;
}

/* The feeder's first two steps: work from FIRST and from 900 ms, each
 * proven done by a sync that waited 18 ms. */
static void two_steps(struct tstream *s)
{
	t_submit(s, 100, 100, FIRST, L);
	t_sync(s, 100, 100, 811 * MS, 829 * MS, 830 * MS, L, FIRST);
	t_submit(s, 100, 100, 900 * MS, L);
	t_sync(s, 100, 100, 901 * MS, 919 * MS, 920 * MS, L, 900 * MS);
}

/* The job: @states, the states read at the start; @counter, the NVML
 * windows; @zero_to, where the counter stops reading 0%; @ctx, its
 * context made under the tracer before its first work (as under `run`). */
static struct json_object *job_ctx(bool states, bool counter, uint64_t zero_to, bool ctx)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(-1, 0);
	struct json_object *j;
	uint64_t t;

	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_task(&s, 0, 200, 200, 100, "python3");
	t_gpudev(&s, 0, 100, 0, IG_GD_NVML, -1, NULL);
	if (states) {
		t_tstate(&s, 100, 100, 2 * MS, 'S', 7, IG_R_POLL, 0, 3, NULL);
		t_file(&s);
		t_tstate(&s, 200, 200, 2 * MS, 'D', 327, IG_R_STORAGE,
			 IG_F_UNINTERRUPTIBLE | IG_F_FILE_KEY | IG_F_DETAIL_NAME, KEY,
			 "shard-3.bin");
	}
	/* the waits the kernel saw end, from the seeding at 1 ms */
	OFF(&s, .tid = 200, .t_off = 1 * MS, .t_wake = 800 * MS, .t_on = 800 * MS,
	    .reason = IG_R_OTHER, .flags = IG_F_AT_ATTACH | IG_F_WAKER_IRQ);
	OFF(&s, .tid = 100, .t_off = 1 * MS, .t_wake = 805 * MS, .t_on = 806 * MS,
	    .reason = IG_R_OTHER, .flags = IG_F_AT_ATTACH, .waker_tid = 200);
	if (ctx)
		CU(&s, .kind = IG_CU_CTX, .tid = 100, .ts = FIRST - 10 * MS, .arg = 0);
	two_steps(&s);
	for (t = 0; counter && t + PERIOD <= 1000 * MS; t += PERIOD)
		counter_win(&s, t, t + PERIOD <= zero_to ? 0 : 100000);
	t_end(&s, 1000 * MS);
	ts_feed(&s, e);
	j = report(e);
	ig_engine_free(e);
	ts_free(&s);
	return j;
}

static struct json_object *job(bool states, bool counter, uint64_t zero_to)
{
	return job_ctx(states, counter, zero_to, false);
}

static struct json_object *head0(struct json_object *j)
{
	struct json_object *a = jpath(j, "gpu.heads");

	assert_int_equal(json_object_array_length(a), 1);
	return json_object_array_get_idx(a, 0);
}

/* The counter proves [0, 666.7 ms) idle: a gap, storage through the
 * feeder's wait for its worker, the shard named, recovered at attach;
 * the rest of the head is unresolved. */
static void test_head_proven(void **state)
{
	struct json_object *j = job(true, true, 4 * PERIOD), *h, *st, *g;
	double idle = 4 * PERIOD / 1e9;

	(void)state;
	h = head0(j);
	assert_near(jd(h, "idle_s"), idle, 1e-6);
	assert_near(jd(h, "unresolved_s"), (FIRST - 4 * PERIOD) / 1e9, 1e-6);
	assert_near(jd(h, "not_known_s"), 0, 1e-9);
	assert_string_equal(json_object_get_string(jpath(h, "proof")), "utilization_samples");
	assert_int_equal(ji(j, "gpu.span_start_ns"), 0);
	/* the feeder on CPU until the seeding, then the worker's read */
	st = jcause(j, "causes", "storage");
	assert_non_null(st);
	assert_near(jd(st, "seconds"), idle - 1e-3, 1e-6);
	assert_near(jd(st, "recovered_at_attach_s"), idle - 1e-3, 1e-6);
	assert_near(detail_s(j, "causes", "storage", "file", "path", "/data/shard-3.bin"),
		    idle - 1e-3, 1e-6);
	g = json_object_array_get_idx(jpath(j, "gpu.gap_list"), 0);
	assert_int_equal(ji(g, "start_ns"), 0);
	assert_true(json_object_get_boolean(jpath(g, "recovered_at_attach")));
	/* idle: the head's, and the gap between the two steps */
	assert_near(jd(j, "gpu.idle_s"), idle + (900 - 829) / 1e3, 1e-6);
	/* the label: the whole head, storage first */
	assert_string_equal(json_object_get_string(jpath(json_object_array_get_idx(
		jpath(h, "causes"), 0), "cause")), "storage");
	json_object_put(j);
}

/* Without NVML nothing proves the head idle: it is outside the span, in
 * no total, but labelled all the same. */
static void test_head_no_counter(void **state)
{
	struct json_object *j = job(true, false, 0), *h;

	(void)state;
	h = head0(j);
	assert_near(jd(h, "idle_s"), 0, 1e-9);
	assert_near(jd(h, "not_known_s"), FIRST / 1e9, 1e-6);
	assert_true(json_object_get_type(jpath(h, "proof")) == json_type_null);
	assert_int_equal(ji(j, "gpu.span_start_ns"), (int64_t)FIRST);
	assert_near(jd(j, "gpu.idle_s"), (900 - 829) / 1e3, 1e-6);
	assert_near(cause_s(j, "causes", "storage"), 0, 1e-9);
	assert_string_equal(json_object_get_string(jpath(json_object_array_get_idx(
		jpath(h, "causes"), 0), "cause")), "storage");
	json_object_put(j);
}

/* A counter that never reads above 0% (a MIG parent) proves nothing. */
static void test_head_dead_counter(void **state)
{
	struct json_object *j = job(true, true, 2000 * MS), *h;

	(void)state;
	h = head0(j);
	assert_false(json_object_get_boolean(jpath(h, "counter_live")));
	assert_near(jd(h, "idle_s"), 0, 1e-9);
	json_object_put(j);
}

/* No state read at the start: the waits that began before tracing are
 * unknown, never guessed. */
static void test_head_no_states(void **state)
{
	struct json_object *j = job(false, true, 4 * PERIOD);

	(void)state;
	assert_near(cause_s(j, "causes", "storage"), 0, 1e-9);
	assert_near(detail_s(j, "causes", "unknown", "why", "why",
			     "asleep since before tracing, its state not read"),
		    4 * PERIOD / 1e9 - 1e-3, 1e-6);
	json_object_put(j);
}

/* A process that made its context under the tracer had no GPU work
 * before it: the time before its first work is its start-up, no head,
 * and none of it idle, though the counter read 0% there. */
static void test_head_ctx_made(void **state)
{
	struct json_object *j = job_ctx(true, true, 4 * PERIOD, true);
	struct json_object *a = jpath(j, "gpu.heads");

	(void)state;
	assert_true(!a || json_object_array_length(a) == 0);
	assert_near(jd(j, "gpu.idle_s"), (900 - 829) / 1e3, 1e-6);
	assert_near(cause_s(j, "causes", "storage"), 0, 1e-9);
	json_object_put(j);
}

/* The tail: tracing stopped at 2 s with a third step's work pending
 * since 950 ms, never seen to complete.  The counter reads 10% up to
 * @zero_from and 0% after it, up to 2 s (none at all without @counter,
 * 0% everywhere with @dead). */
static struct json_object *job_tail(bool counter, bool dead, uint64_t zero_from)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(-1, 0);
	struct json_object *j;
	uint64_t t;

	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_gpudev(&s, 0, 100, 0, IG_GD_NVML, -1, NULL);
	two_steps(&s);
	t_submit(&s, 100, 100, 950 * MS, L);
	for (t = 0; counter && t + PERIOD <= 2000 * MS + MS; t += PERIOD)
		counter_win(&s, t, dead || t >= zero_from ? 0 : 100000);
	t_end(&s, 2000 * MS + 2 * MS);
	ts_feed(&s, e);
	j = report(e);
	ig_engine_free(e);
	ts_free(&s);
	return j;
}

/* Work pending when tracing stopped: the counter's 0% windows after the
 * last evidence prove the GPU idle there (a gap of the thread that
 * submitted last), the time before them is unresolved, and the span ends
 * where the proof does; the time after it stays outside, not known. */
static void test_tail_proven(void **state)
{
	struct json_object *j = job_tail(true, false, 6 * PERIOD), *a, *t;

	(void)state;
	a = jpath(j, "gpu.tails");
	assert_int_equal(json_object_array_length(a), 1);
	t = json_object_array_get_idx(a, 0);
	assert_int_equal(ji(t, "from_ns"), (int64_t)(950 * MS));
	assert_int_equal(ji(t, "to_ns"), (int64_t)(12 * PERIOD));
	assert_near(jd(t, "idle_s"), (12 * PERIOD - 6 * PERIOD) / 1e9, 1e-6);
	assert_near(jd(t, "unresolved_s"), (6 * PERIOD - 950 * MS) / 1e9, 1e-6);
	assert_string_equal(json_object_get_string(jpath(t, "proof")), "utilization_samples");
	assert_int_equal(ji(t, "feeder_tid"), 100);
	assert_int_equal(ji(j, "gpu.span_end_ns"), (int64_t)(12 * PERIOD));
	/* the gap between the steps, and the tail's */
	assert_near(jd(j, "gpu.idle_s"), (900 - 829 + 950 - 919) / 1e3 + 6 * PERIOD / 1e9, 1e-6);
	/* the span's states still sum to it */
	assert_near(jd(j, "gpu.busy_s") + jd(j, "gpu.idle_s") + jd(j, "gpu.unresolved_s"),
		    (12 * PERIOD - FIRST) / 1e9, 1e-6);
	json_object_put(j);
}

/* Without a counter, or with one that never read above 0%, nothing
 * proves the tail idle: the span ends at the last evidence. */
static void test_tail_unproven(void **state)
{
	struct json_object *j;
	int k;

	(void)state;
	for (k = 0; k < 2; k++) {
		j = job_tail(k == 0, k == 0, 0);
		assert_true(!jpath(j, "gpu.tails") ||
			    json_object_array_length(jpath(j, "gpu.tails")) == 0);
		assert_int_equal(ji(j, "gpu.span_end_ns"), (int64_t)(950 * MS));
		assert_near(jd(j, "gpu.idle_s"), (900 - 829 + 950 - 919) / 1e3, 1e-6);
		json_object_put(j);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_head_proven),
		cmocka_unit_test(test_head_no_counter),
		cmocka_unit_test(test_head_dead_counter),
		cmocka_unit_test(test_head_no_states),
		cmocka_unit_test(test_head_ctx_made),
		cmocka_unit_test(test_tail_proven),
		cmocka_unit_test(test_tail_unproven),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
