// SPDX-License-Identifier: GPL-2.0
/*
 * Name tables.  Designated initialisers keep each name next to its enum
 * value.  The CUDA entry point table is in user/stream/cuda_api.c.
 */
#include "engine/names.h"

static const char *const causes[IG_C__MAX] = {
	[IG_C_STORAGE] = "storage",
	[IG_C_PAGE_FAULT] = "page_fault",
	[IG_C_CPU_STARVATION] = "cpu_starvation",
	[IG_C_GIL] = "gil",
	[IG_C_LOCK] = "lock",
	[IG_C_NETWORK] = "network",
	[IG_C_HOST_COMPUTE] = "host_compute",
	[IG_C_CUDA_API] = "cuda_api",
	[IG_C_SLEEP] = "sleep",
	[IG_C_WAIT_UNTRACKED] = "wait_untracked",
	[IG_C_UNKNOWN] = "unknown",
};

const char *ig_cause_name(unsigned int cause)
{
	return cause < IG_C__MAX ? causes[cause] : NULL;
}
