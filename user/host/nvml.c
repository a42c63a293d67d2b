// SPDX-License-Identifier: GPL-2.0
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/types.h>
#include "host/nvml.h"

/* The few NVML entry points used, as NVML's API reference declares them. */
typedef int nvml_ret;
typedef void *nvml_device;
struct nvml_util { unsigned int gpu, memory; };
/* nvmlProcessInfo_t, the layout of nvmlDeviceGetComputeRunningProcesses_v3 */
struct nvml_proc {
	unsigned int pid;
	unsigned long long used_mem;
	unsigned int gpu_instance, compute_instance;
};
#define NVML_INSUFFICIENT_SIZE 7
#define IG_NVML_SNAP 1024

struct ig_nvml {
	void *lib;
	unsigned int ndev;
	nvml_device dev[16];
	unsigned int idx[16];		/* NVML's index of dev[i] */
	nvml_ret (*shutdown)(void);
	nvml_ret (*util)(nvml_device, struct nvml_util *);
	nvml_ret (*procs)(nvml_device, unsigned int *, struct nvml_proc *);
	nvml_ret (*uuid)(nvml_device, char *, unsigned int);
	nvml_ret (*count)(unsigned int *);
	nvml_ret (*handle)(unsigned int, nvml_device *);
	/* every GPU's compute processes, as last read */
	struct { unsigned int pid, dev; } snap[IG_NVML_SNAP];
	unsigned int nsnap;
	__u64 snap_at;
	int snap_ok;
};

struct ig_nvml *ig_nvml_open(const char **why)
{
	nvml_ret (*init)(void), (*count)(unsigned int *);
	nvml_ret (*handle)(unsigned int, nvml_device *);
	struct ig_nvml *n = calloc(1, sizeof(*n));
	unsigned int i, cnt = 0;

	if (!n)
		return NULL;
	n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		*why = "NVML (libnvidia-ml.so.1) not found";
		goto fail;
	}
	init = (nvml_ret (*)(void))dlsym(n->lib, "nvmlInit_v2");
	count = (nvml_ret (*)(unsigned int *))dlsym(n->lib, "nvmlDeviceGetCount_v2");
	handle = (nvml_ret (*)(unsigned int, nvml_device *))
		dlsym(n->lib, "nvmlDeviceGetHandleByIndex_v2");
	n->util = (nvml_ret (*)(nvml_device, struct nvml_util *))
		dlsym(n->lib, "nvmlDeviceGetUtilizationRates");
	n->shutdown = (nvml_ret (*)(void))dlsym(n->lib, "nvmlShutdown");
	*(void **)&n->procs = dlsym(n->lib, "nvmlDeviceGetComputeRunningProcesses_v3");
	*(void **)&n->uuid = dlsym(n->lib, "nvmlDeviceGetUUID");
	if (!init || !count || !handle || !n->util || !n->shutdown) {
		*why = "NVML lacks the utilization API";
		goto fail;
	}
	if (init()) {
		*why = "NVML failed to initialise (no NVIDIA driver loaded?)";
		n->shutdown = NULL;
		goto fail;
	}
	if (count(&cnt) || !cnt) {
		*why = "NVML sees no GPU";
		goto fail;
	}
	n->count = count;
	n->handle = handle;
	for (i = 0; i < cnt && n->ndev < 16; i++)
		if (!handle(i, &n->dev[n->ndev]))
			n->idx[n->ndev++] = i;
	if (!n->ndev) {
		*why = "NVML gives no device handle";
		goto fail;
	}
	return n;
fail:
	ig_nvml_close(n);
	return NULL;
}

unsigned int ig_nvml_ndevices(const struct ig_nvml *n)
{
	return n ? n->ndev : 0;
}

int ig_nvml_sample(struct ig_nvml *n, unsigned int dev, unsigned int *util,
		   unsigned int *mem)
{
	struct nvml_util u;

	if (!n || dev >= n->ndev || n->util(n->dev[dev], &u))
		return -1;
	*util = u.gpu;
	*mem = u.memory;
	return 0;
}

/* GPUs that came after the library was opened (a simulated machine's
 * grow as its processes say; a real one's never change). */
static void more_devices(struct ig_nvml *n)
{
	unsigned int cnt = 0, i;

	if (n->count(&cnt))
		return;
	for (i = n->ndev ? n->idx[n->ndev - 1] + 1 : 0; i < cnt && n->ndev < 16; i++)
		if (!n->handle(i, &n->dev[n->ndev]))
			n->idx[n->ndev++] = i;
}

/* One GPU's compute processes into the snapshot; -1 when NVML cannot
 * list them. */
static int snap_device(struct ig_nvml *n, unsigned int i)
{
	struct nvml_proc v[256];
	unsigned int cnt = 256, k;

	if (n->procs(n->dev[i], &cnt, v))
		return -1;	/* more than 256 on one GPU: not listed */
	for (k = 0; k < cnt && n->nsnap < IG_NVML_SNAP; k++) {
		n->snap[n->nsnap].pid = v[k].pid;
		n->snap[n->nsnap++].dev = n->idx[i];
	}
	return 0;
}

/* Every GPU's processes, read again when older than @max_age_ns: NVML's
 * lists take a driver call per GPU, and a host may start processes by
 * the thousand. */
static int snapshot(struct ig_nvml *n, __u64 max_age_ns)
{
	struct timespec ts;
	__u64 now;
	unsigned int i;
	int ok = 0;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
	if (n->snap_at && now - n->snap_at < max_age_ns)
		return n->snap_ok;
	more_devices(n);
	n->nsnap = 0;
	for (i = 0; i < n->ndev; i++)
		ok |= !snap_device(n, i);
	n->snap_at = now;
	return n->snap_ok = ok;
}

static int in_snapshot(const struct ig_nvml *n, pid_t pid, int *devs, int max)
{
	unsigned int i;
	int found = 0;

	for (i = 0; i < n->nsnap; i++)
		if (n->snap[i].pid == (unsigned int)pid) {
			if (found < max)
				devs[found] = (int)n->snap[i].dev;
			found++;
		}
	return found;
}

int ig_nvml_proc_gpus(struct ig_nvml *n, pid_t pid, int *devs, int max)
{
	int found;

	if (!n || !n->procs)
		return -1;
	/* a quarter of a second old at most; 10 ms for one not in it (its
	 * context may be newer) */
	if (!snapshot(n, 250000000ull))
		return -1;
	found = in_snapshot(n, pid, devs, max);
	if (!found && snapshot(n, 10000000ull))
		found = in_snapshot(n, pid, devs, max);
	return found;
}

int ig_nvml_uuid(struct ig_nvml *n, int index, char *buf, size_t len)
{
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; n && n->uuid && i < n->ndev; i++)
		if (n->idx[i] == (unsigned int)index)
			return n->uuid(n->dev[i], buf, (unsigned int)len) ? -1 : 0;
	return -1;
}

int ig_nvml_index_of(struct ig_nvml *n, const char *uuid)
{
	char u[96];
	unsigned int i;

	for (i = 0; n && n->uuid && i < n->ndev; i++)
		if (!n->uuid(n->dev[i], u, sizeof(u)) &&
		    !strncmp(u, uuid, strlen(uuid)))
			return (int)n->idx[i];
	return -1;
}

void ig_nvml_close(struct ig_nvml *n)
{
	if (!n)
		return;
	if (n->shutdown)
		n->shutdown();
	if (n->lib)
		dlclose(n->lib);
	free(n);
}
