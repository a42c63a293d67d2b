/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Native user stacks of tracked threads (IG_REC_USTACK), taken where the
 * tracer already runs: at switch-out and at CPU samples.  bpf_get_stack()
 * walks frame pointers; code built without them ends the walk early (user
 * space marks such stacks truncated rather than guessing).
 *
 * A stack is sent once per process: later records carry only its id (a
 * hash of the addresses), 40 bytes.  A thread whose stack is the one it
 * last sent sends nothing: a thread's stack at a switch-out or sample is
 * its latest IG_REC_USTACK at or before that time.  Ids are remembered
 * only once the record is in the ring, so a lost one is sent again.
 */
#ifndef IG_USTACK_BPF_H
#define IG_USTACK_BPF_H

#include "arch.bpf.h"

#include "maps.bpf.h"

/* Set by user space before load: IDLEGAP_NO_USTACKS turns capture off. */
const volatile bool ustacks_on = true;

struct ustack_key {
	__u32 tgid;
	__u32 pad;
	__u64 id;
};

/* Stacks whose addresses were sent, per process. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct ustack_key);
	__type(value, __u8);
} ustacks_sent SEC(".maps");

/* The stack id each thread last sent, full or by reference. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, __u64);
} ustack_last SEC(".maps");

/* Where a stack is taken and its record put together. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ig_ustack);
} ustack_scratch SEC(".maps");

#define IG_USTACK_HDR	(sizeof(struct ig_ustack) - IG_USTACK_DEPTH * 8)

/* One address into the stack's hash, one bpf_loop() round: the
 * callback is verified once, not once per frame. */
struct ustack_hash_c {
	const struct ig_ustack *r;
	__u64 h;
};

static long ustack_hash_step(__u64 i, void *arg)
{
	struct ustack_hash_c *c = arg;

	if (i >= IG_USTACK_DEPTH)
		return 1;
	c->h = (c->h ^ c->r->ips[i]) * 0x100000001b3ULL;
	c->h ^= c->h >> 29;
	return 0;
}

/* The hash of the first @n addresses of @r. */
static __always_inline __u64 ustack_hash(const struct ig_ustack *r, __u32 n,
					 __u32 tgid)
{
	struct ustack_hash_c c = { .r = r, .h = 0xcbf29ce484222325ULL ^ tgid };

	bpf_loop(n < IG_USTACK_DEPTH ? n : IG_USTACK_DEPTH, ustack_hash_step, &c, 0);
	return c.h ? c.h : 1;
}

/* The header as rec_reserve() fills it, for a record sent by copy;
 * @nlost: losses_now(), read before. */
static __always_inline void ustack_hdr(struct ig_hdr *h, __u32 size, __u32 tid,
				       __u32 tgid, __u64 ts, __u64 nlost)
{
	h->type = IG_REC_USTACK;
	h->size = size;
	h->cpu = rec_cpu(this_cpu(), nlost);
	h->tid = tid;
	h->tgid = tgid;
	h->ts = ts;
}

static __always_inline void ustack_sent(struct ustack_key *k, __u32 tid,
				       long err, __u64 nlost)
{
	struct cpu_state *cs = this_cpu();
	__u8 one = 1;

	if (err) {
		rec_lost(cs, IG_REC_USTACK);
		return;
	}
	stat_add(IG_STAT_EVENTS, 1);
	rec_kept(cs, nlost);
	bpf_map_update_elem(&ustacks_sent, k, &one, BPF_ANY);
	bpf_map_update_elem(&ustack_last, &tid, &k->id, BPF_ANY);
}

#define USTACK_SPAN	(8ULL << 20)	/* a frame pointer lies this close above sp */
#define USTACK_SCAN	32		/* words looked at above sp */
#define USTACK_SAMPLE_SCAN 1		/* the same at a CPU sample: sp's */
#define VM_EXEC		0x00000004

struct exec_vma {
	bool exec;
};

static long exec_vma_cb(struct task_struct *t, struct vm_area_struct *vma,
			void *data)
{
	((struct exec_vma *)data)->exec = BPF_CORE_READ(vma, vm_flags) & VM_EXEC;
	return 0;
}

