/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libnccl uprobes (docs/design.md §4.9).  Collectives, point-to-point
 * calls and groups are probed at entry only, one map update each: the
 * communicator's sequence number.  The calls that create a communicator
 * (rare) are also probed at return, where the new handle is read through
 * the caller's pointer.
 *
 * A communicator's id must be equal in every rank without the ranks
 * talking: a hash of the 128-byte ncclUniqueId every rank is given; a
 * split communicator's, a hash of its parent's id, the color and how many
 * splits of the parent came before (every rank splits in the same order).
 */
#ifndef IG_NCCL_BPF_H
#define IG_NCCL_BPF_H

#include "arch.bpf.h"
#include "maps.bpf.h"

#define NCCL_SUCCESS		0
#define NCCL_UNIQUE_ID_BYTES	128
#define NCCL_INIT_ALL_MAX	8	/* ranks of ncclCommInitAll followed */

struct nccl_comm_key {
	__u32 tgid;
	__u32 pad;
	__u64 comm;
};

struct nccl_comm_state {
	__u64 id;
	__u64 seq;		/* calls so far */
	__u32 nsplit;		/* splits of this communicator so far */
	__s32 rank;
	__s32 nranks;
	__u32 flags;		/* IG_NCF_NO_ID */
};

/* A communicator call in progress, and the thread's group depth. */
struct nccl_thread_state {
	__u64 t_begin;		/* 0: no call in progress */
	__u64 out;		/* the out-parameter pointer */
	__u64 id;		/* the new communicator's id */
	__u64 parent;		/* split: the parent handle */
	__s64 a2, a3;		/* nranks/ndev/color, rank */
	__u32 api, cls;
	__u32 group;		/* ncclGroupStart depth */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct nccl_comm_key);
	__type(value, struct nccl_comm_state);
} nccl_comms SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct nccl_thread_state);
} nccl_threads SEC(".maps");

/* Arguments 7 and 8 at function entry: the stack on x86-64 (after the
 * return address), registers on arm64.  A by-value ncclUniqueId (128
 * bytes) goes on the stack on x86-64 and takes no register; arm64 passes
 * a pointer to a copy in the next register. */
#if defined(__TARGET_ARCH_x86)
#define NC_ARG7(ctx, sp)	({ __u64 __v = 0; bpf_probe_read_user(&__v, 8, (void *)((sp) + 8)); __v; })
#define NC_ARG8(ctx, sp)	({ __u64 __v = 0; bpf_probe_read_user(&__v, 8, (void *)((sp) + 16)); __v; })
#define NC_ID_ADDR(sp, a3)	((sp) + 8)
#define NC_RANK_AFTER_ID(a3, a4) (a3)
#else
#define NC_ARG7(ctx, sp)	((void)(sp), ((struct user_pt_regs *)(ctx))->regs[6])
#define NC_ARG8(ctx, sp)	((void)(sp), ((struct user_pt_regs *)(ctx))->regs[7])
#define NC_ID_ADDR(sp, a3)	((void)(sp), (a3))
#define NC_RANK_AFTER_ID(a3, a4) (a4)
#endif

static __always_inline __u64 nc_mix(__u64 h, __u64 w)
{
	h ^= w;
	h *= 0x100000001b3ULL;	/* FNV-1a's prime, a word at a time */
	h ^= h >> 29;
	return h;
}

static __always_inline __u64 nc_hash_id(__u64 addr)
{
	__u64 w[NCCL_UNIQUE_ID_BYTES / 8] = {};
	__u64 h = 0xcbf29ce484222325ULL;
	int i;

	if (bpf_probe_read_user(w, sizeof(w), (void *)addr))
		return 0;
#pragma unroll
	for (i = 0; i < NCCL_UNIQUE_ID_BYTES / 8; i++)
		h = nc_mix(h, w[i]);
	return h ? h : 1;
}

