/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Scheduler hooks: sched_switch and sched_waking.  Off-CPU time of
 * tracked threads is reduced to one IG_REC_OFFCPU record per interval,
 * with its reason decided at switch-out (offcpu.bpf.h) and its waker
 * captured at wakeup.
 */
#ifndef IG_SCHED_BPF_H
#define IG_SCHED_BPF_H

#include "arch.bpf.h"
#include "maps.bpf.h"
#include "offcpu.bpf.h"
#include "pystack.bpf.h"
#include "ustack.bpf.h"

/* Sends the off-CPU interval in progress, stamped @now; @t_in: back on CPU
 * then, if not at @now (0); @prev ran on the CPU just before (NULL: not
 * known). */
static __always_inline void send_offcpu(struct ig_thread_state *ts, __u32 tid,
					struct task_struct *prev, __u64 t_in,
					__u64 now, __u16 flags)
{
	struct ig_offcpu *r;

	r = rec_reserve(sizeof(*r), IG_REC_OFFCPU, tid, ts->tgid, now);
	if (!r)
		return;
	r->t_off = ts->t_off;
	r->t_wake = ts->reason == IG_R_PREEMPT ? 0 : ts->t_wake;
	r->arg = ts->arg;
	r->waker_tid = ts->waker_tid;
	r->waker_tgid = ts->waker_tgid;
	r->syscall = ts->sc_nr;
	r->reason = ts->reason;
	r->flags = ts->flags | flags;
	r->off_cpu = ts->off_cpu;
	r->pre_ns = ts->pre_ns;
	r->t_in = t_in;
	__builtin_memcpy(r->waker_comm, ts->waker_comm, IG_COMM_LEN);
	if (prev) {
		r->prev_tid = BPF_CORE_READ(prev, pid);
		r->prev_tgid = BPF_CORE_READ(prev, tgid);
		BPF_CORE_READ_STR_INTO(&r->prev_comm, prev, comm);
	} else {
		r->prev_tid = 0;
		r->prev_tgid = 0;
		r->prev_comm[0] = 0;
	}
	__builtin_memcpy(&r->detail, &ts->detail, sizeof(r->detail));
	rec_submit(r);
}

static __always_inline void on_switch_in(struct ig_thread_state *ts, __u32 tid,
					 struct task_struct *prev,
					 __u64 now, __u32 cpu, bool paused)
{
	ts->t_on = now;
	if (!ts->off)
		return;
	ts->off = 0;
	if (paused || now - ts->t_off < min_offcpu_ns)
		return;
	send_offcpu(ts, tid, prev, 0, now, 0);
}

/*
 * @prev switches out while its last switch-out still waits for its
 * switch-in: the kernel ran it without reporting that (a task the
 * scheduler's tracepoint does not show ran before it on its CPU;
 * docs/design.md §5.15).  The wait is sent now, its end taken from the
 * kernel's own accounting: the CPU time since the task was last picked
 * (se.prev_sum_exec_runtime is set then, and the switch-out has just
 * brought se.sum_exec_runtime up to date).  It ends no earlier than the
 * wakeup, if one was seen, and no later than the thread was seen running.
 */
static __always_inline void on_in_unseen(struct ig_thread_state *ts, __u32 tid,
					 struct task_struct *prev, __u64 now,
					 bool paused)
{
	__u64 ran = BPF_CORE_READ(prev, se.sum_exec_runtime) -
		    BPF_CORE_READ(prev, se.prev_sum_exec_runtime);
	__u64 lo = ts->t_off, t_in;

	if (ts->reason != IG_R_PREEMPT && ts->t_wake > lo)
		lo = ts->t_wake;
	t_in = ran < now - lo ? now - ran : lo;
	/* the CPU time leaves out what the hypervisor stole: seen running
	 * earlier, it was back on CPU by then */
	if (ts->t_run > lo && ts->t_run < t_in)
		t_in = ts->t_run;
	ts->t_on = t_in;	/* a fault before it is no part of the next wait */
	if (paused || t_in - ts->t_off < min_offcpu_ns)
		return;
	send_offcpu(ts, tid, NULL, t_in, now, IG_F_IN_UNSEEN);
}

/*
 * The current thread runs a call of its own into the driver while its
 * last switch-out still waits for a switch-in: it was switched in unseen
 * (docs/design.md §5.15).  Its wait is sent now, before the call's own
 * record, not at its next switch-out: a GPU gap that this very call ends
 * is then attributed with the wait in the thread's history, where it
 * would have found the thread on CPU through it.  The kernel brings
 * se.sum_exec_runtime up to date at its ticks and switches, not here, so
 * the end taken from it may be late by the thread's run since the last
 * update: a tick at most while it runs.
 */
static __always_inline void seen_running(struct ig_thread_state *ts, __u32 tid,
					 __u64 now)
{
	if (ts->off) {
		on_in_unseen(ts, tid, (struct task_struct *)bpf_get_current_task(),
			     now, capture_paused());
		ts->off = 0;
	}
	ts->t_run = now;
}

