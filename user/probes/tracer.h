/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel side's lifecycle: open -> configure -> load -> attach, the
 * tracked set, the ring buffer, the counters.  Records are handed to a
 * callback in arrival order.  Nothing here prints but ig_debug's trace
 * (-v): errors come back as negative errno, with a line where useful.
 */
#ifndef IG_TRACER_H
#define IG_TRACER_H

#include <stdbool.h>
#include <sys/types.h>
#include "stream/records.h"

struct ig_tracer;

typedef void (*ig_record_fn)(const struct ig_hdr *rec, void *ctx);

struct ig_tracer_opts {
	size_t sz;
	__u64 min_offcpu_ns;	/* off-CPU intervals shorter are not sent */
	__u32 ringbuf_mb;	/* 0: default (16) */
	bool gpulib_watch;	/* load the sys_enter hook (IG_REC_GPULIB) */
};

enum ig_uprobe_kind {
	IG_UP_SUBMIT,		/* entry only */
	IG_UP_TIMED,		/* entry + return */
	IG_UP_EVENT_RECORD,	/* entry only */
	IG_UP_NCCL,		/* libnccl, entry only */
	IG_UP_NCCL_TIMED,	/* libnccl, entry + return */
};

/* Opens and loads every program (tp_btf, or raw_tp where the kernel lacks
 * a BTF-typed tracepoint, hook by hook).  NULL and errno set on failure,
 * with @why (n bytes; may be NULL) saying what failed in one line. */
struct ig_tracer *ig_tracer_open(const struct ig_tracer_opts *opts,
				 ig_record_fn fn, void *ctx, char *why, size_t n);
/* Attaches the host tracepoints.  Negative errno, with @why set. */
int ig_tracer_attach_host(struct ig_tracer *t, char *why, size_t n);
/* Attaches the sys_enter hook that sends IG_REC_GPULIB (the tracer was
 * opened with gpulib_watch).  Negative errno, with @why set. */
int ig_tracer_attach_gpulib(struct ig_tracer *t, char *why, size_t n);
/* The sys_enter hook also tracks, in the kernel, a process it finds
 * mapping a libcuda: every one, or those under the cgroup @cgroup_fd
 * (>= 0).  The set-up probes attached for every process then see its
 * first calls (docs/design.md §7.10).  Negative errno. */
int ig_tracer_gpulib_track(struct ig_tracer *t, int cgroup_fd);
/* Adds a process and its current threads.  Negative errno. */
int ig_tracer_track(struct ig_tracer *t, pid_t tgid);
/* Where @tgid's Python frames are (NULL: forget them).  Negative errno. */
int ig_tracer_py_offsets(struct ig_tracer *t, pid_t tgid,
			 const struct ig_py_offsets *o);
/* Forgets which stacks each process and thread was sent (and the threads'
 * cached interpreter states), so that the next of each goes out in full:
 * a new window's engine knows none of the earlier ones.  Negative errno. */
int ig_tracer_forget_stacks(struct ig_tracer *t);
/* While paused, tracked threads send no stacks, off-CPU or sample records
 * (their exits still come); for the time between windows.  Negative
 * errno. */
int ig_tracer_pause(struct ig_tracer *t, bool paused);
/* Drops processes that no longer exist; returns how many remain. */
int ig_tracer_prune(struct ig_tracer *t);
struct ig_uprobe_spec {
	size_t offset;		/* in the file */
	__u64 cookie;		/* IG_COOKIE() */
	enum ig_uprobe_kind kind;
};

/* libcuda entry points of @path, for @pid only (-1: every process).
 * Returns how many were attached, or a negative errno. */
int ig_tracer_attach_uprobes(struct ig_tracer *t, const char *path, pid_t pid,
			     const struct ig_uprobe_spec *specs, size_t n);
/* The same, kept between the agent's windows as libnccl's probes are
 * (libcuda's set-up entry points, docs/design.md §7.10). */
int ig_tracer_attach_staying_uprobes(struct ig_tracer *t, const char *path, pid_t pid,
				     const struct ig_uprobe_spec *specs, size_t n);

/* Removes the uprobes (libcuda's and the loaders') attached for @pid, or
 * every one when @pid is -1; the host hooks stay. */
void ig_tracer_detach_uprobes(struct ig_tracer *t, pid_t pid);
/* The agent's window end: every uprobe but those that stay: libnccl's, so
 * that each communicator's sequence counts every call, the loaders' and
 * libcuda's set-up entry points, so that a job set up between windows is
 * seen doing it (docs/design.md §7.10). */
void ig_tracer_detach_window_uprobes(struct ig_tracer *t);
/* How many links were handed to the background remover so far; whether
 * all those handed before @mark are gone.  Until they are, a probe
 * attached again at the same place would fire twice. */
unsigned long long ig_tracer_unlink_mark(void);
bool ig_tracer_unlinked(unsigned long long mark);
/* How many uprobe links are attached (for @pid, or all when -1). */
size_t ig_tracer_nuprobe_links(const struct ig_tracer *t, pid_t pid);
/* The dynamic loader's _dl_debug_state() in @path, for every process:
 * tells when a tracked process loads a library.  Negative errno. */
