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
#include "engine/model.h"
#include "engine/files.h"

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

struct walk {
	struct ig_engine *e;
	struct ig_causeset *set;
	int depth;
	uint32_t chain[IG_DEPTH_CAP + 1];
	struct ig_obs_walk *obs;	/* an observer's note of the walk */
};

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static const struct ig_ival *ival_at(const struct ig_thread *t, uint32_t i)
{
	return ig_ring_at(&t->ivals, i);
}

static void seg_init(struct seg_it *it, const struct ig_thread *th,
		     uint64_t a, uint64_t b)
{
	it->th = th;
	it->t = a;
	it->b = b;
	it->lo = max64(th->first_seen, th->hist_from);
	it->lo_why = th->hist_from > th->first_seen ?
		     "history older than the window" :
		     "before the thread was seen";
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
		s->y = min64(it->b, it->lo);
		s->why = it->lo_why;
	} else if (t >= it->hi) {
		s->st = ST_UNKNOWN;
		s->y = it->b;
		s->why = it->hi_why;
	} else {
		while (it->idx < th->ivals.len && ival_at(th, it->idx)->t_on <= t)
			it->idx++;
		if (it->idx < th->ivals.len)
			iv = ival_at(th, it->idx);
		if (iv && iv->t_off <= t) {
			s->iv = iv;
			if (iv->t_wake && t < iv->t_wake) {
				s->st = ST_BLOCKED;
				s->y = min64(iv->t_wake, it->b);
			} else {
				s->st = ST_RUNNABLE;
				s->y = min64(iv->t_on, it->b);
			}
		} else if (iv && iv->pre_ns && t >= iv->t_off - iv->pre_ns) {
			s->iv = iv;
			s->st = ST_PRE;
			s->y = min64(iv->t_off, it->b);
		} else {
			s->st = ST_ONCPU;
			s->y = min64(iv ? iv->t_off - iv->pre_ns : IG_NS_INF, it->b);
		}
		s->y = min64(s->y, it->hi);
	}
	it->t = s->y;
	return true;
}

/* ---- detail tables ---- */

static bool det_match(const struct ig_detail *d, uint8_t kind, uint32_t tid,
		      uint32_t pid, uint64_t k, const char *name)
{
	return d->kind == kind && d->tid == tid && d->pid == pid &&
	       d->k == k && !strncmp(d->name, name, sizeof(d->name));
}

/*
 * Top details with bounded memory: when the table is full a new key takes
 * the smallest entry's place and inherits its time as error (space-saving),
 * so a key that matters cannot be crowded out by many small ones.
 */
static struct ig_detail *det_get(struct ig_cause_acc *c, uint8_t kind,
				 uint32_t tid, uint32_t pid, uint64_t k,
				 const char *name)
{
	struct ig_detail *d, *min = NULL;
	uint32_t i;
	uint64_t inherit = 0;

	if (!name)
		name = "";
	for (i = 0; i < c->ndet; i++) {
		d = &c->det[i];
		if (det_match(d, kind, tid, pid, k, name))
			return d;
		if (!min || d->ns < min->ns)
			min = d;
	}
	if (c->ndet < IG_DET_CAP) {
		d = &c->det[c->ndet++];
	} else {
		d = min;
		inherit = min->ns;
		c->evicted++;
	}
	memset(d, 0, sizeof(*d));
	d->kind = kind;
	d->tid = tid;
	d->pid = pid;
	d->k = k;
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->ns = inherit;
	d->err = inherit;
	return d;
}

static struct ig_detail *det_add(struct ig_cause_acc *c, uint8_t kind,
				 uint32_t tid, uint32_t pid, uint64_t k,
				 const char *name, uint64_t ns)
{
	struct ig_detail *d = det_get(c, kind, tid, pid, k, name);

	d->ns += ns;
	d->count++;
	return d;
}

static struct ig_cause_acc *cause(struct walk *w, enum ig_cause c,
				  uint64_t ns)
{
	w->set->c[c].ns += ns;
	w->set->total_ns += ns;
	if (w->obs)
		w->obs->ns[c] += ns;
	return &w->set->c[c];
}

static void emit_unknown(struct walk *w, uint64_t ns, const char *why)
{
	det_add(cause(w, IG_C_UNKNOWN, ns), IG_D_WHY, 0, 0, 0, why, ns);
}

/* ---- causes ---- */

static void emit_host(struct walk *w, const struct ig_thread *th, uint64_t ns)
{
	det_add(cause(w, IG_C_HOST_COMPUTE, ns), IG_D_THREAD, th->tid,
		th->tgid, 0, th->comm, ns);
}

