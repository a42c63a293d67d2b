// SPDX-License-Identifier: GPL-2.0
/*
 * A tiny stand-in for libcuda for the probe tests and the probe-cost
 * benchmark: the entry points idlegap probes, with the real signatures'
 * argument positions, doing nothing but what the tests need (syncs sleep,
 * queries answer what the test asks).  Not a simulator: see simgpu/.
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult;
typedef void *CUstream;
typedef void *CUevent;
typedef void *CUfunction;
typedef unsigned long long CUdeviceptr;

/* Set by the application: what the next queries return, how long syncs
 * and timed calls take. */
int fake_query_busy;		/* queries answer NOT_READY while > 0 */
unsigned int fake_sync_us = 2000;
unsigned int fake_api_us = 3000;

#define API __attribute__((visibility("default"), noinline))

static void sleep_us(unsigned int us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };

	if (us)
		nanosleep(&ts, NULL);
}

API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
			    unsigned bx, unsigned by, unsigned bz, unsigned shm,
			    CUstream s, void **params, void **extra)
{
	(void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz;
	(void)shm; (void)params; (void)extra;
	return s == (CUstream)-1;	/* uses s: keeps the stack argument */
}

API CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
				 unsigned bx, unsigned by, unsigned bz, unsigned shm,
				 CUstream s, void **params, void **extra)
{
	(void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz;
	(void)shm; (void)params; (void)extra;
	return s == (CUstream)-1 ? 1 : 0;
}

API CUresult cuStreamSynchronize(CUstream s)
{
	(void)s;
	sleep_us(fake_sync_us);
	return 0;
}

API CUresult cuStreamQuery(CUstream s)
{
	(void)s;
	return fake_query_busy-- > 0 ? 600 : 0;
}

API CUresult cuStreamQuery_ptsz(CUstream s)
{
	(void)s;
	return fake_query_busy-- > 0 ? 600 : 0;
}

API CUresult cuCtxSynchronize(void)
{
	sleep_us(fake_sync_us);
	return 0;
}

API CUresult cuEventRecord(CUevent e, CUstream s)
{
	(void)e; (void)s;
	return 0;
}

API CUresult cuEventSynchronize(CUevent e)
{
	(void)e;
	sleep_us(fake_sync_us);
	return 0;
}

API CUresult cuEventQuery(CUevent e)
{
	(void)e;
	return fake_query_busy-- > 0 ? 600 : 0;
}

API CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n)
{
	(void)d; (void)h; (void)n;
	sleep_us(fake_sync_us);
	return 0;
}

API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, CUstream s)
{
	(void)d; (void)h; (void)n; (void)s;
	return 0;
}

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	sleep_us(fake_api_us);
	*p = 0x10000 + n;
	return 0;
}

API CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
	*s = (CUstream)(0x1000UL + flags);
	return 0;
}

/* An entry point idlegap does not probe: calls to it cost nothing. */
API CUresult cuDeviceGetCount(int *n)
{
	*n = 1;
	return 0;
}
