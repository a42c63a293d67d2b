/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names of attribution causes.  Record field names are in records.h, CUDA
 * driver entry points in cuda_api.h.
 */
#ifndef IG_ENGINE_NAMES_H
#define IG_ENGINE_NAMES_H

#include "stream/records.h"
#include "stream/cuda_api.h"

/* Attribution causes (docs/design.md §5.5); names are the JSON identifiers. */
enum ig_cause {
	IG_C_STORAGE,
	IG_C_PAGE_FAULT,
	IG_C_CPU_STARVATION,
	IG_C_GIL,
	IG_C_LOCK,
	IG_C_NETWORK,
	IG_C_HOST_COMPUTE,
	IG_C_CUDA_API,
	IG_C_SLEEP,
	IG_C_WAIT_UNTRACKED,
	IG_C_UNKNOWN,
	IG_C__MAX,
};

/* JSON cause identifier; NULL outside enum ig_cause. */
const char *ig_cause_name(unsigned int cause);

#endif
