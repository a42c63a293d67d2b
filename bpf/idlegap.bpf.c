// SPDX-License-Identifier: GPL-2.0
/*
 * idlegap's BPF programs.  Thin SEC() wrappers around the logic of each
 * hook's header: sched.bpf.h (with offcpu.bpf.h), proc.bpf.h,
 * syscall.bpf.h, sample.bpf.h, block.bpf.h, and the uprobes: cuda.bpf.h
 * (libcuda), ldso.bpf.h (the dynamic loader) and pylock.bpf.h (a
 * free-threaded CPython's per-object locks).  Scheduler, block and
 * fault hooks come in two flavours, tp_btf and raw_tp (for kernels without BTF-typed tracepoints);
 * user space loads one of each.  No hook needs tracefs or debugfs mounted:
 * tracepoints attach by name, uprobes by file and offset.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#ifdef IG_COMPAT
#include "compat.bpf.h"
#endif
#include "sched.bpf.h"
#include "proc.bpf.h"
#include "syscall.bpf.h"
#include "sample.bpf.h"
#include "block.bpf.h"
#include "cuda.bpf.h"
#include "ldso.bpf.h"
#include "nccl.bpf.h"
#include "pylock.bpf.h"

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sched_switch")
int BPF_PROG(ig_switch_btf, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return handle_switch(preempt, prev, next, true);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(ig_switch_raw, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return handle_switch(preempt, prev, next, false);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(ig_waking_btf, struct task_struct *p)
{
	return handle_waking(ctx, p, true);
}

SEC("raw_tp/sched_waking")
int BPF_PROG(ig_waking_raw, struct task_struct *p)
{
	return handle_waking(ctx, p, false);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(ig_fork_btf, struct task_struct *parent, struct task_struct *child)
{
	return handle_fork(parent, child);
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(ig_fork_raw, struct task_struct *parent, struct task_struct *child)
{
	return handle_fork(parent, child);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(ig_exec_btf, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	return handle_exec(p, old_pid, bprm);
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(ig_exec_raw, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	return handle_exec(p, old_pid, bprm);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(ig_sys_enter_btf, struct pt_regs *regs, long id)
{
	return handle_sys_enter(regs, id);
}

SEC("raw_tp/sys_enter")
int BPF_PROG(ig_sys_enter_raw, struct pt_regs *regs, long id)
{
	return handle_sys_enter(regs, id);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(ig_exit_btf, struct task_struct *p)
{
	return handle_exit(p);
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(ig_exit_raw, struct task_struct *p)
{
	return handle_exit(p);
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(ig_fault_btf, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	return handle_fault(address);
}

SEC("raw_tp/page_fault_user")
int BPF_PROG(ig_fault_raw, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	return handle_fault(address);
}

/* block_rq_insert and block_rq_issue: their request is the first or the
 * second argument, by kernel (rq_arg) */
SEC("tp_btf/block_rq_insert")
int ig_rq_insert_btf(__u64 *ctx)
{
	return handle_rq_insert(rq_arg(ctx, rq_insert_has_queue));
}

SEC("raw_tp/block_rq_insert")
int ig_rq_insert_raw(__u64 *ctx)
{
	return handle_rq_insert(rq_arg(ctx, rq_insert_has_queue));
}

SEC("tp_btf/block_rq_issue")
int ig_rq_issue_btf(__u64 *ctx)
{
	return handle_rq_issue(rq_arg(ctx, rq_issue_has_queue));
}

