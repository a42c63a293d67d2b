/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The compat object (built with -DIG_COMPAT): the same programs for kernels
 * older than 5.17, which lack some of the helpers the main object calls
 * (docs/design.md §2.1 lists them, and what is lost without each).  Every
 * such call is replaced here, before the programs' headers are read:
 *
 * - bpf_get_current_task_btf() (5.11): the untyped task pointer; every use
 *   reads through BPF_CORE_READ already;
 * - bpf_task_pt_regs() (5.15): where x86-64 keeps a task's user registers,
 *   at the top of its kernel stack;
 * - bpf_loop() (5.17): a bounded loop the verifier walks;
 * - bpf_find_vma() (5.17): none: what needs it is lost (naming the file of
 *   a page fault, the leaf scan of user stacks);
 * - bpf_for_each_map_elem() (5.13): none: a context-wide sync does not
 *   prove the process's streams drained (each stream's own sync still does);
 * - attach cookies (5.15): one program per CUDA entry point, its cookie a
 *   constant (idlegap.bpf.c, from cuda_api.def).
 *
 * A callback a helper would be given is not referenced at all: kernels
 * before 5.13 refuse an object with callback functions in it.
 */
#ifndef IG_COMPAT_BPF_H
#define IG_COMPAT_BPF_H

#define IG_COMPAT_THREAD_SIZE	(4096UL << 2)	/* x86-64 without KASAN */

#undef bpf_get_current_task_btf
#define bpf_get_current_task_btf() ((struct task_struct *)bpf_get_current_task())

static __always_inline struct pt_regs *ig_task_pt_regs(struct task_struct *t)
{
	void *stack = BPF_CORE_READ(t, stack);

	return (struct pt_regs *)(stack + IG_COMPAT_THREAD_SIZE) - 1;
}
#define bpf_task_pt_regs(t) ((unsigned long)ig_task_pt_regs(t))

/* @fn(i, @ctx) for i < @n until it returns non-zero, at most
 * IG_COMPAT_LOOP_MAX rounds; the number of rounds, as bpf_loop() says. */
#define IG_COMPAT_LOOP_MAX	64
#define bpf_loop(n, fn, ctx, flags) ({					\
	__u32 __i, __n = (n);						\
	for (__i = 0; __i < IG_COMPAT_LOOP_MAX && __i < __n; __i++)	\
		if (fn(__i, ctx)) {					\
			__i++;						\
			break;						\
		}							\
	(long)__i;							\
})

#define bpf_find_vma(t, addr, fn, ctx, flags)	(-95L)	/* EOPNOTSUPP */
#define bpf_for_each_map_elem(map, fn, ctx, flags)	(-95L)
#define IG_NO_FOR_EACH	1

#endif
