/* SPDX-License-Identifier: GPL-2.0 */
/* Maps, configuration and small helpers shared by all idlegap programs. */
#ifndef IG_MAPS_BPF_H
#define IG_MAPS_BPF_H

#include "record_abi.h"

#define TASK_RUNNING		0x0000
#define TASK_INTERRUPTIBLE	0x0001
#define TASK_UNINTERRUPTIBLE	0x0002
#define __TASK_STOPPED		0x0004
#define __TASK_TRACED		0x0008

/* Set by user space before load. */
const volatile __u64 min_offcpu_ns = 0;	/* shorter intervals are not emitted */
const volatile __u64 min_api_ns = 2000;	/* shorter timed API calls neither */
const volatile __u64 busy_query_gap_ns = 500000; /* NOT_READY rate limit */
#ifdef IG_COMPAT
const volatile bool have_find_vma = false;
#else
const volatile bool have_find_vma = true;
#endif	/* bpf_find_vma() (5.17+) */

/*
 * Non-zero while no window is open (the agent between windows): tracked
 * threads keep their state, so that a wait begun before a window is whole
 * in it, but no stack is walked and no off-CPU or sample record is sent:
 * nothing would read them.  Written by user space (ig_tracer_pause()).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} paused SEC(".maps");

static __always_inline bool capture_paused(void)
{
	__u32 zero = 0, *v = bpf_map_lookup_elem(&paused, &zero);

	return v && *v;
}

struct stream_key {
	__u32 tgid;
	__u32 pad;
	__u64 stream;
};

struct stream_state {
	__u64 last_submit;
	__u64 drain_ts;		/* last proven drained */
	__u64 busy_emit_ts;	/* last QUERY_BUSY emitted */
	__u32 nsub;		/* submissions since the last record */
	__u32 flags;		/* cuStreamCreate flags */
	__u32 announce;		/* report the next submission: a sync or
				 * query returned since the last report */
	__u32 nreturns;		/* syncs and queries returned on it */
	__u8 blocking;		/* known to sync with the legacy stream */
	__u8 pad[3];
	__u32 nl;		/* launches buffered in lb */
	__u32 pad2;
	struct ig_launch lb[IG_LBUF];	/* sent as IG_REC_LAUNCHES */
};

struct event_key {
	__u32 tgid;
	__u32 pad;
	__u64 event;
};

struct event_state {
	__u64 stream;
	__u64 record_ts;
};

struct bio_state {
	__u64 t_issue;
	__u64 sector;
	__u32 tid;
	__u32 tgid;
	__u32 dev;
	__u32 bytes;
	__u32 op;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct ig_proc_state);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct ig_thread_state);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct stream_key);
	__type(value, struct stream_state);
} streams SEC(".maps");

/* Where a new stream's entry is put together: too large for the stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stream_state);
} stream_new SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct event_key);
	__type(value, struct event_state);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct bio_state);
} bios SEC(".maps");

/* Who queued each block request: the thread that inserted it into the
 * scheduler (0: an untracked one), read where it is issued, which on a
 * busy disk is often another task's context (a kworker, the thread that
 * completed the request before).  LRU: a request merged away after its
 * insertion is never issued. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u64);		/* tgid << 32 | tid */
} rq_owner SEC(".maps");

/* Files whose path was sent (IG_REC_FILE), by key. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u8);
} files_sent SEC(".maps");

/* Where a file's path is put together before it is sent. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ig_file);
} file_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IG_STAT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IG_API__MAX);
	__type(key, __u32);
	__type(value, __u64);
} api_hits SEC(".maps");

/* Per CPU: whether a reserve failed on this CPU since the last record it
 * emitted, and the count of failed reserves on all CPUs (losses) when it
 * emitted that record. */
struct cpu_state {
	__u64 seen;
	__u32 lost;
	__u32 pad;
};

