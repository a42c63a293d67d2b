// SPDX-License-Identifier: GPL-2.0
/*
 * The head of a trace that joined a job mid-stream (docs/design.md §4.12):
 * the time from the start of tracing to a device's first GPU work seen.
 * The host's evidence cannot settle it: work submitted before the probes
 * came may have run there.  The GPU's own counter can: a window of NVML's
 * utilization samples (or GPM's) that reads 0% saw no work of any process
 * on the device, so where such windows cover the head up to its first
 * work the GPU was idle there.  That idle is a gap like any other: its
 * feeder is the thread whose submission came first, and the walk over it
 * meets the waits the threads were in when tracing began, whose reasons
 * /proc gave (attrib/atattach.c): recovered at attach.  What no window
 * shows idle stays outside the GPU's span, or, between the proven idle and
 * the first work, unresolved; either way the head's threads' states label
 * it (a walk into a cause set of its own, counted nowhere).
 *
 * A counter stuck at 0 (NVML does not collect a MIG parent's utilization)
 * proves nothing: the windows count only on a device whose counter read
 * more than 0% somewhere in the trace.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/head.h"
#include "engine/gpu/gpu.h"
#include "stream/records.h"
#include "util/htab.h"
#include "util/vec.h"

#define HEAD_WINS	4096
/* NVML is read once a second: a window covering a device's first work
 * has come by then, or none will */
#define HEAD_WAIT_NS	(3 * IG_NSEC)
#define HEAD_TOUCH_NS	1000ULL		/* windows' ends, the clocks' offset */
/* the newest windows of every device, kept for the tail: a second of
 * 8 devices' utilization samples and GPM windows several times over */
#define TAIL_WINS	512

struct head_win {
	uint64_t t0, t1;
	uint32_t busy_ppm;
	int32_t device;
	uint16_t kind;
};

struct head_first {
	uint64_t tgid;		/* the key (ig_htab_init_ents()) */
	uint64_t ts;		/* 0: no work yet */
	uint32_t tid;
	bool ctx_made;		/* its context was made under the tracer,
				 * before its first work: no head */
};

struct ig_head {
	struct ig_vec wins;	/* struct head_win, in arrival order */
	struct ig_htab first;	/* struct head_first, kept in place */
	int32_t live[IG_MAX_DEVICES];	/* devices whose counter read > 0 */
	uint32_t nlive;
	struct ig_head_dev dev[IG_MAX_DEVICES];
	uint32_t ndev;
	int32_t settled[IG_MAX_DEVICES];	/* devices looked at */
	uint32_t nsettled;
	uint64_t keep;		/* ig_head_keep_from() at the last poll */
	bool keeping;		/* keep holds a time */
	struct head_win recent[TAIL_WINS];	/* a ring of the newest windows */
	uint32_t nrecent;	/* windows put in it, ever */
	struct ig_tail_dev tail[IG_MAX_DEVICES];
	uint32_t ntail;
};

static struct ig_head *head_of(struct ig_engine *e)
{
	if (!e->head) {
		e->head = calloc(1, sizeof(*e->head));
		if (e->head && ig_htab_init_ents(&e->head->first, 16,
						   sizeof(struct head_first), 3)) {
			free(e->head);
			e->head = NULL;
		}
		if (e->head)
			e->head->wins.esz = sizeof(struct head_win);
	}
	return e->head;
}

static bool live(const struct ig_head *h, int device)
{
	uint32_t i;

	for (i = 0; i < h->nlive; i++)
		if (h->live[i] == device)
			return true;
	return false;
}

void ig_head_on_nvwin(struct ig_engine *e, const struct ig_nvwin *r)
{
	struct ig_head *h = head_of(e);
	struct head_win *w;

	if (!h || r->t1 <= r->t0 || r->busy_ppm > 1000000)
		return;
	if (r->busy_ppm && !live(h, (int)r->device) && h->nlive < IG_MAX_DEVICES)
		h->live[h->nlive++] = (int32_t)r->device;
	h->recent[h->nrecent++ % TAIL_WINS] =
		(struct head_win){ r->t0, r->t1, r->busy_ppm, (int32_t)r->device, r->kind };
	if (h->wins.n >= HEAD_WINS || !(w = ig_vec_push(&h->wins)))
		return;
	*w = h->recent[(h->nrecent - 1) % TAIL_WINS];
}

