/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU-clock samples of tracked threads (IG_REC_SAMPLE) and the page
 * faults they take (design §5.8).
 */
#ifndef IG_SAMPLE_BPF_H
#define IG_SAMPLE_BPF_H

#include "arch.bpf.h"
#include "maps.bpf.h"
#include "pystack.bpf.h"
#include "ustack.bpf.h"

/* A CPU-clock sample: which code a tracked thread runs, so its on-CPU
 * time can be split between its own code and the CUDA driver's. */
/*
 * In the kernel, handling a page fault taken in user mode: the saved user
 * registers are no syscall's (regs_no_syscall(): set for exceptions and
 * interrupts alike), and a fault began since the thread last ran (a fault
 * that slept ends that test; an interrupt from user mode is brief).
 */
static __always_inline bool in_user_fault(struct pt_regs *u,
					  const struct ig_thread_state *ts)
{
	return regs_no_syscall(u) && ts->fault_ts &&
	       ts->fault_ts >= ts->t_on;
}

static __always_inline int handle_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct ig_thread_state *ts;
	struct ig_sample *r;
	__u64 ip = PT_REGS_IP(&ctx->regs), now;
	__u32 flags = 0;

	ts = bpf_map_lookup_elem(&threads, &tid);
	if (!ts || capture_paused())
		return 0;
	{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 xol;

	if (ip >= KERNEL_HALF) {
		struct pt_regs *u = (struct pt_regs *)bpf_task_pt_regs(task);

		ip = PT_REGS_IP_CORE(u);
		flags |= IG_SF_KERNEL;
		if (in_user_fault(u, ts))
			flags |= IG_SF_FAULT;
	}
	/* a probed instruction runs out of line in a page of its own */
	xol = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);
	if (xol && ip - xol < 4096)
		flags |= IG_SF_UPROBE;
	}
	stat_add(IG_STAT_SAMPLES, 1);
	now = bpf_ktime_get_ns();
	ts->t_run = now;
	py_capture(bpf_get_current_task_btf(), tid, pid_tgid >> 32, now);
	ustack_capture(tid, pid_tgid >> 32, now, IG_USF_SAMPLE);
	r = rec_reserve(sizeof(*r), IG_REC_SAMPLE, tid, pid_tgid >> 32, now);
	if (!r)
		return 0;
	r->ip = ip;
	r->flags = flags;
	r->pad = 0;
	rec_submit(r);
	return 0;
}

static __always_inline int handle_fault(__u64 address)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ig_thread_state *ts = bpf_map_lookup_elem(&threads, &tid);

	if (ts) {
		ts->fault_addr = address;
		ts->fault_ts = bpf_ktime_get_ns();
		ts->t_run = ts->fault_ts;
	}
	return 0;
}

#endif