/* Failed reserves on all CPUs.  A CPU whose count moved since its previous
 * record marks its next one: a loss on one CPU is known at the next record
 * of any, not only at that CPU's own next record, which may come much later
 * (docs/design.md §6.3). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} losses SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_state);
} cpus SEC(".maps");

static __always_inline void stat_add(__u32 which, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v)
		*v += n;
}

static __always_inline struct cpu_state *this_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpus, &zero);
}

/* The failed reserves on all CPUs so far: read before a record is
 * reserved, so that every loss it counts came before the record. */
static __always_inline __u64 losses_now(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&losses, &zero);

	return n ? *(volatile __u64 *)n : 0;
}

/* A record could not be sent: counted, and this CPU's next record, and
 * every other CPU's, will say so. */
static __always_inline void rec_lost(struct cpu_state *cs, __u16 type)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&losses, &zero);

	stat_add(IG_STAT_DROPS, 1);
	if (type == IG_REC_CUDA)
		stat_add(IG_STAT_DROPS_CUDA, 1);
	if (n)
		__sync_fetch_and_add(n, 1);
	if (cs)
		cs->lost = 1;
}

/* The header's cpu field of a record this CPU sends (@nlost: losses_now()
 * read before the record was reserved): IG_HDR_LOST_BEFORE when a reserve
 * failed on any CPU since this CPU's previous record. */
static __always_inline __u32 rec_cpu(struct cpu_state *cs, __u64 nlost)
{
	__u32 cpu = IG_HDR_CPU(bpf_get_smp_processor_id());

	if (cs && (cs->lost || cs->seen != nlost))
		cpu |= IG_HDR_LOST_BEFORE;
	return cpu;
}

/* A record of this CPU's was sent, its header filled by rec_cpu(). */
static __always_inline void rec_kept(struct cpu_state *cs, __u64 nlost)
{
	if (cs) {
		cs->lost = 0;
		cs->seen = nlost;
	}
}

/* Reserve a record and fill its header; counts the loss when full. */
static __always_inline void *rec_reserve(__u32 size, __u16 type, __u32 tid,
					 __u32 tgid, __u64 ts)
{
	struct cpu_state *cs = this_cpu();
	__u64 nlost = losses_now();
	struct ig_hdr *h = bpf_ringbuf_reserve(&rb, size, 0);

	if (!h) {
		rec_lost(cs, type);
		return NULL;
	}
	h->type = type;
	h->size = size;
	h->cpu = rec_cpu(cs, nlost);
	rec_kept(cs, nlost);
	h->tid = tid;
	h->tgid = tgid;
	h->ts = ts;
	return h;
}

/* Wakes the consumer only when the ring fills up: it also drains the ring
 * on a timer, so a record costs no wakeup and no context switch (on a
 * small machine those would be taken from the traced job). */
static __always_inline __u64 rec_wake_flag(void)
{
	__u64 avail = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&rb, BPF_RB_RING_SIZE);

	return avail > size / 8 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline void rec_submit(void *rec)
{
	stat_add(IG_STAT_EVENTS, 1);
	bpf_ringbuf_submit(rec, rec_wake_flag());
}

static __always_inline bool proc_tracked(__u32 tgid)
{
	return bpf_map_lookup_elem(&procs, &tgid) != NULL;
}

/* The state of a thread of a tracked process, created on first use for
 * threads that existed before attach and were missed by the enumeration. */
static __always_inline struct ig_thread_state *thread_get(__u32 tid, __u32 tgid)
{
	struct ig_thread_state *ts = bpf_map_lookup_elem(&threads, &tid);
	struct ig_thread_state zero = {};

	if (ts || !proc_tracked(tgid))
		return ts;
	zero.tgid = tgid;
	if (bpf_map_update_elem(&threads, &tid, &zero, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&threads, &tid)) {
		stat_add(IG_STAT_MAP_FULL, 1);
		return NULL;
	}
	return bpf_map_lookup_elem(&threads, &tid);
}

#endif
