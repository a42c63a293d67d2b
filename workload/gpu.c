// SPDX-License-Identifier: GPL-2.0
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu.h"
#include "trainsim.h"

extern const char trainsim_ptx[];

/* The CUDA version whose entry points trainsim is written against. */
#define API_VERSION 12000

void gpu_check(struct gpu *g, CUresult r, const char *what)
{
	const char *name = NULL;

	if (r == CUDA_SUCCESS)
		return;
	if (g->cuGetErrorName)
		g->cuGetErrorName(r, &name);
	fprintf(stderr, "trainsim: %s: %s (%d)\n", what,
		name ? name : "CUDA error", (int)r);
	exit(1);
}

static void *resolve(struct gpu *g, PFN_cuGetProcAddress_v12000 gpa,
		     const char *base, const char *sym, cuuint64_t flags)
{
	CUdriverProcAddressQueryResult st;
	void *fn = NULL;

	if (gpa && gpa(base, &fn, API_VERSION, flags, &st) == CUDA_SUCCESS &&
	    fn)
		return fn;
	return dlsym(g->lib, sym);
}

int gpu_load(struct gpu *g)
{
	char path[4096];

	memset(g, 0, sizeof(*g));
	g->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!g->lib) {
		fprintf(stderr, "trainsim: cannot load libcuda.so.1: %s\n",
			dlerror());
		return -1;
	}
	g->sim = dlsym(g->lib, "simgpu_version") != NULL;
	/* The simulated driver reads SIMGPU_TRACE in cuInit. */
	if (g->sim && !getenv("SIMGPU_TRACE")) {
		const char *tmp = getenv("TMPDIR");

		snprintf(path, sizeof(path), "%s/trainsim-trace.%%p",
			 tmp && *tmp ? tmp : "/tmp");
		setenv("SIMGPU_TRACE", path, 1);
		g->set_trace = true;
	}
	return 0;
}

