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
#include "engine/merge.h"
#include "engine/model.h"
#include "engine/gpu/gpu.h"
#include "util/util.h"

struct ig_device *ig_gpu_dev_get(struct ig_engine *e, int ordinal)
{
	struct ig_device *d;
	uint32_t i;

	for (i = 0; i < e->gpu.ndevs; i++)
		if (e->gpu.devs[i]->ordinal == ordinal)
			return e->gpu.devs[i];
	if (e->gpu.ndevs == IG_MAX_DEVICES)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->ordinal = ordinal;
	d->closed.esz = sizeof(struct ig_pend);
	d->busy.esz = sizeof(struct ig_busy);
	/* keep devices sorted by ordinal for the report */
	for (i = e->gpu.ndevs; i > 0 && e->gpu.devs[i - 1]->ordinal > ordinal; i--)
		e->gpu.devs[i] = e->gpu.devs[i - 1];
	e->gpu.devs[i] = d;
	e->gpu.ndevs++;
	return d;
}

int ig_gpu_proc_node_device(const struct ig_process *p)
{
	return p->gd_seen && p->gd_dev >= 0 &&
	       (p->gd_src == IG_GD_NVML || p->gd_src == IG_GD_DEVNODE) ? p->gd_dev : -1;
}

/* The host GPU of @p and where that comes from; -1 when unknown. */
static int proc_host_gpu(const struct ig_process *p, const char **src)
{
	int ord = p->device;

	if (p->device_set) {
		*src = "context";
		if (ord >= 0 && (uint32_t)ord < p->ngpumap && p->gpumap[ord] >= 0)
			return p->gpumap[ord];
		/* NVML lists the process on one GPU: its context's */
		if (p->gd_seen && p->gd_src == IG_GD_NVML && p->gd_dev >= 0)
			return p->gd_dev;
		return ord;
	}
	/* the node's own evidence: the one GPU NVML lists it on, or the
	 * one device node it holds open */
	if (ig_gpu_proc_node_device(p) >= 0) {
		*src = ig_rec_gpudev_src_name(p->gd_src);
		return p->gd_dev;
	}
	/* the agent's: the one GPU its container or environment lets it
	 * see, in the numbering its other processes' contexts get */
	if (p->ngpumap == 1 && p->gpumap[0] >= 0) {
		*src = "gpumap";
		return p->gpumap[0];
	}
	/* what its environment names; LOCAL_RANK (an older recording's)
	 * names a rank, not a GPU */
	if (p->gd_seen && p->gd_dev >= 0 && p->gd_src != IG_GD_LOCAL_RANK) {
		*src = ig_rec_gpudev_src_name(p->gd_src);
		return p->gd_dev;
	}
	*src = NULL;
	return -1;
}

int ig_gpu_proc_device(const struct ig_process *p)
{
	const char *src;
	int dev = proc_host_gpu(p, &src);

	/* never another process's GPU by default: one of its own */
	if (dev < 0)
		return IG_DEV_UNKNOWN | (int)(p->pid & (IG_DEV_UNKNOWN - 1));
	/* another host's GPUs in a merged analysis: devices of their own */
	return dev + ig_merge_dev_base(p->pid);
}

const char *ig_gpu_proc_device_source(const struct ig_process *p)
{
	const char *src;

	proc_host_gpu(p, &src);
	return src;
}

static struct ig_device *proc_dev(struct ig_engine *e, struct ig_process *p)
{
	return ig_gpu_dev_get(e, ig_gpu_proc_device(p));
}

struct ig_stream *ig_gpu_stream_get(struct ig_engine *e, struct ig_process *p,
				 uint64_t key)
{
	struct ig_stream *s = ig_htab_get(&p->streams, key);

	return s ? s : ig_gpu_stream_new(p, key, proc_dev(e, p));
}

