/* SPDX-License-Identifier: GPL-2.0 */
/* The tracer's insides, shared by tracer.c, tracer_probe.c and
 * tracer_uprobe.c. */
#ifndef IG_TRACER_INT_H
#define IG_TRACER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include <bpf/libbpf.h>
#include "probes/tracer.h"

/* One attachment: a libbpf link, or the fd of a multi-uprobe link. */
struct ig_link {
	struct bpf_link *link;
	int fd;			/* -1 with a libbpf link */
	pid_t owner;		/* uprobes: the process (-1: every one) */
	bool uprobe;		/* libcuda's or a loader's: detachable */
	bool stays;		/* libnccl's, the loaders', libcuda's set-up
				 * entry points: kept between the agent's
				 * windows (docs/design.md §7.10) */
};

struct ig_tracer {
	struct idlegap_bpf *skel;
	struct ring_buffer *rb;
	ig_record_fn fn;
	void *ctx;
	bool btf;		/* every hook with a BTF flavour loaded as tp_btf */
	bool multi;		/* uprobes attached through multi-uprobe links */
	bool compat;		/* the compat object (bpf/compat.bpf.h) */
	struct ig_link *links;
	size_t nlinks, caplinks;
	/* one poll's slice (ig_tracer_poll()): records handed over, when
	 * it ends, whether it ended them early; the newest record's time */
	__u64 nread, slice_end, last_ts;
	__u64 whole_to;		/* ig_tracer_whole_to() */
	bool sliced;
	/* ig_tracer_stop_at(): the first record sent after @stop_at, kept
	 * back for the poll after the stop is lifted */
	__u64 stop_at;
	struct ig_hdr *held;
};

/* The ring buffer's callback (tracer_ring.c): hands a record over, or
 * stops the poll (a slice's end, a record after the stop). */
int ig_tracer_on_record(void *ctx, void *data, size_t size);
/* Keeps @l (or @fd when @l is NULL); destroys it when out of memory. */
int ig_tracer_keep(struct ig_tracer *t, struct bpf_link *l, int fd, pid_t owner,
		   bool uprobe);
void ig_tracer_unlink(struct ig_link *k);
/* Hands @k to the background remover (per-probe links take ~100 ms each
 * to remove); ig_tracer_unlink_wait() returns once all are gone. */
void ig_tracer_unlink_later(struct ig_link *k);
void ig_tracer_unlink_wait(void);
/* Keeps @l/@fd as ig_tracer_keep() does, marked as staying between the
 * agent's windows. */
int ig_tracer_keep_staying(struct ig_tracer *t, struct bpf_link *l, int fd, pid_t owner);

/*
 * BPF_LINK_CREATE of BPF_TRACE_UPROBE_MULTI (Linux 6.6), as the kernel's
 * union bpf_attr lays it out: the installed UAPI headers predate it.  One
 * such link carries all of a library's probes, and removing it waits for
 * one RCU grace period, where one perf-event link per probe waits for one
 * each (seconds for a driver's hundred entry points).
 */
/* ig_hooks[]: each with a tp_btf and a raw_tp program */
#define IG_NHOOKS	9

#define IG_BPF_TRACE_UPROBE_MULTI	48
#define IG_BPF_F_UPROBE_MULTI_RETURN	1

/* BPF_LINK_CREATE's attributes for multi-uprobe links (6.6+), which the
 * UAPI headers this builds against may lack. */
struct ig_uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__aligned_u64 path;
	__aligned_u64 offsets;
	__aligned_u64 ref_ctr_offsets;
	__aligned_u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
	__u32 pad;
};

/* The large hash maps, made by a thread beside the flavours' pick and
 * handed to libbpf before the load (tracer_maps.c). */
#define IG_PREMADE_MAX	32
struct ig_premade_map {
	struct bpf_map *map;
	enum bpf_map_type type;
	char name[16];
	__u32 key_size, value_size, max_entries, flags;
	int fd, err;
};
struct ig_premade {
	pthread_t th;
	bool started;
	size_t n, next;		/* next: the first map not yet taken */
	struct ig_premade_map m[IG_PREMADE_MAX];
};
/* Starts making @obj's hash maps as they are configured now. */
void ig_tracer_maps_start(struct ig_premade *p, struct bpf_object *obj);
/* Waits for them and hands those made to libbpf. */
void ig_tracer_maps_finish(struct ig_premade *p);

#endif
