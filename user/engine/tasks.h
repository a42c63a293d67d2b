/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The process and thread tables (tasks.c): the calls that change them and
 * the small lookups, inline here, that read them.  The tables' state is
 * the model's (model.h, struct ig_tasks); this header depends on it, the
 * model on nothing here, so that the model and tasks.c do not lean on
 * each other.
 */
#ifndef IG_ENGINE_TASKS_H
#define IG_ENGINE_TASKS_H

#include "engine/model.h"

/* The thread @tid, new (with its process @tgid, or its own when 0) when the
 * table has none, moved to process @tgid when it was another's: its
 * history starts again at @seen.  NULL on ENOMEM.  ig_tasks_thread_get()
 * below calls it only for a thread the table does not already hold as
 * @tgid's. */
struct ig_thread *ig_tasks_thread_add(struct ig_engine *e, uint32_t tid,
				      uint32_t tgid, uint64_t seen);
struct ig_process *ig_tasks_process_get(struct ig_engine *e, uint32_t tgid, uint64_t seen);

/* The lookups into the task tables: small accessors, inline here so that
 * a record's handler reads the tables without a call into tasks.c; the
 * tables are still changed only there. */
static inline struct ig_thread *ig_tasks_thread_find(const struct ig_engine *e,
						     uint32_t tid)
{
	return ig_htab_get(&e->tasks.threads, tid);
}

/* The thread @tid of process @tgid (0: whichever it is in): a lookup when
 * the table holds it so, else ig_tasks_thread_add(). */
static inline struct ig_thread *ig_tasks_thread_get(struct ig_engine *e, uint32_t tid,
						    uint32_t tgid, uint64_t seen)
{
	struct ig_thread *t = ig_tasks_thread_find(e, tid);

	if (t && (t->tgid == tgid || !tgid))
		return t;
	return ig_tasks_thread_add(e, tid, tgid, seen);
}

static inline struct ig_process *ig_tasks_process_find(const struct ig_engine *e,
						       uint32_t tgid)
{
	return ig_htab_get(&e->tasks.procs, tgid);
}

/* A process's stream by its key (IG_STREAM_*, or the handle); NULL when
 * either is unknown. */
static inline struct ig_stream *ig_tasks_stream_find(const struct ig_engine *e,
						     uint32_t tgid, uint64_t key)
{
	struct ig_process *p = ig_tasks_process_find(e, tgid);

	return p ? ig_htab_get(&p->streams, key) : NULL;
}

/* The comm cache, a slot a tid, holds the names of threads outside the
 * tables (wakers, the tasks a CPU switched from): noting one is a store
 * into its slot, inline as its reading is. */
static inline void ig_tasks_comm_note(struct ig_engine *e, uint32_t tid,
				      const char *comm)
{
	struct ig_comm_ent *c = &e->tasks.comms[tid % IG_COMM_CACHE];

	if (!comm[0])
		return;
	c->tid = tid;
	ig_strcpy(c->comm, sizeof(c->comm), comm);
}

/* A thread's name: the table's, else the comm cache's, else "?". */
static inline const char *ig_tasks_comm_of(const struct ig_engine *e, uint32_t tid)
{
	const struct ig_thread *t = ig_tasks_thread_find(e, tid);
	const struct ig_comm_ent *c = &e->tasks.comms[tid % IG_COMM_CACHE];

	if (t && t->comm[0])
		return t->comm;
	if (c->tid == tid && c->comm[0])
		return c->comm;
	return tid ? "?" : "swapper";
}

/* The thread ran at ts: its state is known up to there. */
static inline void ig_tasks_thread_seen_at(struct ig_thread *t, uint64_t ts)
{
	if (ts > t->known_until && ts < t->exit_ts)
		t->known_until = ts;
}

/* The thread's @i-th retained off-CPU interval, oldest first. */
static inline const struct ig_ival *ig_tasks_thread_ival(const struct ig_thread *t,
							 uint32_t i)
{
	return ig_ring_at(&t->ivals, i);
}

/* The thread's newest off-CPU interval, or NULL. */
static inline const struct ig_ival *ig_tasks_thread_last_ival(const struct ig_thread *t)
{
	return t ? ig_ring_back(&t->ivals) : NULL;
}
/* Drop the thread's history older than @cutoff. */
void ig_tasks_thread_prune(struct ig_thread *t, uint64_t cutoff);
void ig_tasks_thread_free(struct ig_engine *e, struct ig_thread *t);
/* Frees the process and its threads. */
void ig_tasks_process_free(struct ig_engine *e, struct ig_process *p);
/* @p exited and its last thread is gone: no walk visits it again, so its
 * file mappings (144 bytes each) go; what the report says of it stays. */
void ig_tasks_process_gone(struct ig_process *p);
void ig_tasks_on_task(struct ig_engine *e, const struct ig_task *r);
/* A fork, exec or exit.  For the exit of a process's last thread, seen
 * for the first time, the process with its exit time set (and its
 * threads'), else NULL: the caller hands it to the GPU model
 * (ig_gpu_proc_exit), then to ig_tasks_proc_retire(). */
struct ig_process *ig_tasks_on_proc(struct ig_engine *e, const struct ig_proc *r);
/* An exited process the GPU model is done with: its file mappings go and
 * it joins the exited list (oldest first), which ig_engine_gc() frees. */
void ig_tasks_proc_retire(struct ig_engine *e, struct ig_process *p);
void ig_tasks_on_mapping(struct ig_engine *e, const struct ig_mapping *r);
/* The file mapped at @addr in @p (IG_REC_MAPPING records), or NULL. */
const char *ig_tasks_map_lookup(const struct ig_process *p, uint64_t addr);
/* Is @ip in the process's CUDA driver (a libcuda.so* mapping)? */
bool ig_tasks_ip_in_libcuda(const struct ig_process *p, uint64_t ip);

#endif
