// SPDX-License-Identifier: GPL-2.0
/*
 * The task tables: processes and threads by id, each process's file
 * mappings, and what fork, exec and exit do to them.  Thread history
 * (off-CPU intervals, CUDA spans, samples) lives on the thread; the window
 * prunes it here.  Their lookups, a thread's that exists among them, and
 * the comm cache for threads outside them are inline in model.h.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "engine/model.h"
#include "engine/tasks.h"
#include "engine/attrib/stacks.h"
#include "engine/idents.h"
#include "util/util.h"

static void copy_str(char *dst, size_t n, const char *src, size_t srcn)
{
	size_t i;

	for (i = 0; i + 1 < n && i < srcn && src[i]; i++)
		dst[i] = src[i];
	dst[i] = '\0';
}

/* ---- processes and threads ---- */

struct ig_process *ig_tasks_process_get(struct ig_engine *e, uint32_t tgid, uint64_t seen)
{
	struct ig_process *p = ig_htab_get(&e->tasks.procs, tgid);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (ig_htab_init(&p->streams, 8) ||
	    ig_htab_put(&e->tasks.procs, tgid, p)) {
		ig_htab_free(&p->streams);
		free(p);
		return NULL;
	}
	p->pid = tgid;
	p->first_seen = seen;
	p->exit_ts = IG_NS_INF;
	e->tasks.nprocs++;
	return p;
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
	ig_ring_free(&t->stks);
	t->first_seen = seen;
	t->exit_ts = IG_NS_INF;
	t->known_until = seen;
	t->hist_from = 0;
	t->last_on = 0;
	t->open_begin = 0;
	t->nbio = 0;
}

struct ig_thread *ig_tasks_thread_add(struct ig_engine *e, uint32_t tid,
				      uint32_t tgid, uint64_t seen)
{
	struct ig_thread *t = ig_htab_get(&e->tasks.threads, tid);
	struct ig_process *p;

	if (t) {
		if (t->tgid != tgid && tgid) {
			/* the tid now belongs to another process */
			p = ig_tasks_process_get(e, tgid, seen);
			if (!p)
				return t;
			thread_unlink_proc(t);
			thread_link_proc(t, p);
			t->tgid = tgid;
			thread_reset(t, seen);
		}
		return t;
	}
	p = ig_tasks_process_get(e, tgid ? tgid : tid, seen);
	if (!p)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	if (ig_htab_put(&e->tasks.threads, tid, t)) {
		free(t);
		return NULL;
	}
	t->tid = tid;
	t->tgid = tgid ? tgid : tid;
	ig_ring_init(&t->ivals, sizeof(struct ig_ival));
	ig_ring_init(&t->spans, sizeof(struct ig_span));
	ig_ring_init(&t->samples, sizeof(struct ig_sample_ref));
	ig_ring_init(&t->stks, sizeof(struct ig_stk_ref));
	thread_reset(t, seen);
	thread_link_proc(t, p);
	t->next = e->tasks.thr_head;
	if (e->tasks.thr_head)
		e->tasks.thr_head->prev = t;
	e->tasks.thr_head = t;
	e->tasks.nthreads++;
	return t;
}

void ig_tasks_thread_free(struct ig_engine *e, struct ig_thread *t)
{
	ig_htab_del(&e->tasks.threads, t->tid);
	thread_unlink_proc(t);
	if (t->prev)
		t->prev->next = t->next;
	else
		e->tasks.thr_head = t->next;
	if (t->next)
		t->next->prev = t->prev;
	ig_ring_free(&t->ivals);
	ig_ring_free(&t->spans);
	ig_ring_free(&t->samples);
	ig_ring_free(&t->stks);
	free(t);
	e->tasks.nthreads--;
	e->tasks.threads_freed++;
}

void ig_tasks_process_free(struct ig_engine *e, struct ig_process *p)
{
	struct ig_thread *t;

	while ((t = p->threads))
		ig_tasks_thread_free(e, t);
	ig_htab_del(&e->tasks.procs, p->pid);
	ig_htab_free(&p->streams);
	free(p->maps);
	free(p);
	e->tasks.nprocs--;
}

void ig_tasks_thread_prune(struct ig_thread *t, uint64_t cutoff)
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
	/* the stack at the cutoff is the newest change before it: kept */
	n = ig_ring_upper(&t->stks, offsetof(struct ig_stk_ref, t), cutoff - 1);
	if (n > 1) {
		ig_ring_pop_front(&t->stks, n - 1);
		ig_ring_trim(&t->stks);
	}
}

