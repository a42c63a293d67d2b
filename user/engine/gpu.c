// SPDX-License-Identifier: GPL-2.0
/*
 * The GPU evidence model (docs/design.md §4).
 *
 * Each stream is either pending (work submitted, not yet proven complete)
 * or drained.  A device is known idle while none of its streams is pending,
 * known busy where a blocked sync or a NOT_READY query proves a queue was
 * non-empty, and unresolved otherwise.
 *
 * Evidence about the past arrives late: a sync's drained point is its last
 * wakeup, which may precede records already seen (another thread's
 * submission), and busy evidence arrives when the sync returns.  So the
 * device timeline is finalised lazily, up to a watermark below which every
 * stream's state is known: the newest record time, but no later than what
 * each still-pending stream is known to have been pending until.  A sweep
 * over the unfinalised stream intervals then classifies time and closes
 * idle gaps; a gap is attributed the moment it is found.
 */
#include <stdlib.h>
#include <string.h>
#include "engine/model.h"

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

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static struct ig_device *dev_get(struct ig_engine *e, int ordinal)
{
	struct ig_device *d;
	uint32_t i;

	for (i = 0; i < e->ndevs; i++)
		if (e->devs[i]->ordinal == ordinal)
			return e->devs[i];
	if (e->ndevs == IG_MAX_DEVICES)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->ordinal = ordinal;
	d->closed.esz = sizeof(struct ig_pend);
	d->busy.esz = sizeof(struct ig_busy);
	/* keep devices sorted by ordinal for the report */
	for (i = e->ndevs; i > 0 && e->devs[i - 1]->ordinal > ordinal; i--)
		e->devs[i] = e->devs[i - 1];
	e->devs[i] = d;
	e->ndevs++;
	return d;
}

static struct ig_device *proc_dev(struct ig_engine *e, struct ig_process *p)
{
	return dev_get(e, p->device_set ? p->device : 0);
}

static struct ig_stream *stream_get(struct ig_engine *e, struct ig_process *p,
				    uint64_t key)
{
	struct ig_stream *s = ig_htab_get(&p->streams, key);
	struct ig_device *d;

	if (s)
		return s;
	d = proc_dev(e, p);
	if (!d)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (ig_htab_put(&p->streams, key, s)) {
		free(s);
		return NULL;
	}
	s->key = key;
	s->proc = p;
	s->dev = d;
	/* the legacy stream syncs with itself; streams never seen created
	 * are assumed non-blocking, so legacy syncs do not drain them */
	s->blocking = key == IG_STREAM_LEGACY;
	d->nstreams++;
	return s;
}

static void dev_activate(struct ig_device *d, uint64_t ts)
{
	if (d->active)
		return;
	d->active = true;
	d->span_start = ts;
	d->fin = ts;
	d->last_ev = ts;
}

static void stream_open(struct ig_stream *s, uint64_t t, uint64_t kpu,
			uint32_t tid, uint32_t tgid)
{
	struct ig_device *d = s->dev;

	if (s->pending)
		return;
	if (d->nopen == d->capopen) {
		uint32_t cap = d->capopen ? d->capopen * 2 : 8;
		struct ig_stream **o = realloc(d->open, cap * sizeof(*o));

		if (!o)
			return;
		d->open = o;
		d->capopen = cap;
	}
	s->pending = true;
	s->p_start = max64(t, d->fin);
	s->kpu = max64(kpu, s->p_start);
	s->feeder_tid = tid;
	s->feeder_tgid = tgid;
	s->open_idx = d->nopen;
	d->open[d->nopen++] = s;
}

static void add_closed(struct ig_device *d, uint64_t t0, uint64_t t1,
		       uint32_t tid, uint32_t tgid, uint32_t how)
{
	struct ig_pend *p;

	t0 = max64(t0, d->fin);
	if (t1 < t0)
		t1 = t0;
	p = ig_vec_push(&d->closed);
	if (!p)
		return;
	p->t0 = t0;
	p->t1 = t1;
	p->tid = tid;
	p->tgid = tgid;
	p->how = how;
	p->pad = 0;
}

