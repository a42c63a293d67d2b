/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names of the things records carry: CUDA driver entry points (enum ig_api,
 * with the probe class each one needs), off-CPU reasons, attribution causes
 * and record types.  The API table is shared with the probe attacher.
 */
#ifndef IG_ENGINE_NAMES_H
#define IG_ENGINE_NAMES_H

#include "records.h"

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

/* "cuLaunchKernel"; NULL for an id outside enum ig_api (or IG_API_NONE). */
const char *ig_api_name(unsigned int api);
/* enum ig_api value of a driver symbol name, -1 if not probed. */
int ig_api_by_name(const char *name);
/* How the probe reads the call's arguments; 0 for an unknown id. */
enum ig_api_class ig_api_class_of(unsigned int api);
/* True for the synchronous copies: a submission the host waits for. */
int ig_api_is_sync_copy(unsigned int api);

/* "storage", "futex", ...; "unknown" outside enum ig_reason. */
const char *ig_reason_name(unsigned int reason);
/* JSON cause identifier; NULL outside enum ig_cause. */
const char *ig_cause_name(unsigned int cause);
/* CUDA record kind name ("submit"); NULL if unknown. */
const char *ig_cuda_kind_name(unsigned int kind);
/* "duration", "signal", ...; NULL if unknown. */
const char *ig_stop_reason_name(unsigned int reason);

#endif
