// SPDX-License-Identifier: GPL-2.0
/*
 * The steps of a device (docs/design.md §4.11): the segments cut where
 * steps_period.c's plan says a step ends (the signature of the period's
 * boundary, or a marker call), the steps' figures, what-if, and the
 * device's best.  No period, or too few segments: no steps, and why.
 *
 * The older segments are cut into steps as the trace goes and folded
 * into the device's totals (ig_steps_fold()), so that a run of any length
 * keeps ST_LIVE_MAX segments at most; the report cuts the rest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/model.h"
#include "engine/steps/steps_int.h"

#define IG_STEPS_SLOW		1.5	/* slow: wall over this x p50 */

const char *ig_steps_cause_name(int cause)
{
	if (cause == IG_STEP_PEER)
		return "peer_wait";
	return cause >= 0 ? ig_names_cause((unsigned int)cause) : NULL;
}

static void step_add(struct ig_step *st, const struct st_seg *g,
		     uint64_t *late_ns)
{
	unsigned int c;

	for (c = 0; c < IG_SS__MAX; c++)
		st->ns[c] += g->ns[c];
	for (c = 0; c < IG_C__MAX; c++)
		st->cause_ns[c] += g->cause_ns[c];
	if (g->late_ns > *late_ns) {
		*late_ns = g->late_ns;
		st->late_rank = g->late_rank;
		st->late_cause = g->late_cause;
	}
}

static void step_close(struct ig_step *st)
{
	uint64_t best = 0, take;
	unsigned int c;

	/* peer wait overlaps the device's own time: the collective's kernel
	 * occupies the GPU while it waits; as the report carves it, out of
	 * busy time, then unresolved */
	take = st->ns[IG_SS_BUSY] < st->ns[IG_SS_PEER] ?
	       st->ns[IG_SS_BUSY] : st->ns[IG_SS_PEER];
	st->ns[IG_SS_BUSY] -= take;
	take = st->ns[IG_SS_PEER] - take;
	st->ns[IG_SS_UNRES] -= st->ns[IG_SS_UNRES] < take ?
			       st->ns[IG_SS_UNRES] : take;
	st->cause = -1;
	for (c = 0; c < IG_C__MAX; c++)
		if (st->cause_ns[c] > best) {
			best = st->cause_ns[c];
			st->cause = (int)c;
		}
	if (st->ns[IG_SS_PEER] > best)
		st->cause = IG_STEP_PEER;
}

static void step_init(struct ig_step *st, uint64_t t0, bool partial)
{
	memset(st, 0, sizeof(*st));
	st->t0 = t0;
	st->partial = partial;
	st->late_rank = st->late_cause = -1;
}

/* The steps that end in segments [0, upto), each to @emit; the first
 * is partial when nothing was folded before (it starts with the trace).
 * Returns the segments used: those up to the last step's end. */
static uint32_t cut_steps(const struct st_dev *d, const struct st_plan *pl,
			  uint32_t upto,
			  void (*emit)(void *ctx, struct ig_step *st), void *ctx)
{
	struct ig_step cur;
	uint64_t late = 0;
	uint32_t i, used = 0;

	step_init(&cur, d->base ? d->base : d->t_first, !d->base);
	for (i = 0; i < upto; i++) {
		const struct st_seg *g = st_seg_at(d, i);

		step_add(&cur, g, &late);
		if (!ig_steps_ends_step(pl, g))
			continue;
		cur.t1 = g->t_end;
		step_close(&cur);
		emit(ctx, &cur);
		step_init(&cur, g->t_end, false);
		late = 0;
		used = i + 1;
	}
	return used;
}

static uint64_t wall_of(const struct ig_step *st)
{
	return st->t1 - st->t0;
}

/* A cause touched a step when it took 1% of its time at least: a gap
 * across a boundary leaves a sliver of its causes in the step before. */
static bool touches(const struct ig_step *st, uint64_t ns)
{
	return ns && ns * 100 >= wall_of(st);
}

