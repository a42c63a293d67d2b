// SPDX-License-Identifier: GPL-2.0
/* Stacks tied to each cause's time, from synthetic records: a thread's
 * stack at a switch-out or sample is its latest stack record at or before
 * it (REF records name an earlier one's frames); the time a cause is given
 * goes to the waiter's, the blocked thread's and the holder's stacks. */
#include "test_engine_gap.h"
#include "engine/attrib/stacks.h"

_Static_assert(IG_PYSTACK_SIZE(2) <= sizeof(union ig_rec), "pystack fits");
_Static_assert(IG_PYCODE_SIZE(0) <= sizeof(union ig_rec), "pycode fits");
_Static_assert(sizeof(struct ig_ustack) <= sizeof(union ig_rec), "ustack fits");

static void t_pycode(struct tstream *s, uint32_t tgid, uint64_t ts,
		     uint64_t code, const char *name)
{
	union ig_rec *r = ts_new(s, IG_REC_PYCODE, IG_PYCODE_SIZE(0), tgid,
				 tgid, ts);
	struct ig_pycode *c = (struct ig_pycode *)r;

	c->code = code;
	c->version = 0x030b;
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->file, sizeof(c->file), "/src/job.py");
}

/* One frame, or a REF (code 0) to stack @id sent before. */
static void t_pystack(struct tstream *s, uint32_t tid, uint32_t tgid,
		      uint64_t ts, uint64_t id, uint64_t code)
{
	union ig_rec *r = ts_new(s, IG_REC_PYSTACK, IG_PYSTACK_SIZE(code ? 1 : 0),
				 tid, tgid, ts);
	struct ig_pystack *p = (struct ig_pystack *)r;

	p->id = id;
	p->nframes = code ? 1 : 0;
	p->flags = code ? 0 : IG_PYS_REF;
	p->f[0].code = code;
}

static void t_ustack(struct tstream *s, uint32_t tid, uint32_t tgid,
		     uint64_t ts, uint64_t id, uint64_t ip)
{
	union ig_rec *r = ts_new(s, IG_REC_USTACK,
				 offsetof(struct ig_ustack, ips) + 8, tid, tgid, ts);
	struct ig_ustack *u = (struct ig_ustack *)r;

	u->id = id;
	u->nips = 1;
	u->depth = 1;
	u->flags = IG_USF_END;
	u->ips[0] = ip;
}

static void t_usym(struct tstream *s, uint32_t tgid, uint64_t ts, uint64_t ip,
		   const char *name)
{
	size_t len = strlen(name) + 1;
	union ig_rec *r = ts_new(s, IG_REC_USYM,
				 sizeof(struct ig_usym) + ((len + 7) & ~7u),
				 tgid, tgid, ts);
	struct ig_usym *y = (struct ig_usym *)r;

	y->ip = ip;
	y->len = (uint16_t)len;
	memcpy(y->name, name, len);
}

static void t_sample(struct tstream *s, uint32_t tid, uint32_t tgid,
		     uint64_t ts)
{
	union ig_rec *r = ts_new(s, IG_REC_SAMPLE, sizeof(struct ig_sample),
				 tid, tgid, ts);

	r->sm.ip = 0x1234;
}

/* The stack entry of (cause, role) in array @arr ("causes",
 * "unresolved_causes") whose innermost frame is @f0, or NULL. */
static struct json_object *stack_in(struct json_object *j, const char *arr,
				    const char *cause, const char *role,
				    const char *f0)
{
	struct json_object *c = jcause(j, arr, cause), *d, *x;
	size_t i;

	if (!c || !json_object_object_get_ex(c, "details", &d))
		return NULL;
	for (i = 0; i < json_object_array_length(d); i++) {
		x = json_object_array_get_idx(d, i);
		if (!json_object_object_get(x, "role") ||
		    strcmp(json_object_get_string(json_object_object_get(x, "role")), role))
			continue;
		if (!strcmp(json_object_get_string(json_object_array_get_idx(
				json_object_object_get(x, "frames"), 0)), f0))
			return x;
	}
	return NULL;
}

static struct json_object *stack_of(struct json_object *j, const char *cause,
				    const char *role, const char *f0)
{
	return stack_in(j, "causes", cause, role, f0);
}

