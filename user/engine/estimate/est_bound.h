/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The estimate's bounds (docs/design.md §4.10), where syncs and queries
 * only say that the queue had ended by their return: the largest
 * durations per signature consistent with every such mark, by a small
 * linear program, and their check on marks held out.  No engine state:
 * plain arrays, so that the unit tests drive it directly.
 */
#ifndef IG_ENGINE_EST_BOUND_H
#define IG_ENGINE_EST_BOUND_H

#include <stdint.h>
#include "engine/estimate/est_fit.h"

#define EST_BOUND_MIN_MARKS	10	/* held-out marks needed: two per fold */
#define EST_BOUND_MAX_WIDTH	0.2	/* of the device's span */
#define EST_BOUND_MISS_NS	5000.0	/* a held-out mark overshot past this */
#define EST_BOUND_MAX_MISSED	0.25	/* share of them that refuses */
#define EST_LP_MAX_ROWS		4096

/* Maximise @c.x subject to @a x <= @b (@m rows of @n, row-major), x >= 0,
 * every b >= 0 (x = 0 is feasible).  0 with the optimum in @x and @opt;
 * 1 when unbounded, -1 on an iteration limit or ENOMEM. */
int ig_est_lp_max(const double *a, const double *b, const double *c,
		  uint32_t m, uint32_t n, double *x, double *opt);

/* The durations (latency 0) that make the most busy time @w.d (@w: weight
 * per signature, e.g. its launches inside unresolved time) while every
 * mark but those of fold @skip (-1: none) finds the replayed queue ended
 * by its t_end; each duration at most @cap.  0, or -1 when the program
 * did not settle. */
int ig_est_bound_fit(const struct est_launch *l, uint32_t nl,
		     const struct est_mark *m, uint32_t nm, uint32_t nsig,
		     const double *w, double cap, int skip, struct est_model *out);

/* The point between no busy time and @hi's (ig_est_bound_fit's): every
 * signature at the same fraction of its own largest duration (each
 * maximised alone), that fraction making half @hi's busy time @w.d, or
 * less where the marks allow no more.  0, or -1 on ENOMEM or a program
 * that did not settle. */
int ig_est_bound_point(const struct est_launch *l, uint32_t nl,
		       const struct est_mark *m, uint32_t nm, uint32_t nsig,
		       const double *w, double cap, const struct est_model *hi,
		       struct est_model *out);

/* For each mark of fold @fold with launches before it: by how much (us,
 * 0 when not) the queue replayed with @md overshoots its t_end,
 * appended to @err. */
void ig_est_bound_check(const struct est_model *md, const struct est_launch *l,
			uint32_t nl, const struct est_mark *m, uint32_t nm,
			int fold, double *err, uint32_t *nerr);

#endif