static void emit_api(struct walk *w, uint32_t api, uint64_t ns)
{
	const char *name = ig_api_name(api);

	det_add(cause(w, IG_C_CUDA_API, ns), IG_D_API, 0, 0, api,
		name ? name : "?", ns);
}

static void emit_fault(struct walk *w, const struct ig_thread *th,
		       const struct ig_ival *iv, uint64_t ns);

/* On CPU in the kernel handling page faults (sampled): part of the fault
 * the thread is about to wait on, or of the one it just waited on. */
static void emit_fault_cpu(struct walk *w, const struct ig_thread *th,
			   uint64_t x, uint64_t ns)
{
	uint32_t i = ig_ring_upper(&th->ivals, offsetof(struct ig_ival, t_on),
				   x);

	if (i < th->ivals.len && ival_at(th, i)->reason == IG_R_PAGEFAULT)
		emit_fault(w, th, ival_at(th, i), ns);
	else if (i > 0 && ival_at(th, i - 1)->reason == IG_R_PAGEFAULT)
		emit_fault(w, th, ival_at(th, i - 1), ns);
	else
		det_add(cause(w, IG_C_PAGE_FAULT, ns), IG_D_FILE, 0, th->tgid,
			0, "fault handling (sampled)", ns);
}

struct sampled {
	uint64_t n, cuda, fault;
};

static void count_samples(const struct ig_thread *th, uint64_t x, uint64_t y,
			  struct sampled *c)
{
	uint32_t i = ig_ring_upper(&th->samples, offsetof(struct ig_sample_ref, t),
				   x ? x - 1 : 0);

	memset(c, 0, sizeof(*c));
	for (; i < th->samples.len; i++) {
		const struct ig_sample_ref *r = ig_ring_at(&th->samples, i);

		if (r->t >= y)
			break;
		c->n++;
		c->cuda += r->cuda;
		c->fault += r->fault;
	}
}

/* How far around an on-CPU stretch too short to hold a sample the
 * thread's samples still tell what it was running. */
#define SAMPLE_REACH_NS 10000000ULL

/*
 * On CPU outside any timed driver call: the thread's own code, or driver
 * code that has no return probe (launches: timing them would double their
 * probe cost).  The CPU-clock samples give the proportion: those inside
 * [x, y), or for a stretch shorter than the sampling period, those of the
 * thread nearby.  With none, the time is the thread's own.
 */
static void emit_sampled(struct walk *w, const struct ig_thread *th,
			 uint64_t x, uint64_t y)
{
	uint64_t cu, pf;
	struct sampled c;

	count_samples(th, x, y, &c);
	if (!c.n)
		count_samples(th, x > SAMPLE_REACH_NS ? x - SAMPLE_REACH_NS : 0,
			      y + SAMPLE_REACH_NS, &c);
	if (!c.cuda && !c.fault) {
		emit_host(w, th, y - x);
		return;
	}
	cu = (y - x) * c.cuda / c.n;
	pf = (y - x) * c.fault / c.n;
	if (cu)
		det_add(cause(w, IG_C_CUDA_API, cu), IG_D_API, 0, 0, 0,
			"driver code (sampled)", cu);
	if (pf)
		emit_fault_cpu(w, th, x, pf);
	if (y - x > cu + pf)
		emit_host(w, th, y - x - cu - pf);
}

/* On CPU over [x, y): inside a timed driver call or not. */
static void emit_oncpu(struct walk *w, const struct ig_thread *th,
		       uint64_t x, uint64_t y)
{
	uint32_t i = ig_ring_upper(&th->spans, offsetof(struct ig_span, t1), x);
	uint64_t t = x;

	while (t < y) {
		const struct ig_span *s = i < th->spans.len ?
					  ig_ring_at(&th->spans, i) : NULL;
		uint64_t s0 = s ? s->t0 : IG_NS_INF, s1 = s ? s->t1 : 0;
		uint32_t api = s ? s->api : 0;

		if (!s && th->open_begin && th->open_begin < y) {
			/* a sync call still in progress */
			s0 = th->open_begin;
			s1 = IG_NS_INF;
			api = th->open_api;
		}
		if (s0 >= y || s1 <= t) {
			emit_sampled(w, th, t, y);
			return;
		}
		if (s0 > t) {
			emit_sampled(w, th, t, s0);
			t = s0;
		}
		emit_api(w, api, min64(s1, y) - t);
		t = min64(s1, y);
		i++;
	}
}

/* Runnable but not running; who ran instead is the task switched out
 * for it, never the idle task: a thread moved off a busy CPU onto an idle
 * one names no one. */
