// SPDX-License-Identifier: GPL-2.0
/*
 * Drives tests/fakecuda/libcuda.so.1 through a known sequence, for the
 * probe tests:  fakecuda_app [STEPS [GAP_MS]]
 *   stream s = cuStreamCreate(0)                     (handle 0x1000)
 *   STEPS x { 10 x cuLaunchKernel(s); cuStreamSynchronize(s); sleep GAP }
 *   3 x cuLaunchKernel_ptsz(0); cuStreamQuery_ptsz(0) -> busy, then done
 *   cuMemAlloc_v2 (3 ms)
 * or, for the benchmark:  fakecuda_app --loop N FUNC
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult;
typedef void *CUstream;
CUresult cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
			unsigned, unsigned, CUstream, void **, void **);
CUresult cuLaunchKernel_ptsz(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
			     unsigned, unsigned, CUstream, void **, void **);
CUresult cuStreamSynchronize(CUstream);
CUresult cuStreamQuery(CUstream);
CUresult cuStreamQuery_ptsz(CUstream);
CUresult cuMemAlloc_v2(unsigned long long *, size_t);
CUresult cuStreamCreate(CUstream *, unsigned int);
CUresult cuDeviceGetCount(int *);
extern int fake_query_busy;
extern unsigned int fake_sync_us;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Calls FUNC N times; prints ns per call. */
static int loop(long n, const char *fn)
{
	CUstream s = (CUstream)0x1000;
	double t0;
	long i;
	int c;

	fake_sync_us = 0;
	t0 = now();
	for (i = 0; i < n; i++) {
		if (!strcmp(fn, "launch"))
			cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
		else if (!strcmp(fn, "sync"))
			cuStreamSynchronize(s);
		else if (!strcmp(fn, "query"))
			cuStreamQuery(s);
		else
			cuDeviceGetCount(&c);
	}
	printf("%.1f\n", (now() - t0) / n * 1e9);
	return 0;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 5;
	int gap_ms = argc > 2 ? atoi(argv[2]) : 10;
	unsigned long long p;
	CUstream s;
	int i, k;

	if (argc == 4 && !strcmp(argv[1], "--loop"))
		return loop(atol(argv[2]), argv[3]);
	/* time for the tracer to see the process before it starts */
	if (getenv("FAKECUDA_WAIT_MS"))
		usleep(atoi(getenv("FAKECUDA_WAIT_MS")) * 1000);
	cuStreamCreate(&s, 0);
	for (i = 0; i < steps; i++) {
		for (k = 0; k < 10; k++)
			cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
		cuStreamSynchronize(s);
		usleep(gap_ms * 1000);
	}
	for (k = 0; k < 3; k++)
		cuLaunchKernel_ptsz(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
	fake_query_busy = 1;
	cuStreamQuery_ptsz(NULL);
	usleep(1000);
	cuStreamQuery_ptsz(NULL);
	cuMemAlloc_v2(&p, 4096);
	return 0;
}