static int bind_funcs(struct gpu *g, enum stream_mode mode)
{
	PFN_cuGetProcAddress_v12000 gpa = (PFN_cuGetProcAddress_v12000)
		dlsym(g->lib, "cuGetProcAddress_v2");
	cuuint64_t flags = mode == STREAM_PTDS
		? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
		: CU_GET_PROC_ADDRESS_LEGACY_STREAM;

#define X(name, type, sym)                                                \
	g->name = (type)resolve(g, gpa, #name, sym, flags);               \
	if (!g->name) {                                                   \
		fprintf(stderr, "trainsim: libcuda.so.1 lacks %s\n", sym); \
		return -1;                                                \
	}
	GPU_FUNCS(X)
#undef X
	return 0;
}

static void open_stream(struct gpu *g, enum stream_mode mode)
{
	switch (mode) {
	case STREAM_LEGACY:
		g->stream = NULL;
		break;
	case STREAM_PTDS:
		/* NULL on the _ptsz entry points: this thread's stream */
		g->stream = NULL;
		break;
	case STREAM_BLOCKING:
	case STREAM_NONBLOCKING:
		gpu_check(g, g->cuStreamCreate(&g->stream,
					       mode == STREAM_NONBLOCKING
					       ? CU_STREAM_NON_BLOCKING : 0),
			  "cuStreamCreate");
		g->own_stream = true;
		break;
	}
}

int gpu_open(struct gpu *g, enum stream_mode mode)
{
	int ndev = 0;

	if (bind_funcs(g, mode))
		return -1;
	gpu_check(g, g->cuInit(0), "cuInit");
	gpu_check(g, g->cuDriverGetVersion(&g->driver_version),
		  "cuDriverGetVersion");
	gpu_check(g, g->cuDeviceGetCount(&ndev), "cuDeviceGetCount");
	gpu_check(g, g->cuDeviceGet(&g->dev, ndev > 0 ? g->ordinal % ndev : 0),
		  "cuDeviceGet");
	gpu_check(g, g->cuDeviceGetName(g->name, sizeof(g->name), g->dev),
		  "cuDeviceGetName");
	gpu_check(g, g->cuDevicePrimaryCtxRetain(&g->ctx, g->dev),
		  "cuDevicePrimaryCtxRetain");
	gpu_check(g, g->cuCtxSetCurrent(g->ctx), "cuCtxSetCurrent");
	gpu_check(g, g->cuModuleLoadData(&g->mod, trainsim_ptx),
		  "cuModuleLoadData");
	gpu_check(g, g->cuModuleGetFunction(&g->spin, g->mod, "idlegap_spin"),
		  "cuModuleGetFunction(idlegap_spin)");
	gpu_check(g, g->cuModuleGetFunction(&g->stamp, g->mod,
					    "idlegap_stamp"),
		  "cuModuleGetFunction(idlegap_stamp)");
	open_stream(g, mode);
	if (!g->sim) {
		/* 16 bytes per kernel; the last rec_cap kernels are kept. */
		g->rec_cap = 1 << 20;
		/* and room after them for gpu_calibrate()'s stamps */
		gpu_check(g, g->cuMemAlloc(&g->rec, g->rec_cap * 16 + 256),
			  "cuMemAlloc(records)");
	}
	return 0;
}

void gpu_close(struct gpu *g)
{
	if (!g->lib || !g->ctx)
		return;
	g->cuCtxSynchronize();
	if (g->own_stream)
		g->cuStreamDestroy(g->stream);
	if (g->rec)
		g->cuMemFree(g->rec);
	g->cuDevicePrimaryCtxRelease(g->dev);
	g->ctx = NULL;
}

void gpu_spin(struct gpu *g, uint64_t ns)
{
	unsigned long long dur = ns;
	CUdeviceptr rec = 0;
	void *args[] = { &dur, &rec };

	if (g->rec)
		rec = g->rec + (g->nrec++ % g->rec_cap) * 16;
	gpu_check(g, g->cuLaunchKernel(g->spin, 1, 1, 1, 1, 1, 1, 0,
				       g->stream, args, NULL),
		  "cuLaunchKernel");
}

/*
 * The kernel's %globaltimer read happens between the host's clock reads
 * around launch+sync; the round with the tightest bracket gives the offset
 * to within half its width (a few microseconds).
 */
void gpu_calibrate(struct gpu *g)
{
	enum { ROUNDS = 16 };
	uint64_t lo[ROUNDS], hi[ROUNDS], gt[ROUNDS];
	CUdeviceptr at = g->rec + g->rec_cap * 16;
	uint64_t best = UINT64_MAX;
	int i, c = g->ncal < 2 ? g->ncal++ : 1;

	for (i = 0; i < ROUNDS; i++) {
		CUdeviceptr out = at + (uint64_t)i * 8;
		void *args[] = { &out };

		lo[i] = mono_ns();
		gpu_check(g, g->cuLaunchKernel(g->stamp, 1, 1, 1, 1, 1, 1, 0,
					       g->stream, args, NULL),
			  "cuLaunchKernel(stamp)");
		gpu_check(g, g->cuStreamSynchronize(g->stream),
			  "cuStreamSynchronize");
		hi[i] = mono_ns();
	}
	gpu_check(g, g->cuMemcpyDtoH(gt, at, sizeof(gt)), "cuMemcpyDtoH");
	for (i = 0; i < ROUNDS; i++)
		if (hi[i] - lo[i] < best) {
			best = hi[i] - lo[i];
			g->gt_at[c] = gt[i];
			g->gt_offset[c] = (int64_t)gt[i] -
					  (int64_t)((lo[i] + hi[i]) / 2);
		}
}

/* CLOCK_MONOTONIC of a %globaltimer stamp: the offset drifts linearly
 * between the two calibrations. */
static uint64_t gt_to_mono(const struct gpu *g, uint64_t gt)
{
	double f;

	if (g->ncal < 2 || g->gt_at[1] <= g->gt_at[0])
		return (uint64_t)((int64_t)gt - g->gt_offset[0]);
	f = ((double)(int64_t)(gt - g->gt_at[0])) /
	    (double)(g->gt_at[1] - g->gt_at[0]);
	return (uint64_t)((int64_t)gt - g->gt_offset[0] -
			  (int64_t)(f * (double)(g->gt_offset[1] - g->gt_offset[0])));
}

uint64_t *gpu_kernel_intervals(struct gpu *g, size_t *n)
{
	uint64_t count = g->nrec < g->rec_cap ? g->nrec : g->rec_cap;
	uint64_t *v = malloc(count * 16 + 16);
	uint64_t i;

	*n = 0;
	if (!v || !count)
		return v;
	gpu_check(g, g->cuCtxSynchronize(), "cuCtxSynchronize");
	gpu_calibrate(g);	/* the end point of the drift */
	gpu_check(g, g->cuMemcpyDtoH(v, g->rec, count * 16), "cuMemcpyDtoH");
	for (i = 0; i < count * 2; i++)
		v[i] = gt_to_mono(g, v[i]);
	*n = count;
	return v;
}
