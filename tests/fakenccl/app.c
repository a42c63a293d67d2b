// SPDX-License-Identifier: GPL-2.0
/*
 * Calls the NCCL API with known arguments and prints each call as
 *	call api=NAME op=OP comm=N seq=S bytes=B count=C [peer=P]
 * (comm: 1 the first communicator, 2 its split), for the probe tests to
 * compare with what the probes recorded.  Usage: fakenccl_app RANK NRANKS
 * With --loop N: N ncclAllReduce calls after the communicator is made,
 * printing the mean ns per call (the probe-cost benchmark).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <nccl.h>

static unsigned long seq[3];

static void said(const char *api, const char *op, int c, size_t bytes, size_t count, int peer)
{
	printf("call api=%s op=%s comm=%d seq=%lu bytes=%zu count=%zu", api, op, c,
	       ++seq[c], bytes, count);
	if (peer >= 0)
		printf(" peer=%d", peer);
	printf("\n");
}

static int loop(long n)
{
	struct timespec a, b;
	ncclUniqueId id;
	ncclComm_t comm;
	long i;

	usleep(300 * 1000);	/* as below: the probes come first */
	memset(&id, 0, sizeof(id));
	if (ncclCommInitRank(&comm, 1, id, 0))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		ncclAllReduce(NULL, NULL, 1024, ncclFloat32, ncclSum, comm, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	ncclCommDestroy(comm);
	return 0;
}

int main(int argc, char **argv)
{
	int rank = argc > 1 ? atoi(argv[1]) : 0, n = argc > 2 ? atoi(argv[2]) : 4;
	cudaStream_t s = (cudaStream_t)0x4000;
	ncclComm_t comm, sub;
	ncclUniqueId id;
	int v = 0;

	if (argc > 2 && !strcmp(argv[1], "--loop"))
		return loop(atol(argv[2]));

	/* a real job's start-up takes longer: the tracer reads the maps
	 * after the loader says libraries were loaded */
	usleep(300 * 1000);
	memset(&id, 0, sizeof(id));
	strcpy(id.internal, "idlegap-fakenccl-job");
	if (ncclCommInitRank(&comm, n, id, rank))
		return 1;
	printf("comm rank=%d nranks=%d\n", rank, n);
	ncclAllReduce(NULL, NULL, 1024, ncclFloat32, ncclSum, comm, s);
	said("ncclAllReduce", "all_reduce", 1, 4096, 1024, -1);
	ncclBroadcast(NULL, NULL, 256, ncclInt8, 0, comm, s);
	said("ncclBroadcast", "broadcast", 1, 256, 256, 0);
	ncclGroupStart();
	ncclSend(NULL, 100, ncclInt32, (rank + 1) % n, comm, s);
	said("ncclSend", "send", 1, 400, 100, (rank + 1) % n);
	ncclRecv(NULL, 100, ncclInt32, (rank + n - 1) % n, comm, s);
	said("ncclRecv", "recv", 1, 400, 100, (rank + n - 1) % n);
	ncclGroupEnd();
	ncclAllGather(NULL, NULL, 64, ncclFloat64, comm, s);
	said("ncclAllGather", "all_gather", 1, 512, 64, -1);
	ncclReduce(NULL, NULL, 10, ncclInt64, ncclMax, 3, comm, s);
	said("ncclReduce", "reduce", 1, 80, 10, 3);
	ncclReduceScatter(NULL, NULL, 32, ncclFloat16, ncclSum, comm, s);
	said("ncclReduceScatter", "reduce_scatter", 1, 64, 32, -1);
	if (ncclCommSplit(comm, 7, rank, &sub, NULL))
		return 1;
	ncclCommCount(sub, &v);
	ncclCommUserRank(sub, &v);
	ncclAllReduce(NULL, NULL, 3, ncclBfloat16, ncclAvg, sub, s);
	said("ncclAllReduce", "all_reduce", 2, 6, 3, -1);
	ncclCommDestroy(sub);
	ncclCommDestroy(comm);
	return 0;
}