static void test_storage_blocked(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *x;

	(void)state;
	begin(&s);
	t_pycode(&s, 100, 1 * MS, 0xa0, "read_batch");
	t_pycode(&s, 100, 1 * MS, 0xb0, "other");
	t_pystack(&s, 100, 100, 2 * MS, 0x111, 0xa0);	/* full */
	t_pystack(&s, 100, 100, 4 * MS, 0x333, 0xb0);
	t_pystack(&s, 100, 100, 11 * MS, 0x111, 0);	/* REF at switch-out */
	t_usym(&s, 100, 11 * MS, 0x7000, "pread (libc.so.6)");
	t_ustack(&s, 100, 100, 11 * MS, 0x222, 0x7000);
	t_pystack(&s, 100, 100, 60 * MS, 0x333, 0);	/* after: not it */
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 52 * MS,
	    .t_on = 52 * MS, .reason = IG_R_STORAGE, .flags = IG_F_IOWAIT,
	    .name = "a.bin");
	j = finish(&s, e);
	x = stack_of(j, "storage", "blocked", "pread (libc.so.6)");
	assert_non_null(x);
	assert_string_equal(json_object_get_string(json_object_object_get(x, "lang")),
			    "mixed");
	assert_string_equal(json_object_get_string(json_object_array_get_idx(
		json_object_object_get(x, "frames"), 1)), "read_batch (/src/job.py)");
	assert_near(jd(x, "seconds"), S(41), EPS);
	assert_int_equal(ji(x, "count"), 1);
	/* the feeder waited there too */
	assert_non_null(stack_of(j, "storage", "waiter", "pread (libc.so.6)"));
	/* 10..11 on CPU: its stack then was "other" (4 ms) */
	assert_non_null(stack_of(j, "host_compute", "waiter", "other (/src/job.py)"));
	assert_null(stack_of(j, "storage", "holder", "pread (libc.so.6)"));
	done(j, e, &s);
}

/* The GIL holder's stack from its CPU samples inside the wait. */
static void test_gil_holder(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *x;

	(void)state;
	begin(&s);
	t_pyrt(&s, 0, 100, 0x5000, 0x6000);
	t_pycode(&s, 100, 1 * MS, 0xc0, "gil_hog");
	t_pycode(&s, 100, 1 * MS, 0xd0, "train_step");
	t_pystack(&s, 100, 100, 11 * MS, 0x444, 0xd0);
	t_pystack(&s, 101, 100, 20 * MS, 0x555, 0xc0);
	t_sample(&s, 101, 100, 20 * MS);
	t_sample(&s, 101, 100, 30 * MS);
	t_sample(&s, 101, 100, 40 * MS);
	OFF(&s, .tid = 101, .t_off = 1 * MS, .t_wake = 2 * MS, .t_on = 2 * MS,
	    .reason = IG_R_SLEEP);
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 52 * MS,
	    .t_on = 52 * MS, .reason = IG_R_FUTEX, .arg = 0x5100,
	    .waker_tid = 101, .waker_tgid = 100);
	OFF(&s, .tid = 101, .t_off = 53 * MS, .t_wake = 54 * MS, .t_on = 54 * MS,
	    .reason = IG_R_SLEEP);
	j = finish(&s, e);
	x = stack_of(j, "gil", "holder", "gil_hog (/src/job.py)");
	assert_non_null(x);
	assert_string_equal(json_object_get_string(json_object_object_get(x, "lang")),
			    "python");
	assert_near(jd(x, "seconds"), S(41), EPS);
	x = stack_of(j, "gil", "waiter", "train_step (/src/job.py)");
	assert_non_null(x);
	assert_near(jd(x, "seconds"), S(41), EPS);
	done(j, e, &s);
}

/* A mutex's holder: the thread that released it, from its samples; a
 * sample outside the wait does not count. */
static void test_lock_holder(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *x;

	(void)state;
	begin(&s);
	t_pycode(&s, 100, 1 * MS, 0xc0, "hold_lock");
	t_pycode(&s, 100, 1 * MS, 0xd0, "take_lock");
	t_pycode(&s, 100, 1 * MS, 0xe0, "before");
	t_pystack(&s, 101, 100, 5 * MS, 0x666, 0xe0);
	t_sample(&s, 101, 100, 5 * MS);
	t_pystack(&s, 100, 100, 11 * MS, 0x444, 0xd0);
	t_pystack(&s, 101, 100, 20 * MS, 0x555, 0xc0);
	t_sample(&s, 101, 100, 20 * MS);
	t_sample(&s, 101, 100, 45 * MS);
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 52 * MS,
	    .t_on = 52 * MS, .reason = IG_R_FUTEX, .flags = IG_F_FUTEX_PLAIN,
	    .arg = 0x7700, .waker_tid = 101);
	j = finish(&s, e);
	x = stack_of(j, "lock", "holder", "hold_lock (/src/job.py)");
	assert_non_null(x);
	assert_near(jd(x, "seconds"), S(41), EPS);
	assert_null(stack_of(j, "lock", "holder", "before (/src/job.py)"));
	assert_non_null(stack_of(j, "lock", "waiter", "take_lock (/src/job.py)"));
	done(j, e, &s);
}

