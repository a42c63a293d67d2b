/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `--perfetto FILE`: builds the timeline (timeline.h) of a session as it
 * goes and streams it to the Perfetto writer.  Thread intervals, driver
 * calls and submissions come from the record stream as the engine gets it
 * (ig_timeline_record); device time and gaps from the engine's observer
 * (engine_obs.h), each gap with a flow through the intervals its
 * attribution walked.  Memory is bounded by the threads seen.
 */
#ifndef IG_TIMELINE_BUILD_H
#define IG_TIMELINE_BUILD_H

#include "engine/engine_obs.h"
#include "views/perfetto.h"
#include "stream/records.h"

struct ig_tlb;

/* A rank's wait for peers starts a flow to the late rank's lateness when
 * it is at least this share of the rank's time in the collective (in a
 * balanced job every rank is last now and then, by little), and at most
 * this many such flows are written; those beyond are counted
 * (ig_perfetto_stats.flows_left_out).  docs/design.md §7.8. */
#define IG_TIMELINE_PEER_SHARE	0.10
#define IG_TIMELINE_PEER_FLOWS	65536

/* Opens @path (as every output file; "-": stdout); 0 or -errno. */
int ig_timeline_open(struct ig_tlb **out, const char *path);
/* The observer to give the engine. */
void ig_timeline_observer(struct ig_tlb *b, struct ig_engine_obs *o);
/* Each record, in the order the engine is fed. */
void ig_timeline_record(struct ig_tlb *b, const struct ig_hdr *rec);
/* Writes what is pending, closes and frees; the first error, if any. */
int ig_timeline_close(struct ig_tlb *b, struct ig_perfetto_stats *st);
/* After the report: the estimate's own track per GPU. */
struct ig_engine;
void ig_timeline_estimates(struct ig_tlb *b, const struct ig_engine *e);
/* After the report: each GPU's steps on a track of their own,
 * "GPU N steps" (timeline_steps.c). */
void ig_timeline_steps(struct ig_tlb *b, const struct ig_engine *e);
/* Closes and frees a timeline never finished; its file is removed. */
void ig_timeline_abandon(struct ig_tlb *b);

#endif