static void emit_runnable(struct walk *w, const struct ig_ival *iv,
			  uint64_t ns)
{
	struct ig_cause_acc *c = cause(w, IG_C_CPU_STARVATION, ns);

	if (iv->prev_tid)
		det_add(c, IG_D_PROCESS, 0, iv->prev_tgid, 0,
			ig_comm_of(w->e, iv->prev_tid), ns);
	det_add(c, IG_D_CPU, 0, 0, iv->cpu, "", ns);
}

static const char *ival_name(const struct ig_ival *iv)
{
	return iv->detail.name[0] ? iv->detail.name : NULL;
}

/* The file's mount takes the time too, exactly: many files each get
 * little, and fewer than they earned once the table evicts. */
static void emit_mount(struct walk *w, struct ig_cause_acc *c,
		       struct ig_fileinfo *fi, uint64_t ns)
{
	uint8_t bit = w->set == &w->e->idle ? IG_FILE_IN_IDLE
					     : IG_FILE_IN_UNRES;
	struct ig_detail *d;

	if (!fi->mount)
		return;
	d = det_add(c, IG_D_MOUNT, 0, 0, fi->mount, "", ns);
	if (!(fi->counted & bit)) {
		fi->counted |= bit;
		d->aux[0]++;
	}
}

static void emit_storage(struct walk *w, const struct ig_thread *th,
			 const struct ig_ival *iv, uint64_t ns)
{
	struct ig_cause_acc *c = cause(w, IG_C_STORAGE, ns);
	const char *name = ival_name(iv);
	struct ig_fileinfo *fi = iv->flags & IG_F_FILE_KEY ?
				 ig_file_find(w->e, iv->arg) : NULL;

	det_add(c, IG_D_FILE, 0, th->tgid, fi ? fi->key : 0,
		name ? name : "?", ns);
	if (fi)
		emit_mount(w, c, fi, ns);
	if (iv->dev)
		det_add(c, IG_D_DEVICE, 0, 0, iv->dev, "", ns);
}

static void emit_fault(struct walk *w, const struct ig_thread *th,
		       const struct ig_ival *iv, uint64_t ns)
{
	struct ig_cause_acc *c = cause(w, IG_C_PAGE_FAULT, ns);
	const char *name = ival_name(iv);

	if (!name)
		name = ig_map_lookup(th->proc, iv->arg);
	det_add(c, IG_D_FILE, 0, th->tgid, 0, name ? name : "[anon]", ns);
	if (iv->dev)
		det_add(c, IG_D_DEVICE, 0, 0, iv->dev, "", ns);
}

static void emit_network(struct walk *w, const struct ig_ival *iv,
			 uint64_t ns)
{
	char peer[IG_NAME_LEN];

	ig_fmt_peer(&iv->detail.peer, peer, sizeof(peer));
	det_add(cause(w, IG_C_NETWORK, ns), IG_D_PEER, 0, 0,
		iv->detail.peer.proto, peer, ns);
}

/* Woken from an interrupt or by the idle task (IG_F_WAKER_IRQ), or by a
 * kernel thread completing something (kworker, ksoftirqd): no user task
 * woke the thread. */
static bool woken_by_kernel(const struct ig_ival *iv)
{
	return iv->flags & (IG_F_WAKER_IRQ | IG_F_WAKER_KERNEL) ||
	       !iv->waker_tid;
}

/*
 * Woken by no task: an interrupt ended a timed wait (its timeout ran out,
 * or a signal came), or a kernel thread completed something (a kworker,
 * ksoftirqd).  Neither is a process outside the tracked set, and neither
 * is the task the interrupt landed on.
 */
static void emit_kernel_woken(struct walk *w, const struct ig_thread *th,
			      const struct ig_ival *iv, uint64_t ns)
{
	char why[IG_NAME_LEN];

	if (iv->flags & IG_F_WAKER_IRQ) {
		det_add(cause(w, IG_C_SLEEP, ns), IG_D_THREAD, th->tid,
			th->tgid, 0, th->comm, ns);
		return;
	}
	snprintf(why, sizeof(why), "woken by kernel thread %s",
		 ig_comm_of(w->e, iv->waker_tid));
	emit_unknown(w, ns, why);
}

static void emit_untracked(struct walk *w, const struct ig_ival *iv,
			   uint64_t ns)
{
	det_add(cause(w, IG_C_WAIT_UNTRACKED, ns), IG_D_WAKER,
		iv->waker_tid, iv->waker_tgid, 0,
		ig_comm_of(w->e, iv->waker_tid), ns);
}

