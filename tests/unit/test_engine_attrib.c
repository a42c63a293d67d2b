// SPDX-License-Identifier: GPL-2.0
/* Attribution: every ns of a gap goes to one cause, following wakers. */
#include "test_engine_gap.h"

/* The feeder waits on a DataLoader pipe; the worker process read from
 * disk, then decoded on CPU, then wrote to the pipe. */
static void test_dataloader(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;
	uint32_t dev = (8u << 20) | 16;

	(void)state;
	begin(&s);
	t_proc(&s, 1 * MS, IG_PROC_FORK, 200, 200, 100, "pt_data_worker");
	t_bio(&s, 200, 200, 12 * MS, 40 * MS, dev);
	OFF(&s, .tid = 200, .t_off = 11 * MS, .t_wake = 41 * MS,
	    .t_on = 41 * MS, .reason = IG_R_STORAGE, .flags = IG_F_IOWAIT,
	    .name = "/data/shard-0.tar");
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 50 * MS,
	    .t_on = 50 * MS, .reason = IG_R_PIPE, .waker_tid = 200,
	    .waker_comm = "pt_data_worker");
	j = finish(&s, e);

	assert_near(cause_s(j, "causes", "storage"), S(30), EPS);
	assert_near(detail_s(j, "causes", "storage", "file", "file",
			     "/data/shard-0.tar"), S(30), EPS);
	assert_near(detail_s(j, "causes", "storage", "device", "dev", "8:16"),
		    S(30), EPS);
	assert_near(cause_s(j, "causes", "host_compute"), S(12), EPS);
	assert_near(detail_s(j, "causes", "host_compute", "thread", "tid",
			     "100"), S(3), EPS);
	assert_near(detail_s(j, "causes", "host_compute", "thread", "tid",
			     "200"), S(9), EPS);
	/* storage first: causes are sorted by time */
	assert_string_equal(json_object_get_string(jpath(
		json_object_array_get_idx(jpath(j, "causes"), 0), "cause")),
		"storage");
	assert_near(jd(json_object_array_get_idx(jpath(j, "block"), 0),
		       "read_p50_ms"), 28.0, 1e-9);
	done(j, e, &s);
}

/* The worker's switch-in after its read was not reported (docs/design.md
 * §5.15): its wait comes at its next switch-out, 4 ms later, back on CPU
 * at t_in.  The read is storage up to t_in, not up to when it was sent,
 * and the worker's 4 ms on CPU before its next switch-out stay its own. */
static void test_in_unseen(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	begin(&s);
	t_proc(&s, 1 * MS, IG_PROC_FORK, 200, 200, 100, "pt_data_worker");
	OFF(&s, .tid = 200, .t_off = 11 * MS, .t_wake = 41 * MS,
	    .t_on = 45 * MS, .t_in = 41 * MS, .reason = IG_R_STORAGE,
	    .flags = IG_F_IOWAIT | IG_F_IN_UNSEEN, .name = "/data/shard-0.tar");
	OFF(&s, .tid = 200, .t_off = 45 * MS, .t_wake = 0,
	    .t_on = 46 * MS, .reason = IG_R_PREEMPT);
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 50 * MS,
	    .t_on = 50 * MS, .reason = IG_R_PIPE, .waker_tid = 200,
	    .waker_comm = "pt_data_worker");
	j = finish(&s, e);

	assert_near(cause_s(j, "causes", "storage"), S(30), EPS);
	assert_near(detail_s(j, "causes", "host_compute", "thread", "tid",
			     "200"), S(8), EPS);
	assert_int_equal(json_object_get_int64(jpath(j, "offcpu.switch_ins_unseen")), 1);
	done(j, e, &s);
}

/* t_in is read only where the record holds it: a 176-byte record (written
 * before it, or a file that sets the flag) ends at its own time. */