/* A process that makes its context under the tracer (`run`, or a job
 * that had not reached its GPU yet) had no GPU work before: the time
 * before its first work is its start-up, not a head. */
void ig_head_on_cuda(struct ig_engine *e, const struct ig_cuda *c)
{
	bool ctx = c->kind == IG_CU_CTX;
	struct head_first *f;
	struct ig_head *h;

	if (!ctx && c->kind != IG_CU_SUBMIT && c->kind != IG_CU_SYNC_BEGIN)
		return;
	if (!(h = head_of(e)))
		return;
	f = ig_htab_ent(&h->first, c->h.tgid);
	if (f && (f->ts || ctx))
		return;
	if (!f && !(f = ig_htab_ent_add(&h->first, c->h.tgid)))
		return;
	if (ctx) {
		f->ctx_made = true;
		return;
	}
	f->ts = c->h.ts;
	f->tid = c->h.tid;
}

/* The first submission on @d of a process followed from the start @t0:
 * the head's feeder.  False when none was followed from the start. */
static bool feeder(const struct ig_engine *e, const struct ig_device *d,
		   uint64_t t0, struct ig_gap *g)
{
	const struct ig_process *p;
	const struct ig_stream *s;
	const struct head_first *f;
	uint32_t it = 0, k;
	bool found = false;

	g->t1 = UINT64_MAX;
	while ((p = ig_htab_next(&e->tasks.procs, &it))) {
		if (p->first_seen > t0)
			continue;	/* started under the tracer: no head */
		for (k = 0; (s = ig_htab_next(&p->streams, &k));)
			if (s->dev == d)
				break;
		f = s ? ig_htab_ent(&e->head->first, p->pid) : NULL;
		if (!s || !f || !f->ts || f->ctx_made || f->ts >= g->t1)
			continue;
		g->t1 = f->ts;
		g->tid = f->tid;
		g->tgid = p->pid;
		found = true;
	}
	return found;
}

/* Of the @nw windows @w in arrival order, the run of those reading 0%
 * that reaches furthest into [a, b), on @device: [*x, *y).  False when
 * none does. */
static bool zero_run(const struct head_win *w, uint32_t nw, int device, uint64_t a,
		     uint64_t b, uint64_t *x, uint64_t *y, uint16_t *kind, uint32_t *nwin)
{
	uint64_t rx = 0, ry = 0;
	uint32_t i, n = 0;
	bool have = false;

	for (i = 0; i < nw; i++) {
		uint64_t s = w[i].t0 > a ? w[i].t0 : a, t = w[i].t1 < b ? w[i].t1 : b;

		if (w[i].device != device || t <= s)
			continue;
		if (w[i].busy_ppm) {
			have = false;	/* a run ends at a window that saw work */
			continue;
		}
		if (have && s <= ry + HEAD_TOUCH_NS) {
			ry = t;
			n++;
		} else {
			rx = s;
			ry = t;
			n = 1;
			have = true;
		}
		*x = rx;
		*y = ry;
		*kind = w[i].kind;
		*nwin = n;
	}
	return n > 0 && *y > *x;
}

static void head_unresolved(struct ig_engine *e, struct ig_device *d,
			    const struct ig_gap *f, uint64_t x, uint64_t y)
{
	struct ig_piece pc = { .t0 = x, .t1 = y, .tid = f->tid, .tgid = f->tgid,
			       .device = d->ordinal };
	struct ig_gap g = { .t0 = x, .t1 = y, .tid = f->tid, .tgid = f->tgid,
			    .device = d->ordinal };

	d->unres_ns += y - x;	/* open: neither host- nor GPU-bound */
	d->unres_spans++;
	ig_gaplist_add(&e->attr.unres_list, &g);
	if (e->gpu.unres_tap)
		e->gpu.unres_tap(e, &pc);
	e->gpu.sink.unresolved(e->gpu.sink.ctx, &pc);
}

static void head_idle(struct ig_engine *e, struct ig_device *d,
		      const struct ig_gap *f, uint64_t x, uint64_t y)
{
	struct ig_gap g = { .t0 = x, .t1 = y, .tid = f->tid, .tgid = f->tgid,
			    .device = d->ordinal };

	d->idle_ns += y - x;
	d->gaps++;
	ig_hist_add(&e->attr.gap_hist, y - x);
	ig_hist_add(&d->gap_hist, y - x);
	ig_gaplist_add(&e->attr.gaps, &g);
	if (e->gpu.idle_tap)
		e->gpu.idle_tap(e, d->ordinal, x, y);
	e->gpu.sink.idle_gap(e->gpu.sink.ctx, &g);
}

