/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where CPython's _PyRuntime object lives in a process.  The GIL's mutex
 * and condition variable are in it (docs/design.md §5.6), so a futex wait on
 * an address in [start, end) is a GIL wait, with no Python symbols needed.
 */
#ifndef IG_PYRT_H
#define IG_PYRT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct ig_pyrt_info {
	uint64_t start, end;	/* runtime addresses */
	char path[PATH_MAX];	/* python3.X or libpython3.X.so */
	char file[PATH_MAX];	/* the same file as idlegap opens it (the
				 * process may have another root) */
	bool free_threaded;	/* its debug offsets (3.13+) say it is a
				 * free-threaded build: no GIL */
};

/* 0 when found, -ENOENT when @pid runs no CPython, other -errno. */
int ig_pyrt_find(pid_t pid, struct ig_pyrt_info *out);

#endif
