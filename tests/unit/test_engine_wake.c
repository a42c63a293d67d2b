// SPDX-License-Identifier: GPL-2.0
/* Wakeups that no user task did: from an interrupt, a kernel thread, the
 * idle task.  The walk never follows the task an interrupt landed on. */
#include "test_engine_gap.h"

/* A loader worker's read completes in an interrupt that landed on another
 * tracked thread (recordings before the kernel side named no one kept that
 * thread as the waker); the feeder's hand-off is woken from an interrupt
 * too; a kworker completes another wait. */
static void test_interrupt_wakers(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	begin(&s);
	t_proc(&s, 1 * MS, IG_PROC_FORK, 200, 200, 100, "worker");
	t_proc(&s, 2 * MS, IG_PROC_THREAD, 201, 200, 0, "worker-feed");
	/* 200 reads 11..25, completion interrupt lands on 201 */
	OFF(&s, .tid = 200, .t_off = 11 * MS, .t_wake = 25 * MS,
	    .t_on = 25 * MS, .reason = IG_R_STORAGE,
	    .flags = IG_F_IOWAIT | IG_F_WAKER_IRQ, .waker_tid = 201,
	    .waker_tgid = 200, .name = "sample-1.bin");
	/* 201 is blocked the whole time on something else */
	OFF(&s, .tid = 201, .t_off = 3 * MS, .t_wake = 60 * MS,
	    .t_on = 60 * MS, .reason = IG_R_SLEEP);
	/* feeder: pipe 11..30 woken by 200 */
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 30 * MS,
	    .t_on = 30 * MS, .reason = IG_R_PIPE, .waker_tid = 200);
	/* condvar 30..40 woken from an interrupt that landed on 200 */
	OFF(&s, .tid = 100, .t_off = 30 * MS, .t_wake = 40 * MS,
	    .t_on = 40 * MS, .reason = IG_R_FUTEX, .flags = IG_F_FUTEX_BITSET |
	    IG_F_WAKER_IRQ, .arg = 0x9000, .waker_tid = 200);
	/* pipe 40..45 woken by a kworker */
	OFF(&s, .tid = 100, .t_off = 40 * MS, .t_wake = 45 * MS,
	    .t_on = 45 * MS, .reason = IG_R_PIPE, .flags = IG_F_WAKER_KERNEL,
	    .waker_tid = 77, .waker_comm = "kworker/0:1");
	j = finish(&s, e);

	/* the chain ends in the worker's own reason */
	assert_near(cause_s(j, "causes", "storage"), S(14), EPS);
	assert_near(detail_s(j, "causes", "storage", "file", "file",
			     "sample-1.bin"), S(14), EPS);
	assert_near(detail_s(j, "causes", "host_compute", "thread", "tid",
			     "200"), S(5), EPS);
	/* not followed into 200 or 201 (201's sleep is not the feeder's),
	 * and no process outside the tracked set is blamed: the wait an
	 * interrupt ended timed out, the kworker is named as the why */
	assert_near(cause_s(j, "causes", "wait_untracked"), 0, EPS);
	assert_near(cause_s(j, "causes", "sleep"), S(10), EPS);
	assert_near(detail_s(j, "causes", "sleep", "thread", "tid", "100"),
		    S(10), EPS);
	assert_near(detail_s(j, "causes", "unknown", "why", "why",
			     "woken by kernel thread kworker/0:1"), S(5), EPS);
	done(j, e, &s);
}

/* CPython's GIL waiters time out every switch interval: a timer wakes
 * them, or the idle task did in recordings that named it.  The holder is
 * the thread whose release ends the waits that follow, never pid 0. */
