/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Recordings of several hosts in one analysis (docs/design.md §4.9, §7.4):
 * each recording's processes, CPUs and GPUs kept apart, its clock aligned
 * on the first's.
 *   merge.c     the hosts table, the report's clock_alignment, and each
 *               rank's collective ends (what the clocks are aligned on)
 */
#ifndef IG_ENGINE_MERGE_H
#define IG_ENGINE_MERGE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "engine/engine.h"

#define IG_MERGE_MAX		64	/* recordings merged */
/* The i-th recording's pid P is i << IG_MERGE_PID_SHIFT | P in a merged
 * analysis (pids are below 2^22, the kernel's PID_MAX_LIMIT); its GPU n
 * is device i * IG_MERGE_DEV_STRIDE + n. */
#define IG_MERGE_PID_SHIFT	24
#define IG_MERGE_PID_MASK	((1u << IG_MERGE_PID_SHIFT) - 1)
#define IG_MERGE_DEV_STRIDE	100

static inline uint32_t ig_merge_pid(uint32_t rec, uint32_t pid)
{
	return pid ? pid | rec << IG_MERGE_PID_SHIFT : 0;
}

/* A device's ordinal offset for a process of a merged analysis. */
static inline int ig_merge_dev_base(uint32_t pid)
{
	return (int)(pid >> IG_MERGE_PID_SHIFT) * IG_MERGE_DEV_STRIDE;
}

struct ig_merge_host {
	char host[64];
	int64_t offset_ns;	/* added to its timestamps at its start: the
				 * first's clock */
	double drift;		/* and so much more per ns of its clock after */
	uint64_t error_ns;	/* the clock error assumed (half an interval) */
	uint64_t collectives;	/* matched collective ends it rests on */
	bool given;		/* --clock-offset: not estimated */
};

struct ig_merge {
	uint32_t n;
	struct ig_merge_host h[IG_MERGE_MAX];
};

/* The engine analyses several recordings merged as @m says (copied). */
int ig_engine_set_merge(struct ig_engine *e, const struct ig_merge *m);
/* The host a (merged) pid ran on, and its pid there. */
const char *ig_merge_host_of(const struct ig_engine *e, uint32_t pid);
uint32_t ig_merge_host_pid(const struct ig_engine *e, uint32_t pid);
/* Top-level "clock_alignment" (NULL: not a merged analysis). */
struct json_object *ig_merge_json(const struct ig_engine *e);
/* The text report's lines on the hosts and their clocks. */
void ig_merge_text(FILE *out, const struct ig_engine *e);
void ig_merge_free(struct ig_engine *e);

/* ---- collective ends of one recording ---- */
/* Where each rank's stream drained after a collective it launched: the
 * collective's end on that rank, observed on the recording's own clock. */
struct ig_collend {
	uint64_t id, seq;	/* the collective (communicator, sequence) */
	uint64_t end;		/* ns */
};

struct ig_collends;
struct ig_collends *ig_merge_collends_new(void);
/* After ig_engine_feed(@e, @rec). */
void ig_merge_collends_after(struct ig_collends *c, struct ig_engine *e,
			     const struct ig_hdr *rec);
/* The ends found, sorted by (id, seq), the earliest of a recording's
 * ranks kept for each; valid until ig_merge_collends_free(). */
size_t ig_merge_collends_get(struct ig_collends *c, const struct ig_collend **out);
void ig_merge_collends_free(struct ig_collends *c);

#endif
