/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The duration model of estimate.c (docs/design.md §4.10): a duration per
 * launch signature and one launch latency, fitted by least squares with
 * outlier rejection to the ends of queue that syncs proved, and the
 * replay of a device's queue with them.  No engine state: plain arrays,
 * so that the unit tests drive it directly.
 */
#ifndef IG_ENGINE_EST_FIT_H
#define IG_ENGINE_EST_FIT_H

#include <stdint.h>

#define EST_MAX_SIGS	64
#define EST_MAX_LAT_NS	200000.0
#define EST_EARLY	(-2)	/* ig_est_fit's variant: ends taken as late */
/* ig_est_fit's variant: each launch that finds the queue empty starts as
 * late as it can (EST_MAX_LAT_NS, and no later than the next submission's
 * or sync's entry); EST_LATE + 1 + s also pulls signature s to 0. */
#define EST_LATE	(1 << 16)
#define EST_LATE_NS	1e15	/* its model's latency: "at each head's cap" */
/* Flags beside EST_LATE (and a signature + 1 in the low bits):
 * EST_SHORT starts every duration no longer than the marks allow it
 * (ig_est_caps()), so that the fit finds the chains of a queue that ran
 * dry between launches where a long start would find one queue backed
 * up; EST_SOON takes each waiting sync's queue as ended a wakeup's delay
 * (EST_WAKE_NS, no earlier than its entry) before its drained point. */
#define EST_SHORT	(1 << 17)
#define EST_SOON	(1 << 18)
#define EST_EXPECT	(1 << 19)	/* EST_EARLY, as a flag */
/* EST_LAT0 holds the latency at 0: a drained point's delay, the same in
 * every chain, cannot be fitted as a launch latency that starts every
 * head late (the low end of the interval, docs/design.md §4.10). */
#define EST_LAT0	(1 << 20)
#define EST_WAKE_NS	100000.0	/* a drained point's delay, at most */

/* What identifies a launch's work: process, function (or graph, or the
 * api of a copy), grid and block size. */
struct est_sigkey {
	uint32_t tgid, grid, block, pad;
	uint64_t func;
};

struct est_launch {
	uint64_t t;		/* the launch call's entry */
	uint32_t sig, pad;
};

/* A sync or query that covered every launch before t_in: the queue
 * ended at t_end (waited), or had ended by t_end. */
struct est_mark {
	uint64_t t_in, t_end;
	uint64_t t_wake;	/* a slept sync's wakeup before t_end, or 0 */
	uint8_t waited, fold;
	uint8_t pad[6];
};

struct est_ival {
	uint64_t t0, t1;
};

struct est_model {
	uint32_t nsig;
	double lat;			/* ns */
	double d[EST_MAX_SIGS];		/* ns per signature */
};

/* Fit to every mark but those of fold @skip (-1: none); launches and
 * marks sorted by time.  Durations the syncs cannot tell apart (the same
 * mix of signatures before every sync) are kept near their start value,
 * or, for signature @zero (-1: none), near 0; with @zero EST_EARLY, the
 * syncs' ends are taken as late, by a wakeup's delay, more often than
 * early; with EST_LATE, every head starts at its latency's cap, with
 * EST_LAT0 at its launch.  The variants bound what the evidence leaves
 * open.  0, or -1 when nothing pins a duration. */
int ig_est_fit(const struct est_launch *l, uint32_t nl, const struct est_mark *m,
	       uint32_t nm, uint32_t nsig, int skip, int zero, struct est_model *out);
/* The most each signature's duration can be (ns, INFINITY: no bound):
 * a launch's op ended by the end of the first mark after its entry (with
 * @soon, a waiting sync's a wakeup's delay earlier). */
void ig_est_caps(const struct est_launch *l, uint32_t nl, const struct est_mark *m,
		 uint32_t nm, uint32_t nsig, int soon, double *cap);
/* The share of marks with launches before them (since the one before)
 * that @md contradicts: one of those launches, started at its entry,
 * would end more than 5 us after the mark's end. */
double ig_est_infeasible(const struct est_model *md, const struct est_launch *l,
			 uint32_t nl, const struct est_mark *m, uint32_t nm);
/* The share of the launches that @md's replay puts in a chain ending at
 * a waiting sync: the launches whose durations the syncs pin. */
double ig_est_pinned(const struct est_model *md, const struct est_launch *l,
		     uint32_t nl, const struct est_mark *m, uint32_t nm);
/* The median, over the waiting syncs, of the work @md puts in the chain
 * that ends at each (ns). */
double ig_est_busy_p50(const struct est_model *md, const struct est_launch *l,
		       uint32_t nl, const struct est_mark *m, uint32_t nm);
/* For each waiting sync of fold @fold: the absolute error of its
 * predicted end in us (@err), and the error relative to its queue's busy
 * time (@rel), appended. */
void ig_est_predict(const struct est_model *md, const struct est_launch *l,
		    uint32_t nl, const struct est_mark *m, uint32_t nm, int fold,
		    double *err, uint32_t *nerr, double *rel, uint32_t *nrel);
/* The median absolute error (us) of @md's predicted ends of the waiting
 * syncs, all of them; INFINITY when out of memory. */
double ig_est_p50(const struct est_model *md, const struct est_launch *l,
		  uint32_t nl, const struct est_mark *m, uint32_t nm);
/* The idle that the busy time of waiting syncs may hide (ns): per sync,
 * a wakeup's delay between the queue's end and its drained point
 * (EST_WAKE_NS at most), and, where its chain starts at a launch that
 * found the queue empty, by how much the sync ended later than @md
 * predicts: so much later its chain may have started; no more than the
 * sync slept. */
double ig_est_hidden(const struct est_model *md, const struct est_launch *l,
		     uint32_t nl, const struct est_mark *m, uint32_t nm);
/* The queue's busy intervals, in order, disjoint (@k: @nl slots). */
void ig_est_replay(const struct est_model *md, const struct est_launch *l,
		   uint32_t nl, const struct est_mark *m, uint32_t nm,
		   struct est_ival *k, uint32_t *nk);

#endif
