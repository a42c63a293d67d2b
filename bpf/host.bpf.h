/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host probes: scheduler, syscalls, page faults, block IO, interrupts.
 * Off-CPU time of tracked threads is reduced to one IG_REC_OFFCPU record
 * per interval, with its reason decided at switch-out and its waker
 * captured at wakeup.
 */
#ifndef IG_HOST_BPF_H
#define IG_HOST_BPF_H

#include "arch.bpf.h"
#include "maps.bpf.h"
#include "files.bpf.h"
#include "pystack.bpf.h"
#include "ustack.bpf.h"

#define S_IFMT		00170000
#define S_IFSOCK	0140000
#define S_IFREG		0100000
#define S_IFBLK		0060000
#define S_IFIFO		0010000
#define AF_UNIX		1
#define AF_INET		2
#define AF_INET6	10

/* futex(2) commands (include/uapi/linux/futex.h) */
#define FUTEX_CMD_MASK		0x7f
#define FUTEX_WAIT		0
#define FUTEX_LOCK_PI		6
#define FUTEX_WAIT_BITSET	9
#define FUTEX_WAIT_REQUEUE_PI	11
#define FUTEX_LOCK_PI2		13


/* task->__state was task->state before 5.14 (commit 2f064a59a11f). */
struct task_struct___o {
	volatile long state;
} __attribute__((preserve_access_index));

static __always_inline unsigned int task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___o *)t, state);
}

static __always_inline struct file *task_fd_file(struct task_struct *t, long fd)
{
	struct file **fdarr;
	struct file *f = NULL;
	unsigned int max;

	if (fd < 0)
		return NULL;
	max = BPF_CORE_READ(t, files, fdt, max_fds);
	if (fd >= max)
		return NULL;
	fdarr = BPF_CORE_READ(t, files, fdt, fd);
	bpf_probe_read_kernel(&f, sizeof(f), &fdarr[fd]);
	return f;
}

static __always_inline void file_name(struct file *f, char *dst)
{
	const unsigned char *name = BPF_CORE_READ(f, f_path.dentry, d_name.name);

	bpf_probe_read_kernel_str(dst, IG_NAME_LEN, name);
}

/* What kind of object a file descriptor is, for a wait on it. */
static __always_inline __u16 classify_fd(struct ig_thread_state *ts,
					 struct task_struct *t, long fd,
					 bool io)
{
	struct file *f = task_fd_file(t, fd);
	struct sock *sk;
	umode_t mode;
	__u16 family;

	if (!f)
		return io ? IG_R_STORAGE : IG_R_OTHER;
	mode = BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT;
	if (mode == S_IFIFO)
		return IG_R_PIPE;
	if (mode == S_IFSOCK) {
		struct socket *sock = BPF_CORE_READ(f, private_data);

		sk = BPF_CORE_READ(sock, sk);
		family = BPF_CORE_READ(sk, __sk_common.skc_family);
		if (family == AF_UNIX)
			return IG_R_UNIX;
		if (family != AF_INET && family != AF_INET6)
			return IG_R_OTHER;
		ts->detail.peer.family = family;
		ts->detail.peer.dport =
			bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
		ts->detail.peer.sport = BPF_CORE_READ(sk, __sk_common.skc_num);
		ts->detail.peer.proto = BPF_CORE_READ(sk, sk_protocol);
		if (family == AF_INET) {
			__u32 a = BPF_CORE_READ(sk, __sk_common.skc_daddr);

			__builtin_memcpy(ts->detail.peer.daddr, &a, 4);
		} else {
			BPF_CORE_READ_INTO(&ts->detail.peer.daddr, sk,
					   __sk_common.skc_v6_daddr.in6_u.u6_addr8);
			ts->flags |= IG_F_NET_INET6;
		}
		return IG_R_SOCKET;
	}
	file_name(f, ts->detail.name);
	ts->flags |= IG_F_DETAIL_NAME;
	if (mode == S_IFREG && io)
		note_file(ts, t, f);
	if (mode == S_IFREG || mode == S_IFBLK)
		return io ? IG_R_STORAGE : IG_R_OTHER;
	/* anon inodes are named after their kind: "[eventfd]" */
	if (ts->detail.name[0] == '[' && ts->detail.name[1] == 'e' &&
	    ts->detail.name[2] == 'v' && ts->detail.name[3] == 'e')
		return IG_R_EVENTFD;
	return io ? IG_R_STORAGE : IG_R_OTHER;
}

struct vma_name {
	char name[IG_NAME_LEN];
	bool found;
};

/* bpf_find_vma() wants its context on the stack. */
static long vma_name_cb(struct task_struct *t, struct vm_area_struct *vma,
			void *data)
{
	struct vma_name *v = data;
	struct file *f = BPF_CORE_READ(vma, vm_file);

	if (f) {
		file_name(f, v->name);
		v->found = true;
	}
	return 0;
}

/* The syscall a task is blocked in, from the registers its entry saved
 * (regs_in_syscall(), arch.bpf.h).  This spares idlegap the syscall
 * tracepoints, which would tax every syscall of every process on the
 * machine. */
