/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The analysis engine: turns the record stream (user/stream/records.h) into the
 * report.  It does not know whether records come from the kernel or from a
 * recording file.  Records must be fed in timestamp (ig_hdr.ts) order; the
 * reorder stage (user/stream/reorder.h) guarantees that for both sources.
 */
#ifndef IG_ENGINE_H
#define IG_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "stream/records.h"

struct ig_engine;

#define IG_GAPS_NONE (-2)

/*
 * Upper bounds (ns) of the gap-length histogram in the JSON report and the
 * idlegap_gpu_gap_seconds metric: 100 us to 10 s, 1-2.5-5 per decade.
 */
#define IG_GAP_BOUNDS_NS(X) X(100000) X(250000) X(500000) X(1000000) \
	X(2500000) X(5000000) X(10000000) X(25000000) X(50000000) \
	X(100000000) X(250000000) X(500000000) X(1000000000) \
	X(2500000000) X(5000000000) X(10000000000)

struct ig_engine_opts {
	size_t sz;
	int max_depth;		/* waker walk depth (0: default 4) */
	double window_s;	/* thread history kept (0: default 60 s) */
	int max_gaps_json;	/* gaps listed in --json (0: default 1000,
				 * -1: all, IG_GAPS_NONE: none) */
	bool verbose;		/* -v: a memory summary on stderr at the end */
	size_t hist_budget;	/* bytes of thread history held at most
				 * (0: default, 4 MiB; histcap.c) */
	uint32_t est_block;	/* launches per estimate block (0: default
				 * 128k; docs/design.md §4.10) */
	double est_block_s;	/* and seconds per block (0: by launches
				 * only) */
	bool no_est_track;	/* no timeline: the estimate's stretches
				 * are not kept (ig_engine_estimates()
				 * gives the last block's alone) */
	int step_api;		/* a step ends at each return of this
				 * driver call (enum ig_api + 1; 0: steps
				 * are found from the loop's period) */
};

/* NULL and errno set on failure. */
struct ig_engine *ig_engine_new(const struct ig_engine_opts *opts);
/* One record, already size-checked against ig_rec_min_size(). */
void ig_engine_feed(struct ig_engine *e, const struct ig_hdr *rec);
/* No more records: close what can be closed, drop open gaps. */
void ig_engine_finish(struct ig_engine *e);
/* @n records a recording's replay found too late to sort (its reorder
 * stage, docs/design.md §3.4): counted with the run's own (user_lost),
 * and the evidence is then not whole. */
void ig_engine_add_late(struct ig_engine *e, unsigned long n);
int ig_engine_report_text(struct ig_engine *e, FILE *out);
int ig_engine_report_json(struct ig_engine *e, FILE *out);
/* The JSON report as text in a new buffer (free it) of *@len bytes;
 * a negative errno, and nothing to free, on failure. */
int ig_engine_report_json_buf(struct ig_engine *e, char **buf, size_t *len);
/* Folded stacks (flame graphs) of the idle time, the cause as root frame.
 * 0, -ENOMEM, or -EIO when writing fails. */
int ig_engine_folded(struct ig_engine *e, FILE *out);
void ig_engine_free(struct ig_engine *e);
/*
 * Windows that drop no gap (docs/design.md §7.10).  ig_engine_hold ends
 * the window at @t, after its END: every device is counted up to there,
 * and a gap open then is held, ended by the records fed after (the
 * thread timelines go on, the GPU model counts nothing else).  @clip:
 * the held gap counts up to @t only (the next window, carried in, counts
 * the rest); else whole.  A held gap still open at finish counts as
 * idle_open, as far as @t (@clip) or the last record.
 */
#define IG_CARRY_PIDS	16
struct ig_open_gap {
	int device;
	bool pending;		/* not a gap: work pending at the boundary */
	uint64_t gap_start;	/* when it opened, maybe in an earlier window */
	uint32_t npids;		/* the processes that may end it */
	uint32_t pids[IG_CARRY_PIDS];
	uint32_t nstreams;	/* pending: its streams, pending since then */
	struct ig_open_stream {
		uint32_t tgid, feeder_tid, feeder_tgid;
		uint64_t key;
		uint64_t since;	/* pending since (a drain seen later, but
				 * before the boundary, closes it there) */
	} streams[IG_CARRY_PIDS];
};
void ig_engine_hold(struct ig_engine *e, uint64_t t, bool clip);
/* Held gaps not yet ended.  (Devices with work pending at the hold
 * are carried by ig_engine_open_gaps too, as pending.) */
unsigned int ig_engine_held_open(const struct ig_engine *e);
/* When the last held gap that ended did (a launch, work, its processes'
 * exit); 0: none ended. */
uint64_t ig_engine_held_ended(const struct ig_engine *e);
/* The gaps open at the hold, for the next window; returns how many. */
size_t ig_engine_open_gaps(const struct ig_engine *e, struct ig_open_gap *out,
			   size_t max);
/* A fresh engine's window starts at @t inside a gap open since
 * g->gap_start: the device is idle from @t until its next submission;
 * or (g->pending) with its streams' work pending from @t. */
void ig_engine_carry_in(struct ig_engine *e, const struct ig_open_gap *g,
			uint64_t t);

/* After a report: the stretches of unresolved time the model estimated
 * idle or busy (docs/design.md §4.10), per device in time order; nothing
 * when it made no estimate. */
void ig_engine_estimates(const struct ig_engine *e,
			 void (*cb)(void *ctx, int device, uint64_t t0,
				    uint64_t t1, bool idle), void *ctx);

#endif
