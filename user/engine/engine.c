// SPDX-License-Identifier: GPL-2.0
/*
 * Record intake: the process/thread tables, per-thread history (off-CPU
 * intervals, CUDA call spans, recent block IO) and the sliding window that
 * keeps that history bounded.  GPU evidence goes on to gpu.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/model.h"
#include "engine/files.h"
#include "util.h"

#define GC_EVERY_NS	(100 * 1000 * 1000ULL)

static void copy_str(char *dst, size_t n, const char *src, size_t srcn)
{
	size_t i;

	for (i = 0; i + 1 < n && i < srcn && src[i]; i++)
		dst[i] = src[i];
	dst[i] = '\0';
}

/* A record shorter than its struct (older producer): read it zero-padded. */
#define REC(type, rec, tmp)						\
	((rec)->size >= sizeof(type) ? (const type *)(rec) :		\
	 (memset(&(tmp), 0, sizeof(tmp)),				\
	  memcpy(&(tmp), (rec), (rec)->size), (const type *)&(tmp)))

/* ---- comm cache: names of threads outside the tracked set ---- */

void ig_comm_note(struct ig_engine *e, uint32_t tid, const char *comm)
{
	struct ig_comm_ent *c = &e->comms[tid % IG_COMM_CACHE];

	if (!comm[0])
		return;
	c->tid = tid;
	copy_str(c->comm, sizeof(c->comm), comm, IG_COMM_LEN);
}

const char *ig_comm_of(const struct ig_engine *e, uint32_t tid)
{
	const struct ig_thread *t = ig_thread_find(e, tid);
	const struct ig_comm_ent *c = &e->comms[tid % IG_COMM_CACHE];

	if (t && t->comm[0])
		return t->comm;
	if (c->tid == tid && c->comm[0])
		return c->comm;
	return tid ? "?" : "swapper";
}

/* ---- processes and threads ---- */

struct ig_process *ig_process_find(const struct ig_engine *e, uint32_t tgid)
{
	return ig_htab_get(&e->procs, tgid);
}

struct ig_process *ig_process_get(struct ig_engine *e, uint32_t tgid, uint64_t seen)
{
	struct ig_process *p = ig_htab_get(&e->procs, tgid);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (ig_htab_init(&p->streams, 8) ||
	    ig_htab_put(&e->procs, tgid, p)) {
		ig_htab_free(&p->streams);
		free(p);
		return NULL;
	}
	p->pid = tgid;
	p->first_seen = seen;
	p->exit_ts = IG_NS_INF;
	e->nprocs++;
	return p;
}

struct ig_thread *ig_thread_find(const struct ig_engine *e, uint32_t tid)
{
	return ig_htab_get(&e->threads, tid);
}

static void thread_link_proc(struct ig_thread *t, struct ig_process *p)
{
	t->proc = p;
	t->proc_next = p->threads;
	p->threads = t;
	p->nthreads_seen++;
}

static void thread_unlink_proc(struct ig_thread *t)
{
	struct ig_thread **pp;

	if (!t->proc)
		return;
	for (pp = &t->proc->threads; *pp; pp = &(*pp)->proc_next) {
		if (*pp == t) {
			*pp = t->proc_next;
			break;
		}
	}
	t->proc = NULL;
}

static void thread_reset(struct ig_thread *t, uint64_t seen)
{
	ig_ring_free(&t->ivals);
	ig_ring_free(&t->spans);
	ig_ring_free(&t->samples);
	t->first_seen = seen;
	t->exit_ts = IG_NS_INF;
	t->known_until = seen;
	t->hist_from = 0;
	t->last_on = 0;
	t->open_begin = 0;
	t->nbio = 0;
}

