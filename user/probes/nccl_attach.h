/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Finding libnccl in a process (docs/design.md §4.9) and attaching the
 * NCCL probes to its entry points by file and offset, as libcuda's.  A
 * process without NCCL gets no probe.
 */
#ifndef IG_NCCL_ATTACH_H
#define IG_NCCL_ATTACH_H

#include <stdbool.h>
#include <sys/types.h>
#include "probes/tracer.h"
#include "stream/records.h"

/* What was done for a process: its libnccl file, once. */
struct ig_nccl_seen {
	dev_t dev;
	ino_t ino;
	bool probed;
	bool said_static;	/* the static-NCCL line was given */
	bool by_file;		/* @all of ig_nccl_look: the first libnccl
				 * found is probed for every process */
	unsigned long long checked;	/* inode of the last library looked
					 * into for NCCL linked in */
};

/* Looks at @pid's maps: a libnccl not probed yet is probed (@t NULL:
 * only found).  1 with @rec filled when there is news (probed, or NCCL
 * found linked into another library, which is said once in a warning);
 * 0 when nothing changed; a negative errno when a libnccl could not be
 * probed (@rec filled, nattached 0). */
int ig_nccl_look(struct ig_tracer *t, pid_t pid, struct ig_nccl_seen *s,
		 struct ig_nccl_seen *all, struct ig_libnccl *rec);
/* A libnccl.so.2 in the LD_LIBRARY_PATH of a command run with @envp,
 * which the command asks for by setting it (a system-wide copy in the
 * loader cache is left alone: probing it would touch every process of the
 * host that uses it; a wheel's copy under site-packages, or the system's,
 * is found in the maps instead).  0 or -ENOENT. */
int ig_nccl_find_for_exec(char *const envp[], char *path, size_t n);
/* Probes @path for every process (the kernel side keeps to the tracked
 * ones): a launched job's ranks, whose communicators may be created
 * before their maps are read.  @all remembers the file; @rec says it. */
int ig_nccl_attach_all(struct ig_tracer *t, const char *path, struct ig_nccl_seen *all,
		       struct ig_libnccl *rec);
/* The NCCL entry points @path exports, attached for @pid (-1: all);
 * @nsyms gets how many it has.  The number attached, or a negative errno. */
int ig_nccl_attach(struct ig_tracer *t, const char *path, pid_t pid,
		   unsigned int *nsyms);

#endif
