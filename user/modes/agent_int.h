/* SPDX-License-Identifier: GPL-2.0 */
/* The agent's state, shared by agent.c (discovery, the duty cycle) and
 * agent_win.c (one window: its engine, report and metrics). */
#ifndef IG_AGENT_INT_H
#define IG_AGENT_INT_H

#include <stdbool.h>
#include <time.h>
#include "modes/agent.h"
#include "modes/facts.h"
#include "probes/capture.h"
#include "views/metrics.h"
#include "engine/engine.h"
#include "stream/records.h"
#include "util/htab.h"
#include "util/clock.h"

/* identities read per window, at most (a window's processes beyond it get
 * no workload labels) */
#define IG_AGENT_MAX_IDS	4096
/* devices whose open gap or pending work a window carries into the next */
#define IG_AGENT_MAX_CARRY	64

struct ig_agent_gpulib {
	pid_t pid;
	char comm[16];
};

/* A window closed inside a gap (docs/design.md §7.10): its engine goes on
 * taking the records until the gap ends, or until the bound; its report,
 * with what it read of its processes, is made then. */
struct agent_held {
	struct ig_engine *engine;	/* NULL: none held */
	struct ig_reorder *reorder;
	struct ig_pid_identity *ids;
	size_t nids;
	struct ig_agent_gpulib *gpulib;
	size_t ngpulib;
	unsigned long long index;	/* its number */
	__u64 at, until;		/* its END, and the bound */
	bool detach;			/* its probes come off at its end
					 * (a duty cycle's) */
};


struct agent {
	const struct ig_agent_opts *o;
	struct ig_capture cap;		/* tracer, discovery, Python and native names */
	struct ig_metrics *metrics;
	struct ig_httpd *httpd;
	unsigned long long nwindows;
	/* the window, while one runs */
	bool in_window;
	bool oom;
	__u64 opened_at;		/* the window's start */
	__u64 closed_at;		/* the last window's END */
	unsigned long long unlink_mark;	/* its probes are gone once the
					 * remover is past this (tracer.h) */
	struct ig_engine *engine;
	struct ig_reorder *reorder;
	struct ig_stats base;		/* the kernel counters at its start */
	__u64 nrecords;
	struct ig_pid_identity *ids;	/* the window's processes, as tracked */
	size_t nids;
	/* continuous windows: the last window's, kept for the processes it
	 * hands over (read again, one that is exiting has no environ left);
	 * forgotten at a process's exec or exit */
	struct ig_pid_identity *prev_ids;
	size_t nprev;
	pid_t *changed;			/* exec'd or ended in this window */
	size_t nchanged, capchanged;
	bool handover;			/* the window opening takes over the last */
	/* the window's GPUs named only by a UUID or a container: device
	 * IG_GPU_NAMED + i is gpus[i] (ig_identity_gpu_token) */
	char (*gpus)[80];
	size_t ngpus;
	/* processes seen mapping a libcuda during the window (IG_REC_GPULIB) */
	struct ig_agent_gpulib *gpulib;
	size_t ngpulib, capgpulib;
	struct agent_held held;
	/* continuous windows: the gaps open and work pending at the last
	 * window's end, carried into the next one (with the tokens of the
	 * GPUs named otherwise than by index, their numbers per window) */
	struct ig_open_gap carry[IG_AGENT_MAX_CARRY];
	char carry_tok[IG_AGENT_MAX_CARRY][80];
	size_t ncarry;
	/* processes the kernel tracks from their first libcuda mapping and
	 * the agent has not followed yet: their records are not a window's
	 * (pid -> 1) */
	struct ig_htab pending;
	size_t npending;
	/* the processes the agent followed, and when (pid -> that time,
	 * plus 1): a mapping the kernel sent before it, read late, is not a
	 * pending one */
	struct ig_htab followed;
	bool track_at_mapping;		/* the kernel does (ig_tracer_gpulib_track) */
	/* set-up facts kept across windows (agent_setup.c) */
	struct ig_facts facts;
};

