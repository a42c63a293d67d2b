// SPDX-License-Identifier: GPL-2.0
/*
 * Contexts, streams and the device threads that execute them.
 *
 * Each stream owns one device thread (started on its first op) that runs the
 * stream's ops in order.  Op times follow an ideal GPU: an op starts at the
 * latest of its enqueue time, the end of the previous op on its stream and
 * the end of the ops it depends on, and lasts exactly its duration; the
 * device thread sleeps until the end time, writes the trace line, and only
 * then marks the op complete and wakes whoever waits for it.  So the trace
 * never shows work before its submission, and a woken waiter always finds
 * the GPU work it waited for finished and recorded.
 *
 * Waiting is a futex wait on a thread-local word, woken by the device thread
 * that completes the last awaited op (never by anyone else): the wake-up of
 * a blocked cuStreamSynchronize comes from the device thread of that stream.
 */
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "simgpu.h"

static __thread struct ctx *tls_ctx;
static __thread uint64_t tls_ctx_epoch;
static __thread struct waiter tls_waiter;

/* Per-thread default streams of this thread, one per context. */
struct ptds_ent {
	struct ptds_ent *next;
	struct ctx *ctx;
	struct stream *s;
};
static __thread struct ptds_ent *tls_ptds;
static __thread uint64_t tls_ptds_epoch;