struct ig_thread *ig_thread_get(struct ig_engine *e, uint32_t tid,
				uint32_t tgid, uint64_t seen)
{
	struct ig_thread *t = ig_htab_get(&e->threads, tid);
	struct ig_process *p;

	if (t) {
		if (t->tgid != tgid && tgid) {
			/* the tid now belongs to another process */
			p = ig_process_get(e, tgid, seen);
			if (!p)
				return t;
			thread_unlink_proc(t);
			thread_link_proc(t, p);
			t->tgid = tgid;
			thread_reset(t, seen);
		}
		return t;
	}
	p = ig_process_get(e, tgid ? tgid : tid, seen);
	if (!p)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	if (ig_htab_put(&e->threads, tid, t)) {
		free(t);
		return NULL;
	}
	t->tid = tid;
	t->tgid = tgid ? tgid : tid;
	ig_ring_init(&t->ivals, sizeof(struct ig_ival));
	ig_ring_init(&t->spans, sizeof(struct ig_span));
	ig_ring_init(&t->samples, sizeof(struct ig_sample_ref));
	thread_reset(t, seen);
	thread_link_proc(t, p);
	t->next = e->thr_head;
	if (e->thr_head)
		e->thr_head->prev = t;
	e->thr_head = t;
	e->nthreads++;
	return t;
}

static void thread_free(struct ig_engine *e, struct ig_thread *t)
{
	ig_htab_del(&e->threads, t->tid);
	thread_unlink_proc(t);
	if (t->prev)
		t->prev->next = t->next;
	else
		e->thr_head = t->next;
	if (t->next)
		t->next->prev = t->prev;
	ig_ring_free(&t->ivals);
	ig_ring_free(&t->spans);
	ig_ring_free(&t->samples);
	free(t);
	e->nthreads--;
	e->threads_freed++;
}

static void proc_free(struct ig_engine *e, struct ig_process *p)
{
	struct ig_thread *t;

	while ((t = p->threads))
		thread_free(e, t);
	ig_htab_del(&e->procs, p->pid);
	ig_htab_free(&p->streams);
	free(p->maps);
	free(p);
	e->nprocs--;
}

/* The thread ran at ts: its state is known up to there. */
void ig_thread_seen_at(struct ig_thread *t, uint64_t ts)
{
	if (ts > t->known_until && ts < t->exit_ts)
		t->known_until = ts;
}

static void thread_prune(struct ig_thread *t, uint64_t cutoff)
{
	uint32_t n;

	if (cutoff <= t->hist_from)
		return;
	t->hist_from = cutoff;
	n = ig_ring_upper(&t->ivals, offsetof(struct ig_ival, t_on), cutoff - 1);
	if (n) {
		ig_ring_pop_front(&t->ivals, n);
		ig_ring_trim(&t->ivals);
	}
	n = ig_ring_upper(&t->spans, offsetof(struct ig_span, t1), cutoff - 1);
	if (n) {
		ig_ring_pop_front(&t->spans, n);
		ig_ring_trim(&t->spans);
	}
	n = ig_ring_upper(&t->samples, offsetof(struct ig_sample_ref, t), cutoff - 1);
	if (n) {
		ig_ring_pop_front(&t->samples, n);
		ig_ring_trim(&t->samples);
	}
}

static void maps_clear(struct ig_process *p)
{
	free(p->maps);
	p->maps = NULL;
	p->nmaps = p->capmaps = 0;
}

static void maps_copy(struct ig_process *dst, const struct ig_process *src)
{
	maps_clear(dst);
	if (!src->nmaps)
		return;
	dst->maps = malloc(src->nmaps * sizeof(*dst->maps));
	if (!dst->maps)
		return;
	memcpy(dst->maps, src->maps, src->nmaps * sizeof(*dst->maps));
	dst->nmaps = dst->capmaps = src->nmaps;
}

static void proc_exited(struct ig_engine *e, struct ig_process *p, uint64_t ts)
{
	struct ig_thread *t;

	if (p->exit_ts != IG_NS_INF)
		return;
	p->exit_ts = ts;
	for (t = p->threads; t; t = t->proc_next)
		if (t->exit_ts > ts)
			t->exit_ts = ts;
	ig_gpu_proc_exit(e, p, ts);
	maps_clear(p);
	p->exit_next = NULL;
	if (e->exit_tail)
		e->exit_tail->exit_next = p;
	else
		e->exit_head = p;
	e->exit_tail = p;
	e->nexited++;
}

