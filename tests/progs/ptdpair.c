// SPDX-License-Identifier: GPL-2.0
/*
 * Two threads, each on its own per-thread default stream, for the stream
 * drain rule (docs/design.md §4.2): a per-thread default stream waits for
 * the legacy stream and the legacy stream for it, but two per-thread
 * default streams never wait for each other, nor for a created stream.
 *
 * Thread B launches, thread A makes a synchronous copy while B's kernel
 * runs, then B synchronizes and both sleep (a known idle gap):
 *   1. A's copy is on the legacy stream: it waits for B's kernel;
 *   2. A's copy is on its own per-thread stream: it does not;
 *   3. as 2, but B's kernel is on a blocking stream B created.
 * Uses the driver API through dlopen("libcuda.so.1") and the simulator's
 * idlegap_spin kernel, so it needs no CUDA headers.
 * Usage: ptdpair [GAP_MS]
 */
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define PER_THREAD	((void *)0x2)	/* CU_STREAM_PER_THREAD */
#define KERNEL_NS	40000000ULL

typedef int (*fn0)(void);
static int (*cuInit)(unsigned);
static int (*cuDeviceGet)(int *, int);
static int (*cuDevicePrimaryCtxRetain)(void **, int);
static int (*cuCtxSetCurrent)(void *);
static int (*cuCtxSynchronize)(void);
static int (*cuModuleLoadData)(void **, const void *);
static int (*cuModuleGetFunction)(void **, void *, const char *);
static int (*cuMemAlloc_v2)(uint64_t *, size_t);
static int (*cuMemcpyHtoD_v2)(uint64_t, const void *, size_t);
static int (*cuMemcpyHtoD_v2_ptds)(uint64_t, const void *, size_t);
static int (*cuStreamCreate)(void **, unsigned);
static int (*cuStreamSynchronize)(void *);
static int (*cuLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned,
			     unsigned, unsigned, unsigned, void *, void **,
			     void **);

static const char ptx[] =
	".version 7.0\n.target sm_70\n.address_size 64\n"
	".visible .entry idlegap_spin(.param .u64 ns, .param .u64 rec)\n"
	"{\n\tret;\n}\n";

static void *ctx, *spin;
static uint64_t dbuf;
static char hbuf[4096];
static sem_t to_a, to_b;
static long gap_ms = 60;

static void check(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "ptdpair: %s: CUDA error %d\n", what, rc);
		exit(1);
	}
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void launch(void *stream)
{
	unsigned long long ns = KERNEL_NS, rec = 0;
	void *args[] = { &ns, &rec };

	check(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, stream, args, NULL),
	      "cuLaunchKernel");
}

/* Thread B: per phase, launch, let A copy, synchronize, idle. */
static void *thread_b(void *arg)
{
	void *own = NULL;
	int phase;

	(void)arg;
	check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
	check(cuStreamCreate(&own, 0), "cuStreamCreate");
	for (phase = 1; phase <= 3; phase++) {
		void *s = phase == 3 ? own : PER_THREAD;

		launch(s);
		sem_post(&to_a);
		sem_wait(&to_b);	/* A's copy returned */
		check(cuStreamSynchronize(s), "cuStreamSynchronize");
		sem_post(&to_a);
		sleep_ms(gap_ms);
	}
	return NULL;
}

#define SYM(f) (*(void **)&f = dlsym(h, #f)) ? 0 : (fprintf(stderr, \
	"ptdpair: libcuda has no %s\n", #f), exit(1), 0)

static void load(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);

	if (!h) {
		fprintf(stderr, "ptdpair: %s\n", dlerror());
		exit(1);
	}
	SYM(cuInit); SYM(cuDeviceGet); SYM(cuDevicePrimaryCtxRetain);
	SYM(cuCtxSetCurrent); SYM(cuCtxSynchronize); SYM(cuModuleLoadData);
	SYM(cuModuleGetFunction); SYM(cuMemAlloc_v2); SYM(cuMemcpyHtoD_v2);
	SYM(cuMemcpyHtoD_v2_ptds); SYM(cuStreamCreate);
	SYM(cuStreamSynchronize); SYM(cuLaunchKernel);
}

int main(int argc, char **argv)
{
	void *mod;
	pthread_t b;
	int dev, phase;

	if (argc > 2 || (argc == 2 && (gap_ms = atol(argv[1])) <= 0)) {
		fprintf(stderr, "usage: ptdpair [GAP_MS]\n");
		return 2;
	}
	load();
	check(cuInit(0), "cuInit");
	check(cuDeviceGet(&dev, 0), "cuDeviceGet");
	check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
	check(cuModuleLoadData(&mod, ptx), "cuModuleLoadData");
	check(cuModuleGetFunction(&spin, mod, "idlegap_spin"),
	      "cuModuleGetFunction");
	check(cuMemAlloc_v2(&dbuf, sizeof(hbuf)), "cuMemAlloc");
	sem_init(&to_a, 0, 0);
	sem_init(&to_b, 0, 0);
	if (pthread_create(&b, NULL, thread_b, NULL))
		return 1;
	for (phase = 1; phase <= 3; phase++) {
		sem_wait(&to_a);	/* B's kernel is queued */
		sleep_ms(2);
		if (phase == 1)
			check(cuMemcpyHtoD_v2(dbuf, hbuf, sizeof(hbuf)),
			      "cuMemcpyHtoD_v2");
		else
			check(cuMemcpyHtoD_v2_ptds(dbuf, hbuf, sizeof(hbuf)),
			      "cuMemcpyHtoD_v2_ptds");
		sem_post(&to_b);
		sem_wait(&to_a);	/* B synchronized */
	}
	pthread_join(b, NULL);
	check(cuCtxSynchronize(), "cuCtxSynchronize");
	return 0;
}
