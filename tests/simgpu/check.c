// SPDX-License-Identifier: GPL-2.0
/*
 * Checks of the simulated driver's semantics, one case per invocation:
 *
 *   simgpu_check CASE TRACE_FILE
 *
 * The case sets SIMGPU_TRACE=TRACE_FILE before cuInit and reads the trace
 * back.  Exit 0 when every check passed; failures are printed as "# ..."
 * lines (TAP diagnostics) by tests/simgpu.t.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define MS 1000000ull

static const char *trace_path;
static CUfunction spin, other;
static CUcontext ctx;

static void setup(void)
{
	CUdevice dev;
	CUmodule mod;

	setenv("SIMGPU_TRACE", trace_path, 1);
	CU_OK(cuInit(0));
	CU_OK(cuDeviceGet(&dev, 0));
	CU_OK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CU_OK(cuCtxSetCurrent(ctx));
	CU_OK(cuModuleLoadData(&mod, test_ptx));
	CU_OK(cuModuleGetFunction(&spin, mod, "idlegap_spin"));
	CU_OK(cuModuleGetFunction(&other, mod, "other_kernel"));
}

/* Times this thread slept (blocked), not counting preemption.  A call that
 * does not wait for the GPU may still sleep once on the library's lock, if
 * the device thread holds it just then (right after a completion it
 * signalled), so a check built on this tries more than once. */
static long voluntary_switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw;
}

static CUresult spin_on(CUstream s, uint64_t ns, bool ptsz)
{
	unsigned long long v = ns;
	void *args[] = { &v };

	if (ptsz)
		return cuLaunchKernel_ptsz(spin, 1, 1, 1, 1, 1, 1, 0, s, args,
					   NULL);
	return cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, s, args, NULL);
}

static const struct top no_op;

static const struct top *find_op(const struct trace *t, int i)
{
	CHECK(i < t->n, "trace has %d ops, want more than %d", t->n, i);
	return i < t->n ? &t->v[i] : &no_op;
}

/* Ops of one stream run in order, back to back, each as long as asked. */
static void case_order(void)
{
	static const uint64_t want[] = { 2 * MS, 1 * MS, 3 * MS, 200000 };
	struct trace t;
	unsigned int i;

	setup();
	for (i = 0; i < 4; i++)
		CU_OK(spin_on(NULL, want[i], false));
	CU_OK(cuStreamSynchronize(NULL));
	t = trace_read(trace_path);
	CHECK(t.n == 4, "%d ops traced", t.n);
	for (i = 0; i < 4 && i < (unsigned int)t.n; i++) {
		double r = dur_ratio(&t.v[i], want[i]);

		CHECK(!strcmp(t.v[i].kind, "kernel"), "kind %s", t.v[i].kind);
		CHECK(!strcmp(t.v[i].stream, "legacy"), "stream %s",
		      t.v[i].stream);
		CHECK(r > 0.95 && r < 1.05, "op %u lasted %.3f of asked", i, r);
		if (i)
			CHECK(t.v[i].start >= t.v[i - 1].end,
			      "op %u starts before op %u ends", i, i - 1);
	}
}

/* Work on two non-blocking streams runs at the same time. */
static void case_overlap(void)
{
	CUstream a, b;
	struct trace t;
	uint64_t launched[2];

	setup();
	CU_OK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
	CU_OK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
	CU_OK(spin_on(a, 30 * MS, false));
	launched[0] = now_ns();
	CU_OK(spin_on(b, 30 * MS, false));
	launched[1] = now_ns();
	CU_OK(cuCtxSynchronize());
	t = trace_read(trace_path);
	CHECK(t.n == 2, "%d ops traced", t.n);
	if (t.n == 2) {
		/* the lines in the order the ops started: two device threads
		 * write them, and under load the first may be woken late */
		if (t.v[1].start < t.v[0].start) {
			struct top x = t.v[0];

			t.v[0] = t.v[1];
			t.v[1] = x;
		}
		/* each starts when launched, the second not after the first:
		 * they overlap whenever the second came before the first's end */
		CHECK(t.v[0].start <= launched[0] && t.v[1].start <= launched[1],
		      "a kernel waited for the other stream's");
		CHECK(strcmp(t.v[0].stream, t.v[1].stream),
		      "same stream name %s", t.v[0].stream);
	}
	CU_OK(cuStreamDestroy_v2(a));
	CU_OK(cuStreamDestroy_v2(b));
}