int ig_tracer_attach_ld(struct ig_tracer *t, const char *path);
/* A free-threaded CPython's critical sections in @path (the file that
 * holds its _PyRuntime), for every process: waits for a per-object lock
 * become lock waits (bpf/pylock.bpf.h).  Kept between the agent's
 * windows.  Negative errno (-ENOENT: @path has no such function). */
int ig_tracer_attach_pylock(struct ig_tracer *t, const char *path);
/* CPU-clock samples at @hz on every CPU (tracked threads only are
 * recorded).  Negative errno. */
int ig_tracer_attach_sampling(struct ig_tracer *t, unsigned int hz);
/* Consumes the ring buffer; returns records handled or negative errno.
 * A poll hands over IG_POLL_SLICE_NS of records at most: a job that sends
 * faster than they are read would keep it going forever, the caller's
 * clock stopped (docs/design.md §3.5). */
#define IG_POLL_SLICE_NS	(50ULL * 1000000)
int ig_tracer_poll(struct ig_tracer *t, int timeout_ms);
/* Records sent after @ts (CLOCK_MONOTONIC, the records' clock) are not
 * handed over: a poll stops at the first one and keeps it back, until
 * ig_tracer_stop_at(t, 0) lifts the stop (an agent's window ends where
 * the stream reached its end, not when the agent got there). */
void ig_tracer_stop_at(struct ig_tracer *t, __u64 ts);
/* Whether the stream reached the stop: a record after it is kept back. */
bool ig_tracer_reached(const struct ig_tracer *t);
/* What the kernel still holds, read for @max_ns at most.  Returns the
 * time (CLOCK_MONOTONIC) the stream is whole up to: the stop when it
 * reached it, now (or the stop, if before) when the ring was emptied, the newest record's time
 * when the job sent faster than it was read (what is left was sent after
 * it, give or take the CPUs' order).  On an error, logged, now and a
 * negative errno in *@err. */
__u64 ig_tracer_drain(struct ig_tracer *t, __u64 max_ns, int *err);
/* CLOCK_MONOTONIC time the records read so far are whole up to: every
 * record sent before it was read, by the last poll that emptied the ring
 * buffer (not sliced), and not past a stop; 0 before one did. */
__u64 ig_tracer_whole_to(const struct ig_tracer *t);
/* Whether a program idlegap loads is a tp/ one, whose tracepoint id is
 * read from tracefs (root's alone, mode 0700).  Opens, loads nothing. */
bool ig_tracer_needs_tracefs(void);
/* Kernel counters summed over CPUs. */
int ig_tracer_stats(struct ig_tracer *t, struct ig_stats *s);
bool ig_tracer_uses_btf(const struct ig_tracer *t);
void ig_tracer_close(struct ig_tracer *t);

/* The kernel tracepoints idlegap hooks, in attach order: each has a
 * tp_btf and a raw_tp flavour, and a session cannot start without it,
 * but for an optional one (ig_tracer_hook_optional()). */
extern const char *const ig_hooks[];
extern const size_t ig_nhooks;
/* What to do about an attach error (negative errno), or NULL. */
const char *ig_tracer_attach_hint(int err);
bool ig_tracer_uses_multi(const struct ig_tracer *t);

/* Feature probes, shared with `idlegap check`. */
bool ig_probe_tp_btf(const char *tp_name);
bool ig_probe_raw_tp_exists(const char *tp_name);
/* How many arguments tracepoint @tp_name passes (from the kernel's BTF),
 * or a negative errno. */
int ig_probe_tp_nargs(const char *tp_name);
void ig_probe_release_btf(void);
/* Whether idlegap works without hook @i (ig_hooks[]): page_fault_user is
 * x86's alone; without it page-fault waits are not told apart. */
bool ig_tracer_hook_optional(size_t i);
/* One link for many uprobes (Linux 6.6+): whether the kernel has them
 * (a link is created to find out: 6.1 takes the program but not the link),
 * and whether the tracer uses them (IDLEGAP_NO_UPROBE_MULTI in the
 * environment, or the compat object, makes it use one perf-event link per
 * probe instead).  Each
 * probe runs once per process. */
bool ig_probe_uprobe_multi(void);
bool ig_tracer_use_uprobe_multi(void);
/* Drops the link ig_probe_uprobe_multi() made and kept: dropping it
 * waits for the kernel's grace periods, so ig_tracer_close() does it, not
 * the start (a process that makes no tracer drops it at exit). */
void ig_probe_drop_link(void);

/*
 * The kernel helpers the main BPF object calls, with the kernel that
 * brought each and what idlegap does without it (docs/design.md §2.1).
 * Where one is missing, the tracer loads the compat object instead
 * (bpf/compat.bpf.h); IDLEGAP_COMPAT=1 in the environment forces it.
 */
struct ig_kfeature {
	const char *name;	/* as `check` says it */
	const char *since;	/* "5.17" */
	const char *with;	/* what it is used for */
	const char *without;	/* what idlegap does without it */
	int prog_type, helper;	/* probed as this helper of that type */
};
extern const struct ig_kfeature ig_kfeatures[];
extern const size_t ig_nkfeatures;
bool ig_probe_kfeature(size_t i);
/* Whether the tracer loads the compat object: some feature is missing or
 * IDLEGAP_COMPAT=1. */
bool ig_tracer_use_compat(void);
bool ig_tracer_uses_compat(const struct ig_tracer *t);

#endif
