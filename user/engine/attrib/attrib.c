// SPDX-License-Identifier: GPL-2.0
/*
 * Attribution (docs/design.md §5): walk the feeder's timeline over a gap; give
 * every nanosecond to one cause.  Local IPC waits follow the thread that
 * woke the feeder, recursively and bounded; everything else is decided by
 * the thread's own state.
 */
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "engine/attrib/attrib.h"
#include "engine/tasks.h"

#define DEFER_MAX_NS	(5 * IG_NSEC)

/* ST_PRE: on CPU, but already inside the wait that follows (the CPU part
 * of a page fault before it sleeps for the page). */
enum seg_state { ST_UNKNOWN, ST_ONCPU, ST_PRE, ST_RUNNABLE, ST_BLOCKED };

struct seg {
	enum seg_state st;
	uint64_t x, y;
	const struct ig_ival *iv;
	const char *why;
};

/* Iterates a thread's states over [a, b): on CPU between intervals,
 * blocked until the wakeup, runnable until it ran again. */
struct seg_it {
	const struct ig_thread *th;
	uint64_t t, b, lo, hi;
	const char *lo_why, *hi_why;
	uint32_t idx;
};


/* A thread /proc found asleep at the start whose wait the kernel never
 * saw end (its switch-in not recorded): its time before the first
 * interval seen is not known to be on CPU (§5.14). */
static uint64_t asleep_until(const struct ig_engine *e, const struct ig_thread *th)
{
	const struct ig_tstate *s = e ? ig_atattach_state(e, th->tid) : NULL;
	const struct ig_ival *iv;

	if (!s || s->state == 'R' || th->hist_from > th->first_seen)
		return 0;
	if (!th->ivals.len)
		return th->known_until;
	iv = ig_tasks_thread_ival(th, 0);
	return iv->flags & IG_F_AT_ATTACH || iv->t_off < s->read_ns ? 0 : iv->t_off;
}

static void seg_init(struct seg_it *it, const struct ig_engine *e,
		     const struct ig_thread *th, uint64_t a, uint64_t b)
{
	uint64_t asleep = asleep_until(e, th);

	it->th = th;
	it->t = a;
	it->b = b;
	it->lo = ig_max64(th->first_seen, th->hist_from);
	it->lo_why = th->hist_from > th->first_seen ?
		     "history dropped (the window or its memory budget)" :
		     "before the thread was seen";
	if (asleep > it->lo) {
		it->lo = asleep;
		it->lo_why = "asleep at the start, its wakeup not seen";
	}
	it->hi = th->known_until;
	it->hi_why = "no record of the thread after this";
	if (th->exit_ts <= it->hi) {
		it->hi = th->exit_ts;
		it->hi_why = "thread exited";
	}
	it->idx = ig_ring_upper(&th->ivals, offsetof(struct ig_ival, t_on), a);
}

static bool seg_next(struct seg_it *it, struct seg *s)
{
	const struct ig_thread *th = it->th;
	const struct ig_ival *iv = NULL;
	uint64_t t = it->t;

	if (t >= it->b)
		return false;
	s->iv = NULL;
	s->why = NULL;
	s->x = t;
	if (t < it->lo) {
		s->st = ST_UNKNOWN;
		s->y = ig_min64(it->b, it->lo);
		s->why = it->lo_why;
	} else if (t >= it->hi) {
		s->st = ST_UNKNOWN;
		s->y = it->b;
		s->why = it->hi_why;
	} else {
		while (it->idx < th->ivals.len && ig_tasks_thread_ival(th, it->idx)->t_on <= t)
			it->idx++;
		if (it->idx < th->ivals.len)
			iv = ig_tasks_thread_ival(th, it->idx);
		if (iv && iv->t_off <= t) {
			s->iv = iv;
			if (iv->t_wake && t < iv->t_wake) {
				s->st = ST_BLOCKED;
				s->y = ig_min64(iv->t_wake, it->b);
			} else {
				s->st = ST_RUNNABLE;
				s->y = ig_min64(iv->t_on, it->b);
			}
		} else if (iv && iv->pre_ns && t >= iv->t_off - iv->pre_ns) {
			s->iv = iv;
			s->st = ST_PRE;
			s->y = ig_min64(iv->t_off, it->b);
		} else {
			s->st = ST_ONCPU;
			s->y = ig_min64(iv ? iv->t_off - iv->pre_ns : IG_NS_INF, it->b);
		}
		s->y = ig_min64(s->y, it->hi);
	}
	it->t = s->y;
	return true;
}

