/* SPDX-License-Identifier: GPL-2.0 */
/* A followed thread's state when tracing began, from /proc
 * (docs/design.md §5.14). */
#ifndef IG_TSTATE_H
#define IG_TSTATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct ig_tstate;
struct ig_file;

/* An IG_REC_TSTATE record of thread @tid of @tgid read now (@now, on
 * CLOCK_MONOTONIC), stamped @ts (the start of tracing): its state letter, system call, wchan and the
 * reason the kernel would give its wait.  Where it waits on a regular
 * file in an IO wait, *@have_file is set and @file is that file's
 * IG_REC_FILE record (the key in the state's arg).  0, or a negative
 * errno when the thread is gone. */
int ig_tstate_read(struct ig_tstate *r, pid_t tgid, pid_t tid, uint64_t ts,
		   uint64_t now, struct ig_file *file, bool *have_file);
/* The IG_REC_FILE record of @tgid's descriptor @fd, whose link names
 * @target (from the process's root): its components, mount and type
 * (fdinfo's mnt_id in the process's mountinfo). */
int ig_tstate_file(struct ig_file *r, pid_t tgid, long fd, const char *target,
		   uint64_t key, uint32_t s_dev);

#endif
