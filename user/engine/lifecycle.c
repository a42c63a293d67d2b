// SPDX-License-Identifier: GPL-2.0
/*
 * The engine's lifecycle: options at creation, the sliding window that
 * keeps history bounded (gc), the end of the trace, memory introspection
 * and teardown.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/estimate/estimate.h"
#include "engine/model.h"
#include "engine/tasks.h"
#include "engine/steps/steps.h"
#include "engine/peers/peers.h"
#include "engine/idents.h"
#include "engine/merge.h"
#include "engine/head.h"
#include "engine/attrib/files.h"
#include "engine/attrib/atattach.h"
#include "engine/attrib/stacks.h"

#define GC_EVERY_NS	(100 * 1000 * 1000ULL)

/* ---- window ---- */

static bool loss_gone(const void *el, uint64_t cutoff)
{
	return ((const struct ig_lost *)el)->t1 < cutoff;
}

/* A process's last thread freed once it exited: nothing can charge its
 * stacks any more. */
static void gc_thread(struct ig_engine *e, struct ig_thread *t)
{
	struct ig_process *p = t->proc;

	ig_tasks_thread_free(e, t);
	if (p && !p->threads && p->exit_ts != IG_NS_INF) {
		ig_stacks_gone(e, p->pid);
		ig_tasks_process_gone(p);
	}
}

void ig_engine_gc(struct ig_engine *e)
{
	uint64_t keep = ig_gpu_keep_from(e), cutoff;
	struct ig_thread *t, *next;

	/* a device's head, settled once its counter covers it */
	ig_head_poll(e);

	if (e->attr.defer.len) {
		const struct ig_piece *p = ig_ring_at(&e->attr.defer, 0);

		if (p->t0 < keep)
			keep = p->t0;
	}
	keep = ig_min64(keep, ig_peers_keep_from(e));
	keep = ig_min64(keep, ig_peers_arrive_keep_from(e));
	if (keep > e->win.now)
		keep = e->win.now;
	cutoff = e->win.now > e->window_ns ? e->win.now - e->window_ns : 0;
	if (keep > cutoff)
		cutoff = keep;
	cutoff = ig_max64(cutoff, e->win.cutoff);
	/* the budget counts what is kept, a head's history with the rest,
	 * and cuts both (docs/design.md §3.5, §4.12) */
	e->win.cap_cutoff = ig_histcap_cutoff(e, ig_min64(cutoff, ig_head_keep_floor(e)));
	cutoff = ig_max64(cutoff, e->win.cap_cutoff);
	if (cutoff > e->win.cutoff)
		e->win.cutoff = cutoff;
	for (t = e->tasks.thr_head; t; t = next) {
		/* the live threads followed from the start keep theirs for a
		 * head still to settle (head.c) */
		uint64_t c = ig_head_cutoff(e, t);

		next = t->next;
		if (t->exit_ts != IG_NS_INF && t->exit_ts < c)
			gc_thread(e, t);
		else
			ig_tasks_thread_prune(t, c);
	}
	while (e->tasks.nexited > IG_EXITED_PROCS_KEEP && e->tasks.exit_head &&
	       e->tasks.exit_head->exit_ts < e->win.cutoff) {
		struct ig_process *p = e->tasks.exit_head;

		e->tasks.exit_head = p->exit_next;
		if (!e->tasks.exit_head)
			e->tasks.exit_tail = NULL;
		e->tasks.nexited--;
		ig_tasks_process_free(e, p);
		e->tasks.procs_freed++;
	}
	if (e->lost.ranges.n)
		ig_vec_drop_where(&e->lost.ranges, loss_gone, e->win.cutoff);
	ig_stacks_gc(e);
	e->win.gc_count++;
	e->win.next_gc = e->win.now + GC_EVERY_NS;
}

/* ---- API ---- */

struct ig_engine *ig_engine_new(const struct ig_engine_opts *opts)
{
	struct ig_engine *e = calloc(1, sizeof(*e));

	if (!e) {
		errno = ENOMEM;
		return NULL;
	}
	if (opts) {
		size_t n = opts->sz && opts->sz < sizeof(e->o) ? opts->sz
							       : sizeof(e->o);

		memcpy(&e->o, opts, n);
	}
	e->attr.max_depth = e->o.max_depth > 0 ? e->o.max_depth : 4;
	if (e->attr.max_depth > IG_DEPTH_CAP)
		e->attr.max_depth = IG_DEPTH_CAP;
	e->window_ns = (uint64_t)((e->o.window_s > 0 ? e->o.window_s : 60.0) *
				  1e9);
	if (e->window_ns < 1000000)
		e->window_ns = 1000000;
	e->attr.max_gaps = e->o.max_gaps_json ? e->o.max_gaps_json : 1000;
	if (e->attr.max_gaps == IG_GAPS_NONE)
		e->attr.max_gaps = 0;
	else if (e->attr.max_gaps < 0)
		e->attr.max_gaps = -1;
	e->attr.gaps.limit = e->attr.max_gaps;
	e->attr.unres_list.limit = e->attr.max_gaps;
	ig_attrib_sink(e, &e->gpu.sink);
	/* the estimate takes unresolved time from the GPU model and the
	 * walk through taps, not calls (docs/design.md §3.1) */
	e->gpu.unres_tap = ig_est_on_unres;
	e->gpu.idle_tap = ig_est_on_idle;
	e->gpu.sync_tap = ig_est_on_sync;
	e->attr.seg_tap = ig_est_seg_note;
	e->tasks.comms = calloc(IG_COMM_CACHE, sizeof(*e->tasks.comms));
	ig_ring_init(&e->attr.defer, sizeof(struct ig_piece));
	e->lost.ranges.esz = sizeof(struct ig_lost);
	if (!e->tasks.comms || ig_stacks_new(e) ||
	    ig_observe_steps(e, e->o.step_api - 1) ||
	    ig_htab_init(&e->tasks.threads, 256) ||
	    ig_htab_init(&e->tasks.procs, 64)) {
		ig_engine_free(e);
		errno = ENOMEM;
		return NULL;
	}
	return e;
}

