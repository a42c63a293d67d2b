/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CUDA driver entry points idlegap probes (enum ig_api), looked up by
 * id or name.  One list, bpf/cuda_api.def, makes the enum and this table.
 */
#ifndef IG_CUDA_API_H
#define IG_CUDA_API_H

#include <stdbool.h>
#include "stream/records.h"

/* "cuLaunchKernel"; NULL for an id outside enum ig_api (or IG_API_NONE). */
const char *ig_api_name(unsigned int api);
/* enum ig_api value of a driver symbol name, -1 if not probed. */
int ig_api_by_name(const char *name);
/* How the probe reads the call's arguments; 0 for an unknown id. */
enum ig_api_class ig_api_class_of(unsigned int api);
/* 1-based position of a context-creating call's device argument, else 0. */
unsigned int ig_api_dev_arg(unsigned int api);
/* True for the calls that submit work to a stream, synchronous copies
 * included (the launches). */
bool ig_api_submits(unsigned int api);
/* True for the synchronous copies: a submission the host waits for. */
int ig_api_is_sync_copy(unsigned int api);

#endif