static __always_inline struct nccl_thread_state *nc_thread(__u32 tid)
{
	struct nccl_thread_state *ts = bpf_map_lookup_elem(&nccl_threads, &tid);
	struct nccl_thread_state zero = {};

	if (ts)
		return ts;
	bpf_map_update_elem(&nccl_threads, &tid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&nccl_threads, &tid);
}

static __always_inline struct ig_nccl *nc_rec(__u32 kind, __u32 api, __u32 tid,
					      __u32 tgid, __u64 ts)
{
	struct ig_nccl *r;

	/* between the agent's windows the probes stay, to keep each
	 * communicator's count, and send no call; a communicator's set-up
	 * (rare) is still sent: the agent keeps it for the next window */
	if (capture_paused() && (kind == IG_NC_COLL || kind == IG_NC_GROUP_END))
		return NULL;
	r = rec_reserve(sizeof(*r), IG_REC_NCCL, tid, tgid, ts);
	if (!r)
		return NULL;
	__builtin_memset((char *)r + sizeof(r->h), 0, sizeof(*r) - sizeof(r->h));
	r->kind = kind;
	r->api = api;
	r->rank = -1;
	r->peer = -1;
	return r;
}

static __always_inline void nc_comm_put(__u32 tgid, __u64 comm, __u64 id,
					__s32 rank, __s32 nranks)
{
	struct nccl_comm_key k = { .tgid = tgid, .comm = comm };
	struct nccl_comm_state st = { .id = id, .rank = rank, .nranks = nranks };

	if (bpf_map_update_elem(&nccl_comms, &k, &st, BPF_ANY))
		stat_add(IG_STAT_MAP_FULL, 1);
}

static __always_inline void nc_comm_rec(__u32 api, __u32 tid, __u32 tgid,
					__u64 now, struct nccl_thread_state *ts,
					__u64 comm, __s32 rank, __s32 nranks, long rc)
{
	struct ig_nccl *r = nc_rec(IG_NC_COMM, api, tid, tgid, now);

	if (!r)
		return;
	r->comm = comm;
	r->id = ts->id;
	r->rank = rank;
	r->nranks = nranks;
	r->t_begin = ts->t_begin;
	r->arg = ts->parent;
	r->ret = rc;
	rec_submit(r);
}

/* A collective or point-to-point call: its communicator's next number. */
static __always_inline void nc_coll(struct pt_regs *ctx, __u32 api, __u32 cls,
				    __u32 tid, __u32 tgid)
{
	__u64 sp = PT_REGS_SP(ctx), a2 = PT_REGS_PARM2(ctx), a3 = PT_REGS_PARM3(ctx);
	__u64 a4 = PT_REGS_PARM4(ctx), a5 = PT_REGS_PARM5(ctx), a6 = PT_REGS_ARG6(ctx);
	/* every register up front (arch.bpf.h): the 7th and 8th too */
	__u64 a7 = NC_ARG7(ctx, sp), a8 = cls == IG_NCC_COLL8 ? NC_ARG8(ctx, sp) : 0;
	__u64 count = a3, dtype = a4, x = -1, comm = 0, stream = 0;
	struct nccl_comm_key k = { .tgid = tgid };
	struct nccl_thread_state *ts;
	struct nccl_comm_state *cs;
	struct ig_nccl *r;
	__u64 now = bpf_ktime_get_ns();
	__u32 op = 0;

	switch (cls) {
	case IG_NCC_COLL7:
		x = a5;
		comm = a6;
		stream = a7;
		break;
	case IG_NCC_COLL8:
		op = a5;
		x = a6;
		comm = a7;
		stream = a8;
		break;
	case IG_NCC_COLL6:
		comm = a5;
		stream = a6;
		break;
	default:	/* IG_NCC_P2P */
		count = a2;
		dtype = a3;
		x = a4;
		comm = a5;
		stream = a6;
		break;
	}
	k.comm = comm;
	cs = bpf_map_lookup_elem(&nccl_comms, &k);
	if (!cs) {	/* created before the probes: numbered from here */
		struct nccl_comm_state zero = { .rank = -1, .flags = IG_NCF_NO_ID };

		bpf_map_update_elem(&nccl_comms, &k, &zero, BPF_NOEXIST);
		cs = bpf_map_lookup_elem(&nccl_comms, &k);
		if (!cs)
			return;
	}
	cs->seq += 1;
	r = nc_rec(IG_NC_COLL, api, tid, tgid, now);
	if (!r)
		return;
	r->comm = comm;
	r->id = cs->id;
	r->seq = cs->seq;
	r->rank = cs->rank;
	r->nranks = cs->nranks;
	r->flags = cs->flags;
	/* the stream argument is the driver's CUstream */
	r->stream = stream == 0 || stream == 0x1 ? IG_STREAM_LEGACY :
		    stream == 0x2 ? (IG_STREAM_PTD_BIT | tid) : stream;
	r->count = count;
	r->dtype = dtype;
	if (cls == IG_NCC_COLL7 &&
	    (api == IG_NA_ncclAllReduce || api == IG_NA_ncclReduceScatter))
		r->op = x;	/* a reduction: no root */
	else if (cls != IG_NCC_COLL6)
		r->peer = x;
	if (cls == IG_NCC_COLL8)
		r->op = op;
	ts = bpf_map_lookup_elem(&nccl_threads, &tid);
	if (ts && ts->group) {
		r->group = ts->group;
		r->flags |= IG_NCF_GROUPED;
	}
	rec_submit(r);
}

