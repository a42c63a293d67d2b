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
#include "probes/tracer.h"

struct ig_libcuda_info {
	char path[PATH_MAX];	/* as the process names it */
	char version[32];	/* from the real file name: libcuda.so.VERSION */
	unsigned int nsyms;	/* idlegap entry points the library has */
	unsigned int nattached;	/* of which attached */
};

struct ig_cuda_lib {
	char name[PATH_MAX];	/* as the process names it */
	char path[PATH_MAX];	/* as idlegap opens it: through /proc/PID/root
				 * when the process has its own mounts */
};

/* libcuda as mapped by @pid.  0; -ENOENT with lib->name empty when it is
 * not mapped; another negative errno with lib->name set when it is mapped
 * but cannot be reached (-EACCES: another user's process, and no
 * CAP_SYS_PTRACE to look into its mount namespace). */
int ig_cuda_find_in_maps(pid_t pid, struct ig_cuda_lib *lib);
/* Where the dynamic loader of a command run with @envp would find
 * libcuda.so.1: LD_LIBRARY_PATH, the loader cache, the default dirs. */
int ig_cuda_find_for_exec(char *const envp[], char *path, size_t n);
/* Which of libcuda's entry points: the set-up ones (contexts, modules,
 * streams, cuInit) and the hot path (launches, copies, syncs, queries,
 * events, the other timed calls).  Set-up alone stays attached between
 * the agent's windows (docs/design.md §7.10). */
enum {
	IG_CUDA_SETUP = 1,
	IG_CUDA_HOT = 2,
	IG_CUDA_ALL = IG_CUDA_SETUP | IG_CUDA_HOT,
};
/* Whether @api is a set-up entry point. */
bool ig_cuda_is_setup(unsigned int api);
/* Attaches the known entry points of @lib that @which names for @pid (-1:
 * every process; the programs return at once for untracked ones);
 * IG_CUDA_SETUP alone as links that stay between windows. */
int ig_cuda_attach(struct ig_tracer *t, const struct ig_cuda_lib *lib, pid_t pid,
		   unsigned int which, struct ig_libcuda_info *info);

typedef void (*ig_cuda_sym_cb)(unsigned int api, const char *name,
			       size_t offset, void *ctx);
/* Entry points idlegap knows that @path exports (for `idlegap check`). */
int ig_cuda_scan(const char *path, ig_cuda_sym_cb cb, void *ctx);
/* "550.54.14" from ".../libcuda.so.550.54.14" (after resolving links). */
void ig_cuda_version(const char *path, char *buf, size_t n);

#endif
