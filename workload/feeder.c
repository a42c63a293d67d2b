// SPDX-License-Identifier: GPL-2.0
/*
 * The feeder: the training loop's main thread.  Per step:
 *
 *   batch = next(loader)            queue_get, into pinned memory
 *   [lock]  with step_lock: ...     the lock scenario's contended mutex
 *   batch.to(device)                cuMemcpyHtoDAsync (sync_copy: a large
 *                                   cuMemcpyHtoD from new pageable memory)
 *   model(batch)                    K x idlegap_spin(D), each followed
 *                                   by --op-host-us of host work (eager)
 *   [ranks] loss.item()             cuStreamSynchronize (unless
 *                                   --no-loss-sync)
 *   [ranks] all_reduce(grads)       ncclAllReduce on the same stream
 *   loss.item()                     cuStreamSynchronize (every
 *                                   --sync-every steps)
 *
 * evalstep: every --slow-every'th step computes --slow-ms on the host
 * (an evaluation, a log line) after its batch, before its copy.
 * irregular: requests in place of steps (request()).
 *
 * Each step is recorded for the truth's step_list: from before its batch
 * wait to just after its last driver call returned.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/mman.h>

#include "trainsim.h"

#define NPINNED 8		/* pinned batch buffers in rotation */
#define AHEAD_STEPS 3		/* --no-sync: GPU work queued at most */
/* irregular: a request's copy is 4 KiB to IRREG_COPY_MAX, its pause
 * before it up to IRREG_PAUSE_US */
#define IRREG_COPY_MAX (4u << 20)
#define IRREG_PAUSE_US 8000

struct feeder {
	struct run *r;
	struct gpu *g;
	void *pinned[NPINNED];
	CUdeviceptr dbatch, dbig;
	size_t big_bytes;
	uint64_t kernel_ns;
	uint64_t t0;		/* the first step's start */
	uint64_t step_gpu_ns;	/* GPU time one step asks for */
	uint64_t gpu_free_at;	/* --no-sync: when queued work should end */
	uint64_t lr_updates;
	struct thread_sched loader;	/* the step's batch: its worker's run
					 * delay and CPU time making it */
	uint64_t rng;		/* irregular: the requests' generator */
	void *req_host;		/* irregular: pinned copy source */
	CUdeviceptr req_dev;
};

static void feeder_setup(struct feeder *f)
{
	const struct opts *o = f->r->o;
	struct gpu *g = f->g;
	int i;

	for (i = 0; i < NPINNED; i++)
		gpu_check(g, g->cuMemAllocHost(&f->pinned[i],
					       f->r->batch_bytes),
			  "cuMemAllocHost");
	gpu_check(g, g->cuMemAlloc(&f->dbatch, f->r->batch_bytes),
		  "cuMemAlloc");
	f->big_bytes = (size_t)o->copy_mb << 20;
	if (f->big_bytes)
		gpu_check(g, g->cuMemAlloc(&f->dbig, f->big_bytes),
			  "cuMemAlloc");
	if (o->sc->irregular) {
		gpu_check(g, g->cuMemAllocHost(&f->req_host, IRREG_COPY_MAX),
			  "cuMemAllocHost");
		gpu_check(g, g->cuMemAlloc(&f->req_dev, IRREG_COPY_MAX),
			  "cuMemAlloc");
		memset(f->req_host, 0x5a, IRREG_COPY_MAX);
		f->rng = 0x9e3779b97f4a7c15ull ^
			 ((uint64_t)o->seed * 0xbf58476d1ce4e5b9ull);
		if (!f->rng)
			f->rng = 1;
	}
	f->kernel_ns = (uint64_t)(o->kernel_us * 1000.0);
	f->step_gpu_ns = f->kernel_ns * (uint64_t)o->kernels +
			 (f->r->batch_bytes + f->big_bytes) / 12;
}

static void feeder_teardown(struct feeder *f)
{
	struct gpu *g = f->g;
	int i;

	for (i = 0; i < NPINNED; i++)
		g->cuMemFreeHost(f->pinned[i]);
	g->cuMemFree(f->dbatch);
	if (f->dbig)
		g->cuMemFree(f->dbig);
	if (f->req_host) {
		g->cuMemFreeHost(f->req_host);
		g->cuMemFree(f->req_dev);
	}
}

