/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Finding libcuda (docs/design.md §3.6) and attaching idlegap's probes to its
 * entry points by file and offset.  A symbol a driver version lacks is
 * skipped; the caller gets the counts.
 */
#ifndef IG_CUDA_ATTACH_H
#define IG_CUDA_ATTACH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "tracer.h"

struct ig_libcuda_info {
	char path[PATH_MAX];	/* as attached (may go through /proc/PID/root) */
	char version[32];	/* from the real file name: libcuda.so.VERSION */
	unsigned int nsyms;	/* idlegap entry points the library has */
	unsigned int nattached;	/* of which attached */
};

/* libcuda as mapped by @pid, reached through its root (containers).
 * 0, -ENOENT (not mapped), or another negative errno. */
int ig_cuda_find_in_maps(pid_t pid, char *path, size_t n);
/* @path as process @pid names it (relative to its cwd and root), as a
 * path this process can open. */
void ig_cuda_proc_path(pid_t pid, const char *path, char *out, size_t n);
/* Where the dynamic loader of a command run with @envp would find
 * libcuda.so.1: LD_LIBRARY_PATH, the loader cache, the default dirs. */
int ig_cuda_find_for_exec(char *const envp[], char *path, size_t n);
/* Attaches every known entry point of @path for @pid (-1: all). */
int ig_cuda_attach(struct ig_tracer *t, const char *path, pid_t pid,
		   struct ig_libcuda_info *info);

typedef void (*ig_cuda_sym_cb)(unsigned int api, const char *name,
			       size_t offset, void *ctx);
/* Entry points idlegap knows that @path exports (for `idlegap check`). */
int ig_cuda_scan(const char *path, ig_cuda_sym_cb cb, void *ctx);
/* "550.54.14" from ".../libcuda.so.550.54.14" (after resolving links). */
void ig_cuda_version(const char *path, char *buf, size_t n);

#endif
