// SPDX-License-Identifier: GPL-2.0
/*
 * Record intake: ig_engine_feed() reads each record (older, shorter ones
 * zero-padded) and hands it to its handler.  Off-CPU intervals, CUDA call
 * spans, samples and block IO become thread history; CUDA calls go on to
 * the GPU model (gpu.c); task records to the task tables (tasks.c), and
 * a process's exit to the GPU model before the task tables retire it.
 */
#include <string.h>
#include "engine/estimate/estimate.h"
#include "engine/model.h"
#include "engine/tasks.h"
#include "engine/peers/peers.h"
#include "engine/idents.h"
#include "engine/attrib/files.h"
#include "engine/attrib/atattach.h"
#include "engine/merge.h"
#include "engine/head.h"
#include "engine/attrib/stacks.h"
#include "engine/steps/steps.h"

/* A record shorter than its struct (older producer): read it zero-padded. */
#define REC(type, rec, tmp)						\
	((rec)->size >= sizeof(type) ? (const type *)(rec) :		\
	 (memset(&(tmp), 0, sizeof(tmp)),				\
	  memcpy(&(tmp), (rec), (rec)->size), (const type *)&(tmp)))

/* Which block device served the storage wait [t_off, t_on]? */
static uint32_t bio_dev_for(const struct ig_thread *t, uint64_t t_off,
			    uint64_t t_on)
{
	uint32_t i, n = t->nbio < IG_BIO_RECENT ? t->nbio : IG_BIO_RECENT;

	for (i = 0; i < n; i++) {
		const struct ig_bio_ref *b = &t->bio[(t->nbio - 1 - i) %
						     IG_BIO_RECENT];

		if (b->t_done >= t_off && b->t_issue <= t_on)
			return b->dev;
	}
	return 0;
}

static void offcpu_stats(struct ig_engine *e, const struct ig_ival *iv)
{
	uint64_t from = e->win.have_meta ? e->win.meta_ts : 0;
	uint64_t off = iv->t_off > from ? iv->t_off : from;
	uint64_t run0 = iv->t_wake ? iv->t_wake : iv->t_off;
	unsigned int r = iv->reason < IG_R__MAX ? iv->reason : IG_R_OTHER;

	if (run0 < from)
		run0 = from;
	if (iv->t_on > off)
		e->acct.offcpu_ns[r] += iv->t_on - off;
	if (iv->t_on > run0)
		e->acct.runnable_ns += iv->t_on - run0;
}

static void on_offcpu(struct ig_engine *e, const struct ig_offcpu *r)
{
	uint64_t t_on = ig_offcpu_on(r), t_off = r->t_off, t_wake = r->t_wake;
	struct ig_thread *t, *w;
	struct ig_ival *iv;

	/* its switch-in was not reported: back on CPU at t_in, sent at its
	 * next switch-out or driver call (§5.15) */
	if (r->flags & IG_F_IN_UNSEEN)
		e->acct.in_unseen++;

	if (!t_off || t_off > t_on)
		t_off = t_on;
	t = ig_tasks_thread_get(e, r->h.tid, r->h.tgid, t_off);
	if (!t)
		return;
	ig_tasks_comm_note(e, r->waker_tid, r->waker_comm);
	ig_tasks_comm_note(e, r->prev_tid, r->prev_comm);
	/* history is a sequence: an interval cannot start before the last
	 * one ended */
	if (t_off < t->last_on)
		t_off = t->last_on;
	if (t_off > t_on)
		return;
	if (t_wake && t_wake < t_off)
		t_wake = t_off;
	if (t_wake > t_on)
		t_wake = t_on;
	if (ig_head_cutoff(e, t) > t->hist_from)
		ig_tasks_thread_prune(t, ig_head_cutoff(e, t));
	iv = ig_ring_push(&t->ivals);
	if (!iv)
		return;
	iv->t_on = t_on;
	iv->t_off = t_off;
	iv->t_wake = t_wake;
	iv->arg = r->arg;
	iv->waker_tid = r->waker_tid;
	iv->waker_tgid = r->waker_tgid;
	iv->prev_tid = r->prev_tid;
	iv->prev_tgid = r->prev_tgid;
	iv->cpu = IG_HDR_CPU(r->h.cpu);
	iv->reason = r->reason;
	iv->flags = r->flags;
	iv->syscall = r->syscall;
	/* the wait's on-CPU start cannot reach back before the last switch-in */
	iv->pre_ns = t_off - t->last_on < r->pre_ns ? (uint32_t)(t_off - t->last_on)
						   : r->pre_ns;
	memcpy(&iv->detail, &r->detail, sizeof(iv->detail));
	iv->detail.name[IG_NAME_LEN - 1] = '\0';
	iv->dev = (r->reason == IG_R_STORAGE || (r->flags & IG_F_IOWAIT)) ?
		  bio_dev_for(t, t_off, t_on) : 0;
	t->last_on = t_on;
	/* it slept outside any sync: a sync whose return was lost is over */
	if (t->open_begin && t_off >= t->open_begin &&
	    !(r->flags & IG_F_IN_CUDA_SYNC))
		t->open_begin = 0;
	ig_tasks_thread_seen_at(t, t_on);
	offcpu_stats(e, iv);
	/* the waker ran when it woke us; the previous task ran until t_on */
	if (r->waker_tid && !(r->flags & IG_F_WAKER_IRQ) && t_wake &&
	    (w = ig_tasks_thread_find(e, r->waker_tid)))
		ig_tasks_thread_seen_at(w, t_wake);
	if (r->prev_tid && (w = ig_tasks_thread_find(e, r->prev_tid)))
		ig_tasks_thread_seen_at(w, t_on);
}

