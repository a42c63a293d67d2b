// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness over the identity parsers (identity.c): the input is
 * a /proc/PID/cgroup or environ file or a container runtime's record
 * (config.json, read for a fixed pod UID), chosen by its first byte; every field must come out NUL-terminated and within its
 * array, and the CUDA_VISIBLE_DEVICES lookup must stay in bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "identity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TERMINATED(f) (memchr((f), '\0', sizeof(f)) != NULL)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ig_identity id;
	char gpu[16], uuid[64];
	const char *s = (const char *)data + 1;
	unsigned int i;

	if (!size)
		return 0;
	memset(&id, 0, sizeof(id));
	switch (data[0] % 3) {
	case 0:
		ig_identity_parse_cgroup(s, size - 1, &id);
		break;
	case 1:
		ig_identity_parse_environ(s, size - 1, &id);
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
