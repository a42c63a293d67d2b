/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Process lifecycle hooks: fork, exec and exit of tracked tasks
 * (IG_REC_PROC), which keep the tracked set (design §3.2).
 */
#ifndef IG_PROC_BPF_H
#define IG_PROC_BPF_H

#include "arch.bpf.h"
#include "maps.bpf.h"

static __always_inline void emit_proc(struct task_struct *t, __u32 kind,
				      __u32 ppid)
{
	__u32 tid = BPF_CORE_READ(t, pid), tgid = BPF_CORE_READ(t, tgid);
	struct ig_proc *r;

	r = rec_reserve(sizeof(*r), IG_REC_PROC, tid, tgid, bpf_ktime_get_ns());
	if (!r)
		return;
	r->kind = kind;
	r->ppid = ppid;
	BPF_CORE_READ_STR_INTO(&r->comm, t, comm);
	r->name[0] = 0;
	rec_submit(r);
}

static __always_inline int handle_fork(struct task_struct *parent,
				       struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 tid = BPF_CORE_READ(child, pid), tgid = BPF_CORE_READ(child, tgid);
	struct ig_thread_state ts = {};
	struct ig_proc_state ps = {};
	bool thread = tid != tgid;

	if (!proc_tracked(ptgid))
		return 0;
	if (!thread && bpf_map_update_elem(&procs, &tgid, &ps, BPF_NOEXIST))
		stat_add(IG_STAT_MAP_FULL, 1);
	ts.tgid = tgid;
	ts.sc_nr = -1;
	if (bpf_map_update_elem(&threads, &tid, &ts, BPF_ANY))
		stat_add(IG_STAT_MAP_FULL, 1);
	emit_proc(child, thread ? IG_PROC_THREAD : IG_PROC_FORK, ptgid);
	return 0;
}

static __always_inline int handle_exec(struct task_struct *p, __u32 old_pid,
				       struct linux_binprm *bprm)
{
	__u32 tid = BPF_CORE_READ(p, pid), tgid = BPF_CORE_READ(p, tgid);
	struct ig_proc *r;
	const char *fn;

	if (!proc_tracked(tgid))
		return 0;
	/* A non-leader thread that execs takes over the leader's pid. */
	if (old_pid != tid) {
		struct ig_thread_state *ts = bpf_map_lookup_elem(&threads, &old_pid);

		if (ts) {
			bpf_map_update_elem(&threads, &tid, ts, BPF_ANY);
			bpf_map_delete_elem(&threads, &old_pid);
		}
	}
	r = rec_reserve(sizeof(*r), IG_REC_PROC, tid, tgid, bpf_ktime_get_ns());
	if (!r)
		return 0;
	r->kind = IG_PROC_EXEC;
	r->ppid = old_pid;
	BPF_CORE_READ_STR_INTO(&r->comm, p, comm);
	fn = BPF_CORE_READ(bprm, filename);
	bpf_probe_read_kernel_str(r->name, sizeof(r->name), fn);
	rec_submit(r);
	return 0;
}

static __always_inline int handle_exit(struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid), tgid = BPF_CORE_READ(p, tgid);
	struct ig_proc *r;
	bool group_dead;

	if (!bpf_map_lookup_elem(&threads, &tid))
		return 0;
	bpf_map_delete_elem(&threads, &tid);
	py_forget(tid);
	/* do_exit() has already decremented signal->live */
	group_dead = BPF_CORE_READ(p, signal, live.counter) == 0;
	r = rec_reserve(sizeof(*r), IG_REC_PROC, tid, tgid, bpf_ktime_get_ns());
	if (!r)
		goto out;
	r->kind = group_dead ? IG_PROC_GROUP_EXIT : IG_PROC_EXIT;
	r->ppid = BPF_CORE_READ(p, exit_code);
	BPF_CORE_READ_STR_INTO(&r->comm, p, comm);
	r->name[0] = 0;
	rec_submit(r);
out:
	if (group_dead)
		bpf_map_delete_elem(&procs, &tgid);
	return 0;
}

#endif