/* What the GIL holder did while we waited: on CPU, runnable, blocked. */
static void holder_states(const struct ig_thread *h, uint64_t x, uint64_t y,
			  uint64_t out[3])
{
	struct seg_it it;
	struct seg s;

	seg_init(&it, NULL, h, x, y);
	while (seg_next(&it, &s)) {
		if (s.st == ST_ONCPU || s.st == ST_PRE)
			out[0] += s.y - s.x;
		else if (s.st == ST_RUNNABLE)
			out[1] += s.y - s.x;
		else if (s.st == ST_BLOCKED)
			out[2] += s.y - s.x;
	}
}

static bool in_pyrt(const struct ig_thread *th, uint64_t addr);

/*
 * The thread that held the GIL: the one whose release woke the waiter.
 * A wait that timed out (CPython's waiters wake every switch interval to
 * ask for the GIL) was woken by a timer: the holder is then the thread
 * whose release ends the waiter's next waits on the GIL (its lock and
 * conditions, all inside _PyRuntime); a wait on anything else ends the
 * search, since whoever woke that did not hold this GIL.
 */
#define GIL_LOOKAHEAD 32

static const struct ig_ival *gil_release(const struct ig_thread *th,
					 const struct ig_ival *iv)
{
	uint32_t i = ig_ring_upper(&th->ivals, offsetof(struct ig_ival, t_on),
				   iv->t_on), n;

	for (n = 0; ig_causes_woken_by_kernel(iv); n++) {
		if (n == GIL_LOOKAHEAD || i + n >= th->ivals.len)
			return NULL;
		iv = ig_tasks_thread_ival(th, i + n);
		if (ig_rec_reason_kind(iv->reason) != IG_RK_RUNNABLE &&
		    (ig_rec_reason_kind(iv->reason) != IG_RK_FUTEX ||
		     (iv->flags & IG_F_PYLOCK) || !in_pyrt(th, iv->arg)))
			return NULL;
	}
	return iv;
}

static void emit_gil(struct walk *w, const struct ig_thread *th,
		     const struct ig_ival *iv, uint64_t x, uint64_t y)
{
	const struct ig_ival *rel = gil_release(th, iv);
	const struct ig_thread *h;
	struct ig_detail *d;

	/* a GIL is its process's: a waker outside it released something
	 * else (a queue's semaphore in shared memory, say) */
	if (!rel || rel->waker_tgid != th->tgid) {
		d = ig_detail_add(ig_detail_cause_add(w, IG_C_GIL, y - x), IG_D_HOLDER, 0, 0, 0,
			    "holder not seen", y - x);
		return;
	}
	h = ig_tasks_thread_find(w->e, rel->waker_tid);
	d = ig_detail_add(ig_detail_cause_add(w, IG_C_GIL, y - x), IG_D_HOLDER, rel->waker_tid,
		    rel->waker_tgid, 0, ig_tasks_comm_of(w->e, rel->waker_tid),
		    y - x);
	ig_stacks_holder(w, IG_C_GIL, h, x, y, y - x);
	if (h)
		holder_states(h, x, y, d->aux);
}

static void emit_lock(struct walk *w, const struct ig_thread *th,
		      const struct ig_ival *iv, uint64_t x, uint64_t y)
{
	uint64_t ns = y - x;
	struct ig_cause_acc *c = ig_detail_cause_add(w, IG_C_LOCK, ns);

	ig_detail_add(c, IG_D_LOCK, 0, th->tgid, iv->arg, "", ns);
	ig_stacks_holder(w, IG_C_LOCK, ig_tasks_thread_find(w->e, iv->waker_tid), x, y, ns);
	if (iv->waker_tid)
		ig_detail_add(c, IG_D_WAKER, iv->waker_tid, iv->waker_tgid, 0,
			ig_tasks_comm_of(w->e, iv->waker_tid), ns);
}

static void walk_thread(struct walk *w, const struct ig_thread *th,
			uint64_t a, uint64_t b);

