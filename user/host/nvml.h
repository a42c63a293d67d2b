/* SPDX-License-Identifier: GPL-2.0 */
/* The utilization dashboards show (nvidia-smi's "GPU-Util"), from NVML
 * loaded at run time, so idlegap runs where there is no NVIDIA driver. */
#ifndef IG_NVML_H
#define IG_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct ig_nvml;

/* NULL when NVML is absent or has no device; *why says which. */
struct ig_nvml *ig_nvml_open(const char **why);
unsigned int ig_nvml_ndevices(const struct ig_nvml *n);
/* 0 and the percentages, or -1. */
int ig_nvml_sample(struct ig_nvml *n, unsigned int dev, unsigned int *util,
		   unsigned int *mem);
void ig_nvml_close(struct ig_nvml *n);

/* NVML's indices of the GPUs whose compute processes include @pid (a
 * host pid), at most @max in @devs: how many there are, or -1 when NVML
 * cannot list processes. */
int ig_nvml_proc_gpus(struct ig_nvml *n, pid_t pid, int *devs, int max);
/* NVML's UUID of GPU @index into @buf ("" and -1 when unknown). */
int ig_nvml_uuid(struct ig_nvml *n, int index, char *buf, size_t len);
/* The index of the GPU whose UUID starts with @uuid, or -1. */
int ig_nvml_index_of(struct ig_nvml *n, const char *uuid);

#endif
