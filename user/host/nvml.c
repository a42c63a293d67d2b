// SPDX-License-Identifier: GPL-2.0
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
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

struct ig_nvml {
	void *lib;
	unsigned int ndev;
	nvml_device dev[16];
	unsigned int idx[16];		/* NVML's index of dev[i] */
	nvml_ret (*shutdown)(void);
	nvml_ret (*util)(nvml_device, struct nvml_util *);
	nvml_ret (*procs)(nvml_device, unsigned int *, struct nvml_proc *);
	nvml_ret (*uuid)(nvml_device, char *, unsigned int);
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

/* Whether @pid is in one GPU's list of compute processes: 1, 0, or -1
 * when NVML cannot say. */
static int on_device(struct ig_nvml *n, unsigned int i, pid_t pid)
{
	struct nvml_proc v[64];
	unsigned int cnt = 64, k;
	nvml_ret r = n->procs(n->dev[i], &cnt, v);

	if (r == NVML_INSUFFICIENT_SIZE) {
		struct nvml_proc *big;

		if (cnt > 65536 || !(big = calloc(cnt, sizeof(*big))))
			return -1;
		r = n->procs(n->dev[i], &cnt, big);
		for (k = 0; !r && k < cnt; k++)
			if (big[k].pid == (unsigned int)pid)
				break;
		free(big);
		return r ? -1 : k < cnt;
	}
	if (r)
		return -1;
	for (k = 0; k < cnt && k < 64; k++)
		if (v[k].pid == (unsigned int)pid)
			return 1;
	return 0;
}

int ig_nvml_proc_gpus(struct ig_nvml *n, pid_t pid, int *devs, int max)
{
	unsigned int i;
	int found = 0, any_ok = 0, r;

	if (!n || !n->procs)
		return -1;
	for (i = 0; i < n->ndev; i++) {
		r = on_device(n, i, pid);
		if (r < 0)
			continue;
		any_ok = 1;
		if (r && found < max)
			devs[found] = (int)n->idx[i];
		found += r;
	}
	return any_ok ? found : -1;
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
