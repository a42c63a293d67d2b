// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated NVML (build/simgpu/libnvidia-ml.so.1), loaded with dlopen
 * as idlegap loads it, against GPUs that child processes drive through the
 * simulated driver:
 *
 *   simgpu_nvml basic    devices, UUIDs, handles, error codes
 *   simgpu_nvml procs    per-device process lists (CUDA_VISIBLE_DEVICES,
 *                        ordinals, a killed process, an exited one)
 *   simgpu_nvml util     samples, rates, per-process and GPM utilization
 *                        against a second of known work; the switches
 *
 * Run with SIMGPU_DEVICES=4 and a SIMGPU_MACHINE of its own.
 */
#define NVML_NO_UNVERSIONED_FUNC_DEFS 1
#include <nvml.h>

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <dlfcn.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "checks.h"

#define NV_IS(call, want)                                                 \
	do {                                                              \
		nvmlReturn_t r_ = (call);                                 \
		CHECK(r_ == (want), "%s returned %d, want %d", #call,     \
		      (int)r_, (int)(want));                              \
	} while (0)
#define NV_OK(call) NV_IS(call, NVML_SUCCESS)

static struct {
	nvmlReturn_t (*init)(void), (*init_flags)(unsigned int),
		(*shutdown)(void), (*count)(unsigned int *),
		(*handle)(unsigned int, nvmlDevice_t *),
		(*by_uuid)(const char *, nvmlDevice_t *),
		(*uuid)(nvmlDevice_t, char *, unsigned int),
		(*name)(nvmlDevice_t, char *, unsigned int),
		(*index)(nvmlDevice_t, unsigned int *),
		(*minor)(nvmlDevice_t, unsigned int *),
		(*procs)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *),
		(*rates)(nvmlDevice_t, nvmlUtilization_t *),
		(*samples)(nvmlDevice_t, nvmlSamplingType_t,
			   unsigned long long, nvmlValueType_t *,
			   unsigned int *, nvmlSample_t *),
		(*putil)(nvmlDevice_t, nvmlProcessUtilizationSample_t *,
			 unsigned int *, unsigned long long),
		(*gpm_alloc)(nvmlGpmSample_t *), (*gpm_free)(nvmlGpmSample_t),
		(*gpm_get)(nvmlDevice_t, nvmlGpmSample_t),
		(*gpm_metrics)(nvmlGpmMetricsGet_t *);
	const char *(*errstr)(nvmlReturn_t);
} nv;

static int load(void)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h || !dlsym(h, "nvmlInit_v2")) {
		printf("# cannot load libnvidia-ml.so.1: %s\n", dlerror());
		return -1;
	}
#define SYM(f, n)							\
	do {								\
		*(void **)&nv.f = dlsym(h, n);				\
		CHECK(nv.f, "%s", n);					\
	} while (0)
	SYM(init, "nvmlInit_v2");
	SYM(init_flags, "nvmlInitWithFlags");
	SYM(shutdown, "nvmlShutdown");
	SYM(count, "nvmlDeviceGetCount_v2");
	SYM(handle, "nvmlDeviceGetHandleByIndex_v2");
	SYM(by_uuid, "nvmlDeviceGetHandleByUUID");
	SYM(uuid, "nvmlDeviceGetUUID");
	SYM(name, "nvmlDeviceGetName");
	SYM(index, "nvmlDeviceGetIndex");
	SYM(minor, "nvmlDeviceGetMinorNumber");
	SYM(procs, "nvmlDeviceGetComputeRunningProcesses_v3");
	SYM(rates, "nvmlDeviceGetUtilizationRates");
	SYM(samples, "nvmlDeviceGetSamples");
	SYM(putil, "nvmlDeviceGetProcessUtilization");
	SYM(gpm_alloc, "nvmlGpmSampleAlloc");
	SYM(gpm_free, "nvmlGpmSampleFree");
	SYM(gpm_get, "nvmlGpmSampleGet");
	SYM(gpm_metrics, "nvmlGpmMetricsGet");
	SYM(errstr, "nvmlErrorString");
	return failures ? -1 : 0;
}