#define USTACK_ENOENT	2

/*
 * Pages bpf_find_vma() found executable, per address space.  With
 * interrupts off, as at a context switch, bpf_find_vma() can take the
 * mmap lock once until they are back on: a second call in the same
 * switch, this program's or another tracer's on the same hook, fails.
 * The page of a return address met before then answers instead (wrongly
 * only if the process unmapped that code and mapped data in its place).
 */
struct exec_page {
	__u32 tgid;
	__u32 pad;
	__u64 mm, page;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct exec_page);
	__type(value, __u8);
} ustack_exec SEC(".maps");

/* Whether @addr lies in executable memory of @t: 1 yes, 0 no, -1 unknown. */
static __always_inline int exec_vma(struct task_struct *t, __u64 addr)
{
	struct exec_page k = { .tgid = bpf_get_current_pid_tgid() >> 32,
			       .mm = (__u64)BPF_CORE_READ(t, mm),
			       .page = addr >> 12 };
	struct exec_vma v = {};
	long err = bpf_find_vma(t, addr, exec_vma_cb, &v, 0);
	__u8 one = 1;

	if (err && err != -USTACK_ENOENT)
		return bpf_map_lookup_elem(&ustack_exec, &k) ? 1 : -1;
	if (v.exec)
		bpf_map_update_elem(&ustack_exec, &k, &one, BPF_ANY);
	return v.exec;
}

/* Words above sp looked at for the innermost function's return address. */
struct ustack_scan {
	__u64 w[USTACK_SCAN];
	__u64 fp;		/* ustack_leaf_memo()'s frame pointer out */
	__u32 ok, m;
	__u32 unsure;		/* the answer rests on memory it could not
				 * read or look up */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ustack_scan);
} ustack_words SEC(".maps");

/* after_call(): arch.bpf.h */

/* The leaf scan's state, one word per bpf_loop() round (a callback is
 * verified as one body, not once per word and way the scan got there). */
struct leaf_scan {
	__u64 sp, fp, ret;
	__u32 k, tries, m;
	bool framed, unsure;
};

static long leaf_step(__u64 k, void *arg)
{
	struct leaf_scan *c = arg;
	__u32 zero = 0;
	struct ustack_scan *s = bpf_map_lookup_elem(&ustack_words, &zero);
	__u64 w;

	if (!s || k >= USTACK_SCAN)
		return 1;
	c->m = k;
	if (c->framed && c->sp + 8 * k >= c->fp)
		return 1;
	c->m = k + 1;
	w = s->w[k];
	if (w < 0x10000 || w - c->sp < USTACK_SPAN)
		return 0;
	switch (after_call(w)) {
	case 1:
		break;
	case 0:
		return 0;
	default:	/* its page may be out of memory: go on as if no
			 * call, but do not remember the answer */
		c->unsure = true;
		return 0;
	}
	if (++c->tries > 3)
		return 1;
	switch (exec_vma(bpf_get_current_task_btf(), w)) {
	case 1:
		c->ret = w;
		c->k = k;
		return 1;
	case 0:
		return 0;
	default:	/* unknown: a later word is no likelier the answer */
		c->unsure = true;
		return 1;
	}
}

/* The caller's frame pointer, saved below the return address at word k:
 * the nearest word below it that points up the stack past it. */
static long saved_fp_step(__u64 i, void *arg)
{
	struct leaf_scan *c = arg;
	__u32 zero = 0;
	struct ustack_scan *s = bpf_map_lookup_elem(&ustack_words, &zero);
	__u64 j = (__u64)c->k - 1 - i, w;

	if (!s || j >= USTACK_SCAN)
		return 1;
	w = s->w[j];
	if (w > c->sp + 8 * c->k && w - c->sp < USTACK_SPAN) {
		c->fp = w;
		return 1;
	}
	return 0;
}

