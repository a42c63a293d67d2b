// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmark's NCCL loop (tools/bench.py row 11):
 *	fakenccl_loop N
 * creates a communicator of one rank on the stand-in libnccl, waits for a
 * tracer to attach its probes, then calls ncclAllReduce N times and prints
 * the mean ns per call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <nccl.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000, i;
	cudaStream_t s = (cudaStream_t)0x4000;
	ncclComm_t comm;
	ncclUniqueId id;
	double t0;

	memset(&id, 0, sizeof(id));
	strcpy(id.internal, "idlegap-bench-loop");
	if (n <= 0 || ncclCommInitRank(&comm, 1, id, 0))
		return 1;
	usleep(300 * 1000);	/* a tracer that found the library late */
	t0 = now();
	for (i = 0; i < n; i++)
		ncclAllReduce(NULL, NULL, 1024, ncclFloat32, ncclSum, comm, s);
	printf("%.1f\n", (now() - t0) / n * 1e9);
	return 0;
}
