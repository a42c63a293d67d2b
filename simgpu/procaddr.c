// SPDX-License-Identifier: GPL-2.0
/*
 * cuGetProcAddress: base name + requested CUDA version + stream mode ->
 * the versioned entry point, as the CUDA runtime resolves the driver.  The
 * versions are those in which each variant appeared (cudaTypedefs.h names
 * them PFN_<name>_v<version>).
 */
#include <string.h>

#include "simgpu.h"

struct proc {
	const char *name;
	int version;
	void *fn;
	void *ptds;	/* per-thread default stream variant, if any */
};

#define P(name, ver, fn) { #name, ver, (void *)fn, NULL }
#define PT(name, ver, fn, pt) { #name, ver, (void *)fn, (void *)pt }

static const struct proc procs[] = {
	P(cuInit, 2000, cuInit),
	P(cuDriverGetVersion, 2020, cuDriverGetVersion),
	P(cuDeviceGet, 2000, cuDeviceGet),
	P(cuDeviceGetCount, 2000, cuDeviceGetCount),
	P(cuDeviceGetName, 2000, cuDeviceGetName),
	P(cuDeviceGetAttribute, 2000, cuDeviceGetAttribute),
	P(cuDeviceGetUuid, 9020, cuDeviceGetUuid),
	P(cuDeviceGetUuid, 11040, cuDeviceGetUuid_v2),
	P(cuCtxCreate, 2000, cuCtxCreate),
	P(cuCtxCreate, 3020, cuCtxCreate_v2),
	P(cuCtxCreate, 11040, cuCtxCreate_v3),
	P(cuCtxCreate, 12050, cuCtxCreate_v4),
	P(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain),
	P(cuDevicePrimaryCtxRelease, 7000, cuDevicePrimaryCtxRelease),
	P(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2),
	P(cuCtxSetCurrent, 4000, cuCtxSetCurrent),
	P(cuCtxGetCurrent, 4000, cuCtxGetCurrent),
	P(cuCtxSynchronize, 2000, cuCtxSynchronize),
	P(cuCtxSynchronize, 13000, cuCtxSynchronize_v2),
	P(cuModuleLoadData, 2000, cuModuleLoadData),
	P(cuModuleLoadDataEx, 2010, cuModuleLoadDataEx),
	P(cuModuleGetFunction, 2000, cuModuleGetFunction),
	P(cuMemAlloc, 2000, cuMemAlloc),
	P(cuMemAlloc, 3020, cuMemAlloc_v2),
	P(cuMemFree, 2000, cuMemFree),
	P(cuMemFree, 3020, cuMemFree_v2),
	P(cuMemAllocHost, 2000, cuMemAllocHost),
	P(cuMemAllocHost, 3020, cuMemAllocHost_v2),
	P(cuMemFreeHost, 2000, cuMemFreeHost),
	P(cuMemHostAlloc, 2020, cuMemHostAlloc),
	P(cuMemcpyHtoD, 2000, cuMemcpyHtoD),
	PT(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds),
	P(cuMemcpyDtoH, 2000, cuMemcpyDtoH),
	PT(cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds),
	P(cuMemcpyDtoD, 2000, cuMemcpyDtoD),
	PT(cuMemcpyDtoD, 3020, cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds),
	P(cuMemcpyHtoDAsync, 2000, cuMemcpyHtoDAsync),
	PT(cuMemcpyHtoDAsync, 3020, cuMemcpyHtoDAsync_v2,
	   cuMemcpyHtoDAsync_v2_ptsz),
	P(cuMemcpyDtoHAsync, 2000, cuMemcpyDtoHAsync),
	PT(cuMemcpyDtoHAsync, 3020, cuMemcpyDtoHAsync_v2,
	   cuMemcpyDtoHAsync_v2_ptsz),
	P(cuMemcpyDtoDAsync, 3000, cuMemcpyDtoDAsync),
	PT(cuMemcpyDtoDAsync, 3020, cuMemcpyDtoDAsync_v2,
	   cuMemcpyDtoDAsync_v2_ptsz),
	PT(cuMemcpy, 4000, cuMemcpy, cuMemcpy_ptds),
	PT(cuMemcpyAsync, 4000, cuMemcpyAsync, cuMemcpyAsync_ptsz),
	P(cuMemsetD8, 2000, cuMemsetD8),
	PT(cuMemsetD8, 3020, cuMemsetD8_v2, cuMemsetD8_v2_ptds),
	PT(cuMemsetD8Async, 3020, cuMemsetD8Async, cuMemsetD8Async_ptsz),
	PT(cuLaunchKernel, 4000, cuLaunchKernel, cuLaunchKernel_ptsz),
	PT(cuLaunchKernelEx, 11060, cuLaunchKernelEx, cuLaunchKernelEx_ptsz),
	P(cuStreamCreate, 2000, cuStreamCreate),
	P(cuStreamCreateWithPriority, 5050, cuStreamCreateWithPriority),
	P(cuStreamDestroy, 2000, cuStreamDestroy),
	P(cuStreamDestroy, 4000, cuStreamDestroy_v2),
	PT(cuStreamSynchronize, 2000, cuStreamSynchronize,
	   cuStreamSynchronize_ptsz),
	PT(cuStreamQuery, 2000, cuStreamQuery, cuStreamQuery_ptsz),
	PT(cuStreamWaitEvent, 3020, cuStreamWaitEvent, cuStreamWaitEvent_ptsz),
	P(cuEventCreate, 2000, cuEventCreate),
	PT(cuEventRecord, 2000, cuEventRecord, cuEventRecord_ptsz),
	PT(cuEventRecordWithFlags, 11010, cuEventRecordWithFlags,
	   cuEventRecordWithFlags_ptsz),
	P(cuEventQuery, 2000, cuEventQuery),
	P(cuEventSynchronize, 2000, cuEventSynchronize),
	P(cuEventElapsedTime, 2000, cuEventElapsedTime),
	P(cuEventElapsedTime, 12080, cuEventElapsedTime_v2),
	P(cuEventDestroy, 2000, cuEventDestroy),
	P(cuEventDestroy, 4000, cuEventDestroy_v2),
	P(cuGetErrorString, 6000, cuGetErrorString),
	P(cuGetErrorName, 6000, cuGetErrorName),
	P(cuGetProcAddress, 11030, cuGetProcAddress),
	P(cuGetProcAddress, 12000, cuGetProcAddress_v2),
};