static void futex_wait(uint32_t *w, uint32_t val)
{
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

/* The wait for GPU work: a semaphore-like wait (FUTEX_WAIT_BITSET, as
 * glibc's semaphores and condition variables), never a mutex's plain
 * FUTEX_WAIT.  sim.lock is a mutex: a thread that slept on it inside a sync
 * and then found the GPU done was not woken by the completion, and idlegap
 * tells the two apart by the kind of wait (docs/design.md §4.4). */
static void futex_wait_done(uint32_t *w, uint32_t val)
{
	syscall(SYS_futex, w, FUTEX_WAIT_BITSET_PRIVATE, val, NULL, NULL,
		FUTEX_BITSET_MATCH_ANY);
}

static void futex_wake(uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* ---- contexts ------------------------------------------------------------ */

struct ctx *ctx_current(void)
{
	if (tls_ctx_epoch != sim.epoch || !tls_ctx)
		return NULL;
	return tls_ctx;
}

CUresult ctx_need(struct ctx **out)
{
	if (!sim_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	*out = ctx_current();
	return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

void ctx_set_current(struct ctx *c)
{
	tls_ctx = c;
	tls_ctx_epoch = sim.epoch;
}

struct ctx *ctx_new(CUdevice dev, unsigned int flags, bool primary)
{
	struct ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->id = ++sim.next_ctx_id;
	c->dev = dev;
	c->flags = flags;
	c->primary = primary;
	c->next = sim.ctxs;
	sim.ctxs = c;
	reg_add(c, OBJ_CTX);
	simm_register(sim.machine, (unsigned int)sim.cfg.phys[dev]);
	return c;
}

/* ---- streams ------------------------------------------------------------- */

static void stream_name(struct stream *s)
{
	char sfx[16] = "";

	if (s->ctx->id > 1)
		snprintf(sfx, sizeof(sfx), "@%d", s->ctx->id);
	if (s->kind == STREAM_LEGACY)
		snprintf(s->name, sizeof(s->name), "legacy%s", sfx);
	else if (s->kind == STREAM_PTDS)
		snprintf(s->name, sizeof(s->name), "ptds.%d%s",
			 (int)gettid(), sfx);
	else
		snprintf(s->name, sizeof(s->name), "%p", (void *)s);
}

struct stream *stream_new(struct ctx *c, enum stream_kind kind,
			  unsigned int flags, int priority)
{
	struct stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->ctx = c;
	s->kind = kind;
	s->flags = flags;
	s->priority = priority;
	s->id = ++sim.next_stream_id;
	stream_name(s);
	s->next = c->streams;
	c->streams = s;
	if (kind == STREAM_USER)
		reg_add(s, OBJ_STREAM);
	return s;
}

static struct stream *legacy_of(struct ctx *c)
{
	if (!c->legacy)
		c->legacy = stream_new(c, STREAM_LEGACY, 0, 0);
	return c->legacy;
}

static struct stream *ptds_of(struct ctx *c)
{
	struct ptds_ent *e;

	if (tls_ptds_epoch != sim.epoch) {
		tls_ptds = NULL;
		tls_ptds_epoch = sim.epoch;
	}
	for (e = tls_ptds; e; e = e->next)
		if (e->ctx == c)
			return e->s;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->ctx = c;
	e->s = stream_new(c, STREAM_PTDS, 0, 0);
	if (!e->s) {
		free(e);
		return NULL;
	}
	e->next = tls_ptds;
	tls_ptds = e;
	return e->s;
}

/*
 * Handle 0 means the legacy stream, or this thread's default stream when
 * called through a _ptsz/_ptds entry point; CU_STREAM_LEGACY and
 * CU_STREAM_PER_THREAD say so explicitly.  Takes sim.lock itself.
 */
CUresult stream_resolve(CUstream h, bool ptds, struct stream **out)
{
	struct ctx *c;
	CUresult r = CUDA_SUCCESS;

	if (!sim_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	sim_lock();
	if (h == CU_STREAM_PER_THREAD || (!h && ptds) || h == CU_STREAM_LEGACY
	    || !h) {
		c = ctx_current();
		if (!c)
			r = CUDA_ERROR_INVALID_CONTEXT;
		else if (h == CU_STREAM_PER_THREAD || (!h && ptds))
			*out = ptds_of(c);
		else
			*out = legacy_of(c);
		if (!r && !*out)
			r = CUDA_ERROR_OUT_OF_MEMORY;
	} else if (!reg_has(h, OBJ_STREAM)) {
		r = CUDA_ERROR_INVALID_HANDLE;
	} else {
		*out = (struct stream *)h;
	}
	sim_unlock();
	return r;
}

static bool pending(const struct stream *s)
{
	return s->submitted > s->completed;
}

static bool blocking(const struct stream *s)
{
	return s->kind == STREAM_PTDS ||
	       (s->kind == STREAM_USER && !(s->flags & CU_STREAM_NON_BLOCKING));
}

/*
 * Legacy-stream semantics: work on the legacy stream waits for all earlier
 * work on the context's blocking streams (per-thread default streams
 * included), and work on a blocking stream waits for earlier legacy work.
 * Non-blocking streams take part in neither.  Returns the number written;
 * out must have room for one dep per stream of the context.
 */
static int implicit_deps(struct stream *s, struct dep *out)
{
	struct stream *t;
	int n = 0;

	if (s->kind == STREAM_LEGACY) {
		for (t = s->ctx->streams; t; t = t->next)
			if (t != s && blocking(t) && pending(t))
				out[n++] = (struct dep){ t, t->submitted };
	} else if (blocking(s) && s->ctx->legacy && pending(s->ctx->legacy)) {
		t = s->ctx->legacy;
		out[n++] = (struct dep){ t, t->submitted };
	}
	return n;
}

static int count_streams(struct ctx *c)
{
	struct stream *t;
	int n = 0;

	for (t = c->streams; t; t = t->next)
		n++;
	return n;
}

/* ---- device threads ------------------------------------------------------ */

/*
 * An idle device thread polls its queue every LINGER_STEP_NS for
 * LINGER_NS before it sleeps until kicked.  While it lingers, launches do
 * not wake it (a real launch makes no system call either), and it picks up
 * what was queued in batches; a thread that waits for the stream kicks it.
 * Op times do not depend on when the thread notices an op.
 */
#define LINGER_STEP_NS 200000ull
#define LINGER_NS 5000000ull
/* ends that reach their waiters this late are logged (SIMGPU_LATE) */
#define LATE_NS 1000000ull
#define BATCH_MAX 64

static void futex_wait_ns(uint32_t *w, uint32_t val, uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000ull),
		.tv_nsec = (long)(ns % 1000000000ull),
	};

	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = {
		.tv_sec = (time_t)(t / 1000000000ull),
		.tv_nsec = (long)(t % 1000000000ull),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

/* sim.lock held.  Returns whether the stream's device thread had to be
 * woken; the caller then calls stream_kick() once unlocked. */
static bool kick_locked(struct stream *s)
{
	if (!s->sleeping && !s->lingering)
		return false;
	s->sleeping = s->lingering = false;
	s->work_word = 1;
	return true;
}

/* End time of op seq of s, which has completed.  Ends grow with seq; for an
 * op older than the ring, the oldest remembered end is an upper bound. */
static uint64_t end_of(const struct stream *s, uint64_t seq)
{
	unsigned int i = seq % DONE_RING;
	uint64_t oldest = UINT64_MAX;

	if (!seq)
		return 0;
	if (s->ring_seq[i] == seq)
		return s->ring_end[i];
	for (i = 0; i < DONE_RING; i++)
		if (s->ring_seq[i] && s->ring_end[i] < oldest)
			oldest = s->ring_end[i];
	return oldest == UINT64_MAX ? s->last_end : oldest;
}

/* sim.lock held.  False when a dependency has not completed yet; else
 * *ready is the latest end among them. */
static bool deps_ready(const struct op *op, uint64_t *ready)
{
	int i;

	*ready = 0;
	if (op->hook)		/* its end is known only once it has run */
		return false;
	for (i = 0; i < op->ndeps; i++) {
		if (op->deps[i].s->completed < op->deps[i].seq)
			return false;
		*ready = max64(*ready, end_of(op->deps[i].s, op->deps[i].seq));
	}
	return true;
}

/*
 * sim.lock held.  Has everything up to seq on s finished by now on the
 * ideal timeline, whether or not the device thread has got to it yet?  If
 * so, *end is when op seq ended.  Queries answer from this, so they never
 * report work that an ideal GPU would have finished.  An unfinished
 * dependency counts as pending.
 */
static bool done_by(const struct stream *s, uint64_t seq, uint64_t now,
		    uint64_t *end)
{
	uint64_t prev = s->last_end, ready, e;
	const struct op *op;

	if (s->completed >= seq) {
		*end = end_of(s, seq);
		return true;
	}
	for (op = s->head; op && op->seq <= seq; op = op->next) {
		if (!deps_ready(op, &ready))
			return false;
		e = max64(max64(op->enq_ns, prev), ready) + op->dur_ns;
		if (e > now)
			return false;
		prev = e;
	}
	*end = prev;
	return true;
}

/* Called with sim.lock held.  The futex wake happens under the lock so that
 * a waiter that already saw its word set cannot start a new wait and then
 * receive this wake-up. */
static void wake_waiters(struct stream *s, uint64_t seq, uint64_t end)
{
	struct wnode **pp = &s->waiters, *n;

	while ((n = *pp)) {
		if (n->target > seq) {
			pp = &n->next;
			continue;
		}
		*pp = n->next;
		n->w->ready_ns = max64(n->w->ready_ns, end);
		if (--n->w->remaining == 0) {
			__atomic_store_n(&n->w->word, 1, __ATOMIC_RELEASE);
			futex_wake(&n->w->word);
		}
	}
}

static void complete_head(struct stream *s, uint64_t end)
{
	struct op *op = s->head;
	unsigned int i = op->seq % DONE_RING;

	s->head = op->next;
	if (!s->head)
		s->tail = NULL;
	s->completed = op->seq;
	s->last_end = end;
	s->ring_seq[i] = op->seq;
	s->ring_end[i] = end;
	if (op->ev) {
		if (op->ev_gen == op->ev->gen) {
			op->ev->done = true;
			op->ev->ts = end;
		}
		event_unref(op->ev);
	}
	wake_waiters(s, op->seq, end);
	free(op);
}

/* The longest busy interval kept back: NVML readers see a stream that
 * stays busy this late at most. */
#define BUSY_HOLD_NS 10000000ull

/* Executed work goes to the machine's ring of its GPU, one interval per
 * run of back-to-back ops (device thread only). */
static void busy_flush(struct stream *s)
{
	if (s->busy_end > s->busy_start)
		simm_busy(sim.machine,
			  (unsigned int)sim.cfg.phys[s->ctx->dev],
			  s->busy_start, s->busy_end);
	s->busy_start = s->busy_end = 0;
}

static void busy_note(struct stream *s, uint64_t start, uint64_t end)
{
	if (s->busy_end && start <= s->busy_end &&
	    end - s->busy_start < BUSY_HOLD_NS) {
		if (end > s->busy_end)
			s->busy_end = end;
		return;
	}
	busy_flush(s);
	s->busy_start = start;
	s->busy_end = end;
}

struct batch {
	char buf[8192];
	size_t len;
	int n;
	uint64_t end[BATCH_MAX];
};

static void batch_add(struct batch *b, struct stream *s,
		      const struct op *op, uint64_t start, uint64_t end)
{
	static const char *const kind_name[] = {
		[OP_KERNEL] = "kernel", [OP_COPY] = "copy",
		[OP_MEMSET] = "memset",
	};

	if (op->kind != OP_MARKER)
		busy_note(s, start, end);
	if (op->kind != OP_MARKER)
		b->len += (size_t)snprintf(b->buf + b->len,
					   sizeof(b->buf) - b->len,
					   "%s %s %llu %llu\n",
					   kind_name[op->kind], s->name,
					   (unsigned long long)start,
					   (unsigned long long)end);
	b->end[b->n++] = end;
}

/*
 * SIMGPU_LATE: a batch's ends reached their waiters over LATE_NS after
 * its first op's end.  Under load a virtual CPU delays even a real-time
 * thread (up to 24 ms on a 2-CPU VM beside two CPU-bound loops), and a
 * woken one waits for a CPU: the end reaches the host no sooner, so the
 * idle time in between (the trace's idle inside the logged span) is in
 * the trace but beyond any evidence.  Tests read these lines as their
 * oracle of it.
 */
static void late_note(const struct stream *s, uint64_t end, uint64_t woke)
{
	char line[96];
	int n = snprintf(line, sizeof(line), "late %s %llu %llu\n", s->name,
			 (unsigned long long)end, (unsigned long long)woke);

	if (n > 0 && write(sim.late_fd, line, (size_t)n) != n)
		return;
}

/*
 * Runs the head op, then takes along every following op that has already
 * finished on the ideal timeline.  Their trace lines go out in one write()
 * (whole lines only), and only then are the ops marked complete and their
 * waiters woken.  Lock held on entry and on return.
 */
static void run_batch(struct stream *s)
{
	struct batch b = { .len = 0, .n = 0 };
	const struct op *op = s->head;
	uint64_t start = max64(op->enq_ns, s->last_end), end, ready, now;
	int fd, i;

	start = max64(start, deps_wait(op->deps, op->ndeps));	/* unlocks */
	end = op->hook ? max64(start, op->hook(op->hook_arg, start))
		       : start + op->dur_ns;
	if (end > now_ns())
		sleep_until(end);
	batch_add(&b, s, op, start, end);
	sim_lock();
	now = now_ns();
	for (op = op->next; op && b.n < BATCH_MAX &&
	     b.len + 128 < sizeof(b.buf); op = op->next) {
		if (!deps_ready(op, &ready))
			break;
		start = max64(max64(op->enq_ns, end), ready);
		if (start + op->dur_ns > now)
			break;
		end = start + op->dur_ns;
		batch_add(&b, s, op, start, end);
	}
	/* Published before any waiter wakes: a process that saw its work
	 * done finds it in NVML's answers. */
	if (!op)
		busy_flush(s);
	fd = sim.trace_fd;
	if (b.len && fd >= 0) {
		sim_unlock();
		/* One write of whole lines: a killed process never leaves a
		 * partial line. */
		if (write(fd, b.buf, b.len) != (ssize_t)b.len)
			b.len = 0;
		sim_lock();
	}
	/* the ends reach their waiters now: late by the timer, the wait for
	 * a CPU, the lock and the trace's write together */
	if (sim.late_fd >= 0) {
		now = now_ns();
		if (now > b.end[0] + LATE_NS)
			late_note(s, b.end[0], now);
	}
	for (i = 0; i < b.n; i++)
		complete_head(s, b.end[i]);
}

/* sim.lock held; false when the thread should exit. */
static bool idle_wait(struct stream *s, uint64_t idle_since)
{
	if (s->dead)
		return false;
	s->work_word = 0;
	if (now_ns() - idle_since < LINGER_NS) {
		s->lingering = true;
		sim_unlock();
		futex_wait_ns(&s->work_word, 0, LINGER_STEP_NS);
	} else {
		s->sleeping = true;
		sim_unlock();
		futex_wait(&s->work_word, 0);
	}
	sim_lock();
	s->sleeping = s->lingering = false;
	return true;
}

static void *device_main(void *arg)
{
	struct stream *s = arg;
	uint64_t idle_since;
	char name[16];
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	/* A GPU completes its work whatever the host CPUs are busy with: run
	 * at real-time priority where allowed, so completions (and the
	 * wakeups of threads waiting for them) are not late under host load.
	 * The thread sleeps between ops, so it takes little CPU. */
	{
		struct sched_param sp = { .sched_priority = 1 };

		pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	}
	snprintf(name, sizeof(name), "simgpu-s%d", s->id);
	pthread_setname_np(pthread_self(), name);
	if (CPU_COUNT(&sim.cpus))
		pthread_setaffinity_np(pthread_self(), sizeof(sim.cpus),
				       &sim.cpus);
	sim_lock();
	for (;;) {
		idle_since = now_ns();
		while (!s->head) {
			if (!idle_wait(s, idle_since)) {
				s->has_thread = false;
				sim_unlock();
				return NULL;
			}
		}
		run_batch(s);
	}
}

static bool start_thread(struct stream *s)
{
	pthread_attr_t a;
	bool ok;

	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 256 << 10);
	ok = !pthread_create(&s->thread, &a, device_main, s);
	pthread_attr_destroy(&a);
	s->has_thread = ok;
	return ok;
}

/* ---- submission and waiting ---------------------------------------------- */

/*
 * Enqueues one op behind the stream's earlier work and the implicit and
 * explicit dependencies.  The caller has already paid the launch cost: the
 * enqueue time is taken here, so the op cannot start before it.  With
 * sim.lock held; when *kick is set the caller must stream_kick() after
 * unlocking.
 */
CUresult submit_locked(struct stream *s, enum op_kind kind, uint64_t dur,
		       const struct dep *extra, struct event *ev,
		       uint64_t *seq_out, bool *kick)
{
	struct op *op;

	*kick = false;
	if (s->dead)
		return CUDA_ERROR_INVALID_HANDLE;
	op = calloc(1, sizeof(*op) + sizeof(struct dep) *
		    (size_t)(count_streams(s->ctx) + 1));
	if (!op || (!s->has_thread && !start_thread(s))) {
		free(op);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	op->kind = kind;
	op->dur_ns = dur;
	op->ndeps = implicit_deps(s, op->deps);
	if (extra && extra->seq)
		op->deps[op->ndeps++] = *extra;
	if (ev) {
		ev->refs++;
		op->ev = ev;
		op->ev_gen = ev->gen;
	}
	op->seq = ++s->submitted;
	op->enq_ns = now_ns();
	/* the ideal end of the queue, kept so a sync need not walk it */
	if (op->ndeps)
		s->ideal_ok = false;
	else if (!s->head || s->ideal_ok)
		s->ideal_end = max64(op->enq_ns, s->head ? s->ideal_end :
				     s->last_end) + op->dur_ns;
	if (!s->head && !op->ndeps)
		s->ideal_ok = true;
	if (s->tail)
		s->tail->next = op;
	else
		s->head = op;
	s->tail = op;
	/* A lingering thread finds the op on its own. */
	if (s->sleeping)
		*kick = kick_locked(s);
	if (seq_out)
		*seq_out = op->seq;
	return CUDA_SUCCESS;
}

/* Wakes an idle device thread; outside sim.lock, so that it does not wake
 * up only to block on the lock. */
void stream_kick(struct stream *s)
{
	futex_wake(&s->work_word);
}

CUresult stream_submit(struct stream *s, enum op_kind kind, uint64_t dur,
		       const struct dep *extra, struct event *ev,
		       uint64_t *seq_out)
{
	CUresult r;
	bool kick;

	sim_lock();
	r = submit_locked(s, kind, dur, extra, ev, seq_out, &kick);
	sim_unlock();
	if (kick)
		stream_kick(s);
	return r;
}

/*
 * Blocks until every dep is complete; returns the latest end time among
 * them.  Called with sim.lock held, returns with it released.  Deps already
 * complete cost nothing: no futex call, no wake-up.  Otherwise the thread
 * sleeps in FUTEX_WAIT_BITSET until the device thread that completes the
 * last of them wakes it.
 */
uint64_t deps_wait(const struct dep *d, int n)
{
	struct waiter *w = &tls_waiter;
	struct wnode stack_nodes[8], *nodes = stack_nodes;
	struct stream *stack_kick[8], **kick = stack_kick;
	uint64_t ready = 0;
	int i, nkick = 0;

	if (n > 8 && (!(nodes = malloc(sizeof(*nodes) * (size_t)n)) ||
		      !(kick = malloc(sizeof(*kick) * (size_t)n))))
		abort();
	w->word = 0;
	w->remaining = 0;
	w->ready_ns = 0;
	for (i = 0; i < n; i++) {
		struct stream *s = d[i].s;

		if (s->completed >= d[i].seq) {
			ready = max64(ready, end_of(s, d[i].seq));
			continue;
		}
		nodes[w->remaining] = (struct wnode){ s->waiters, w, d[i].seq };
		s->waiters = &nodes[w->remaining++];
		if (kick_locked(s))
			kick[nkick++] = s;
	}
	if (!w->remaining)
		__atomic_store_n(&w->word, 1, __ATOMIC_RELAXED);
	sim_unlock();
	for (i = 0; i < nkick; i++)
		stream_kick(kick[i]);
	while (!__atomic_load_n(&w->word, __ATOMIC_ACQUIRE))
		futex_wait_done(&w->word, 0);
	if (nodes != stack_nodes) {
		free(nodes);
		free(kick);
	}
	return max64(ready, w->ready_ns);
}

void stream_wait(struct stream *s, uint64_t seq)
{
	struct dep d = { s, seq };

	sim_lock();
	deps_wait(&d, 1);
}

/* cuStreamSynchronize: returns at once when nothing is pending on the
 * ideal timeline, as a query would answer, even if the device thread has
 * not got to the finished ops yet: a GPU that is done does not make the
 * host wait.  (cuCtxSynchronize still waits for the device threads, so the
 * trace is complete when a workload ends with it.) */
void stream_sync(struct stream *s)
{
	struct dep d;
	uint64_t end;

	sim_lock();
	if (!pending(s) || (s->ideal_ok ? s->ideal_end <= now_ns() :
			    done_by(s, s->submitted, now_ns(), &end))) {
		sim_unlock();
		return;
	}
	d = (struct dep){ s, s->submitted };
	deps_wait(&d, pending(s) ? 1 : 0);
}

bool stream_idle(struct stream *s)
{
	uint64_t end;
	bool idle;

	sim_lock();
	idle = done_by(s, s->submitted, now_ns(), &end);
	sim_unlock();
	return idle;
}

/* sim.lock held: cuEventQuery and cuEventElapsedTime.  *end is when the
 * stream reached op seq. */
bool stream_reached(struct stream *s, uint64_t seq, uint64_t *end)
{
	return done_by(s, seq, now_ns(), end);
}

/* Waits until an op enqueued on s now could start: the stream and
 * everything it implicitly waits for have drained. */
void stream_drain_for_op(struct stream *s)
{
	struct dep *d;
	int n;

	sim_lock();
	d = malloc(sizeof(*d) * (size_t)(count_streams(s->ctx) + 1));
	if (!d)
		abort();
	n = implicit_deps(s, d);
	if (pending(s))
		d[n++] = (struct dep){ s, s->submitted };
	deps_wait(d, n);
	free(d);
}

void ctx_wait_all(struct ctx *c)
{
	struct stream *t;
	struct dep *d;
	int n = 0;

	sim_lock();
	d = malloc(sizeof(*d) * (size_t)(count_streams(c) + 1));
	if (!d)
		abort();
	for (t = c->streams; t; t = t->next)
		if (pending(t))
			d[n++] = (struct dep){ t, t->submitted };
	deps_wait(d, n);
	free(d);
}

/* cuStreamDestroy: the handle dies now, queued work still runs (and still
 * counts for cuCtxSynchronize); the device thread exits once drained.  The
 * stream object itself is kept, as dependencies may point at it. */
void stream_retire(struct stream *s)
{
	bool kick;

	sim_lock();
	reg_del(s);
	s->dead = true;
	kick = kick_locked(s);
	sim_unlock();
	if (kick)
		stream_kick(s);
}

/* sim.lock held. */
void event_unref(struct event *e)
{
	if (--e->refs == 0)
		free(e);
}