/* Blocked on local IPC: the time is what the waker was doing. */
static void follow(struct walk *w, const struct ig_thread *th,
		   const struct ig_ival *iv, uint64_t x, uint64_t y)
{
	const struct ig_thread *wk;
	char why[IG_NAME_LEN];
	int i;

	if (iv->flags & (IG_F_WAKER_IRQ | IG_F_WAKER_KERNEL)) {
		ig_causes_kernel_woken(w, th, iv, y - x);
		return;
	}
	if (!iv->waker_tid) {
		ig_detail_unknown(w, y - x, "waker not recorded");
		return;
	}
	wk = ig_tasks_thread_find(w->e, iv->waker_tid);
	if (!wk) {
		const struct ig_process *p = ig_tasks_process_find(w->e, iv->waker_tgid);

		if (p && p->exit_ts == IG_NS_INF)
			ig_detail_unknown(w, y - x, "waker thread not seen");
		else
			ig_causes_untracked(w, iv, y - x);
		return;
	}
	for (i = 0; i <= w->depth; i++) {
		if (w->chain[i] == wk->tid) {
			ig_detail_unknown(w, y - x, "wait cycle");
			return;
		}
	}
	if (w->depth + 1 > w->e->attr.max_depth) {
		snprintf(why, sizeof(why), "waker chain deeper than %d",
			 w->e->attr.max_depth);
		ig_detail_unknown(w, y - x, why);
		return;
	}
	w->depth++;
	walk_thread(w, wk, x, y);
	w->depth--;
}

static bool in_pyrt(const struct ig_thread *th, uint64_t addr)
{
	const struct ig_process *p = th->proc;

	return p && p->pyrt_end > p->pyrt_start && addr >= p->pyrt_start &&
	       addr < p->pyrt_end;
}

static void emit_blocked_as(struct walk *w, const struct ig_thread *th,
			    const struct ig_ival *iv, uint64_t x, uint64_t y);

/* A wait begun before tracing takes its reason from /proc's state at the
 * start (§5.14): recovered at attach.  Without it nothing says why. */
static void emit_blocked(struct walk *w, const struct ig_thread *th,
			 const struct ig_ival *iv, uint64_t x, uint64_t y)
{
	bool was = w->recov;

	if (!(iv->flags & IG_F_AT_ATTACH)) {
		emit_blocked_as(w, th, iv, x, y);
		return;
	}
	if (!(iv->flags & IG_F_STATE_READ)) {
		ig_detail_unknown(w, y - x, "asleep since before tracing, its state not read");
		return;
	}
	w->recov = true;
	emit_blocked_as(w, th, iv, x, y);
	w->recov = was;
}

static void emit_blocked_as(struct walk *w, const struct ig_thread *th,
			    const struct ig_ival *iv, uint64_t x, uint64_t y)
{
	uint64_t ns = y - x;

	/* bpf/offcpu_reasons.def gives each reason its kind */
	switch (ig_rec_reason_kind(iv->reason)) {
	case IG_RK_STORAGE:
		ig_causes_storage(w, th, iv, ns);
		return;
	case IG_RK_FAULT:
		ig_causes_fault(w, th, iv, ns);
		return;
	case IG_RK_NETWORK:
		/* a network peer is outside the host: not followed */
		ig_causes_network(w, iv, ns);
		return;
	case IG_RK_SLEEP:
		ig_detail_add(ig_detail_cause_add(w, IG_C_SLEEP, ns), IG_D_THREAD, th->tid,
			th->tgid, 0, th->comm, ns);
		return;
	case IG_RK_FUTEX:
		/* a free-threaded CPython's wait for an object's lock, even
		 * one inside _PyRuntime (a type's): it has no GIL (§5.7) */
		if (iv->flags & IG_F_PYLOCK) {
			emit_lock(w, th, iv, x, y);
			return;
		}
		/* CPython's GIL is inside _PyRuntime (docs/design.md §5.6) */
		if (in_pyrt(th, iv->arg)) {
			emit_gil(w, th, iv, x, y);
			return;
		}
		/* glibc mutexes wait with plain FUTEX_WAIT; condition
		 * variables and semaphores (queue hand-offs) use BITSET */
		if (iv->flags & IG_F_FUTEX_PLAIN) {
			emit_lock(w, th, iv, x, y);
			return;
		}
		break;
	case IG_RK_IOWAIT:
		if (iv->flags & IG_F_IOWAIT) {
			ig_causes_storage(w, th, iv, ns);
			return;
		}
		break;
	default:
		break;
	}
	follow(w, th, iv, x, y);
}

static void peer_text(const struct ig_net_peer *p, char *buf, size_t n)
{
	char a[INET6_ADDRSTRLEN] = "?";

	inet_ntop(p->family == AF_INET6 ? AF_INET6 : AF_INET, p->daddr, a, sizeof(a));
	snprintf(buf, n, p->family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, p->dport);
}

/* For an observer (observe.c): a stretch walked, merged with the previous
 * one of the same interval. */