static void test_in_unseen_short(void **state)
{
	struct ig_offcpu o = { .h = { .type = IG_REC_OFFCPU, .size = sizeof(o), .ts = 9000 },
			       .flags = IG_F_IN_UNSEEN, .t_in = 7000 };

	(void)state;
	assert_int_equal(ig_offcpu_on(&o), 7000);
	o.h.size = offsetof(struct ig_offcpu, t_in);
	assert_int_equal(ig_offcpu_on(&o), 9000);
	o.h.size = sizeof(o);
	o.flags = 0;
	assert_int_equal(ig_offcpu_on(&o), 9000);
}

/* Feeder <- worker (condvar) <- another worker thread on CPU. */
static void test_nested(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	begin(&s);
	t_proc(&s, 1 * MS, IG_PROC_FORK, 200, 200, 100, "worker");
	t_proc(&s, 2 * MS, IG_PROC_THREAD, 201, 200, 0, "worker-io");
	OFF(&s, .tid = 200, .t_off = 11 * MS, .t_wake = 45 * MS,
	    .t_on = 46 * MS, .reason = IG_R_FUTEX, .flags = IG_F_FUTEX_BITSET,
	    .arg = 0x5000, .waker_tid = 201, .waker_tgid = 200,
	    .prev_tid = 777, .prev_comm = "kworker/1");
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 50 * MS,
	    .t_on = 50 * MS, .reason = IG_R_PIPE, .waker_tid = 200);
	j = finish(&s, e);

	assert_near(detail_s(j, "causes", "host_compute", "thread", "tid",
			     "201"), S(34), EPS);
	assert_near(detail_s(j, "causes", "host_compute", "thread", "tid",
			     "200"), S(4), EPS);
	assert_near(detail_s(j, "causes", "host_compute", "thread", "tid",
			     "100"), S(3), EPS);
	assert_near(cause_s(j, "causes", "cpu_starvation"), S(1), EPS);
	assert_near(detail_s(j, "causes", "cpu_starvation", "process", "comm",
			     "kworker/1"), S(1), EPS);
	done(j, e, &s);
}

/* Two threads waking each other: the loop is reported, not followed. */
static void test_cycle(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	begin(&s);
	t_proc(&s, 1 * MS, IG_PROC_FORK, 200, 200, 100, "worker");
	OFF(&s, .tid = 200, .t_off = 20 * MS, .t_wake = 40 * MS,
	    .t_on = 40 * MS, .reason = IG_R_UNIX, .waker_tid = 100);
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 50 * MS,
	    .t_on = 50 * MS, .reason = IG_R_PIPE, .waker_tid = 200);
	j = finish(&s, e);

	assert_near(detail_s(j, "causes", "unknown", "why", "why",
			     "wait cycle"), S(20), EPS);
	assert_near(detail_s(j, "causes", "host_compute", "thread", "tid",
			     "200"), S(19), EPS);
	done(j, e, &s);
}

/* Deeper chains than max_depth stop with the reason. */
static void test_depth(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 2);
	struct json_object *j;
	uint32_t t;

	(void)state;
	begin(&s);
	for (t = 200; t < 205; t++)
		t_proc(&s, 1 * MS, IG_PROC_FORK, t, t, 100, "stage");
	for (t = 204; t > 200; t--)
		OFF(&s, .tid = t - 1, .t_off = 11 * MS, .t_wake = 50 * MS,
		    .t_on = 50 * MS, .reason = IG_R_PIPE, .waker_tid = t);
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 50 * MS,
	    .t_on = 50 * MS, .reason = IG_R_PIPE, .waker_tid = 200);
	j = finish(&s, e);

	assert_near(detail_s(j, "causes", "unknown", "why", "why",
			     "waker chain deeper than 2"), S(39), EPS);
	done(j, e, &s);
}

/* A futex in _PyRuntime is the GIL; a plain futex elsewhere is a lock;
 * a bitset futex (condvar, semaphore) is a hand-off: follow the waker. */