/*
 * The innermost function's return address when that function keeps no
 * frame (a libc syscall wrapper): the first word above sp, below the frame
 * pointer when it points into the stack, that follows a call instruction
 * in executable memory.  A function with a frame of its own has its return
 * address above the frame pointer, where this does not look.  When rbp
 * holds no frame pointer at all, the caller's, which the function saved,
 * is a word below that return address pointing up the stack: *fp.
 * The first @nw words above sp are in @s (@s->ok: read); sets @s->m to how
 * many of them the answer depends on, @s->unsure when it depends on memory
 * it could not read or look up.  Returns the return address, 0 if none.
 */
static __always_inline __u64 ustack_leaf(__u64 sp, __u64 *fp,
					 struct ustack_scan *s, __u32 nw)
{
	struct leaf_scan c = { .sp = sp, .fp = *fp,
			       .framed = *fp - sp < USTACK_SPAN };

	s->m = 0;
	s->unsure = 0;
	if (!s->ok || !have_find_vma)	/* no bpf_loop() before 5.17 either */
		return 0;
	c.m = nw;
	bpf_loop(nw, leaf_step, &c, 0);
	s->m = c.m;
	s->unsure = c.unsure;
	if (!c.ret || c.framed)
		return c.ret;
	c.fp = 0;
	bpf_loop(c.k, saved_fp_step, &c, 0);
	*fp = c.fp;
	return c.ret;
}

/*
 * The leaf scan is most of a stack's cost (bpf_find_vma() and a read of
 * code per candidate word), and a thread that blocks in the same place
 * again asks it the same question.  Its answer (the return address, and
 * the frame pointer the walk goes on from) is a function of sp, rbp, the
 * first m words above sp (the scan stops at the word it picks, at rbp, or
 * after its candidates), the code bytes before those words and whether
 * they lie in executable memory.  So when sp, rbp and those m words are
 * what they were last time in the same address space (same mm, and the
 * words by a 64-bit hash), the answer is the one given then, unless the
 * process unmapped or rewrote its code in between.  An answer that met
 * code it could not read (not in memory yet) or a bpf_find_vma() that
 * could not look (the mmap lock busy) depends on more than these, and is
 * not remembered.  Only the scan is remembered: the frame-pointer chain
 * above it is read every time.
 */
struct ustack_memo {
	__u64 mm, sp, bp, words;	/* the question */
	__u64 ret, fp;			/* the answer */
	__u32 m;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct ustack_memo);
} ustack_memos SEC(".maps");

/* One word into the scan's hash, one bpf_loop() round. */
struct words_hash_c {
	const struct ustack_scan *s;
	__u64 h;
};

static long words_hash_step(__u64 i, void *arg)
{
	struct words_hash_c *c = arg;

	if (i >= USTACK_SCAN)
		return 1;
	c->h = (c->h ^ c->s->w[i]) * 0xff51afd7ed558ccdULL;
	c->h ^= c->h >> 32;
	return 0;
}

static __always_inline __u64 words_hash(const struct ustack_scan *s, __u32 m)
{
	struct words_hash_c c = { .s = s, .h = 0x9e3779b97f4a7c15ULL };

	bpf_loop(m < USTACK_SCAN ? m : USTACK_SCAN, words_hash_step, &c, 0);
	return c.h ^ m;
}

/*
 * At a CPU sample the thread is anywhere in its code, mostly inside
 * functions whose locals fill the words above sp: a full scan there reads
 * memory behind each of its words (heap pointers, mostly) for an answer
 * that seldom holds and never repeats, and would replace the memo that the
 * thread's switch-outs, blocked in the same places again, answer from.  A
 * sample looks only at the word at sp, where a frameless leaf that pushes
 * nothing (memset, memcpy) keeps its return address, and neither asks nor
 * writes the memo.
 */
static __always_inline __u64 ustack_leaf_sample(struct ustack_scan *s,
						__u64 sp, __u64 bp)
{
	__u64 fp = bp, ret;

	s->ok = !bpf_probe_read_user(s->w, USTACK_SAMPLE_SCAN * 8, (void *)sp);
	ret = ustack_leaf(sp, &fp, s, USTACK_SAMPLE_SCAN);
	s->fp = fp;
	return ret;
}

