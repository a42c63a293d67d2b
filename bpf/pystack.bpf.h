/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Python frames of a tracked thread, read from its memory at switch-out and
 * at CPU samples.  User space puts the interpreter's layout in py_procs
 * when it finds _PyRuntime (docs/design.md §5.6, user/probes/pyframes.c); a
 * process without an entry costs one hash lookup.
 *
 * The thread's PyThreadState is found once through the interpreter's thread
 * list (_PyRuntime.interpreters.head, then next), matched by the kernel tid
 * (3.11+: native_thread_id, the id in the thread's own pid namespace) or by pthread_self() (3.9, 3.10: thread_id),
 * made from the thread pointer (task_pthread_self(), arch.bpf.h); it is cached per thread and
 * checked again at each use.  The frame chain is walked up to IG_PY_DEPTH
 * frames, one read per frame into per-CPU scratch; C shim frames (3.12+)
 * and the interpreter's own (3.14+) are skipped; a 3.14 f_executable is a
 * tagged _PyStackRef, untagged here; a free-threaded thread's instruction
 * pointer is into its own copy of the bytecode (py_bytecode()).  A stack
 * equal to the thread's last one is not sent again.
 */
#ifndef IG_PYSTACK_BPF_H
#define IG_PYSTACK_BPF_H

#include "arch.bpf.h"
#include "maps.bpf.h"

#define PY_MAX_THREADS	64	/* interpreter thread-list walk */
#define PY_MAX_SHIMS	8	/* C frames skipped on top of the depth */
#define PY_FRAME_READ	IG_PY_FRAME_READ	/* bytes read per frame */
/* Object pointers are 8-aligned (16 in practice): the low bits of a 3.14
 * _PyStackRef are its tag (reference kind, tagged int), never address. */
#define PY_REF_MASK	(~7ULL)
/* Thread-local bytecode copies looked up (free-threaded 3.14+): one per
 * thread that ran the code; an index beyond is read as the main copy. */
#define PY_MAX_TLBC	4096

struct py_thread {
	__u64 tstate;		/* cached PyThreadState, 0: not found yet */
	__u64 last_id;		/* id of the last stack sent, 0: none */
};

struct py_sent_key {
	__u32 tgid;
	__u32 pad;
	__u64 id;
};

struct py_scratch {
	struct ig_pystack r;
	__u8 frame[PY_FRAME_READ + 16];	/* also the room masking allows */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct ig_py_offsets);
} py_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct py_thread);
} py_threads SEC(".maps");

/* Stacks whose frames a process has already been sent. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct py_sent_key);
	__type(value, __u8);
} py_sent SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_scratch);
} py_scratch SEC(".maps");

static __always_inline __u64 py_read64(__u64 addr)
{
	__u64 v = 0;

	if (addr && bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

/* A field of the frame copied into @buf; @off comes from user space. */
static __always_inline __u64 py_fld64(const __u8 *buf, __u32 off)
{
	if (off > PY_FRAME_READ - 8)
		return 0;
	return *(const __u64 *)(buf + off);
}

static __always_inline __u32 py_fld32(const __u8 *buf, __u32 off)
{
	if (off > PY_FRAME_READ - 4)
		return 0;
	return *(const __u32 *)(buf + off);
}

static __always_inline __u8 py_fld8(const __u8 *buf, __u32 off)
{
	if (off > PY_FRAME_READ - 1)
		return 0;
	return buf[off];
}

/* The interpreter's thread list, one thread state per bpf_loop() round:
 * a callback is verified as one body, not once per thread.  The answer is
 * kept in map memory (pt->tstate), never a value the verifier could take
 * as known from one round, as kernels before 6.7 verify a callback as if
 * it ran once. */
struct py_tstate_walk {
	const struct ig_py_offsets *o;
	struct py_thread *pt;
	__u64 ts, want;
};