static void test_futexes(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *c, *d;

	(void)state;
	begin(&s);
	t_pyrt(&s, 1 * MS, 100, 0x1000, 0x2000);
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 21 * MS,
	    .t_on = 21 * MS, .reason = IG_R_FUTEX, .flags = IG_F_FUTEX_BITSET,
	    .arg = 0x1500, .waker_tid = 101, .waker_tgid = 100);
	OFF(&s, .tid = 100, .t_off = 22 * MS, .t_wake = 29 * MS,
	    .t_on = 29 * MS, .reason = IG_R_FUTEX, .flags = IG_F_FUTEX_PLAIN,
	    .arg = 0x9000, .waker_tid = 101, .waker_tgid = 100);
	OFF(&s, .tid = 101, .tgid = 100, .t_off = 30 * MS, .t_wake = 40 * MS,
	    .t_on = 40 * MS, .reason = IG_R_STORAGE, .name = "/etc/big");
	OFF(&s, .tid = 100, .t_off = 33 * MS, .t_wake = 43 * MS,
	    .t_on = 43 * MS, .reason = IG_R_FUTEX, .flags = IG_F_FUTEX_BITSET,
	    .arg = 0x9100, .waker_tid = 101, .waker_tgid = 100);
	j = finish(&s, e);

	assert_near(cause_s(j, "causes", "gil"), S(10), EPS);
	c = jcause(j, "causes", "gil");
	d = json_object_array_get_idx(jpath(c, "details"), 0);
	assert_string_equal(json_object_get_string(jpath(d, "kind")),
			    "holder");
	assert_int_equal(ji(d, "tid"), 101);
	assert_near(jd(d, "holder_on_cpu_s"), S(10), EPS);
	assert_near(cause_s(j, "causes", "lock"), S(7), EPS);
	assert_near(detail_s(j, "causes", "lock", "lock", "addr", "0x9000"),
		    S(7), EPS);
	assert_near(detail_s(j, "causes", "lock", "waker", "tid", "101"),
		    S(7), EPS);
	assert_near(cause_s(j, "causes", "storage"), S(7), EPS);
	assert_near(detail_s(j, "causes", "host_compute", "thread", "tid",
			     "101"), S(3), EPS);
	assert_near(detail_s(j, "causes", "host_compute", "thread", "tid",
			     "100"), S(15), EPS);
	done(j, e, &s);
}

/* A GIL is its process's: a timed-out wait for it is not held by whoever
 * ends the next wait on something else (a queue's semaphore that a
 * forked worker, with the same addresses, releases), nor is a GIL wait
 * released by a thread of another process. */
static void test_gil_other_process(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *c, *d;

	(void)state;
	begin(&s);
	t_pyrt(&s, 1 * MS, 100, 0x1000, 0x2000);
	t_proc(&s, 2 * MS, IG_PROC_FORK, 200, 200, 100, "worker");
	/* 11..21 on the GIL, timed out; 21..23 on a semaphore at 0x9000,
	 * posted by the worker */
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 21 * MS,
	    .t_on = 21 * MS, .reason = IG_R_FUTEX, .flags = IG_F_FUTEX_BITSET,
	    .arg = 0x1500);
	OFF(&s, .tid = 100, .t_off = 21 * MS, .t_wake = 23 * MS,
	    .t_on = 23 * MS, .reason = IG_R_FUTEX, .flags = IG_F_FUTEX_BITSET,
	    .arg = 0x9000, .waker_tid = 200, .waker_tgid = 200);
	/* 24..30 on the GIL word, "woken" by the worker */
	OFF(&s, .tid = 100, .t_off = 24 * MS, .t_wake = 30 * MS,
	    .t_on = 30 * MS, .reason = IG_R_FUTEX, .flags = IG_F_FUTEX_BITSET,
	    .arg = 0x1500, .waker_tid = 200, .waker_tgid = 200);
	j = finish(&s, e);

	assert_near(cause_s(j, "causes", "gil"), S(16), EPS);
	c = jcause(j, "causes", "gil");
	d = json_object_array_get_idx(jpath(c, "details"), 0);
	assert_int_equal(ji(d, "tid"), 0);
	assert_near(detail_s(j, "causes", "gil", "holder", "tid", "200"), 0, EPS);
	done(j, e, &s);
}