static __always_inline int nc_enter(struct pt_regs *ctx, __u64 cookie)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, tgid = pid_tgid >> 32;
	__u32 api = cookie & 0xffff, cls = (cookie >> 16) & 0xff;
	__u64 sp = PT_REGS_SP(ctx), a1 = PT_REGS_PARM1(ctx), a2 = PT_REGS_PARM2(ctx);
	__u64 a3 = PT_REGS_PARM3(ctx), a4 = PT_REGS_PARM4(ctx);
	struct nccl_comm_key k = { .tgid = tgid, .comm = a1 };
	struct nccl_thread_state *ts;
	struct nccl_comm_state *cs;
	struct ig_nccl *r;

	if (!proc_tracked(tgid))
		return 0;
	if (cls >= IG_NCC_COLL7 && cls <= IG_NCC_P2P) {
		nc_coll(ctx, api, cls, tid, tgid);
		return 0;
	}
	if (cls == IG_NCC_FREE) {
		r = nc_rec(IG_NC_COMM_FREE, api, tid, tgid, bpf_ktime_get_ns());
		if (r) {
			r->comm = a1;
			cs = bpf_map_lookup_elem(&nccl_comms, &k);
			if (cs) {
				r->id = cs->id;
				r->seq = cs->seq;
			}
			rec_submit(r);
		}
		bpf_map_delete_elem(&nccl_comms, &k);
		return 0;
	}
	ts = nc_thread(tid);
	if (!ts)
		return 0;
	if (cls == IG_NCC_GROUP_START) {
		ts->group += 1;
		return 0;
	}
	if (cls == IG_NCC_GROUP_END) {
		if (ts->group)
			ts->group -= 1;
		if (ts->group)
			return 0;
		r = nc_rec(IG_NC_GROUP_END, api, tid, tgid, bpf_ktime_get_ns());
		if (r) {
			rec_submit(r);
		}
		return 0;
	}
	/* a communicator call: what the return needs */
	ts->api = api;
	ts->cls = cls;
	ts->out = a1;
	ts->a2 = (__s32)a2;
	ts->a3 = (__s32)a3;
	ts->id = 0;
	ts->parent = 0;
	switch (cls) {
	case IG_NCC_INIT_RANK:
		ts->id = nc_hash_id(NC_ID_ADDR(sp, a3));
		ts->a3 = (__s32)NC_RANK_AFTER_ID(a3, a4);
		break;
	case IG_NCC_INIT_ALL:
		/* one process holds every rank: its own id */
		ts->id = nc_mix(nc_mix(0xcbf29ce484222325ULL, tgid), a1);
		break;
	case IG_NCC_SPLIT:
		ts->parent = a1;
		ts->out = a4;	/* ncclComm_t *newcomm */
		cs = bpf_map_lookup_elem(&nccl_comms, &k);
		if (cs) {
			ts->id = nc_mix(nc_mix(nc_mix(cs->id, 0x5b1a), (__u32)a2),
					cs->nsplit);
			cs->nsplit += 1;
			if (!cs->id)
				ts->id = 0;
		}
		break;
	case IG_NCC_COUNT:
	case IG_NCC_USER_RANK:
		ts->parent = a1;
		ts->out = a2;	/* int * */
		break;
	}
	ts->t_begin = bpf_ktime_get_ns();
	return 0;
}

