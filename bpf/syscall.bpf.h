/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's sys_enter hook: a process mapping a libcuda is found at
 * once (IG_REC_GPULIB).
 */
#ifndef IG_SYSCALL_BPF_H
#define IG_SYSCALL_BPF_H

#include "arch.bpf.h"
#include "maps.bpf.h"
#include "files.bpf.h"

#if defined(__TARGET_ARCH_x86)
#define IG_NR_MMAP	9
#elif defined(__TARGET_ARCH_arm64)
#define IG_NR_MMAP	222
#else
#define IG_NR_MMAP	-1
#endif

/*
 * Whether a process found mapping a libcuda is tracked at once, in the
 * kernel (docs/design.md §7.10): 0 no, 1 every one, 2 those under the
 * cgroup in gpulib_scope (--cgroup); at key 1 the agent's own tgid,
 * never tracked.  Its set-up calls right after the
 * mapping then reach the set-up probes the agent attached for every
 * process of that file, before user space has looked at it.  Written by
 * user space (ig_tracer_gpulib_track()).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} gpulib_track SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} gpulib_scope SEC(".maps");

static __always_inline void gpulib_track_proc(__u32 tgid)
{
	struct ig_proc_state ps = {};
	__u32 zero = 0, one = 1, *v = bpf_map_lookup_elem(&gpulib_track, &zero);
	__u32 *self = bpf_map_lookup_elem(&gpulib_track, &one);

	if (!v || !*v || !self || *self == tgid ||
	    (*v == 2 && bpf_current_task_under_cgroup(&gpulib_scope, 0) != 1))
		return;
	if (bpf_map_update_elem(&procs, &tgid, &ps, BPF_NOEXIST) && !proc_tracked(tgid))
		stat_add(IG_STAT_MAP_FULL, 1);
}

/*
 * Entry of any system call (the agent's hook alone): an mmap of a file
 * named libcuda.so* with PROT_EXEC by a process not tracked yet is the
 * first sign of a GPU process, sent at once.  Other calls cost the
 * comparison of their number.
 */
static __always_inline int handle_sys_enter(struct pt_regs *regs, long id)
{
	static const char want[] = "libcuda.so";
	struct task_struct *task;
	struct file **fds, *f;
	struct ig_gpulib *r;
	const unsigned char *name;
	char base[sizeof(want)];
	unsigned long prot;
	__u32 tgid;
	long fd;
	int i;

	if (id != IG_NR_MMAP)
		return 0;
	prot = PT_REGS_PARM3_CORE_SYSCALL(regs);
	fd = (long)PT_REGS_PARM5_CORE_SYSCALL(regs);
	if (!(prot & 4 /* PROT_EXEC */) || fd < 0 || fd > 65535)
		return 0;
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (proc_tracked(tgid))
		return 0;
	task = (struct task_struct *)bpf_get_current_task();
	fds = BPF_CORE_READ(task, files, fdt, fd);
	if (!fds || bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return 0;
	name = BPF_CORE_READ(f, f_path.dentry, d_name.name);
	if (!name || bpf_probe_read_kernel(base, sizeof(base), name))
		return 0;
	for (i = 0; i < (int)sizeof(want) - 1; i++)
		if (base[i] != want[i])
			return 0;
	gpulib_track_proc(tgid);
	r = rec_reserve(sizeof(*r), IG_REC_GPULIB, (__u32)bpf_get_current_pid_tgid(),
			tgid, bpf_ktime_get_ns());
	if (!r)
		return 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	rec_submit(r);
	return 0;
}

#endif