static nvmlDevice_t dev(unsigned int i)
{
	nvmlDevice_t d = NULL;

	NV_OK(nv.handle(i, &d));
	return d;
}

static void basic(void)
{
	char u[4][NVML_DEVICE_UUID_V2_BUFFER_SIZE], small[8], name[96];
	unsigned int n = 0, i, j, idx;
	nvmlDevice_t d;

	NV_IS(nv.count(&n), NVML_ERROR_UNINITIALIZED);
	NV_IS(nv.shutdown(), NVML_ERROR_UNINITIALIZED);
	NV_IS(nv.init_flags(0x100), NVML_ERROR_INVALID_ARGUMENT);
	NV_OK(nv.init());
	NV_OK(nv.count(&n));
	CHECK(n == 4, "%u devices, want 4", n);
	NV_IS(nv.handle(4, &d), NVML_ERROR_INVALID_ARGUMENT);
	for (i = 0; i < 4; i++) {
		NV_OK(nv.uuid(dev(i), u[i], sizeof(u[i])));
		CHECK(!strncmp(u[i], "GPU-", 4) && strlen(u[i]) == 40,
		      "uuid %s", u[i]);
		for (j = 0; j < i; j++)
			CHECK(strcmp(u[i], u[j]), "uuid %u = uuid %u", i, j);
		NV_OK(nv.by_uuid(u[i], &d));
		CHECK(d == dev(i), "handle by uuid %u", i);
		NV_OK(nv.index(d, &idx));
		CHECK(idx == i, "index %u of %u", idx, i);
		NV_OK(nv.minor(d, &idx));
		CHECK(idx == i, "minor %u of %u", idx, i);
	}
	NV_IS(nv.uuid(dev(0), small, sizeof(small)),
	      NVML_ERROR_INSUFFICIENT_SIZE);
	NV_IS(nv.by_uuid("GPU-00000000-0000-0000-0000-000000000000", &d),
	      NVML_ERROR_NOT_FOUND);
	NV_IS(nv.uuid((nvmlDevice_t)name, u[0], sizeof(u[0])),
	      NVML_ERROR_INVALID_ARGUMENT);
	NV_OK(nv.name(dev(1), name, sizeof(name)));
	CHECK(!strcmp(name, "idlegap simgpu"), "name %s", name);
	CHECK(!strcmp(nv.errstr(NVML_ERROR_NOT_SUPPORTED), "Not Supported"),
	      "error string");
	/* reference counted, as the real library */
	NV_OK(nv.init());
	NV_OK(nv.shutdown());
	NV_OK(nv.count(&n));
	NV_OK(nv.shutdown());
	NV_IS(nv.count(&n), NVML_ERROR_UNINITIALIZED);
	/* a second process started later sees the same UUIDs */
	printf("uuid3 %s\n", u[3]);
}

/* A child that holds a context on ordinal ord (CUDA_VISIBLE_DEVICES=cvd
 * when given), optionally runs busy_ms of memsets, tells its UUID on the
 * pipe and waits for SIGTERM (then exits normally) or SIGKILL. */
