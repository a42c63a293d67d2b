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

/*
 * The runtime's records, by container: a record's pod never changes for
 * a container, and the processes of a container exec alike, so each is
 * read and parsed once.  Only found names are kept: a missing record
 * costs two failed opens.
 */
#define CACHE_N	32
static struct {
	char container[72], pod_uid[40], pod[64], namespace[64];
} cache[CACHE_N];
static unsigned int cache_next;

static void read_runtime(struct ig_identity *id)
{
	unsigned int i;

	if (!id->container[0] || !id->pod_uid[0])
		return;
	for (i = 0; i < CACHE_N; i++) {
		if (strcmp(cache[i].container, id->container) ||
		    strcmp(cache[i].pod_uid, id->pod_uid))
			continue;
		copy(id->pod, sizeof(id->pod), cache[i].pod);
		copy(id->namespace, sizeof(id->namespace), cache[i].namespace);
		return;
	}
	ig_identity_read_runtime(id);
	if (!id->pod[0] && !id->namespace[0])
		return;
	i = cache_next++ % CACHE_N;
	copy(cache[i].container, sizeof(cache[i].container), id->container);
	copy(cache[i].pod_uid, sizeof(cache[i].pod_uid), id->pod_uid);
	copy(cache[i].pod, sizeof(cache[i].pod), id->pod);
	copy(cache[i].namespace, sizeof(cache[i].namespace), id->namespace);
}

void ig_identity_record_forget(void)
{
	memset(cache, 0, sizeof(cache));
	cache_next = 0;
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
	read_runtime(&id);
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