static void obs_step(struct ig_obs_walk *w, const struct ig_thread *th,
		 const struct ig_ival *iv, uint64_t x, uint64_t y)
{
	struct ig_obs_step *s = w->n ? &w->steps[w->n - 1] : NULL;

	if (s && s->tid == th->tid && s->iv.t_on == iv->t_on && s->y == x) {
		s->y = y;
		return;
	}
	if (w->n == IG_OBS_STEPS) {
		w->dropped++;
		return;
	}
	s = &w->steps[w->n++];
	memset(s, 0, sizeof(*s));
	s->tid = th->tid;
	s->tgid = th->tgid;
	s->x = x;
	s->y = y;
	s->iv = *iv;
	if (iv->reason == IG_R_SOCKET)
		peer_text(&iv->detail.peer, s->detail, sizeof(s->detail));
	else if (iv->flags & IG_F_DETAIL_NAME)
		snprintf(s->detail, sizeof(s->detail), "%.*s", IG_NAME_LEN - 1, iv->detail.name);
}

static void walk_thread(struct walk *w, const struct ig_thread *th,
			uint64_t a, uint64_t b)
{
	struct seg_it it;
	struct seg s;

	w->chain[w->depth] = th->tid;
	seg_init(&it, w->e, th, a, b);
	while (seg_next(&it, &s)) {
		if (w->obs && w->obs->stretches && s.iv && s.st != ST_ONCPU &&
		    s.st != ST_UNKNOWN)
			obs_step(w->obs, th, s.iv, s.x, s.y);
		w->cur = (struct ig_stk_pos){ th, s.st == ST_ONCPU ? NULL : s.iv,
					      s.x, s.y };
		if (!w->depth)
			w->top = w->cur;
		switch (s.st) {
		case ST_UNKNOWN:
			ig_detail_unknown(w, s.y - s.x, s.why);
			break;
		case ST_ONCPU:
			ig_causes_oncpu(w, th, s.x, s.y);
			break;
		case ST_PRE:
			if (ig_rec_reason_kind(s.iv->reason) == IG_RK_FAULT)
				ig_causes_fault(w, th, s.iv, s.y - s.x);
			else if (ig_rec_reason_kind(s.iv->reason) == IG_RK_STORAGE)
				ig_causes_storage(w, th, s.iv, s.y - s.x);
			else
				ig_causes_oncpu(w, th, s.x, s.y);
			break;
		case ST_RUNNABLE:
			/* woken onto an idle CPU: the wakeup's latency is
			 * part of the wait it ends, not starvation */
			if (!s.iv->prev_tid && s.iv->t_wake &&
			    ig_rec_reason_kind(s.iv->reason) != IG_RK_RUNNABLE)
				emit_blocked(w, th, s.iv, s.x, s.y);
			/* a free-threaded CPython that yielded the CPU while
			 * it spun for an object's lock (§5.7) */
			else if (!s.iv->t_wake && (s.iv->flags & IG_F_PYLOCK))
				emit_lock(w, th, s.iv, s.x, s.y);
			else
				ig_causes_runnable(w, s.iv, s.y - s.x);
			break;
		case ST_BLOCKED:
			emit_blocked(w, th, s.iv, s.x, s.y);
			break;
		}
		if (w->segs && !w->depth)
			w->e->attr.seg_tap(w->e, w->seg_ns, s.x, s.y);
	}
}

/* Parts of [a, b) where records may be missing are unknown. */
static void walk_top(struct walk *w, const struct ig_thread *th, uint64_t a,
		     uint64_t b)
{
	const struct ig_lost *l = w->e->lost.ranges.v;
	uint32_t i;

	for (i = 0; i < w->e->lost.ranges.n && a < b; i++) {
		if (l[i].t1 <= a || l[i].t0 >= b)
			continue;
		if (l[i].t0 > a)
			walk_thread(w, th, a, l[i].t0);
		ig_detail_unknown(w, ig_min64(l[i].t1, b) - ig_max64(l[i].t0, a),
			     "records lost");
		a = ig_min64(l[i].t1, b);
	}
	if (a < b)
		walk_thread(w, th, a, b);
}

static struct ig_dev_causes *dev_causes(struct ig_engine *e, int ordinal)
{
	struct ig_engine_attr *a = &e->attr;
	uint32_t i;

