// SPDX-License-Identifier: GPL-2.0
/*
 * The estimate a block at a time (docs/design.md §4.10).  A long report's
 * evidence would outgrow its bound (EST_MAX_LAUNCHES), so once a device's
 * open block holds EST_BLOCK_LAUNCHES launches it is closed at a mark: a
 * sync or query whose end says the queue had run dry, so that what was
 * launched before its entry is over by then.  The block (those launches,
 * the marks up to it, the unresolved time before its end) is fitted,
 * checked and replayed on its own, its result added to the device's, and
 * its evidence freed.  A block closes only once the sweep has handed on
 * its unresolved time and the walk has given that time its causes.
 *
 * Here too the results: each device's (its closed blocks' and the last
 * one's), their sum, and the estimated stretches in time order.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine/estimate/est_int.h"

void ig_est_result_add(struct est_result *t, const struct est_result *r)
{
	uint32_t c;

	t->unres_ns += r->unres_ns;
	t->blocks += r->blocks;
	if (r->bounded) {	/* a part without a bound adds none */
		t->bounded = true;
		t->at_least_ns += r->at_least_ns;
		t->bound_marks += r->bound_marks;
	}
	if (!r->have) {
		t->have = false;
		if (!t->refused) {
			t->refused = r->refused;
			t->wide = r->wide;
		}
		return;
	}
	t->idle_ns += r->idle_ns;
	t->low_ns += r->low_ns;
	t->high_ns += r->high_ns;
	t->checked += r->checked;
	if (r->method)
		t->method = !t->method || !strcmp(t->method, r->method) ?
			    r->method : "mixed";
	if (r->dv.have && !t->dv.have) {
		t->dv = r->dv;
	} else if (r->dv.have) {	/* several devices: their windows */
		t->dv.windows += r->dv.windows;
		t->dv.covered_ns += r->dv.covered_ns;
		if (r->dv.nproc > t->dv.nproc)
			t->dv.nproc = r->dv.nproc;
	}
	t->host_bound_ns += r->host_bound_ns;
	t->gpu_bound_ns += r->gpu_bound_ns;
	if (r->p50_us > t->p50_us)
		t->p50_us = r->p50_us;
	if (r->p90_us > t->p90_us)
		t->p90_us = r->p90_us;
	for (c = 0; c < IG_C__MAX; c++)
		t->causes[c] += r->causes[c];
}

void ig_est_result_close(struct est_result *t)
{
	if (t->have)
		return;
	t->idle_ns = t->low_ns = t->high_ns = 0;
	memset(t->causes, 0, sizeof(t->causes));
}

static void keep_stretch(void *ctx, int dev, uint64_t t0, uint64_t t1, bool idle)
{
	struct est_dev *d = ctx;
	struct est_stretch *st;

	(void)dev;
	while (t1 > t0) {
		uint64_t n;

		st = d->st.n ? (struct est_stretch *)d->st.v + d->st.n - 1 : NULL;
		if (st && st->t0 + st->len == t0 && st->idle == idle &&
		    st->len < UINT32_MAX) {
			n = ig_min64(t1 - t0, UINT32_MAX - st->len);
			st->len += (uint32_t)n;
			t0 += n;
			continue;
		}
		if (d->st.n >= EST_MAX_STRETCHES || !(st = ig_vec_push(&d->st))) {
			d->st_left_off++;
			return;
		}
		n = ig_min64(t1 - t0, UINT32_MAX);
		*st = (struct est_stretch){ .t0 = t0, .len = (uint32_t)n, .idle = idle };
		t0 += n;
	}
}

/* The open block's held-out errors into the device's sample (past
 * EST_MAX_ERRS, each kept with the same chance: a reservoir). */
