/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The steps' parts, for one another only (steps.h says what each holds).
 */
#ifndef IG_ENGINE_STEPS_INT_H
#define IG_ENGINE_STEPS_INT_H

#include "engine/steps/steps.h"
#include "util/hist.h"
#include "util/vec.h"

#define ST_OPEN		UINT64_MAX
/* Segments kept at once per device: at this many, the older half that
 * the device's final time has passed by ST_FOLD_MARGIN_NS is cut into
 * steps and folded into the device's totals (st_agg). */
#define ST_LIVE_MAX	4096
#define ST_FOLD_MARGIN_NS	2000000000ULL
#define ST_LIST_KEEP	2000	/* folded steps listed: the first ones */
#define ST_SLOW_KEEP	1000	/* and slow ones after them */

/* The time between two candidate boundaries of a device, ending at the
 * candidate (the last one is open).  Its start is the previous
 * segment's end (the first's: st_dev.base). */
struct st_seg {
	uint64_t t_end;
	uint64_t sig;		/* its launches: a sum of their hashes, so
				 * that the order records arrive in does not
				 * matter */
	uint64_t ns[IG_SS__MAX];
	uint64_t cause_ns[IG_C__MAX];
	uint64_t late_ns;	/* the largest peer wait charged here */
	uint32_t nlaunch;
	uint16_t api;		/* the boundary's call */
	uint8_t kind;		/* enum ig_step_kind */
	int8_t late_cause;	/* of that wait: enum ig_cause, -1 */
	int32_t late_rank;
};

/* What-if's sums over whole steps, per cause (and peer wait, last). */
struct st_wi {
	uint64_t wall_ns;
	uint64_t touched[IG_C__MAX + 1];	/* steps it took 1% of */
	uint64_t sub_ns[IG_C__MAX + 1];		/* wall less its time, all */
	uint64_t nd_ns[IG_C__MAX + 1];		/* and where it did not
						 * dominate */
	uint64_t nd_n[IG_C__MAX + 1];
};

/* The steps folded out of the segments: their figures, kept whole. */
struct st_agg {
	uint64_t n, complete;	/* steps folded, whole ones among them */
	struct ig_hist wall;	/* whole steps' wall time */
	struct st_wi wi;
	uint64_t nslow;
	struct ig_step *list;	/* the first ST_LIST_KEEP, then slow ones */
	uint32_t nlist, nlist_slow;
	char source[96];
	uint32_t period;
	uint64_t boundary_sig;	/* the plan the folded steps were cut by */
	bool marker;
	uint64_t unfolded;	/* segments dropped with no period found */
};

struct st_dev {
	int dev;
	uint32_t tgid;		/* the process whose calls cut it */
	uint64_t t_first, t_last;	/* time charged */
	uint64_t base;		/* where the first segment starts (0: at
				 * t_first) */
	struct ig_vec segs;	/* struct st_seg */
	uint32_t cur;		/* where the last charge was */
	uint32_t fold_at;	/* segments at which to try folding next */
	uint64_t dropped;	/* candidates lost to memory */
	struct st_agg agg;
};

struct ig_steps {
	int marker_api;		/* -1: found from the period */
	struct st_dev *devs;
	uint32_t ndevs, cap;
	uint32_t last;		/* the device found last */
};

static inline const struct st_seg *st_seg_at(const struct st_dev *d, uint32_t i)
{
	return (const struct st_seg *)d->segs.v + i;
}

static inline uint64_t st_seg_start(const struct st_dev *d, uint32_t i)
{
	return i ? st_seg_at(d, i - 1)->t_end : d->base;
}

/* ---- steps.c ---- */
/* Process @tgid's steps on device @dev; NULL when it has none. */
const struct st_dev *ig_steps_dev(const struct ig_steps *s, int dev,
				  uint32_t tgid);

/* ---- steps_period.c ---- */
/* How a device's closed segments are cut into steps. */
struct st_plan {
	bool ok, marker;
	uint32_t P;
	uint64_t B;		/* the boundary's signature */
	char source[96];
	char why[96];
};

/* The period and boundary of @d's closed segments (a marker call's,
 * where @s names one). */
void ig_steps_plan(const struct ig_steps *s, const struct st_dev *d,
		   struct st_plan *pl);
/* Does segment @g end a step? */
bool ig_steps_ends_step(const struct st_plan *pl, const struct st_seg *g);

/* ---- steps_find.c ---- */
/* The older segments of @d into steps folded into d->agg. */
void ig_steps_fold(const struct ig_steps *s, struct st_dev *d);
void ig_steps_agg_free(struct st_agg *a);

#endif