/* Return of a communicator call. */
static __always_inline int nc_exit(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, tgid = pid_tgid >> 32;
	struct nccl_thread_state *ts = bpf_map_lookup_elem(&nccl_threads, &tid);
	long rc = PT_REGS_RC(ctx);
	__u64 now = bpf_ktime_get_ns(), comm = 0;
	struct nccl_comm_key k = { .tgid = tgid };
	struct nccl_comm_state *cs;
	struct ig_nccl *r;
	__s32 v = -1;
	int i;

	if (!ts || !ts->t_begin)
		return 0;
	switch (ts->cls) {
	case IG_NCC_INIT_RANK:
		if ((int)rc != NCCL_SUCCESS ||
		    bpf_probe_read_user(&comm, sizeof(comm), (void *)ts->out))
			break;
		nc_comm_put(tgid, comm, ts->id, ts->a3, ts->a2);
		nc_comm_rec(ts->api, tid, tgid, now, ts, comm, ts->a3, ts->a2, rc);
		break;
	case IG_NCC_INIT_ALL:
		if ((int)rc != NCCL_SUCCESS)
			break;
		for (i = 0; i < NCCL_INIT_ALL_MAX; i++) {
			if (i >= ts->a2 ||
			    bpf_probe_read_user(&comm, sizeof(comm),
						(void *)(ts->out + 8 * i)))
				break;
			nc_comm_put(tgid, comm, ts->id, i, ts->a2);
			nc_comm_rec(ts->api, tid, tgid, now, ts, comm, i, ts->a2, rc);
		}
		break;
	case IG_NCC_SPLIT:
		if ((int)rc != NCCL_SUCCESS ||
		    bpf_probe_read_user(&comm, sizeof(comm), (void *)ts->out) || !comm)
			break;
		nc_comm_put(tgid, comm, ts->id, -1, 0);
		nc_comm_rec(ts->api, tid, tgid, now, ts, comm, -1, 0, rc);
		break;
	case IG_NCC_COUNT:
	case IG_NCC_USER_RANK:
		if ((int)rc != NCCL_SUCCESS ||
		    bpf_probe_read_user(&v, sizeof(v), (void *)ts->out))
			break;
		k.comm = ts->parent;
		cs = bpf_map_lookup_elem(&nccl_comms, &k);
		if (!cs)
			break;
		if (ts->cls == IG_NCC_COUNT) {
			if (cs->nranks == v)
				break;
			cs->nranks = v;
		} else {
			if (cs->rank == v)
				break;
			cs->rank = v;
		}
		r = nc_rec(IG_NC_COMM_INFO, ts->api, tid, tgid, now);
		if (!r)
			break;
		r->comm = ts->parent;
		r->id = cs->id;
		r->rank = cs->rank;
		r->nranks = cs->nranks;
		rec_submit(r);
		break;
	}
	ts->t_begin = 0;
	return 0;
}

#endif
