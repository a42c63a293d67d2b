/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the engine concludes, as it concludes it: an observer set before
 * the first record sees each stretch of a device's timeline when it is
 * final (busy, an idle gap with its causes and the thread intervals its
 * attribution walked, unresolved time with how it ended).  The views (the
 * Perfetto timeline, `idlegap top`) are built from it; the analysis is the
 * same with or without one.  Strings are borrowed for the call.
 */
#ifndef IG_ENGINE_OBS_H
#define IG_ENGINE_OBS_H

#include <stdbool.h>
#include <stdint.h>
#include "stream/records.h"

#define IG_OBS_STEPS	8	/* walked intervals kept per gap */
#define IG_OBS_CAUSES	3	/* causes given per gap, largest first */

enum ig_obs_kind { IG_OBS_BUSY, IG_OBS_IDLE, IG_OBS_UNRES,
		   IG_OBS_COLLECTIVE };	/* one rank's time in a collective */
/* How unresolved time ended (docs/design.md §4.7). */
enum ig_obs_bound { IG_OBS_OPEN, IG_OBS_HOST_BOUND, IG_OBS_GPU_BOUND };

/* One off-CPU interval of a thread (IG_REC_OFFCPU). */
struct ig_ival {
	uint64_t t_on;		/* key: history is ordered by it */
	uint64_t t_off;
	uint64_t t_wake;	/* 0: runnable the whole time */
	uint64_t arg;		/* futex address, fault address, fd */
	uint32_t waker_tid, waker_tgid;
	uint32_t prev_tid, prev_tgid;
	uint32_t cpu;		/* where it ran again (prev ran there) */
	uint32_t dev;		/* block device of the storage wait, 0: none */
	uint16_t reason;	/* enum ig_reason */
	uint16_t flags;		/* IG_F_* */
	int32_t syscall;
	uint32_t pre_ns;	/* on CPU before t_off, already in this wait */
	union {
		char name[IG_NAME_LEN];
		struct ig_net_peer peer;
	} detail;
};
/* A stretch of a thread's timeline the attribution of a gap walked:
 * blocked or runnable in the off-CPU interval iv, [iv.t_off, iv.t_on). */
struct ig_obs_step {
	uint32_t tid, tgid;
	uint64_t x, y;		/* the part walked, inside the gap */
	struct ig_ival iv;	/* the interval it lies in */
	char detail[64];	/* file, or peer as text; "" if none */
};

struct ig_obs_cause {
	const char *name;	/* JSON identifier: "storage", "lock", ... */
	uint64_t ns;
};

struct ig_obs_span {
	enum ig_obs_kind kind;
	int device;
	uint64_t t0, t1;
	uint32_t tid, tgid;	/* the feeding thread, 0 if none known */
	enum ig_obs_bound bound;	/* IG_OBS_UNRES */
	/* IG_OBS_IDLE: */
	struct ig_obs_cause causes[IG_OBS_CAUSES];
	unsigned int ncauses;
	/* every cause with time in the gap, largest first (causes[] is
	 * the first IG_OBS_CAUSES of them) */
	const struct ig_obs_cause *all;
	unsigned int nall;
	const struct ig_obs_step *steps;	/* in the order walked */
	unsigned int nsteps;
	uint64_t steps_dropped;	/* walked beyond IG_OBS_STEPS */
	/* IG_OBS_COLLECTIVE (docs/design.md §4.9), given when it settles,
	 * after the device's own spans: [t0, t1) from the rank's launch to
	 * its end, waiting for peers until wait_until; the causes are why
	 * the late rank was late; tid/tgid the rank's launching thread,
	 * late_tid the late rank's, whose walk gave the causes */
	uint64_t wait_until;
	int32_t rank, late_rank;	/* -1: unknown */
	uint32_t late_pid, late_tid;
	const char *op;		/* "all_reduce" */
};

/* The deepest stretch walked that shows @cause ("storage": a disk wait,
 * "lock": a futex, ...), for its detail; NULL when none does (host
 * compute, driver calls, unknown). */
const struct ig_obs_step *ig_observe_cause_step(const struct ig_obs_span *s,
						const char *cause);

/* A block of the estimate closed (docs/design.md §4.10): what the model
 * made of the device's unresolved time in [t0, t1). */
struct ig_obs_estimate {
	int device;
	uint64_t t0, t1;
	uint64_t unres_ns;
	bool have;		/* an estimate stands: */
	uint64_t idle_ns, low_ns, high_ns;
	bool bounded;		/* idle is at least at_least_ns */
	uint64_t at_least_ns;
	const char *refused;	/* why not, when !have */
	const char *method;	/* "fit", "bound", "device" (§4.10), when have */
};

struct ig_engine_obs {
	void (*span)(void *ctx, const struct ig_obs_span *s);
	/* NULL: not wanted; given only where blocks close as the engine
	 * goes (ig_engine_opts.est_block_s) */
	void (*estimate)(void *ctx, const struct ig_obs_estimate *x);
	void *ctx;
};

struct ig_engine;
/* Before the first record; NULL @o removes it. */
void ig_engine_observe(struct ig_engine *e, const struct ig_engine_obs *o);

#endif
