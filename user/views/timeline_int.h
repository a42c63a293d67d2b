/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the timeline builder (timeline_build.h): its state, shared by
 *   timeline_build.c  thread tracks, device tracks and the gaps' flows
 *   timeline_threads.c  the table of threads, each declared once
 *   timeline_peers.c  each rank's collectives, and the flows from a
 *                     rank's wait for peers to the late rank's lateness
 *   timeline_steps.c  each GPU's steps, at the report
 */
#ifndef IG_TIMELINE_INT_H
#define IG_TIMELINE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "engine/engine_obs.h"
#include "views/perfetto.h"
#include "stream/records.h"

struct tl_thread {
	uint32_t tid, tgid;	/* tid 0: free slot */
	bool declared;
	char comm[IG_COMM_LEN];
};

#define IG_TL_MAX_DEVS	64

/* Tracks of one kind, one a process, by slot: @pid[slot] the process. */
struct tl_tracks {
	uint32_t pid[IG_TL_MAX_DEVS];
	uint32_t n;
};

/* A late rank's own track, "rank R late (pid P)", under its process: its
 * slices nest (docs/design.md §7.8), so each new one starts at or after
 * @floor, the end of those before the last, and ends at or after @end. */
struct tl_late {
	uint64_t floor, end;
};

struct ig_tlb {
	struct ig_perfetto *w;
	int err;
	struct tl_thread *thr;
	uint32_t cap, n;	/* power of two */
	uint64_t dev_declared;	/* devices 0..63 */
	uint64_t est_declared;	/* their estimated tracks */
	uint64_t steps_declared;	/* and their steps' tracks */
	struct tl_tracks coll;			/* ranks' collectives tracks */
	struct tl_tracks late_tracks;		/* late ranks' tracks */
	struct tl_late late[IG_TL_MAX_DEVS];	/* and their slices, by slot */
	uint64_t busy_t0[IG_TL_MAX_DEVS], busy_t1[IG_TL_MAX_DEVS];
	uint64_t next_flow;
	uint64_t peer_flows, peer_flows_left;	/* written, left out (the bound) */
};

/* ---- timeline_threads.c: the table of threads */
/* Makes room in the table (twice as large; 256 the first time). */
int ig_timeline_threads_grow(struct ig_tlb *b);
/* Thread @tid's entry (@tgid: its process, 0 when not known), added when
 * new; NULL on ENOMEM. */
struct tl_thread *ig_timeline_thread_get(struct ig_tlb *b, uint32_t tid, uint32_t tgid);
/* @comm is @tid's name now: declared again before its next slice. */
void ig_timeline_note_comm(struct ig_tlb *b, uint32_t tid, uint32_t tgid, const char *comm);
/* Declares thread @tid (and its process, once) before its first slice. */
int ig_timeline_declare(struct ig_tlb *b, uint32_t tid, uint32_t tgid);
/* One rank's time in a collective (IG_OBS_COLLECTIVE). */
void ig_timeline_collective(struct ig_tlb *b, const struct ig_obs_span *o);

#endif