/*
 * sync_copy: the step's input is a new pageable host buffer, like a host
 * tensor built fresh each step and moved with .to(device).  Only the batch
 * is written; the rest is first touched by the driver's staging copy, so
 * that cost lands inside cuMemcpyHtoD.
 */
static void *fresh_pageable(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("cannot map %zu bytes", bytes);
	madvise(p, bytes, MADV_NOHUGEPAGE);
	return p;
}

/* --no-sync never waits for the GPU; keep the queue bounded by sleeping
 * on the host instead, from the known cost of each step. */
static void throttle(struct feeder *f)
{
	uint64_t now = mono_ns(), ahead = AHEAD_STEPS * f->step_gpu_ns;

	f->gpu_free_at = (f->gpu_free_at > now ? f->gpu_free_at : now) +
			 f->step_gpu_ns;
	if (f->gpu_free_at > now + ahead)
		sleep_ns(f->gpu_free_at - now - ahead);
}

/* An eager framework's Python and dispatch work before each op. */
static void host_work(uint64_t ns)
{
	uint64_t end = mono_ns() + ns;

	while (mono_ns() < end)
		;
}

bool step_slowed(const struct opts *o, long n)
{
	return o->sc->slow != SLOW_NONE && !o->no_slow && o->slow_every > 0 &&
	       (n + 1) % o->slow_every == 0;
}

/* irregular: xorshift64*, a number in [lo, hi] */
static uint64_t rnd(struct feeder *f, uint64_t lo, uint64_t hi)
{
	f->rng ^= f->rng >> 12;
	f->rng ^= f->rng << 25;
	f->rng ^= f->rng >> 27;
	return lo + (f->rng * 0x2545f4914f6cdd1dull >> 11) % (hi - lo + 1);
}

/* irregular: one request as the seed draws it, whatever the timing: the
 * pause before it, its copy, its kernels */
struct request {
	uint64_t pause_ns, copy_bytes;
	int kernels;
	uint64_t kernel_ns[64];
};

static void request_draw(struct feeder *f, struct request *q)
{
	int k, max = f->r->o->kernels < 64 ? f->r->o->kernels : 64;

	q->pause_ns = rnd(f, 0, IRREG_PAUSE_US) * 1000;
	q->copy_bytes = rnd(f, 1, IRREG_COPY_MAX >> 12) << 12;
	q->kernels = (int)rnd(f, 1, max > 0 ? (uint64_t)max : 1);
	for (k = 0; k < q->kernels; k++)
		q->kernel_ns[k] = rnd(f, f->kernel_ns / 20 + 1,
				      f->kernel_ns + 1);
}

/* irregular: one request, its input, a copy, its kernels, one sync. */
static bool request(struct feeder *f, long n, const struct request *q)
{
	struct gpu *g = f->g;
	int k;

	if (queue_get(f->r->q, (uint64_t)n, f->pinned[n % NPINNED],
		      f->r->batch_bytes)) {
		if (!f->r->stop)
			die("loader stopped delivering batches");
		return false;
	}
	gpu_check(g, g->cuMemcpyHtoDAsync(f->req_dev, f->req_host,
					  q->copy_bytes, g->stream),
		  "cuMemcpyHtoDAsync");
	for (k = 0; k < q->kernels; k++)
		gpu_spin(g, q->kernel_ns[k]);
	gpu_check(g, g->cuStreamSynchronize(g->stream), "cuStreamSynchronize");
	return true;
}

