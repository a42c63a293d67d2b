// SPDX-License-Identifier: GPL-2.0
/*
 * Name tables.  Designated initialisers keep each name next to its enum
 * value, so appending to enum ig_api cannot shift the table.
 */
#include <string.h>
#include "engine/names.h"

struct api_info {
	const char *name;
	unsigned char cls;	/* enum ig_api_class */
};

#define API(n, c) [IG_API_##n] = { #n, IG_AC_##c }

static const struct api_info apis[IG_API__MAX] = {
	API(cuLaunchKernel, LAUNCH_STACK9),
	API(cuLaunchKernel_ptsz, LAUNCH_STACK9),
	API(cuLaunchKernelEx, LAUNCH_EX),
	API(cuLaunchKernelEx_ptsz, LAUNCH_EX),
	API(cuLaunchCooperativeKernel, LAUNCH_STACK9),
	API(cuLaunchCooperativeKernel_ptsz, LAUNCH_STACK9),
	API(cuGraphLaunch, STREAM_ARG2),
	API(cuGraphLaunch_ptsz, STREAM_ARG2),
	API(cuMemcpyAsync, STREAM_ARG4),
	API(cuMemcpyAsync_ptsz, STREAM_ARG4),
	API(cuMemcpyHtoDAsync, STREAM_ARG4),
	API(cuMemcpyHtoDAsync_v2, STREAM_ARG4),
	API(cuMemcpyHtoDAsync_v2_ptsz, STREAM_ARG4),
	API(cuMemcpyDtoHAsync, STREAM_ARG4),
	API(cuMemcpyDtoHAsync_v2, STREAM_ARG4),
	API(cuMemcpyDtoHAsync_v2_ptsz, STREAM_ARG4),
	API(cuMemcpyDtoDAsync, STREAM_ARG4),
	API(cuMemcpyDtoDAsync_v2, STREAM_ARG4),
	API(cuMemcpyDtoDAsync_v2_ptsz, STREAM_ARG4),
	API(cuMemcpy2DAsync, STREAM_ARG2),
	API(cuMemcpy2DAsync_v2, STREAM_ARG2),
	API(cuMemcpy2DAsync_v2_ptsz, STREAM_ARG2),
	API(cuMemcpy3DAsync, STREAM_ARG2),
	API(cuMemcpy3DAsync_v2, STREAM_ARG2),
	API(cuMemcpy3DAsync_v2_ptsz, STREAM_ARG2),
	API(cuMemcpyPeerAsync, STREAM_ARG6),
	API(cuMemcpyPeerAsync_ptsz, STREAM_ARG6),
	API(cuMemsetD8Async, STREAM_ARG4),
	API(cuMemsetD8Async_ptsz, STREAM_ARG4),
	API(cuMemsetD16Async, STREAM_ARG4),
	API(cuMemsetD16Async_ptsz, STREAM_ARG4),
	API(cuMemsetD32Async, STREAM_ARG4),
	API(cuMemsetD32Async_ptsz, STREAM_ARG4),
	API(cuMemcpyHtoD, SYNC_COPY),
	API(cuMemcpyHtoD_v2, SYNC_COPY),
	API(cuMemcpyHtoD_v2_ptds, SYNC_COPY),
	API(cuMemcpyDtoH, SYNC_COPY),
	API(cuMemcpyDtoH_v2, SYNC_COPY),
	API(cuMemcpyDtoH_v2_ptds, SYNC_COPY),
	API(cuMemcpy, SYNC_COPY),
	API(cuMemcpy_ptds, SYNC_COPY),
	API(cuMemcpyDtoD, SUBMIT_NOSTREAM),
	API(cuMemcpyDtoD_v2, SUBMIT_NOSTREAM),
	API(cuMemcpyDtoD_v2_ptds, SUBMIT_NOSTREAM),
	API(cuMemsetD8, SUBMIT_NOSTREAM),
	API(cuMemsetD8_v2, SUBMIT_NOSTREAM),
	API(cuMemsetD8_v2_ptds, SUBMIT_NOSTREAM),
	API(cuMemsetD16, SUBMIT_NOSTREAM),
	API(cuMemsetD16_v2, SUBMIT_NOSTREAM),
	API(cuMemsetD16_v2_ptds, SUBMIT_NOSTREAM),
	API(cuMemsetD32, SUBMIT_NOSTREAM),
	API(cuMemsetD32_v2, SUBMIT_NOSTREAM),
	API(cuMemsetD32_v2_ptds, SUBMIT_NOSTREAM),
	API(cuStreamSynchronize, STREAM_SYNC),
	API(cuStreamSynchronize_ptsz, STREAM_SYNC),
	API(cuCtxSynchronize, CTX_SYNC),
	API(cuCtxSynchronize_v2, CTX_SYNC),
	API(cuEventSynchronize, EVENT_SYNC),
	API(cuStreamQuery, STREAM_QUERY),
	API(cuStreamQuery_ptsz, STREAM_QUERY),
	API(cuEventQuery, EVENT_QUERY),
	API(cuEventRecord, EVENT_RECORD),
	API(cuEventRecord_ptsz, EVENT_RECORD),
	API(cuEventRecordWithFlags, EVENT_RECORD),
	API(cuEventRecordWithFlags_ptsz, EVENT_RECORD),
	API(cuMemAlloc, API),
	API(cuMemAlloc_v2, API),
	API(cuMemFree, API),
	API(cuMemFree_v2, API),
	API(cuMemAllocHost, API),
	API(cuMemAllocHost_v2, API),
	API(cuMemHostAlloc, API),
	API(cuMemFreeHost, API),
	API(cuMemHostRegister, API),
	API(cuMemHostRegister_v2, API),
	API(cuMemHostUnregister, API),
	API(cuModuleLoadData, API),
	API(cuModuleLoadDataEx, API),
	API(cuModuleGetFunction, API),
	API(cuStreamCreate, STREAM_CREATE),
	API(cuStreamCreateWithPriority, STREAM_CREATE),
	API(cuStreamDestroy, API),
	API(cuStreamDestroy_v2, API),
	API(cuCtxCreate, CTX_DEVICE),
	API(cuCtxCreate_v2, CTX_DEVICE),
	API(cuCtxCreate_v4, CTX_DEVICE),
	API(cuDevicePrimaryCtxRetain, CTX_DEVICE),
	API(cuCtxSetCurrent, API),
	API(cuInit, API),
};

