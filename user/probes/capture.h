/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The capture front end shared by every live mode (`run`, `attach`, `top`,
 * `agent`): the tracer, process discovery, the Python frame reader and the
 * native symbolizer, wired once (docs/design.md §3.1).
 *
 * Records reach the mode through one callback, in the order the stream
 * needs them: a kernel record after discovery has seen it, with the names
 * of new Python code objects and native frames just before it; what
 * discovery finds (libcuda, mappings, the interpreter); the TASK records
 * of a process as it is tracked.  The mode decides what a record is worth
 * (a recording, an engine, a window) and what discovery's events mean to
 * its user.
 */
#ifndef IG_CAPTURE_H
#define IG_CAPTURE_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>
#include "probes/discovery.h"
#include "probes/tracer.h"
#include "stream/records.h"

struct ig_pyframes;
struct ig_symbolizer;

struct ig_capture_opts {
	__u64 min_offcpu_ns;
	unsigned int ringbuf_mb;
	bool gpulib_watch;		/* the agent's sys_enter hook */
	const char *libcuda_path;	/* --libcuda */
	bool detach_on_exit;		/* a process's probes go when it ends */
	bool windows;			/* the agent's: set-up probes stay
					 * between windows (discovery.h) */
	/* every record for the mode's stream */
	void (*emit)(const struct ig_hdr *rec, void *ctx);
	/* a kernel record after discovery saw it: false keeps it out of the
	 * stream (NULL: every record goes on) */
	bool (*keep)(const struct ig_hdr *rec, void *ctx);
	/* what discovery found or could not do */
	void (*event)(const struct ig_disc_event *ev, void *ctx);
	/* IG_REC_GPULIB: an untracked process maps a libcuda */
	void (*gpulib)(const struct ig_hdr *rec, void *ctx);
	/* @pid exec'd (@exec) or its last thread ended */
	void (*changed)(pid_t pid, bool exec, void *ctx);
	void *ctx;
};

struct ig_capture {
	struct ig_capture_opts o;
	struct ig_tracer *tracer;
	struct ig_discovery *disc;
	struct ig_pyframes *py;
	struct ig_symbolizer *sym;	/* made at the first native stack */
	__u64 next_host_scan;
	bool scan_failed;		/* said once, until a scan works */
	char py_refused[PATH_MAX];	/* the interpreter last said unwalkable */
	bool hold_gpudev;		/* ig_capture_hold_gpudev() */
	struct ig_capture_held *held;	/* GPUDEV records to write */
	size_t nheld, capheld;
};

/* Opens the tracer, attaches the host-wide hooks, starts discovery and
 * the Python reader.  0, or 1 after one line saying why. */
int ig_capture_open(struct ig_capture *c, const struct ig_capture_opts *o);
void ig_capture_close(struct ig_capture *c);

/* Tracks @pid and its threads in the kernel.  0, -ESRCH when it is gone
 * (a zombie included), or another negative errno.  Nothing is said. */
int ig_capture_track(struct ig_capture *c, pid_t pid);
/* The TASK records of @pid and its threads, its IDENT record when the
 * node names its pod or container, and its GPUDEV record (where its GPU
 * is, docs/design.md §4.2), at @ts.  An exec the kernel reports brings
 * new IDENT and GPUDEV records as well. */
void ig_capture_emit_tasks(struct ig_capture *c, pid_t pid, __u64 ts);
/*
 * From now until ig_capture_release_gpudev(), the GPUDEV records of
 * ig_capture_emit_tasks() wait: finding a process's GPU asks NVML (whose
 * first call loads the library and starts the driver's side of it) and
 * reads its descriptors, none of which the probes need.  Released before
 * the first kernel record is read, they still come before any GPU work
 * of theirs, stamped as they were asked for.
 */
void ig_capture_hold_gpudev(struct ig_capture *c);
/* The GPUDEV records held, in the order asked for; holds no more. */
void ig_capture_release_gpudev(struct ig_capture *c);

/* Host-wide: every process mapping a libcuda that discovery does not
 * follow yet, looked for at most once a second.  @found (NULL: discovery
 * follows it, and its event says what came of it) takes each new one. */
void ig_capture_scan_host(struct ig_capture *c, __u64 now,
			  int (*found)(pid_t pid, __u64 now, void *ctx), void *ctx);

/* What every live mode says of an IG_DISC_PYLOCK event: a debug line when
 * the free-threaded interpreter's critical sections were probed, else one
 * warning saying what is lost. */
void ig_capture_say_pylock(const struct ig_disc_event *ev);

/* A new window's engine has none of the stacks and names sent so far:
 * they are sent again when next seen. */
void ig_capture_forget_sent(struct ig_capture *c);

#endif
