// SPDX-License-Identifier: GPL-2.0
/*
 * Estimated idle inside unresolved time (docs/design.md §4.9).
 *
 * Evidence per device: every launch (time, signature) from IG_REC_LAUNCHES,
 * and marks from syncs and queries that covered everything submitted
 * before their entry: a sync that waited says the queue ended at its
 * drained point; one that returned at once, or a query that found the
 * work done, says it had ended by then.  est_fit.c fits a duration per
 * signature and a launch latency; this file keeps the evidence, checks
 * the fit on held-out syncs, and replays the device over the unresolved
 * spans:  start = max(launch + latency, previous end), end = start +
 * duration.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/estimate.h"
#include "engine/est_fit.h"

#define EST_MAX_LAUNCHES	(4u << 20)	/* kept per engine */
#define EST_FOLDS		5

struct est_dev {
	int ordinal;
	struct ig_vec l;	/* struct est_launch */
	struct ig_vec m;	/* struct est_mark */
	struct ig_vec u;	/* struct ig_piece: unresolved spans */
	uint32_t tgid;		/* the one queue seen, or multi */
	uint64_t stream;
	bool multi;
	struct est_result r;
	double *err;		/* held-out errors, us */
	uint32_t nerr;
};

struct ig_est {
	struct est_dev *dev[IG_MAX_DEVICES];
	uint32_t ndev;
	struct est_sigkey sig[EST_MAX_SIGS];
	uint32_t nsig;
	uint64_t nlaunch;
	bool overflow;
	bool done;
	struct est_result total;
	struct ig_causeset causes;	/* the walk's scratch set */
};

static struct ig_est *est_of(struct ig_engine *e)
{
	if (!e->est)
		e->est = calloc(1, sizeof(*e->est));
	return e->est;
}

static struct est_dev *dev_of(struct ig_engine *e, int ordinal)
{
	struct ig_est *s = est_of(e);
	struct est_dev *d;
	uint32_t i;

	if (!s)
		return NULL;
	for (i = 0; i < s->ndev; i++)
		if (s->dev[i]->ordinal == ordinal)
			return s->dev[i];
	if (s->ndev == IG_MAX_DEVICES || !(d = calloc(1, sizeof(*d))))
		return NULL;
	d->ordinal = ordinal;
	d->l.esz = sizeof(struct est_launch);
	d->m.esz = sizeof(struct est_mark);
	d->u.esz = sizeof(struct ig_piece);
	s->dev[s->ndev++] = d;
	return d;
}

static uint32_t sig_of(struct ig_est *s, uint32_t tgid, const struct ig_launch *l)
{
	struct est_sigkey k = { .tgid = tgid, .grid = l->grid, .block = l->block,
				.func = l->func };
	uint32_t i;

	for (i = 0; i < s->nsig; i++)
		if (!memcmp(&s->sig[i], &k, sizeof(k)))
			return i;
	if (s->nsig == EST_MAX_SIGS)
		return EST_MAX_SIGS - 1;	/* the rest share the last */
	s->sig[s->nsig] = k;
	return s->nsig++;
}

void est_on_launches(struct ig_engine *e, const struct ig_hdr *rec)
{
	const struct ig_launches *r = (const void *)rec;
	struct ig_process *p = ig_process_get(e, rec->tgid, rec->ts);
	uint32_t i, n = (rec->size - offsetof(struct ig_launches, e)) /
			sizeof(struct ig_launch);
	struct ig_est *s = est_of(e);
	struct est_dev *d;

	if (!p || !s || !(d = dev_of(e, ig_proc_device(p))))
		return;
	if (n > r->n)
		n = r->n;
	if (n > IG_LBUF)
		n = IG_LBUF;
	if (!n)
		return;
	if (!d->tgid) {
		d->tgid = rec->tgid;
		d->stream = r->stream;
	} else if (d->tgid != rec->tgid || d->stream != r->stream) {
		d->multi = true;
	}
	for (i = 0; i < n; i++) {
		struct est_launch *l;

		if (s->nlaunch >= EST_MAX_LAUNCHES) {
			s->overflow = true;
			return;
		}
		if (!(l = ig_vec_push(&d->l)))
			return;
		l->t = r->e[i].ts;
		l->sig = sig_of(s, rec->tgid, &r->e[i]);
		l->pad = 0;
		s->nlaunch++;
	}
}