static pid_t child(const char *cvd, int ord, int busy_ms, int fd[2])
{
	pid_t p;

	if (pipe(fd) || (p = fork()) < 0)
		return -1;
	if (p) {
		close(fd[1]);
		return p;
	}
	close(fd[0]);
	if (cvd)
		setenv("CUDA_VISIBLE_DEVICES", cvd, 1);
	{
		CUdevice d;
		CUcontext c;
		CUuuid uu;
		CUdeviceptr mem;
		char line[64];
		int i;

		if (cuInit(0) || cuDeviceGet(&d, ord) ||
		    cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
		    cuDeviceGetUuid_v2(&uu, d))
			_exit(3);
		/* 100 ms each at the default 12e9 B/s */
		if (busy_ms && cuMemAlloc_v2(&mem, 1200000000u))
			_exit(4);
		for (i = 0; i < busy_ms / 100; i++)
			if (cuMemsetD8Async(mem, 0, 1200000000u, NULL))
				_exit(5);
		if (cuCtxSynchronize())
			_exit(6);
		for (i = 0; i < 16; i++)
			snprintf(line + 2 * i, 3, "%02x",
				 (unsigned char)uu.bytes[i]);
		line[32] = '\n';
		if (write(fd[1], line, 33) != 33)
			_exit(7);
		pause();
		_exit(0);
	}
}

static bool wait_ready(int fd, char *hex)
{
	ssize_t n = read(fd, hex, 33);

	close(fd);
	if (n != 33)
		return false;
	hex[32] = 0;
	return true;
}

/* The pids NVML lists on device i. */
static unsigned int on_dev(unsigned int i, pid_t *out, unsigned int max)
{
	nvmlProcessInfo_t info[64];
	unsigned int n = 0, k;

	NV_IS(nv.procs(dev(i), &n, NULL), n ? NVML_ERROR_INSUFFICIENT_SIZE
					   : NVML_SUCCESS);
	n = 0;
	if (nv.procs(dev(i), &n, NULL) == NVML_ERROR_INSUFFICIENT_SIZE) {
		CHECK(n > 0, "size asked with nothing listed");
		n = 64;
		NV_OK(nv.procs(dev(i), &n, info));
	}
	for (k = 0; k < n && k < max; k++) {
		out[k] = (pid_t)info[k].pid;
		CHECK(info[k].gpuInstanceId == 0xFFFFFFFFu, "MIG id");
	}
	return n;
}

static bool listed(unsigned int i, pid_t p)
{
	pid_t v[64];
	unsigned int n = on_dev(i, v, 64), k;

	for (k = 0; k < n; k++)
		if (v[k] == p)
			return true;
	return false;
}

/* 32 hex digits of a CUuuid against "GPU-..." */
static bool same_uuid(const char *hex, const char *nvml)
{
	char flat[40];
	int i, j = 0;

	for (i = 4; nvml[i] && j < 32; i++)
		if (nvml[i] != '-')
			flat[j++] = nvml[i];
	flat[j] = 0;
	return !strcmp(flat, hex);
}

static void procs(void)
{
	char hex_a[40], hex_b[40], u[96];
	int fa[2], fb[2];
	pid_t a, b;
	int st;
	unsigned int i;

	NV_OK(nv.init());
	/* a sees only GPU 3, as its ordinal 0; b drives ordinal 2 */
	a = child("3", 0, 0, fa);
	b = child(NULL, 2, 0, fb);
	CHECK(a > 0 && b > 0, "fork");
	CHECK(wait_ready(fa[0], hex_a), "child a ready");
	CHECK(wait_ready(fb[0], hex_b), "child b ready");
	for (i = 0; i < 4; i++) {
		CHECK(listed(i, a) == (i == 3), "a on device %u: %d", i,
		      listed(i, a));
		CHECK(listed(i, b) == (i == 2), "b on device %u: %d", i,
		      listed(i, b));
	}
	NV_OK(nv.uuid(dev(3), u, sizeof(u)));
	CHECK(same_uuid(hex_a, u), "driver uuid %s, nvml %s", hex_a, u);
	NV_OK(nv.uuid(dev(2), u, sizeof(u)));
	CHECK(same_uuid(hex_b, u), "driver uuid %s, nvml %s", hex_b, u);
	/* killed: no exit handler ran, its slot is stale */
	kill(a, SIGKILL);
	waitpid(a, &st, 0);
	CHECK(!listed(3, a), "a killed but listed");
	/* ended normally */
	kill(b, SIGTERM);
	waitpid(b, &st, 0);
	CHECK(!listed(2, b), "b gone but listed");
	NV_OK(nv.shutdown());
}