/* Per-thread variants exist from CUDA 7.0 on. */
#define PTDS_VERSION 7000

static CUdriverProcAddressQueryResult lookup(const char *name, int version,
					     cuuint64_t flags, void **pfn)
{
	const struct proc *best = NULL;
	bool known = false;
	size_t i;

	for (i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		if (strcmp(procs[i].name, name))
			continue;
		known = true;
		if (procs[i].version <= version &&
		    (!best || procs[i].version > best->version))
			best = &procs[i];
	}
	*pfn = NULL;
	if (!best)
		return known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
			     : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	*pfn = best->fn;
	if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) &&
	    best->ptds && version >= PTDS_VERSION)
		*pfn = best->ptds;
	return CU_GET_PROC_ADDRESS_SUCCESS;
}

static CUresult check(const char *symbol, void **pfn, int version,
		      cuuint64_t flags)
{
	const cuuint64_t known = CU_GET_PROC_ADDRESS_LEGACY_STREAM |
				 CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;

	if (!symbol || !pfn || version <= 0 || version > SIM_DRIVER_VERSION ||
	    (flags & ~known))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

/* CUDA 11.3 form: a miss is CUDA_ERROR_NOT_FOUND. */
SIM_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn,
				     int cudaVersion, cuuint64_t flags)
{
	CUresult r = check(symbol, pfn, cudaVersion, flags);

	if (r)
		return r;
	if (lookup(symbol, cudaVersion, flags, pfn) !=
	    CU_GET_PROC_ADDRESS_SUCCESS)
		return CUDA_ERROR_NOT_FOUND;
	return CUDA_SUCCESS;
}

/* CUDA 12 form: a miss is CUDA_SUCCESS with *pfn NULL and the reason in
 * symbolStatus, as cuda.h documents it. */
SIM_EXPORT CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
		    cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
	CUdriverProcAddressQueryResult st;
	CUresult r = check(symbol, pfn, cudaVersion, flags);

	if (r)
		return r;
	st = lookup(symbol, cudaVersion, flags, pfn);
	if (symbolStatus)
		*symbolStatus = st;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr)
{
	return error_string(error, pStr, false);
}

SIM_EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr)
{
	return error_string(error, pStr, true);
}
