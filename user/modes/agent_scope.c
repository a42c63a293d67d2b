// SPDX-License-Identifier: GPL-2.0
/*
 * `idlegap agent --cgroup PATH`: only the processes of one cgroup v2
 * subtree are followed (a node's slice for one team's jobs, a Slurm job's
 * cgroup).  PATH is as /proc/PID/cgroup names it, from the cgroup v2
 * root; a process is in scope when its cgroup is PATH or below it.  The
 * cgroup is read when the process is found: one that moves later stays
 * followed (or not).  Processes out of scope are not traced at all, and
 * are not counted among a window's GPU processes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "modes/agent_int.h"

int ig_agent_scope_check(const char *path)
{
	size_t n = path ? strlen(path) : 0;

	if (!n || path[0] != '/' || n >= IG_AGENT_SCOPE_MAX || strstr(path, "/../") ||
	    strstr(path, "/./") || strstr(path, "//") ||
	    (n >= 3 && !strcmp(path + n - 3, "/..")) ||
	    (n >= 2 && !strcmp(path + n - 2, "/.")) || strchr(path, '\n'))
		return -1;
	return 0;
}

/* @pid's cgroup v2 path into @out; false when it has none or is gone. */
static bool cgroup_of(pid_t pid, char *out, size_t len)
{
	char file[64], buf[4096], *line, *save = NULL;
	ssize_t n;
	int fd;

	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, "0::", 3) && strlen(line + 3) < len) {
			strcpy(out, line + 3);
			return true;
		}
	return false;
}

bool ig_agent_in_scope(const struct agent *a, pid_t pid)
{
	const char *want = a->o->cgroup;
	char cg[IG_AGENT_SCOPE_MAX + 512];
	size_t n;

	if (!want)
		return true;
	if (!cgroup_of(pid, cg, sizeof(cg)))
		return false;
	n = strlen(want);
	if (n > 1 && want[n - 1] == '/')
		n--;
	if (!strcmp(want, "/"))
		return true;
	return !strncmp(cg, want, n) && (cg[n] == '\0' || cg[n] == '/');
}

/* The cgroup v2 hierarchy's mount point in @out (the first one mounted). */
static int cgroup2_mount(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], mnt[4096];
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - cgroup2 ");

		if (sep && sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 &&
		    strlen(mnt) < len) {
			strcpy(out, mnt);
			err = 0;
		}
	}
	fclose(f);
	return err;
}

int ig_agent_scope_fd(const struct agent *a)
{
	char root[4096], path[4096 + IG_AGENT_SCOPE_MAX];
	int err, fd;

	if (!a->o->cgroup)
		return -ENOENT;
	err = cgroup2_mount(root, sizeof(root));
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s%s", root, strcmp(a->o->cgroup, "/") ? a->o->cgroup : "");
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}