SEC("raw_tp/block_rq_issue")
int ig_rq_issue_raw(__u64 *ctx)
{
	return handle_rq_issue(rq_arg(ctx, rq_issue_has_queue));
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(ig_rq_complete_btf, struct request *rq, int error,
	     unsigned int nr_bytes)
{
	return handle_rq_complete(rq, error, nr_bytes);
}

SEC("raw_tp/block_rq_complete")
int BPF_PROG(ig_rq_complete_raw, struct request *rq, int error,
	     unsigned int nr_bytes)
{
	return handle_rq_complete(rq, error, nr_bytes);
}

SEC("perf_event")
int ig_sample(struct bpf_perf_event_data *ctx)
{
	return handle_sample(ctx);
}

/* libcuda: attached by file and offset, one link per entry point, the
 * entry point's id and class in the attach cookie. */
SEC("uprobe")
int BPF_KPROBE(ig_cu_submit) { return cu_submit(ctx, bpf_get_attach_cookie(ctx)); }

SEC("uprobe")
int BPF_KPROBE(ig_cu_enter) { return cu_enter(ctx, bpf_get_attach_cookie(ctx)); }

SEC("uretprobe")
int BPF_KRETPROBE(ig_cu_exit) { return cu_exit(ctx); }

SEC("uprobe")
int BPF_KPROBE(ig_cu_event_record) { return cu_event_record(ctx, bpf_get_attach_cookie(ctx)); }

#ifdef IG_COMPAT
/* Without attach cookies (before 5.15): one program per entry point,
 * named ig_cc_<symbol>, its cookie a constant.  _ptsz/_ptds names use the
 * per-thread default stream. */
#define IG_CC_END(s, k, c)	(sizeof(s) > 6 && (s)[sizeof(s) - (k)] == (c))
#define IG_CC_PTSZ(s)	(IG_CC_END(s, 6, '_') && IG_CC_END(s, 5, 'p') && \
			 IG_CC_END(s, 4, 't') && ((IG_CC_END(s, 3, 's') && \
			 IG_CC_END(s, 2, 'z')) || (IG_CC_END(s, 3, 'd') && \
			 IG_CC_END(s, 2, 's'))))
#define IG_API(name, cls, devarg)					\
SEC("uprobe")								\
int ig_cc_##name(struct pt_regs *ctx)					\
{									\
	return cu_probe(ctx, IG_COOKIE(IG_API_##name, IG_AC_##cls,	\
				       IG_CC_PTSZ(#name), devarg));	\
}
#include "cuda_api.def"
#undef IG_API
#endif

/* libnccl (nccl.bpf.h): one entry program, the entry point's id and
 * class in the cookie, and one return program for the communicator
 * calls, which keep what they need per thread. */
SEC("uprobe")
int BPF_KPROBE(ig_nc_enter) { return nc_enter(ctx, bpf_get_attach_cookie(ctx)); }

SEC("uretprobe")
int BPF_KRETPROBE(ig_nc_exit) { return nc_exit(ctx); }

#ifdef IG_COMPAT
#define IG_NCCL(name, cls)						\
SEC("uprobe")								\
int ig_cc_##name(struct pt_regs *ctx)					\
{									\
	return nc_enter(ctx, IG_NCCL_COOKIE(IG_NA_##name, IG_NCC_##cls));	\
}
#include "nccl_api.def"
#undef IG_NCCL
#endif

/* ld.so's _dl_debug_state(), attached for every process. */
SEC("uprobe")
int BPF_KPROBE(ig_ld_debug) { return handle_ld_debug(); }

/* A free-threaded CPython's critical sections (pylock.bpf.h), attached
 * for every process of the interpreter's file: the slow path of one lock,
 * (c, m), and of two, (c, m1, m2, is_m1_locked): m1 is tried first, so
 * the wait is for m2 only once m1 is held. */
SEC("uprobe")
int BPF_KPROBE(ig_py_cs_enter) { return py_lock_enter(PT_REGS_PARM2(ctx), PT_REGS_SP(ctx)); }

SEC("uprobe")
int BPF_KPROBE(ig_py_cs2_enter)
{
	__u64 m1 = PT_REGS_PARM2(ctx), m2 = PT_REGS_PARM3(ctx);

	/* both read: the verifier refuses a context offset chosen at run
	 * time, which a select between the two loads would be */
	barrier_var(m1);
	barrier_var(m2);
	return py_lock_enter((__u32)PT_REGS_PARM4(ctx) ? m2 : m1, PT_REGS_SP(ctx));
}

SEC("uretprobe")
int BPF_KRETPROBE(ig_py_cs_exit) { return py_lock_exit(); }