static void maps_clear(struct ig_process *p)
{
	free(p->maps);
	p->maps = NULL;
	p->nmaps = p->capmaps = 0;
}

void ig_tasks_process_gone(struct ig_process *p)
{
	maps_clear(p);
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

/* The process's last thread exited at @ts: its exit time and its threads'.
 * @p when it had not exited before, else NULL. */
static struct ig_process *proc_exited(struct ig_process *p, uint64_t ts)
{
	struct ig_thread *t;

	if (p->exit_ts != IG_NS_INF)
		return NULL;
	p->exit_ts = ts;
	for (t = p->threads; t; t = t->proc_next)
		if (t->exit_ts > ts)
			t->exit_ts = ts;
	return p;
}

void ig_tasks_proc_retire(struct ig_engine *e, struct ig_process *p)
{
	maps_clear(p);
	p->exit_next = NULL;
	if (e->tasks.exit_tail)
		e->tasks.exit_tail->exit_next = p;
	else
		e->tasks.exit_head = p;
	e->tasks.exit_tail = p;
	e->tasks.nexited++;
}

/* ---- task records ---- */

static uint64_t attach_ts(const struct ig_engine *e, uint64_t ts)
{
	return e->win.have_meta ? e->win.meta_ts : ts;
}

void ig_tasks_on_task(struct ig_engine *e, const struct ig_task *r)
{
	uint64_t seen = attach_ts(e, r->h.ts);
	struct ig_thread *t = ig_tasks_thread_get(e, r->h.tid, r->h.tgid, seen);
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
	struct ig_process *p, *parent = ig_tasks_process_find(e, r->ppid);
	struct ig_thread *t = ig_tasks_thread_find(e, r->h.tid);

	if (t)
		thread_reset(t, r->h.ts);
	t = ig_tasks_thread_get(e, r->h.tid, r->h.tgid, r->h.ts);
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

struct ig_process *ig_tasks_on_proc(struct ig_engine *e, const struct ig_proc *r)
{
	struct ig_thread *t;
	struct ig_process *p;

	switch (r->kind) {
	case IG_PROC_FORK:
		on_fork(e, r);
		ig_engine_ident_on_fork(e, r->ppid, r->h.tgid);
		break;
	case IG_PROC_THREAD:
		t = ig_tasks_thread_find(e, r->h.tid);
		if (t)
			thread_reset(t, r->h.ts);
		t = ig_tasks_thread_get(e, r->h.tid, r->h.tgid, r->h.ts);
		if (t)
			copy_str(t->comm, sizeof(t->comm), r->comm,
				 sizeof(r->comm));
		break;
	case IG_PROC_EXEC:
		t = ig_tasks_thread_get(e, r->h.tid, r->h.tgid, r->h.ts);
		if (!t)
			break;
		ig_tasks_thread_seen_at(t, r->h.ts);
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
		t = ig_tasks_thread_find(e, r->h.tid);
		if (t && t->exit_ts > r->h.ts)
			t->exit_ts = r->h.ts;
		break;
	case IG_PROC_GROUP_EXIT:
		t = ig_tasks_thread_find(e, r->h.tid);
		if (t && t->exit_ts > r->h.ts)
			t->exit_ts = r->h.ts;
		p = ig_tasks_process_find(e, r->h.tgid);
		if (p)
			return proc_exited(p, r->h.ts);
		break;
	}
	return NULL;
}

void ig_tasks_on_mapping(struct ig_engine *e, const struct ig_mapping *r)
{
	struct ig_process *p = ig_tasks_process_get(e, r->h.tgid, r->h.ts);
	uint32_t i;

	if (!p || r->end <= r->start)
		return;
	if (p->nmaps == p->capmaps &&
	    (p->capmaps ? p->capmaps * 2 : 32) > IG_MAX_MAPS)
		return;		/* as many as it keeps */
	if (!ig_grow_from((void **)&p->maps, &p->capmaps, p->nmaps,
			  sizeof(*p->maps), 32))
		return;
	for (i = p->nmaps; i > 0 && p->maps[i - 1].start > r->start; i--)
		p->maps[i] = p->maps[i - 1];
	p->maps[i].start = r->start;
	p->maps[i].end = r->end;
	copy_str(p->maps[i].path, sizeof(p->maps[i].path), r->path,
		 sizeof(r->path));
	p->nmaps++;
}

const char *ig_tasks_map_lookup(const struct ig_process *p, uint64_t addr)
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

bool ig_tasks_ip_in_libcuda(const struct ig_process *p, uint64_t ip)
{
	const char *path = ig_tasks_map_lookup(p, ip);

	return path && strstr(path, "libcuda.so");
}
