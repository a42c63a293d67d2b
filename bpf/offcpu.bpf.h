/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Why a tracked thread left the CPU (design §5.3): the reason of an
 * off-CPU interval, decided at switch-out from the task's state and the
 * system call it sleeps in (futex, pipe, socket, file, block device).
 */
#ifndef IG_OFFCPU_BPF_H
#define IG_OFFCPU_BPF_H

#include "arch.bpf.h"
#include "maps.bpf.h"
#include "files.bpf.h"
#include "pylock.bpf.h"

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

/* A runnable switch-out of @t (the current task) that is a free-threaded
 * CPython's spin for an object's lock: sched_yield() in a critical
 * section's slow path (pylock.bpf.h).  Still runnable, but for the lock:
 * flagged IG_F_PYLOCK, the mutex as arg. */
static __always_inline void classify_yield(struct ig_thread_state *ts,
					   struct task_struct *t)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);

	if (!ts->pylock || !regs_in_syscall(regs) ||
	    regs_syscall_nr(regs) != NR_sched_yield ||
	    !py_lock_wait(ts, BPF_CORE_READ(regs, sp)))
		return;
	ts->sc_nr = NR_sched_yield;
	ts->flags |= IG_F_PYLOCK;
	ts->arg = ts->pylock;
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
		/* a free-threaded CPython's critical section parks on its
		 * own semaphore: a wait for the object's lock (pylock.bpf.h) */
		if ((cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET) &&
		    py_lock_wait(ts, args[0])) {
			ts->flags &= ~IG_F_FUTEX_BITSET;
			ts->flags |= IG_F_FUTEX_PLAIN | IG_F_PYLOCK;
			ts->arg = ts->pylock;
		}
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

#endif
