/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The head of a trace that joined a job mid-stream (head.c,
 * docs/design.md §4.12): from the start of tracing to each device's first
 * GPU work seen, idle where the GPU's own counter read 0% up to that
 * work, labelled with what the threads were doing.
 */
#ifndef IG_ENGINE_HEAD_H
#define IG_ENGINE_HEAD_H

#include "engine/model.h"

struct ig_nvwin;

/* One device's head: [from, to), to its first work seen. */
struct ig_head_dev {
	int device;
	uint64_t from, to;
	uint64_t idle_ns;	/* proven idle, a gap, in idle_s */
	uint64_t unres_ns;	/* after it, up to the first work: unresolved */
	uint64_t outside_ns;	/* before it: outside the span, not known */
	uint32_t tid, tgid;	/* the feeder: the first submission's thread */
	bool counter_live;	/* its counter read > 0% somewhere */
	uint16_t counter;	/* IG_NVW_* of the windows that proved it */
	uint32_t nwin;
	struct ig_causeset *label;	/* the walk over [from, to) */
};

/* One device's tail: tracing stopped with its work pending; [from, to)
 * from its last evidence to the end of the counter's proof. */
struct ig_tail_dev {
	int device;
	uint64_t from, to;
	uint64_t idle_ns;	/* proven idle, a gap ending at to, in idle_s */
	uint64_t unres_ns;	/* before it, from the last evidence: unresolved */
	uint32_t tid, tgid;	/* the feeder: the newest pending work's thread */
	uint16_t counter;	/* IG_NVW_* of the windows that proved it */
	uint32_t nwin;
};

void ig_head_on_nvwin(struct ig_engine *e, const struct ig_nvwin *r);
void ig_head_on_cuda(struct ig_engine *e, const struct ig_cuda *c);
/* Where the history of the threads followed from the start must be
 * kept from for a head still to settle: the start, while it lies inside
 * the history window; else UINT64_MAX. */
uint64_t ig_head_keep_from(const struct ig_engine *e);
/* Where thread @t's history may be cut: the engine's cutoff, or the
 * start for a live thread followed from then while a head is to settle
 * (ig_head_keep_from(), as the last ig_head_poll() found it), but not
 * before the history budget's cutoff. */
uint64_t ig_head_cutoff(const struct ig_engine *e, const struct ig_thread *t);
/* The oldest history a head keeps (as ig_head_cutoff() gives it), for the
 * budget to count; UINT64_MAX when none. */
uint64_t ig_head_keep_floor(const struct ig_engine *e);
/* Settles each device's head that its counter now covers, or whose first
 * work is HEAD_WAIT_NS old (a counter that does not come). */
void ig_head_poll(struct ig_engine *e);
/* At the end of the trace, once every device is swept. */
void ig_head_finish(struct ig_engine *e);
/* At the end of a trace stopped at @end by its duration or a signal,
 * once every device is swept: each device whose work was still pending
 * gets the idle its counter proves after its last evidence (its tail). */
void ig_head_tail(struct ig_engine *e, uint64_t end);
/* The @i-th device's tail, or NULL past the last. */
const struct ig_tail_dev *ig_head_tail_dev(const struct ig_engine *e, uint32_t i);
/* The @i-th device's head, or NULL past the last. */
const struct ig_head_dev *ig_head_dev(const struct ig_engine *e, uint32_t i);
const struct ig_head_dev *ig_head_of(const struct ig_engine *e, int device);
void ig_head_free(struct ig_engine *e);

#endif