/* ustack_leaf(), answered from the thread's memo when the question is the
 * same; at a sample, ustack_leaf_sample().  A global function: verified
 * once, apart from its callers, so the frame walk after it is not verified
 * again for each way the scan can end.  Returns the return address; the
 * frame pointer to go on from is left in the scan's scratch (ustack_words,
 * ->fp). */
__noinline __u64 ustack_leaf_memo(__u32 tid, __u64 sp, __u64 bp, bool sample)
{
	__u32 zero = 0;
	struct ustack_scan *s = bpf_map_lookup_elem(&ustack_words, &zero);
	struct task_struct *t = bpf_get_current_task_btf();
	struct ustack_memo nm = { .sp = sp, .bp = bp }, *mo;
	__u64 fp = bp;

	if (!s)
		return 0;
	s->fp = bp;
	if (sample)
		return ustack_leaf_sample(s, sp, bp);
	mo = bpf_map_lookup_elem(&ustack_memos, &tid);
	nm.mm = (__u64)BPF_CORE_READ(t, mm);
	s->ok = !bpf_probe_read_user(s->w, sizeof(s->w), (void *)sp);
	if (!s->ok)
		return 0;
	if (mo && mo->mm == nm.mm && mo->sp == sp && mo->bp == bp &&
	    mo->words == words_hash(s, mo->m)) {
		s->fp = mo->fp;
		return mo->ret;
	}
	nm.ret = ustack_leaf(sp, &fp, s, USTACK_SCAN);
	nm.fp = fp;
	nm.m = s->m;
	nm.words = words_hash(s, s->m);
	if (!s->unsure)		/* asked again, it may be answered */
		bpf_map_update_elem(&ustack_memos, &tid, &nm, BPF_ANY);
	s->fp = fp;
	return nm.ret;
}

#if defined(__TARGET_ARCH_arm64)
/*
 * arm64: a call leaves its return address in the link register, x30, and
 * a function that calls nothing (a libc syscall wrapper, memcpy) keeps it
 * there, with no frame record of its own: x29 is still its caller's.  So
 * the innermost function's return address is lr, where it follows a call
 * in executable memory and is not the one x29's frame record already
 * holds.  A function that has called something and saved lr has a stale
 * lr pointing into itself; user space drops such a second frame when it
 * lies in the innermost frame's own function (IG_USF_LEAF).
 */
static __always_inline __u64 ustack_leaf_arch(struct pt_regs *regs, __u32 tid,
					      __u64 sp, __u64 *fp, bool sample)
{
	__u64 lr = PT_REGS_RET_CORE(regs), frame[2] = {};

	if (lr < 0x10000 || after_call(lr) != 1)
		return 0;
	if (*fp - sp < USTACK_SPAN &&
	    !bpf_probe_read_user(frame, sizeof(frame), (void *)*fp) && frame[1] == lr)
		return 0;
	if (!have_find_vma || exec_vma(bpf_get_current_task_btf(), lr) != 1)
		return 0;
	return lr;
}
#else
/* x86-64: the return address is on the stack, found by the leaf scan. */
static __always_inline __u64 ustack_leaf_arch(struct pt_regs *regs, __u32 tid,
					      __u64 sp, __u64 *fp, bool sample)
{
	__u32 zero = 0;
	__u64 ret = ustack_leaf_memo(tid, sp, *fp, sample);
	struct ustack_scan *s = bpf_map_lookup_elem(&ustack_words, &zero);

	if (s)
		*fp = s->fp;
	return ret;
}
#endif

/* The frame-pointer walk, one frame per bpf_loop() round: a callback is
 * verified as one body, not once per frame.  What the rounds count (how
 * many addresses, the flags) is kept in the record, map memory, and read
 * back from there: never a value the verifier could take as known from
 * one round, as kernels before 6.7 verify a callback as if it ran once. */
struct ustack_fp_walk {
	struct ig_ustack *r;
	__u64 fp;
};

/* The frame record at c->fp: its return address into c->r; 1 when the
 * walk ends there. */
