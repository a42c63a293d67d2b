/* SPDX-License-Identifier: GPL-2.0 */
/* The utilization dashboards show (nvidia-smi's "GPU-Util"), from NVML
 * loaded at run time, so idlegap runs where there is no NVIDIA driver. */
#ifndef IG_NVML_H
#define IG_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ig_nvml;

/* One window of the device's own busy measure (docs/design.md §4.10,
 * "Device counters"): device-wide, every process on the GPU. */
enum { IG_NVML_SAMPLES = 1, IG_NVML_GPM = 2 };
struct ig_nvml_win {
	uint64_t t0, t1;	/* CLOCK_MONOTONIC */
	uint32_t busy_ppm;	/* busy share of [t0, t1), parts per million */
	uint32_t quant_ppm;	/* the counter's step: 10000 for whole percent */
	uint32_t kind;
};
typedef void (*ig_nvml_win_fn)(void *ctx, unsigned int dev,
			       const struct ig_nvml_win *w);

/* NULL when NVML is absent or has no device; *why says which. */
struct ig_nvml *ig_nvml_open(const char **why);
unsigned int ig_nvml_ndevices(const struct ig_nvml *n);
/* 0 and the percentages, or -1. */
int ig_nvml_sample(struct ig_nvml *n, unsigned int dev, unsigned int *util,
		   unsigned int *mem);
/* The windows of device @dev's counter that ended since the last call,
 * oldest first, to @cb: NVML's buffered utilization samples (each 1/6 s
 * to 1 s, whole percent), or where they are not supported GPM's graphics
 * utilization between this call and the last (at least 200 ms apart);
 * their count, or -1 when neither works. */
int ig_nvml_windows(struct ig_nvml *n, unsigned int dev, ig_nvml_win_fn cb,
		    void *ctx);
/* Processes with a context on @dev (every user's), or -1. */
int ig_nvml_nprocs(struct ig_nvml *n, unsigned int dev);
/* Which counters answer on @dev (for `idlegap check`). */
#define IG_NVML_HAVE_RATES	(1u << 0)	/* nvmlDeviceGetUtilizationRates */
#define IG_NVML_HAVE_SAMPLES	(1u << 1)	/* nvmlDeviceGetSamples */
#define IG_NVML_HAVE_PROCUTIL	(1u << 2)	/* nvmlDeviceGetProcessUtilization */
#define IG_NVML_HAVE_GPM	(1u << 3)	/* nvmlGpmMetricsGet GRAPHICS_UTIL */
#define IG_NVML_HAVE_PROCS	(1u << 4)	/* the GPU's process list */
unsigned int ig_nvml_counters(struct ig_nvml *n, unsigned int dev);
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
