// SPDX-License-Identifier: GPL-2.0
/*
 * simnvml: the simulated NVML, build/simgpu/libnvidia-ml.so.1.  It answers
 * from the simulated machine (../machine.h) that every process's simulated
 * driver writes: its GPUs, the processes holding a context on each and the
 * busy intervals their work executed.  Compiled against an nvml.h (the
 * CUDA toolkit's, else include/nvml.h), so its ABI is NVML's.  docs/simgpu.md describes what it answers.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simnvml.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int refs;
struct simm *machine;
struct nvmlDevice_st devs[SIMM_MAXDEV];

/* The machine's GPUs: as many as any of its processes was given, so far
 * (a process started later with more GPUs adds them). */
unsigned int ndevices(void)
{
	unsigned int n = __atomic_load_n(&machine->ndev, __ATOMIC_ACQUIRE);

	return n > SIMM_MAXDEV ? SIMM_MAXDEV : n;
}

uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/* NVML's timestamps are wall-clock microseconds; the machine's are
 * CLOCK_MONOTONIC nanoseconds. */
unsigned long long to_us(uint64_t mono)
{
	int64_t off = (int64_t)clock_ns(CLOCK_REALTIME) -
		      (int64_t)clock_ns(CLOCK_MONOTONIC);

	return (unsigned long long)(((int64_t)mono + off) / 1000);
}

uint64_t from_us(unsigned long long us)
{
	int64_t off = (int64_t)clock_ns(CLOCK_REALTIME) -
		      (int64_t)clock_ns(CLOCK_MONOTONIC);
	int64_t m = (int64_t)us * 1000 - off;

	return m > 0 ? (uint64_t)m : 0;
}

/* SIMNVML_NO_<WHAT>=1 makes a query answer NVML_ERROR_NOT_SUPPORTED. */
bool off(const char *what)
{
	const char *v = getenv(what);

	return v && *v && strcmp(v, "0");
}

nvmlReturn_t ready(void)
{
	return __atomic_load_n(&refs, __ATOMIC_ACQUIRE) > 0 ?
	       NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

int dev_of(nvmlDevice_t d)
{
	if (!d || d < devs || d >= devs + ndevices())
		return -1;
	return (int)(d - devs);
}

/* ---- init ---------------------------------------------------------------- */

/*
 * SIMNVML_INIT_FAIL=driver|version|permission: nvmlInit fails as a real
 * one does where the kernel module is not loaded, where the driver was
 * upgraded without a reboot (the library newer than the module), and
 * where the device nodes may not be opened.  Any other value but 0:
 * driver.
 */
static nvmlReturn_t init_fail(void)
{
	const char *v = getenv("SIMNVML_INIT_FAIL");

	if (!v || !*v || !strcmp(v, "0"))
		return NVML_SUCCESS;
	if (!strcmp(v, "version"))
		return NVML_ERROR_LIB_RM_VERSION_MISMATCH;
	if (!strcmp(v, "permission"))
		return NVML_ERROR_NO_PERMISSION;
	return NVML_ERROR_DRIVER_NOT_LOADED;
}

static nvmlReturn_t init(unsigned int flags)
{
	const char *v = getenv("SIMGPU_DEVICES");
	unsigned int want = 1, i;
	nvmlReturn_t r = NVML_SUCCESS;

	if (flags & ~(unsigned int)(NVML_INIT_FLAG_NO_GPUS |
				    NVML_INIT_FLAG_NO_ATTACH))
		return NVML_ERROR_INVALID_ARGUMENT;
	r = init_fail();
	if (r)
		return r;
	if (v && atoi(v) > 0)
		want = (unsigned int)atoi(v);
	pthread_mutex_lock(&lock);
	if (!refs) {
		if (!machine)
			machine = simm_open(want);
		if (!machine) {
			r = NVML_ERROR_DRIVER_NOT_LOADED;
			goto out;
		}
		for (i = 0; i < SIMM_MAXDEV; i++)
			devs[i].index = i;
	}
	__atomic_add_fetch(&refs, 1, __ATOMIC_ACQ_REL);
out:
	pthread_mutex_unlock(&lock);
	return r;
}

EXPORT nvmlReturn_t nvmlInit(void)
{
	return init(0);
}

EXPORT nvmlReturn_t nvmlInit_v2(void)
{
	return init(0);
}

EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
	return init(flags);
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
	nvmlReturn_t r = NVML_SUCCESS;

	pthread_mutex_lock(&lock);
	if (refs <= 0)
		r = NVML_ERROR_UNINITIALIZED;
	else
		__atomic_sub_fetch(&refs, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&lock);
	return r;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t r)
{
	static const char *const s[] = {
		[NVML_SUCCESS] = "Success",
		[NVML_ERROR_UNINITIALIZED] = "Uninitialized",
		[NVML_ERROR_INVALID_ARGUMENT] = "Invalid Argument",
		[NVML_ERROR_NOT_SUPPORTED] = "Not Supported",
		[NVML_ERROR_NO_PERMISSION] = "Insufficient Permissions",
		[NVML_ERROR_ALREADY_INITIALIZED] = "Already Initialized",
		[NVML_ERROR_NOT_FOUND] = "Not Found",
		[NVML_ERROR_INSUFFICIENT_SIZE] = "Insufficient Size",
		[NVML_ERROR_DRIVER_NOT_LOADED] = "Driver Not Loaded",
		[NVML_ERROR_FUNCTION_NOT_FOUND] = "Function Not Found",
		[NVML_ERROR_LIB_RM_VERSION_MISMATCH] =
			"RM has detected an NVML/RM version mismatch.",
		[NVML_ERROR_ARGUMENT_VERSION_MISMATCH] =
			"Argument version mismatch",
		[NVML_ERROR_NO_DATA] = "No data",
	};

	if ((unsigned int)r < sizeof(s) / sizeof(s[0]) && s[r])
		return s[r];
	return "Unknown Error";
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version,
					       unsigned int length)
{
	nvmlReturn_t r = ready();

	if (r)
		return r;
	if (!version)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (length < sizeof("580.00"))
		return NVML_ERROR_INSUFFICIENT_SIZE;
	snprintf(version, length, "580.00");
	return NVML_SUCCESS;
}