static void keep_errs(struct est_dev *d)
{
	uint32_t i;

	for (i = 0; d->err && i < d->nerr; i++) {
		uint64_t k = d->errs_seen++;
		double *x;

		if (d->errs.n < EST_MAX_ERRS) {
			if ((x = ig_vec_push(&d->errs)))
				*x = d->err[i];
			continue;
		}
		k = ig_hash64(k + 0x9e3779b97f4a7c15ULL) % (k + 1);
		if (k < EST_MAX_ERRS)
			((double *)d->errs.v)[k] = d->err[i];
	}
}

static void dev_reset(struct est_dev *d)
{
	free(d->k);
	free(d->err);
	d->k = NULL;
	d->err = NULL;
	d->nk = d->nerr = 0;
	memset(&d->r, 0, sizeof(d->r));
}

/* Each kind of evidence starts with its time. */
_Static_assert(offsetof(struct est_launch, t) == 0, "est_launch by t");
_Static_assert(offsetof(struct est_mark, t_in) == 0, "est_mark by t_in");
_Static_assert(offsetof(struct ig_piece, t0) == 0, "ig_piece by t0");
_Static_assert(offsetof(struct est_seg, x) == 0, "est_seg by x");

static int by_t(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* In time order; an empty vector has no array, and qsort() takes none. */
static void sort_vec(struct ig_vec *v)
{
	if (v->n)
		qsort(v->v, v->n, v->esz, by_t);
}

/* Elements of @v (sorted by the uint64_t they start with) before @t. */
static uint32_t count_before(const struct ig_vec *v, uint64_t t)
{
	uint32_t lo = 0, hi = v->n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (*(const uint64_t *)((const char *)v->v + (size_t)mid * v->esz) < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void drop_front(struct ig_vec *v, uint32_t n)
{
	if (!n)
		return;
	memmove(v->v, (char *)v->v + (size_t)n * v->esz, (size_t)(v->n - n) * v->esz);
	v->n -= n;
	ig_vec_fit(v);
}

static bool seg_before(const void *el, uint64_t t)
{
	return ((const struct est_seg *)el)->y <= t;
}

/* The feeder stretches no device's open block can still need. */
static void segs_trim(struct ig_est *s)
{
	uint64_t t = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < s->ndev; i++)
		if (s->dev[i]->blk_t0 < t)
			t = s->dev[i]->blk_t0;
	if (t && t != UINT64_MAX && s->segs.n) {
		ig_vec_drop_where(&s->segs, seg_before, t);
		ig_vec_fit(&s->segs);
	}
}

/* Where the open block starts: the last one's end, or the device's first
 * unresolved time (pieces come in time order); 0 before any. */
static uint64_t blk_start(const struct est_dev *d)
{
	return d->blk_t0 ? d->blk_t0 : d->u.n ? ((const struct ig_piece *)d->u.v)[0].t0 : 0;
}

/* Close the block at mark @nm - 1 (marks sorted by entry). */
static void block_close(struct ig_engine *e, struct est_dev *d, uint32_t nm)
{
	struct ig_est *s = e->est;
	const struct est_mark *m = d->m.v;
	uint64_t t_end = m[nm - 1].t_end, unres = 0, all_unres = d->unres_ns;
	uint64_t t0 = blk_start(d);
	struct ig_piece *u = d->u.v, rest = { 0 };
	struct est_ival *z = d->z.v, zrest = { 0 };
	uint32_t nl = count_before(&d->l, m[nm - 1].t_in), nu, nz, i;
	struct est_result r;
	bool split = false, zsplit = false;
	size_t nl_all = d->l.n, nm_all = d->m.n, nu_all, nz_all = d->z.n;

	nu = count_before(&d->u, t_end);
	if (nu && u[nu - 1].t1 > t_end) {	/* a piece across the end: cut */
		rest = u[nu - 1];
		rest.t0 = t_end;
		u[nu - 1].t1 = t_end;
		split = true;
	}
	for (i = 0; i < nu; i++)
		unres += u[i].t1 - u[i].t0;
	nz = count_before(&d->z, t_end);
	if (nz && z[nz - 1].t1 > t_end) {	/* and the proven idle's */
		zrest = z[nz - 1];
		zrest.t0 = t_end;
		z[nz - 1].t1 = t_end;
		zsplit = true;
	}
	nu_all = d->u.n;
	d->l.n = nl;
	d->m.n = nm;
	d->u.n = nu;
	d->z.n = nz;
	d->unres_ns = unres;
	d->blk_end = t_end;
	dev_reset(d);
	ig_est_dev_compute(e, d);
	ig_est_device_fuse(e, d, d->blk_t0, t_end);
	if (!e->o.no_est_track)
		ig_est_dev_walk(d, keep_stretch, d);
	keep_errs(d);
	r = d->r;
	r.blocks = 1;
	if (e->obs.estimate)
		e->obs.estimate(e->obs.ctx, &(struct ig_obs_estimate){
			.device = d->ordinal, .t1 = t_end,
			.t0 = t0 ? t0 : t_end,
			.unres_ns = r.unres_ns, .have = r.have, .idle_ns = r.idle_ns,
			.low_ns = r.low_ns, .high_ns = r.high_ns,
			.bounded = r.bounded, .at_least_ns = r.at_least_ns,
			.refused = r.refused, .method = r.method });
	if (!d->nblocks++)
		d->acc = (struct est_result){ .have = true };
	/* the first refusal names it; d->why is the next block's */
	if (!d->acc.refused && r.refused == d->why) {
		memcpy(d->acc_why, d->why, sizeof(d->acc_why));
		r.refused = d->acc_why;
	}
	ig_est_result_add(&d->acc, &r);
	dev_reset(d);
	d->l.n = nl_all;
	d->m.n = nm_all;
	d->u.n = nu_all;
	d->z.n = nz_all;
	d->blk_end = 0;
	d->blk_t0 = t_end;
	d->unres_ns = all_unres - unres;
	drop_front(&d->l, nl);
	drop_front(&d->m, nm);
	if (split)
		u[--nu] = rest;
	drop_front(&d->u, nu);
	if (zsplit)
		z[--nz] = zrest;
	drop_front(&d->z, nz);
	s->nlaunch -= nl;
	segs_trim(s);
	ig_est_nv_fold(s, d->ordinal, t_end);
}

static void sort_evidence(struct est_dev *d)
{
	sort_vec(&d->l);
	sort_vec(&d->m);
	sort_vec(&d->u);
	sort_vec(&d->z);
}

/* Where @d's block may end at the latest: what the walk has given causes,
 * and the sweep has handed on. */
static uint64_t closable_until(struct ig_engine *e, const struct est_dev *d,
			       uint64_t t_next)
{
	return ig_min64(t_next, ig_attrib_deferred_from(e, d->ordinal));
}

/* Sorts the evidence for a block's close (a close keeps it sorted). */
static void sort_for_close(struct ig_engine *e, struct est_dev *d)
{
	sort_evidence(d);
	sort_vec(&e->est->segs);
}

/* The marks (by entry, sorted) up to the last one that ends by @t. */
static uint32_t marks_ending_by(const struct est_dev *d, uint64_t t)
{
	const struct est_mark *m;
	uint32_t nm;

	m = d->m.v;
	for (nm = d->m.n; nm && m[nm - 1].t_end > t; nm--)
		;
	return nm;
}

/* By time (ig_engine_opts.est_block_s, `idlegap top`): the last mark
 * that ends a block of @bns at most, half of it at least, once half a
 * block more has passed. */
static uint32_t mark_by_time(struct ig_engine *e, struct est_dev *d,
			     uint64_t t_next, uint64_t bns)
{
	uint64_t start = blk_start(d);
	const struct est_mark *m;
	uint32_t nm;

	if (!start || t_next < start + bns + bns / 2 || t_next < d->next_try_t)
		return 0;
	d->next_try_t = t_next + bns / 8;
	if (closable_until(e, d, t_next) < start + bns + bns / 2)
		return 0;
	sort_for_close(e, d);
	nm = marks_ending_by(d, start + bns);
	m = d->m.v;
	return nm && m[nm - 1].t_end >= start + bns / 2 ? nm : 0;
}

void ig_est_block_try(struct ig_engine *e, struct est_dev *d, uint64_t t_next)
{
	struct ig_est *s = e->est;
	uint32_t blk = e->o.est_block ? e->o.est_block : EST_BLOCK_LAUNCHES, nm;
	uint64_t bns = (uint64_t)(e->o.est_block_s * 1e9);
	const struct est_mark *m;

	if (!s || s->done || s->overflow || d->multi)
		return;
	/* a block closes with half a block open after it, so that the last
	 * block, estimated at the end, is not a few launches alone */
	if (d->l.n < blk + blk / 2 || d->l.n < d->next_try) {
		if (bns && (nm = mark_by_time(e, d, t_next, bns)))
			block_close(e, d, nm);
		return;
	}
	/* as many blocks as the launches hold: one a try would leave the
	 * launches that came between two tries behind each time, and the
	 * open block would grow with the run */
	sort_for_close(e, d);
	do {
		nm = marks_ending_by(d, closable_until(e, d, t_next));
		m = d->m.v;
		while (nm && count_before(&d->l, m[nm - 1].t_in) > blk)
			nm--;
		/* the last mark before @lim with a block's launches at most
		 * before it, if half a block was; none: the next try waits
		 * for an eighth of a block more */
		if (!nm || count_before(&d->l, m[nm - 1].t_in) < blk / 2) {
			d->next_try = d->l.n + blk / 8 + 1;
			return;
		}
		block_close(e, d, nm);
	} while (d->l.n >= blk + blk / 2);
	d->next_try = 0;
}

void ig_est_block_finish(struct est_dev *d)
{
	struct est_result last = d->r;

	last.blocks = 1;
	if (!d->nblocks) {
		d->r.blocks = 1;
		return;
	}
	d->r = d->acc;
	ig_est_result_add(&d->r, &last);
	ig_est_result_close(&d->r);
	/* over all its blocks' held-out syncs, not the worst block's */
	keep_errs(d);
	d->r.p50_us = ig_est_quantile(d->errs.v, d->errs.n, 0.5);
	d->r.p90_us = ig_est_quantile(d->errs.v, d->errs.n, 0.9);
}

static size_t vec_bytes(const struct ig_vec *v)
{
	return (size_t)v->cap * v->esz;
}

size_t ig_est_bytes(const struct ig_engine *e, size_t *evidence)
{
	const struct ig_est *s = e->est;
	size_t n = 0, ev = 0;
	uint32_t i;

	if (s) {
		n = sizeof(*s);
		ev = vec_bytes(&s->segs);
		for (i = 0; i < s->ndev; i++) {
			const struct est_dev *d = s->dev[i];

			n += sizeof(*d) + vec_bytes(&d->st) + vec_bytes(&d->errs);
			ev += vec_bytes(&d->l) + vec_bytes(&d->m) + vec_bytes(&d->u) +
			      vec_bytes(&d->z);
		}
	}
	if (evidence)
		*evidence = ev;
	return n + ev;
}

void ig_est_bounds(const struct ig_engine *e, struct ig_est_bounds *b)
{
	const struct ig_est *s = e->est;
	uint32_t i;

	memset(b, 0, sizeof(*b));
	for (i = 0; s && i < s->ndev; i++) {
		const struct est_dev *d = s->dev[i];

		b->blocks += d->nblocks;
		b->stretches_left_off += d->st_left_off;
		b->errs_seen += d->errs_seen;
		b->errs_kept += d->errs.n;
	}
	for (i = 0; s && i < s->nnv; i++) {
		b->windows_folded += s->nv[i]->win_folded;
		/* a device that sent no window has no counters to miss */
		if (!s->nv[i]->win.n && !s->nv[i]->win_folded)
			continue;
		b->pieces_dropped += s->nv[i]->pend_dropped;
		b->pieces_dropped_ns += s->nv[i]->pend_dropped_ns;
	}
}

void ig_est_foreach(const struct ig_engine *e, est_span_fn cb, void *ctx)
{
	uint32_t i;

	if (!e->est || !e->est->done)
		return;
	for (i = 0; i < e->est->ndev; i++) {
		const struct est_dev *d = e->est->dev[i];
		const struct est_stretch *st = d->st.v;
		uint32_t j;

		if (!d->r.have)
			continue;
		for (j = 0; j < d->st.n; j++)
			cb(ctx, d->ordinal, st[j].t0, st[j].t0 + st[j].len, st[j].idle);
		ig_est_dev_walk(d, cb, ctx);
	}
}

/* The high end adds what proven busy time may hide (docs/design.md
 * §4.10), summed over the blocks: never more idle than the device's span
 * less its proven idle, its unresolved and busy time. */
static void cap_high(const struct ig_engine *e, struct est_dev *d)
{
	uint64_t cap;
	uint32_t i;

	if (!d->r.have)
		return;
	for (i = 0; i < e->gpu.ndevs; i++) {
		const struct ig_device *g = e->gpu.devs[i];

		if (g->ordinal != d->ordinal)
			continue;
		cap = ig_max64(g->unres_ns, d->r.unres_ns) + g->busy_ns;
		if (d->r.high_ns > cap)
			d->r.high_ns = ig_max64(cap, d->r.idle_ns);
		return;
	}
}

void ig_est_compute(struct ig_engine *e)
{
	struct ig_est *s = ig_est_get(e);
	bool any = false;
	uint32_t i;

	if (!s || s->done)
		return;
	s->done = true;
	sort_vec(&s->segs);
	s->total = (struct est_result){ .have = true };
	for (i = 0; i < s->ndev; i++) {
		struct est_dev *d = s->dev[i];

		sort_evidence(d);
		ig_est_dev_compute(e, d);
		ig_est_device_fuse(e, d, d->blk_t0, UINT64_MAX);
		ig_est_block_finish(d);
		cap_high(e, d);
		if (!d->r.unres_ns && !d->l.n && !d->nblocks)
			continue;
		any = true;
		ig_est_result_add(&s->total, &d->r);
	}
	if (!any && !s->total.refused)
		s->total.refused = s->total.unres_ns ? "no per-launch evidence" : NULL;
	ig_est_result_close(&s->total);
}

const struct est_result *ig_est_device(const struct ig_engine *e, int ordinal)
{
	uint32_t i;

	if (!e->est)
		return NULL;
	for (i = 0; i < e->est->ndev; i++)
		if (e->est->dev[i]->ordinal == ordinal)
			return &e->est->dev[i]->r;
	return NULL;
}

const struct est_result *ig_est_total(const struct ig_engine *e)
{
	return e->est && e->est->done ? &e->est->total : NULL;
}

void ig_est_free(struct ig_engine *e)
{
	struct ig_est *s = e->est;
	uint32_t i;

	if (!s)
		return;
	for (i = 0; i < s->ndev; i++) {
		free(s->dev[i]->l.v);
		free(s->dev[i]->m.v);
		free(s->dev[i]->u.v);
		free(s->dev[i]->z.v);
		free(s->dev[i]->err);
		free(s->dev[i]->k);
		free(s->dev[i]->st.v);
		free(s->dev[i]->errs.v);
		free(s->dev[i]);
	}
	ig_est_nv_free(s);
	free(s->segs.v);
	free(s);
	e->est = NULL;
}

void ig_engine_estimates(const struct ig_engine *e,
			 void (*cb)(void *ctx, int device, uint64_t t0,
				    uint64_t t1, bool idle), void *ctx)
{
	ig_est_foreach(e, cb, ctx);
}