static void add_busy(struct ig_device *d, uint64_t t0, uint64_t t1)
{
	struct ig_busy *b;

	t0 = max64(t0, d->fin);
	if (t1 <= t0)
		return;
	b = ig_vec_push(&d->busy);
	if (b) {
		b->t0 = t0;
		b->t1 = t1;
	}
}

/* The stream is proven empty at t: its pending interval ends there, in
 * the way @how says (enum ig_bound). */
static void stream_close(struct ig_stream *s, uint64_t t, uint32_t how)
{
	struct ig_device *d = s->dev;
	struct ig_stream *last;

	t = max64(t, max64(s->kpu, d->fin));
	if (s->pending) {
		add_closed(d, s->p_start, t, s->feeder_tid, s->feeder_tgid,
			   how);
		last = d->open[--d->nopen];
		d->open[s->open_idx] = last;
		last->open_idx = s->open_idx;
		s->pending = false;
	}
	s->drained_at = max64(s->drained_at, t);
	s->drained_once = true;
}

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
	if (n * sizeof(struct sev) > e->scratch_cap) {
		size_t cap = n * 2 * sizeof(struct sev);
		void *p = realloc(e->scratch, cap);

		if (!p)
			return NULL;
		e->scratch = p;
		e->scratch_cap = cap;
	}
	return e->scratch;
}

static void unres_list_flush(struct ig_engine *e, struct ig_device *d)
{
	struct ig_gap g;

	if (!d->ua_open)
		return;
	g.t0 = d->ua_t0;
	g.t1 = d->ua_t1;
	g.tid = d->ua_tid;
	g.tgid = d->ua_tgid;
	g.device = d->ordinal;
	g.pad = 0;
	ig_gaplist_add(&e->unres_list, &g);
	d->unres_spans++;
	d->ua_open = false;
}

static void piece_flush(struct sweep *sw)
{
	struct ig_device *d = sw->d;

	if (!sw->pc_open)
		return;
	sw->pc_open = false;
	ig_defer_piece(sw->e, &sw->pc);
	if (d->ua_open && d->ua_t1 == sw->pc.t0 && d->ua_tid == sw->pc.tid) {
		d->ua_t1 = sw->pc.t1;
		return;
	}
	unres_list_flush(sw->e, d);
	d->ua_open = true;
	d->ua_t0 = sw->pc.t0;
	d->ua_t1 = sw->pc.t1;
	d->ua_tid = sw->pc.tid;
	d->ua_tgid = sw->pc.tgid;
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
	ig_hist_add(&e->gap_hist, t1 - t0);
	g.t0 = t0;
	g.t1 = t1;
	g.tid = tid;
	g.tgid = tgid;
	g.device = d->ordinal;
	g.pad = 0;
	ig_gaplist_add(&e->gaps, &g);
	if (e->obs.span)
		memset(e->obs_walk, 0, sizeof(*e->obs_walk));
	ig_attribute(e, true, tid, tgid, t0, t1);
	if (e->obs.span)
		ig_obs_gap(e, d, &g);
}

/* An unresolved run ended: idle after it (the drain that ended it says
 * how) or busy evidence (the GPU still had work when the host asked). */
static void run_end(struct ig_engine *e, struct ig_device *d, uint32_t how)
{
	ig_obs_span(e, d, IG_OBS_UNRES, d->ur_t0, d->ur_t1, 0, 0,
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
		ig_obs_span(sw->e, d, IG_OBS_BUSY, x, y, tid, tgid, 0);
		return;
	}
	if (!d->ur_ns)
		d->ur_t0 = x;
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
}