/* A free-threaded CPython's wait for an object's lock (IG_F_PYLOCK, the
 * kernel's mark of its critical sections) is a lock wait on the object's
 * mutex, held by its waker, even where that mutex lies in _PyRuntime (a
 * type's lock); its parking-lot semaphore is not followed.  The CPU it
 * yields while it spins for the lock is the lock's too, a preemption
 * that is not so flagged is starvation. */
static void test_pylock(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	begin(&s);
	t_pyrt(&s, 1 * MS, 100, 0x1000, 0x2000);
	t_proc(&s, 2 * MS, IG_PROC_THREAD, 101, 100, 0, "sort_hog");
	/* 11..21 on a list's mutex, 22..29 on the types' mutex in the
	 * runtime; the holder computes meanwhile */
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 21 * MS,
	    .t_on = 21 * MS, .reason = IG_R_FUTEX,
	    .flags = IG_F_FUTEX_PLAIN | IG_F_PYLOCK, .arg = 0x7f0000001234,
	    .waker_tid = 101, .waker_tgid = 100, .waker_comm = "sort_hog");
	OFF(&s, .tid = 100, .t_off = 22 * MS, .t_wake = 29 * MS,
	    .t_on = 29 * MS, .reason = IG_R_FUTEX,
	    .flags = IG_F_FUTEX_PLAIN | IG_F_PYLOCK, .arg = 0x1800,
	    .waker_tid = 101, .waker_tgid = 100, .waker_comm = "sort_hog");
	/* 30..34 yielded while spinning for the list's mutex, 35..37
	 * preempted */
	OFF(&s, .tid = 100, .t_off = 30 * MS, .t_on = 34 * MS,
	    .reason = IG_R_PREEMPT, .flags = IG_F_PYLOCK, .arg = 0x7f0000001234,
	    .prev_tid = 556, .prev_tgid = 555, .prev_comm = "stress");
	OFF(&s, .tid = 100, .t_off = 35 * MS, .t_on = 37 * MS,
	    .reason = IG_R_PREEMPT, .prev_tid = 556, .prev_tgid = 555,
	    .prev_comm = "stress");
	j = finish(&s, e);

	assert_near(cause_s(j, "causes", "lock"), S(21), EPS);
	assert_near(detail_s(j, "causes", "lock", "lock", "addr",
			     "0x7f0000001234"), S(14), EPS);
	assert_near(cause_s(j, "causes", "cpu_starvation"), S(2), EPS);
	assert_near(detail_s(j, "causes", "lock", "lock", "addr", "0x1800"),
		    S(7), EPS);
	assert_near(detail_s(j, "causes", "lock", "waker", "tid", "101"),
		    S(17), EPS);
	assert_near(cause_s(j, "causes", "gil"), 0, EPS);
	assert_near(detail_s(j, "causes", "host_compute", "thread", "tid",
			     "101"), 0, EPS);
	done(j, e, &s);
}

/* Without a _PyRuntime range the same futex is a lock; a forked child
 * inherits the range until it execs. */