/* ---- record handlers ---- */

static uint64_t attach_ts(const struct ig_engine *e, uint64_t ts)
{
	return e->have_meta ? e->meta_ts : ts;
}

static void on_task(struct ig_engine *e, const struct ig_task *r)
{
	uint64_t seen = attach_ts(e, r->h.ts);
	struct ig_thread *t = ig_thread_get(e, r->h.tid, r->h.tgid, seen);
	struct ig_process *p;

	if (!t)
		return;
	if (seen < t->first_seen)
		t->first_seen = seen;
	copy_str(t->comm, sizeof(t->comm), r->comm, sizeof(r->comm));
	p = t->proc;
	if (r->h.tid == r->h.tgid || !r->is_thread) {
		p->ppid = r->ppid;
		copy_str(p->comm, sizeof(p->comm), r->comm, sizeof(r->comm));
		if (r->exe[0])
			copy_str(p->exe, sizeof(p->exe), r->exe, sizeof(r->exe));
	}
	if (seen < p->first_seen)
		p->first_seen = seen;
}

static void on_fork(struct ig_engine *e, const struct ig_proc *r)
{
	struct ig_process *p, *parent = ig_process_find(e, r->ppid);
	struct ig_thread *t = ig_thread_find(e, r->h.tid);

	if (t)
		thread_reset(t, r->h.ts);
	t = ig_thread_get(e, r->h.tid, r->h.tgid, r->h.ts);
	if (!t)
		return;
	p = t->proc;
	p->ppid = r->ppid;
	p->first_seen = r->h.ts;
	p->exit_ts = IG_NS_INF;
	copy_str(t->comm, sizeof(t->comm), r->comm, sizeof(r->comm));
	copy_str(p->comm, sizeof(p->comm), r->comm, sizeof(r->comm));
	if (parent && parent != p) {
		/* fork copies the address space: the interpreter and the
		 * mappings stay where they were until exec */
		p->pyrt_start = parent->pyrt_start;
		p->pyrt_end = parent->pyrt_end;
		memcpy(p->exe, parent->exe, sizeof(p->exe));
		maps_copy(p, parent);
	}
}

static void on_proc(struct ig_engine *e, const struct ig_proc *r)
{
	struct ig_thread *t;
	struct ig_process *p;

	switch (r->kind) {
	case IG_PROC_FORK:
		on_fork(e, r);
		break;
	case IG_PROC_THREAD:
		t = ig_thread_find(e, r->h.tid);
		if (t)
			thread_reset(t, r->h.ts);
		t = ig_thread_get(e, r->h.tid, r->h.tgid, r->h.ts);
		if (t)
			copy_str(t->comm, sizeof(t->comm), r->comm,
				 sizeof(r->comm));
		break;
	case IG_PROC_EXEC:
		t = ig_thread_get(e, r->h.tid, r->h.tgid, r->h.ts);
		if (!t)
			break;
		ig_thread_seen_at(t, r->h.ts);
		p = t->proc;
		copy_str(t->comm, sizeof(t->comm), r->comm, sizeof(r->comm));
		copy_str(p->comm, sizeof(p->comm), r->comm, sizeof(r->comm));
		if (r->name[0])
			copy_str(p->exe, sizeof(p->exe), r->name,
				 sizeof(r->name));
		/* a new image: the old interpreter and mappings are gone */
		p->pyrt_start = p->pyrt_end = 0;
		maps_clear(p);
		break;
	case IG_PROC_EXIT:
		t = ig_thread_find(e, r->h.tid);
		if (t && t->exit_ts > r->h.ts)
			t->exit_ts = r->h.ts;
		break;
	case IG_PROC_GROUP_EXIT:
		t = ig_thread_find(e, r->h.tid);
		if (t && t->exit_ts > r->h.ts)
			t->exit_ts = r->h.ts;
		p = ig_process_find(e, r->h.tgid);
		if (p)
			proc_exited(e, p, r->h.ts);
		break;
	}
}

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
	uint64_t from = e->have_meta ? e->meta_ts : 0;
	uint64_t off = iv->t_off > from ? iv->t_off : from;
	uint64_t run0 = iv->t_wake ? iv->t_wake : iv->t_off;
	unsigned int r = iv->reason < IG_R__MAX ? iv->reason : IG_R_OTHER;

	if (run0 < from)
		run0 = from;
	if (iv->t_on > off)
		e->offcpu_ns[r] += iv->t_on - off;
	if (iv->t_on > run0)
		e->runnable_ns += iv->t_on - run0;
}