static struct ig_biodev *biodev_get(struct ig_engine *e, uint32_t dev)
{
	uint32_t i;

	for (i = 0; i < e->acct.nbiodev; i++)
		if (e->acct.biodev[i].dev == dev)
			return &e->acct.biodev[i];
	if (e->acct.nbiodev == IG_MAX_BIODEVS)
		return NULL;
	e->acct.biodev[e->acct.nbiodev].dev = dev;
	return &e->acct.biodev[e->acct.nbiodev++];
}

static void on_bio(struct ig_engine *e, const struct ig_bio *r)
{
	struct ig_thread *t = ig_tasks_thread_find(e, r->h.tid);
	struct ig_biodev *d;

	if (t) {
		struct ig_bio_ref *b = &t->bio[t->nbio++ % IG_BIO_RECENT];

		b->t_issue = r->t_issue;
		b->t_done = r->h.ts;
		b->dev = r->dev;
		if (t->nbio >= 2 * IG_BIO_RECENT)
			t->nbio -= IG_BIO_RECENT;
	}
	/* REQ_OP_READ == 0: latency the reader waited for */
	if (r->op != 0 || r->error || r->t_issue > r->h.ts)
		return;
	d = biodev_get(e, r->dev);
	if (!d)
		return;
	d->reads++;
	d->bytes += r->bytes;
	ig_hist_add(&d->lat, r->h.ts - r->t_issue);
}

static void push_span(struct ig_engine *e, struct ig_thread *t, uint64_t t0,
		      uint64_t t1, uint32_t api)
{
	struct ig_span *last = ig_ring_back(&t->spans), *s;

	if (!t0 || t0 > t1)
		return;
	if (last && t0 < last->t1)
		t0 = last->t1;
	if (t0 >= t1)
		return;
	if (ig_head_cutoff(e, t) > t->hist_from)
		ig_tasks_thread_prune(t, ig_head_cutoff(e, t));
	s = ig_ring_push(&t->spans);
	if (!s)
		return;
	s->t0 = t0;
	s->t1 = t1;
	s->api = api;
	s->pad = 0;
}

/* The device of @tgid's stream @key (0: its context's), for the steps. */
static int dev_of(struct ig_engine *e, uint32_t tgid, uint64_t key)
{
	struct ig_stream *s = key ? ig_tasks_stream_find(e, tgid, key) : NULL;
	struct ig_process *p;

	if (s && s->dev)
		return s->dev->ordinal;
	p = ig_tasks_process_find(e, tgid);
	return p ? ig_gpu_proc_device(p) : -1;
}