static __always_inline long blocked_syscall(struct task_struct *t, __u64 args[3])
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);

	if (!regs_in_syscall(regs))
		return -1;
	regs_syscall_args(regs, args);
	return regs_syscall_nr(regs);
}

/* Decide why @t (the current task, switching out) blocked. */
static __always_inline void classify_block(struct ig_thread_state *ts,
					   struct task_struct *t,
					   unsigned int state)
{
	bool io = BPF_CORE_READ_BITFIELD_PROBED(t, in_iowait);
	__u64 args[3] = {};
	long nr = blocked_syscall(t, args);
	__u16 r = IG_R_OTHER;
	__u32 cmd;

	if (io)
		ts->flags |= IG_F_IOWAIT;
	if (state & TASK_UNINTERRUPTIBLE)
		ts->flags |= IG_F_UNINTERRUPTIBLE;
	ts->sc_nr = nr;
	ts->arg = args[0];

	if (nr < 0) {
		/* Asleep outside any syscall: a user page fault waiting for
		 * its page, unless the task was stopped. */
		if (state & (__TASK_STOPPED | __TASK_TRACED)) {
			ts->reason = IG_R_OTHER;
			return;
		}
		ts->reason = IG_R_PAGEFAULT;
		ts->arg = ts->fault_addr;
		/* the fault's own CPU time belongs to the wait */
		if (ts->fault_ts > ts->t_on && ts->t_off - ts->fault_ts < 0xffffffffULL)
			ts->pre_ns = ts->t_off - ts->fault_ts;
		if (have_find_vma) {
			struct vma_name v = {};

			bpf_find_vma(t, ts->fault_addr, vma_name_cb, &v, 0);
			if (v.found) {
				__builtin_memcpy(ts->detail.name, v.name, IG_NAME_LEN);
				ts->flags |= IG_F_DETAIL_NAME;
			}
		}
		return;
	}

	switch (nr) {
	case NR_read: case NR_pread64: case NR_readv: case NR_preadv:
	case NR_preadv2: case NR_recvfrom: case NR_recvmsg: case NR_recvmmsg:
	case NR_write: case NR_pwrite64: case NR_writev: case NR_sendto:
	case NR_sendmsg: case NR_sendfile: case NR_fstat: case NR_fsync:
	case NR_fdatasync: case NR_getdents: case NR_getdents64:
	case NR_accept: case NR_accept4: case NR_connect:
		r = classify_fd(ts, t, (long)args[0], io ||
				(state & TASK_UNINTERRUPTIBLE));
		break;
	case NR_open: case NR_stat: case NR_lstat: case NR_access:
	case NR_openat: case NR_newfstatat: case NR_faccessat:
	case NR_faccessat2: case NR_statx: case NR_openat2: {
		/* path is arg 0, or arg 1 for the *at() forms */
		const char *path = (const char *)(path_in_arg0(nr) ? args[0] : args[1]);

		bpf_probe_read_user_str(ts->detail.name, IG_NAME_LEN, path);
		ts->flags |= IG_F_DETAIL_NAME;
		r = (io || (state & TASK_UNINTERRUPTIBLE)) ? IG_R_STORAGE
							   : IG_R_OTHER;
		break;
	}
	case NR_futex:
		cmd = args[1] & FUTEX_CMD_MASK;
		r = IG_R_FUTEX;
		/* glibc mutexes wait with plain FUTEX_WAIT (lll_lock_wait);
		 * condvars and semaphores with FUTEX_WAIT_BITSET. */
		if (cmd == FUTEX_WAIT || cmd == FUTEX_LOCK_PI ||
		    cmd == FUTEX_LOCK_PI2)
			ts->flags |= IG_F_FUTEX_PLAIN;
		else
			ts->flags |= IG_F_FUTEX_BITSET;
		break;
	case NR_futex_waitv: {
		/* struct futex_waitv { u64 val; u64 uaddr; ... }[] */
		__u64 uaddr = 0;

		bpf_probe_read_user(&uaddr, sizeof(uaddr), (void *)(args[0] + 8));
		ts->arg = uaddr;
		ts->flags |= IG_F_FUTEX_BITSET;
		r = IG_R_FUTEX;
		break;
	}
	case NR_poll: case NR_ppoll: case NR_select: case NR_pselect6:
	case NR_epoll_wait: case NR_epoll_pwait: case NR_epoll_pwait2:
		r = IG_R_POLL;
		break;
	case NR_nanosleep: case NR_clock_nanosleep:
		r = IG_R_SLEEP;
		break;
	case NR_wait4: case NR_waitid:
		r = IG_R_WAITCHILD;
		break;
	case NR_io_uring_enter:
		r = IG_R_IOURING;
		break;
	case NR_msync:
		r = io ? IG_R_STORAGE : IG_R_OTHER;
		break;
	default:
		if (io)
			r = IG_R_STORAGE;
		break;
	}
	ts->reason = r;
}

