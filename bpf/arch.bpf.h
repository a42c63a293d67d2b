/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between x86-64 and arm64 (docs/design.md §2.6): syscall
 * numbers, how a thread's saved user registers say it is in a syscall,
 * the user registers the stack walk starts from, where an interrupt runs,
 * the kernel half of the address space, a call instruction before a
 * return address, a launch's 9th argument and the thread pointer glibc's
 * pthread_self() is made from.  Built with -D__TARGET_ARCH_x86 or
 * -D__TARGET_ARCH_arm64, as bpf_tracing.h's PT_REGS macros are.
 */
#ifndef IG_ARCH_BPF_H
#define IG_ARCH_BPF_H

#if defined(__TARGET_ARCH_x86)

/* x86-64 syscall numbers that matter for classification. */
enum {
	NR_read = 0, NR_write = 1, NR_open = 2, NR_stat = 4, NR_fstat = 5,
	NR_lstat = 6, NR_poll = 7, NR_ioctl = 16, NR_pread64 = 17,
	NR_pwrite64 = 18, NR_readv = 19, NR_writev = 20, NR_access = 21,
	NR_select = 23, NR_sched_yield = 24, NR_msync = 26, NR_nanosleep = 35,
	NR_sendfile = 40,
	NR_connect = 42, NR_accept = 43, NR_sendto = 44, NR_recvfrom = 45,
	NR_sendmsg = 46, NR_recvmsg = 47, NR_wait4 = 61, NR_fsync = 74,
	NR_fdatasync = 75, NR_getdents = 78, NR_futex = 202,
	NR_getdents64 = 217, NR_epoll_wait = 232, NR_clock_nanosleep = 230,
	NR_waitid = 247, NR_openat = 257, NR_newfstatat = 262,
	NR_faccessat = 269, NR_pselect6 = 270, NR_ppoll = 271,
	NR_epoll_pwait = 281, NR_accept4 = 288, NR_preadv = 295,
	NR_recvmmsg = 299, NR_preadv2 = 327, NR_statx = 332,
	NR_io_uring_enter = 426, NR_openat2 = 437, NR_faccessat2 = 439,
	NR_epoll_pwait2 = 441, NR_futex_waitv = 449,
};

#define KERNEL_HALF	0xffff800000000000ULL

#define IG_ENOSYS	38

/* The syscall a task is blocked in, from the registers its entry saved:
 * SYSCALL leaves the user rip in rcx and rflags in r11, and the entry code
 * saves both beside ip and flags, and -ENOSYS as ax until the syscall
 * returns.  An exception (a page fault) saves the user's own rcx and r11
 * instead, which match only by accident.  An interrupt taken on the first
 * user instruction after a syscall (pending while the exit path ran with
 * interrupts off, so taken as soon as SYSRET enables them) saves an rcx
 * and r11 that SYSRET just made equal to ip and flags, and a device vector
 * as orig_ax (0x20-0x7f are positive): only ax, then the syscall's return
 * value, tells it from a syscall. */
static __always_inline bool regs_in_syscall(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, orig_ax) >= 0 &&
	       (long)BPF_CORE_READ(regs, ax) == -IG_ENOSYS &&
	       BPF_CORE_READ(regs, cx) == BPF_CORE_READ(regs, ip) &&
	       BPF_CORE_READ(regs, r11) == BPF_CORE_READ(regs, flags);
}

static __always_inline long regs_syscall_nr(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, orig_ax);
}

static __always_inline void regs_syscall_args(struct pt_regs *regs, __u64 a[3])
{
	a[0] = BPF_CORE_READ(regs, di);
	a[1] = BPF_CORE_READ(regs, si);
	a[2] = BPF_CORE_READ(regs, dx);
}

/* The saved user registers are no syscall's: the entry code sets orig_ax
 * to -1 for exceptions and interrupts alike. */
static __always_inline bool regs_no_syscall(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, orig_ax) == -1;
}

/* The first vector of device interrupts (arch/x86/include/asm/irq_vectors.h). */
#define FIRST_EXTERNAL_VECTOR	0x20

/* On the task stack, right above the registers the entry saved: an
 * interrupt that arrived in user mode runs there, the saved registers
 * then no syscall's.  The vector is in orig_ax, negated by the entry. */
static __always_inline bool task_stack_irq(struct pt_regs *regs)
{
	long orig_ax;

	if (!(BPF_CORE_READ(regs, cs) & 3))
		return false;		/* a kernel thread's own frame */
	if (regs_in_syscall(regs))
		return false;
	orig_ax = BPF_CORE_READ(regs, orig_ax);
	return orig_ax < 0 || orig_ax >= FIRST_EXTERNAL_VECTOR;
}

/*
 * Whether the bytes before @ra end in a call instruction (call rel32, or
 * call through a register or memory, ff /2, 2 to 7 bytes): 1 yes, 0 no,
 * -1 unknown.  Bytes that cannot be read (this context cannot fault a page
 * in) are no code the thread just ran, so a word whose bytes miss is no
 * return address; but the page before one near a page start may be out of
 * memory while its own page is in.
 */
static __always_inline int after_call(__u64 ra)
{
	__u8 b[8];
	int i;

	if (bpf_probe_read_user(b, sizeof(b), (void *)(ra - 8)))
		return (ra & 0xfff) < 8 &&
		       !bpf_probe_read_user(b, 1, (void *)ra) ? -1 : 0;
	if (b[3] == 0xe8)
		return 1;
	for (i = 1; i < 7; i++)
		if (b[i] == 0xff && (b[i + 1] & 0x38) == 0x10)
			return 1;
	return 0;
}

