/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trainsim's view of the GPU: the driver API loaded at run time with
 * dlopen("libcuda.so.1"), so the same binary runs on the simulated driver
 * (LD_LIBRARY_PATH=build/simgpu) and on a real NVIDIA GPU.
 */
#ifndef TRAINSIM_GPU_H
#define TRAINSIM_GPU_H

#include <cudaTypedefs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum stream_mode { STREAM_LEGACY, STREAM_PTDS, STREAM_BLOCKING,
		   STREAM_NONBLOCKING };

/* Entry points, resolved like the CUDA runtime does: cuGetProcAddress for
 * the base name at CUDA 12.0, falling back to the versioned symbol. */
#define GPU_FUNCS(X)                                                      \
	X(cuInit, PFN_cuInit_v2000, "cuInit")                             \
	X(cuDriverGetVersion, PFN_cuDriverGetVersion_v2020,               \
	  "cuDriverGetVersion")                                           \
	X(cuDeviceGet, PFN_cuDeviceGet_v2000, "cuDeviceGet")              \
	X(cuDeviceGetCount, PFN_cuDeviceGetCount_v2000, "cuDeviceGetCount") \
	X(cuDeviceGetName, PFN_cuDeviceGetName_v2000, "cuDeviceGetName")  \
	X(cuDevicePrimaryCtxRetain, PFN_cuDevicePrimaryCtxRetain_v7000,   \
	  "cuDevicePrimaryCtxRetain")                                     \
	X(cuDevicePrimaryCtxRelease, PFN_cuDevicePrimaryCtxRelease_v11000, \
	  "cuDevicePrimaryCtxRelease_v2")                                 \
	X(cuCtxSetCurrent, PFN_cuCtxSetCurrent_v4000, "cuCtxSetCurrent")  \
	X(cuCtxSynchronize, PFN_cuCtxSynchronize_v2000, "cuCtxSynchronize") \
	X(cuModuleLoadData, PFN_cuModuleLoadData_v2000, "cuModuleLoadData") \
	X(cuModuleGetFunction, PFN_cuModuleGetFunction_v2000,             \
	  "cuModuleGetFunction")                                          \
	X(cuMemAlloc, PFN_cuMemAlloc_v3020, "cuMemAlloc_v2")              \
	X(cuMemFree, PFN_cuMemFree_v3020, "cuMemFree_v2")                 \
	X(cuMemAllocHost, PFN_cuMemAllocHost_v3020, "cuMemAllocHost_v2")  \
	X(cuMemFreeHost, PFN_cuMemFreeHost_v2000, "cuMemFreeHost")        \
	X(cuMemcpyHtoD, PFN_cuMemcpyHtoD_v3020, "cuMemcpyHtoD_v2")        \
	X(cuMemcpyDtoH, PFN_cuMemcpyDtoH_v3020, "cuMemcpyDtoH_v2")        \
	X(cuMemcpyHtoDAsync, PFN_cuMemcpyHtoDAsync_v3020,                 \
	  "cuMemcpyHtoDAsync_v2")                                         \
	X(cuLaunchKernel, PFN_cuLaunchKernel_v4000, "cuLaunchKernel")     \
	X(cuStreamCreate, PFN_cuStreamCreate_v2000, "cuStreamCreate")     \
	X(cuStreamDestroy, PFN_cuStreamDestroy_v4000, "cuStreamDestroy_v2") \
	X(cuStreamSynchronize, PFN_cuStreamSynchronize_v2000,             \
	  "cuStreamSynchronize")                                          \
	X(cuGetErrorName, PFN_cuGetErrorName_v6000, "cuGetErrorName")

struct gpu {
	void *lib;
	bool sim;		/* simulated driver: exports simgpu_version */
	bool set_trace;		/* trainsim chose SIMGPU_TRACE */
	int driver_version;
	char name[64];
	int ordinal;		/* device wanted (modulo the count); 0 */
	CUdevice dev;
	CUcontext ctx;
	CUstream stream;	/* what the feeder passes as hStream */
	bool own_stream;
	CUmodule mod;
	CUfunction spin, stamp;
	/* Real GPUs only: per-kernel %globaltimer start/end pairs. */
	CUdeviceptr rec;
	uint64_t rec_cap, nrec;
	/* %globaltimer - CLOCK_MONOTONIC (ns) at two %globaltimer times, at
	 * the start and at the end: the two clocks drift apart by tens of
	 * ppm (about 23 us a second on an H100), which one offset misses. */
	int64_t gt_offset[2];
	uint64_t gt_at[2];
	int ncal;
#define X(name, type, sym) type name;
	GPU_FUNCS(X)
#undef X
};

/* Loads the driver, makes the primary context current on device ordinal and
 * loads the kernels.  Prints one line on stderr and returns -1 on failure. */
int gpu_open(struct gpu *g, enum stream_mode mode);
/* When the simulated driver has no SIMGPU_TRACE yet, sets one (per-process
 * file under $TMPDIR) so that ground truth is always recorded; call after
 * gpu_load() and before gpu_open() initializes the driver. */
int gpu_load(struct gpu *g);
void gpu_close(struct gpu *g);

/* Fails the run on any driver error: trainsim cannot go on without one. */
void gpu_check(struct gpu *g, CUresult r, const char *what);

void gpu_spin(struct gpu *g, uint64_t ns);
/* Real GPUs: maps %globaltimer onto CLOCK_MONOTONIC with tiny kernels;
 * called at the start, and again by gpu_kernel_intervals() at the end. */
void gpu_calibrate(struct gpu *g);
/* Real GPUs: returns the recorded kernel intervals (CLOCK_MONOTONIC ns,
 * start/end pairs), *n of them; malloc'd. */
uint64_t *gpu_kernel_intervals(struct gpu *g, size_t *n);

#endif /* TRAINSIM_GPU_H */
