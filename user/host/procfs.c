// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "host/procfs.h"
#include "stream/records.h"
#include "util/util.h"

#define PF_KTHREAD 0x00200000

static int read_small(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	size_t len;

	if (!f)
		return -errno;
	len = fread(buf, 1, n - 1, f);
	fclose(f);
	buf[len] = 0;
	return (int)len;
}

int ig_proc_comm(pid_t pid, char *buf, size_t n)
{
	char path[64];
	int len;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	len = read_small(path, buf, n);
	if (len < 0)
		return len;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

int ig_proc_exe(pid_t pid, char *buf, size_t n)
{
	char path[64];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	len = readlink(path, buf, n - 1);
	if (len < 0) {
		buf[0] = 0;
		return -errno;
	}
	buf[len] = 0;
	return 0;
}

pid_t ig_proc_ppid(pid_t pid, bool *kthread)
{
	char path[64], buf[1024], *p;
	unsigned long flags = 0;
	int ppid = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	/* comm may hold spaces and parentheses: parse after the last ')' */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %d %*d %*d %*d %*d %lu", &ppid, &flags) != 2)
		return -1;
	if (kthread)
		*kthread = flags & PF_KTHREAD;
	return ppid;
}

pid_t ig_proc_tgid(pid_t tid)
{
	char path[64], line[256];
	pid_t tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

bool ig_proc_exists(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return access(path, F_OK) == 0;
}

static int count_entry(pid_t pid, void *ctx)
{
	(void)pid;
	return ++*(int *)ctx > 1;	/* a second thread is enough */
}

bool ig_proc_exited(pid_t pid)
{
	char path[64], buf[1024], *p;
	int nthreads = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return true;
	p = strrchr(buf, ')');
	if (!p || (p[2] != 'Z' && p[2] != 'X'))
		return false;
	/* the leader called pthread_exit(): the others may still run */
	ig_proc_for_each_thread(pid, count_entry, &nthreads);
	return nthreads <= 1;
}

static int for_each_numeric(const char *dir, ig_pid_cb cb, void *ctx)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int err = 0;

	if (!d)
		return -errno;
	while (!err && (e = readdir(d))) {
		char *end;
		long v = strtol(e->d_name, &end, 10);

		if (*end || end == e->d_name)
			continue;
		err = cb((pid_t)v, ctx);
	}
	closedir(d);
	return err;
}

int ig_proc_for_each_thread(pid_t pid, ig_pid_cb cb, void *ctx)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	return for_each_numeric(path, cb, ctx);
}

struct pp {
	pid_t *pid, *ppid;
	size_t n, cap;
};

static int collect_pp(pid_t pid, void *ctx)
{
	struct pp *t = ctx;
	pid_t ppid = ig_proc_ppid(pid, NULL);

	if (ppid < 0)
		return 0;	/* exited meanwhile */
	if (t->n == t->cap) {	/* two arrays, one capacity */
		size_t cap = t->cap;

		if (!ig_grow_from((void **)&t->pid, &cap, t->n, sizeof(*t->pid), 1024) ||
		    !ig_grow_from((void **)&t->ppid, &t->cap, t->n, sizeof(*t->ppid), 1024))
			return -ENOMEM;
	}
	t->pid[t->n] = pid;
	t->ppid[t->n++] = ppid;
	return 0;
}

int ig_proc_for_each_descendant(pid_t root, ig_pid_cb cb, void *ctx)
{
	struct pp t = {};
	pid_t *queue;
	size_t head = 0, tail = 0, i;
	int err;

	err = for_each_numeric("/proc", collect_pp, &t);
	if (err)
		goto out;
	queue = malloc((t.n + 1) * sizeof(*queue));
	if (!queue) {
		err = -ENOMEM;
		goto out;
	}
	queue[tail++] = root;
	while (head < tail && !err) {
		pid_t p = queue[head++];

		for (i = 0; i < t.n && !err; i++) {
			if (t.ppid[i] != p || t.pid[i] == root)
				continue;
			queue[tail++] = t.pid[i];
			t.ppid[i] = -1;	/* visit once */
			err = cb(t.pid[i], ctx);
		}
	}
	free(queue);
out:
	free(t.pid);
	free(t.ppid);
	return err;
}

int ig_proc_for_each_map(pid_t pid, ig_map_cb cb, void *ctx)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!err && getline(&line, &cap, f) > 0) {
		struct ig_map_entry m = {};
		int off = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &m.start, &m.end, m.perms, &m.offset, &m.dev_major,
			   &m.dev_minor, &m.inode, &off) < 7)
			continue;
		line[strcspn(line, "\n")] = 0;
		m.path = off ? line + off : "";
		err = cb(&m, ctx);
	}
	free(line);
	fclose(f);
	return err > 0 ? 0 : err;
}

static bool same_inode(const struct ig_map_entry *m, const struct stat *st)
{
	return st->st_ino == m->inode && major(st->st_dev) == m->dev_major &&
	       minor(st->st_dev) == m->dev_minor;
}

/* The name in maps is the file's path as the reader sees it when the file
 * is under the reader's root (a chroot in this mount namespace), and from
 * the root of the process's mount namespace otherwise (a container): the
 * exact inode under either says which. */
static int exact_path(pid_t pid, const struct ig_map_entry *m, char *out, size_t n,
		      bool *under_root)
{
	struct stat st;
	int err;

	snprintf(out, n, "/proc/%d/root%s", pid, m->path);
	err = stat(out, &st) ? -errno : 0;
	*under_root = !err;
	if (!err && same_inode(m, &st))
		return 0;
	if (!stat(m->path, &st) && same_inode(m, &st)) {
		snprintf(out, n, "%s", m->path);
		return 0;
	}
	return err ? err : -ENOENT;
}

int ig_proc_map_path(pid_t pid, const struct ig_map_entry *m, char *out, size_t n)
{
	struct stat st;
	bool under_root;
	int err;

	if (m->path[0] != '/')
		return -ENOENT;
	if (pid == getpid()) {
		snprintf(out, n, "%s", m->path);
		return 0;
	}
	err = exact_path(pid, m, out, n, &under_root);
	if (!err)
		return 0;
	/* No inode check here: overlayfs (before Linux 6.8) shows the inode
	 * of the layer below in maps, not the one stat() sees. */
	if (under_root) {
		snprintf(out, n, "/proc/%d/root%s", pid, m->path);
		return 0;
	}
	if (err == -EACCES || err == -EPERM)
		return -EACCES;
	/* " (deleted)", replaced since it was mapped, or under a root
	 * neither name reaches (needs CAP_SYS_ADMIN) */
	snprintf(out, n, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, m->start, m->end);
	if (!stat(out, &st))
		return 0;
	return err;
}

void ig_proc_task_record(struct ig_task *t, pid_t tid, pid_t tgid, __u64 ts)
{
	*t = (struct ig_task){
		.h = { .type = IG_REC_TASK, .size = sizeof(*t), .tid = tid,
		       .tgid = tgid, .ts = ts },
		.is_thread = tid != tgid,
	};
	t->ppid = ig_proc_ppid(tgid, NULL);
	ig_proc_comm(tid, t->comm, sizeof(t->comm));
	ig_proc_exe(tgid, t->exe, sizeof(t->exe));
}
