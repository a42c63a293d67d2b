/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Native user stacks of tracked threads (IG_REC_USTACK), taken where the
 * tracer already runs: at switch-out and at CPU samples.  bpf_get_stack()
 * walks frame pointers; code built without them ends the walk early (user
 * space marks such stacks truncated rather than guessing).
 *
 * A stack is sent once per process: later records carry only its id (a
 * hash of the addresses), so a thread that blocks in the same place again
 * costs a 40-byte record.  The id is remembered only once the full record
 * is in the ring, so a lost record is sent again.
 */
#ifndef IG_USTACK_BPF_H
#define IG_USTACK_BPF_H

#include "maps.bpf.h"

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

/* Where a stack is taken and its record put together. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ig_ustack);
} ustack_scratch SEC(".maps");

#define IG_USTACK_HDR	(sizeof(struct ig_ustack) - IG_USTACK_DEPTH * 8)

static __always_inline __u64 ustack_hash(const struct ig_ustack *r, __u32 n,
					 __u32 tgid)
{
	__u64 h = 0xcbf29ce484222325ULL ^ tgid;
	__u32 i;

	for (i = 0; i < IG_USTACK_DEPTH; i++) {
		if (i >= n)
			break;
		h = (h ^ r->ips[i]) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

/* The header as rec_reserve() fills it, for a record sent by copy. */
static __always_inline void ustack_hdr(struct ig_hdr *h, __u32 size, __u32 tid,
				       __u32 tgid, __u64 ts)
{
	struct cpu_state *cs = this_cpu();

	h->type = IG_REC_USTACK;
	h->size = size;
	h->cpu = IG_HDR_CPU(bpf_get_smp_processor_id());
	if (cs && cs->lost)
		h->cpu |= IG_HDR_LOST_BEFORE;
	h->tid = tid;
	h->tgid = tgid;
	h->ts = ts;
}

static __always_inline void ustack_sent(struct ustack_key *k, long err)
{
	struct cpu_state *cs = this_cpu();
	__u8 one = 1;

	if (err) {
		stat_add(IG_STAT_DROPS, 1);
		if (cs)
			cs->lost = 1;
		return;
	}
	stat_add(IG_STAT_EVENTS, 1);
	if (cs)
		cs->lost = 0;
	if (k)
		bpf_map_update_elem(&ustacks_sent, k, &one, BPF_ANY);
}

/* Emits the current task's user stack.  @ctx: the program's context. */
static __always_inline void ustack_capture(void *ctx, __u32 tid, __u32 tgid,
					   __u64 ts, __u16 flags)
{
	struct ustack_key k = { .tgid = tgid };
	__u32 zero = 0, n, size;
	struct ig_ustack *r = bpf_map_lookup_elem(&ustack_scratch, &zero);
	long got;

	if (!r)
		return;
	got = bpf_get_stack(ctx, r->ips, sizeof(r->ips), BPF_F_USER_STACK);
	if (got <= 0)
		return;
	n = (__u32)got / 8;
	if (n > IG_USTACK_DEPTH)
		n = IG_USTACK_DEPTH;
	if (n == IG_USTACK_DEPTH)
		flags |= IG_USF_FULL;
	k.id = ustack_hash(r, n, tgid);
	r->id = k.id;
	r->depth = n;
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
		return;
	}
	r->nips = n;
	r->flags = flags;
	size = IG_USTACK_HDR + n * 8;
	ustack_hdr(&r->h, size, tid, tgid, ts);
	if (size > sizeof(*r))
		return;
	ustack_sent(&k, bpf_ringbuf_output(&rb, r, size, rec_wake_flag()));
}

#endif