static long ustack_frame_step(__u64 i, void *arg)
{
	struct ustack_fp_walk *c = arg;
	struct ig_ustack *r = c->r;
	__u64 frame[2], fp = c->fp;
	__u32 n = r->nips;

	if (!fp || n >= IG_USTACK_DEPTH || (fp & 7))
		return 1;
	if (bpf_probe_read_user(frame, sizeof(frame), (void *)fp) ||
	    !frame[1])
		return 1;
	/* no call before it: no return address, so fp was no frame
	 * record but whatever code without frame pointers kept in
	 * that register (unknown: its code page is out, go on) */
	if (!after_call(frame[1]))
		return 1;
	/* 6.1's verifier loses the bound above once n is spilled across
	 * the calls: the mask (behind a barrier clang cannot see through)
	 * restores it */
	asm volatile("" : "+r"(n));
	r->ips[n & (IG_USTACK_DEPTH - 1)] = frame[1];
	r->nips = n + 1;
	if (!frame[0])
		r->flags |= IG_USF_END;	/* the outermost frame */
	if (frame[0] <= fp || frame[0] - fp >= USTACK_SPAN)
		return 1;
	c->fp = frame[0];
	return 0;
}

/* The user stack of the current task by its frame pointers, innermost
 * first, into r->ips; returns how many.  The chain is trusted only while
 * it looks like one: each frame record 8-byte aligned, above the last
 * and within USTACK_SPAN of it, its return address after a call
 * instruction.  A walk stopped otherwise does not say IG_USF_END, so user
 * space marks the stack truncated. */
static __always_inline __u32 ustack_walk(struct ig_ustack *r, __u32 tid,
					 __u16 *flags)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	__u64 sp = PT_REGS_SP_CORE(regs), fp = PT_REGS_FP_CORE(regs);
	struct ustack_fp_walk c = { .r = r };
	__u64 ret;
	__u32 n = 0;

	r->ips[n++] = PT_REGS_IP_CORE(regs);
	ret = ustack_leaf_arch(regs, tid, sp, &fp, *flags & IG_USF_SAMPLE);
	if (ret) {
		*flags |= IG_USF_LEAF;
		r->ips[n++] = ret;
	} else if (fp - sp >= USTACK_SPAN) {
		return n;
	}
	c.fp = fp;
	r->nips = n;
	r->flags = *flags;
	/* each round adds one address at most: the count stays in bounds */
	bpf_loop(IG_USTACK_DEPTH - n, ustack_frame_step, &c, 0);
	*flags = r->flags;
	return r->nips;
}

/* Emits the current task's user stack. */
static __always_inline void ustack_capture(__u32 tid, __u32 tgid,
					   __u64 ts, __u16 flags)
{
	struct ustack_key k = { .tgid = tgid };
	__u32 zero = 0, n, size;
	struct ig_ustack *r = bpf_map_lookup_elem(&ustack_scratch, &zero);
	__u64 *last, nlost;

	if (!r || !ustacks_on)
		return;
	n = ustack_walk(r, tid, &flags);
	if (n > IG_USTACK_DEPTH)
		n = IG_USTACK_DEPTH;
	if (n == IG_USTACK_DEPTH)
		flags |= IG_USF_FULL;
	k.id = ustack_hash(r, n, tgid);
	r->id = k.id;
	r->depth = n;
	last = bpf_map_lookup_elem(&ustack_last, &tid);
	if (last && *last == k.id)
		return;		/* the thread's stack did not change */
	if (bpf_map_lookup_elem(&ustacks_sent, &k)) {
		struct ig_ustack *ref;

		ref = rec_reserve(IG_USTACK_HDR, IG_REC_USTACK, tid, tgid, ts);
		if (!ref)
			return;
		ref->id = k.id;
		ref->nips = 0;
		ref->flags = flags | IG_USF_REF;
		ref->depth = n;
		rec_submit(ref);
		bpf_map_update_elem(&ustack_last, &tid, &k.id, BPF_ANY);
		return;
	}
	r->nips = n;
	r->flags = flags;
	size = IG_USTACK_HDR + n * 8;
	nlost = losses_now();
	ustack_hdr(&r->h, size, tid, tgid, ts, nlost);
	if (size > sizeof(*r))
		return;
	ustack_sent(&k, tid, bpf_ringbuf_output(&rb, r, size, rec_wake_flag()), nlost);
}

#endif
