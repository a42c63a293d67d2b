/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Block IO hooks: requests issued by tracked threads and their
 * completion (IG_REC_BIO, design §5.8).
 */
#ifndef IG_BLOCK_BPF_H
#define IG_BLOCK_BPF_H

#include "arch.bpf.h"
#include "maps.bpf.h"

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

/* Before 5.11 block_rq_insert and block_rq_issue take the request queue
 * first (set from the kernel's BTF before load: tracer.c). */
const volatile bool rq_insert_has_queue = false;
const volatile bool rq_issue_has_queue = false;

/* The request a block_rq_* hook was given (@ctx: its raw arguments). */
static __always_inline struct request *rq_arg(__u64 *ctx, bool has_queue)
{
	return (struct request *)(has_queue ? ctx[1] : ctx[0]);
}

static __always_inline int handle_rq_insert(struct request *rq)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	__u64 key = (__u64)rq;

	if (!bpf_map_lookup_elem(&threads, &tid))
		pid_tgid = 0;		/* nobody's: no tracked issuer claims it */
	bpf_map_update_elem(&rq_owner, &key, &pid_tgid, BPF_ANY);
	return 0;
}

static __always_inline int handle_rq_issue(struct request *rq)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid;
	struct bio_state b = {};
	__u64 key = (__u64)rq, *owner = bpf_map_lookup_elem(&rq_owner, &key);

	/* queued by its inserter, else issued at once by its submitter */
	if (owner) {
		pid_tgid = *owner;
		bpf_map_delete_elem(&rq_owner, &key);
	}
	tid = (__u32)pid_tgid;
	if (!tid || !bpf_map_lookup_elem(&threads, &tid))
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