/* ---- devices ------------------------------------------------------------- */

static nvmlReturn_t count(unsigned int *n)
{
	nvmlReturn_t r = ready();

	if (r)
		return r;
	if (!n)
		return NVML_ERROR_INVALID_ARGUMENT;
	*n = ndevices();
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int *n)
{
	return count(n);
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
	return count(n);
}

static nvmlReturn_t by_index(unsigned int i, nvmlDevice_t *d)
{
	nvmlReturn_t r = ready();

	if (r)
		return r;
	if (!d || i >= ndevices())
		return NVML_ERROR_INVALID_ARGUMENT;
	*d = &devs[i];
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i,
					       nvmlDevice_t *d)
{
	return by_index(i, d);
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i,
						  nvmlDevice_t *d)
{
	return by_index(i, d);
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid,
					      nvmlDevice_t *d)
{
	char u[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	nvmlReturn_t r = ready();
	unsigned int i;

	if (r)
		return r;
	if (!uuid || !d)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (i = 0; i < ndevices(); i++) {
		simm_uuid(i, u, sizeof(u));
		if (!strcmp(u, uuid)) {
			*d = &devs[i];
			return NVML_SUCCESS;
		}
	}
	return NVML_ERROR_NOT_FOUND;
}

static nvmlReturn_t put_str(const char *s, char *buf, unsigned int len)
{
	if (!buf)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (strlen(s) + 1 > len)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(buf, s, strlen(s) + 1);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid,
				      unsigned int length)
{
	char u[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	int i;

	NEED_DEV(d, i);
	simm_uuid((unsigned int)i, u, sizeof(u));
	return put_str(u, uuid, length);
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name,
				      unsigned int length)
{
	int i;

	NEED_DEV(d, i);
	return put_str("idlegap simgpu", name, length);
}

EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *index)
{
	int i;

	NEED_DEV(d, i);
	if (!index)
		return NVML_ERROR_INVALID_ARGUMENT;
	*index = (unsigned int)i;
	return NVML_SUCCESS;
}

/* /dev/nvidia<minor>: the index, as on a machine whose GPUs were probed in
 * PCI order. */
EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d,
					     unsigned int *minor)
{
	int i;

	NEED_DEV(d, i);
	if (!minor)
		return NVML_ERROR_INVALID_ARGUMENT;
	*minor = (unsigned int)i;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(
	nvmlDevice_t d, unsigned int *infoCount, nvmlProcessInfo_t *infos)
{
	int32_t pids[SIMM_MAXPROC];
	unsigned int n, k;
	int i;

	NEED_DEV(d, i);
	if (off("SIMNVML_NO_PROCESSES"))
		return NVML_ERROR_NOT_SUPPORTED;
	if (!infoCount)
		return NVML_ERROR_INVALID_ARGUMENT;
	n = simm_procs(machine, (unsigned int)i, pids, SIMM_MAXPROC);
	if (n > SIMM_MAXPROC)
		n = SIMM_MAXPROC;
	if (*infoCount < n) {
		*infoCount = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	if (n && !infos)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (k = 0; k < n; k++) {
		infos[k].pid = (unsigned int)pids[k];
		infos[k].usedGpuMemory = NVML_VALUE_NOT_AVAILABLE;
		infos[k].gpuInstanceId = 0xFFFFFFFFu;
		infos[k].computeInstanceId = 0xFFFFFFFFu;
	}
	*infoCount = n;
	return NVML_SUCCESS;
}
