/* SPDX-License-Identifier: GPL-2.0 */
/* Discovery's tables, shared by discovery.c (following processes) and
 * discovery_host.c (every process of the host, the agent's windows). */
#ifndef IG_DISCOVERY_INT_H
#define IG_DISCOVERY_INT_H

#include <stdbool.h>
#include <sys/types.h>
#include "probes/cuda_attach.h"
#include "probes/discovery.h"
#include "probes/nccl_attach.h"
#include "stream/records.h"
#include "util/htab.h"

/* A followed process. */
struct dproc {
	pid_t tgid;
	unsigned int slot;	/* in discovery.procs */
	__u64 due;		/* next look at its maps; 0: none */
	bool pychecked;		/* _PyRuntime looked up for this image */
	bool python;		/* it runs CPython: pyrt says where */
	bool has_lib;		/* a libcuda was tried: lib_dev, lib_ino */
	bool probed;		/* all its entry points (the hot path) */
	bool setup;		/* the set-up ones, staying between windows */
	unsigned int nsetup;	/* how many of those were attached */
	bool mapped;		/* its code ranges were recorded */
	dev_t lib_dev;
	ino_t lib_ino;
	struct ig_pyrt pyrt;	/* the record sent when python */
	struct ig_libcuda_info *info;	/* its probes, while probed */
	struct ig_nccl_seen nccl;	/* its libnccl (nccl_attach.h) */
	struct ig_libnccl nccl_rec;	/* the record of its probing, said
					 * again in each window it stays for */
};

/* A libcuda file whose set-up entry points are probed for every process
 * (the agent's windows). */
struct setup_file {
	dev_t dev;
	ino_t ino;
	struct ig_libcuda_info info;
};

/* A dynamic loader file, hooked for every process; an interpreter file
 * whose critical sections are probed for every process. */
struct loader {
	dev_t dev;
	ino_t ino;
};

struct ig_discovery {
	struct ig_discovery_opts o;
	struct ig_htab by_tgid;		/* tgid -> struct dproc */
	struct dproc **procs;		/* the same, dense, to walk */
	size_t nprocs, capprocs;
	struct loader *lds;
	size_t nld, capld;
	struct loader *pylocks;		/* free-threaded interpreter files
					 * whose critical sections are probed
					 * (or could not be) */
	size_t npylock, cappylock;
	__u64 next_due;			/* 0: nothing due */
	bool detached;			/* between windows: the set-up probes
					 * only (docs/design.md §7.10) */
	struct ig_nccl_seen nccl_all;	/* a libnccl probed for every process */
	struct setup_file *setup_files;
	size_t nsetup_files, capsetup_files;
	struct {			/* a libcuda probed for every process */
		bool probed;
		dev_t dev;
		ino_t ino;
		struct ig_libcuda_info info;
	} cuda_all;
};

/* An event to the caller's callback, a record into its stream. */
static inline void ig_discovery_event(struct ig_discovery *d, const struct ig_disc_event *ev)
{
	if (d->o.event)
		d->o.event(ev, d->o.ctx);
}

static inline void ig_discovery_record(struct ig_discovery *d, const struct ig_hdr *rec)
{
	if (d->o.record)
		d->o.record(rec, d->o.ctx);
}

/* discovery_emit.c: the records about a process, said again at ts */
/* @pid's IG_REC_LIBCUDA record, as probed (@info). */
void ig_discovery_emit_libcuda(struct ig_discovery *d, pid_t pid,
			       const struct ig_libcuda_info *info, __u64 ts);
/* An IG_REC_MAPPING record for each executable mapping of @p's libcuda,
 * once per probing. */
/* @p's IG_REC_LIBNCCL record again, stamped @ts, where its libnccl's
 * probes stay attached from an earlier window. */
void ig_discovery_emit_libnccl(struct ig_discovery *d, struct dproc *p, __u64 ts);
void ig_discovery_emit_maps(struct ig_discovery *d, struct dproc *p, __u64 ts);
/* The interpreter's _PyRuntime found before (a PYRT record), again at
 * @ts: a window's engine that takes a process over names its GIL too. */
void ig_discovery_emit_pyrt(struct ig_discovery *d, struct dproc *p, __u64 ts);

#endif
