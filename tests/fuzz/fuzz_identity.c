// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness over the identity parsers (identity.c): the input is
 * a /proc/PID/cgroup or environ file or a container runtime's record
 * (config.json, read for a fixed pod UID), chosen by its first byte; or
 * (first byte 3) a whole hostile tree: the rest, split at "\n--\n", is a
 * cgroup file, an environ file and the runtime's record of whatever
 * container the cgroup names, written under a scratch /proc and node root
 * and read back by ig_identity_read; every field must come out NUL-terminated and within its
 * array, and the CUDA_VISIBLE_DEVICES lookup must stay in bounds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "host/identity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TERMINATED(f) (memchr((f), '\0', sizeof(f)) != NULL)

static void put(const char *path, const char *s, size_t n)
{
	FILE *f = fopen(path, "w");

	if (!f)
		abort();
	fwrite(s, 1, n, f);
	fclose(f);
}

/* The next part of @s up to "\n--\n" (or the end). */
static size_t part(const char **s, const char *end, const char **out)
{
	const char *p = *s;
	size_t n;

	*out = p;
	for (; p + 4 <= end; p++)
		if (!memcmp(p, "\n--\n", 4))
			break;
	if (p + 4 > end)
		p = end;
	n = (size_t)(p - *out);
	*s = p < end ? p + 4 : end;
	return n;
}

static char root[64];

static void remove_root(void)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	(void)!system(cmd);
}

static void tree(const char *s, size_t len, struct ig_identity *id)
{
	const char *end = s + len, *cg, *env, *rec;
	size_t ncg = part(&s, end, &cg), nenv = part(&s, end, &env);
	size_t nrec = part(&s, end, &rec);
	char path[512];
	struct ig_identity probe;

	if (!root[0]) {
		snprintf(root, sizeof(root), "/tmp/ig-fuzz-id-%d", (int)getpid());
		mkdir(root, 0700);
		atexit(remove_root);
		snprintf(path, sizeof(path), "%s/1", root);
		mkdir(path, 0700);
		ig_identity_set_node_root(root);
	}
	snprintf(path, sizeof(path), "%s/1/cgroup", root);
	put(path, cg, ncg);
	snprintf(path, sizeof(path), "%s/1/environ", root);
	put(path, env, nenv);
	/* the record where the cgroup's container would have it */
	memset(&probe, 0, sizeof(probe));
	ig_identity_parse_cgroup(cg, ncg, &probe);
	if (probe.container[0]) {
		snprintf(path, sizeof(path), "mkdir -p %s/run/containerd/io.containerd."
			 "runtime.v2.task/k8s.io/%s", root, probe.container);
		if (system(path))
			abort();
		snprintf(path, sizeof(path), "%s/run/containerd/io.containerd.runtime."
			 "v2.task/k8s.io/%s/config.json", root, probe.container);
		put(path, rec, nrec);
	}
	if (ig_identity_read(root, 1, id))
		abort();
	if (id->pod[0] && strcmp(id->pod_uid, probe.pod_uid))
		abort();	/* a pod name only for the cgroup's own pod */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ig_identity id;
	char gpu[16], uuid[64];
	const char *s = (const char *)data + 1;
	unsigned int i;

	if (!size)
		return 0;
	memset(&id, 0, sizeof(id));
	switch (data[0] % 4) {
	case 0:
		ig_identity_parse_cgroup(s, size - 1, &id);
		break;
	case 1:
		ig_identity_parse_environ(s, size - 1, &id);
		break;
	case 3:
		tree(s, size - 1, &id);
		break;
	default:
		strcpy(id.pod_uid, "1f0e4b1c-2d3a-4e5f-8a9b-0c1d2e3f4a5b");
		ig_identity_parse_runtime(s, size - 1, &id);
	}
	if (!TERMINATED(id.pod_uid) || !TERMINATED(id.container) ||
	    !TERMINATED(id.runtime) || !TERMINATED(id.pod) ||
	    !TERMINATED(id.namespace) || !TERMINATED(id.slurm_job) ||
	    !TERMINATED(id.slurm_step) || !TERMINATED(id.rank) ||
	    !TERMINATED(id.cuda_visible) || !TERMINATED(id.nvidia_visible))
		abort();
	for (i = 0; i < 4; i++)
	{
		ig_identity_gpu(&id, i, gpu, sizeof(gpu), uuid, sizeof(uuid));
		(void)ig_identity_gpu_self(&id, i);
	}
	return 0;
}