void ig_engine_finish(struct ig_engine *e)
{
	if (!e || e->win.finished)
		return;
	/* the collectives still held for their submission, at their entry,
	 * before the streams are ended */
	ig_peers_arrive_flush(e);
	/* held: every device was ended at the hold (docs/design.md §7.10) */
	if (e->gpu.held_at) {
		ig_carry_finish(e);
	} else {
		ig_gpu_finish(e);
		/* tracing stopped, the job went on: a gap still open then was
		 * idle up to the end, proven, its cause not known yet */
		if (e->win.have_end && (e->win.stop_reason == IG_STOP_DURATION ||
					e->win.stop_reason == IG_STOP_SIGNAL)) {
			ig_carry_tail(e, e->win.end_ts);
			/* or still pending: idle where the counter says */
			ig_head_tail(e, e->win.end_ts);
		}
	}
	/* before the first work seen: idle where the GPU's counter says */
	ig_head_finish(e);
	ig_attrib_defer_poll(e, true);
	ig_est_compute(e);
	ig_peers_finish(e);
	ig_peers_local_finish(e);
	e->win.finished = true;
	if (e->o.verbose) {
		struct ig_engine_mem m;

		ig_engine_mem(e, &m);
		fprintf(stderr, "engine: %llu records, %llu threads held "
			"(%llu freed), %llu intervals, %zu KiB\n",
			(unsigned long long)e->acct.nrec,
			(unsigned long long)m.threads,
			(unsigned long long)e->tasks.threads_freed,
			(unsigned long long)m.intervals, m.bytes / 1024);
	}
}

void ig_engine_mem(const struct ig_engine *e, struct ig_engine_mem *m)
{
	const struct ig_thread *t;
	uint32_t i;

	memset(m, 0, sizeof(*m));
	m->threads = e->tasks.nthreads;
	m->procs = e->tasks.nprocs;
	m->bytes = sizeof(*e) + ig_htab_bytes(&e->tasks.threads) +
		   ig_htab_bytes(&e->tasks.procs) +
		   IG_COMM_CACHE * sizeof(*e->tasks.comms) +
		   ig_ring_bytes(&e->attr.defer) + e->gpu.scratch_cap +
		   ig_hist_bytes(&e->attr.gap_hist) + ig_stacks_bytes(e) +
		   (e->attr.gaps.cap + e->attr.unres_list.cap) * sizeof(struct ig_gap) +
		   ig_est_bytes(e, NULL) + ig_steps_bytes(e);
	for (t = e->tasks.thr_head; t; t = t->next) {
		m->intervals += t->ivals.len;
		m->spans += t->spans.len;
		m->bytes += sizeof(*t) + ig_ring_bytes(&t->ivals) +
			    ig_ring_bytes(&t->spans) + ig_ring_bytes(&t->stks);
	}
	for (i = 0; i < e->gpu.ndevs; i++) {
		const struct ig_device *d = e->gpu.devs[i];

		m->closed += d->closed.n;
		m->busy += d->busy.n;
		m->streams += d->nstreams;
		m->bytes += sizeof(*d) + (size_t)d->closed.cap * d->closed.esz +
			    (size_t)d->busy.cap * d->busy.esz +
			    d->capopen * sizeof(*d->open) + ig_hist_bytes(&d->gap_hist);
	}
	m->deferred = e->attr.defer.len;
}

void ig_engine_free(struct ig_engine *e)
{
	struct ig_process *p;
	uint32_t i, it;

	if (!e)
		return;
	ig_gpu_free(e);
	ig_steps_free(e);
	ig_est_free(e);
	ig_peers_free(e);
	ig_merge_free(e);
	ig_engine_idents_free(e);
	while (e->tasks.thr_head)
		ig_tasks_thread_free(e, e->tasks.thr_head);
	it = 0;
	while ((p = ig_htab_next(&e->tasks.procs, &it))) {
		ig_htab_free(&p->streams);
		free(p->maps);
		free(p);
	}
	ig_htab_free(&e->tasks.threads);
	ig_htab_free(&e->tasks.procs);
	ig_files_free(e);
	ig_atattach_free(e);
	ig_head_free(e);
	ig_stacks_free(e);
	ig_hist_free(&e->attr.gap_hist);
	for (i = 0; i < e->acct.nbiodev; i++)
		ig_hist_free(&e->acct.biodev[i].lat);
	free(e->attr.gaps.g);
	free(e->attr.unres_list.g);
	ig_ring_free(&e->attr.defer);
	free(e->lost.ranges.v);
	free(e->gpu.scratch);
	free(e->tasks.comms);
	free(e);
}