static void on_offcpu(struct ig_engine *e, const struct ig_offcpu *r)
{
	uint64_t t_on = r->h.ts, t_off = r->t_off, t_wake = r->t_wake;
	struct ig_thread *t, *w;
	struct ig_ival *iv;

	if (!t_off || t_off > t_on)
		t_off = t_on;
	t = ig_thread_get(e, r->h.tid, r->h.tgid, t_off);
	if (!t)
		return;
	ig_comm_note(e, r->waker_tid, r->waker_comm);
	ig_comm_note(e, r->prev_tid, r->prev_comm);
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
	if (e->cutoff > t->hist_from)
		thread_prune(t, e->cutoff);
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
	ig_thread_seen_at(t, t_on);
	offcpu_stats(e, iv);
	/* the waker ran when it woke us; the previous task ran until t_on */
	if (r->waker_tid && !(r->flags & IG_F_WAKER_IRQ) && t_wake &&
	    (w = ig_thread_find(e, r->waker_tid)))
		ig_thread_seen_at(w, t_wake);
	if (r->prev_tid && (w = ig_thread_find(e, r->prev_tid)))
		ig_thread_seen_at(w, t_on);
}

static struct ig_biodev *biodev_get(struct ig_engine *e, uint32_t dev)
{
	uint32_t i;

	for (i = 0; i < e->nbiodev; i++)
		if (e->biodev[i].dev == dev)
			return &e->biodev[i];
	if (e->nbiodev == IG_MAX_BIODEVS)
		return NULL;
	e->biodev[e->nbiodev].dev = dev;
	return &e->biodev[e->nbiodev++];
}

static void on_bio(struct ig_engine *e, const struct ig_bio *r)
{
	struct ig_thread *t = ig_thread_find(e, r->h.tid);
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
	if (e->cutoff > t->hist_from)
		thread_prune(t, e->cutoff);
	s = ig_ring_push(&t->spans);
	if (!s)
		return;
	s->t0 = t0;
	s->t1 = t1;
	s->api = api;
	s->pad = 0;
}

static void on_cuda(struct ig_engine *e, const struct ig_cuda *c)
{
	struct ig_thread *t = ig_thread_get(e, c->h.tid, c->h.tgid, c->h.ts);

	if (c->kind < IG_CU__MAX)
		e->cuda_by_kind[c->kind]++;
	if (t) {
		ig_thread_seen_at(t, c->h.ts);
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
	ig_gpu_cuda(e, c);
}

static void on_mapping(struct ig_engine *e, const struct ig_mapping *r)
{
	struct ig_process *p = ig_process_get(e, r->h.tgid, r->h.ts);
	uint32_t i;

	if (!p || r->end <= r->start)
		return;
	if (p->nmaps == p->capmaps) {
		uint32_t cap = p->capmaps ? p->capmaps * 2 : 32;
		struct ig_map *m;

		if (cap > IG_MAX_MAPS)
			return;
		m = realloc(p->maps, cap * sizeof(*m));
		if (!m)
			return;
		p->maps = m;
		p->capmaps = cap;
	}
	for (i = p->nmaps; i > 0 && p->maps[i - 1].start > r->start; i--)
		p->maps[i] = p->maps[i - 1];
	p->maps[i].start = r->start;
	p->maps[i].end = r->end;
	copy_str(p->maps[i].path, sizeof(p->maps[i].path), r->path,
		 sizeof(r->path));
	p->nmaps++;
}

const char *ig_map_lookup(const struct ig_process *p, uint64_t addr)
{
	uint32_t lo = 0, hi = p ? p->nmaps : 0;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < p->maps[lo - 1].end)
		return p->maps[lo - 1].path;
	return NULL;
}