/* Queries report NOT_READY while work is pending; a sync sleeps in the
 * kernel and returns only after the op's traced end; an idle sync returns
 * at once. */
static void case_sync(void)
{
	CUstream s;
	struct trace t;
	uint64_t cpu, t1;
	long sw;
	int i, slept;

	setup();
	CU_OK(cuStreamCreate(&s, 0));
	CU_OK(cuStreamQuery(s));
	CU_OK(spin_on(s, 40 * MS, false));
	CU_IS(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
	cpu = thread_cpu_ns();
	CU_OK(cuStreamSynchronize(s));
	t1 = now_ns();
	cpu = thread_cpu_ns() - cpu;
	CHECK(cpu < 5 * MS, "sync used %.2f ms of CPU", (double)cpu / 1e6);
	CU_OK(cuStreamQuery(s));
	t = trace_read(trace_path);
	CHECK(t.n == 1, "%d ops traced", t.n);
	if (t.n == 1)
		CHECK(t1 >= t.v[0].end, "sync returned %.3f ms before the end",
		      (double)(t.v[0].end - t1) / 1e6);
	/* A sync of an idle stream never waits: of 5 tries, at least one
	 * does not sleep at all (a sync that waits sleeps in every one). */
	for (i = 0, slept = 0; i < 5; i++) {
		sw = voluntary_switches();
		CU_OK(cuStreamSynchronize(s));
		CU_OK(cuCtxSynchronize_v2(ctx));
		CU_OK(cuCtxSynchronize());
		slept += voluntary_switches() != sw;
	}
	CHECK(slept < 5, "idle syncs slept in %d tries of 5", slept);
}

/* One sync that waits for a kernel: the futex wait it sleeps in is the
 * wait for GPU work (tests/simgpu.t reads its kind from strace). */
static void case_syncwait(void)
{
	CUstream s;

	setup();
	CU_OK(cuStreamCreate(&s, 0));
	CU_OK(spin_on(s, 40 * MS, false));
	CU_OK(cuStreamSynchronize(s));
	CU_OK(cuStreamQuery(s));
	CU_OK(cuStreamDestroy_v2(s));
}

/* Events: record/query/sync/elapsed, and cross-stream waits. */
static void case_events(void)
{
	CUevent e0, e1, never, nt;
	CUstream a, b;
	struct trace t;
	uint64_t t1;
	float ms = 0;

	setup();
	CU_OK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
	CU_OK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
	CU_OK(cuEventCreate(&e0, 0));
	CU_OK(cuEventCreate(&e1, CU_EVENT_BLOCKING_SYNC));
	CU_OK(cuEventCreate(&never, 0));
	CU_OK(cuEventCreate(&nt, CU_EVENT_DISABLE_TIMING));
	CU_OK(cuEventQuery(never));
	CU_OK(cuEventSynchronize(never));
	CU_OK(cuEventRecord(e0, a));
	CU_OK(spin_on(a, 20 * MS, false));
	CU_OK(cuEventRecord(e1, a));
	CU_OK(cuEventRecordWithFlags(nt, a, 0));
	CU_OK(cuStreamWaitEvent(b, e1, 0));
	CU_OK(spin_on(b, 5 * MS, false));
	CU_IS(cuEventQuery(e1), CUDA_ERROR_NOT_READY);
	CU_IS(cuEventElapsedTime_v2(&ms, e0, e1), CUDA_ERROR_NOT_READY);
	CU_OK(cuEventSynchronize(e1));
	t1 = now_ns();
	CU_OK(cuEventQuery(e1));
	CU_OK(cuEventElapsedTime_v2(&ms, e0, e1));
	CHECK(ms > 19.0f && ms < 21.0f, "elapsed %.3f ms", (double)ms);
	CU_OK(cuEventElapsedTime(&ms, e0, e1));
	CU_IS(cuEventElapsedTime_v2(&ms, e0, never), CUDA_ERROR_INVALID_HANDLE);
	CU_IS(cuEventElapsedTime_v2(&ms, e0, nt), CUDA_ERROR_INVALID_HANDLE);
	CU_OK(cuStreamSynchronize(b));
	t = trace_read(trace_path);
	CHECK(t.n == 2, "%d ops traced", t.n);
	if (t.n == 2) {
		CHECK(t1 >= t.v[0].end, "event sync returned early");
		CHECK(t.v[1].start >= t.v[0].end,
		      "waiting stream started %.3f ms before the event",
		      (double)(t.v[0].end - t.v[1].start) / 1e6);
	}
	CU_OK(cuEventDestroy_v2(e0));
	CU_IS(cuEventQuery(e0), CUDA_ERROR_INVALID_HANDLE);
	CU_OK(cuEventDestroy(e1));
}

static const struct top *op_of(const struct trace *t, const char *stream,
			       int nth)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].stream, stream) && !nth--)
			return &t->v[i];
	CHECK(0, "no op %d on %s", nth, stream);
	return &no_op;
}

