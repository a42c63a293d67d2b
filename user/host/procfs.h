/* SPDX-License-Identifier: GPL-2.0 */
/* Small readers of /proc. */
#ifndef IG_PROCFS_H
#define IG_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

struct ig_map_entry {
	uint64_t start, end, offset;
	char perms[5];
	uint64_t inode;
	unsigned int dev_major, dev_minor;
	const char *path;	/* "" for anonymous mappings */
};

int ig_proc_comm(pid_t pid, char *buf, size_t n);
int ig_proc_exe(pid_t pid, char *buf, size_t n);
/* Parent pid, or -1.  *kthread set for kernel threads (PF_KTHREAD). */
pid_t ig_proc_ppid(pid_t pid, bool *kthread);
struct ig_task;
/* An IG_REC_TASK record for thread @tid of @tgid at @ts: its parent,
 * comm and executable as /proc says now. */
void ig_proc_task_record(struct ig_task *t, pid_t tid, pid_t tgid, __u64 ts);
/* The process (thread group) a task id belongs to, or -1. */
pid_t ig_proc_tgid(pid_t tid);
bool ig_proc_exists(pid_t pid);
/* A process that has exited: gone, or a zombie its parent has not reaped
 * (a zombie leader whose other threads still run is alive). */
bool ig_proc_exited(pid_t pid);

typedef int (*ig_pid_cb)(pid_t pid, void *ctx);
/* Every thread of @pid. */
int ig_proc_for_each_thread(pid_t pid, ig_pid_cb cb, void *ctx);
/* Every process descended from @pid (children, grandchildren...). */
int ig_proc_for_each_descendant(pid_t pid, ig_pid_cb cb, void *ctx);

typedef int (*ig_map_cb)(const struct ig_map_entry *m, void *ctx);
/* Mappings of @pid; a callback returning non-zero stops the walk. */
int ig_proc_for_each_map(pid_t pid, ig_map_cb cb, void *ctx);
/* A path this process can open for the file @pid maps at @m.  The name in
 * maps is the path from this process's root when the file is under it (a
 * job in a chroot: the same name here), else from the root of @pid's mount
 * namespace (a container's: reached through /proc/PID/root); the one with
 * the mapped inode is taken, then /proc/PID/root's (overlayfs shows another
 * inode); when denied (another user's process without CAP_SYS_PTRACE),
 * the same name here if it is the same inode; when the file was deleted or
 * replaced, /proc/PID/map_files.  -EACCES,
 * -ENOENT or another negative errno when none is the mapped file. */
int ig_proc_map_path(pid_t pid, const struct ig_map_entry *m, char *out, size_t n);

#endif