/* Bounded: more distinct stacks than a table holds keep the biggest. */
static void test_bounded(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;
	uint64_t t = 11 * MS, i;

	(void)state;
	begin(&s);
	t_pycode(&s, 100, 1 * MS, 0xe0, "big");
	for (i = 0; i < 3 * IG_STK_CAP; i++) {
		uint64_t len = i == 0 ? 8 * MS : 500 * US;
		char name[32];

		snprintf(name, sizeof(name), "f%llu", (unsigned long long)i);
		t_pycode(&s, 100, 1 * MS, 0x1000 + i, i ? name : "big");
		t_pystack(&s, 100, 100, t, 0x9000 + i, 0x1000 + i);
		OFF(&s, .tid = 100, .t_off = t, .t_wake = t + len, .t_on = t + len,
		    .reason = IG_R_STORAGE, .flags = IG_F_IOWAIT, .name = "b");
		t += len;
	}
	j = finish(&s, e);
	assert_non_null(stack_of(j, "storage", "blocked", "big (/src/job.py)"));
	assert_near(jd(stack_of(j, "storage", "blocked", "big (/src/job.py)"),
		       "seconds"), S(8), EPS);
	done(j, e, &s);
}

static struct ig_stk_held held(const struct ig_engine *e)
{
	struct ig_stk_held h;

	ig_stacks_held(e, &h);
	return h;
}

/* Process 300 waits on storage at @n stacks of its own (ids and
 * addresses from @k on), @len each, from @t: its gap (drained at @t,
 * submission after the waits). */
static uint64_t other_gap(struct tstream *s, uint64_t t, int k, int n,
			  uint64_t len)
{
	int i;

	t_submit(s, 300, 300, t - 2 * MS, L);
	t_sync(s, 300, 300, t - MS, 0, t, L, t - 2 * MS);
	for (i = k; i < k + n; i++, t += len) {
		t_usym(s, 300, t, 0x9000 + 16 * i, "load_other (other.c:1)");
		t_ustack(s, 300, 300, t, 0x700 + i, 0x9000 + 16 * i);
		OFF(s, .tid = 300, .tgid = 300, .t_off = t, .t_wake = t + len,
		    .t_on = t + len, .reason = IG_R_STORAGE, .flags = IG_F_IOWAIT,
		    .name = "c");
	}
	t_submit(s, 300, 300, t, L);
	return t;
}

/*
 * A process gone (exited, its last thread freed): its stacks and names go,
 * but for the stack a table still shows, which goes when the table drops
 * it; a live process keeps all of its own.
 */
