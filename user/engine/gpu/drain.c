// SPDX-License-Identifier: GPL-2.0
/*
 * CUDA calls into stream state (docs/design.md §4): submissions open a
 * stream's pending interval; syncs and queries drain the streams they
 * cover (sync_scope) and, when they waited, prove the device busy.
 */
#include <stdlib.h>
#include <string.h>
#include "engine/model.h"
#include "engine/tasks.h"
#include "engine/gpu/gpu.h"

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
		e->acct.submissions++;
		p->submissions++;
		if (c->api < IG_API__MAX) {
			e->acct.sub_by_api[c->api]++;
			e->acct.launch_by_api[c->api] += n;
		}
	}
	e->acct.launches += n;
	p->launches += n;
}

/* Work was enqueued on the stream the record names. */
static void on_submit(struct ig_engine *e, struct ig_process *p,
		      const struct ig_cuda *c)
{
	struct ig_stream *s = ig_gpu_stream_get(e, p, stream_key(c));
	struct ig_device *d;

	count_subs(e, p, c, true);
	p->on_gpu = true;
	if (!s)
		return;
	d = s->dev;
	ig_gpu_dev_activate(d, c->h.ts);
	d->last_ev = ig_max64(d->last_ev, c->h.ts);
	if (s->pending)
		s->pending_until = ig_max64(s->pending_until, c->h.ts);
	else
		ig_gpu_stream_open(s, c->h.ts, c->h.ts, c->h.tid, c->h.tgid);
	ig_sweep_advance(e, d);
}

/* Streams a sync's return proves drained. */
static size_t sync_scope(struct ig_engine *e, struct ig_process *p,
			 const struct ig_cuda *c, struct ig_stream **out,
			 size_t max)
{
	enum ig_api_class cls = ig_api_class_of(c->api);
	struct ig_stream *s;
	size_t n = 0;
	uint32_t it = 0;

	switch (cls) {
	case IG_AC_EVENT_SYNC:
	case IG_AC_EVENT_QUERY:
		/* a partial event proves nothing about its stream */
		if (!(c->flags & IG_CF_EVENT_ALL) || !c->stream)
			return 0;
		out[0] = ig_gpu_stream_get(e, p, c->stream);
		return out[0] ? 1 : 0;
	case IG_AC_SYNC_COPY:
		/* the streams the copy's own stream waits for (docs/design.md
		 * §4.2), as the kernel side marks them drained */
		while (n < max && (s = ig_htab_next(&p->streams, &it))) {
			if (ig_stream_syncs_with(stream_key(c), 0, s->key,
						 s->blocking))
				out[n++] = s;
		}
		return n;
	case IG_AC_CTX_SYNC:
		break;
	default:
		if (c->stream) {
			out[0] = ig_gpu_stream_get(e, p, c->stream);
			return out[0] ? 1 : 0;
		}
		break;
	}
	it = 0;
	while (n < max && (s = ig_htab_next(&p->streams, &it)))
		out[n++] = s;
	if (!n && (out[0] = ig_gpu_stream_get(e, p, IG_STREAM_LEGACY)))
		n = 1;
	return n;
}

/*
 * Drained at drained_t for the streams in scope.  `last_submit` is the newest
 * submission the kernel saw before the call returned.  A sync waits for
 * the work queued when it was called (`called`, 0 for queries): work
 * queued by another thread during the call, or after the drained point,
 * is not proven complete, and nothing can be closed.
 */