/* Is @ip in the process's CUDA driver (a libcuda.so* mapping)? */
static bool ip_in_libcuda(const struct ig_process *p, uint64_t ip)
{
	const char *path = ig_map_lookup(p, ip);

	return path && strstr(path, "libcuda.so");
}

static void on_sample(struct ig_engine *e, const struct ig_sample *r)
{
	struct ig_thread *t = ig_thread_find(e, r->h.tid);
	struct ig_sample_ref *s, *last;

	if (!t || !t->proc)
		return;
	last = ig_ring_back(&t->samples);
	if (last && last->t > r->h.ts)
		return;		/* keys stay ordered */
	if (e->cutoff > t->hist_from)
		thread_prune(t, e->cutoff);
	s = ig_ring_push(&t->samples);
	if (!s)
		return;
	s->t = r->h.ts;
	/* the out-of-line page runs instructions of probed libcuda code */
	s->cuda = (r->flags & IG_SF_UPROBE) || ip_in_libcuda(t->proc, r->ip);
	s->fault = !!(r->flags & IG_SF_FAULT);
	e->nsamples++;
	e->nsamples_cuda += s->cuda;
}

static void on_nvml(struct ig_engine *e, const struct ig_nvml *r)
{
	uint32_t i;

	for (i = 0; i < e->nnvml; i++)
		if (e->nvml[i].device == r->device)
			break;
	if (i == e->nnvml) {
		if (e->nnvml == IG_MAX_DEVICES)
			return;
		e->nvml[e->nnvml++].device = r->device;
	}
	e->nvml[i].n++;
	e->nvml[i].util_sum += r->util_pct;
	e->nvml[i].mem_sum += r->mem_pct;
}

static void on_stats(struct ig_engine *e, const struct ig_hdr *rec)
{
	size_t n = rec->size < sizeof(e->stats) ? rec->size : sizeof(e->stats);

	memset(&e->stats, 0, sizeof(e->stats));
	memcpy(&e->stats, rec, n);
	e->have_stats = true;
	/* STATS says how much was lost, not when: the run as a whole has
	 * lost evidence (ig_gpu_mark_lost takes a time range once the
	 * producer can tell one) */
	if (e->stats.stat[IG_STAT_DROPS] || e->stats.user_lost)
		e->evidence_lost = true;
}

/* ---- window ---- */

static bool loss_gone(const void *el, uint64_t cutoff)
{
	return ((const struct ig_busy *)el)->t1 < cutoff;
}

static void gc(struct ig_engine *e)
{
	uint64_t keep = ig_gpu_keep_from(e), cutoff;
	struct ig_thread *t, *next;

	if (e->defer.len) {
		const struct ig_piece *p = ig_ring_at(&e->defer, 0);

		if (p->t0 < keep)
			keep = p->t0;
	}
	if (keep > e->now)
		keep = e->now;
	cutoff = e->now > e->window_ns ? e->now - e->window_ns : 0;
	if (keep > cutoff)
		cutoff = keep;
	if (cutoff > e->cutoff)
		e->cutoff = cutoff;
	for (t = e->thr_head; t; t = next) {
		next = t->next;
		if (t->exit_ts != IG_NS_INF && t->exit_ts < e->cutoff)
			thread_free(e, t);
		else
			thread_prune(t, e->cutoff);
	}
	while (e->nexited > IG_EXITED_PROCS_KEEP && e->exit_head &&
	       e->exit_head->exit_ts < e->cutoff) {
		struct ig_process *p = e->exit_head;

		e->exit_head = p->exit_next;
		if (!e->exit_head)
			e->exit_tail = NULL;
		e->nexited--;
		proc_free(e, p);
		e->procs_freed++;
	}
	if (e->loss.n)
		ig_vec_drop_where(&e->loss, loss_gone, e->cutoff);
	e->gc_count++;
	e->next_gc = e->now + GC_EVERY_NS;
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
	e->max_depth = e->o.max_depth > 0 ? e->o.max_depth : 4;
	if (e->max_depth > IG_DEPTH_CAP)
		e->max_depth = IG_DEPTH_CAP;
	e->window_ns = (uint64_t)((e->o.window_s > 0 ? e->o.window_s : 60.0) *
				  1e9);
	if (e->window_ns < 1000000)
		e->window_ns = 1000000;
	e->max_gaps = e->o.max_gaps_json ? e->o.max_gaps_json : 1000;
	if (e->max_gaps == IG_GAPS_NONE)
		e->max_gaps = 0;
	else if (e->max_gaps < 0)
		e->max_gaps = -1;
	e->gaps.limit = e->max_gaps;
	e->unres_list.limit = e->max_gaps;
	e->comms = calloc(IG_COMM_CACHE, sizeof(*e->comms));
	ig_ring_init(&e->defer, sizeof(struct ig_piece));
	e->loss.esz = sizeof(struct ig_busy);
	if (!e->comms || ig_htab_init(&e->threads, 256) ||
	    ig_htab_init(&e->procs, 64)) {
		ig_engine_free(e);
		errno = ENOMEM;
		return NULL;
	}
	return e;
}