/* A whole step into what-if's sums. */
static void wi_add(struct st_wi *w, const struct ig_step *st)
{
	uint64_t wall = wall_of(st);
	unsigned int c;

	w->wall_ns += wall;
	for (c = 0; c <= IG_C__MAX; c++) {
		uint64_t ns = c == IG_STEP_PEER ? st->ns[IG_SS_PEER] :
			      st->cause_ns[c];
		uint64_t rest = wall > ns ? wall - ns : 0;

		w->touched[c] += touches(st, ns);
		w->sub_ns[c] += rest;
		if (st->cause != (int)c) {
			w->nd_ns[c] += rest;
			w->nd_n[c]++;
		}
	}
}

/* ---- folding ---- */

struct fold {
	struct st_agg *a;
	struct ig_step *v;
	uint32_t n, cap;
};

static void fold_emit(void *ctx, struct ig_step *st)
{
	struct fold *f = ctx;

	if (f->n == f->cap) {
		uint32_t cap = f->cap ? f->cap * 2 : 256;
		struct ig_step *v = realloc(f->v, cap * sizeof(*v));

		if (!v)
			return;
		f->v = v;
		f->cap = cap;
	}
	f->v[f->n++] = *st;
}

static void agg_take(struct st_agg *a, struct ig_step *st, double p50_ns)
{
	st->index = (uint32_t)a->n++;
	if (!st->partial) {
		a->complete++;
		wi_add(&a->wi, st);
		st->slow = (double)wall_of(st) > IG_STEPS_SLOW * p50_ns;
		a->nslow += st->slow;
	}
	if (!a->list)
		a->list = calloc(ST_LIST_KEEP + ST_SLOW_KEEP, sizeof(*a->list));
	if (!a->list)
		return;
	if (a->nlist < ST_LIST_KEEP)
		a->list[a->nlist++] = *st;
	else if (st->slow && a->nlist_slow < ST_SLOW_KEEP)
		a->list[ST_LIST_KEEP + a->nlist_slow++] = *st;
}

void ig_steps_fold(const struct ig_steps *s, struct st_dev *d)
{
	struct fold f = { .a = &d->agg };
	struct st_plan pl;
	uint32_t limit = 0, used, i;
	double p50;

	/* only what the device's final time has passed for good: late
	 * stretches (a gap attributed later, a collective settled) may
	 * still come for the newer ones */
	while (limit < d->segs.n / 2 &&
	       st_seg_at(d, limit)->t_end + ST_FOLD_MARGIN_NS <= d->t_last)
		limit++;
	/* a quarter at least, else later: folding is not for each sync */
	if (limit < d->segs.n / 4) {
		d->fold_at = d->segs.n + ST_LIVE_MAX / 16;
		return;
	}
	ig_steps_plan(s, d, &pl);
	if (!pl.ok) {
		used = limit;
		d->agg.unfolded += used;
	} else {
		used = cut_steps(d, &pl, limit, fold_emit, &f);
		for (i = 0; i < f.n; i++)
			if (!f.v[i].partial)
				ig_hist_add(&d->agg.wall, wall_of(&f.v[i]));
		p50 = (double)ig_hist_quantile(&d->agg.wall, 0.5);
		for (i = 0; i < f.n; i++)
			agg_take(&d->agg, &f.v[i], p50);
		free(f.v);
		memcpy(d->agg.source, pl.source, sizeof(pl.source));
		d->agg.period = pl.P;
		d->agg.boundary_sig = pl.B;
		d->agg.marker = pl.marker;
		if (!used)	/* no boundary in the half: keep them */
			return;
	}
	d->base = st_seg_at(d, used - 1)->t_end;
	memmove(d->segs.v, st_seg_at(d, used),
		(size_t)(d->segs.n - used) * sizeof(struct st_seg));
	d->segs.n -= used;
	d->cur = 0;
}