static void drain(struct ig_engine *e, struct ig_process *p,
		  const struct ig_cuda *c, uint64_t drained_t, uint64_t called,
		  bool blocked, uint64_t busy_to, uint32_t how)
{
	struct ig_stream *scope[256];
	struct ig_device *touched[8], *d;
	size_t n = sync_scope(e, p, c, scope, 256), i, k, nt = 0;
	bool late = c->last_submit > drained_t ||
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
			if (s->p_start <= drained_t)
				first_pend = ig_min64(first_pend, s->p_start);
			if (!late && s->p_start <= drained_t) {
				/* its last submission was not done at the
				 * sync's entry: queued until the drain */
				if (how == IG_B_GPU) {
					s->waited_from = ig_max64(s->p_start,
						ig_min64(s->pending_until, called ? called : drained_t));
					s->waited_to = drained_t;
					s->waited_pend = s->p_start;
					s->waited_tid = c->h.tid;
				}
				ig_gpu_stream_close(s, drained_t, how);
			}
		} else {
			seen_drained = ig_max64(seen_drained, s->drained_at);
			if (!s->dev->active && !late)
				ig_gpu_stream_close(s, drained_t, how);
		}
	}
	d = scope[0]->dev;
	if (d->active) {
		d->last_ev = ig_max64(d->last_ev, c->h.ts);
		if (!any_pending && c->last_submit > seen_drained &&
		    (blocked || late)) {
			/* work we never saw submitted (a lost record, or work
			 * queued before the probes were attached): pending
			 * since at least what is already final, never idle */
			first_pend = d->final_until;
			if (late) {
				ig_gpu_stream_open(scope[0], d->final_until, c->h.ts, c->h.tid,
					    c->h.tgid);
			} else {
				ig_gpu_add_closed(d, d->final_until, drained_t, c->h.tid, c->h.tgid,
					   how);
				ig_gpu_stream_close(scope[0], drained_t, how);
			}
			any_pending = true;
		}
		/* a sync that slept proves the queue non-empty from its last
		 * submission until the drained point */
		if (busy_to && blocked && any_pending && c->last_submit &&
		    c->last_submit <= busy_to && first_pend != IG_NS_INF)
			ig_gpu_add_busy(d, ig_max64(c->last_submit, first_pend), busy_to);
	}
	for (k = 0; k < nt; k++) {
		if (touched[k]->active)
			touched[k]->last_ev = ig_max64(touched[k]->last_ev,
						    c->h.ts);
		ig_sweep_advance(e, touched[k]);
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
 * The drained point of a sync that slept.  Its last wakeup marks the GPU's
 * completion only if the thread went from it straight back to returning:
 * off the CPU again after it, or running on for long (spinning on the GPU),
 * the return does.  A driver that blocked on an internal lock (a mutex: a
 * plain futex wait) and then polled the GPU is woken by the lock's holder
 * before the GPU finished, and looks at the GPU only once it runs again:
 * left runnable after such a wakeup (preempted on a loaded host), the GPU
 * may have finished at any time until it ran, so the drained point is when
 * it got back on the CPU.  A wait of another kind (a condition variable or
 * semaphore, an ioctl, a poll) ended with the completion itself, and the
 * runnable time after it is the host's (§5.10).
 */
static uint64_t woke_drained_t(struct ig_engine *e, const struct ig_cuda *c)
{
	const struct ig_thread *t = ig_tasks_thread_find(e, c->h.tid);
	const struct ig_ival *iv = ig_tasks_thread_last_ival(t);

	if (!iv || iv->t_on < c->t_wake)
		return c->t_wake;	/* its interval was too short to be sent */
	if (iv->t_wake != c->t_wake || c->h.ts - iv->t_on > WAKE_TO_RETURN_NS)
		return c->h.ts;		/* off CPU again, or ran on for long */
	if (iv->reason == IG_R_FUTEX && (iv->flags & IG_F_FUTEX_PLAIN))
		return ig_max64(c->t_wake, iv->t_on);
	return c->t_wake;
}

/* The end of a sleeping sync's busy evidence (§4.5).  Drained when it got
 * back on the CPU after a mutex's wakeup: busy only until the wakeup, as
 * the time it then stayed runnable proves the GPU neither busy nor idle
 * (unresolved).  Otherwise busy until the drained point. */
static uint64_t woke_busy_to(struct ig_engine *e, const struct ig_cuda *c,
			     uint64_t drained_t)
{
	const struct ig_thread *t = ig_tasks_thread_find(e, c->h.tid);
	const struct ig_ival *iv = ig_tasks_thread_last_ival(t);

	if (iv && iv->t_wake == c->t_wake && iv->t_on == drained_t &&
	    c->t_wake < drained_t)
		return c->t_wake;
	return drained_t;
}

/* Time the thread was runnable but not running inside [t0, t1]: being
 * preempted is not waiting for the GPU. */
static uint64_t runnable_in(const struct ig_engine *e, uint32_t tid,
			    uint64_t t0, uint64_t t1)
{
	const struct ig_thread *t = ig_tasks_thread_find(e, tid);
	uint64_t sum = 0, a, b;
	uint32_t i;

	for (i = t ? t->ivals.len : 0; i > 0; i--) {
		const struct ig_ival *iv = ig_tasks_thread_ival(t, i - 1);

		if (iv->t_on <= t0)
			break;
		a = ig_max64(iv->t_wake ? iv->t_wake : iv->t_off, t0);
		b = ig_min64(iv->t_on, t1);
		if (b > a)
			sum += b - a;
	}
	return sum;
}

/* Classify by the time inside the call, not by whether the thread slept:
 * real drivers often spin while they wait.  Time spent preempted does not
 * count. */
/* The estimate's evidence from a sync or query that ended: through a tap
 * (lifecycle.c sets it), since the estimate calls the GPU model. */
static void sync_note(struct ig_engine *e, struct ig_process *p, uint64_t t_in,
		      uint64_t t_end, uint64_t t_wake, bool waited)
{
	if (e->gpu.sync_tap)
		e->gpu.sync_tap(e, p, t_in, t_end, t_wake, waited);
}

static uint32_t sync_bound(const struct ig_engine *e, const struct ig_cuda *c)
{
	uint64_t in;

	if (!c->t_begin || c->t_begin > c->h.ts)
		return IG_B_OPEN;
	in = c->h.ts - c->t_begin;
	in -= ig_min64(in, runnable_in(e, c->h.tid, c->t_begin, c->h.ts));
	return in <= IG_AT_ONCE_NS ? IG_B_HOST : IG_B_GPU;
}

static void on_sync_end(struct ig_engine *e, struct ig_process *p,
			const struct ig_cuda *c)
{
	bool blocked = (c->flags & IG_CF_BLOCKED) != 0;
	bool copy = ig_api_class_of(c->api) == IG_AC_SYNC_COPY;
	/* A sync's last wakeup, or when it ran again after it, is when the
	 * GPU was seen finished (it submits nothing itself).  A synchronous
	 * copy may wait for earlier work, then stage and copy without waiting
	 * again: only its return proves the copy's own work done. */
	uint64_t drained_t = blocked && c->t_wake && !copy ?
			     woke_drained_t(e, c) : c->h.ts;
	uint64_t busy_to;
	uint32_t bound;

	count_subs(e, p, c, false);
	if (c->ret != 0)	/* an error return proves nothing */
		return;
	if (drained_t > c->h.ts)
		drained_t = c->h.ts;
	busy_to = copy ? 0 : blocked && c->t_wake ?
		  woke_busy_to(e, c, drained_t) : drained_t;
	/* the host stages pageable copies itself: never busy evidence; a
	 * copy's own submission is its entry, so `called` does not apply */
	/* a synchronous copy's time is its own staging and transfer as much
	 * as waiting: it says nothing about which side was behind */
	bound = copy ? IG_B_OPEN : sync_bound(e, c);
	if (!(c->flags & (IG_CF_PARTIAL | IG_CF_EVENT_PARTIAL)) && c->t_begin)
		sync_note(e, p, c->t_begin, bound == IG_B_GPU ? drained_t : c->h.ts,
			  bound == IG_B_GPU && blocked ? c->t_wake : 0,
			  bound == IG_B_GPU);
	drain(e, p, c, drained_t, copy ? 0 : c->t_begin, blocked, busy_to, bound);
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
	s = ig_gpu_stream_get(e, p, c->stream);
	if (!s || !s->dev->active)
		return;
	d = s->dev;
	d->last_ev = ig_max64(d->last_ev, c->h.ts);
	/* not ready at ts, nothing submitted after last_submit: the queue
	 * was non-empty, so the GPU executing, all of [last_submit, ts] */
	if (s->pending)
		s->pending_until = ig_max64(s->pending_until, c->h.ts);
	else
		ig_gpu_stream_open(s, d->final_until, c->h.ts, c->h.tid, c->h.tgid);
	t0 = ig_max64(c->last_submit, s->p_start);
	if (c->last_submit && c->last_submit <= c->h.ts)
		ig_gpu_add_busy(d, t0, c->h.ts);
	ig_sweep_advance(e, d);
}

void ig_gpu_cuda(struct ig_engine *e, const struct ig_cuda *c)
{
	struct ig_process *p = ig_tasks_process_get(e, c->h.tgid, c->h.ts);
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
		if (!(c->flags & IG_CF_PARTIAL))
			sync_note(e, p, c->t_begin ? c->t_begin : c->h.ts,
				  c->h.ts, 0, false);
		drain(e, p, c, c->h.ts, 0, false, 0, IG_B_HOST);
		break;
	case IG_CU_STREAM_NEW:
		/* CU_STREAM_NON_BLOCKING (0x1): no implicit legacy sync */
		s = c->stream ? ig_gpu_stream_get(e, p, c->stream) : NULL;
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
