/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Finding the GPU work in processes: which libcuda each one maps (in its
 * own mount namespace, reached through /proc/PID/root), probing it, hooking
 * the dynamic loaders so that a library loaded later is seen, where
 * CPython's _PyRuntime lives, and a free-threaded CPython's per-object
 * locks.  One object per tracing run; it follows the
 * processes it is given (a target and its descendants) or, for a host-wide
 * view, every process that maps a libcuda.  Nothing here prints: what it
 * finds comes back through the callbacks, errors as negative errno.
 */
#ifndef IG_DISCOVERY_H
#define IG_DISCOVERY_H

#include <stdbool.h>
#include <sys/types.h>
#include "stream/records.h"
#include "probes/tracer.h"

struct ig_discovery;

enum ig_disc_kind {
	IG_DISC_LIBCUDA,	/* libcuda probed in pid: name, path, counts */
	IG_DISC_UNPROBED,	/* pid uses libcuda @name, not probed: err */
	IG_DISC_NO_LD_HOOK,	/* loader @path not hooked: err (late loads are
				 * then found by the periodic look only) */
	IG_DISC_GONE,		/* pid ended; its state is freed */
	IG_DISC_PYLOCK,		/* a free-threaded CPython @path, first seen in
				 * pid: its critical sections probed (err 0),
				 * or not: err (their lock waits are then
				 * followed to the waker) */
};

struct ig_disc_event {
	enum ig_disc_kind kind;
	pid_t pid;
	const char *name;	/* the library as the process names it */
	const char *path;	/* as idlegap opens it (/proc/PID/root/...) */
	int err;		/* negative errno */
	unsigned int nsyms;	/* IG_DISC_LIBCUDA: entry points it has */
	unsigned int nattached;	/* of which probed */
	__u64 ts;		/* IG_DISC_LIBCUDA: the time its records carry,
				 * from before its probes (0: unknown) */
};

struct ig_discovery_opts {
	size_t sz;
	struct ig_tracer *tracer;	/* probes go here; NULL: find the
					 * libraries, probe nothing */
	const char *libcuda_path;	/* --libcuda: this file for every
					 * process; no looking in maps */
	bool detach_on_exit;		/* drop a process's probes when it ends
					 * (a long-running agent); else at free */
	bool windows;			/* the agent's windows: libcuda's set-up
					 * entry points attached apart, staying
					 * between windows (docs/design.md §7.10) */
	/* IG_REC_LIBCUDA, IG_REC_MAPPING and IG_REC_PYRT records, for the
	 * stream */
	void (*record)(const struct ig_hdr *rec, void *ctx);
	void (*event)(const struct ig_disc_event *ev, void *ctx);
	void *ctx;
};

/* NULL and errno set on failure. */
struct ig_discovery *ig_discovery_new(const struct ig_discovery_opts *o);
void ig_discovery_free(struct ig_discovery *d);

/* Follows @pid: its interpreter, its loader, its libcuda (or --libcuda's),
 * looked for again later while it maps none.  0, or the negative errno of
 * a libcuda it uses that cannot be probed (an event said so). */
int ig_discovery_add(struct ig_discovery *d, pid_t pid, __u64 now);
/* Probes @path, a file named in idlegap's own mount namespace, for @pid
 * (where `run`'s loader will find libcuda).  As ig_discovery_add. */
int ig_discovery_add_lib(struct ig_discovery *d, pid_t pid, const char *path,
			 __u64 now);
/* Probes the libcuda at @path for every process, before `run`'s command
 * starts: its descendants are tracked from their fork, so their first
 * driver calls are seen however soon after loading it they come; the
 * programs return at once for untracked processes.  A process found to
 * map that file is not probed again.  0 or a negative errno. */