static void on_cuda(struct ig_engine *e, const struct ig_cuda *c)
{
	struct ig_thread *t = ig_tasks_thread_get(e, c->h.tid, c->h.tgid, c->h.ts);

	if (c->kind < IG_CU__MAX)
		e->acct.cuda_by_kind[c->kind]++;
	if (t) {
		ig_tasks_thread_seen_at(t, c->h.ts);
		switch (c->kind) {
		case IG_CU_SYNC_BEGIN:
			t->open_begin = c->h.ts;
			t->open_api = c->api;
			break;
		case IG_CU_SYNC_END:
			push_span(e, t, c->t_begin ? c->t_begin : t->open_begin,
				  c->h.ts, c->api);
			t->open_begin = 0;
			break;
		case IG_CU_API:
		case IG_CU_STREAM_NEW:
		case IG_CU_CTX:
			push_span(e, t, c->t_begin, c->h.ts, c->api);
			t->open_begin = 0;
			break;
		default:
			/* another call from this thread: a sync whose return
			 * was not recorded is over */
			t->open_begin = 0;
			break;
		}
	}
	if (e->peers && e->peers->nheld)
		ig_peers_arrive_cuda(e, c);
	if (e->gpu.held_at)
		ig_carry_cuda(e, c);
	else
		ig_gpu_cuda(e, c);
	if (c->kind == IG_CU_SYNC_END && c->ret == 0)
		ig_steps_sync(e, dev_of(e, c->h.tgid, c->stream), c->h.tgid,
			      c->h.ts, c->api);
}

static void on_sample(struct ig_engine *e, const struct ig_sample *r)
{
	struct ig_thread *t = ig_tasks_thread_find(e, r->h.tid);
	struct ig_sample_ref *s, *last;

	if (!t || !t->proc)
		return;
	last = ig_ring_back(&t->samples);
	if (last && last->t > r->h.ts)
		return;		/* keys stay ordered */
	if (ig_head_cutoff(e, t) > t->hist_from)
		ig_tasks_thread_prune(t, ig_head_cutoff(e, t));
	s = ig_ring_push(&t->samples);
	if (!s)
		return;
	s->t = r->h.ts;
	/* the out-of-line page runs instructions of probed libcuda code */
	s->cuda = (r->flags & IG_SF_UPROBE) || ig_tasks_ip_in_libcuda(t->proc, r->ip);
	s->fault = !!(r->flags & IG_SF_FAULT);
	e->acct.nsamples++;
	e->acct.nsamples_cuda += s->cuda;
}

static void on_nvml(struct ig_engine *e, const struct ig_nvml *r)
{
	uint32_t i;

	for (i = 0; i < e->acct.nnvml; i++)
		if (e->acct.nvml[i].device == r->device)
			break;
	if (i == e->acct.nnvml) {
		if (e->acct.nnvml == IG_MAX_DEVICES)
			return;
		e->acct.nvml[e->acct.nnvml++].device = r->device;
	}
	e->acct.nvml[i].n++;
	e->acct.nvml[i].util_sum += r->util_pct;
	e->acct.nvml[i].mem_sum += r->mem_pct;
}

void ig_engine_add_late(struct ig_engine *e, unsigned long n)
{
	if (!n)
		return;
	e->acct.stats.user_lost += n;
	e->lost.any = true;
}

static void on_stats(struct ig_engine *e, const struct ig_hdr *rec)
{
	size_t n = rec->size < sizeof(e->acct.stats) ? rec->size : sizeof(e->acct.stats);

	memset(&e->acct.stats, 0, sizeof(e->acct.stats));
	memcpy(&e->acct.stats, rec, n);
	e->acct.have_stats = true;
	/* STATS says how much was lost, not when: the run as a whole has
	 * lost evidence (ig_gpu_mark_lost takes a time range once the
	 * producer can tell one) */
	if (e->acct.stats.stat[IG_STAT_DROPS] || e->acct.stats.user_lost)
		e->lost.any = true;
}