static void test_gone_forgotten(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *x;
	struct ig_stk_held h;
	uint64_t t;

	(void)state;
	begin(&s);
	t_task(&s, 0, 300, 300, 1, "other");
	t_gpudev(&s, 0, 300, 0, IG_GD_NVML, -1, NULL);
	t_pycode(&s, 100, 1 * MS, 0xa0, "read_batch");
	t_pycode(&s, 100, 1 * MS, 0xb0, "unused");
	t_pystack(&s, 100, 100, 2 * MS, 0x111, 0xa0);
	t_pystack(&s, 101, 100, 3 * MS, 0x333, 0xb0);	/* never charged */
	t_usym(&s, 100, 11 * MS, 0x7000, "pread (libc.so.6)");
	t_ustack(&s, 100, 100, 11 * MS, 0x222, 0x7000);
	t_usym(&s, 100, 12 * MS, 0x8000, "unused_native (job.c:9)");
	t_ustack(&s, 101, 100, 12 * MS, 0x444, 0x8000);
	t_pycode(&s, 300, 1 * MS, 0xc0, "alive");
	t_pystack(&s, 300, 300, 3 * MS, 0x555, 0xc0);
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 52 * MS,
	    .t_on = 52 * MS, .reason = IG_R_STORAGE, .flags = IG_F_IOWAIT,
	    .name = "a.bin");
	/* what it ran after the wait: the unresolved time's stack */
	t_usym(&s, 100, 52 * MS + 1, 0x7100, "after_wait (job.c:20)");
	t_ustack(&s, 100, 100, 52 * MS + 1, 0x446, 0x7100);
	t_submit(&s, 100, 100, 52 * MS, L);
	t_sync(&s, 100, 100, 53 * MS, 0, 54 * MS, L, 52 * MS);
	t_proc(&s, 60 * MS, IG_PROC_EXIT, 101, 100, 0, NULL);
	t_proc(&s, 61 * MS, IG_PROC_GROUP_EXIT, 100, 100, 0, NULL);
	t = other_gap(&s, 400 * MS, 0, 4, 10 * MS);
	ts_feed(&s, e);
	h = held(e);
	/* 100's: the charged stacks and their names only; 300's all */
	assert_int_equal(h.gone, 1);
	assert_int_equal(h.py, 2);	/* 0x111, 0x555 */
	assert_int_equal(h.code, 2);	/* 0xa0, 0xc0 */
	assert_int_equal(h.nat, 2 + 4);	/* 0x222, 0x446, 300's */
	assert_int_equal(h.syms, 2 + 4);
	/* more of 300's storage stacks than a table holds, each bigger than
	 * 100's: the storage tables drop 100's, and 0x222 with its name goes;
	 * its Python stack stays for host_compute (10..11 ms) */
	other_gap(&s, t + 100 * MS, 4, IG_STK_CAP + 1, 50 * MS);
	t_end(&s, 3000 * MS);
	ts_feed(&s, e);
	h = held(e);
	assert_int_equal(h.gone, 1);
	assert_int_equal(h.py, 2);
	assert_int_equal(h.code, 2);
	assert_int_equal(h.nat, 1 + 4 + IG_STK_CAP + 1);
	assert_int_equal(h.syms, 1 + 4 + IG_STK_CAP + 1);
	j = report(e);
	assert_null(stack_of(j, "storage", "blocked", "pread (libc.so.6)"));
	assert_null(stack_in(j, "unresolved_causes", "host_compute", "waiter",
			     "pread (libc.so.6)"));
	assert_non_null(stack_in(j, "unresolved_causes", "host_compute", "waiter",
				 "after_wait (job.c:20)"));
	assert_non_null(stack_of(j, "storage", "blocked", "load_other (other.c:1)"));
	x = stack_of(j, "host_compute", "waiter", "read_batch (/src/job.py)");
	assert_non_null(x);
	assert_near(jd(x, "seconds"), S(1), EPS);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* Names shown in the report stay when their process is gone. */
static void test_gone_still_named(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *x;

	(void)state;
	begin(&s);
	t_task(&s, 0, 300, 300, 1, "other");
	t_gpudev(&s, 0, 300, 0, IG_GD_NVML, -1, NULL);
	t_pycode(&s, 100, 1 * MS, 0xa0, "read_batch");
	t_pystack(&s, 100, 100, 2 * MS, 0x111, 0xa0);
	t_usym(&s, 100, 11 * MS, 0x7000, "pread (libc.so.6)");
	t_ustack(&s, 100, 100, 11 * MS, 0x222, 0x7000);
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 52 * MS,
	    .t_on = 52 * MS, .reason = IG_R_STORAGE, .flags = IG_F_IOWAIT,
	    .name = "a.bin");
	t_submit(&s, 100, 100, 52 * MS, L);
	t_sync(&s, 100, 100, 53 * MS, 0, 54 * MS, L, 52 * MS);
	t_proc(&s, 61 * MS, IG_PROC_GROUP_EXIT, 100, 100, 0, NULL);
	other_gap(&s, 400 * MS, 0, 2, 10 * MS);
	t_end(&s, 1000 * MS);
	ts_feed(&s, e);
	assert_int_equal(held(e).gone, 1);
	j = report(e);
	x = stack_of(j, "storage", "blocked", "pread (libc.so.6)");
	assert_non_null(x);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(
		json_object_object_get(x, "frames"), 1)), "read_batch (/src/job.py)");
	assert_near(jd(x, "seconds"), S(41), EPS);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_storage_blocked),
		cmocka_unit_test(test_gil_holder),
		cmocka_unit_test(test_lock_holder),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_gone_forgotten),
		cmocka_unit_test(test_gone_still_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