/* What the GIL holder did while we waited: on CPU, runnable, blocked. */
static void holder_states(const struct ig_thread *h, uint64_t x, uint64_t y,
			  uint64_t out[3])
{
	struct seg_it it;
	struct seg s;

	seg_init(&it, h, x, y);
	while (seg_next(&it, &s)) {
		if (s.st == ST_ONCPU || s.st == ST_PRE)
			out[0] += s.y - s.x;
		else if (s.st == ST_RUNNABLE)
			out[1] += s.y - s.x;
		else if (s.st == ST_BLOCKED)
			out[2] += s.y - s.x;
	}
}

/*
 * The thread that held the GIL: the one whose release woke the waiter.
 * A wait that timed out (CPython's waiters wake every switch interval to
 * ask for the GIL) was woken by a timer: the holder is then the thread
 * whose release ends the waiter's next waits on the same lock.
 */
#define GIL_LOOKAHEAD 32

static const struct ig_ival *gil_release(const struct ig_thread *th,
					 const struct ig_ival *iv)
{
	uint32_t i = ig_ring_upper(&th->ivals, offsetof(struct ig_ival, t_on),
				   iv->t_on), n;

	for (n = 0; woken_by_kernel(iv); n++) {
		if (n == GIL_LOOKAHEAD || i + n >= th->ivals.len)
			return NULL;
		iv = ival_at(th, i + n);
		if (iv->reason != IG_R_FUTEX && iv->reason != IG_R_PREEMPT)
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

	if (!rel) {
		d = det_add(cause(w, IG_C_GIL, y - x), IG_D_HOLDER, 0, 0, 0,
			    "holder not seen", y - x);
		return;
	}
	h = ig_thread_find(w->e, rel->waker_tid);
	d = det_add(cause(w, IG_C_GIL, y - x), IG_D_HOLDER, rel->waker_tid,
		    rel->waker_tgid, 0, ig_comm_of(w->e, rel->waker_tid),
		    y - x);
	if (h)
		holder_states(h, x, y, d->aux);
}

static void emit_lock(struct walk *w, const struct ig_thread *th,
		      const struct ig_ival *iv, uint64_t ns)
{
	struct ig_cause_acc *c = cause(w, IG_C_LOCK, ns);

	det_add(c, IG_D_LOCK, 0, th->tgid, iv->arg, "", ns);
	if (iv->waker_tid)
		det_add(c, IG_D_WAKER, iv->waker_tid, iv->waker_tgid, 0,
			ig_comm_of(w->e, iv->waker_tid), ns);
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
		emit_kernel_woken(w, th, iv, y - x);
		return;
	}
	if (!iv->waker_tid) {
		emit_unknown(w, y - x, "waker not recorded");
		return;
	}
	wk = ig_thread_find(w->e, iv->waker_tid);
	if (!wk) {
		const struct ig_process *p = ig_process_find(w->e, iv->waker_tgid);

		if (p && p->exit_ts == IG_NS_INF)
			emit_unknown(w, y - x, "waker thread not seen");
		else
			emit_untracked(w, iv, y - x);
		return;
	}
	for (i = 0; i <= w->depth; i++) {
		if (w->chain[i] == wk->tid) {
			emit_unknown(w, y - x, "wait cycle");
			return;
		}
	}
	if (w->depth + 1 > w->e->max_depth) {
		snprintf(why, sizeof(why), "waker chain deeper than %d",
			 w->e->max_depth);
		emit_unknown(w, y - x, why);
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

static void emit_blocked(struct walk *w, const struct ig_thread *th,
			 const struct ig_ival *iv, uint64_t x, uint64_t y)
{
	uint64_t ns = y - x;

	switch (iv->reason) {
	case IG_R_STORAGE:
		emit_storage(w, th, iv, ns);
		return;
	case IG_R_PAGEFAULT:
		emit_fault(w, th, iv, ns);
		return;
	case IG_R_SOCKET:
		/* a network peer is outside the host: not followed */
		emit_network(w, iv, ns);
		return;
	case IG_R_SLEEP:
		det_add(cause(w, IG_C_SLEEP, ns), IG_D_THREAD, th->tid,
			th->tgid, 0, th->comm, ns);
		return;
	case IG_R_FUTEX:
		/* CPython's GIL is inside _PyRuntime (docs/design.md §5.6) */
		if (in_pyrt(th, iv->arg)) {
			emit_gil(w, th, iv, x, y);
			return;
		}
		/* glibc mutexes wait with plain FUTEX_WAIT; condition
		 * variables and semaphores (queue hand-offs) use BITSET */
		if (iv->flags & IG_F_FUTEX_PLAIN) {
			emit_lock(w, th, iv, ns);
			return;
		}
		break;
	case IG_R_IOURING:
	case IG_R_OTHER:
		if (iv->flags & IG_F_IOWAIT) {
			emit_storage(w, th, iv, ns);
			return;
		}
		break;
	default:
		break;
	}
	follow(w, th, iv, x, y);
}

static void walk_thread(struct walk *w, const struct ig_thread *th,
			uint64_t a, uint64_t b)
{
	struct seg_it it;
	struct seg s;

	w->chain[w->depth] = th->tid;
	seg_init(&it, th, a, b);
	while (seg_next(&it, &s)) {
		if (w->obs && s.iv && s.st != ST_ONCPU && s.st != ST_UNKNOWN)
			ig_obs_step(w->obs, th, s.iv, s.x, s.y);
		switch (s.st) {
		case ST_UNKNOWN:
			emit_unknown(w, s.y - s.x, s.why);
			break;
		case ST_ONCPU:
			emit_oncpu(w, th, s.x, s.y);
			break;
		case ST_PRE:
			if (s.iv->reason == IG_R_PAGEFAULT)
				emit_fault(w, th, s.iv, s.y - s.x);
			else if (s.iv->reason == IG_R_STORAGE)
				emit_storage(w, th, s.iv, s.y - s.x);
			else
				emit_oncpu(w, th, s.x, s.y);
			break;
		case ST_RUNNABLE:
			/* woken onto an idle CPU: the wakeup's latency is
			 * part of the wait it ends, not starvation */
			if (!s.iv->prev_tid && s.iv->t_wake &&
			    s.iv->reason != IG_R_PREEMPT)
				emit_blocked(w, th, s.iv, s.x, s.y);
			else
				emit_runnable(w, s.iv, s.y - s.x);
			break;
		case ST_BLOCKED:
			emit_blocked(w, th, s.iv, s.x, s.y);
			break;
		}
	}
}

/* Parts of [a, b) where records may be missing are unknown. */
static void walk_top(struct walk *w, const struct ig_thread *th, uint64_t a,
		     uint64_t b)
{
	const struct ig_busy *l = w->e->loss.v;
	uint32_t i;

	for (i = 0; i < w->e->loss.n && a < b; i++) {
		if (l[i].t1 <= a || l[i].t0 >= b)
			continue;
		if (l[i].t0 > a)
			walk_thread(w, th, a, l[i].t0);
		emit_unknown(w, min64(l[i].t1, b) - max64(l[i].t0, a),
			     "records lost");
		a = min64(l[i].t1, b);
	}
	if (a < b)
		walk_thread(w, th, a, b);
}

void ig_attribute(struct ig_engine *e, bool idle, uint32_t tid, uint32_t tgid,
		  uint64_t t0, uint64_t t1)
{
	struct walk w = { .e = e, .set = idle ? &e->idle : &e->unres,
			  .obs = idle && e->obs.span ? e->obs_walk : NULL };
	const struct ig_thread *th = tid ? ig_thread_find(e, tid) : NULL;

	(void)tgid;
	if (t1 <= t0)
		return;
	if (!th) {
		emit_unknown(&w, t1 - t0, tid ? "feeder thread not tracked" :
					  "no feeder known");
		return;
	}
	walk_top(&w, th, t0, t1);
}

/* ---- unresolved spans wait for their feeder's timeline ---- */

void ig_defer_poll(struct ig_engine *e, bool force)
{
	while (e->defer.len) {
		const struct ig_piece *p = ig_ring_at(&e->defer, 0);
		const struct ig_thread *th = ig_thread_find(e, p->tid);
		struct ig_piece pc = *p;

		if (!force && th && th->known_until < p->t1 &&
		    th->exit_ts > p->t1 && p->t1 + DEFER_MAX_NS > e->now &&
		    p->t1 + e->window_ns / 2 > e->now)
			return;
		ig_ring_pop_front(&e->defer, 1);
		ig_attribute(e, false, pc.tid, pc.tgid, pc.t0, pc.t1);
	}
	ig_ring_trim(&e->defer);
}

void ig_defer_piece(struct ig_engine *e, const struct ig_piece *p)
{
	struct ig_piece *slot;

	if (e->defer.len >= IG_DEFER_CAP) {
		const struct ig_piece *h = ig_ring_at(&e->defer, 0);
		struct ig_piece pc = *h;

		ig_ring_pop_front(&e->defer, 1);
		ig_attribute(e, false, pc.tid, pc.tgid, pc.t0, pc.t1);
	}
	slot = ig_ring_push(&e->defer);
	if (!slot) {
		ig_attribute(e, false, p->tid, p->tgid, p->t0, p->t1);
		return;
	}
	*slot = *p;
	ig_defer_poll(e, false);
}