	for (i = 0; i < a->nbydev; i++)
		if (a->bydev[i].ordinal == ordinal)
			return &a->bydev[i];
	if (ordinal < 0 || a->nbydev == IG_MAX_DEVICES)
		return NULL;
	a->bydev[a->nbydev].ordinal = ordinal;
	return &a->bydev[a->nbydev++];
}

const uint64_t *ig_attrib_dev_causes(const struct ig_engine *e, int ordinal,
				     bool idle)
{
	uint32_t i;

	for (i = 0; i < e->attr.nbydev; i++)
		if (e->attr.bydev[i].ordinal == ordinal)
			return e->attr.bydev[i].ns[idle ? 0 : 1];
	return NULL;
}

void ig_attrib_piece(struct ig_engine *e, bool idle, const struct ig_piece *p)
{
	struct ig_dev_causes *dc = dev_causes(e, p->device);
	struct walk w = { .e = e, .set = idle ? &e->attr.idle : &e->attr.unres,
			  .dev_ns = dc ? dc->ns[idle ? 0 : 1] : NULL,
			  .obs = idle && e->obs.span ? e->obs_walk : NULL };
	const struct ig_thread *th = p->tid ? ig_tasks_thread_find(e, p->tid) : NULL;

	if (p->t1 <= p->t0)
		return;
	w.segs = !idle && e->attr.seg_tap;
	if (!th) {
		ig_detail_unknown(&w, p->t1 - p->t0, p->tid ? "feeder thread not tracked" :
					  "no feeder known");
		return;
	}
	walk_top(&w, th, p->t0, p->t1);
	if (idle && w.recov_ns)
		ig_atattach_gap(e, p->device, p->t0, w.recov_ns);
}

void ig_attrib_into(struct ig_engine *e, struct ig_causeset *set,
		    const struct ig_piece *p)
{
	struct walk w = { .e = e, .set = set };
	const struct ig_thread *th = p->tid ? ig_tasks_thread_find(e, p->tid) : NULL;

	if (p->t1 <= p->t0)
		return;
	if (!th) {
		ig_detail_unknown(&w, p->t1 - p->t0, "launching thread not tracked");
		return;
	}
	walk_top(&w, th, p->t0, p->t1);
}

/* ---- unresolved spans wait for their feeder's timeline ---- */

void ig_attrib_defer_poll(struct ig_engine *e, bool force)
{
	while (e->attr.defer.len) {
		const struct ig_piece *p = ig_ring_at(&e->attr.defer, 0);
		const struct ig_thread *th = ig_tasks_thread_find(e, p->tid);
		struct ig_piece pc = *p;

		if (!force && th && th->known_until < p->t1 &&
		    th->exit_ts > p->t1 && p->t1 + DEFER_MAX_NS > e->win.now &&
		    p->t1 + e->window_ns / 2 > e->win.now)
			return;
		ig_ring_pop_front(&e->attr.defer, 1);
		ig_attrib_piece(e, false, &pc);
	}
	ig_ring_trim(&e->attr.defer);
}

uint64_t ig_attrib_deferred_from(const struct ig_engine *e, int device)
{
	uint64_t t = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < e->attr.defer.len; i++) {
		const struct ig_piece *p = ig_ring_at(&e->attr.defer, i);

		if (p->device == device && p->t0 < t)
			t = p->t0;
	}
	return t;
}

void ig_attrib_defer_piece(struct ig_engine *e, const struct ig_piece *p)
{
	struct ig_piece *slot;

	if (e->attr.defer.len >= IG_DEFER_CAP) {
		const struct ig_piece *h = ig_ring_at(&e->attr.defer, 0);
		struct ig_piece pc = *h;

		ig_ring_pop_front(&e->attr.defer, 1);
		ig_attrib_piece(e, false, &pc);
	}
	slot = ig_ring_push(&e->attr.defer);
	if (!slot) {
		ig_attrib_piece(e, false, p);
		return;
	}
	*slot = *p;
	ig_attrib_defer_poll(e, false);
}


static void sink_idle_gap(void *ctx, const struct ig_gap *g)
{
	struct ig_piece p = { .t0 = g->t0, .t1 = g->t1, .tid = g->tid,
			      .tgid = g->tgid, .device = g->device };

	ig_attrib_piece(ctx, true, &p);
}

static void sink_unresolved(void *ctx, const struct ig_piece *p)
{
	ig_attrib_defer_piece(ctx, p);
}

void ig_attrib_sink(struct ig_engine *e, struct ig_gap_sink *s)
{
	s->idle_gap = sink_idle_gap;
	s->unresolved = sink_unresolved;
	s->ctx = e;
}