static void switches(nvmlDevice_t d)
{
	nvmlValueType_t t;
	nvmlUtilization_t ut;
	unsigned int n = 0;
	nvmlGpmSample_t s;

	setenv("SIMNVML_NO_SAMPLES", "1", 1);
	NV_IS(nv.samples(d, NVML_GPU_UTILIZATION_SAMPLES, 0, &t, &n, NULL),
	      NVML_ERROR_NOT_SUPPORTED);
	setenv("SIMNVML_NO_UTILIZATION", "1", 1);
	NV_IS(nv.rates(d, &ut), NVML_ERROR_NOT_SUPPORTED);
	setenv("SIMNVML_NO_PROCESS_UTILIZATION", "1", 1);
	NV_IS(nv.putil(d, NULL, &n, 0), NVML_ERROR_NOT_SUPPORTED);
	setenv("SIMNVML_NO_PROCESSES", "1", 1);
	NV_IS(nv.procs(d, &n, NULL), NVML_ERROR_NOT_SUPPORTED);
	setenv("SIMNVML_NO_GPM", "1", 1);
	NV_OK(nv.gpm_alloc(&s));
	NV_IS(nv.gpm_get(d, s), NVML_ERROR_NOT_SUPPORTED);
	NV_OK(nv.gpm_free(s));
	NV_IS(nv.samples(d, NVML_MEMORY_UTILIZATION_SAMPLES, 0, &t, &n, NULL),
	      NVML_ERROR_NOT_SUPPORTED);
}

/* Samples of device d: the number at 95% or more, and that every one is
 * 1/6 s after the previous one, in wall-clock microseconds. */
static int busy_samples(nvmlDevice_t d, int *zeros)
{
	nvmlSample_t v[200];
	nvmlValueType_t t;
	unsigned int n = 0, k;
	struct timespec now;
	int full = 0;

	NV_OK(nv.samples(d, NVML_GPU_UTILIZATION_SAMPLES, 0, &t, &n, NULL));
	CHECK(n > 0 && n <= 200, "%u samples", n);
	NV_OK(nv.samples(d, NVML_GPU_UTILIZATION_SAMPLES, 0, &t, &n, v));
	CHECK(t == NVML_VALUE_TYPE_UNSIGNED_INT, "value type %d", t);
	clock_gettime(CLOCK_REALTIME, &now);
	*zeros = 0;
	for (k = 0; k < n; k++) {
		long long gap = k ? (long long)(v[k].timeStamp -
						v[k - 1].timeStamp) : 166666;

		CHECK(gap >= 166665 && gap <= 166668, "sample gap %lld", gap);
		CHECK(v[k].sampleValue.uiVal <= 100, "sample %u",
		      v[k].sampleValue.uiVal);
		full += v[k].sampleValue.uiVal >= 95;
		*zeros += v[k].sampleValue.uiVal == 0;
	}
	CHECK(n && v[n - 1].timeStamp <= (unsigned long long)now.tv_sec *
	      1000000 + (unsigned long long)now.tv_nsec / 1000 &&
	      v[n - 1].timeStamp + 30000000ull >
	      (unsigned long long)now.tv_sec * 1000000, "wall-clock stamps");
	/* only newer ones after a timestamp */
	if (n > 2) {
		unsigned long long last = v[n - 3].timeStamp;

		n = 200;
		NV_OK(nv.samples(d, NVML_GPU_UTILIZATION_SAMPLES, last, &t, &n,
				 v));
		CHECK(n == 2 && v[0].timeStamp > last, "%u newer samples", n);
	}
	return full;
}

