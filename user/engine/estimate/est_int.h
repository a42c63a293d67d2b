/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What estimate.c (the check, the replay, the results) and est_intake.c
 * (the evidence) share; no other file includes it.
 */
#ifndef IG_ENGINE_EST_INT_H
#define IG_ENGINE_EST_INT_H

#include "engine/estimate/estimate.h"
#include "engine/estimate/est_fit.h"
#include "engine/estimate/est_bound.h"

/* Bounds of the evidence kept per engine (a report): past them it is
 * freed and the estimate refused, so a long report costs 8 MiB of
 * launches at most, not a growing history (design §3.5, §4.10). */
#define EST_MAX_LAUNCHES	(512u << 10)
/* A device's evidence is estimated a block at a time (est_block.c): a
 * block closes once it holds this many launches (ig_engine_opts.est_block
 * overrides it), at the last mark the sweep and the walk have passed. */
#define EST_BLOCK_LAUNCHES	(128u << 10)
/* held-out errors kept per device for the quantiles over its blocks */
#define EST_MAX_ERRS		(16u << 10)
/* closed blocks' estimated stretches kept for the Perfetto track (1 MiB) */
#define EST_MAX_STRETCHES	(64u << 10)
#define EST_MAX_SEGS		(256u << 10)	/* feeder stretches kept */
/* proven idle pieces kept per device's open block: past them the busy
 * time behind syncs that did not wait is taken as larger, never smaller */
#define EST_MAX_IDLE		(1u << 20)
#define EST_FOLDS		5
#define EST_VARIANTS		4	/* signatures pulled to 0, one by one */
#define EST_LATE_FIT		1.25	/* a late variant's error, at most, to the fit's */
#define EST_MAX_INFEASIBLE	0.25	/* marks a fit may contradict, at most */

struct est_dev {
	int ordinal;
	struct ig_vec l;	/* struct est_launch */
	struct ig_vec m;	/* struct est_mark */
	struct ig_vec u;	/* struct ig_piece: unresolved spans */
	struct ig_vec z;	/* struct est_ival: proven idle, EST_MAX_IDLE */
	uint64_t unres_ns;	/* their time, kept past an overflow */
	uint32_t tgid;		/* the one queue seen, or multi */
	uint64_t stream;
	bool multi;
	struct est_result r;
	struct est_ival *k;	/* the replayed queue, once computed */
	uint32_t nk;
	double *err;		/* held-out errors, us */
	uint32_t nerr;
	char why[160];		/* a refusal that names figures */
	/* blocks closed so far (est_block.c): their results summed, where
	 * the open block starts, the last unresolved piece's end, and the
	 * closed blocks' estimated stretches (struct est_stretch) */
	uint32_t nblocks;
	struct est_result acc;
	char acc_why[160];
	uint64_t blk_t0, blk_end;	/* blk_end: 0 but while a block closes */
	uint32_t next_try;	/* launches the next try waits for */
	uint64_t next_try_t;	/* and by time, the end it waits for */
	struct ig_vec st;
	uint64_t st_left_off;	/* stretches past EST_MAX_STRETCHES */
	/* every block's held-out errors (us, doubles), a uniform sample of
	 * EST_MAX_ERRS past that: the device's p50 and p90 */
	struct ig_vec errs;
	uint64_t errs_seen;
};

struct est_stretch {	/* 16 bytes: a longer one is kept in pieces */
	uint64_t t0;
	uint32_t len, idle;
};

/* A window of the device's counter, and this device's time inside it. */
struct est_win {
	uint64_t t0, t1;
	uint32_t busy_ppm, quant_ppm;
	uint32_t kind, nproc;
	uint64_t unres_ns, idle_ns;	/* unresolved, proven idle inside */
	uint32_t waits;		/* waiting syncs whose drained point is inside */
	uint32_t pad;
};

/* Time not yet inside a window: unresolved, proven idle, or a drained
 * point (t0 == t1). */
