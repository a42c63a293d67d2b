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
	unsigned long long checked;	/* inode of the last library looked
					 * into for NCCL linked in */
};

/* Looks at @pid's maps: a libnccl not probed yet is probed (@t NULL:
 * only found).  1 with @rec filled when there is news (probed, or NCCL
 * found linked into another library, which is said once in a warning);
 * 0 when nothing changed; a negative errno when a libnccl could not be
 * probed (@rec filled, nattached 0). */
int ig_nccl_look(struct ig_tracer *t, pid_t pid, struct ig_nccl_seen *s,
		 struct ig_libnccl *rec);
/* The NCCL entry points @path exports, attached for @pid (-1: all);
 * @nsyms gets how many it has.  The number attached, or a negative errno. */
int ig_nccl_attach(struct ig_tracer *t, const char *path, pid_t pid,
		   unsigned int *nsyms);

#endif