/* False when the run was stopped while waiting for the batch. */
static bool step(struct feeder *f, long n)
{
	const struct opts *o = f->r->o;
	struct gpu *g = f->g;
	void *host = f->pinned[n % NPINNED];
	int k, kernels = o->kernels;
	bool slowed = step_slowed(o, n);

	if (f->big_bytes)
		host = fresh_pageable(f->big_bytes);
	if (queue_get(f->r->q, (uint64_t)n, host, f->r->batch_bytes)) {
		if (!f->r->stop)
			die("loader stopped delivering batches");
		if (f->big_bytes)
			munmap(host, f->big_bytes);
		return false;
	}
	batch_delay_take(host, f->r->batch_bytes, &f->loader);
	if (o->hold_ms > 0) {
		pthread_mutex_lock(&f->r->step_lock);
		f->lr_updates++;
		pthread_mutex_unlock(&f->r->step_lock);
	}
	if (slowed && o->sc->slow == SLOW_EVAL)
		host_work((uint64_t)o->slow_ms * 1000000);
	if (slowed && o->sc->slow == SLOW_KERNELS)
		kernels *= 4;
	if (f->big_bytes) {
		gpu_check(g, g->cuMemcpyHtoD(f->dbig, host, f->big_bytes),
			  "cuMemcpyHtoD");
		munmap(host, f->big_bytes);
	} else {
		gpu_check(g, g->cuMemcpyHtoDAsync(f->dbatch, host,
						  f->r->batch_bytes,
						  g->stream),
			  "cuMemcpyHtoDAsync");
	}
	for (k = 0; k < kernels; k++) {
		kmix_launch(g, o->sc->kmix, f->kernel_ns, n, k, kernels,
			    o->seconds > 0 ? (double)(mono_ns() - f->t0) /
					     (o->seconds * 1e9) : (double)n / o->steps);
		if (o->op_host_us > 0)
			host_work((uint64_t)o->op_host_us * 1000);
	}
	if (ranks_active())
		ranks_allreduce(g);
	if (o->no_sync)
		throttle(f);
	else if ((n + 1) % o->sync_every == 0)
		gpu_check(g, g->cuStreamSynchronize(g->stream),
			  "cuStreamSynchronize");
	return true;
}

/* Step n's record: what was injected into it on purpose. */
static void step_note(const struct opts *o, struct step_stats *st, long n,
		      uint64_t start, uint64_t end, struct thread_sched mine,
		      struct thread_sched loader)
{
	struct step_rec *s;

	if (st->nrec == st->cap) {
		st->cap = st->cap ? st->cap * 2 : 1024;
		st->rec = realloc(st->rec, st->cap * sizeof(*st->rec));
		if (!st->rec)
			die("out of memory");
	}
	s = &st->rec[st->nrec++];
	*s = (struct step_rec){ .start = start, .end = end, .late_rank = -1,
				.run_delay = mine.run_delay, .cpu = mine.cpu,
				.loader_run_delay = loader.run_delay,
				.loader_cpu = loader.cpu };
	if (ranks_active()) {
		/* the straggler's own cause, or peer_wait on the others */
		s->slowed = ranks_step_cause(n, &s->cause, &s->late_rank) &&
			    o->slow_every > 0;
	} else if (o->sc->slow != SLOW_NONE) {
		s->slowed = step_slowed(o, n);
		s->cause = s->slowed ? o->sc->cause : NULL;
	} else {
		/* a cause in every step alike: none slowed beyond the rest */
		s->cause = o->sc->cause;
	}
}

void feeder_run(struct run *r, struct gpu *g, struct step_stats *st)
{
	const struct opts *o = r->o;
	struct feeder f = { .r = r, .g = g };
	struct request q;
	struct thread_sched d;
	uint64_t deadline, t, e;
	long n;
	bool more;

	feeder_setup(&f);
	pin_self(r->pin_cpu);
	st->t_start = mono_ns();
	f.t0 = st->t_start;
	deadline = o->seconds > 0 ? st->t_start + (uint64_t)(o->seconds * 1e9)
				  : UINT64_MAX;
	for (n = 0; n < o->steps && !r->stop && mono_ns() < deadline; n++) {
		if (o->sc->irregular) {
			/* the pause lies between two requests */
			request_draw(&f, &q);
			sleep_ns(q.pause_ns);
			t = mono_ns();
			d = thread_sched();
			more = request(&f, n, &q);
		} else {
			t = mono_ns();
			d = thread_sched();
			more = step(&f, n);
		}
		/* the end at once, before anything that may sleep */
		e = mono_ns();
		if (!more)
			break;
		step_note(o, st, n, t, e, thread_sched_since(d), f.loader);
	}
	gpu_check(g, g->cuCtxSynchronize(), "cuCtxSynchronize");
	st->t_end = mono_ns();
	st->steps = n;
	feeder_teardown(&f);
}