enum { EST_P_UNRES, EST_P_IDLE, EST_P_WAIT };
struct est_pend {
	uint64_t t0, t1;
	uint32_t what, pad;
};

#define EST_MAX_WINS		(1u << 20)	/* windows kept per device */
#define EST_MAX_PEND		(1u << 18)	/* pieces waiting for one */
/* A piece that waited this long (record time) behind the newest for a
 * window is left uncovered: the counters' windows come each second or
 * so (host/nvml.c), and a device without them sends none. */
#define EST_PEND_AGE_NS		(EST_PEND_AGE_S * 1000000000ULL)

/* The counters of one device (by the engine's device key). */
struct est_nv {
	int device;
	struct ig_vec win;	/* struct est_win, by time */
	struct ig_vec pend;	/* struct est_pend, by time */
	uint64_t newest;	/* the newest piece's end */
	uint64_t pend_dropped, pend_dropped_ns;	/* left uncovered */
	uint64_t win_folded;	/* windows closed blocks no longer need */
};

struct ig_est {
	struct est_dev *dev[IG_MAX_DEVICES];
	uint32_t ndev;
	struct est_nv *nv[IG_MAX_DEVICES];
	uint32_t nnv;
	struct est_sigkey sig[EST_MAX_SIGS];
	uint32_t nsig;
	uint64_t nlaunch;
	bool overflow;
	bool done;
	struct est_result total;
	struct ig_vec segs;		/* struct est_seg, by time */
};

/* A stretch of a feeder's unresolved time and the cause the walk gave
 * most of it. */
struct est_seg {
	uint64_t x, y;
	uint32_t cause, pad;
};

/* The engine's estimator, made at its first use; NULL on ENOMEM. */
struct ig_est *ig_est_get(struct ig_engine *e);

/* estimate.c: fit, check and replay the device's open block, its evidence
 * in time order, into d->r; its replayed stretches to @cb (none without
 * an estimate). */
void ig_est_dev_compute(struct ig_engine *e, struct est_dev *d);
void ig_est_dev_walk(const struct est_dev *d, est_span_fn cb, void *ctx);
/* The causes of the unresolved time of the device's open block, summed
 * into @causes (feeder stretches; unknown where none). */
void ig_est_unres_causes(const struct ig_est *s, const struct est_dev *d,
			 uint64_t *causes);
/* est_device.c: proven idle [t0, t1) on the device, a piece the
 * counters' windows take (ig_est_on_idle() also keeps it for the busy
 * time the high end may take as idle). */
void ig_est_nv_idle(struct ig_engine *e, int ordinal, uint64_t t0, uint64_t t1);
/* est_device.c: fuse the device's counters over [@a, @b) (0 and
 * UINT64_MAX: the span's ends) into d->r, the open block's. */
void ig_est_device_fuse(struct ig_engine *e, struct est_dev *d, uint64_t a,
			uint64_t b);
void ig_est_nv_free(struct ig_est *s);
/* A block of the device's closed at @t: its windows ending by then are
 * needed no more. */
void ig_est_nv_fold(struct ig_est *s, int device, uint64_t t);
/* Unresolved time, and a waiting sync's drained point, for the windows. */
void ig_est_nv_piece(struct ig_engine *e, const struct ig_piece *pc);
void ig_est_nv_wait(struct ig_engine *e, int device, uint64_t t);
/* The q-quantile of @v (sorted in place), 0 when empty. */
double ig_est_quantile(double *v, uint32_t n, double q);

/* est_block.c: add @r (a block's, a device's) into @t, which starts as
 * { .have = true }; then close it (nothing estimated where refused). */
void ig_est_result_add(struct est_result *t, const struct est_result *r);
void ig_est_result_close(struct est_result *t);
/* Before the unresolved piece starting at @t_next is kept: close the
 * device's block when it is full and a mark allows. */
void ig_est_block_try(struct ig_engine *e, struct est_dev *d, uint64_t t_next);
/* After the last block: the device's result is the closed blocks' and
 * the last one's. */
void ig_est_block_finish(struct est_dev *d);

#endif
