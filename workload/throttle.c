// SPDX-License-Identifier: GPL-2.0
/*
 * A slow disk for one process tree: a block IO cgroup that limits its
 * reads from the disk holding a directory to so many bytes a second
 * (cgroup v1 blkio.throttle.read_bps_device, or v2 io.max rbps under the
 * root, where the io controller is there).  The storage straggler of
 * trainsim ranks reads through it, so that its cold reads are slow on a
 * host whose virtual disk is served from its host's cache.
 *
 * Needs root.  Without it, or without a block IO controller, nothing is
 * throttled and the caller is told so (one line); the reads then go at the
 * disk's own speed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "trainsim.h"

static char cg_dir[4096];

static int write_file(const char *dir, const char *name, const char *val)
{
	char path[4300];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	err = fputs(val, f) < 0;
	return fclose(f) || err ? -1 : 0;
}

/* The whole disk of the file system holding @path (a partition's
 * parent): throttling applies to disks. */
static int disk_of(const char *path, unsigned int *maj, unsigned int *min)
{
	char sys[4200], link[4096], *slash;
	struct stat st;
	ssize_t n;
	FILE *f;
	int ok;

	if (stat(path, &st))
		return -1;
	*maj = major(st.st_dev);
	*min = minor(st.st_dev);
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", *maj, *min);
	if (access(sys, F_OK))
		return -1;	/* no block device (tmpfs, overlay, ...) */
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/partition", *maj, *min);
	if (access(sys, F_OK))
		return 0;	/* a whole disk */
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", *maj, *min);
	n = readlink(sys, link, sizeof(link) - 8);
	if (n <= 0)
		return -1;
	link[n] = '\0';
	slash = strrchr(link, '/');
	if (!slash)
		return -1;
	strcpy(slash, "/dev");	/* the parent disk's dev file */
	snprintf(sys, sizeof(sys), "/sys/dev/block/%s", link);
	f = fopen(sys, "r");
	ok = f && fscanf(f, "%u:%u", maj, min) == 2;
	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

/* Creates the cgroup: reads from the disk holding @path at @bps at most.
 * Returns its directory, or NULL with why in @why. */
const char *throttle_create(const char *path, uint64_t bps, const char **why)
{
	unsigned int maj, min;
	char val[128];
	bool v2 = false;
	FILE *f;

	*why = NULL;
	if (geteuid()) {
		*why = "not root";
		return NULL;
	}
	if (disk_of(path, &maj, &min)) {
		*why = "no block device holds the dataset";
		return NULL;
	}
	if (!access("/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device", F_OK)) {
		snprintf(cg_dir, sizeof(cg_dir), "/sys/fs/cgroup/blkio/trainsim-%d",
			 (int)getpid());
	} else if ((f = fopen("/sys/fs/cgroup/cgroup.controllers", "r"))) {
		char line[512] = "";

		v2 = fgets(line, sizeof(line), f) && strstr(line, "io");
		fclose(f);
		if (!v2 || write_file("/sys/fs/cgroup", "cgroup.subtree_control", "+io")) {
			*why = "no io controller";
			return NULL;
		}
		snprintf(cg_dir, sizeof(cg_dir), "/sys/fs/cgroup/trainsim-%d",
			 (int)getpid());
	} else {
		*why = "no block IO cgroup controller";
		return NULL;
	}
	if (mkdir(cg_dir, 0755) && errno != EEXIST) {
		*why = strerror(errno);
		cg_dir[0] = '\0';
		return NULL;
	}
	if (v2)
		snprintf(val, sizeof(val), "%u:%u rbps=%llu\n", maj, min,
			 (unsigned long long)bps);
	else
		snprintf(val, sizeof(val), "%u:%u %llu\n", maj, min,
			 (unsigned long long)bps);
	if (write_file(cg_dir, v2 ? "io.max" : "blkio.throttle.read_bps_device", val)) {
		*why = "the limit was refused";
		throttle_remove();
		return NULL;
	}
	return cg_dir;
}

/* In the child, before exec: joins the cgroup. */
int throttle_join(const char *dir)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	return write_file(dir, "cgroup.procs", pid);
}

/* After the throttled processes are gone. */
void throttle_remove(void)
{
	if (cg_dir[0])
		rmdir(cg_dir);
	cg_dir[0] = '\0';
}