/* A launch's 9th argument at function entry: the return address, then
 * arguments 7 and 8, on the stack. */
#define LAUNCH_ARG9_SP_OFF	24
/* The 6th argument register. */
#define PT_REGS_ARG6(ctx)	((ctx)->r9)

/* glibc's pthread_self() is the thread pointer, the fs base. */
static __always_inline __u64 task_pthread_self(struct task_struct *t)
{
	return BPF_CORE_READ(t, thread.fsbase);
}

#elif defined(__TARGET_ARCH_arm64)

/* Negative: the classic calls arm64 has only as their *at forms, never a
 * syscall number there, and each its own case label. */
enum {
	NR_open = -2, NR_stat = -3, NR_lstat = -4, NR_poll = -5, NR_access = -6,
	NR_select = -7, NR_getdents = -8, NR_epoll_wait = -9,
};

/* arm64 (asm-generic) syscall numbers that matter for classification. */
enum {
	NR_epoll_pwait = 22, NR_ioctl = 29, NR_faccessat = 48, NR_openat = 56,
	NR_getdents64 = 61, NR_read = 63, NR_write = 64, NR_readv = 65,
	NR_writev = 66, NR_pread64 = 67, NR_pwrite64 = 68, NR_preadv = 69,
	NR_sendfile = 71, NR_pselect6 = 72, NR_ppoll = 73, NR_newfstatat = 79,
	NR_fstat = 80, NR_fsync = 82, NR_fdatasync = 83, NR_waitid = 95,
	NR_futex = 98, NR_nanosleep = 101, NR_clock_nanosleep = 115,
	NR_sched_yield = 124, NR_accept = 202, NR_connect = 203, NR_sendto = 206, NR_recvfrom = 207,
	NR_sendmsg = 211, NR_recvmsg = 212, NR_msync = 227, NR_accept4 = 242,
	NR_recvmmsg = 243, NR_wait4 = 260, NR_preadv2 = 286, NR_statx = 291,
	NR_io_uring_enter = 426, NR_openat2 = 437, NR_faccessat2 = 439,
	NR_epoll_pwait2 = 441, NR_futex_waitv = 449,
};

/* TTBR1 addresses: the top 16 bits set (48-bit and 52-bit kernels alike,
 * and user addresses never have bit 55). */
#define KERNEL_HALF	0xff00000000000000ULL

/* The entry code keeps the syscall's number in syscallno, and NO_SYSCALL
 * (-1) there for an exception or an interrupt (arch/arm64/kernel/entry-
 * common.c); arguments are x0..x2, x0 kept as orig_x0, since the return
 * value overwrites regs[0]. */
static __always_inline bool regs_in_syscall(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, syscallno) >= 0;
}

static __always_inline long regs_syscall_nr(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, syscallno);
}

static __always_inline void regs_syscall_args(struct pt_regs *regs, __u64 a[3])
{
	a[0] = BPF_CORE_READ(regs, orig_x0);
	a[1] = BPF_CORE_READ(regs, regs[1]);
	a[2] = BPF_CORE_READ(regs, regs[2]);
}

static __always_inline bool regs_no_syscall(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, syscallno) == -1;
}

/* arm64 runs every interrupt and softirq on the per-CPU IRQ stack, from
 * user mode too (do_interrupt_handler() switches when on a task stack):
 * code on the task stack is task context. */
static __always_inline bool task_stack_irq(struct pt_regs *regs)
{
	return false;
}

/*
 * Whether the instruction before @ra is a call: BL imm26, or BLR/BLRAA/
 * BLRAB(Z) through a register.  1 yes, 0 no, -1 unknown (as on x86-64).
 */
static __always_inline int after_call(__u64 ra)
{
	__u32 insn;

	if (ra & 3)
		return 0;
	if (bpf_probe_read_user(&insn, sizeof(insn), (void *)(ra - 4)))
		return (ra & 0xfff) < 4 &&
		       !bpf_probe_read_user(&insn, 1, (void *)ra) ? -1 : 0;
	if ((insn & 0xfc000000) == 0x94000000)		/* BL */
		return 1;
	if ((insn & 0xfffffc1f) == 0xd63f0000)		/* BLR */
		return 1;
	if ((insn & 0xfefff800) == 0xd63f0800)		/* BLRAA(Z), BLRAB(Z) */
		return 1;
	return 0;
}

/* AAPCS64: eight arguments in x0..x7, the 9th at [sp] on entry. */
#define LAUNCH_ARG9_SP_OFF	0
#define PT_REGS_ARG6(ctx)	(((struct user_pt_regs *)(ctx))->regs[5])

/* glibc's pthread_self() on arm64 (TLS variant I): the thread pointer,
 * TPIDR_EL0, points just past struct pthread, whose size glibc 2.36
 * (Debian 12) gives as 0x740 bytes (__builtin_thread_pointer() - (char
 * *)pthread_self(), measured). */
#define ARM64_PTHREAD_SIZE	0x740
static __always_inline __u64 task_pthread_self(struct task_struct *t)
{
	return BPF_CORE_READ(t, thread.uw.tp_value) - ARM64_PTHREAD_SIZE;
}

#else
#error "build with -D__TARGET_ARCH_x86 or -D__TARGET_ARCH_arm64"
#endif

/* The path argument's register: the *at calls take it second. */
static __always_inline bool path_in_arg0(long nr)
{
	return nr == NR_open || nr == NR_stat || nr == NR_lstat || nr == NR_access;
}

#endif
