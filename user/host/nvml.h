/* SPDX-License-Identifier: GPL-2.0 */
/* The utilization dashboards show (nvidia-smi's "GPU-Util"), from NVML
 * loaded at run time, so idlegap runs where there is no NVIDIA driver. */
#ifndef IG_NVML_H
#define IG_NVML_H

#include <stdbool.h>

struct ig_nvml;

/* NULL when NVML is absent or has no device; *why says which. */
struct ig_nvml *ig_nvml_open(const char **why);
unsigned int ig_nvml_ndevices(const struct ig_nvml *n);
/* 0 and the percentages, or -1. */
int ig_nvml_sample(struct ig_nvml *n, unsigned int dev, unsigned int *util,
		   unsigned int *mem);
void ig_nvml_close(struct ig_nvml *n);

#endif
