/* SPDX-License-Identifier: GPL-2.0 */
/* The host GPU a process is on, for IG_REC_GPUDEV (docs/design.md §4.2).
 * Not thread-safe: the capture's thread alone. */
#ifndef IG_GPUDEV_H
#define IG_GPUDEV_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "stream/records.h"

/* @pid's GPUDEV record at @ts: NVML (loaded at the first call), else the
 * one GPU device node it holds open, else the one GPU its
 * CUDA_VISIBLE_DEVICES names (never LOCAL_RANK: a rank); @at_work when
 * asked at its GPU work (ig_gpudev_wanted), not when it is followed or
 * exec's.  0, or -ENOENT when the process is gone. */
int ig_gpudev_record(struct ig_gpudev *r, pid_t pid, __u64 ts, bool at_work);
/* Whether @pid should be looked at, at its GPU work at @now: never looked
 * at (a child forked after its parent was followed), or looked at
 * without NVML or a device node naming its GPU: at its first GPU work
 * since, then at most once a second. */
bool ig_gpudev_wanted(pid_t pid, __u64 now);
/* The host's index of the GPU @uuid as NVML numbers it (nvidia-smi's),
 * -1 without NVML or when NVML does not know it. */
int ig_gpudev_index_of(const char *uuid);
/* Why NVML cannot place processes on this host (it cannot be loaded, or
 * its nvmlInit failed: the reason in one line), NULL when it can. */
const char *ig_gpudev_no_nvml(void);
/* @pid is gone: never asked again. */
void ig_gpudev_forget(pid_t pid);

#endif