static void test_pyrt_inherit(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	begin(&s);
	t_pyrt(&s, 1 * MS, 100, 0x1000, 0x2000);
	t_proc(&s, 2 * MS, IG_PROC_FORK, 200, 200, 100, "worker");
	t_proc(&s, 3 * MS, IG_PROC_FORK, 300, 300, 100, "sh");
	t_proc(&s, 4 * MS, IG_PROC_EXEC, 300, 300, 0, "tool");
	/* feeder waits on a pipe for 200, 200 waits on the GIL word */
	OFF(&s, .tid = 200, .t_off = 11 * MS, .t_wake = 20 * MS,
	    .t_on = 20 * MS, .reason = IG_R_FUTEX, .flags = IG_F_FUTEX_PLAIN,
	    .arg = 0x1800, .waker_tid = 201, .waker_tgid = 200);
	OFF(&s, .tid = 300, .t_off = 20 * MS, .t_wake = 30 * MS,
	    .t_on = 30 * MS, .reason = IG_R_FUTEX, .flags = IG_F_FUTEX_PLAIN,
	    .arg = 0x1800, .waker_tid = 301, .waker_tgid = 300);
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 20 * MS,
	    .t_on = 20 * MS, .reason = IG_R_PIPE, .waker_tid = 200);
	OFF(&s, .tid = 100, .t_off = 20 * MS, .t_wake = 30 * MS,
	    .t_on = 30 * MS, .reason = IG_R_PIPE, .waker_tid = 300);
	j = finish(&s, e);

	assert_near(cause_s(j, "causes", "gil"), S(9), EPS);
	assert_near(cause_s(j, "causes", "lock"), S(10), EPS);
	done(j, e, &s);
}

/* Blocked waits decided by the feeder's own state. */
static void test_blocked_kinds(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	begin(&s);
	t_mapping(&s, 1 * MS, 100, 0x7000000, 0x8000000, "/data/weights.bin");
	/* 11..15 fault on a mapped file, 15..17 on a named one */
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 15 * MS,
	    .t_on = 15 * MS, .reason = IG_R_PAGEFAULT, .flags = IG_F_IOWAIT,
	    .arg = 0x7001000);
	OFF(&s, .tid = 100, .t_off = 15 * MS, .t_wake = 17 * MS,
	    .t_on = 17 * MS, .reason = IG_R_PAGEFAULT, .arg = 0x10,
	    .name = "x.npy");
	/* 17..20 network, woken by a tracked thread: not followed */
	OFF(&s, .tid = 100, .t_off = 17 * MS, .t_wake = 20 * MS,
	    .t_on = 20 * MS, .reason = IG_R_SOCKET, .waker_tid = 101,
	    .waker_tgid = 100, .peer = "10.0.0.1", .port = 443);
	/* 20..24 sleep */
	OFF(&s, .tid = 100, .t_off = 20 * MS, .t_wake = 24 * MS,
	    .t_on = 24 * MS, .reason = IG_R_SLEEP);
	/* 24..28 pipe, woken by an untracked process */
	OFF(&s, .tid = 100, .t_off = 24 * MS, .t_wake = 28 * MS,
	    .t_on = 28 * MS, .reason = IG_R_PIPE, .waker_tid = 999,
	    .waker_comm = "sshd");
	/* 28..30 poll, woken from an interrupt: its timeout ran out */
	OFF(&s, .tid = 100, .t_off = 28 * MS, .t_wake = 30 * MS,
	    .t_on = 30 * MS, .reason = IG_R_POLL, .waker_tid = 5,
	    .flags = IG_F_WAKER_IRQ);
	/* 30..33 io_uring with iowait, 33..35 another syscall in iowait */
	OFF(&s, .tid = 100, .t_off = 30 * MS, .t_wake = 33 * MS,
	    .t_on = 33 * MS, .reason = IG_R_IOURING, .flags = IG_F_IOWAIT);
	OFF(&s, .tid = 100, .t_off = 33 * MS, .t_wake = 35 * MS,
	    .t_on = 35 * MS, .reason = IG_R_OTHER, .flags = IG_F_IOWAIT);
	/* 35..40 preempted by "stress" (pid 555) on cpu 2 */
	OFF(&s, .tid = 100, .t_off = 35 * MS, .t_on = 40 * MS,
	    .reason = IG_R_PREEMPT, .prev_tid = 556, .prev_tgid = 555,
	    .prev_comm = "stress", .cpu = 2);
	j = finish(&s, e);

	assert_near(cause_s(j, "causes", "page_fault"), S(6), EPS);
	assert_near(detail_s(j, "causes", "page_fault", "file", "file",
			     "/data/weights.bin"), S(4), EPS);
	assert_near(detail_s(j, "causes", "page_fault", "file", "file",
			     "x.npy"), S(2), EPS);
	assert_near(cause_s(j, "causes", "network"), S(3), EPS);
	assert_near(detail_s(j, "causes", "network", "peer", "peer",
			     "10.0.0.1:443"), S(3), EPS);
	assert_near(cause_s(j, "causes", "sleep"), S(6), EPS);
	assert_near(cause_s(j, "causes", "wait_untracked"), S(4), EPS);
	assert_near(detail_s(j, "causes", "wait_untracked", "waker", "comm",
			     "sshd"), S(4), EPS);
	assert_near(cause_s(j, "causes", "storage"), S(5), EPS);
	assert_near(cause_s(j, "causes", "cpu_starvation"), S(5), EPS);
	assert_near(detail_s(j, "causes", "cpu_starvation", "process", "pid",
			     "555"), S(5), EPS);
	assert_near(detail_s(j, "causes", "cpu_starvation", "cpu", "cpu",
			     "2"), S(5), EPS);
	/* on CPU 10..11 and 40..52 */
	assert_near(cause_s(j, "causes", "host_compute"), S(13), EPS);
	done(j, e, &s);
}

