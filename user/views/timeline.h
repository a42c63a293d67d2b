/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The timeline the views draw: GPU devices with busy, idle and unresolved
 * slices and the steps of the job's loop, threads with off-CPU intervals
 * and timed driver calls, submissions as instants, and flows from an idle
 * gap to the thread intervals its attribution walked.  Plain data with
 * borrowed strings; a producer fills one item at a time and hands it to a
 * writer, which copies what it keeps.  Times are CLOCK_MONOTONIC (BOOTTIME-free) nanoseconds.
 */
#ifndef IG_TIMELINE_H
#define IG_TIMELINE_H

#include <stdint.h>

struct ig_tl_device {
	uint32_t id;		/* idlegap's device index */
	const char *name;	/* e.g. "GPU 0"; NULL: built from id */
	uint32_t pid;		/* nonzero: a track of this process's, drawn
				 * under it (declared before, as a thread's) */
};

struct ig_tl_thread {
	uint32_t pid, tid;	/* tid == pid: the main thread */
	const char *comm;	/* thread name, NULL if unknown */
	const char *pcomm;	/* process name, used once per pid */
};

enum ig_tl_annot_type { IG_TL_STR, IG_TL_UINT, IG_TL_INT, IG_TL_PTR,
		       IG_TL_DOUBLE, IG_TL_BOOL };

/* Detail behind a slice: file, lock, holder, peer, waker, pid, comm. */
struct ig_tl_annot {
	const char *name;
	enum ig_tl_annot_type type;
	union {
		const char *s;
		uint64_t u;	/* IG_TL_UINT, IG_TL_PTR; IG_TL_BOOL: 0 or 1 */
		int64_t i;
		double d;
	};
};

enum ig_tl_kind {
	IG_TL_BUSY,		/* device: work in flight */
	IG_TL_IDLE,		/* device: a gap proven idle, named by first cause */
	IG_TL_UNRESOLVED,	/* device: no proof either way */
	IG_TL_STEP,		/* device: one step of the job's loop */
	IG_TL_OFFCPU,		/* thread: off CPU, named by reason */
	IG_TL_CALL,		/* thread: a timed driver call */
	IG_TL_SUBMIT,		/* thread: a submission (instant, dur 0) */
};

#define IG_TL_KIND_IS_DEVICE(k) ((k) <= IG_TL_STEP)

struct ig_tl_slice {
	enum ig_tl_kind kind;
	uint32_t device;	/* device kinds */
	uint32_t tid;		/* thread kinds; the thread was declared */
	uint64_t ts, dur;	/* ns; dur is ignored for IG_TL_SUBMIT */
	const char *name;	/* "idle: storage", "off-cpu: io", "cuStreamSynchronize" */
	/*
	 * Flows: ids this slice starts (out) and ends (in).  A walk from a gap
	 * to the threads it blamed is gap -out-> t1 -in/out-> t2 -in-> ...;
	 * ids are unique per trace and each is started and ended once.
	 */
	const uint64_t *flow_out, *flow_in;
	unsigned int n_flow_out, n_flow_in;
	const struct ig_tl_annot *annots;
	unsigned int n_annots;
};

#endif