const char *ig_api_name(unsigned int api)
{
	return api < IG_API__MAX ? apis[api].name : NULL;
}

int ig_api_by_name(const char *name)
{
	unsigned int i;

	if (!name)
		return -1;
	for (i = 1; i < IG_API__MAX; i++)
		if (apis[i].name && !strcmp(apis[i].name, name))
			return (int)i;
	return -1;
}

enum ig_api_class ig_api_class_of(unsigned int api)
{
	return api < IG_API__MAX ? (enum ig_api_class)apis[api].cls : 0;
}

int ig_api_is_sync_copy(unsigned int api)
{
	return ig_api_class_of(api) == IG_AC_SYNC_COPY;
}

static const char *const reasons[IG_R__MAX] = {
	[IG_R_PREEMPT] = "preempt",
	[IG_R_STORAGE] = "storage",
	[IG_R_PAGEFAULT] = "page_fault",
	[IG_R_FUTEX] = "futex",
	[IG_R_PIPE] = "pipe",
	[IG_R_UNIX] = "unix",
	[IG_R_EVENTFD] = "eventfd",
	[IG_R_SOCKET] = "socket",
	[IG_R_POLL] = "poll",
	[IG_R_SLEEP] = "sleep",
	[IG_R_WAITCHILD] = "waitchild",
	[IG_R_IOURING] = "io_uring",
	[IG_R_OTHER] = "other",
};

const char *ig_reason_name(unsigned int reason)
{
	return reason < IG_R__MAX && reasons[reason] ? reasons[reason]
						     : "unknown";
}

static const char *const causes[IG_C__MAX] = {
	[IG_C_STORAGE] = "storage",
	[IG_C_PAGE_FAULT] = "page_fault",
	[IG_C_CPU_STARVATION] = "cpu_starvation",
	[IG_C_GIL] = "gil",
	[IG_C_LOCK] = "lock",
	[IG_C_NETWORK] = "network",
	[IG_C_HOST_COMPUTE] = "host_compute",
	[IG_C_CUDA_API] = "cuda_api",
	[IG_C_SLEEP] = "sleep",
	[IG_C_WAIT_UNTRACKED] = "wait_untracked",
	[IG_C_UNKNOWN] = "unknown",
};

const char *ig_cause_name(unsigned int cause)
{
	return cause < IG_C__MAX ? causes[cause] : NULL;
}

static const char *const cuda_kinds[IG_CU__MAX] = {
	[IG_CU_SUBMIT] = "submit",
	[IG_CU_SYNC_BEGIN] = "sync_begin",
	[IG_CU_SYNC_END] = "sync_end",
	[IG_CU_QUERY_BUSY] = "query_busy",
	[IG_CU_QUERY_DONE] = "query_done",
	[IG_CU_API] = "api",
	[IG_CU_STREAM_NEW] = "stream_new",
	[IG_CU_CTX] = "ctx",
};

const char *ig_cuda_kind_name(unsigned int kind)
{
	return kind < IG_CU__MAX ? cuda_kinds[kind] : NULL;
}

const char *ig_stop_reason_name(unsigned int reason)
{
	switch (reason) {
	case IG_STOP_DURATION: return "duration";
	case IG_STOP_SIGNAL: return "signal";
	case IG_STOP_TARGET_EXIT: return "target_exit";
	case IG_STOP_ERROR: return "error";
	}
	return NULL;
}