static void util(void)
{
	nvmlGpmMetricsGet_t g;
	nvmlProcessUtilizationSample_t pu[8];
	nvmlUtilization_t ut;
	nvmlGpmSample_t s1, s2;
	uint64_t t1, t2;
	char hex[40];
	int fd[2], st, full, zeros;
	unsigned int n;
	pid_t c;

	NV_OK(nv.init());
	NV_OK(nv.gpm_alloc(&s1));
	NV_OK(nv.gpm_alloc(&s2));
	NV_OK(nv.gpm_get(dev(1), s1));
	t1 = now_ns();
	usleep(300000);
	c = child(NULL, 1, 1000, fd);	/* 1 s of work on GPU 1 */
	CHECK(wait_ready(fd[0], hex), "child ready");
	usleep(20000);	/* a sync may return before the last op is out */
	NV_OK(nv.rates(dev(1), &ut));
	CHECK(ut.gpu >= 80, "rate right after a busy second: %u", ut.gpu);
	usleep(300000);
	NV_OK(nv.gpm_get(dev(1), s2));
	t2 = now_ns();
	memset(&g, 0, sizeof(g));
	g.version = NVML_GPM_METRICS_GET_VERSION;
	g.numMetrics = 2;
	g.sample1 = s1;
	g.sample2 = s2;
	g.metrics[0].metricId = NVML_GPM_METRIC_GRAPHICS_UTIL;
	g.metrics[1].metricId = NVML_GPM_METRIC_SM_OCCUPANCY;
	NV_OK(nv.gpm_metrics(&g));
	NV_OK(g.metrics[0].nvmlReturn);
	{
		double want = 100.0 * 1e9 / (double)(t2 - t1);

		CHECK(g.metrics[0].value > want * 0.97 &&
		      g.metrics[0].value < want * 1.03,
		      "GPM graphics util %.2f, want %.2f",
		      g.metrics[0].value, want);
	}
	NV_IS(g.metrics[1].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
	g.sample1 = s2;
	NV_OK(nv.gpm_get(dev(1), s1));
	g.sample2 = s1;		/* under 100 ms apart */
	NV_IS(nv.gpm_metrics(&g), NVML_ERROR_INVALID_ARGUMENT);
	n = 0;
	NV_IS(nv.putil(dev(1), NULL, &n, 0), NVML_ERROR_INSUFFICIENT_SIZE);
	CHECK(n == 1, "%u processes with utilization", n);
	n = 8;
	NV_OK(nv.putil(dev(1), pu, &n, 0));
	CHECK(n == 1 && pu[0].pid == (unsigned int)c && pu[0].smUtil > 0,
	      "process utilization: %u, pid %u, sm %u", n, pu[0].pid,
	      pu[0].smUtil);
	n = 0;
	NV_IS(nv.putil(dev(0), NULL, &n, 0), NVML_ERROR_NOT_FOUND);
	usleep(1200000);
	full = busy_samples(dev(1), &zeros);
	CHECK(full >= 5 && full <= 7, "%d full samples for a busy second",
	      full);
	CHECK(zeros >= 6, "%d idle samples", zeros);
	NV_OK(nv.rates(dev(1), &ut));
	CHECK(ut.gpu == 0, "rate after an idle second: %u", ut.gpu);
	NV_OK(nv.rates(dev(2), &ut));
	CHECK(ut.gpu == 0, "rate of an unused GPU: %u", ut.gpu);
	kill(c, SIGTERM);
	waitpid(c, &st, 0);
	switches(dev(1));
	NV_OK(nv.gpm_free(s1));
	NV_OK(nv.gpm_free(s2));
	NV_OK(nv.shutdown());
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: simgpu_nvml basic|procs|util\n");
		return 2;
	}
	if (load())
		return 1;
	if (!strcmp(argv[1], "basic"))
		basic();
	else if (!strcmp(argv[1], "procs"))
		procs();
	else if (!strcmp(argv[1], "util"))
		util();
	else
		return 2;
	return failures ? 1 : 0;
}
