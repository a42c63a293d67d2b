// SPDX-License-Identifier: GPL-2.0
/*
 * The IDENT record of a process (user/stream/records.h): the part of its
 * identity the node vouches for (docs/design.md §7.7), read from its
 * cgroup and the container runtime's record of its container.  Nothing
 * from its environment or its own files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "host/identity.h"
#include "host/identity_int.h"
#include "stream/records.h"

#define CGROUP_MAX	(64 * 1024)

static void copy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src);
}

int ig_identity_record(struct ig_ident *r, const char *proc_root, pid_t pid,
		       __u64 ts)
{
	static char buf[CGROUP_MAX];
	struct ig_identity id;
	char path[512];
	ssize_t n, got = 0;
	int fd;

	memset(r, 0, sizeof(*r));
	memset(&id, 0, sizeof(id));
	snprintf(path, sizeof(path), "%s/%d/cgroup",
		 proc_root ? proc_root : "/proc", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < CGROUP_MAX &&
	       (n = read(fd, buf + got, CGROUP_MAX - (size_t)got)) > 0)
		got += n;
	close(fd);
	ig_identity_parse_cgroup(buf, (size_t)got, &id);
	ig_identity_read_runtime(&id);
	if (!id.pod_uid[0] && !id.container[0])
		return -ENOENT;
	r->h.type = IG_REC_IDENT;
	r->h.size = sizeof(*r);
	r->h.tid = r->h.tgid = (__u32)pid;
	r->h.ts = ts;
	copy(r->pod_uid, sizeof(r->pod_uid), id.pod_uid);
	copy(r->container, sizeof(r->container), id.container);
	copy(r->runtime, sizeof(r->runtime), id.runtime);
	copy(r->pod, sizeof(r->pod), id.pod);
	copy(r->namespace, sizeof(r->namespace), id.namespace);
	return 0;
}
