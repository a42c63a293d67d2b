// SPDX-License-Identifier: GPL-2.0
/*
 * The bound on thread history (docs/design.md §5.13).  History is kept
 * from the oldest time the GPU model may still attribute (an open idle
 * gap's start) or for the window, whichever is shorter.  A gap that stays
 * open (a GPU no process uses any more, a long host phase) keeps the whole
 * window, and a host switching tens of thousands of times a second fills
 * it with a hundred megabytes.  So the history of all threads together is
 * held under a budget: past it the cutoff moves forward to where three
 * quarters of the budget remain.  What it drops is marked as dropped, as
 * the window's own cutoff is (the thread's hist_from): a gap reaching back
 * there charges that time to an unknown cause, never to a wait it cannot
 * see.  How often, and how far, is counted for the report.
 */
#include <stddef.h>
#include "engine/model.h"
#include "engine/attrib/stacks.h"

#define HIST_BUDGET	(4u << 20)	/* bytes of retained history */

/* Bytes of the thread's history at or after @c. */
static size_t thread_bytes_from(const struct ig_thread *t, uint64_t c)
{
	const uint64_t k = c ? c - 1 : 0;
	size_t n = 0;

	n += (size_t)(t->ivals.len - ig_ring_upper(&t->ivals,
			offsetof(struct ig_ival, t_on), k)) * t->ivals.esz;
	n += (size_t)(t->spans.len - ig_ring_upper(&t->spans,
			offsetof(struct ig_span, t1), k)) * t->spans.esz;
	n += (size_t)(t->samples.len - ig_ring_upper(&t->samples,
			offsetof(struct ig_sample_ref, t), k)) * t->samples.esz;
	n += (size_t)(t->stks.len - ig_ring_upper(&t->stks,
			offsetof(struct ig_stk_ref, t), k)) * t->stks.esz;
	return n;
}

static size_t bytes_from(const struct ig_engine *e, uint64_t c)
{
	const struct ig_thread *t;
	size_t n = 0;

	for (t = e->tasks.thr_head; t; t = t->next)
		n += thread_bytes_from(t, c);
	return n;
}

/* The cutoff the budget asks for, at or after @cutoff (the window's). */
uint64_t ig_histcap_cutoff(struct ig_engine *e, uint64_t cutoff)
{
	size_t budget = e->o.hist_budget ? e->o.hist_budget : HIST_BUDGET;
	uint64_t lo = cutoff, hi = e->win.now;

	if (hi <= lo || bytes_from(e, lo) <= budget)
		return cutoff;
	/* the earliest cutoff (to a millisecond) that leaves 3/4 of it */
	while (hi - lo > 1000000) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (bytes_from(e, mid) <= budget / 4 * 3)
			hi = mid;
		else
			lo = mid;
	}
	if (hi > cutoff) {
		e->win.hist_trims++;
		if (e->win.now - hi < e->window_ns &&
		    (!e->win.hist_kept_min || e->win.now - hi < e->win.hist_kept_min))
			e->win.hist_kept_min = e->win.now - hi;
	}
	return hi;
}