static bool settled(const struct ig_head *h, int device)
{
	uint32_t i;

	for (i = 0; i < h->nsettled; i++)
		if (h->settled[i] == device)
			return true;
	return false;
}

static void head_dev(struct ig_engine *e, struct ig_device *d, uint64_t t0)
{
	struct ig_head *h = e->head;
	struct ig_head_dev *r;
	struct ig_gap f = { 0 };
	struct ig_piece all;
	uint64_t x = 0, y = 0, t1 = d->span_start;
	uint16_t kind = 0;
	uint32_t nwin = 0;

	if (!d->active || settled(h, d->ordinal) || h->nsettled == IG_MAX_DEVICES)
		return;
	h->settled[h->nsettled++] = d->ordinal;
	if (t1 <= t0 || d->carry_start || d->carry_how ||
	    h->ndev == IG_MAX_DEVICES || !feeder(e, d, t0, &f))
		return;
	r = &h->dev[h->ndev++];
	r->device = d->ordinal;
	r->from = t0;
	r->to = t1;
	r->tid = f.tid;
	r->tgid = f.tgid;
	r->counter_live = live(h, d->ordinal);
	if (r->counter_live &&
	    zero_run(h->wins.v, h->wins.n, d->ordinal, t0, t1, &x, &y, &kind, &nwin)) {
		r->idle_ns = y - x;
		r->unres_ns = t1 - y;
		r->counter = kind;
		r->nwin = nwin;
		d->span_start = x;
		head_idle(e, d, &f, x, y);
		if (y < t1)
			head_unresolved(e, d, &f, y, t1);
	} else {
		x = t1;
	}
	r->outside_ns = x - t0;
	/* what the threads were doing over the whole head, counted nowhere */
	r->label = calloc(1, sizeof(*r->label));
	all = (struct ig_piece){ .t0 = t0, .t1 = t1, .tid = f.tid, .tgid = f.tgid,
				 .device = d->ordinal };
	if (r->label)
		ig_attrib_into(e, r->label, &all);
}

/* Has the counter of @d covered its first work? */
static bool covered(const struct ig_head *h, const struct ig_device *d)
{
	const struct head_win *w = h->wins.v;
	uint32_t i;

	if (!live(h, d->ordinal))
		return false;
	for (i = h->wins.n; i-- > 0;)
		if (w[i].device == d->ordinal)
			return w[i].t1 >= d->span_start;
	return false;
}

uint64_t ig_head_keep_floor(const struct ig_engine *e)
{
	const struct ig_head *h = e->head;

	return h && h->keeping ? h->keep : UINT64_MAX;
}

uint64_t ig_head_cutoff(const struct ig_engine *e, const struct ig_thread *t)
{
	const struct ig_head *h = e->head;

	return h && h->keeping && h->keep < e->win.cutoff && t->exit_ts == IG_NS_INF &&
	       t->proc && t->proc->first_seen <= h->keep ?
	       ig_max64(h->keep, e->win.cap_cutoff) : e->win.cutoff;
}

void ig_head_poll(struct ig_engine *e)
{
	struct ig_head *h = e->win.have_meta && !e->merge ? head_of(e) : NULL;
	uint32_t i;

	if (!h)
		return;

	for (i = 0; i < e->gpu.ndevs; i++) {
		struct ig_device *d = e->gpu.devs[i];

		if (d->active && !settled(h, d->ordinal) &&
		    (covered(h, d) || e->win.now > d->span_start + HEAD_WAIT_NS))
			head_dev(e, d, e->win.meta_ts);
	}
	h->keep = ig_head_keep_from(e);
	h->keeping = h->keep != UINT64_MAX;
}

uint64_t ig_head_keep_from(const struct ig_engine *e)
{
	const struct ig_process *p;
	uint32_t it = 0, i;

	if (!e->win.have_meta || e->merge || e->win.now > e->win.meta_ts + e->window_ns)
		return UINT64_MAX;
	for (i = 0; e->head && i < e->gpu.ndevs; i++)
		if (e->gpu.devs[i]->active && !settled(e->head, e->gpu.devs[i]->ordinal))
			return e->win.meta_ts;
	/* one followed from the start whose first work is still to come,
	 * or whose device is still to settle */
	while ((p = ig_htab_next(&e->tasks.procs, &it)))
		if (p->first_seen <= e->win.meta_ts && p->exit_ts == IG_NS_INF &&
		    (!e->head || !ig_htab_ent(&e->head->first, p->pid) ||
		     !settled(e->head, ig_gpu_proc_device(p))))
			return e->win.meta_ts;
	return UINT64_MAX;
}