/* A fork, exec or exit to the task tables.  A process gone: the GPU model
 * closes its streams first (the task tables call no GPU code), then the
 * task tables retire it: its mappings go, it joins the exited list. */
static void on_proc(struct ig_engine *e, const struct ig_proc *r)
{
	struct ig_process *p = ig_tasks_on_proc(e, r);

	if (p) {
		ig_gpu_proc_exit(e, p, r->h.ts);
		ig_tasks_proc_retire(e, p);
	}
}

/* The kernel could not reserve ring space, on this CPU or another, since
 * this CPU's previous record: evidence in between may be missing.  Only the
 * kernel's records are a CPU's: the aggregator's own (IG_REC_USER_BASE and
 * above) carry cpu 0, or the CPU of the record they annotate, at times of
 * their own, and never the flag. */
static void lost_before(struct ig_engine *e, const struct ig_hdr *rec)
{
	uint32_t cpu = IG_HDR_CPU(rec->cpu);
	uint64_t from = cpu < IG_MAX_CPUS && e->win.cpu_last[cpu] ? e->win.cpu_last[cpu]
							       : e->win.first_ts;

	e->lost.marks++;
	ig_gpu_mark_lost(e, from, rec->ts);
}

void ig_engine_feed(struct ig_engine *e, const struct ig_hdr *rec)
{
	union ig_rec tmp;

	if (!e || !rec || e->win.finished || rec->size < sizeof(*rec))
		return;
	/* held (carry.c): the timelines and what ends a held gap only */
	if (e->gpu.held_at && !ig_carry_wants(rec->type)) {
		/* an END: how far an extension went */
		if (rec->type == IG_REC_END && rec->ts > e->win.now)
			e->win.now = rec->ts;
		return;
	}
	e->acct.nrec++;
	e->acct.by_type[ig_rec_slot(rec->type)]++;
	if (!e->win.first_ts)
		e->win.first_ts = rec->ts;
	if (rec->ts > e->win.now)
		e->win.now = rec->ts;

	if (rec->type < IG_REC_USER_BASE) {
		if (rec->cpu & IG_HDR_LOST_BEFORE)
			lost_before(e, rec);
		if (IG_HDR_CPU(rec->cpu) < IG_MAX_CPUS)
			e->win.cpu_last[IG_HDR_CPU(rec->cpu)] = rec->ts;
	}

	switch (rec->type) {
	case IG_REC_OFFCPU: {
		struct ig_offcpu o = *REC(struct ig_offcpu, rec, tmp.o);

		/* asleep since before tracing: why, as /proc said (§5.14) */
		ig_atattach_apply(e, &o);
		if (e->peers && e->peers->nheld)
			ig_peers_arrive_offcpu(e, &o);
		on_offcpu(e, &o);
		break;
	}
	case IG_REC_TSTATE: {
		struct ig_tstate ts;

		ig_atattach_on_rec(e, REC(struct ig_tstate, rec, ts));
		break;
	}
	case IG_REC_SAMPLE:
		on_sample(e, REC(struct ig_sample, rec, tmp.sm));
		break;
	case IG_REC_CUDA:
		ig_head_on_cuda(e, REC(struct ig_cuda, rec, tmp.c));
		on_cuda(e, REC(struct ig_cuda, rec, tmp.c));
		break;
	case IG_REC_BIO:
		on_bio(e, REC(struct ig_bio, rec, tmp.b));
		break;
	case IG_REC_PROC:
		on_proc(e, REC(struct ig_proc, rec, tmp.p));
		break;
	case IG_REC_TASK:
		ig_tasks_on_task(e, REC(struct ig_task, rec, tmp.t));
		break;
	case IG_REC_META: {
		const struct ig_meta *m = REC(struct ig_meta, rec, tmp.mt);

		e->win.meta = *m;
		e->win.meta_ts = rec->ts;
		e->win.have_meta = true;
		break;
	}
	case IG_REC_PYRT: {
		const struct ig_pyrt *y = REC(struct ig_pyrt, rec, tmp.y);
		struct ig_process *p = ig_tasks_process_get(e, rec->tgid, rec->ts);

		if (p) {
			p->pyrt_start = y->start;
			p->pyrt_end = y->end;
		}
		break;
	}
	case IG_REC_MAPPING:
		ig_tasks_on_mapping(e, REC(struct ig_mapping, rec, tmp.m));
		break;
	case IG_REC_GPUMAP: {
		const struct ig_gpumap *g = REC(struct ig_gpumap, rec, tmp.g);
		struct ig_process *p = ig_tasks_process_get(e, rec->tgid, rec->ts);

		if (p) {
			p->ngpumap = g->n < IG_GPUMAP_MAX ? g->n : IG_GPUMAP_MAX;
			memcpy(p->gpumap, g->dev, sizeof(p->gpumap));
		}
		break;
	}
	case IG_REC_GPUDEV: {
		struct ig_gpudev gd;
		const struct ig_gpudev *g = REC(struct ig_gpudev, rec, gd);
		struct ig_process *p = ig_tasks_process_get(e, rec->tgid, rec->ts);

		if (p) {
			p->gd_seen = true;
			p->gd_dev = g->dev < IG_MERGE_DEV_STRIDE ? g->dev : -1;
			p->gd_src = g->src;
			p->env_rank = g->rank;
			memcpy(p->gd_uuid, g->uuid, sizeof(p->gd_uuid));
			p->gd_uuid[sizeof(p->gd_uuid) - 1] = '\0';
		}
		break;
	}
	case IG_REC_FILE:
		ig_files_on_rec(e, rec);	/* a bad one names no file */
		break;
	case IG_REC_PYSTACK:
	case IG_REC_USTACK:
		ig_stacks_on_rec(e, ig_tasks_thread_get(e, rec->tid, rec->tgid, rec->ts), rec);
		break;
	case IG_REC_PYCODE:
	case IG_REC_USYM:
		ig_stacks_on_rec(e, NULL, rec);
		break;
	case IG_REC_LAUNCHES: {
		struct ig_launches lb;
		const struct ig_launches *l = REC(struct ig_launches, rec, lb);

		ig_est_on_launches(e, rec);
		ig_steps_launches(e, dev_of(e, rec->tgid, l->stream), rec->tgid, l);
		break;
	}
	case IG_REC_NVWIN:
		ig_head_on_nvwin(e, REC(struct ig_nvwin, rec, tmp.nw));
		ig_est_on_nvwin(e, REC(struct ig_nvwin, rec, tmp.nw));
		break;
	case IG_REC_NVML:
		on_nvml(e, REC(struct ig_nvml, rec, tmp.n));
		break;
	case IG_REC_STATS:
		on_stats(e, rec);
		break;
	case IG_REC_LIBCUDA:
		if (e->acct.nlibcuda < IG_MAX_LIBCUDA)
			e->acct.libcuda[e->acct.nlibcuda++] =
				*REC(struct ig_libcuda, rec, tmp.l);
		break;
	case IG_REC_NCCL: {
		struct ig_nccl nc;
		const struct ig_nccl *r = REC(struct ig_nccl, rec, nc);

		ig_peers_arrive_nccl(e, r);
		if (r->kind == IG_NC_COLL && !(r->flags & IG_NCF_GROUPED))
			ig_steps_coll(e, dev_of(e, rec->tgid, r->stream),
				      rec->tgid, rec->ts, r->api, r->count);
		break;
	}
	case IG_REC_LIBNCCL: {
		struct ig_libnccl ln;

		ig_peers_lib(e, REC(struct ig_libnccl, rec, ln));
		break;
	}
	case IG_REC_IDENT: {
		struct ig_ident id;

		ig_engine_ident_on_rec(e, REC(struct ig_ident, rec, id));
		break;
	}
	case IG_REC_END: {
		const struct ig_end *x = REC(struct ig_end, rec, tmp.x);

		e->win.end_ts = rec->ts;
		e->win.stop_reason = x->reason;
		e->win.have_end = true;
		break;
	}
	default:
		break;
	}

	if (e->attr.defer.len)
		ig_attrib_defer_poll(e, false);
	if (e->win.now >= e->win.next_gc)
		ig_engine_gc(e);
}
