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
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "trainsim.h"

#define NPINNED 8		/* pinned batch buffers in rotation */
#define AHEAD_STEPS 3		/* --no-sync: GPU work queued at most */

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

/* False when the run was stopped while waiting for the batch. */
static bool step(struct feeder *f, long n)
{
	const struct opts *o = f->r->o;
	struct gpu *g = f->g;
	void *host = f->pinned[n % NPINNED];
	int k;

	if (f->big_bytes)
		host = fresh_pageable(f->big_bytes);
	if (queue_get(f->r->q, (uint64_t)n, host, f->r->batch_bytes)) {
		if (!f->r->stop)
			die("loader stopped delivering batches");
		if (f->big_bytes)
			munmap(host, f->big_bytes);
		return false;
	}
	if (o->hold_ms > 0) {
		pthread_mutex_lock(&f->r->step_lock);
		f->lr_updates++;
		pthread_mutex_unlock(&f->r->step_lock);
	}
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
	for (k = 0; k < o->kernels; k++) {
		kmix_launch(g, o->sc->kmix, f->kernel_ns, n, k, o->kernels,
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

void feeder_run(struct run *r, struct gpu *g, struct step_stats *st)
{
	const struct opts *o = r->o;
	struct feeder f = { .r = r, .g = g };
	uint64_t deadline;
	long n;

	feeder_setup(&f);
	pin_self(r->pin_cpu);
	st->t_start = mono_ns();
	f.t0 = st->t_start;
	deadline = o->seconds > 0 ? st->t_start + (uint64_t)(o->seconds * 1e9)
				  : UINT64_MAX;
	for (n = 0; n < o->steps && !r->stop && mono_ns() < deadline; n++)
		if (!step(&f, n))
			break;
	gpu_check(g, g->cuCtxSynchronize(), "cuCtxSynchronize");
	st->t_end = mono_ns();
	st->steps = n;
	feeder_teardown(&f);
}