/* A feeder that did not exist for the whole gap: unknown before. */
static void test_unknown_before_seen(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_submit(&s, 100, 100, 5 * MS, L);
	t_sync(&s, 100, 100, 6 * MS, 0, 10 * MS, L, 5 * MS);
	t_proc(&s, 20 * MS, IG_PROC_THREAD, 102, 100, 0, "launcher");
	t_submit(&s, 102, 100, 30 * MS, L);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);
	assert_near(jd(j, "gpu.idle_s"), S(20), EPS);
	assert_near(detail_s(j, "causes", "unknown", "why", "why",
			     "before the thread was seen"), S(10), EPS);
	assert_near(detail_s(j, "causes", "host_compute", "thread", "tid",
			     "102"), S(10), EPS);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* The waker walk crosses processes and keeps exact proportions also when
 * the feeder's wait only partly overlaps the gap. */
static void test_partial_overlap(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;

	(void)state;
	begin(&s);
	t_proc(&s, 1 * MS, IG_PROC_FORK, 200, 200, 100, "worker");
	/* worker: storage 2..30 (only 11..30 is in the feeder's wait) */
	OFF(&s, .tid = 200, .t_off = 2 * MS, .t_wake = 30 * MS,
	    .t_on = 30 * MS, .reason = IG_R_STORAGE, .name = "a");
	/* feeder waits 10..40 */
	OFF(&s, .tid = 100, .t_off = 10 * MS, .t_wake = 40 * MS,
	    .t_on = 40 * MS, .reason = IG_R_PIPE, .waker_tid = 200);
	j = finish(&s, e);
	assert_near(cause_s(j, "causes", "storage"), S(20), EPS);
	assert_near(detail_s(j, "causes", "host_compute", "thread", "tid",
			     "200"), S(10), EPS);
	assert_near(detail_s(j, "causes", "host_compute", "thread", "tid",
			     "100"), S(12), EPS);
	done(j, e, &s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dataloader),
		cmocka_unit_test(test_in_unseen),
		cmocka_unit_test(test_in_unseen_short),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_cycle),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_futexes),
		cmocka_unit_test(test_gil_other_process),
		cmocka_unit_test(test_pyrt_inherit),
		cmocka_unit_test(test_pylock),
		cmocka_unit_test(test_blocked_kinds),
		cmocka_unit_test(test_unknown_before_seen),
		cmocka_unit_test(test_partial_overlap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
