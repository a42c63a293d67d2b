/* SPDX-License-Identifier: GPL-2.0 */
/* Small readers of /proc. */
#ifndef IG_PROCFS_H
#define IG_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ig_map_entry {
	uint64_t start, end, offset;
	char perms[5];
	uint64_t inode;
	const char *path;	/* "" for anonymous mappings */
};

int ig_proc_comm(pid_t pid, char *buf, size_t n);
int ig_proc_exe(pid_t pid, char *buf, size_t n);
/* Parent pid, or -1.  *kthread set for kernel threads (PF_KTHREAD). */
pid_t ig_proc_ppid(pid_t pid, bool *kthread);
/* The process (thread group) a task id belongs to, or -1. */
pid_t ig_proc_tgid(pid_t tid);
bool ig_proc_exists(pid_t pid);

typedef int (*ig_pid_cb)(pid_t pid, void *ctx);
/* Every thread of @pid. */
int ig_proc_for_each_thread(pid_t pid, ig_pid_cb cb, void *ctx);
/* Every process descended from @pid (children, grandchildren...). */
int ig_proc_for_each_descendant(pid_t pid, ig_pid_cb cb, void *ctx);

typedef int (*ig_map_cb)(const struct ig_map_entry *m, void *ctx);
/* Mappings of @pid; a callback returning non-zero stops the walk. */
int ig_proc_for_each_map(pid_t pid, ig_map_cb cb, void *ctx);

#endif