static void test_gil_timeout(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *c, *d;
	size_t i;

	(void)state;
	begin(&s);
	t_pyrt(&s, 1 * MS, 100, 0x1000, 0x2000);
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 16 * MS,
	    .t_on = 16 * MS, .reason = IG_R_FUTEX, .flags = IG_F_FUTEX_BITSET |
	    IG_F_WAKER_IRQ, .arg = 0x1500);
	OFF(&s, .tid = 100, .t_off = 16 * MS, .t_wake = 21 * MS,
	    .t_on = 21 * MS, .reason = IG_R_FUTEX, .flags = IG_F_FUTEX_BITSET,
	    .arg = 0x1500, .waker_comm = "swapper/1");
	OFF(&s, .tid = 100, .t_off = 21 * MS, .t_wake = 30 * MS,
	    .t_on = 30 * MS, .reason = IG_R_FUTEX, .flags = IG_F_FUTEX_BITSET,
	    .arg = 0x1500, .waker_tid = 101, .waker_tgid = 100);
	/* a timeout with no release after it */
	OFF(&s, .tid = 100, .t_off = 40 * MS, .t_wake = 45 * MS,
	    .t_on = 45 * MS, .reason = IG_R_FUTEX, .flags = IG_F_FUTEX_BITSET |
	    IG_F_WAKER_IRQ, .arg = 0x1500);
	j = finish(&s, e);

	assert_near(cause_s(j, "causes", "gil"), S(24), EPS);
	c = jcause(j, "causes", "gil");
	assert_near(detail_s(j, "causes", "gil", "holder", "tid", "101"),
		    S(19), EPS);
	assert_near(detail_s(j, "causes", "gil", "holder", "comm",
			     "holder not seen"), S(5), EPS);
	for (i = 0; i < json_object_array_length(jpath(c, "details")); i++) {
		d = json_object_array_get_idx(jpath(c, "details"), i);
		assert_false(ji(d, "tid") == 0 &&
			     !strcmp(json_object_get_string(jpath(d, "comm")),
				     "swapper/1"));
	}
	done(j, e, &s);
}

/* Woken onto an idle CPU: the latency until it ran belongs to the wait
 * (here storage), and the idle task is never "who ran instead"; a thread
 * preempted on a busy CPU and moved to an idle one is starved, by no one
 * named. */
static void test_idle_cpu(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *c, *d;
	size_t i;

	(void)state;
	begin(&s);
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 20 * MS,
	    .t_on = 22 * MS, .reason = IG_R_STORAGE, .flags = IG_F_IOWAIT,
	    .name = "a.bin", .prev_comm = "swapper/1", .cpu = 1);
	OFF(&s, .tid = 100, .t_off = 30 * MS, .t_wake = 30 * MS,
	    .t_on = 33 * MS, .reason = IG_R_PREEMPT, .prev_comm = "swapper/0");
	OFF(&s, .tid = 100, .t_off = 40 * MS, .t_wake = 45 * MS,
	    .t_on = 47 * MS, .reason = IG_R_STORAGE, .flags = IG_F_IOWAIT,
	    .name = "b.bin", .prev_tid = 555, .prev_comm = "stress", .cpu = 2);
	j = finish(&s, e);

	assert_near(detail_s(j, "causes", "storage", "file", "file",
			     "a.bin"), S(11), EPS);
	assert_near(detail_s(j, "causes", "storage", "file", "file",
			     "b.bin"), S(5), EPS);
	assert_near(cause_s(j, "causes", "cpu_starvation"), S(5), EPS);
	assert_near(detail_s(j, "causes", "cpu_starvation", "process", "comm",
			     "stress"), S(2), EPS);
	c = jpath(jcause(j, "causes", "cpu_starvation"), "details");
	for (i = 0; i < json_object_array_length(c); i++) {
		d = json_object_array_get_idx(c, i);
		assert_false(!strcmp(json_object_get_string(jpath(d, "kind")),
				     "process") && ji(d, "pid") == 0);
	}
	done(j, e, &s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interrupt_wakers),
		cmocka_unit_test(test_gil_timeout),
		cmocka_unit_test(test_idle_cpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