/* GPU processes a window's report lists by pid among those it missed */
#define IG_AGENT_MISSED_LISTED	256

/* What goes into a window (agent_track.c).  A record into the window's
 * stream. */
void ig_agent_emit(struct agent *a, const struct ig_hdr *rec);
/* The window's device for a GPU token: the host's index (also for a
 * UUID NVML numbers, so that the GPU a context names and the one NVML
 * lists a process on are one device), or one of the GPUs named
 * otherwise; -1 when too many. */
int ig_agent_gpu_id(struct agent *a, const char *tok);
/* Whether @pid is among @ids. */
static inline bool ig_agent_seen_in(const struct ig_pid_identity *ids, size_t nids,
				    pid_t pid)
{
	size_t i;

	for (i = 0; i < nids; i++)
		if (ids[i].pid == pid)
			return true;
	return false;
}
/* Follows @pid in this window: tracked with its threads, TASK records,
 * its identity read.  @ts: the records' time. */
void ig_agent_track(struct agent *a, pid_t pid, __u64 ts);

/* Set-up facts (agent_setup.c): a record that sets up a context, a stream
 * or a communicator, kept whenever it is seen; a process's forgotten at
 * its exec or exit; all announced again, stamped @ts, at a window's start
 * (returns how many). */
void ig_agent_setup_seen(struct agent *a, const struct ig_hdr *rec);
void ig_agent_setup_forget(struct agent *a, pid_t tgid);
/* Hands each fact kept to @emit (with @a), stamped at @ts: the window's
 * intake, which this file does not call itself. */
int ig_agent_setup_announce(struct agent *a, __u64 ts,
			    void (*emit)(const struct ig_hdr *rec, void *ctx));
void ig_agent_setup_free(struct agent *a);
/* Whether @tgid is tracked by the kernel from its libcuda mapping and not
 * yet followed: ig_agent_pending_add as its mapping at @mapped is read,
 * unless the agent followed it since (the record read after the agent's
 * own look at the process); ig_agent_followed when the agent follows it
 * at @ts, ig_agent_gone when it ends. */
bool ig_agent_pending(const struct agent *a, pid_t tgid);
void ig_agent_pending_add(struct agent *a, pid_t tgid, __u64 mapped);
void ig_agent_followed(struct agent *a, pid_t tgid, __u64 ts);
void ig_agent_gone(struct agent *a, pid_t tgid);

/* --cgroup (agent_scope.c): whether @pid is in scope. */
bool ig_agent_in_scope(const struct agent *a, pid_t pid);
/* The --cgroup directory, opened (its mount in this namespace's view);
 * a negative errno without --cgroup or when it cannot be opened. */
int ig_agent_scope_fd(const struct agent *a);

/* An IG_REC_GPULIB record: the process is looked at at once and, in a
 * window, counted among the window's GPU processes. */
void ig_agent_on_gpulib(struct agent *a, const struct ig_hdr *rec);
/* @pid exec'd (@exec) or ended: an identity kept from the last window is
 * not its, the next window reads it again; one that exec'd is read again
 * now for this window too. */
void ig_agent_forget_identity(struct agent *a, pid_t pid, bool exec);

/* Opens a window: a fresh engine, the META record.  1 after one line. */
int ig_agent_window_open(struct agent *a, __u64 now);
/* Closes it at closed_at: its report into the registry and --reports.
 * @why: an enum ig_stop_reason.  @keep_probes: the next window opens at
 * closed_at with the probes as they are (continuous windows); else every
 * uprobe is removed.  A window closed by its duration inside a gap is
 * held instead (a->held), its probes kept, until the gap ends or one more
 * window has passed (@window_ns): ig_agent_held_poll reports it then.
 * 1 after one line when the report cannot be made. */
int ig_agent_window_close(struct agent *a, unsigned int why, bool keep_probes,
			  __u64 window_ns);
/* The held window's report, once its gap ended, it reached its bound, or
 * @force; its probes come off then if it kept them.  1 as above. */
int ig_agent_held_poll(struct agent *a, bool force);
void ig_agent_window_free(struct agent *a);

#endif
