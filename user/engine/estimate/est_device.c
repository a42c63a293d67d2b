// SPDX-License-Identifier: GPL-2.0
/*
 * The device's own counters where host evidence ends (docs/design.md §4.10,
 * "Device counters").  NVML says how busy the GPU was over each window of
 * its counter (IG_REC_NVWIN: the buffered utilization samples, or GPM's
 * graphics utilization); the GPU model says how much of the window this
 * device's time was proven busy, proven idle and unresolved.  The busy time
 * the counter saw beyond the proven busy lies in the unresolved time, so
 * the rest of it was idle:
 *
 *   idle in unresolved = unresolved - (counter's busy - proven busy)
 *
 * within the counter's step (whole percent: half a percent of the window
 * either way) and the drained points' delay (proven busy that may hide
 * idle, EST_DEV_LAG_NS per waiting sync), clipped to [0, unresolved]; the
 * high end may pass the unresolved time by proven busy time the counter
 * saw idle (as a fit's may: what busy time may hide).  The
 * counter is device-wide: every process on the GPU counts, and a shared
 * GPU's figure is labelled as such, never split between its jobs.
 *
 * Pieces of time and windows come in any order: a piece waits (pend) until
 * the windows that cover it arrive; each window keeps its own sums.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/estimate/est_int.h"
#include "stream/records.h"

/* A drained point lags its queue's end by a wakeup's delay: proven busy
 * time may hide so much idle per waiting sync. */
#define EST_DEV_LAG_NS	250000ULL
#define EST_DEV_TOUCH_NS	1000ULL

static struct est_nv *nv_of(struct ig_engine *e, int device)
{
	struct ig_est *s = ig_est_get(e);
	struct est_nv *n;
	uint32_t i;

	if (!s)
		return NULL;
	for (i = 0; i < s->nnv; i++)
		if (s->nv[i]->device == device)
			return s->nv[i];
	if (s->nnv == IG_MAX_DEVICES || !(n = calloc(1, sizeof(*n))))
		return NULL;
	n->device = device;
	n->win.esz = sizeof(struct est_win);
	n->pend.esz = sizeof(struct est_pend);
	s->nv[s->nnv++] = n;
	return n;
}