void est_on_sync(struct ig_engine *e, struct ig_process *p, uint64_t t_in,
		 uint64_t t_end, bool waited)
{
	struct est_dev *d = dev_of(e, ig_proc_device(p));
	struct est_mark *m;

	if (!d || !t_in || t_end < t_in || !(m = ig_vec_push(&d->m)))
		return;
	m->t_in = t_in;
	m->t_end = t_end;
	m->waited = waited;
	m->fold = d->m.n % EST_FOLDS;
}

void est_on_unres(struct ig_engine *e, const struct ig_piece *pc)
{
	struct est_dev *d = dev_of(e, pc->device);
	struct ig_piece *u;

	if (d && pc->t1 > pc->t0 && (u = ig_vec_push(&d->u)))
		*u = *pc;
}

static int by_launch(const void *a, const void *b)
{
	const struct est_launch *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

static int by_mark(const void *a, const void *b)
{
	const struct est_mark *x = a, *y = b;

	return x->t_in < y->t_in ? -1 : x->t_in > y->t_in;
}

static int by_piece(const void *a, const void *b)
{
	const struct ig_piece *x = a, *y = b;

	return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile of @v (sorted in place), 0 when empty. */
static double quantile(double *v, uint32_t n, double q)
{
	double pos;
	uint32_t i;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), by_double);
	pos = q * (n - 1);
	i = (uint32_t)pos;
	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

/* Held-out check: fit without each fold, predict its waiting syncs. */
static void check(struct est_dev *d, uint32_t nsig, double *rel, uint32_t *nrel)
{
	struct est_model m;
	uint32_t f;

	d->err = calloc(d->m.n + 1, sizeof(*d->err));
	if (!d->err)
		return;
	for (f = 0; f < EST_FOLDS; f++) {
		if (est_fit(d->l.v, d->l.n, d->m.v, d->m.n, nsig, (int)f, &m))
			continue;
		est_predict(&m, d->l.v, d->l.n, d->m.v, d->m.n, (int)f,
			    d->err, &d->nerr, rel, nrel);
	}
}

/* The replayed queue's busy intervals, clipped to the unresolved spans;
 * what is left of them is estimated idle, walked for its host cause. */
static uint64_t idle_in_spans(struct ig_engine *e, struct est_dev *d,
			      const struct est_ival *k, uint32_t nk)
{
	const struct ig_piece *u = d->u.v;
	struct ig_est *s = e->est;
	uint64_t idle = 0;
	uint32_t i, j, k0 = 0;

	for (i = 0; i < d->u.n; i++) {
		uint64_t cur = u[i].t0;
		struct ig_piece pc = u[i];

		while (k0 < nk && k[k0].t1 <= u[i].t0)
			k0++;
		for (j = k0; j <= nk && cur < u[i].t1; j++) {
			uint64_t x = u[i].t1;

			if (j < nk && k[j].t0 < u[i].t1)
				x = ig_max64(k[j].t0, u[i].t0);
			if (x > cur) {
				pc.t0 = cur;
				pc.t1 = x;
				idle += x - cur;
				ig_attribute_set(e, &s->causes, d->r.causes, &pc);
			}
			if (j == nk || k[j].t0 >= u[i].t1)
				break;
			cur = ig_max64(cur, ig_min64(k[j].t1, u[i].t1));
		}
	}
	return idle;
}

static void dev_compute(struct ig_engine *e, struct est_dev *d)
{
	struct est_result *r = &d->r;
	struct est_model m;
	struct est_ival *k;
	double *rel, q10, q90, p50rel, busy;
	uint32_t i, nrel = 0, nk = 0;

	for (i = 0; i < d->u.n; i++) {
		const struct ig_piece *u = (const struct ig_piece *)d->u.v + i;

		r->unres_ns += u->t1 - u->t0;
	}
	if (!r->unres_ns) {
		r->have = true;
		return;
	}
	if (e->est->overflow) {
		r->refused = "more launches than the model keeps";
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
	qsort(d->l.v, d->l.n, d->l.esz, by_launch);
	qsort(d->m.v, d->m.n, d->m.esz, by_mark);
	qsort(d->u.v, d->u.n, d->u.esz, by_piece);
	rel = calloc(d->m.n + 1, sizeof(*rel));
	if (!rel) {
		r->refused = "out of memory";
		return;
	}
	check(d, e->est->nsig, rel, &nrel);
	r->checked = d->nerr;
	r->p50_us = quantile(d->err, d->nerr, 0.5);
	r->p90_us = quantile(d->err, d->nerr, 0.9);
	q10 = quantile(rel, nrel, 0.05);	/* sorts rel */
	q90 = quantile(rel, nrel, 0.95);
	for (i = 0; i < nrel; i++)
		rel[i] = fabs(rel[i]);
	p50rel = quantile(rel, nrel, 0.5);
	free(rel);
	if (r->checked < EST_MIN_CHECKED) {
		r->refused = "too few syncs waited for the GPU to check the model";
		return;
	}
	if (p50rel > EST_MAX_P90_REL) {
		r->refused = "the model missed held-out syncs by more than half their queue";
		return;
	}
	if (est_fit(d->l.v, d->l.n, d->m.v, d->m.n, e->est->nsig, -1, &m) ||
	    !(k = calloc(d->l.n, sizeof(*k)))) {
		r->refused = "the fit failed";
		return;
	}
	est_replay(&m, d->l.v, d->l.n, d->m.v, d->m.n, k, &nk);
	r->idle_ns = idle_in_spans(e, d, k, nk);
	free(k);
	busy = (double)(r->unres_ns - r->idle_ns);
	/* the held-out syncs' spread of relative error, both ways */
	if (q90 < -0.9)
		q90 = -0.9;
	if (q10 < -0.9)
		q10 = -0.9;
	r->low_ns = r->unres_ns - ig_min64(r->unres_ns, (uint64_t)(busy / (1 + q10)));
	r->high_ns = r->unres_ns - ig_min64(r->unres_ns, (uint64_t)(busy / (1 + q90)));
	if (r->low_ns > r->idle_ns)
		r->low_ns = r->idle_ns;
	if (r->high_ns < r->idle_ns)
		r->high_ns = r->idle_ns;
	r->have = true;
}

void est_compute(struct ig_engine *e)
{
	struct ig_est *s = est_of(e);
	struct est_result *t;
	uint32_t i, c;
	bool any = false;

	if (!s || s->done)
		return;
	s->done = true;
	t = &s->total;
	t->have = true;
	for (i = 0; i < s->ndev; i++) {
		struct est_dev *d = s->dev[i];

		dev_compute(e, d);
		if (!d->r.unres_ns && !d->l.n)
			continue;
		any = true;
		t->unres_ns += d->r.unres_ns;
		if (!d->r.have) {
			t->have = false;
			if (!t->refused)
				t->refused = d->r.refused;
			continue;
		}
		t->idle_ns += d->r.idle_ns;
		t->low_ns += d->r.low_ns;
		t->high_ns += d->r.high_ns;
		t->checked += d->r.checked;
		if (d->r.p50_us > t->p50_us)
			t->p50_us = d->r.p50_us;
		if (d->r.p90_us > t->p90_us)
			t->p90_us = d->r.p90_us;
		for (c = 0; c < IG_C__MAX; c++)
			t->causes[c] += d->r.causes[c];
	}
	if (!any && !t->refused)
		t->refused = t->unres_ns ? "no per-launch evidence" : NULL;
	if (!t->have) {
		t->idle_ns = t->low_ns = t->high_ns = 0;
		memset(t->causes, 0, sizeof(t->causes));
	}
}

const struct est_result *est_device(const struct ig_engine *e, int ordinal)
{
	uint32_t i;

	if (!e->est)
		return NULL;
	for (i = 0; i < e->est->ndev; i++)
		if (e->est->dev[i]->ordinal == ordinal)
			return &e->est->dev[i]->r;
	return NULL;
}

const struct est_result *est_total(const struct ig_engine *e)
{
	return e->est && e->est->done ? &e->est->total : NULL;
}

void est_free(struct ig_engine *e)
{
	struct ig_est *s = e->est;
	uint32_t i;

	if (!s)
		return;
	for (i = 0; i < s->ndev; i++) {
		free(s->dev[i]->l.v);
		free(s->dev[i]->m.v);
		free(s->dev[i]->u.v);
		free(s->dev[i]->err);
		free(s->dev[i]);
	}
	free(s);
	e->est = NULL;
}