void ig_head_finish(struct ig_engine *e)
{
	uint32_t i;

	/* several hosts' recordings, or none that says where it began */
	if (!e->win.have_meta || e->merge || !head_of(e))
		return;
	for (i = 0; i < e->gpu.ndevs; i++)
		head_dev(e, e->gpu.devs[i], e->win.meta_ts);
}

/* The thread that submitted the newest work pending on @d. */
static bool tail_feeder(const struct ig_device *d, struct ig_gap *g)
{
	const struct ig_stream *s = NULL;
	uint32_t i;

	for (i = 0; i < d->nopen; i++)
		if (d->open[i]->feeder_tid &&
		    (!s || d->open[i]->pending_until > s->pending_until))
			s = d->open[i];
	if (!s)
		return false;
	g->tid = s->feeder_tid;
	g->tgid = s->feeder_tgid;
	return true;
}

/* The tail of @d: tracing stopped at @end with its work still pending,
 * so its span ended at its last evidence, a.  Its counter's windows
 * reading 0% after a saw no work run there: the run of them reaching
 * furthest is idle, a gap of the thread that submitted last, walked as
 * any other; from a to that run the work may have run: unresolved.
 * After the run nothing is proven, and it stays outside the span. */
static void tail_dev(struct ig_engine *e, struct ig_device *d, uint64_t end,
		     const struct head_win *w, uint32_t nw)
{
	struct ig_head *h = e->head;
	struct ig_tail_dev *r;
	struct ig_gap f = { 0 };
	uint64_t a = d->final_until, x = 0, y = 0;
	uint16_t kind = 0;
	uint32_t nwin = 0;

	if (!d->active || !d->nopen || a >= end || h->ntail == IG_MAX_DEVICES ||
	    !live(h, d->ordinal) || !tail_feeder(d, &f) ||
	    !zero_run(w, nw, d->ordinal, a, end, &x, &y, &kind, &nwin))
		return;
	r = &h->tail[h->ntail++];
	*r = (struct ig_tail_dev){ .device = d->ordinal, .from = a, .to = y,
				   .idle_ns = y - x, .unres_ns = x - a, .tid = f.tid,
				   .tgid = f.tgid, .counter = kind, .nwin = nwin };
	if (x > a)
		head_unresolved(e, d, &f, a, x);
	head_idle(e, d, &f, x, y);
	d->final_until = y;
}

void ig_head_tail(struct ig_engine *e, uint64_t end)
{
	struct ig_head *h = e->win.have_meta && !e->merge ? e->head : NULL;
	struct head_win *w;
	uint32_t i, n;

	if (!h || !h->nrecent || !(w = malloc(sizeof(h->recent))))
		return;
	/* the ring in arrival order */
	n = h->nrecent < TAIL_WINS ? h->nrecent : TAIL_WINS;
	for (i = 0; i < n; i++)
		w[i] = h->recent[(h->nrecent - n + i) % TAIL_WINS];
	for (i = 0; i < e->gpu.ndevs; i++)
		tail_dev(e, e->gpu.devs[i], end, w, n);
	free(w);
}

const struct ig_tail_dev *ig_head_tail_dev(const struct ig_engine *e, uint32_t i)
{
	return e->head && i < e->head->ntail ? &e->head->tail[i] : NULL;
}

const struct ig_head_dev *ig_head_dev(const struct ig_engine *e, uint32_t i)
{
	return e->head && i < e->head->ndev ? &e->head->dev[i] : NULL;
}

const struct ig_head_dev *ig_head_of(const struct ig_engine *e, int device)
{
	uint32_t i;

	for (i = 0; e->head && i < e->head->ndev; i++)
		if (e->head->dev[i].device == device)
			return &e->head->dev[i];
	return NULL;
}

void ig_head_free(struct ig_engine *e)
{
	uint32_t i;

	if (!e->head)
		return;
	ig_htab_free(&e->head->first);
	free(e->head->wins.v);
	for (i = 0; i < e->head->ndev; i++)
		free(e->head->dev[i].label);
	free(e->head);
	e->head = NULL;
}