/* The first window ending after @t. */
static uint32_t win_after(const struct est_nv *n, uint64_t t)
{
	const struct est_win *w = n->win.v;
	uint32_t lo = 0, hi = n->win.n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (w[mid].t1 <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Adds piece @p to the windows that cover it; true when part of it lies
 * after the newest window (it must wait for the next). */
static bool fold(struct est_nv *n, const struct est_pend *p)
{
	struct est_win *w = n->win.v;
	uint32_t i;

	for (i = win_after(n, p->t0); i < n->win.n && w[i].t0 <= p->t1; i++) {
		uint64_t a = ig_max64(w[i].t0, p->t0), b = ig_min64(w[i].t1, p->t1);

		if (p->what == EST_P_WAIT) {
			if (p->t0 >= w[i].t0 && p->t0 < w[i].t1) {
				w[i].waits++;
				return false;
			}
			continue;
		}
		if (b <= a)
			continue;
		if (p->what == EST_P_UNRES)
			w[i].unres_ns += b - a;
		else
			w[i].idle_ns += b - a;
	}
	return !n->win.n || p->t1 >= w[n->win.n - 1].t1;
}

/* Pieces that waited EST_PEND_AGE_NS behind the newest for a window
 * are left uncovered, and counted. */
static void pend_age(struct est_nv *n)
{
	struct est_pend *p = n->pend.v;
	uint32_t i, k = 0;

	for (i = 0; i < n->pend.n; i++) {
		if (p[i].t1 + EST_PEND_AGE_NS < n->newest) {
			n->pend_dropped++;
			n->pend_dropped_ns += p[i].t1 - p[i].t0;
			continue;
		}
		p[k++] = p[i];
	}
	n->pend.n = k;
	ig_vec_fit(&n->pend);
}

static void piece(struct ig_engine *e, int device, uint64_t t0, uint64_t t1,
		  uint32_t what)
{
	struct est_nv *n = nv_of(e, device);
	struct est_pend p = { .t0 = t0, .t1 = t1, .what = what }, *q;

	if (!n || t1 < t0 || !fold(n, &p))
		return;
	/* the part after the newest window waits for the next */
	if (n->win.n)
		p.t0 = ig_max64(p.t0, ((struct est_win *)n->win.v)[n->win.n - 1].t1);
	if (p.t1 > n->newest)
		n->newest = p.t1;
	if (n->pend.n && !(n->pend.n % 1024))
		pend_age(n);
	if (n->pend.n >= EST_MAX_PEND || !(q = ig_vec_push(&n->pend))) {
		n->pend_dropped++;	/* no window for minutes: left uncovered */
		n->pend_dropped_ns += p.t1 - p.t0;
		return;
	}
	*q = p;
}

void ig_est_nv_idle(struct ig_engine *e, int ordinal, uint64_t t0, uint64_t t1)
{
	piece(e, ordinal, t0, t1, EST_P_IDLE);
}

void ig_est_nv_piece(struct ig_engine *e, const struct ig_piece *pc)
{
	piece(e, pc->device, pc->t0, pc->t1, EST_P_UNRES);
}

void ig_est_nv_wait(struct ig_engine *e, int device, uint64_t t)
{
	piece(e, device, t, t, EST_P_WAIT);
}

/* The pieces waiting for windows, folded into @w's; those it ends kept
 * no longer. */
static void pend_fold(struct est_nv *n)
{
	struct est_pend *p = n->pend.v;
	uint32_t i, k = 0;

	const struct est_win *last = (const struct est_win *)n->win.v + n->win.n - 1;

	for (i = 0; i < n->pend.n; i++)
		if (fold(n, &p[i])) {	/* the rest, after the newest window */
			p[k] = p[i];
			p[k].t0 = ig_max64(p[k].t0, last->t1);
			p[k].t1 = ig_max64(p[k].t1, p[k].t0);
			k++;
		}
	n->pend.n = k;
}

void ig_est_on_nvwin(struct ig_engine *e, const struct ig_nvwin *r)
{
	struct est_nv *n = nv_of(e, (int)r->device);
	struct est_win *w, *last;

	if (!n || r->t1 <= r->t0 || r->busy_ppm > 1000000 ||
	    n->win.n >= EST_MAX_WINS)
		return;
	last = n->win.n ? (struct est_win *)n->win.v + n->win.n - 1 : NULL;
	/* overlaps, or out of order; within a microsecond, the clocks'
	 * offset read again (host/nvml.c) */
	if (last && r->t0 + EST_DEV_TOUCH_NS < last->t1)
		return;
	if (!(w = ig_vec_push(&n->win)))
		return;
	*w = (struct est_win){ .t0 = last ? ig_max64(r->t0, last->t1) : r->t0,
			       .t1 = r->t1, .busy_ppm = r->busy_ppm,
			       .quant_ppm = r->quant_ppm, .kind = r->kind,
			       .nproc = r->nproc };
	pend_fold(n);
}

static bool win_before(const void *el, uint64_t t)
{
	return ((const struct est_win *)el)->t1 <= t;
}

void ig_est_nv_fold(struct ig_est *s, int device, uint64_t t)
{
	uint32_t i, n0;

	for (i = 0; i < s->nnv; i++) {
		struct est_nv *n = s->nv[i];

		if (n->device != device || !n->win.n)
			continue;
		n0 = n->win.n;
		ig_vec_drop_where(&n->win, win_before, t);
		ig_vec_fit(&n->win);
		n->win_folded += n0 - n->win.n;
	}
}

void ig_est_nv_free(struct ig_est *s)
{
	uint32_t i;

	for (i = 0; i < s->nnv; i++) {
		free(s->nv[i]->win.v);
		free(s->nv[i]->pend.v);
		free(s->nv[i]);
	}
	s->nnv = 0;
}

/* The device's engine record: its span. */
static const struct ig_device *gpu_dev(const struct ig_engine *e, int ordinal)
{
	uint32_t i;

	for (i = 0; i < e->gpu.ndevs; i++)
		if (e->gpu.devs[i]->ordinal == ordinal && e->gpu.devs[i]->active)
			return e->gpu.devs[i];
	return NULL;
}

struct dev_sum {
	uint64_t lo, hi, point, covered;
	uint32_t windows, nproc, kind;
	double len, quant;
};

static uint64_t clip(double v, uint64_t max)
{
	return v <= 0 ? 0 : v >= (double)max ? max : (uint64_t)v;
}

/* One window inside the span [@a, @b): what its counter leaves for idle
 * in its unresolved time. */
static void win_add(struct dev_sum *t, const struct est_win *w, uint64_t a,
		    uint64_t b)
{
	double len = (double)(w->t1 - w->t0), in = (double)(ig_min64(w->t1, b) -
			ig_max64(w->t0, a));
	double busy = (double)w->busy_ppm * len / 1e6;
	double q = (double)w->quant_ppm / 2 * len / 1e6;
	double lag = (double)w->waits * EST_DEV_LAG_NS;
	double u = (double)w->unres_ns, pb = in - u - (double)w->idle_ns;

	if (pb < 0)
		pb = 0;
	t->lo += clip(u - (busy + q) + pb - lag, w->unres_ns);
	/* the high end past the unresolved time: proven busy time the
	 * counter saw idle (a drained point after its queue's end) */
	t->hi += clip(u - (busy - q) + pb, w->unres_ns + (uint64_t)pb);
	t->point += clip(u - busy + pb - lag / 2, w->unres_ns);
	t->covered += w->unres_ns;
	t->windows++;
	t->len += len;
	t->quant = (double)w->quant_ppm / 1e4;
	t->kind = w->kind;
	if (w->nproc > t->nproc)
		t->nproc = w->nproc;
}

/* The windows' sum over [@a, @b) of the device's span (a block of its
 * estimate: 0 and UINT64_MAX for the span's ends); a window across either
 * end of a block is left out, its unresolved time being partly another
 * block's.  False when none covers any unresolved time. */
static bool dev_sum(const struct ig_engine *e, const struct est_nv *n,
		    int ordinal, uint64_t a, uint64_t b, struct dev_sum *t)
{
	const struct ig_device *g = gpu_dev(e, ordinal);
	const struct est_win *w = n->win.v;
	uint64_t s0, s1;
	uint32_t i;

	memset(t, 0, sizeof(*t));
	if (!g)
		return false;
	s0 = g->span_start;
	s1 = ig_gpu_span_end(g);
	for (i = win_after(n, ig_max64(a, s0)); i < n->win.n && w[i].t0 < ig_min64(b, s1); i++)
		if ((w[i].t0 >= a || a <= s0) && (w[i].t1 <= b || b >= s1))
			win_add(t, &w[i], s0, s1);
	return t->covered > 0;
}

/* The counters' figure in place of the launch model's, which is compared
 * (docs/design.md §4.10, "With both"): its interval is kept, not
 * intersected, as the launch model's can miss where the host stalled. */
static void fuse(struct est_result *r, const struct dev_sum *t, uint64_t unres,
		 const uint64_t *causes)
{
	uint64_t rest = unres > t->covered ? unres - t->covered : 0;
	double rho = t->covered ? (double)t->point / (double)t->covered : 0;
	uint64_t lo = t->lo, hi = t->hi + rest, pt = t->point + (uint64_t)(rho * (double)rest);
	uint64_t old = r->idle_ns;
	uint32_t c;

	r->dv.model = !r->have ? "refused" : r->low_ns <= hi && r->high_ns >= lo ?
		      "consistent" : "inconsistent";
	r->dv.with = r->have ? r->method : NULL;
	pt = pt < lo ? lo : pt > hi ? hi : pt;
	/* the causes: the launch model's stretches', else the unresolved
	 * time's, in proportion */
	if (r->have && old) {
		for (c = 0; c < IG_C__MAX; c++)
			r->causes[c] = (uint64_t)((double)r->causes[c] * (double)pt / (double)old);
	} else {
		uint64_t all = 0;

		for (c = 0; c < IG_C__MAX; c++)
			all += causes[c];
		for (c = 0; c < IG_C__MAX; c++)
			r->causes[c] = all ? (uint64_t)((double)causes[c] * (double)pt / (double)all) : 0;
		r->host_bound_ns = r->gpu_bound_ns = 0;
	}
	r->idle_ns = pt;
	r->low_ns = lo;
	r->high_ns = hi;
	r->method = "device";
	r->refused = NULL;
	r->have = true;
}

void ig_est_device_fuse(struct ig_engine *e, struct est_dev *d, uint64_t a,
			uint64_t b)
{
	struct ig_est *s = e->est;
	uint64_t causes[IG_C__MAX] = { 0 };
	struct est_nv *n = NULL;
	struct dev_sum t;
	uint32_t i;

	for (i = 0; i < s->nnv; i++)
		if (s->nv[i]->device == d->ordinal)
			n = s->nv[i];
	if (!n || !d->unres_ns || !dev_sum(e, n, d->ordinal, a, b, &t))
		return;
	ig_est_unres_causes(s, d, causes);
	d->r.unres_ns = d->unres_ns;
	fuse(&d->r, &t, d->unres_ns, causes);
	d->r.dv = (struct est_devfig){
		.have = true, .kind = t.kind, .windows = t.windows,
		.nproc = t.nproc, .period_s = t.len / t.windows / 1e9,
		.quant_pct = t.quant, .covered_ns = ig_min64(t.covered, d->unres_ns),
		.with = d->r.dv.with, .model = d->r.dv.model,
	};
	/* the launch model's stretches no longer sum to the estimate */
	free(d->k);
	d->k = NULL;
	d->nk = 0;
	d->st.n = 0;
}
