/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Estimated idle inside unresolved time (docs/design.md §4.10): a duration
 * per launch signature, fitted to what syncs and queries proved about the
 * end of each queue, checked on syncs held out of the fit, and replayed
 * over the unresolved spans.  Never mixed into proven idle time.
 */
#ifndef IG_ENGINE_ESTIMATE_H
#define IG_ENGINE_ESTIMATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "engine/model.h"

#define EST_MIN_CHECKED		20	/* held-out syncs needed */
#define EST_MAX_P50_REL		0.5	/* refuse past this held-out error */
#define EST_MAX_LATE_REL	1.5	/* ... or where a tenth miss by this many queues */

/* The device's own counters where they fused (est_device.c, docs/design.md
 * §4.10 "Device counters"). */
struct est_devfig {
	bool have;
	uint32_t kind;		/* IG_NVML_SAMPLES, IG_NVML_GPM */
	uint32_t windows;	/* counter windows inside the span */
	uint32_t nproc;		/* most processes seen on the GPU */
	double period_s;	/* their mean length */
	double quant_pct;	/* the counter's step */
	uint64_t covered_ns;	/* unresolved time the windows cover */
	const char *with;	/* the launch model compared: "fit", "bound" */
	const char *model;	/* the launch model: "consistent", "inconsistent", "refused" */
};

/* What the model made of one device (or of all: ig_est_total()). */
struct est_result {
	bool have;		/* an estimate stands */
	const char *refused;	/* why not, when !have */
	const char *method;	/* "fit", "bound" (several: "mixed"), when have */
	uint64_t unres_ns;	/* the unresolved time it covers */
	uint64_t idle_ns, low_ns, high_ns;
	uint64_t checked;	/* marks held out and predicted: waiting
				 * syncs ("fit"), at-once ones ("bound") */
	double p50_us, p90_us;	/* their error, absolute (bound: overshoot) */
	uint64_t causes[IG_C__MAX];	/* estimated idle by host cause */
	/* unresolved time between launches, by whether the next launch
	 * found the replayed queue empty (host-bound) or had to queue */
	uint64_t host_bound_ns, gpu_bound_ns;
	/* the bounds of est_bound.c stood (enough marks, the held-out
	 * check passed): under the model, idle in unresolved time is at
	 * least @at_least_ns, whether or not the point estimate is given
	 * (@wide: refused for the width of its interval alone); never part
	 * of idle_ns.  @bound_marks: the held-out marks they rest on. */
	bool bounded, wide;
	uint64_t at_least_ns, bound_marks;
	uint32_t blocks;	/* parts estimated on their own (est_block.c) */
	struct est_devfig dv;	/* method "device": the counters' figure */
};

struct ig_engine;

/* Evidence, as the engine reads it. */
void ig_est_on_launches(struct ig_engine *e, const struct ig_hdr *rec);
/* A sync or query on @p's device that covered everything submitted
 * before @t_in: @waited (the queue ended at @t_end), else the queue was
 * empty by @t_end; @t_wake (0: none) the wakeup of a sync that slept,
 * which its drained point may follow. */
void ig_est_on_sync(struct ig_engine *e, struct ig_process *p, uint64_t t_in,
		    uint64_t t_end, uint64_t t_wake, bool waited);
void ig_est_on_unres(struct ig_engine *e, const struct ig_piece *pc);
/* Proven idle [t0, t1) on device @ordinal (the device counters' windows
 * leave it out of their busy time). */
void ig_est_on_idle(struct ig_engine *e, int ordinal, uint64_t t0, uint64_t t1);
/* A window of the device's own busy measure (IG_REC_NVWIN). */
struct ig_nvwin;
void ig_est_on_nvwin(struct ig_engine *e, const struct ig_nvwin *w);

/* Unresolved time's walk (e->attr.seg_tap): one feeder stretch [x, y)
 * whose time went to causes as @ns says (cleared after), kept with its
 * main cause while the estimate is open and has room. */
void ig_est_seg_note(struct ig_engine *e, uint64_t *ns, uint64_t x, uint64_t y);

/* Fit, check and replay, once, after ig_engine_finish(). */
void ig_est_compute(struct ig_engine *e);
/* The device's result (NULL: it had no GPU time), and the sum. */
const struct est_result *ig_est_device(const struct ig_engine *e, int ordinal);
const struct est_result *ig_est_total(const struct ig_engine *e);
void ig_est_free(struct ig_engine *e);
/* What the estimate holds, in bytes; @evidence (NULL: not wanted): of
 * which the evidence of its open blocks. */
size_t ig_est_bytes(const struct ig_engine *e, size_t *evidence);
/* What the estimate summarized or dropped to keep its memory bounded
 * (docs/design.md §3.5): its closed blocks (their evidence folded into
 * sums), the device counters' windows those blocks no longer need,
 * pieces of time that waited for a window longer than EST_PEND_AGE_NS
 * (left uncovered by the counters), the stretches left off the Perfetto
 * track, and held-out errors past the sample kept for the quantiles. */
#define EST_PEND_AGE_S	30ULL
struct ig_est_bounds {
	uint64_t blocks;
	uint64_t windows_folded;
	uint64_t pieces_dropped, pieces_dropped_ns;
	uint64_t stretches_left_off;
	uint64_t errs_seen, errs_kept;
};
void ig_est_bounds(const struct ig_engine *e, struct ig_est_bounds *b);
/* The estimate's stretches of unresolved time, estimated @idle or busy,
 * per device in time order (after ig_est_compute()). */
typedef void (*est_span_fn)(void *ctx, int device, uint64_t t0, uint64_t t1,
			    bool idle);
void ig_est_foreach(const struct ig_engine *e, est_span_fn cb, void *ctx);

/* ---- report_est.c ---- */
struct json_object;
/* The estimate's fields (docs/design.md §7.4) into a JSON object. */
void ig_est_json(const struct est_result *r, struct json_object *o);
/* The text report's line, or nothing without unresolved time. */
void ig_est_text(const struct est_result *r, uint64_t idle_ns, uint64_t span_ns,
		 FILE *out);

#endif