/* The kernel could not reserve ring space on this CPU since its previous
 * record: evidence in between may be missing.  User space records carry
 * cpu 0 and no flag. */
static void lost_before(struct ig_engine *e, const struct ig_hdr *rec)
{
	uint32_t cpu = IG_HDR_CPU(rec->cpu);
	uint64_t from = cpu < IG_MAX_CPUS && e->cpu_last[cpu] ? e->cpu_last[cpu]
							       : e->first_ts;

	e->lost_marks++;
	ig_gpu_mark_lost(e, from, rec->ts);
}

void ig_engine_feed(struct ig_engine *e, const struct ig_hdr *rec)
{
	union {
		struct ig_offcpu o;
		struct ig_sample sm;
		struct ig_cuda c;
		struct ig_proc p;
		struct ig_task t;
		struct ig_bio b;
		struct ig_pyrt y;
		struct ig_mapping m;
		struct ig_nvml n;
		struct ig_end x;
		struct ig_meta mt;
		struct ig_libcuda l;
	} tmp;

	if (!e || !rec || e->finished || rec->size < sizeof(*rec))
		return;
	e->nrec++;
	e->by_type[ig_rec_slot(rec->type)]++;
	if (!e->first_ts)
		e->first_ts = rec->ts;
	if (rec->ts > e->now)
		e->now = rec->ts;

	if (rec->cpu & IG_HDR_LOST_BEFORE)
		lost_before(e, rec);
	if (IG_HDR_CPU(rec->cpu) < IG_MAX_CPUS)
		e->cpu_last[IG_HDR_CPU(rec->cpu)] = rec->ts;

	switch (rec->type) {
	case IG_REC_OFFCPU:
		on_offcpu(e, REC(struct ig_offcpu, rec, tmp.o));
		break;
	case IG_REC_SAMPLE:
		on_sample(e, REC(struct ig_sample, rec, tmp.sm));
		break;
	case IG_REC_CUDA:
		on_cuda(e, REC(struct ig_cuda, rec, tmp.c));
		break;
	case IG_REC_BIO:
		on_bio(e, REC(struct ig_bio, rec, tmp.b));
		break;
	case IG_REC_PROC:
		on_proc(e, REC(struct ig_proc, rec, tmp.p));
		break;
	case IG_REC_TASK:
		on_task(e, REC(struct ig_task, rec, tmp.t));
		break;
	case IG_REC_META: {
		const struct ig_meta *m = REC(struct ig_meta, rec, tmp.mt);

		e->meta = *m;
		e->meta_ts = rec->ts;
		e->have_meta = true;
		break;
	}
	case IG_REC_PYRT: {
		const struct ig_pyrt *y = REC(struct ig_pyrt, rec, tmp.y);
		struct ig_process *p = ig_process_get(e, rec->tgid, rec->ts);

		if (p) {
			p->pyrt_start = y->start;
			p->pyrt_end = y->end;
		}
		break;
	}
	case IG_REC_MAPPING:
		on_mapping(e, REC(struct ig_mapping, rec, tmp.m));
		break;
	case IG_REC_FILE:
		ig_files_on_rec(e, rec);	/* a bad one names no file */
		break;
	case IG_REC_NVML:
		on_nvml(e, REC(struct ig_nvml, rec, tmp.n));
		break;
	case IG_REC_STATS:
		on_stats(e, rec);
		break;
	case IG_REC_LIBCUDA:
		if (e->nlibcuda < IG_MAX_LIBCUDA)
			e->libcuda[e->nlibcuda++] =
				*REC(struct ig_libcuda, rec, tmp.l);
		break;
	case IG_REC_END: {
		const struct ig_end *x = REC(struct ig_end, rec, tmp.x);

		e->end_ts = rec->ts;
		e->stop_reason = x->reason;
		e->have_end = true;
		break;
	}
	default:
		break;
	}

	if (e->defer.len)
		ig_defer_poll(e, false);
	if (e->now >= e->next_gc)
		gc(e);
}

