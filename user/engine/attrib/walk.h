/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One walk of attribution: what the walk (attrib.c), the rules
 * (causes.c), the accounting (detail.c) and the stack tables (stacks.c)
 * all hand one another.
 */
#ifndef IG_ENGINE_WALK_H
#define IG_ENGINE_WALK_H

#include "engine/model.h"
#include "engine/attrib/stacks.h"

/* One attribution: where its time goes and the chain of threads followed. */
struct walk {
	struct ig_engine *e;
	struct ig_causeset *set;
	uint64_t *dev_ns;	/* the GPU's share of the set, by cause (or NULL) */
	int depth;
	uint32_t chain[IG_DEPTH_CAP + 1];
	struct ig_obs_walk *obs;	/* an observer's note of the walk */
	/* the stretch being walked: of the feeder (depth 0), of this depth */
	struct ig_stk_pos top, cur;
	/* unresolved time: each feeder stretch's time per cause, for the
	 * causes of estimated idle (e->attr.seg_tap); false: not kept */
	bool segs;
	uint64_t seg_ns[IG_C__MAX];
	/* inside an interval whose reason /proc gave at the start
	 * (atattach.c), and the time given so */
	bool recov;
	uint64_t recov_ns;
};

#endif