static __always_inline void on_switch_out(struct ig_thread_state *ts,
					  struct task_struct *prev, bool preempt,
					  __u64 now, __u32 cpu)
{
	unsigned int state;

	stat_add(IG_STAT_SWITCHES, 1);
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
		return;
	}
	if (ts->cu_begin)
		ts->cu_blocked = 1;
	/* prev is the current task here: its files and mm are stable. */
	classify_block(ts, bpf_get_current_task_btf(), state);
}

static __always_inline void on_switch_in(struct ig_thread_state *ts, __u32 tid,
					 struct task_struct *prev,
					 __u64 now, __u32 cpu, bool paused)
{
	struct ig_offcpu *r;

	ts->t_on = now;
	if (!ts->off)
		return;
	ts->off = 0;
	if (paused || now - ts->t_off < min_offcpu_ns)
		return;
	r = rec_reserve(sizeof(*r), IG_REC_OFFCPU, tid, ts->tgid, now);
	if (!r)
		return;
	r->t_off = ts->t_off;
	r->t_wake = ts->reason == IG_R_PREEMPT ? 0 : ts->t_wake;
	r->arg = ts->arg;
	r->waker_tid = ts->waker_tid;
	r->waker_tgid = ts->waker_tgid;
	r->prev_tid = BPF_CORE_READ(prev, pid);
	r->prev_tgid = BPF_CORE_READ(prev, tgid);
	r->syscall = ts->sc_nr;
	r->reason = ts->reason;
	r->flags = ts->flags;
	r->off_cpu = ts->off_cpu;
	r->pre_ns = ts->pre_ns;
	__builtin_memcpy(r->waker_comm, ts->waker_comm, IG_COMM_LEN);
	BPF_CORE_READ_STR_INTO(&r->prev_comm, prev, comm);
	__builtin_memcpy(&r->detail, &ts->detail, sizeof(r->detail));
	rec_submit(r);
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

#if defined(__TARGET_ARCH_x86)
#define IG_NR_MMAP	9
#elif defined(__TARGET_ARCH_arm64)
#define IG_NR_MMAP	222
#else
#define IG_NR_MMAP	-1
#endif

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
	r = rec_reserve(sizeof(*r), IG_REC_GPULIB, (__u32)bpf_get_current_pid_tgid(),
			tgid, bpf_ktime_get_ns());
	if (!r)
		return 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	rec_submit(r);
	return 0;
}

/* A tracked process's dynamic loader changed its link map: ld.so calls
 * _dl_debug_state() (the debuggers' rendezvous) around every load. */
static __always_inline int handle_ld_debug(void)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	struct ig_libopen *r;

	if (!proc_tracked(tgid))
		return 0;
	stat_add(IG_STAT_LIBLOADS, 1);
	r = rec_reserve(sizeof(*r), IG_REC_LIBOPEN, (__u32)pid_tgid, tgid,
			bpf_ktime_get_ns());
	if (!r)
		return 0;
	rec_submit(r);
	return 0;
}

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
	}
	return 0;
}

/* struct request before 5.16 names its disk itself (rq_disk) */
struct request___o {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

static __always_inline __u32 rq_dev(struct request *rq)
{
	struct request___o *o = (void *)rq;
	struct gendisk *d;

	if (bpf_core_field_exists(o->rq_disk))
		d = BPF_CORE_READ(o, rq_disk);
	else
		d = BPF_CORE_READ(rq, q, disk);
	__u32 major = BPF_CORE_READ(d, major), minor = BPF_CORE_READ(d, first_minor);

	return IG_MKDEV(major, minor);
}

static __always_inline int handle_rq_issue(struct request *rq)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct bio_state b = {};
	__u64 key = (__u64)rq;

	if (!bpf_map_lookup_elem(&threads, &tid))
		return 0;
	b.t_issue = bpf_ktime_get_ns();
	b.sector = BPF_CORE_READ(rq, __sector);
	b.bytes = BPF_CORE_READ(rq, __data_len);
	b.op = BPF_CORE_READ(rq, cmd_flags) & 0xff;
	b.dev = rq_dev(rq);
	b.tid = tid;
	b.tgid = pid_tgid >> 32;
	if (bpf_map_update_elem(&bios, &key, &b, BPF_ANY))
		stat_add(IG_STAT_MAP_FULL, 1);
	return 0;
}

static __always_inline int handle_rq_complete(struct request *rq, int error,
					      unsigned int nr_bytes)
{
	__u64 key = (__u64)rq;
	struct bio_state *b = bpf_map_lookup_elem(&bios, &key);
	struct ig_bio *r;

	if (!b)
		return 0;
	r = rec_reserve(sizeof(*r), IG_REC_BIO, b->tid, b->tgid,
			bpf_ktime_get_ns());
	if (r) {
		r->t_issue = b->t_issue;
		r->sector = b->sector;
		r->dev = b->dev;
		r->bytes = b->bytes ? b->bytes : nr_bytes;
		r->error = error;
		r->op = b->op;
		rec_submit(r);
	}
	bpf_map_delete_elem(&bios, &key);
	return 0;
}

#endif