static __always_inline void on_switch_out(struct ig_thread_state *ts,
					  struct task_struct *prev, bool preempt,
					  __u64 now, __u32 cpu)
{
	unsigned int state;

	stat_add(IG_STAT_SWITCHES, 1);
	if (ts->off)
		on_in_unseen(ts, (__u32)BPF_CORE_READ(prev, pid), prev, now, capture_paused());
	ts->off = 1;
	ts->t_off = now;
	ts->t_wake = 0;
	ts->off_cpu = cpu;
	ts->flags = 0;
	ts->arg = 0;
	ts->waker_tid = 0;
	ts->waker_tgid = 0;
	ts->waker_comm[0] = 0;
	ts->detail.name[0] = 0;
	ts->detail.peer.family = 0;
	ts->sc_nr = -1;
	ts->pre_ns = 0;
	if (ts->cu_begin)
		ts->flags |= IG_F_IN_CUDA_SYNC;

	state = preempt ? TASK_RUNNING : task_state(prev);
	if (state == TASK_RUNNING) {
		ts->reason = IG_R_PREEMPT;
		/* gave the CPU away: a spin for a lock may (sched_yield) */
		if (!preempt && ts->pylock)
			classify_yield(ts, bpf_get_current_task_btf());
		return;
	}
	if (ts->cu_begin)
		ts->cu_blocked = 1;
	/* prev is the current task here: its files and mm are stable. */
	classify_block(ts, bpf_get_current_task_btf(), state);
}

/* Runs on every context switch of the machine: the untracked case is two
 * map lookups.  @btf: the tasks are BTF pointers (tp_btf), read directly;
 * a constant, so each flavour keeps only its own reads. */
static __always_inline int handle_switch(bool preempt, struct task_struct *prev,
					 struct task_struct *next, bool btf)
{
	__u32 ptid = btf ? prev->pid : BPF_CORE_READ(prev, pid);
	__u32 ntid = btf ? next->pid : BPF_CORE_READ(next, pid);
	struct ig_thread_state *pts = bpf_map_lookup_elem(&threads, &ptid);
	struct ig_thread_state *nts = bpf_map_lookup_elem(&threads, &ntid);
	__u64 now = 0;
	__u32 cpu = 0;

	if (pts) {
		now = bpf_ktime_get_ns();
		cpu = bpf_get_smp_processor_id();
		on_switch_out(pts, prev, preempt, now, cpu);
		if (!capture_paused()) {
			py_capture(prev, ptid, pts->tgid, now);
			ustack_capture(ptid, pts->tgid, now, 0);
		}
	}
	if (nts) {
		if (!now) {
			now = bpf_ktime_get_ns();
			cpu = bpf_get_smp_processor_id();
		}
		on_switch_in(nts, ntid, prev, now, cpu, capture_paused());
	}
	return 0;
}

#define PF_KTHREAD	0x00200000	/* include/linux/sched.h */

/*
 * Is @cur running an interrupt: a device completion, network RX, a timer,
 * a softirq?  The kernel exports no plain sign: the per-CPU preempt count
 * is no BTF-typed symbol without KALLSYMS_ALL, and a depth counter kept by
 * the irq tracepoints drifts, since the kernel skips a BPF program that
 * fires while it already runs on the CPU.  Where the code runs tells:
 *  - x86-64 and arm64 run interrupts that arrive in the kernel, and
 *    softirqs, on a per-CPU stack of their own: the tracepoint's arguments
 *    (@ctx, on the kernel stack even when the BPF program has a private
 *    stack) then lie outside @cur's task stack, task->stack up to the user
 *    registers;
 *  - on x86-64 an interrupt that arrives in user mode runs on the task
 *    stack, right above the registers it saved there, which are then no
 *    syscall's (task_stack_irq(), arch.bpf.h).  The entry code marks
 *    interrupts and exceptions alike, so a page fault taken in user mode
 *    reads as an interrupt too: a wakeup from inside one (an mmap_lock
 *    hand-off) names no waker.  arm64 moves to the IRQ stack from user
 *    mode too.
 */
static __always_inline bool in_irq_context(void *ctx, struct task_struct *cur)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(cur);
	__u64 sp = 0, top = 0, base = (__u64)BPF_CORE_READ(cur, stack);

	bpf_probe_read_kernel(&sp, sizeof(sp), &ctx);
	bpf_probe_read_kernel(&top, sizeof(top), &regs);
	top += sizeof(struct pt_regs);
	if (sp < base || sp >= top)
		return true;
	return task_stack_irq(regs);
}

/* Runs in the waker's context (@ctx: the tracepoint's arguments): current
 * is who woke @p, unless it is an interrupt, which lands on any task, or a
 * kernel thread (a kworker or ksoftirqd completing IO). */
static __always_inline int handle_waking(void *ctx, struct task_struct *p,
					 bool btf)
{
	__u32 tid = btf ? p->pid : BPF_CORE_READ(p, pid);
	struct ig_thread_state *ts = bpf_map_lookup_elem(&threads, &tid);
	struct task_struct *cur;
	__u64 pid_tgid, now;

	if (!ts)
		return 0;
	now = bpf_ktime_get_ns();
	if (ts->cu_begin)
		ts->cu_wake = now;
	if (!ts->off || ts->reason == IG_R_PREEMPT)
		return 0;
	ts->t_wake = now;
	cur = bpf_get_current_task_btf();
	pid_tgid = bpf_get_current_pid_tgid();
	/* the idle task wakes others only from interrupts */
	if (!(__u32)pid_tgid || in_irq_context(ctx, cur)) {
		/* not a wakeup by the interrupted task: name no one */
		ts->waker_tid = 0;
		ts->waker_tgid = 0;
		ts->waker_comm[0] = 0;
		ts->flags |= IG_F_WAKER_IRQ;
		return 0;
	}
	ts->waker_tid = (__u32)pid_tgid;
	ts->waker_tgid = pid_tgid >> 32;
	bpf_get_current_comm(ts->waker_comm, sizeof(ts->waker_comm));
	if (BPF_CORE_READ(cur, flags) & PF_KTHREAD)
		ts->flags |= IG_F_WAKER_KERNEL;
	return 0;
}

#endif