struct ig_stream *ig_gpu_stream_new(struct ig_process *p, uint64_t key,
				    struct ig_device *d)
{
	struct ig_stream *s;

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

void ig_gpu_dev_activate(struct ig_device *d, uint64_t ts)
{
	if (d->active)
		return;
	d->active = true;
	d->span_start = ts;
	d->final_until = ts;
	d->last_ev = ts;
}

void ig_gpu_stream_open(struct ig_stream *s, uint64_t t, uint64_t pending_until,
			uint32_t tid, uint32_t tgid)
{
	struct ig_device *d = s->dev;

	if (s->pending)
		return;
	if (!ig_grow_from((void **)&d->open, &d->capopen, d->nopen,
			  sizeof(*d->open), 8))
		return;
	s->pending = true;
	s->p_start = ig_max64(t, d->final_until);
	s->pending_until = ig_max64(pending_until, s->p_start);
	s->feeder_tid = tid;
	s->feeder_tgid = tgid;
	s->open_idx = d->nopen;
	d->open[d->nopen++] = s;
}

void ig_gpu_add_closed(struct ig_device *d, uint64_t t0, uint64_t t1,
		       uint32_t tid, uint32_t tgid, uint32_t how)
{
	struct ig_pend *p;

	t0 = ig_max64(t0, d->final_until);
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

void ig_gpu_add_busy(struct ig_device *d, uint64_t t0, uint64_t t1)
{
	struct ig_busy *b;

	t0 = ig_max64(t0, d->final_until);
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
void ig_gpu_stream_close(struct ig_stream *s, uint64_t t, uint32_t how)
{
	struct ig_device *d = s->dev;
	struct ig_stream *last;

	t = ig_max64(t, ig_max64(s->pending_until, d->final_until));
	if (s->pending) {
		ig_gpu_add_closed(d, s->p_start, t, s->feeder_tid, s->feeder_tgid,
			   how);
		last = d->open[--d->nopen];
		d->open[s->open_idx] = last;
		last->open_idx = s->open_idx;
		s->pending = false;
	}
	s->drained_at = ig_max64(s->drained_at, t);
	s->drained_once = true;
	if (s->coll_at && !s->coll_end && t > s->coll_at) {
		s->coll_end = t;	/* a collective's end (peers_local.c) */
		s->coll_end_exact = how == IG_B_GPU;
	}
}


bool ig_gpu_dev_has_procs(const struct ig_device *d)
{
	return d->nstreams > 0 || d->ncarry > 0;
}

/* @p ended: a gap held at a window's end, or carried in, with no process
 * left to end it is dropped, as at the end of a trace (docs/design.md
 * §7.10). */
static void carry_exit(struct ig_engine *e, const struct ig_process *p)
{
	uint32_t i, k;

	for (i = 0; i < e->gpu.ndevs; i++) {
		struct ig_device *d = e->gpu.devs[i];

		for (k = 0; k < d->ncarry; k++)
			if (d->carry_pids[k] == p->pid) {
				d->carry_pids[k] = d->carry_pids[--d->ncarry];
				break;
			}
		if (ig_gpu_dev_has_procs(d))
			continue;
		if (d->held) {
			d->held = false;
			d->frozen = true;
			d->held_how = IG_HELD_EXIT;
			d->held_end = p->exit_ts;
		} else if (d->carry_from && d->idle_open && d->final_until == d->carry_from) {
			/* carried in, never ended: as if never seen */
			d->carry_how = IG_HELD_EXIT;
			d->active = false;
		}
	}
}

/* The process is gone and its contexts with it: its queues cannot hold
 * work past this point. */
void ig_gpu_proc_exit(struct ig_engine *e, struct ig_process *p, uint64_t ts)
{
	struct ig_device *touched[IG_MAX_DEVICES];
	struct ig_stream *s;
	uint32_t it = 0, nt = 0, k;

	while ((s = ig_htab_next(&p->streams, &it))) {
		if (s->pending)
			ig_gpu_stream_close(s, ts, IG_B_OPEN);
		for (k = 0; k < nt && touched[k] != s->dev; k++)
			;
		if (k == nt && nt < IG_MAX_DEVICES)
			touched[nt++] = s->dev;
		s->dev->nstreams--;
		free(s);
	}
	ig_htab_clear(&p->streams);
	carry_exit(e, p);
	for (k = 0; k < nt; k++) {
		if (touched[k]->active)
			touched[k]->last_ev = ig_max64(touched[k]->last_ev, ts);
		ig_sweep_advance(e, touched[k]);
	}
}

uint64_t ig_gpu_keep_from(const struct ig_engine *e)
{
	uint64_t keep = IG_NS_INF;
	uint32_t i;

	for (i = 0; i < e->gpu.ndevs; i++)
		if (e->gpu.devs[i]->active)
			keep = ig_min64(keep, e->gpu.devs[i]->final_until);
	return keep;
}

/* Evidence may be missing in [t0, t1]: no idle time is proven there, and
 * attribution reports it as unknown.  Ranges come in the order of their
 * ends, each from its CPU's previous record: one that reaches back over the
 * newest takes them in, so that the list stays sorted and disjoint (as
 * attribution reads it) and short while every CPU marks a loss. */
void ig_gpu_mark_lost(struct ig_engine *e, uint64_t t0, uint64_t t1)
{
	struct ig_lost *l;
	uint32_t i;

	e->lost.any = true;
	if (t1 < t0)
		return;
	while (e->lost.ranges.n) {
		l = (struct ig_lost *)e->lost.ranges.v + e->lost.ranges.n - 1;
		if (l->t1 < t0 || l->t0 > t1)
			break;
		t0 = ig_min64(t0, l->t0);
		t1 = ig_max64(t1, l->t1);
		e->lost.ranges.n--;
	}
	l = ig_vec_push(&e->lost.ranges);
	if (!l)
		return;
	l->t0 = t0;
	l->t1 = t1;
	for (i = 0; i < e->gpu.ndevs; i++)
		ig_sweep_advance(e, e->gpu.devs[i]);
}

uint64_t ig_gpu_span_end(const struct ig_device *d)
{
	return d->final_until;
}

void ig_gpu_free(struct ig_engine *e)
{
	struct ig_process *p;
	struct ig_stream *s;
	uint32_t i, it;

	free(e->obs_walk);
	e->obs_walk = NULL;
	for (i = 0; i < e->gpu.ndevs; i++) {
		struct ig_device *d = e->gpu.devs[i];

		free(d->open);
		free(d->closed.v);
		free(d->busy.v);
		ig_hist_free(&d->gap_hist);
		free(d);
	}
	e->gpu.ndevs = 0;
	it = 0;
	while ((p = ig_htab_next(&e->tasks.procs, &it))) {
		uint32_t k = 0;

		while ((s = ig_htab_next(&p->streams, &k)))
			free(s);
		ig_htab_clear(&p->streams);
	}
}