int ig_discovery_add_cuda_all(struct ig_discovery *d, const char *path);
/* The agent's windows: probes the set-up entry points of the libcuda at
 * @path for every process (as for each libcuda file a followed process
 * maps), so that a process the kernel tracks from its first mapping of
 * it (ig_tracer_gpulib_track) is seen setting up however soon after.  0
 * or a negative errno. */
int ig_discovery_setup_file(struct ig_discovery *d, const char *path);
/* Looks at @pid's maps again soon after @now (monotonic ns): until it
 * maps libcuda, which names the driver's code. */
void ig_discovery_watch(struct ig_discovery *d, pid_t pid, __u64 now);
/* Hooks the loaders @pid maps, for every process (e.g. idlegap's own,
 * which a command it starts uses). */
void ig_discovery_hook_loaders(struct ig_discovery *d, pid_t pid);

/* Every record from the kernel, before it goes on: a fork, exec or library
 * load makes the process due for a look; an exit forgets it; a futex wait
 * looks up the interpreter first (records for it come before @rec). */
void ig_discovery_on_record(struct ig_discovery *d, const struct ig_hdr *rec);
/* Looks at the processes that are due.  Call it from the poll loop. */
void ig_discovery_poll(struct ig_discovery *d, __u64 now);
/* When the next look is due (monotonic ns), 0 if none is. */
__u64 ig_discovery_next_due(const struct ig_discovery *d);

/* Every process on the host that maps a libcuda, now: each one not
 * followed yet goes to @found, or (@found NULL) is followed.  The one
 * host-wide sweep (ig_capture_scan_host()); returns how many were new, or
 * a negative errno. */
int ig_discovery_scan(struct ig_discovery *d, __u64 now,
		      int (*found)(pid_t pid, __u64 now, void *ctx), void *ctx);

struct ig_disc_proc {
	pid_t pid;
	bool probed;		/* its libcuda is probed */
	bool python;		/* CPython's runtime was found in it */
};

typedef int (*ig_disc_proc_fn)(const struct ig_disc_proc *p, void *ctx);
/* The processes followed; a callback returning non-zero stops the walk
 * with that value. */
int ig_discovery_foreach_process(struct ig_discovery *d, ig_disc_proc_fn fn,
				 void *ctx);
unsigned int ig_discovery_nprocs(const struct ig_discovery *d);

/* Removes every uprobe (libcuda's and the loaders'): between the windows
 * of a duty cycle nothing is probed.  The processes stay followed. */
void ig_discovery_detach_all(struct ig_discovery *d);
/* Probes every followed process again (and their loaders), emitting their
 * libcuda and mapping records anew.  Returns how many are probed. */
int ig_discovery_attach_all(struct ig_discovery *d, __u64 now);

/* Continuous windows: every process probed now is announced again as
 * attach_all would (an IG_DISC_LIBCUDA event, its libcuda and mapping
 * records at @ts) while its probes stay as they are.  Returns how many. */
int ig_discovery_reannounce(struct ig_discovery *d, __u64 ts);

/* A process mapping a libcuda, as ig_discovery_gpu_procs() finds it. */
struct ig_gpu_proc {
	pid_t pid;
	const char *name;	/* the library as the process names it */
	const char *path;	/* as idlegap opens it, "" when it cannot */
	int err;		/* 0, or why @path cannot be opened */
};

typedef int (*ig_gpu_proc_fn)(const struct ig_gpu_proc *p, void *ctx);
/* Every process on the host mapping a libcuda.so*, in any mount or PID
 * namespace (pids as this namespace numbers them).  Stateless: `idlegap
 * top`'s list.  A callback returning non-zero stops the walk
 * with that value; else 0 or a negative errno. */
int ig_discovery_gpu_procs(ig_gpu_proc_fn fn, void *ctx);

/* Probes the libnccl at @path for every process (a launched command's,
 * found before it runs: its ranks may create their communicators before
 * their maps are read).  0 or a negative errno. */
int ig_discovery_add_nccl(struct ig_discovery *d, const char *path, __u64 ts);

#endif