void ig_steps_agg_free(struct st_agg *a)
{
	ig_hist_free(&a->wall);
	free(a->list);
	memset(a, 0, sizeof(*a));
}

/* ---- the report ---- */

struct live {
	struct ig_steps_out *o;
	uint32_t cap;
};

static void live_emit(void *ctx, struct ig_step *st)
{
	struct live *l = ctx;

	if (l->o->n < l->cap)
		l->o->v[l->o->n++] = *st;
}

/* Per cause, the mean step time without it: the steps it dominated
 * (slowed by it) as the steps it did not, each less its time; every step
 * less its time where it dominated them all. */
static void whatif(struct ig_steps_out *o, const struct st_agg *a)
{
	struct st_wi w = a->wi;
	uint32_t i, c, k;

	for (i = 0; i < o->n; i++) {
		const struct ig_step *st = &o->v[i];

		if (!st->partial && st->index >= a->n)
			wi_add(&w, st);
	}
	o->nwhatif = 0;
	for (c = 0; c <= IG_C__MAX && o->complete; c++) {
		if (!w.touched[c])
			continue;
		o->whatif[o->nwhatif++] = (struct ig_step_whatif){
			.cause = (int)c, .steps = (uint32_t)w.touched[c],
			.mean_s = (double)w.wall_ns / 1e9 / o->complete,
			.mean_without_s = w.nd_n[c] ?
				(double)w.nd_ns[c] / 1e9 / w.nd_n[c] :
				(double)w.sub_ns[c] / 1e9 / o->complete,
		};
	}
	/* the largest saving first */
	for (i = 1; i < o->nwhatif; i++)
		for (k = i; k > 0 && o->whatif[k].mean_without_s <
				     o->whatif[k - 1].mean_without_s; k--) {
			struct ig_step_whatif t = o->whatif[k];

			o->whatif[k] = o->whatif[k - 1];
			o->whatif[k - 1] = t;
		}
}

/* Percentiles over the folded steps and the live ones, the live ones'
 * slowness, what-if. */
static void figures(struct ig_steps_out *o, const struct st_agg *a)
{
	struct ig_hist h;
	uint32_t i;
	double p50;

	if (ig_hist_copy(&h, &a->wall))
		memset(&h, 0, sizeof(h));
	for (i = 0; i < o->n; i++)
		if (!o->v[i].partial && o->v[i].index >= a->n)
			ig_hist_add(&h, wall_of(&o->v[i]));
	o->complete = (uint32_t)h.n;
	o->p50_s = (double)ig_hist_quantile(&h, 0.50) / 1e9;
	o->p90_s = (double)ig_hist_quantile(&h, 0.90) / 1e9;
	o->p99_s = (double)ig_hist_quantile(&h, 0.99) / 1e9;
	o->mean_s = h.n ? (double)h.sum / 1e9 / h.n : 0;
	ig_hist_free(&h);
	p50 = o->p50_s;
	o->slow_factor = IG_STEPS_SLOW;
	o->nslow = (uint32_t)a->nslow;
	for (i = 0; i < o->n; i++) {
		struct ig_step *st = &o->v[i];

		if (st->index < a->n)
			continue;	/* decided when folded */
		st->slow = !st->partial &&
			   (double)wall_of(st) / 1e9 > IG_STEPS_SLOW * p50;
		o->nslow += st->slow;
	}
	whatif(o, a);
}

static void none(struct ig_steps_out *o, const char *why)
{
	o->found = false;
	snprintf(o->why_none, sizeof(o->why_none), "%s", why);
}

/* One process's steps on one device. */
static void find_one(const struct ig_engine *e, const struct st_dev *d,
		     struct ig_steps_out *o)
{
	const struct st_agg *a;
	struct st_plan pl;
	struct live l = { .o = o };
	uint32_t i, used = 0;
	struct ig_step tail;

