// SPDX-License-Identifier: GPL-2.0
#include <dlfcn.h>
#include <stdlib.h>
#include "host/nvml.h"

/* The few NVML entry points used, as NVML's API reference declares them. */
typedef int nvml_ret;
typedef void *nvml_device;
struct nvml_util { unsigned int gpu, memory; };

struct ig_nvml {
	void *lib;
	unsigned int ndev;
	nvml_device dev[16];
	nvml_ret (*shutdown)(void);
	nvml_ret (*util)(nvml_device, struct nvml_util *);
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
			n->ndev++;
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