struct ptds_arg {
	char name[48];
	uint64_t launched;	/* when its launch returned */
};

/* Legacy stream: waits for blocking streams and per-thread default
 * streams, not for non-blocking ones; blocking streams wait for it. */
static void case_legacy(void)
{
	CUstream blk, nb;
	struct trace t;
	char bname[48], nbname[48], pname[48];
	const struct top *b0, *n0, *l0, *l1, *b1, *p0;

	setup();
	CU_OK(cuStreamCreate(&blk, CU_STREAM_DEFAULT));
	CU_OK(cuStreamCreateWithPriority(&nb, CU_STREAM_NON_BLOCKING, -1));
	snprintf(bname, sizeof(bname), "%p", (void *)blk);
	snprintf(nbname, sizeof(nbname), "%p", (void *)nb);
	snprintf(pname, sizeof(pname), "ptds.%d", (int)gettid());
	CU_OK(spin_on(blk, 10 * MS, false));
	CU_OK(spin_on(nb, 30 * MS, false));
	CU_OK(spin_on(NULL, 2 * MS, false));		/* legacy */
	CU_OK(spin_on(blk, 2 * MS, false));
	CU_OK(spin_on(NULL, 5 * MS, true));		/* per-thread */
	CU_OK(spin_on(CU_STREAM_LEGACY, 1 * MS, true));	/* legacy */
	CU_OK(cuCtxSynchronize());
	t = trace_read(trace_path);
	CHECK(t.n == 6, "%d ops traced", t.n);
	b0 = op_of(&t, bname, 0);
	b1 = op_of(&t, bname, 1);
	n0 = op_of(&t, nbname, 0);
	l0 = op_of(&t, "legacy", 0);
	l1 = op_of(&t, "legacy", 1);
	p0 = op_of(&t, pname, 0);
	CHECK(l0->start >= b0->end, "legacy did not wait for blocking stream");
	CHECK(l0->start < n0->end, "legacy waited for non-blocking stream");
	CHECK(b1->start >= l0->end, "blocking stream did not wait for legacy");
	CHECK(p0->start >= l0->end, "per-thread stream did not wait for legacy");
	CHECK(p0->start < b1->end, "per-thread stream waited for a stream");
	CHECK(l1->start >= p0->end && l1->start >= b1->end,
	      "legacy did not wait for per-thread and blocking streams");
}