	memset(o, 0, sizeof(*o));
	o->device = d->dev;
	o->pid = d->tgid;
	if (!d->t_first) {
		none(o, "no GPU work seen");
		return;
	}
	a = &d->agg;
	o->dropped_segs = d->dropped + a->unfolded;
	ig_steps_plan(e->steps, d, &pl);
	if (!pl.ok && a->period) {
		/* too few live segments to say: as the folded steps were */
		pl.ok = true;
		pl.P = a->period;
		pl.B = a->boundary_sig;
		pl.marker = a->marker;
		memcpy(pl.source, a->source, sizeof(pl.source));
	}
	if (!pl.ok) {
		none(o, pl.why);
		return;
	}
	snprintf(o->source, sizeof(o->source), "%s", pl.source);
	o->period = pl.P;
	l.cap = a->nlist + a->nlist_slow + d->segs.n + 1;
	o->v = calloc(l.cap, sizeof(*o->v));
	if (!o->v) {
		none(o, "out of memory");
		return;
	}
	for (i = 0; i < a->nlist + a->nlist_slow; i++)
		o->v[o->n++] = a->list[i < a->nlist ? i :
				       ST_LIST_KEEP + i - a->nlist];
	o->list_omitted = a->n - (a->nlist + a->nlist_slow);
	if (pl.ok)
		used = cut_steps(d, &pl, d->segs.n, live_emit, &l);
	for (i = a->nlist + a->nlist_slow; i < o->n; i++)
		o->v[i].index = (uint32_t)a->n + (i - a->nlist - a->nlist_slow);
	/* the last: cut by the trace's end, kept if it holds time */
	step_init(&tail, used ? st_seg_at(d, used - 1)->t_end :
		  d->base ? d->base : d->t_first, true);
	if (pl.ok && d->t_last > tail.t0) {
		uint64_t late = 0;

		for (i = used; i < d->segs.n; i++)
			step_add(&tail, st_seg_at(d, i), &late);
		tail.t1 = d->t_last;
		step_close(&tail);
		tail.index = o->n ? o->v[o->n - 1].index + 1 : (uint32_t)a->n;
		if (o->n < l.cap)
			o->v[o->n++] = tail;
	}
	o->found = true;
	figures(o, a);
	if (!o->complete) {
		ig_steps_out_free(o);
		none(o, "no whole step between the trace's start and end");
	}
}

/* The better of @o and @t into @o: found, then the more whole steps. */
static void keep_best(struct ig_steps_out *o, struct ig_steps_out *t,
		      bool *have)
{
	if (!*have || (t->found && (!o->found || t->complete > o->complete))) {
		ig_steps_out_free(o);
		*o = *t;
		*have = true;
	} else {
		ig_steps_out_free(t);
	}
}

/* The best steps among the processes on device @dev (-1: any) and of
 * process @pid (0: any). */
static void find_best(const struct ig_engine *e, int dev, uint32_t pid,
		      struct ig_steps_out *o, const char *why)
{
	struct ig_steps_out t;
	uint32_t i;
	bool have = false;

	memset(o, 0, sizeof(*o));
	o->device = dev;
	none(o, why);
	for (i = 0; e->steps && i < e->steps->ndevs; i++) {
		const struct st_dev *d = &e->steps->devs[i];

		if ((dev != -1 && d->dev != dev) || (pid && d->tgid != pid))
			continue;
		find_one(e, d, &t);
		keep_best(o, &t, &have);
	}
}

void ig_steps_find(const struct ig_engine *e, int dev, struct ig_steps_out *o)
{
	find_best(e, dev, 0, o, "no sync or collective seen");
}

void ig_steps_find_pid(const struct ig_engine *e, uint32_t pid,
		       struct ig_steps_out *o)
{
	find_best(e, -1, pid, o, "no sync or collective seen");
}

void ig_steps_find_job(const struct ig_engine *e, struct ig_steps_out *o)
{
	find_best(e, -1, 0, o, "no GPU work seen");
}

void ig_steps_out_free(struct ig_steps_out *o)
{
	free(o->v);
	o->v = NULL;
	o->n = 0;
}
