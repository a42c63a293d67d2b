// SPDX-License-Identifier: GPL-2.0
/*
 * Estimated idle inside unresolved time (docs/design.md §4.10).
 *
 * Evidence per device: every launch (time, signature) from IG_REC_LAUNCHES,
 * and marks from syncs and queries that covered everything submitted
 * before their entry: a sync that waited says the queue ended at its
 * drained point; one that returned at once, or a query that found the
 * work done, says it had ended by then (est_intake.c keeps them).
 * est_fit.c fits a duration per signature and a launch latency; this file
 * checks the fit on held-out syncs, and replays the device over the
 * unresolved spans:  start = max(launch + latency, previous end), end =
 * start + duration.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/estimate/est_int.h"

/* Estimated idle [x, y) by the cause of the feeder's stretches there;
 * time no stretch covers is unknown. */
static void seg_causes(const struct ig_est *s, uint64_t *causes, uint64_t x,
		       uint64_t y)
{
	const struct est_seg *g = s->segs.v;
	uint32_t lo = 0, hi = s->segs.n;
	uint64_t got = 0;

	while (lo < hi) {	/* the first stretch ending after x */
		uint32_t mid = (lo + hi) / 2;

		if (g[mid].y <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < s->segs.n && g[lo].x < y; lo++) {
		uint64_t a = ig_max64(g[lo].x, x), b = ig_min64(g[lo].y, y);

		if (b > a) {
			causes[g[lo].cause] += b - a;
			got += b - a;
		}
	}
	if (y - x > got)
		causes[IG_C_UNKNOWN] += y - x - got;
}

/* The estimate's state, made at its first use by intake, blocks or counters. */
struct ig_est *ig_est_get(struct ig_engine *e)
{
	if (!e->est && (e->est = calloc(1, sizeof(*e->est))))
		e->est->segs.esz = sizeof(struct est_seg);
	return e->est;
}

void ig_est_unres_causes(const struct ig_est *s, const struct est_dev *d,
			 uint64_t *causes)
{
	const struct ig_piece *u = d->u.v;
	uint32_t i;

	for (i = 0; i < d->u.n; i++)
		seg_causes(s, causes, u[i].t0, u[i].t1);
}

/* Held-out check: fit without each fold, predict its waiting syncs. */
static void check(struct est_dev *d, uint32_t nsig, int base, double *rel,
		  uint32_t *nrel)
{
	struct est_model m;
	uint32_t f;

	d->err = calloc(d->m.n + 1, sizeof(*d->err));
	if (!d->err)
		return;
	for (f = 0; f < EST_FOLDS; f++) {
		if (ig_est_fit(d->l.v, d->l.n, d->m.v, d->m.n, nsig, (int)f, base, &m))
			continue;
		ig_est_predict(&m, d->l.v, d->l.n, d->m.v, d->m.n, (int)f,
			       d->err, &d->nerr, rel, nrel);
	}
}

/* The replayed queue's busy intervals @k clipped to the unresolved spans,
 * and what is left of them, estimated idle, in time order to @cb (NULL:
 * none); the estimated idle time. */
static uint64_t spans_walk(const struct est_dev *d, const struct est_ival *k,
			   uint32_t nk, est_span_fn cb, void *ctx)
{
	const struct ig_piece *u = d->u.v;
	uint64_t idle = 0;
	uint32_t i, j, k0 = 0;

	for (i = 0; i < d->u.n; i++) {
		uint64_t cur = u[i].t0;

		while (k0 < nk && k[k0].t1 <= u[i].t0)
			k0++;
		for (j = k0; j <= nk && cur < u[i].t1; j++) {
			uint64_t x = u[i].t1, y;

			if (j < nk && k[j].t0 < u[i].t1)
				x = ig_max64(k[j].t0, u[i].t0);
			if (x > cur) {
				idle += x - cur;
				if (cb)
					cb(ctx, d->ordinal, cur, x, true);
				cur = x;
			}
			if (j == nk || k[j].t0 >= u[i].t1)
				break;
			y = ig_min64(k[j].t1, u[i].t1);
			if (y > cur && cb)
				cb(ctx, d->ordinal, cur, y, false);
			cur = ig_max64(cur, y);
		}
	}
	return idle;
}

/* Length of [a, b) inside the intervals of @v, from element @*pi on: the
 * unresolved spans (struct ig_piece) or the proven idle pieces (struct
 * est_ival), each in time order and beginning with its t0 and t1. */
_Static_assert(offsetof(struct ig_piece, t0) == 0 &&
	       offsetof(struct ig_piece, t1) == sizeof(uint64_t) &&
	       offsetof(struct est_ival, t0) == 0 &&
	       offsetof(struct est_ival, t1) == sizeof(uint64_t),
	       "intervals begin with t0, t1");
static uint64_t len_in(const struct ig_vec *v, uint32_t *pi, uint64_t a,
		       uint64_t b)
{
#define IV(i) ((const uint64_t *)((const char *)v->v + (size_t)(i) * v->esz))
	uint64_t n = 0;
	uint32_t i;

	while (*pi < v->n && IV(*pi)[1] <= a)
		(*pi)++;
	for (i = *pi; i < v->n && IV(i)[0] < b; i++)
		if (ig_min64(IV(i)[1], b) > ig_max64(IV(i)[0], a))
			n += ig_min64(IV(i)[1], b) - ig_max64(IV(i)[0], a);
	return n;
#undef IV
}

/* The busy time (§4.5) between the last launch before each mark that
 * found the queue ended by its return (a sync that did not wait for the
 * GPU) and that return: a sync that slept a moment proves the queue
 * non-empty from its last submission's entry to its wakeup, or to its
 * return where it then waited for a CPU; yet a launch call preempted
 * before its op was queued, or a wakeup followed by milliseconds
 * runnable, leaves the GPU idle there.  No record shows which, so all of
 * it may be idle (the high end).  A waiting sync's busy time has its own
 * allowance (ig_est_hidden()). */
static uint64_t busy_unpinned(const struct est_dev *d)
{
	const struct est_launch *l = d->l.v;
	const struct est_mark *m = d->m.v;
	uint32_t j, li = 0, pi = 0, zi = 0, first;
	uint64_t h = 0, a, b, n;

	for (j = 0; j < d->m.n; j++) {
		first = li;
		while (li < d->l.n && l[li].t < m[j].t_in)
			li++;
		if (m[j].waited || li == first || m[j].t_end <= l[li - 1].t)
			continue;
		a = l[li - 1].t;
		b = m[j].t_end;
		n = len_in(&d->u, &pi, a, b) + len_in(&d->z, &zi, a, b);
		h += b - a > n ? b - a - n : 0;
	}
	return h;
}

/* The bottleneck between each launch and the next, inside unresolved
 * time: host-bound when the replayed queue had run dry by the next
 * launch, GPU-bound when that launch had to queue (docs/design.md §4.10). */
static void bound_split(struct est_dev *d)
{
	const struct est_launch *l = d->l.v;
	const struct est_ival *k = d->k;
	uint32_t i, kj = 0, pi = 0;

	for (i = 0; i + 1 < d->l.n; i++) {
		uint64_t a = l[i].t, b = l[i + 1].t, n;
		bool queued;

		if (b <= a)
			continue;
		n = len_in(&d->u, &pi, a, b);
		if (!n)
			continue;
		while (kj < d->nk && k[kj].t1 < b)
			kj++;
		queued = kj < d->nk && k[kj].t0 < b;
		if (queued)
			d->r.gpu_bound_ns += n;
		else
			d->r.host_bound_ns += n;
	}
}

struct cause_ctx {
	const struct ig_est *s;
	uint64_t *causes;
};

static void add_causes(void *ctx, int dev, uint64_t t0, uint64_t t1, bool idle)
{
	struct cause_ctx *c = ctx;

	(void)dev;
	if (idle)
		seg_causes(c->s, c->causes, t0, t1);
}

void ig_est_dev_walk(const struct est_dev *d, est_span_fn cb, void *ctx)
{
	if (d->r.have && d->k)
		spans_walk(d, d->k, d->nk, cb, ctx);
}

/* The signatures launched most on the device, most first, into @out
 * (EST_VARIANTS at most); none when there is only one. */
static uint32_t top_sigs(const struct est_dev *d, uint32_t nsig, uint32_t *out)
{
	uint64_t cnt[EST_MAX_SIGS] = { 0 };
	const struct est_launch *l = d->l.v;
	uint32_t i, n = 0, v;

	for (i = 0; i < d->l.n; i++)
		cnt[l[i].sig]++;
	for (v = 0; v < EST_VARIANTS; v++) {
		uint32_t best = EST_MAX_SIGS;

		for (i = 0; i < nsig && i < EST_MAX_SIGS; i++)
			if (cnt[i] && (best == EST_MAX_SIGS || cnt[i] > cnt[best]))
				best = i;
		if (best == EST_MAX_SIGS)
			break;
		out[n++] = best;
		cnt[best] = 0;
	}
	return n > 1 ? n : 0;
}

/* Launches of each signature inside the unresolved spans. */
static void span_launches(const struct est_dev *d, double *w)
{
	const struct est_launch *l = d->l.v;
	const struct ig_piece *u = d->u.v;
	uint32_t i, pi = 0;

	for (i = 0; i < d->l.n; i++) {
		while (pi < d->u.n && u[pi].t1 <= l[i].t)
			pi++;
		if (pi < d->u.n && u[pi].t0 <= l[i].t)
			w[l[i].sig]++;
	}
}

/* No sync waited for the GPU often enough to fit the durations: bound
 * them by the marks that found the queue ended (est_bound.c), check the
 * bound on marks held out, and replay the point halfway between no busy
 * time and the most (docs/design.md §4.10). */
/* The device's span, from where its open block starts: the width of a
 * bound is judged against it. */
static uint64_t dev_span(const struct ig_engine *e, const struct est_dev *d)
{
	uint32_t i;

	for (i = 0; i < e->gpu.ndevs; i++) {
		const struct ig_device *g = e->gpu.devs[i];
		uint64_t end, start;

		if (g->ordinal != d->ordinal || !g->active)
			continue;
		end = d->blk_end ? d->blk_end : ig_gpu_span_end(g);
		start = ig_max64(g->span_start, d->blk_t0);
		return end > start ? end - start : 0;
	}
	return 0;
}

static void dev_bound(struct ig_engine *e, struct est_dev *d)
{
	struct est_result *r = &d->r;
	double w[EST_MAX_SIGS] = { 0 }, cap = (double)d->unres_ns;
	struct est_model hi, f;
	struct cause_ctx cc;
	uint32_t i, nk = 0, miss = 0;
	uint64_t lo, span;

	span_launches(d, w);
	if (ig_est_bound_fit(d->l.v, d->l.n, d->m.v, d->m.n, e->est->nsig, w,
			     cap, -1, &hi)) {
		r->refused = "the bounds on the durations did not settle";
		return;
	}
	d->nerr = 0;
	for (i = 0; d->err && i < EST_FOLDS; i++)
		if (!ig_est_bound_fit(d->l.v, d->l.n, d->m.v, d->m.n, e->est->nsig,
				      w, cap, (int)i, &f))
			ig_est_bound_check(&f, d->l.v, d->l.n, d->m.v, d->m.n,
					   (int)i, d->err, &d->nerr);
	for (i = 0; i < d->nerr; i++)
		miss += d->err[i] > EST_BOUND_MISS_NS / 1e3;
	r->checked = d->nerr;
	r->p50_us = ig_est_quantile(d->err, d->nerr, 0.5);
	r->p90_us = ig_est_quantile(d->err, d->nerr, 0.9);
	if (r->checked < EST_BOUND_MIN_MARKS) {
		r->refused = "too few syncs waited for the GPU to check the model, "
			     "or returned at once to bound it";
		return;
	}
	if (miss > EST_BOUND_MAX_MISSED * r->checked) {
		snprintf(d->why, sizeof(d->why), "durations vary: the others' bound "
			 "overshot %u of %llu held-out syncs that returned at once",
			 miss, (unsigned long long)r->checked);
		r->refused = d->why;
		return;
	}
	if (!(d->k = calloc(d->l.n, sizeof(*d->k)))) {
		r->refused = "out of memory";
		return;
	}
	ig_est_replay(&hi, d->l.v, d->l.n, d->m.v, d->m.n, d->k, &nk);
	lo = spans_walk(d, d->k, nk, NULL, NULL);
	/* the check passed: the least idle stands as a bound on its own,
	 * even where the interval is too wide for a point */
	r->bounded = true;
	r->at_least_ns = ig_min64(lo, d->unres_ns);
	r->bound_marks = r->checked;
	span = dev_span(e, d);
	if ((double)(d->unres_ns - lo) > EST_BOUND_MAX_WIDTH * (double)span) {
		r->wide = true;
		snprintf(d->why, sizeof(d->why), "syncs that returned at once bound "
			 "idle only to %.0f-100%% of the unresolved time, "
			 "%.0f%% of the span", 100.0 * (double)lo / (double)d->unres_ns,
			 span ? 100.0 * (double)(d->unres_ns - lo) / (double)span : 100.0);
		r->refused = d->why;
		free(d->k);
		d->k = NULL;
		return;
	}
	if (ig_est_bound_point(d->l.v, d->l.n, d->m.v, d->m.n, e->est->nsig, w,
			       cap, &hi, &f)) {
		r->refused = "the bounds on the durations did not settle";
		free(d->k);
		d->k = NULL;
		return;
	}
	ig_est_replay(&f, d->l.v, d->l.n, d->m.v, d->m.n, d->k, &d->nk);
	cc.s = e->est;
	cc.causes = r->causes;
	r->idle_ns = spans_walk(d, d->k, d->nk, add_causes, &cc);
	bound_split(d);
	r->low_ns = ig_min64(lo, r->idle_ns);
	r->at_least_ns = r->low_ns;
	/* all of it, and what proven busy time may hide where a sync
	 * waited (ig_est_hidden()) and where one did not (busy_unpinned()) */
	r->high_ns = d->unres_ns + (uint64_t)ig_est_hidden(&f, d->l.v, d->l.n,
							   d->m.v, d->m.n) +
		     busy_unpinned(d);
	r->method = "bound";
	r->have = true;
}

/* Variant @v of ig_est_fit() from the start @base (0 or EST_SHORT). */
static int with_base(int v, int base)
{
	if (!base)
		return v;
	if (v == -1)
		return base;
	if (v == EST_EARLY)
		return base | EST_EXPECT;
	if (v < EST_LATE)	/* a signature pulled to 0 */
		return base | (v + 1);
	return v | base;
}

/* Where the evidence leaves the fit @m0 (from @base, its replay's idle
 * @idle, its p50 error @p50in) open: the least and the most idle of the
 * variants that stand, into @lo and @hi (docs/design.md §4.10). */
static void variants(struct ig_engine *e, struct est_dev *d, int base,
		     double p50in, uint64_t *lo, uint64_t *hi)
{
	uint32_t v, nv, nv0, sigs[2 * EST_VARIANTS + 5], nk = 0;
	struct est_ival *k = calloc(d->l.n, sizeof(*k));
	struct est_model m;

	if (!k)
		return;
	/* each of the most launched signatures as short as the evidence
	 * allows */
	nv = nv0 = top_sigs(d, e->est->nsig, sigs);
	sigs[nv++] = (uint32_t)EST_EARLY;	/* and the ends taken as late */
	sigs[nv++] = (uint32_t)EST_LATE;	/* and each head started late */
	sigs[nv++] = (uint32_t)(EST_SOON | EST_SHORT);	/* and each queue ended early */
	sigs[nv++] = (uint32_t)EST_LAT0;	/* and no head started late */
	if (!base)		/* and the chains of a queue that ran dry */
		sigs[nv++] = (uint32_t)EST_SHORT;
	for (v = 0; v < nv0; v++)		/* with each signature short */
		sigs[nv++] = (uint32_t)EST_LATE + 1 + sigs[v];
	for (v = 0; v < nv; v++) {
		int var = with_base((int)sigs[v], base);
		uint64_t idle;
		double p50;

		if (ig_est_fit(d->l.v, d->l.n, d->m.v, d->m.n, e->est->nsig, -1,
			       var, &m))
			continue;
		ig_est_replay(&m, d->l.v, d->l.n, d->m.v, d->m.n, k, &nk);
		idle = spans_walk(d, k, nk, NULL, NULL);
		/* a queue that ended a wakeup's delay early bounds idle from
		 * above: what the drained points' delay may hide in every
		 * launch the syncs do not pin */
		if (sigs[v] & EST_SOON) {
			*hi = ig_max64(*hi, idle);
			continue;
		}
		/* a late variant, or the other start, stands where it
		 * predicts the syncs about as well as the plain fit
		 * (EST_LATE_FIT); a late one bounds idle from above only:
		 * the other end, latency 0, is EST_LAT0's, which stands
		 * whatever its error: the plain fit takes the drained
		 * points' delay, the same in every chain, as a latency
		 * that starts every head late, and under load that alone
		 * put the low end above the truth */
		if ((int)sigs[v] >= EST_LATE && !(sigs[v] & EST_LAT0)) {
			p50 = ig_est_p50(&m, d->l.v, d->l.n, d->m.v, d->m.n);
			if (p50 > EST_LATE_FIT * p50in + 2)
				continue;
			if ((int)sigs[v] != EST_SHORT) {
				*hi = ig_max64(*hi, idle);
				continue;
			}
		}
		*lo = ig_min64(*lo, idle);
		*hi = ig_max64(*hi, idle);
	}
	free(k);
}

/* One held-out sync in ten missed by more than EST_MAX_LATE_REL times
 * the median queue's work (ig_est_busy_p50()): the refusal's reason into
 * d->why. */
static bool late_syncs(struct ig_engine *e, struct est_dev *d, int base,
		       double p90_us)
{
	struct est_model m;
	double busy;

	if (ig_est_fit(d->l.v, d->l.n, d->m.v, d->m.n, e->est->nsig, -1, base, &m))
		return false;
	busy = ig_est_busy_p50(&m, d->l.v, d->l.n, d->m.v, d->m.n);
	if (!(p90_us * 1e3 > EST_MAX_LATE_REL * busy))
		return false;
	snprintf(d->why, sizeof(d->why), "one held-out sync in ten ended %.0f us "
		 "or more from the model's end, %.1f times its queue's work "
		 "(the host or the device stalled)", p90_us,
		 busy > 0 ? p90_us * 1e3 / busy : 0.0);
	return true;
}

/* The start of the fit: the median time per launch, unless its fit is
 * one the marks contradict (a queue backed up through launches that
 * found it empty: ig_est_infeasible()), then each duration no longer
 * than the marks allow (EST_SHORT). */
static int fit_base(struct ig_engine *e, struct est_dev *d)
{
	struct est_model m;

	if (ig_est_fit(d->l.v, d->l.n, d->m.v, d->m.n, e->est->nsig, -1, -1, &m))
		return 0;
	return ig_est_infeasible(&m, d->l.v, d->l.n, d->m.v, d->m.n) >
	       EST_MAX_INFEASIBLE ? EST_SHORT : 0;
}

void ig_est_dev_compute(struct ig_engine *e, struct est_dev *d)
{
	struct est_result *r = &d->r;
	struct est_model m;
	double *rel, q10, q90, p50rel, busy, p50in;
	uint32_t i, nrel = 0;
	uint64_t lo, hi, margin;
	struct cause_ctx cc;
	int base;

	r->unres_ns = d->unres_ns;
	if (!r->unres_ns) {
		r->have = true;
		return;
	}
	if (e->est->overflow) {
		r->refused = "more than 512k launches before a sync let a block close: the evidence was dropped";
		return;
	}
	if (!d->l.n) {
		r->refused = "no per-launch evidence";
		return;
	}
	if (d->multi) {
		r->refused = "launches on several streams or processes: the replay models one queue";
		return;
	}
	rel = calloc(d->m.n + 1, sizeof(*rel));
	if (!rel) {
		r->refused = "out of memory";
		return;
	}
	base = fit_base(e, d);
	check(d, e->est->nsig, base, rel, &nrel);
	r->checked = d->nerr;
	r->p50_us = ig_est_quantile(d->err, d->nerr, 0.5);
	r->p90_us = ig_est_quantile(d->err, d->nerr, 0.9);
	q10 = ig_est_quantile(rel, nrel, 0.05);	/* sorts rel */
	q90 = ig_est_quantile(rel, nrel, 0.95);
	for (i = 0; i < nrel; i++)
		rel[i] = fabs(rel[i]);
	p50rel = ig_est_quantile(rel, nrel, 0.5);
	free(rel);
	if (r->checked < EST_MIN_CHECKED) {
		dev_bound(e, d);
		return;
	}
	if (p50rel > EST_MAX_P50_REL) {
		r->refused = "the model missed held-out syncs by more than half their queue";
		return;
	}
	/* drained points late by more than their queue's work: a woken
	 * thread that waited long for a CPU, a queue that started late;
	 * neither the fit nor what busy time may hide bounds it */
	if (late_syncs(e, d, base, r->p90_us)) {
		r->refused = d->why;
		return;
	}
	if (!(d->k = calloc(d->l.n, sizeof(*d->k)))) {
		r->refused = "out of memory";
		return;
	}
	if (ig_est_fit(d->l.v, d->l.n, d->m.v, d->m.n, e->est->nsig, -1, base, &m)) {
		r->refused = "the fit failed";
		return;
	}
	ig_est_replay(&m, d->l.v, d->l.n, d->m.v, d->m.n, d->k, &d->nk);
	p50in = ig_est_p50(&m, d->l.v, d->l.n, d->m.v, d->m.n);
	cc.s = e->est;
	cc.causes = r->causes;
	r->idle_ns = spans_walk(d, d->k, d->nk, add_causes, &cc);
	bound_split(d);
	lo = hi = r->idle_ns;
	variants(e, d, base, p50in, &lo, &hi);
	/* and the held-out syncs' spread of relative error, both ways */
	if (q90 < -0.9)
		q90 = -0.9;
	if (q10 < -0.9)
		q10 = -0.9;
	busy = (double)(r->unres_ns - lo);
	r->low_ns = r->unres_ns - ig_min64(r->unres_ns, (uint64_t)(busy / (1 + q10)));
	busy = (double)(r->unres_ns - hi);
	r->high_ns = r->unres_ns - ig_min64(r->unres_ns, (uint64_t)(busy / (1 + q90)));
	/* and each span's own error: its end is off by a held-out sync's
	 * typical error; later than the model says by its 90th percentile
	 * (a drained point a stalled wakeup delayed by milliseconds) */
	margin = (uint64_t)(r->p50_us * 1e3) * d->u.n;
	r->low_ns -= ig_min64(r->low_ns, margin);
	margin = (uint64_t)(r->p90_us * 1e3) * d->u.n;
	r->high_ns = ig_min64(r->unres_ns, r->high_ns + margin);
	/* and what proven busy time may hide (ig_est_hidden()): a queue
	 * that ended before its drained point, a chain that started late;
	 * and behind syncs that did not wait (busy_unpinned()) */
	r->high_ns += (uint64_t)ig_est_hidden(&m, d->l.v, d->l.n, d->m.v, d->m.n) +
		      busy_unpinned(d);
	if (r->low_ns > r->idle_ns)
		r->low_ns = r->idle_ns;
	if (r->high_ns < r->idle_ns)
		r->high_ns = r->idle_ns;
	r->method = "fit";
	r->have = true;
}
