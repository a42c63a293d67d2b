/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A free-threaded CPython's per-object locks (docs/design.md §5.7).  With
 * no GIL, each object carries a PyMutex that critical sections take; when
 * it is held, _PyCriticalSection_BeginSlow() (or the two-lock
 * _PyCriticalSection2_BeginSlow()) parks the thread on a semaphore of its
 * own stack, a bitset futex wait that alone would read as a queue
 * hand-off.  Before it parks, it spins, yielding the CPU up to 40 times
 * (sched_yield(): a runnable switch-out wherever another task wants the
 * CPU).  These uprobes mark the thread for the time of the slow path, with
 * the mutex it waits for, so that classify_block() and classify_yield()
 * (offcpu.bpf.h) make both a wait for that mutex.  The slow path runs only
 * under contention, right before the thread sleeps: the probes' cost is
 * paid by threads that are about to wait anyway.
 */
#ifndef IG_PYLOCK_BPF_H
#define IG_PYLOCK_BPF_H

#include "maps.bpf.h"

/* How far below the slow path's entry its wait's futex may lie: the
 * parking lot's wait entry, a few frames down the same stack. */
#define IG_PYLOCK_FRAME	(64u << 10)

/* Entry of a slow path that may wait for @mutex. */
static __always_inline int py_lock_enter(__u64 mutex, __u64 sp)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct ig_thread_state *ts = thread_get((__u32)pid_tgid, pid_tgid >> 32);

	if (!ts)
		return 0;	/* not traced (the probe is every process's) */
	ts->pylock = mutex;
	ts->pylock_sp = sp;
	return 0;
}

/* Its return: the lock is held (or was not needed). */
static __always_inline int py_lock_exit(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ig_thread_state *ts = bpf_map_lookup_elem(&threads, &tid);

	if (ts)
		ts->pylock = 0;
	return 0;
}

/* Whether a wait at @addr on the thread's stack (a futex's, or the stack
 * pointer itself) is the marked slow path's: within its frames, so that a
 * mark left by a return never seen (probes removed in the call) names no
 * later wait. */
static __always_inline bool py_lock_wait(const struct ig_thread_state *ts,
					 __u64 addr)
{
	return ts->pylock && addr < ts->pylock_sp &&
	       ts->pylock_sp - addr < IG_PYLOCK_FRAME;
}

#endif
