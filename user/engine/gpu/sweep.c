// SPDX-License-Identifier: GPL-2.0
/*
 * The device timeline (docs/design.md §4): a sweep over a device's
 * unfinalised stream intervals up to a watermark classifies time as idle,
 * busy or unresolved, closes idle gaps and hands them, and the unresolved
 * pieces, to attribution.  The watermark is what gpu.h explains.
 */
#include <stdlib.h>
#include <string.h>
#include "engine/model.h"
#include "engine/gpu/gpu.h"


/* starts sort before ends at the same instant: a zero-length interval
 * must enter the active set before it leaves it */
enum { EV_PEND_START, EV_BUSY_START, EV_PEND_END, EV_BUSY_END };

struct sev {
	uint64_t t;
	uint32_t kind;
	uint32_t tid, tgid;
	uint32_t id;
	uint32_t how;		/* EV_PEND_END: enum ig_bound */
};

enum { SEG_IDLE, SEG_BUSY, SEG_UNRES };
/* ---- the sweep ---- */

struct sweep {
	struct ig_engine *e;
	struct ig_device *d;
	bool run_idle;
	uint64_t run_t0;
	bool pc_open;		/* unresolved piece being merged */
	struct ig_piece pc;
};

static int sev_cmp(const void *a, const void *b)
{
	const struct sev *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

static struct sev *sev_buf(struct ig_engine *e, size_t n)
{
	if (n * sizeof(struct sev) > e->gpu.scratch_cap) {
		size_t cap = n * 2 * sizeof(struct sev);
		void *p = realloc(e->gpu.scratch, cap);

		if (!p)
			return NULL;
		e->gpu.scratch = p;
		e->gpu.scratch_cap = cap;
	}
	return e->gpu.scratch;
}

static void unres_list_flush(struct ig_engine *e, struct ig_device *d)
{
	struct ig_gap g;

	if (!d->merging_open)
		return;
	g.t0 = d->merging_t0;
	g.t1 = d->merging_t1;
	g.tid = d->merging_tid;
	g.tgid = d->merging_tgid;
	g.device = d->ordinal;
	g.pad = 0;
	ig_gaplist_add(&e->attr.unres_list, &g);
	d->unres_spans++;
	d->merging_open = false;
}

static void piece_flush(struct sweep *sw)
{
	struct ig_device *d = sw->d;

	if (!sw->pc_open)
		return;
	sw->pc_open = false;
	if (sw->e->gpu.unres_tap)
		sw->e->gpu.unres_tap(sw->e, &sw->pc);
	sw->e->gpu.sink.unresolved(sw->e->gpu.sink.ctx, &sw->pc);
	if (d->merging_open && d->merging_t1 == sw->pc.t0 &&
	    d->merging_tid == sw->pc.tid) {
		d->merging_t1 = sw->pc.t1;
		return;
	}
	unres_list_flush(sw->e, d);
	d->merging_open = true;
	d->merging_t0 = sw->pc.t0;
	d->merging_t1 = sw->pc.t1;
	d->merging_tid = sw->pc.tid;
	d->merging_tgid = sw->pc.tgid;
}

/* A gap's length for the histogram: one carried in from the last window
 * (docs/design.md §7.10) with its whole length, counted here once. */
static uint64_t gap_len(struct ig_device *d, uint64_t t0, uint64_t t1)
{
	if (d->carry_from && t0 == d->carry_from) {
		d->carry_ns = t1 - t0;
		d->carry_how = IG_HELD_LAUNCH;
		return t1 - d->carry_start;
	}
	return t1 - t0;
}

static void gap_close(struct sweep *sw, uint64_t t1, uint32_t tid,
		      uint32_t tgid)
{
	struct ig_engine *e = sw->e;
	struct ig_device *d = sw->d;
	uint64_t t0 = sw->run_t0;
	struct ig_gap g;

	sw->run_idle = false;
	if (t1 <= t0)
		return;
	d->idle_ns += t1 - t0;
	d->gaps++;
	ig_hist_add(&e->attr.gap_hist, gap_len(d, t0, t1));
	ig_hist_add(&d->gap_hist, gap_len(d, t0, t1));
	g.t0 = t0;
	g.t1 = t1;
	g.tid = tid;
	g.tgid = tgid;
	g.device = d->ordinal;
	g.pad = 0;
	ig_gaplist_add(&e->attr.gaps, &g);
	if (e->gpu.idle_tap)
		e->gpu.idle_tap(e, d->ordinal, t0, t1);
	e->gpu.sink.idle_gap(e->gpu.sink.ctx, &g);
}

/* An unresolved run ended: idle after it (the drain that ended it says
 * how) or busy evidence (the GPU still had work when the host asked). */
static void run_end(struct ig_engine *e, struct ig_device *d, uint32_t how)
{
	ig_observe_span(e, d, IG_OBS_UNRES, d->ur_t0, d->ur_t1, d->ur_tid, d->ur_tgid,
			how == IG_B_HOST ? IG_OBS_HOST_BOUND : how == IG_B_GPU ? IG_OBS_GPU_BOUND :
			IG_OBS_OPEN);
	if (how == IG_B_HOST)
		d->unres_host_ns += d->ur_ns;
	else if (how == IG_B_GPU)
		d->unres_gpu_ns += d->ur_ns;
	d->ur_ns = 0;
}

static void segment(struct sweep *sw, int cls, uint64_t x, uint64_t y,
		    uint32_t tid, uint32_t tgid)
{
	struct ig_device *d = sw->d;

	if (y <= x)
		return;
	if (d->ur_ns && cls != SEG_UNRES)
		run_end(sw->e, d, cls == SEG_BUSY ? IG_B_GPU : d->end_how);
	if (cls == SEG_IDLE) {
		piece_flush(sw);
		if (!sw->run_idle) {
			sw->run_idle = true;
			sw->run_t0 = x;
		}
		return;
	}
	if (sw->run_idle)	/* cannot happen: busy lies inside pending */
		gap_close(sw, x, 0, 0);
	if (cls == SEG_BUSY) {
		piece_flush(sw);
		d->busy_ns += y - x;
		ig_observe_span(sw->e, d, IG_OBS_BUSY, x, y, tid, tgid, 0);
		return;
	}
	if (!d->ur_ns) {
		d->ur_t0 = x;
		d->ur_tid = d->ur_tgid = 0;
	}
	if (!d->ur_tid) {
		d->ur_tid = tid;
		d->ur_tgid = tgid;
	}
	d->ur_t1 = y;
	d->unres_ns += y - x;
	d->ur_ns += y - x;
	if (sw->pc_open && sw->pc.t1 == x && sw->pc.tid == tid) {
		sw->pc.t1 = y;
		return;
	}
	piece_flush(sw);
	sw->pc_open = true;
	sw->pc.t0 = x;
	sw->pc.t1 = y;
	sw->pc.tid = tid;
	sw->pc.tgid = tgid;
	sw->pc.device = sw->d->ordinal;
}

static size_t collect(struct ig_engine *e, struct ig_device *d,
		      uint64_t watermark, struct sev *ev)
{
	size_t n = 0;
	uint32_t i, id = 0;

#define ADD(T, K, TID, TGID)						\
	do {								\
		ev[n].t = (T);						\
		ev[n].kind = (K);					\
		ev[n].tid = (TID);					\
		ev[n].tgid = (TGID);					\
		ev[n].id = id;						\
		ev[n].how = IG_B_OPEN;					\
		n++;							\
	} while (0)

	for (i = 0; i < d->closed.n; i++, id++) {
		const struct ig_pend *p = (struct ig_pend *)d->closed.v + i;

		if (p->t0 > watermark || (p->t1 <= d->final_until && p->t1 > p->t0) ||
		    p->t1 < d->final_until)
			continue;
		ADD(ig_max64(p->t0, d->final_until), EV_PEND_START, p->tid, p->tgid);
		if (p->t1 <= watermark) {
			ADD(p->t1, EV_PEND_END, 0, 0);
			ev[n - 1].how = p->how;
		}
	}
	for (i = 0; i < d->nopen; i++, id++) {
		const struct ig_stream *s = d->open[i];

		if (s->p_start <= watermark)
			ADD(ig_max64(s->p_start, d->final_until), EV_PEND_START,
			    s->feeder_tid, s->feeder_tgid);
	}
	for (i = 0; i < e->lost.ranges.n; i++, id++) {
		const struct ig_lost *l = (struct ig_lost *)e->lost.ranges.v + i;

		if (l->t0 > watermark || l->t1 <= d->final_until)
			continue;
		ADD(ig_max64(l->t0, d->final_until), EV_PEND_START, 0, 0);
		if (l->t1 <= watermark)
			ADD(l->t1, EV_PEND_END, 0, 0);
	}
	for (i = 0; i < d->busy.n; i++, id++) {
		const struct ig_busy *b = (struct ig_busy *)d->busy.v + i;

		if (b->t0 >= watermark || b->t1 <= d->final_until)
			continue;
		ADD(ig_max64(b->t0, d->final_until), EV_BUSY_START, 0, 0);
		if (b->t1 <= watermark)
			ADD(b->t1, EV_BUSY_END, 0, 0);
	}
#undef ADD
	return n;
}

/* Active pending intervals, to name the feeder of an unresolved span: the
 * submission that most recently started one of them. */
struct active {
	uint32_t id, tid, tgid;
	uint64_t t;
};

static void feeder_of(const struct active *a, size_t n, uint32_t *tid,
		      uint32_t *tgid)
{
	size_t i, best = n;

	for (i = 0; i < n; i++)
		if (a[i].tid && (best == n || a[i].t >= a[best].t))
			best = i;
	*tid = best < n ? a[best].tid : 0;
	*tgid = best < n ? a[best].tgid : 0;
}

static bool pend_gone(const void *el, uint64_t final_until)
{
	const struct ig_pend *p = el;

	return p->t1 < final_until || (p->t1 == final_until && p->t1 > p->t0);
}

static bool busy_gone(const void *el, uint64_t final_until)
{
	return ((const struct ig_busy *)el)->t1 <= final_until;
}

static void dev_sweep(struct ig_engine *e, struct ig_device *d,
		      uint64_t watermark)
{
	size_t nmax = 2 * (d->closed.n + d->busy.n + e->lost.ranges.n) + d->nopen;
	struct sweep sw = { .e = e, .d = d };
	struct active *act;
	size_t n, i, nact = 0;
	uint32_t tid, tgid;
	uint32_t npend = 0, nbusy = 0;
	uint64_t cur = d->final_until;
	struct sev *ev;

	if (watermark <= d->final_until)
		return;
	ev = sev_buf(e, nmax * 2 + 1);
	if (!ev)
		return;
	/* the second half of the buffer holds the active set */
	act = (struct active *)(ev + nmax + 1);
	n = collect(e, d, watermark, ev);
	qsort(ev, n, sizeof(*ev), sev_cmp);
	sw.run_idle = d->idle_open;
	sw.run_t0 = d->final_until;

	for (i = 0; i < n;) {
		uint64_t t = ev[i].t;
		bool started = false;
		uint32_t stid = 0, stgid = 0;

		if (t > cur) {
			feeder_of(act, nact, &tid, &tgid);
			segment(&sw, nbusy ? SEG_BUSY :
				     npend ? SEG_UNRES : SEG_IDLE,
				cur, t, tid, tgid);
			cur = t;
		}
		for (; i < n && ev[i].t == t; i++) {
			const struct sev *v = &ev[i];
			size_t k;

			switch (v->kind) {
			case EV_PEND_START:
				npend++;
				act[nact].id = v->id;
				act[nact].tid = v->tid;
				act[nact].tgid = v->tgid;
				act[nact].t = t;
				nact++;
				if (!started || (!stid && v->tid)) {
					stid = v->tid;
					stgid = v->tgid;
				}
				started = true;
				break;
			case EV_PEND_END:
				npend--;
				if (!npend)
					d->end_how = v->how;
				for (k = 0; k < nact; k++) {
					if (act[k].id == v->id) {
						act[k] = act[--nact];
						break;
					}
				}
				break;
			case EV_BUSY_START:
				nbusy++;
				break;
			case EV_BUSY_END:
				nbusy--;
				break;
			}
		}
		/* a submission ends the idle gap it lands in */
		if (sw.run_idle && started)
			gap_close(&sw, t, stid, stgid);
	}
	if (watermark > cur) {
		feeder_of(act, nact, &tid, &tgid);
		segment(&sw, nbusy ? SEG_BUSY : npend ? SEG_UNRES : SEG_IDLE,
			cur, watermark, tid, tgid);
	}
	piece_flush(&sw);
	if (sw.run_idle) {
		d->final_until = sw.run_t0;	/* an open gap: re-swept next time */
		d->idle_open = true;
	} else {
		d->final_until = watermark;
		d->idle_open = false;
		if (d->carry_from && !d->carry_how)
			d->carry_how = IG_HELD_WORK;	/* ended by no launch */
		d->carry_from = 0;	/* a gap carried in ended */
	}
	ig_vec_drop_where(&d->closed, pend_gone, d->final_until);
	ig_vec_drop_where(&d->busy, busy_gone, d->final_until);
}

/* Finalise what can be: up to the newest record, but not past what each
 * pending stream is known to have been pending until. */
void ig_sweep_advance(struct ig_engine *e, struct ig_device *d)
{
	uint64_t watermark = e->win.now;
	uint32_t i;

	/* after the window's end only a held gap is ended (carry.c) */
	if (!d || !d->active || e->gpu.held_at)
		return;
	/* too much unfinalised evidence (a stream that never drains): treat
	 * pending streams as pending up to now; idle may shrink, never grow */
	if (d->closed.n < IG_DEV_CLOSED_CAP && d->busy.n < IG_DEV_CLOSED_CAP)
		for (i = 0; i < d->nopen; i++)
			watermark = ig_min64(watermark, d->open[i]->pending_until);
	dev_sweep(e, d, watermark);
}

void ig_gpu_dev_end(struct ig_engine *e, struct ig_device *d)
{
	/* pending streams count as pending up to the last evidence;
	 * an idle gap still open at the end is left out */
	dev_sweep(e, d, ig_max64(d->final_until, d->last_ev));
	/* the last unresolved run ended at the last evidence if that
	 * drained every stream */
	if (d->ur_ns && !d->nopen)
		run_end(e, d, d->end_how);
	else if (d->ur_ns)	/* still open at the end */
		ig_observe_span(e, d, IG_OBS_UNRES, d->ur_t0, d->ur_t1, d->ur_tid,
				d->ur_tgid, IG_OBS_OPEN);
	unres_list_flush(e, d);
}

void ig_gpu_finish(struct ig_engine *e)
{
	uint32_t i;

	for (i = 0; i < e->gpu.ndevs; i++)
		if (e->gpu.devs[i]->active)
			ig_gpu_dev_end(e, e->gpu.devs[i]);
}