static size_t collect(struct ig_engine *e, struct ig_device *d, uint64_t W,
		      struct sev *ev)
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

		if (p->t0 > W || (p->t1 <= d->fin && p->t1 > p->t0) ||
		    p->t1 < d->fin)
			continue;
		ADD(max64(p->t0, d->fin), EV_PEND_START, p->tid, p->tgid);
		if (p->t1 <= W) {
			ADD(p->t1, EV_PEND_END, 0, 0);
			ev[n - 1].how = p->how;
		}
	}
	for (i = 0; i < d->nopen; i++, id++) {
		const struct ig_stream *s = d->open[i];

		if (s->p_start <= W)
			ADD(max64(s->p_start, d->fin), EV_PEND_START,
			    s->feeder_tid, s->feeder_tgid);
	}
	for (i = 0; i < e->loss.n; i++, id++) {
		const struct ig_busy *l = (struct ig_busy *)e->loss.v + i;

		if (l->t0 > W || l->t1 <= d->fin)
			continue;
		ADD(max64(l->t0, d->fin), EV_PEND_START, 0, 0);
		if (l->t1 <= W)
			ADD(l->t1, EV_PEND_END, 0, 0);
	}
	for (i = 0; i < d->busy.n; i++, id++) {
		const struct ig_busy *b = (struct ig_busy *)d->busy.v + i;

		if (b->t0 >= W || b->t1 <= d->fin)
			continue;
		ADD(max64(b->t0, d->fin), EV_BUSY_START, 0, 0);
		if (b->t1 <= W)
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

static bool pend_gone(const void *el, uint64_t fin)
{
	const struct ig_pend *p = el;

	return p->t1 < fin || (p->t1 == fin && p->t1 > p->t0);
}

static bool busy_gone(const void *el, uint64_t fin)
{
	return ((const struct ig_busy *)el)->t1 <= fin;
}

static void dev_sweep(struct ig_engine *e, struct ig_device *d, uint64_t W)
{
	size_t nmax = 2 * (d->closed.n + d->busy.n + e->loss.n) + d->nopen;
	struct sweep sw = { .e = e, .d = d };
	struct active *act;
	size_t n, i, nact = 0;
	uint32_t tid, tgid;
	uint32_t npend = 0, nbusy = 0;
	uint64_t cur = d->fin;
	struct sev *ev;

	if (W <= d->fin)
		return;
	ev = sev_buf(e, nmax * 2 + 1);
	if (!ev)
		return;
	/* the second half of the buffer holds the active set */
	act = (struct active *)(ev + nmax + 1);
	n = collect(e, d, W, ev);
	qsort(ev, n, sizeof(*ev), sev_cmp);
	sw.run_idle = d->idle_open;
	sw.run_t0 = d->fin;

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
	if (W > cur) {
		feeder_of(act, nact, &tid, &tgid);
		segment(&sw, nbusy ? SEG_BUSY : npend ? SEG_UNRES : SEG_IDLE,
			cur, W, tid, tgid);
	}
	piece_flush(&sw);
	if (sw.run_idle) {
		d->fin = sw.run_t0;	/* an open gap: re-swept next time */
		d->idle_open = true;
	} else {
		d->fin = W;
		d->idle_open = false;
	}
	ig_vec_drop_where(&d->closed, pend_gone, d->fin);
	ig_vec_drop_where(&d->busy, busy_gone, d->fin);
}

/* Finalise what can be: up to the newest record, but not past what each
 * pending stream is known to have been pending until. */
static void dev_advance(struct ig_engine *e, struct ig_device *d)
{
	uint64_t W = e->now;
	uint32_t i;

	if (!d || !d->active)
		return;
	/* too much unfinalised evidence (a stream that never drains): treat
	 * pending streams as pending up to now; idle may shrink, never grow */
	if (d->closed.n < IG_DEV_CLOSED_CAP && d->busy.n < IG_DEV_CLOSED_CAP)
		for (i = 0; i < d->nopen; i++)
			W = min64(W, d->open[i]->kpu);
	dev_sweep(e, d, W);
}

/* ---- records ---- */

static uint64_t stream_key(const struct ig_cuda *c)
{
	return c->stream ? c->stream : IG_STREAM_LEGACY;
}

static void count_subs(struct ig_engine *e, struct ig_process *p,
		       const struct ig_cuda *c, bool submission)
{
	uint64_t n = c->nsub;

	if (submission) {
		if (!n)
			n = 1;
		e->submissions++;
		p->submissions++;
		if (c->api < IG_API__MAX) {
			e->sub_by_api[c->api]++;
			e->launch_by_api[c->api] += n;
		}
	}
	e->launches += n;
	p->launches += n;
}

/* Work was enqueued on the stream the record names. */
static void on_submit(struct ig_engine *e, struct ig_process *p,
		      const struct ig_cuda *c)
{
	struct ig_stream *s = stream_get(e, p, stream_key(c));
	struct ig_device *d;

	count_subs(e, p, c, true);
	p->on_gpu = true;
	if (!s)
		return;
	d = s->dev;
	dev_activate(d, c->h.ts);
	d->last_ev = max64(d->last_ev, c->h.ts);
	if (s->pending)
		s->kpu = max64(s->kpu, c->h.ts);
	else
		stream_open(s, c->h.ts, c->h.ts, c->h.tid, c->h.tgid);
	dev_advance(e, d);
}

/* Streams a sync's return proves drained. */
static size_t sync_scope(struct ig_engine *e, struct ig_process *p,
			 const struct ig_cuda *c, struct ig_stream **out,
			 size_t max)
{
	enum ig_api_class cls = ig_api_class_of(c->api);
	size_t n = 0;
	uint32_t i;

	switch (cls) {
	case IG_AC_EVENT_SYNC:
	case IG_AC_EVENT_QUERY:
		/* a partial event proves nothing about its stream */
		if (!(c->flags & IG_CF_EVENT_ALL) || !c->stream)
			return 0;
		out[0] = stream_get(e, p, c->stream);
		return out[0] ? 1 : 0;
	case IG_AC_SYNC_COPY:
		/* the streams the copy's own stream waits for (docs/design.md
		 * §4.2), as the kernel side marks them drained */
		for (i = 0; i < p->streams.cap && n < max; i++) {
			struct ig_stream *s = p->streams.vals[i];

			if (s && ig_stream_syncs_with(stream_key(c), 0, s->key,
						      s->blocking))
				out[n++] = s;
		}
		return n;
	case IG_AC_CTX_SYNC:
		break;
	default:
		if (c->stream) {
			out[0] = stream_get(e, p, c->stream);
			return out[0] ? 1 : 0;
		}
		break;
	}
	for (i = 0; i < p->streams.cap && n < max; i++)
		if (p->streams.vals[i])
			out[n++] = p->streams.vals[i];
	if (!n && (out[0] = stream_get(e, p, IG_STREAM_LEGACY)))
		n = 1;
	return n;
}

/*
 * Drained at dpt for the streams in scope.  `last_submit` is the newest
 * submission the kernel saw before the call returned.  A sync waits for
 * the work queued when it was called (`called`, 0 for queries): work
 * queued by another thread during the call, or after the drained point,
 * is not proven complete, and nothing can be closed.
 */
static void drain(struct ig_engine *e, struct ig_process *p,
		  const struct ig_cuda *c, uint64_t dpt, uint64_t called,
		  bool blocked, bool busy_ok, uint32_t how)
{
	struct ig_stream *scope[256];
	struct ig_device *touched[8], *d;
	size_t n = sync_scope(e, p, c, scope, 256), i, k, nt = 0;
	bool late = c->last_submit > dpt ||
		    (called && c->last_submit > called);
	bool any_pending = false;
	uint64_t first_pend = IG_NS_INF, seen_drained = 0;

	if (!n)
		return;
	for (i = 0; i < n; i++) {
		struct ig_stream *s = scope[i];

		for (k = 0; k < nt && touched[k] != s->dev; k++)
			;
		if (k == nt && nt < 8)
			touched[nt++] = s->dev;
		if (s->pending) {
			any_pending = true;
			if (s->p_start <= dpt)
				first_pend = min64(first_pend, s->p_start);
			if (!late && s->p_start <= dpt)
				stream_close(s, dpt, how);
		} else {
			seen_drained = max64(seen_drained, s->drained_at);
			if (!s->dev->active && !late)
				stream_close(s, dpt, how);
		}
	}
	d = scope[0]->dev;
	if (d->active) {
		d->last_ev = max64(d->last_ev, c->h.ts);
		if (!any_pending && c->last_submit > seen_drained &&
		    (blocked || late)) {
			/* work we never saw submitted (a lost record, or work
			 * queued before the probes were attached): pending
			 * since at least what is already final, never idle */
			first_pend = d->fin;
			if (late) {
				stream_open(scope[0], d->fin, c->h.ts, c->h.tid,
					    c->h.tgid);
			} else {
				add_closed(d, d->fin, dpt, c->h.tid, c->h.tgid,
					   how);
				stream_close(scope[0], dpt, how);
			}
			any_pending = true;
		}
		/* a sync that slept proves the queue non-empty from its last
		 * submission until the drained point */
		if (busy_ok && blocked && any_pending && c->last_submit &&
		    c->last_submit <= dpt && first_pend != IG_NS_INF)
			add_busy(d, max64(c->last_submit, first_pend), dpt);
	}
	for (k = 0; k < nt; k++) {
		if (touched[k]->active)
			touched[k]->last_ev = max64(touched[k]->last_ev,
						    c->h.ts);
		dev_advance(e, touched[k]);
	}
}

static void on_sync_begin(struct ig_engine *e, struct ig_process *p,
			  const struct ig_cuda *c)
{
	/* a synchronous copy is a submission on the stream it names */
	if (ig_api_class_of(c->api) == IG_AC_SYNC_COPY)
		on_submit(e, p, c);
}

/* Longest on-CPU stretch between a sync's last wakeup and its return that
 * still lets the wakeup stand for the GPU's completion: returning from the
 * driver takes microseconds (plus the return probe's own cost). */
#define WAKE_TO_RETURN_NS	200000ULL

/*
 * Was the sync's last wakeup the one that ended its wait?  A driver that
 * blocked on an internal lock and then polled the GPU would be woken by
 * the lock's holder before the GPU finished, and run (or be preempted and
 * run again) until it returns.  The wakeup stands only if the thread went
 * from it straight back to returning: no later off-CPU interval, and a
 * short run.
 */
static bool woke_to_return(struct ig_engine *e, const struct ig_cuda *c)
{
	const struct ig_thread *t = ig_thread_find(e, c->h.tid);
	const struct ig_ival *iv = t ? ig_ring_back(&t->ivals) : NULL;

	if (!iv || iv->t_on < c->t_wake)
		return true;	/* its interval was too short to be sent */
	if (iv->t_wake != c->t_wake)
		return false;	/* off CPU again after the wakeup */
	return c->h.ts - iv->t_on <= WAKE_TO_RETURN_NS;
}

/* Time the thread was runnable but not running inside [t0, t1]: being
 * preempted is not waiting for the GPU. */
static uint64_t runnable_in(const struct ig_engine *e, uint32_t tid,
			    uint64_t t0, uint64_t t1)
{
	const struct ig_thread *t = ig_thread_find(e, tid);
	uint64_t sum = 0, a, b;
	uint32_t i;

	for (i = t ? t->ivals.len : 0; i > 0; i--) {
		const struct ig_ival *iv = ig_ring_at(&t->ivals, i - 1);

		if (iv->t_on <= t0)
			break;
		a = max64(iv->t_wake ? iv->t_wake : iv->t_off, t0);
		b = min64(iv->t_on, t1);
		if (b > a)
			sum += b - a;
	}
	return sum;
}

/* Classify by the time inside the call, not by whether the thread slept:
 * real drivers often spin while they wait.  Time spent preempted does not
 * count. */
static uint32_t sync_bound(const struct ig_engine *e, const struct ig_cuda *c)
{
	uint64_t in;

	if (!c->t_begin || c->t_begin > c->h.ts)
		return IG_B_OPEN;
	in = c->h.ts - c->t_begin;
	in -= min64(in, runnable_in(e, c->h.tid, c->t_begin, c->h.ts));
	return in <= IG_AT_ONCE_NS ? IG_B_HOST : IG_B_GPU;
}

static void on_sync_end(struct ig_engine *e, struct ig_process *p,
			const struct ig_cuda *c)
{
	bool blocked = (c->flags & IG_CF_BLOCKED) != 0;
	bool copy = ig_api_class_of(c->api) == IG_AC_SYNC_COPY;
	/* A sync's last wakeup is when the GPU finished (it submits nothing
	 * itself).  A synchronous copy may wait for earlier work, then stage
	 * and copy without waiting again: only its return proves the copy's
	 * own work done. */
	uint64_t dpt = blocked && c->t_wake && !copy &&
		       woke_to_return(e, c) ? c->t_wake : c->h.ts;

	count_subs(e, p, c, false);
	if (c->ret != 0)	/* an error return proves nothing */
		return;
	if (dpt > c->h.ts)
		dpt = c->h.ts;
	/* the host stages pageable copies itself: never busy evidence; a
	 * copy's own submission is its entry, so `called` does not apply */
	/* a synchronous copy's time is its own staging and transfer as much
	 * as waiting: it says nothing about which side was behind */
	drain(e, p, c, dpt, copy ? 0 : c->t_begin, blocked, !copy,
	      copy ? IG_B_OPEN : sync_bound(e, c));
}

static void on_query_busy(struct ig_engine *e, struct ig_process *p,
			  const struct ig_cuda *c)
{
	struct ig_stream *s;
	struct ig_device *d;
	uint64_t t0;

	count_subs(e, p, c, false);
	if (!c->stream)
		return;
	s = stream_get(e, p, c->stream);
	if (!s || !s->dev->active)
		return;
	d = s->dev;
	d->last_ev = max64(d->last_ev, c->h.ts);
	/* not ready at ts, nothing submitted after last_submit: the queue
	 * was non-empty, so the GPU executing, all of [last_submit, ts] */
	if (s->pending)
		s->kpu = max64(s->kpu, c->h.ts);
	else
		stream_open(s, d->fin, c->h.ts, c->h.tid, c->h.tgid);
	t0 = max64(c->last_submit, s->p_start);
	if (c->last_submit && c->last_submit <= c->h.ts)
		add_busy(d, t0, c->h.ts);
	dev_advance(e, d);
}

void ig_gpu_cuda(struct ig_engine *e, const struct ig_cuda *c)
{
	struct ig_process *p = ig_process_get(e, c->h.tgid, c->h.ts);
	struct ig_stream *s;

	if (!p)
		return;
	switch (c->kind) {
	case IG_CU_SUBMIT:
		on_submit(e, p, c);
		break;
	case IG_CU_SYNC_BEGIN:
		on_sync_begin(e, p, c);
		break;
	case IG_CU_SYNC_END:
		on_sync_end(e, p, c);
		break;
	case IG_CU_QUERY_BUSY:
		on_query_busy(e, p, c);
		break;
	case IG_CU_QUERY_DONE:
		count_subs(e, p, c, false);
		/* a query never waits: it found the work done */
		drain(e, p, c, c->h.ts, 0, false, false, IG_B_HOST);
		break;
	case IG_CU_STREAM_NEW:
		/* CU_STREAM_NON_BLOCKING (0x1): no implicit legacy sync */
		s = c->stream ? stream_get(e, p, c->stream) : NULL;
		if (s)
			s->blocking = !(c->arg & 0x1);
		break;
	case IG_CU_CTX:
		p->device = (int)c->arg;
		p->device_set = true;
		break;
	default:
		break;
	}
}

/* The process is gone and its contexts with it: its queues cannot hold
 * work past this point. */
void ig_gpu_proc_exit(struct ig_engine *e, struct ig_process *p, uint64_t ts)
{
	struct ig_device *touched[IG_MAX_DEVICES];
	uint32_t i, nt = 0, k;

	for (i = 0; i < p->streams.cap; i++) {
		struct ig_stream *s = p->streams.vals[i];

		if (!s)
			continue;
		if (s->pending)
			stream_close(s, ts, IG_B_OPEN);
		for (k = 0; k < nt && touched[k] != s->dev; k++)
			;
		if (k == nt && nt < IG_MAX_DEVICES)
			touched[nt++] = s->dev;
		s->dev->nstreams--;
		free(s);
		p->streams.vals[i] = NULL;
	}
	p->streams.n = 0;
	for (k = 0; k < nt; k++) {
		if (touched[k]->active)
			touched[k]->last_ev = max64(touched[k]->last_ev, ts);
		dev_advance(e, touched[k]);
	}
}

void ig_gpu_finish(struct ig_engine *e)
{
	uint32_t i;

	for (i = 0; i < e->ndevs; i++) {
		struct ig_device *d = e->devs[i];

		if (!d->active)
			continue;
		/* pending streams count as pending up to the last evidence;
		 * an idle gap still open at the end is left out */
		dev_sweep(e, d, max64(d->fin, d->last_ev));
		/* the last unresolved run ended at the last evidence if that
		 * drained every stream */
		if (d->ur_ns && !d->nopen)
			run_end(e, d, d->end_how);
		else if (d->ur_ns)	/* open: reported as such */
			ig_obs_span(e, d, IG_OBS_UNRES, d->ur_t0, d->ur_t1, 0, 0, IG_OBS_OPEN);
		unres_list_flush(e, d);
	}
}

uint64_t ig_gpu_keep_from(const struct ig_engine *e)
{
	uint64_t keep = IG_NS_INF;
	uint32_t i;

	for (i = 0; i < e->ndevs; i++)
		if (e->devs[i]->active)
			keep = min64(keep, e->devs[i]->fin);
	return keep;
}

/* Evidence may be missing in [t0, t1]: no idle time is proven there, and
 * attribution reports it as unknown. */
void ig_gpu_mark_lost(struct ig_engine *e, uint64_t t0, uint64_t t1)
{
	struct ig_busy *l;
	uint32_t i;

	e->evidence_lost = true;
	if (t1 < t0)
		return;
	l = ig_vec_push(&e->loss);
	if (!l)
		return;
	l->t0 = t0;
	l->t1 = t1;
	for (i = 0; i < e->ndevs; i++)
		dev_advance(e, e->devs[i]);
}

uint64_t ig_gpu_span_end(const struct ig_device *d)
{
	return d->fin;
}

void ig_gpu_free(struct ig_engine *e)
{
	uint32_t i;

	free(e->obs_walk);
	e->obs_walk = NULL;
	for (i = 0; i < e->ndevs; i++) {
		struct ig_device *d = e->devs[i];

		free(d->open);
		free(d->closed.v);
		free(d->busy.v);
		free(d);
	}
	e->ndevs = 0;
	if (e->procs.vals) {
		for (i = 0; i < e->procs.cap; i++) {
			struct ig_process *p = e->procs.vals[i];
			uint32_t k;

			if (!p)
				continue;
			for (k = 0; k < p->streams.cap; k++) {
				free(p->streams.vals[k]);
				p->streams.vals[k] = NULL;
			}
			p->streams.n = 0;
		}
	}
}