void ig_engine_finish(struct ig_engine *e)
{
	if (!e || e->finished)
		return;
	ig_gpu_finish(e);
	ig_defer_poll(e, true);
	e->finished = true;
	if (e->o.verbose) {
		struct ig_engine_mem m;

		ig_engine_mem(e, &m);
		fprintf(stderr, "engine: %llu records, %llu threads held "
			"(%llu freed), %llu intervals, %zu KiB\n",
			(unsigned long long)e->nrec,
			(unsigned long long)m.threads,
			(unsigned long long)e->threads_freed,
			(unsigned long long)m.intervals, m.bytes / 1024);
	}
}

void ig_engine_mem(const struct ig_engine *e, struct ig_engine_mem *m)
{
	const struct ig_thread *t;
	uint32_t i;

	memset(m, 0, sizeof(*m));
	m->threads = e->nthreads;
	m->procs = e->nprocs;
	m->bytes = sizeof(*e) + ig_htab_bytes(&e->threads) +
		   ig_htab_bytes(&e->procs) +
		   IG_COMM_CACHE * sizeof(*e->comms) +
		   ig_ring_bytes(&e->defer) + e->scratch_cap +
		   ig_hist_bytes(&e->gap_hist) +
		   (e->gaps.cap + e->unres_list.cap) * sizeof(struct ig_gap);
	for (t = e->thr_head; t; t = t->next) {
		m->intervals += t->ivals.len;
		m->spans += t->spans.len;
		m->bytes += sizeof(*t) + ig_ring_bytes(&t->ivals) +
			    ig_ring_bytes(&t->spans);
	}
	for (i = 0; i < e->ndevs; i++) {
		const struct ig_device *d = e->devs[i];

		m->closed += d->closed.n;
		m->busy += d->busy.n;
		m->streams += d->nstreams;
		m->bytes += sizeof(*d) + (size_t)d->closed.cap * d->closed.esz +
			    (size_t)d->busy.cap * d->busy.esz +
			    d->capopen * sizeof(*d->open);
	}
	m->deferred = e->defer.len;
}

void ig_engine_free(struct ig_engine *e)
{
	uint32_t i;

	if (!e)
		return;
	ig_gpu_free(e);
	while (e->thr_head)
		thread_free(e, e->thr_head);
	if (e->procs.vals) {
		for (i = 0; i < e->procs.cap; i++) {
			struct ig_process *p = e->procs.vals[i];

			if (!p)
				continue;
			ig_htab_free(&p->streams);
			free(p->maps);
			free(p);
		}
	}
	ig_htab_free(&e->threads);
	ig_htab_free(&e->procs);
	ig_files_free(e);
	ig_hist_free(&e->gap_hist);
	for (i = 0; i < e->nbiodev; i++)
		ig_hist_free(&e->biodev[i].lat);
	free(e->gaps.g);
	free(e->unres_list.g);
	ig_ring_free(&e->defer);
	free(e->loss.v);
	free(e->scratch);
	free(e->comms);
	free(e);
}
