/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Steps (docs/design.md §4.11): a training loop's iterations, found from
 * outside the job.  The intake hands each device's candidate boundaries
 * (a sync's return, a collective's entry) and its launches' signatures;
 * the observer hands each final stretch of the device's timeline.  Each
 * stretch is charged to the segments between candidates as it comes;
 * at the report the segments' signatures give the loop's period, and
 * runs of segments become steps.
 *
 *   steps.c       the segments: candidates, launches, time charged
 *   steps_find.c  the period, the boundaries, the steps and their figures
 */
#ifndef IG_ENGINE_STEPS_H
#define IG_ENGINE_STEPS_H

#include <stdbool.h>
#include <stdint.h>
#include "engine/names.h"

struct ig_engine;
struct ig_launches;

/* What ends a segment. */
enum ig_step_kind { IG_SK_NONE, IG_SK_SYNC, IG_SK_COLL };

/* Time states charged to a segment or a step. */
enum ig_step_state { IG_SS_BUSY, IG_SS_IDLE, IG_SS_PEER, IG_SS_UNRES,
		     IG_SS__MAX };

/* Segments kept per device at most (about 200 bytes each), while the
 * older ones cannot be folded into steps yet (steps_int.h): past it a
 * candidate is dropped, and counted. */
#define IG_STEPS_MAX_SEGS	(1u << 14)

/* ---- steps.c: the intake's and the observer's side ---- */
/* The engine's steps; @marker_api >= 0: only that driver call's returns
 * (the user's --step cuda:NAME) are boundaries.  -ENOMEM. */
int ig_steps_new(struct ig_engine *e, int marker_api);
void ig_steps_free(struct ig_engine *e);
size_t ig_steps_bytes(const struct ig_engine *e);
/* A sync by @tgid on device @dev returned at @t (call @api). */
void ig_steps_sync(struct ig_engine *e, int dev, uint32_t tgid, uint64_t t,
		   unsigned int api);
/* A collective (nccl api @api, @count elements) entered at @t. */
void ig_steps_coll(struct ig_engine *e, int dev, uint32_t tgid, uint64_t t,
		   unsigned int api, uint64_t count);
/* A record of launches of @tgid on device @dev. */
void ig_steps_launches(struct ig_engine *e, int dev, uint32_t tgid,
		       const struct ig_launches *l);
/* Final time of device @dev: busy, unresolved (@state), or an idle gap
 * with its time per cause (@cause_ns, IG_C__MAX entries). */
void ig_steps_span(struct ig_engine *e, int dev, enum ig_step_state state,
		   uint64_t t0, uint64_t t1);
void ig_steps_idle(struct ig_engine *e, int dev, uint64_t t0, uint64_t t1,
		   const uint64_t *cause_ns);
/* A rank's wait in a collective [t0, t1) for @late_rank, late for
 * @late_cause (-1: unknown). */
void ig_steps_peer(struct ig_engine *e, int dev, uint64_t t0, uint64_t t1,
		   int late_rank, int late_cause);

/* ---- steps_find.c: the steps of a device, at the report ---- */
struct ig_step {
	uint32_t index;
	bool partial;		/* cut by the trace's start or end */
	uint64_t t0, t1;
	uint64_t ns[IG_SS__MAX];	/* busy here excludes peer wait */
	uint64_t cause_ns[IG_C__MAX];
	int cause;		/* dominant: enum ig_cause, IG_STEP_PEER, or
				 * -1 when the step had no idle or peer time */
	int late_rank;		/* the rank its collective waited for, -1 */
	int late_cause;		/* why that rank was late, -1: unknown */
	bool slow;
};
#define IG_STEP_PEER	IG_C__MAX	/* a step's cause: waiting for a peer */

struct ig_step_whatif {
	int cause;		/* enum ig_cause or IG_STEP_PEER */
	uint32_t steps;		/* complete steps it touched */
	double mean_without_s, mean_s;
};

struct ig_steps_out {
	int device;
	uint32_t pid;		/* the process whose calls cut them */
	bool found;
	char source[96];	/* "sync:cuStreamSynchronize", ... */
	char why_none[96];	/* when !found */
	uint32_t period;	/* segments a step */
	struct ig_step *v;	/* every step, partial ones included */
	uint32_t n, complete;
	uint64_t dropped_segs;	/* past IG_STEPS_MAX_SEGS, or without a
				 * period when folded: in no step */
	uint64_t list_omitted;	/* folded steps not kept in v */
	double p50_s, p90_s, p99_s, mean_s;
	double slow_factor;	/* slow: wall over slow_factor x p50 */
	uint32_t nslow;
	struct ig_step_whatif whatif[IG_C__MAX + 1];
	uint32_t nwhatif;
};

/* The steps of device @dev, of the process on it with the most whole
 * steps (nothing found: o->found false, why_none says why).  Free with
 * ig_steps_out_free(). */
void ig_steps_find(const struct ig_engine *e, int dev, struct ig_steps_out *o);
/* Process @pid's, on the device it has the most whole steps on. */
void ig_steps_find_pid(const struct ig_engine *e, uint32_t pid,
		       struct ig_steps_out *o);
/* The whole job: the process and device with the most whole steps. */
void ig_steps_find_job(const struct ig_engine *e, struct ig_steps_out *o);
void ig_steps_out_free(struct ig_steps_out *o);
/* "storage", ..., "peer_wait"; NULL for -1. */
const char *ig_steps_cause_name(int cause);

#endif