/* Requested durations come out within 5%, for kernels, copies, memsets. */
static void case_durations(void)
{
	static const uint64_t kern[] = { 100000, 1 * MS, 5 * MS };
	CUdeviceptr d;
	CUstream s;
	struct trace t;
	void *h;
	unsigned int i;

	setenv("SIMGPU_BW", "12e9", 1);
	setenv("SIMGPU_KERNEL_NS", "300000", 1);
	setup();
	CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CU_OK(cuMemAlloc_v2(&d, 24 << 20));
	CU_OK(cuMemAllocHost_v2(&h, 24 << 20));
	for (i = 0; i < 3; i++)
		CU_OK(spin_on(s, kern[i], false));
	CU_OK(cuMemcpyHtoDAsync_v2(d, h, 12000000, s));	/* 1 ms */
	CU_OK(cuMemsetD8Async(d, 0, 6000000, s));		/* 0.5 ms */
	CU_OK(cuLaunchKernel(other, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
	CU_OK(cuMemcpyDtoHAsync_v2(h, d, 24000000, s));	/* 2 ms */
	CU_OK(cuStreamSynchronize(s));
	t = trace_read(trace_path);
	CHECK(t.n == 7, "%d ops traced", t.n);
	for (i = 0; i < 3; i++)
		CHECK(fabs(dur_ratio(find_op(&t, (int)i), kern[i]) - 1) < 0.05,
		      "kernel %u", i);
	CHECK(!strcmp(find_op(&t, 3)->kind, "copy"), "kind");
	CHECK(fabs(dur_ratio(find_op(&t, 3), 1 * MS) - 1) < 0.05, "copy");
	CHECK(!strcmp(find_op(&t, 4)->kind, "memset"), "kind");
	CHECK(fabs(dur_ratio(find_op(&t, 4), MS / 2) - 1) < 0.05, "memset");
	CHECK(fabs(dur_ratio(find_op(&t, 5), 300000) - 1) < 0.05, "default");
	CHECK(fabs(dur_ratio(find_op(&t, 6), 2 * MS) - 1) < 0.05, "dtoh");
	CU_OK(cuMemFreeHost(h));
	CU_OK(cuMemFree_v2(d));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Synchronous copies from/to pageable memory are staged in chunk ops with
 * small holes between them and return once the last chunk has landed;
 * pinned ones are one op; device-to-device and memset only enqueue. */
static void case_pageable(void)
{
	size_t n = 48 << 20;
	char *buf = malloc(n);
	CUdeviceptr d;
	struct trace t;
	uint64_t t0, t1, holes[48];
	void *pin;
	int i, nh = 0;

	setenv("SIMGPU_STAGE_BYTES", "1048576", 1);
	setup();
	memset(buf, 1, n);
	CU_OK(cuMemAlloc_v2(&d, n));
	CU_OK(spin_on(NULL, 5 * MS, false));
	t0 = now_ns();
	CU_OK(cuMemcpyHtoD_v2(d, buf, n));
	t1 = now_ns();
	t = trace_read(trace_path);
	CHECK(t.n == 49, "%d ops traced, want kernel + 48 chunks", t.n);
	for (i = 2; i < t.n && nh < 48; i++) {
		holes[nh++] = t.v[i].start - t.v[i - 1].end;
		CHECK(!strcmp(t.v[i].kind, "copy"), "kind %s", t.v[i].kind);
	}
	/* Holes between chunks are the host copy outrunning the DMA: tens of
	 * microseconds on a quiet host, longer on a loaded one, so their size
	 * is printed, not checked.  Each chunk starts once the last landed. */
	qsort(holes, (size_t)nh, sizeof(holes[0]), cmp_u64);
	for (i = 0; i < nh && t.v[i + 2].start >= t.v[i + 1].end; i++)
		;
	CHECK(nh == 47 && i == nh, "%d holes, chunk %d overlaps the one before", nh, i + 2);
	if (nh > 10)
		fprintf(stderr, "# pageable: 90th percentile hole %.3f ms\n",
			(double)holes[nh * 9 / 10] / 1e6);
	CHECK(t.n > 1 && t.v[1].start >= t.v[0].end, "staging before drain");
	CHECK(t.n > 0 && t1 >= t.v[t.n - 1].end, "returned before last chunk");
	CHECK(t1 - t0 >= 5 * MS, "did not wait for the kernel");
	CU_OK(cuMemcpyDtoH_v2(buf, d, n));
	t = trace_read(trace_path);
	CHECK(t.n == 97, "%d ops traced after DtoH", t.n);
	CHECK(t.n > 0 && now_ns() >= t.v[t.n - 1].end, "DtoH returned early");
	CU_OK(cuMemAllocHost_v2(&pin, 12000000));
	CU_OK(cuMemcpyHtoD_v2_ptds(d, pin, 12000000));
	t = trace_read(trace_path);
	CHECK(t.n == 98, "pinned sync copy: %d ops", t.n);
	CHECK(t.n > 0 && now_ns() >= t.v[t.n - 1].end, "pinned returned early");
	/* Behind a 200 ms kernel, a DtoD copy and a memset that only enqueue
	 * return long before their ops end; ones that waited return after. */
	CU_OK(spin_on(NULL, 200 * MS, false));
	CU_OK(cuMemcpyDtoD_v2(d, d + 24000000, 24000000));
	t0 = now_ns();
	CU_OK(cuMemsetD8_v2(d, 0, 24000000));
	t1 = now_ns();
	CU_IS(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
	CU_OK(cuCtxSynchronize());
	t = trace_read(trace_path);
	CHECK(t.n == 101, "DtoD, memset: %d ops", t.n);
	if (t.n == 101) {
		CHECK(!strcmp(t.v[99].kind, "copy") && t0 < t.v[99].end,
		      "DtoD returned %.3f ms after its op ended",
		      ((double)t0 - (double)t.v[99].end) / 1e6);
		CHECK(!strcmp(t.v[100].kind, "memset") && t1 < t.v[100].end,
		      "memset returned %.3f ms after its op ended",
		      ((double)t1 - (double)t.v[100].end) / 1e6);
	}
	CU_OK(cuMemcpy(d, (CUdeviceptr)(uintptr_t)buf, 4096));
	CU_OK(cuMemcpyAsync((CUdeviceptr)(uintptr_t)buf, d, 4096, NULL));
	free(buf);
}

/* Wrong use gets the driver's error codes. */
static void case_errors(void)
{
	CUdevice dev;
	CUcontext c;
	CUdeviceptr d;
	CUstream s;
	CUmodule m;
	CUfunction f;
	CUevent e;
	const char *str;
	int v;
	char buf[64];

	setenv("SIMGPU_TRACE", trace_path, 1);
	CU_IS(cuDeviceGet(&dev, 0), CUDA_ERROR_NOT_INITIALIZED);
	CU_IS(cuCtxGetCurrent(&c), CUDA_ERROR_NOT_INITIALIZED);
	CU_IS(cuMemAlloc_v2(&d, 16), CUDA_ERROR_NOT_INITIALIZED);
	CU_IS(cuStreamSynchronize(NULL), CUDA_ERROR_NOT_INITIALIZED);
	CU_OK(cuDriverGetVersion(&v));
	CHECK(v == 13000, "driver version %d", v);
	CU_IS(cuInit(1), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuInit(0));
	CU_IS(cuDeviceGet(&dev, 99), CUDA_ERROR_INVALID_DEVICE);
	CU_OK(cuDeviceGet(&dev, 0));
	CU_OK(cuDeviceGetName(buf, sizeof(buf), dev));
	CHECK(!strcmp(buf, "idlegap simgpu"), "name %s", buf);
	CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
				   dev));
	CU_IS(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX, dev),
	      CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuMemAlloc_v2(&d, 16), CUDA_ERROR_INVALID_CONTEXT);
	CU_IS(cuStreamSynchronize(NULL), CUDA_ERROR_INVALID_CONTEXT);
	CU_IS(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
	CU_IS(cuCtxSetCurrent((CUcontext)buf), CUDA_ERROR_INVALID_CONTEXT);
	CU_OK(cuCtxCreate_v4(&c, NULL, 0, dev));
	CU_IS(cuMemAlloc_v2(&d, 0), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemAlloc_v2(&d, 1 << 20));
	CU_IS(cuMemcpyHtoD_v2(d + (2 << 20), buf, 16), CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuMemcpyHtoD_v2(d + (1 << 20) - 8, buf, 16),
	      CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuMemFree_v2(d + 16), CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuStreamSynchronize((CUstream)buf), CUDA_ERROR_INVALID_HANDLE);
	CU_IS(cuStreamQuery_ptsz((CUstream)buf), CUDA_ERROR_INVALID_HANDLE);
	CU_IS(cuStreamCreate(&s, 0x10), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuStreamCreate(&s, 0));
	CU_OK(cuStreamDestroy(s));
	CU_IS(cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE);
	CU_IS(cuStreamDestroy_v2(s), CUDA_ERROR_INVALID_HANDLE);
	CU_IS(cuModuleLoadData(&m, "not a module"), CUDA_ERROR_INVALID_IMAGE);
	CU_OK(cuModuleLoadDataEx(&m, test_ptx, 0, NULL, NULL));
	CU_IS(cuModuleGetFunction(&f, m, "idlegap"), CUDA_ERROR_NOT_FOUND);
	CU_IS(cuModuleGetFunction(&f, (CUmodule)buf, "idlegap_spin"),
	      CUDA_ERROR_INVALID_HANDLE);
	CU_OK(cuModuleGetFunction(&f, m, "idlegap_spin"));
	CU_IS(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
	      CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuLaunchKernel((CUfunction)buf, 1, 1, 1, 1, 1, 1, 0, NULL, NULL,
			     NULL), CUDA_ERROR_INVALID_HANDLE);
	CU_IS(cuLaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
	      CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuEventCreate(&e, CU_EVENT_INTERPROCESS), CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuEventQuery((CUevent)buf), CUDA_ERROR_INVALID_HANDLE);
	CU_IS(cuEventRecord((CUevent)buf, NULL), CUDA_ERROR_INVALID_HANDLE);
	CU_IS(cuDevicePrimaryCtxRelease_v2(dev), CUDA_ERROR_INVALID_CONTEXT);
	CU_IS(cuMemFreeHost(buf), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuGetErrorName(CUDA_ERROR_NOT_READY, &str));
	CHECK(!strcmp(str, "CUDA_ERROR_NOT_READY"), "name %s", str);
	CU_OK(cuGetErrorString(CUDA_ERROR_INVALID_HANDLE, &str));
	CU_IS(cuGetErrorName((CUresult)12345, &str), CUDA_ERROR_INVALID_VALUE);
}

/* cuGetProcAddress picks the versioned and per-thread names. */
static void case_procaddr(void)
{
	static const struct {
		const char *sym;
		int ver;
		cuuint64_t flags;
		const char *want;
	} cases[] = {
		{ "cuLaunchKernel", 13000, 0, "cuLaunchKernel" },
		{ "cuLaunchKernel", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuLaunchKernel_ptsz" },
		{ "cuLaunchKernel", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, "cuLaunchKernel" },
		{ "cuMemcpyHtoD", 12000, 0, "cuMemcpyHtoD_v2" },
		{ "cuMemcpyHtoD", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemcpyHtoD_v2_ptds" },
		{ "cuMemcpyHtoD", 3000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemcpyHtoD" },
		{ "cuMemcpyHtoDAsync", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemcpyHtoDAsync_v2_ptsz" },
		{ "cuMemAlloc", 12000, 0, "cuMemAlloc_v2" },
		{ "cuMemAlloc", 3000, 0, "cuMemAlloc" },
		{ "cuCtxCreate", 13000, 0, "cuCtxCreate_v4" },
		{ "cuCtxCreate", 12000, 0, "cuCtxCreate_v3" },
		{ "cuCtxSynchronize", 12000, 0, "cuCtxSynchronize" },
		{ "cuCtxSynchronize", 13000, 0, "cuCtxSynchronize_v2" },
		{ "cuEventElapsedTime", 13000, 0, "cuEventElapsedTime_v2" },
		{ "cuStreamDestroy", 12000, 0, "cuStreamDestroy_v2" },
		{ "cuStreamSynchronize", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuStreamSynchronize_ptsz" },
		{ "cuMemcpy", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemcpy_ptds" },
		{ "cuGetProcAddress", 13000, 0, "cuGetProcAddress_v2" },
	};
	CUdriverProcAddressQueryResult st;
	void *self = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *fn;
	unsigned int i;

	CHECK(self, "libcuda.so.1 not loaded");
	for (i = 0; self && i < sizeof(cases) / sizeof(cases[0]); i++) {
		CU_OK(cuGetProcAddress_v2(cases[i].sym, &fn, cases[i].ver,
					  cases[i].flags, &st));
		CHECK(fn && fn == dlsym(self, cases[i].want),
		      "%s@%d/%d is not %s", cases[i].sym, cases[i].ver,
		      (int)cases[i].flags, cases[i].want);
	}
	CU_OK(cuGetProcAddress_v2("cuNoSuchThing", &fn, 12000, 0, &st));
	CHECK(!fn && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, "missing");
	CU_OK(cuGetProcAddress_v2("cuLaunchKernelEx", &fn, 11000, 0, &st));
	CHECK(!fn && st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, "old");
	CU_IS(cuGetProcAddress("cuNoSuchThing", &fn, 12000, 0),
	      CUDA_ERROR_NOT_FOUND);
	CU_IS(cuGetProcAddress_v2("cuInit", &fn, 99000, 0, &st),
	      CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuGetProcAddress("cuInit", &fn, 12000, 0));
	CHECK(fn == dlsym(self, "cuInit"), "cuInit");
	CHECK(dlsym(self, "simgpu_version") != NULL, "simgpu_version");
	CHECK(dlsym(self, "sim_init") == NULL, "internal symbol exported");
}

/* A forked child that uses the driver traces to its own file; the parent
 * keeps tracing to its own. */
static void case_fork(void)
{
	int status = 0;
	pid_t pid;

	setup();
	CU_OK(spin_on(NULL, 1 * MS, false));
	CU_OK(cuCtxSynchronize());
	pid = fork();
	if (pid == 0) {
		CUcontext c = NULL;

		failures = 0;
		CU_IS(cuCtxGetCurrent(&c), CUDA_ERROR_NOT_INITIALIZED);
		setup();
		CU_OK(spin_on(NULL, 2 * MS, false));
		CU_OK(spin_on(NULL, 2 * MS, false));
		CU_OK(cuCtxSynchronize());
		_exit(failures ? 1 : 0);
	}
	CU_OK(spin_on(NULL, 3 * MS, false));
	CU_OK(cuCtxSynchronize());
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "child failed");
	printf("child %d\n", (int)pid);
}

/* Threads launching on their per-thread default streams run concurrently
 * and trace under their own stream names. */
static void *ptds_thread(void *arg)
{
	struct ptds_arg *a = arg;

	CU_OK(cuCtxSetCurrent(ctx));
	snprintf(a->name, sizeof(a->name), "ptds.%d", (int)gettid());
	CU_OK(spin_on(NULL, 20 * MS, true));
	a->launched = now_ns();
	CU_OK(cuStreamSynchronize_ptsz(NULL));
	return NULL;
}

static void case_threads(void)
{
	struct ptds_arg args[2];
	pthread_t th[2];
	struct trace t;
	int i;

	setup();
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, ptds_thread, &args[i]);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	t = trace_read(trace_path);
	CHECK(t.n == 2, "%d ops", t.n);
	/* on an idle stream a kernel starts when it is launched: one that
	 * waited for the other thread's would start after its launch */
	for (i = 0; i < 2; i++)
		CHECK(op_of(&t, args[i].name, 0)->start <= args[i].launched,
		      "per-thread streams serialized");
}

/* Several threads mixing streams, events, queries, syncs and copies must
 * neither deadlock nor break per-stream order. */
static CUstream shared_stream;
static int stress_iters = 300;

static void *stress_thread(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	static char page[3 << 20];
	CUstream own;
	CUevent ev;
	CUdeviceptr d;
	void *pin;
	int i;

	CU_OK(cuCtxSetCurrent(ctx));
	CU_OK(cuStreamCreate(&own, (seed & 1) ? CU_STREAM_NON_BLOCKING : 0));
	CU_OK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
	CU_OK(cuMemAlloc_v2(&d, sizeof(page)));
	CU_OK(cuMemAllocHost_v2(&pin, 1 << 20));
	for (i = 0; i < stress_iters; i++) {
		CUstream pick[] = { own, NULL, CU_STREAM_PER_THREAD,
				    shared_stream };
		CUstream s = pick[rand_r(&seed) % 4];

		CU_OK(spin_on(s, rand_r(&seed) % 50000, rand_r(&seed) & 1));
		switch (rand_r(&seed) % 10) {
		case 0:
			CU_OK(cuEventRecord(ev, own));
			CU_OK(cuStreamWaitEvent(shared_stream, ev, 0));
			break;
		case 1:
			CU_OK(cuEventSynchronize(ev));
			break;
		case 2:
			CU_OK(cuStreamSynchronize(s));
			break;
		case 3: {
			CUresult r = cuStreamQuery(s);

			CHECK(r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY,
			      "query returned %d", (int)r);
			break;
		}
		case 4:
			CU_OK(cuMemcpyHtoDAsync_v2(d, pin, 1 << 20, own));
			break;
		case 5:
			CU_OK(cuMemcpyHtoD_v2_ptds(d, page, sizeof(page)));
			break;
		default:
			break;
		}
	}
	CU_OK(cuStreamSynchronize(own));
	CU_OK(cuStreamDestroy_v2(own));
	CU_OK(cuEventDestroy_v2(ev));
	CU_OK(cuMemFreeHost(pin));
	return NULL;
}

static void case_stress(void)
{
	pthread_t th[4];
	struct trace t;
	int i, j;

	if (getenv("STRESS_ITERS"))
		stress_iters = atoi(getenv("STRESS_ITERS"));
	setup();
	CU_OK(cuStreamCreate(&shared_stream, CU_STREAM_NON_BLOCKING));
	for (i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, stress_thread,
			       (void *)(uintptr_t)(i + 1));
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	CU_OK(cuCtxSynchronize());
	t = trace_read(trace_path);
	CHECK(t.n > 1000, "%d ops traced", t.n);
	/* Lines of one stream are written in completion order. */
	for (i = 0; i < t.n; i++)
		for (j = i + 1; j < t.n && j < i + 400; j++)
			if (!strcmp(t.v[i].stream, t.v[j].stream)) {
				CHECK(t.v[j].start >= t.v[i].end,
				      "%s: op %d overlaps op %d", t.v[i].stream,
				      j, i);
				break;
			}
}

/* SIMGPU_DEVICES: every device has its own primary context and streams. */
static void case_devices(void)
{
	CUmodule mod;
	CUcontext c1;
	CUdevice d1;
	struct trace t;
	const struct top *a, *b;
	int n = 0;

	setenv("SIMGPU_DEVICES", "2", 1);
	setup();
	CU_OK(cuDeviceGetCount(&n));
	CHECK(n == 2, "%d devices", n);
	CU_OK(cuDeviceGet(&d1, 1));
	CU_OK(cuDevicePrimaryCtxRetain(&c1, d1));
	CHECK(c1 != ctx, "devices share a primary context");
	/* Device 0's kernel outlasts any stall of this thread on a loaded
	 * host before device 1's launch, so only a simulator that runs the
	 * devices one after the other fails the overlap check below. */
	CU_OK(spin_on(NULL, 300 * MS, false));
	CU_OK(cuCtxSetCurrent(c1));
	/* Kernels belong to the context their module was loaded in. */
	CU_IS(spin_on(NULL, 2 * MS, false), CUDA_ERROR_INVALID_CONTEXT);
	CU_OK(cuModuleLoadData(&mod, test_ptx));
	CU_OK(cuModuleGetFunction(&spin, mod, "idlegap_spin"));
	CU_OK(spin_on(NULL, 2 * MS, false));
	CU_OK(cuCtxSynchronize());
	CU_OK(cuCtxSynchronize_v2(ctx));
	t = trace_read(trace_path);
	a = find_op(&t, 0);
	b = find_op(&t, 1);
	CHECK(t.n == 2 && strcmp(a->stream, b->stream),
	      "%d ops, one legacy stream per context", t.n);
	CHECK(t.n == 2 && a->start < b->end && b->start < a->end,
	      "devices did not run at the same time: %" PRIu64 "-%" PRIu64
	      ", %" PRIu64 "-%" PRIu64, a->start, a->end, b->start, b->end);
	CU_OK(cuDevicePrimaryCtxRelease_v2(d1));
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "order", case_order },	{ "overlap", case_overlap },
	{ "sync", case_sync },		{ "events", case_events },
	{ "legacy", case_legacy },	{ "durations", case_durations },
	{ "pageable", case_pageable },	{ "errors", case_errors },
	{ "procaddr", case_procaddr },	{ "fork", case_fork },
	{ "threads", case_threads },	{ "stress", case_stress },
	{ "devices", case_devices },	{ "syncwait", case_syncwait },
};

int main(int argc, char **argv)
{
	unsigned int i;

	if (argc != 3) {
		fprintf(stderr, "usage: %s CASE TRACE_FILE\n", argv[0]);
		return 2;
	}
	trace_path = argv[2];
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(cases[i].name, argv[1])) {
			cases[i].fn();
			return failures ? 1 : 0;
		}
	fprintf(stderr, "%s: unknown case %s\n", argv[0], argv[1]);
	return 2;
}