static long py_tstate_step(__u64 i, void *arg)
{
	struct py_tstate_walk *c = arg;

	if (!c->ts)
		return 1;
	if (py_read64(c->ts + c->o->ts_match) == c->want) {
		c->pt->tstate = c->ts;
		return 1;
	}
	c->ts = py_read64(c->ts + c->o->ts_next);
	return 0;
}

static __always_inline __u64 py_find_tstate(const struct ig_py_offsets *o,
					    struct py_thread *pt, __u64 want)
{
	struct py_tstate_walk c = { .o = o, .pt = pt, .want = want };
	__u64 ts = pt->tstate;

	if (ts && py_read64(ts + o->ts_match) == want)
		return ts;
	pt->tstate = 0;
	ts = py_read64(o->runtime + o->rt_interp_head);
	if (!ts)
		return 0;
	c.ts = py_read64(ts + o->is_threads_head);
	bpf_loop(PY_MAX_THREADS, py_tstate_step, &c, 0);
	return pt->tstate;
}

/* Where the bytecode the frame at s->frame runs begins, less the code
 * object's co_code_adaptive offset: an instruction pointer less this is
 * the offset user space reads as into co_code_adaptive.  The code object
 * itself, unless a free-threaded thread runs its own copy (tlbc_index > 0:
 * entries[tlbc_index] of co_tlbc). */
static __always_inline __u64 py_bytecode(const struct ig_py_offsets *o,
					 struct py_scratch *s, __u64 code)
{
	__u32 idx;
	__u64 arr, base;

	if (!o->fr_tlbc)
		return code;
	idx = py_fld32(s->frame, o->fr_tlbc);
	if (!idx || idx >= PY_MAX_TLBC)
		return code;
	arr = py_read64(code + o->co_tlbc);
	if (!arr || py_read64(arr) <= idx)
		return code;
	base = py_read64(arr + 8 + 8 * (__u64)idx);
	return base ? base - o->co_adaptive : code;
}

/* One frame at @fr into the record; returns the next frame. */
static __always_inline __u64 py_frame(const struct ig_py_offsets *o,
				      struct py_scratch *s, __u64 fr, __u64 *h)
{
	struct ig_pystack *r = &s->r;
	__u32 n = r->nframes;
	__u64 code, lasti;

	if (bpf_probe_read_user(s->frame, PY_FRAME_READ, (void *)fr))
		return 0;
	if (o->fr_owner != IG_PYO_NONE &&
	    py_fld8(s->frame, o->fr_owner) >= o->owner_cstack)
		return py_fld64(s->frame, o->fr_back);
	if (n >= IG_PY_DEPTH) {
		r->flags |= IG_PYS_TRUNC;
		return 0;
	}
	code = py_fld64(s->frame, o->fr_code) & PY_REF_MASK;
	if (o->instr_ptr)
		lasti = py_fld64(s->frame, o->fr_instr) - py_bytecode(o, s, code);
	else
		lasti = py_fld32(s->frame, o->fr_instr);
	r->f[n].code = code;
	r->f[n].lasti = (__u32)lasti;
	r->f[n].pad = 0;
	r->nframes = n + 1;
	*h = (*h ^ code) * 0x100000001b3ULL;
	*h = (*h ^ (__u32)lasti) * 0x100000001b3ULL;
	return py_fld64(s->frame, o->fr_back);
}

/* The frame chain, one frame per bpf_loop() round; the frames and their
 * hash are kept in the scratch record (s->r.id), map memory. */
struct py_frame_walk {
	const struct ig_py_offsets *o;
	struct py_scratch *s;
	__u64 fr;
};

static long py_frame_step(__u64 i, void *arg)
{
	struct py_frame_walk *c = arg;

	if (!c->fr)
		return 1;
	c->fr = py_frame(c->o, c->s, c->fr, &c->s->r.id);
	return 0;
}

static __always_inline void py_walk(const struct ig_py_offsets *o,
				    struct py_scratch *s, __u64 tstate, __u64 *h)
{
	struct py_frame_walk c = { .o = o, .s = s };
	__u64 fr = py_read64(tstate + o->ts_frame);

	if (o->cf_current != IG_PYO_NONE)
		fr = py_read64(fr ? fr + o->cf_current : 0);
	c.fr = fr;
	s->r.id = *h;
	bpf_loop(IG_PY_DEPTH + PY_MAX_SHIMS, py_frame_step, &c, 0);
	*h = s->r.id;
}

/* Sends @r, header filled, frames only when @tgid has not seen its id. */
static __always_inline int py_send(struct ig_pystack *r, __u32 tid,
				   __u32 tgid, __u64 now)
{
	struct py_sent_key k = { .tgid = tgid, .id = r->id };
	struct cpu_state *cs = this_cpu();
	__u8 one = 1;
	__u64 nlost;
	__u32 size;

	if (r->nframes && bpf_map_lookup_elem(&py_sent, &k)) {
		r->flags |= IG_PYS_REF;
		r->nframes = 0;
	}
	if (r->nframes > IG_PY_DEPTH)
		return -1;
	/* the mask bounds the size for the verifier: 31 frames fit too */
	size = IG_PYSTACK_SIZE(r->nframes & 31);
	r->h.type = IG_REC_PYSTACK;
	r->h.size = size;
	nlost = losses_now();
	r->h.cpu = rec_cpu(cs, nlost);
	r->h.tid = tid;
	r->h.tgid = tgid;
	r->h.ts = now;
	if (bpf_ringbuf_output(&rb, r, size, BPF_RB_NO_WAKEUP)) {
		rec_lost(cs, IG_REC_PYSTACK);
		return -1;
	}
	rec_kept(cs, nlost);
	if (r->nframes)
		bpf_map_update_elem(&py_sent, &k, &one, BPF_ANY);
	stat_add(IG_STAT_EVENTS, 1);
	return 0;
}

/* A thread exited: a later one with its id starts afresh. */
static __always_inline void py_forget(__u32 tid)
{
	bpf_map_delete_elem(&py_threads, &tid);
}

/* @t's id in its own pid namespace: what CPython keeps as native_thread_id
 * (gettid()), not the kernel's when the job has its own pid namespace (a
 * container's). */
static __always_inline __u32 py_ns_tid(struct task_struct *t, __u32 tid)
{
	struct pid *p = BPF_CORE_READ(t, thread_pid);
	unsigned int level = BPF_CORE_READ(p, level);
	int nr = 0;

	if (!level)
		return tid;
	if (level > 32 || bpf_core_read(&nr, sizeof(nr), &p->numbers[level].nr))
		return 0;
	return nr;
}

/* @task is the current task, thread @tid of @tgid. */
static __always_inline void py_capture(struct task_struct *task, __u32 tid,
				       __u32 tgid, __u64 now)
{
	struct ig_py_offsets *o = bpf_map_lookup_elem(&py_procs, &tgid);
	struct py_thread zero = {}, *pt;
	struct py_scratch *s;
	__u64 want, tstate, h = 0xcbf29ce484222325ULL;
	__u32 key = 0;

	if (!o)
		return;
	pt = bpf_map_lookup_elem(&py_threads, &tid);
	if (!pt) {
		bpf_map_update_elem(&py_threads, &tid, &zero, BPF_NOEXIST);
		pt = bpf_map_lookup_elem(&py_threads, &tid);
		if (!pt)
			return;
	}
	s = bpf_map_lookup_elem(&py_scratch, &key);
	if (!s)
		return;
	want = o->match_tid ? py_ns_tid(task, tid) : task_pthread_self(task);
	tstate = py_find_tstate(o, pt, want);
	s->r.nframes = 0;
	s->r.flags = 0;
	s->r.pad = 0;
	if (tstate)
		py_walk(o, s, tstate, &h);
	if (!s->r.nframes)
		s->r.flags |= IG_PYS_NONE;
	h ^= s->r.flags;
	if (!h)
		h = 1;
	if (h == pt->last_id)
		return;
	s->r.id = h;
	if (!py_send(&s->r, tid, tgid, now))
		pt->last_id = h;
}

#endif
