// SPDX-License-Identifier: GPL-2.0
/*
 * Checks of the simulated NCCL (build/simgpu/libnccl.so.2), run by
 * tests/nccl.t.
 *
 *   nccl_check abi             ABI and API behaviour in one process
 *   nccl_check ranks N LATE MS N ranks, forked; rank LATE enqueues its
 *                              second all-reduce MS ms after the others;
 *                              each rank prints "rank R pid P hostwait NS"
 *   nccl_check initall N       ncclCommInitAll and a group over N comms
 *   nccl_check orphan          2 ranks; rank 1 exits after init, rank 0's
 *                              all-reduce ends as aborted, not hangs
 *
 * SIMNCCL_TRACE and SIMGPU_TRACE (with %p) are set by the caller; the
 * truth is checked there.  Exit 0 when every call behaved.
 */
#include <nccl.h>
#include <cuda.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...) do {                                         \
	if (!(cond)) {                                                \
		printf("FAIL %s:%d: ", __FILE__, __LINE__);           \
		printf(__VA_ARGS__);                                  \
		printf("\n");                                         \
		failures++;                                           \
	}                                                             \
} while (0)

#define NC(call) do {                                                  \
	ncclResult_t r_ = (call);                                      \
	if (r_ != ncclSuccess) {                                       \
		printf("FAIL %s:%d: %s: %s (%s)\n", __FILE__, __LINE__, \
		       #call, ncclGetErrorString(r_),                   \
		       ncclGetLastError(NULL));                         \
		exit(1);                                               \
	}                                                              \
} while (0)

#define CU(call) do {                                                  \
	CUresult r_ = (call);                                          \
	if (r_ != CUDA_SUCCESS) {                                      \
		printf("FAIL %s:%d: %s: %d\n", __FILE__, __LINE__,     \
		       #call, (int)r_);                                \
		exit(1);                                               \
	}                                                              \
} while (0)

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull +
	       (unsigned long long)ts.tv_nsec;
}

static CUstream gpu_open(CUdeviceptr *buf, size_t bytes)
{
	CUdevice dev;
	CUcontext ctx;
	CUstream s;

	CU(cuInit(0));
	CU(cuDeviceGet(&dev, 0));
	CU(cuDevicePrimaryCtxRetain(&ctx, dev));
	CU(cuCtxSetCurrent(ctx));
	CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CU(cuMemAlloc(buf, bytes));
	return s;
}

/* Passed by value: a copy that must still name the same communicator. */
static ncclResult_t init_by_value(ncclComm_t *c, ncclUniqueId id)
{
	return ncclCommInitRank(c, 1, id, 0);
}

static int check_abi(void)
{
	ncclUniqueId id, bad;
	ncclComm_t c = NULL;
	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
	CUdeviceptr buf;
	CUstream s;
	int v = 0, n = -1, r = -1, d = -1;

	CHECK(sizeof(ncclUniqueId) == 128, "unique id is %zu bytes",
	      sizeof(ncclUniqueId));
	CHECK(ncclSuccess == 0 && ncclInvalidArgument == 4 &&
	      ncclInProgress == 7 && ncclFloat32 == 7 && ncclBfloat16 == 9 &&
	      ncclSum == 0 && ncclAvg == 4, "enum values");
	NC(ncclGetVersion(&v));
	CHECK(v == NCCL_VERSION_CODE, "version %d, nccl.h says %d", v,
	      NCCL_VERSION_CODE);
	CHECK(ncclGetVersion(NULL) == ncclInvalidArgument, "NULL version");
	CHECK(!strcmp(ncclGetErrorString(ncclSuccess), "no error"),
	      "error string");
	CHECK(ncclGetErrorString(ncclRemoteError)[0], "remote error string");
	s = gpu_open(&buf, 1 << 20);
	NC(ncclGetUniqueId(&id));
	NC(init_by_value(&c, id));
	NC(ncclCommCount(c, &n));
	NC(ncclCommUserRank(c, &r));
	NC(ncclCommCuDevice(c, &d));
	CHECK(n == 1 && r == 0 && d == 0, "count %d rank %d dev %d", n, r, d);
	NC(ncclAllReduce((void *)buf, (void *)buf, 1024, ncclFloat32, ncclSum,
			 c, s));
	CU(cuStreamSynchronize(s));
	CHECK(ncclAllReduce((void *)buf, (void *)buf, 1, ncclNumTypes,
			    ncclSum, c, s) == ncclInvalidArgument,
	      "bad datatype accepted");
	CHECK(ncclGetLastError(c)[0], "no last error after a failure");
	CHECK(ncclBroadcast((void *)buf, (void *)buf, 1, ncclInt8, 1, c, s)
	      == ncclInvalidArgument, "root out of range accepted");
	CHECK(ncclSend((void *)buf, 1, ncclInt8, 2, c, s) ==
	      ncclInvalidArgument, "peer out of range accepted");
	CHECK(ncclGroupEnd() == ncclInvalidUsage, "unmatched group end");
	NC(ncclCommDestroy(c));
	memset(&bad, 0, sizeof(bad));
	CHECK(ncclCommInitRank(&c, 1, bad, 0) == ncclInvalidArgument,
	      "a zero unique id accepted");
	CHECK(ncclCommInitRank(&c, 2, id, 2) == ncclInvalidArgument,
	      "rank out of range accepted");
	cfg.magic = 0;
	CHECK(ncclCommInitRankConfig(&c, 1, id, 0, &cfg) ==
	      ncclInvalidArgument, "uninitialized config accepted");
	cfg.magic = 0xcafebeef;
	NC(ncclGetUniqueId(&id));
	NC(ncclCommInitRankConfig(&c, 1, id, 0, &cfg));
	NC(ncclCommAbort(c));
	return failures ? 1 : 0;
}

static void rank_main(int rank, int n, ncclUniqueId id, int late, int ms)
{
	size_t count = 1 << 20;
	CUdeviceptr buf;
	ncclComm_t c, sub;
	CUstream s;
	unsigned long long t0;
	int sr = -1, sn = -1;

	s = gpu_open(&buf, count * 4 * (size_t)n);
	NC(ncclCommInitRank(&c, n, id, rank));
	/* warm-up: every rank leaves this sync at the same device time */
	NC(ncclAllReduce((void *)buf, (void *)buf, count, ncclFloat32,
			 ncclSum, c, s));
	CU(cuStreamSynchronize(s));
	if (rank == late)
		usleep((useconds_t)ms * 1000);
	NC(ncclAllReduce((void *)buf, (void *)buf, count, ncclFloat32,
			 ncclSum, c, s));
	t0 = now_ns();
	CU(cuStreamSynchronize(s));
	printf("rank %d pid %d hostwait %llu\n", rank, (int)getpid(),
	       now_ns() - t0);
	/* a group of three collectives: one launch */
	NC(ncclGroupStart());
	NC(ncclAllReduce((void *)buf, (void *)buf, count, ncclFloat16,
			 ncclMax, c, s));
	NC(ncclAllGather((void *)buf, (void *)buf, count / (size_t)n,
			 ncclInt8, c, s));
	NC(ncclReduceScatter((void *)buf, (void *)buf, count / (size_t)n,
			     ncclFloat64, ncclSum, c, s));
	NC(ncclGroupEnd());
	CU(cuStreamSynchronize(s));
	/* a ring exchange in one group: must not deadlock */
	NC(ncclGroupStart());
	NC(ncclSend((void *)buf, 4096, ncclFloat32, (rank + 1) % n, c, s));
	NC(ncclRecv((void *)buf, 4096, ncclFloat32, (rank + n - 1) % n, c,
		    s));
	NC(ncclGroupEnd());
	CU(cuStreamSynchronize(s));
	/* a lone pair, outside any group: rank 1 posts first, late */
	if (rank == 0)
		NC(ncclSend((void *)buf, 1000, ncclInt32, 1, c, s));
	if (rank == 1) {
		usleep(20000);
		NC(ncclRecv((void *)buf, 1000, ncclInt32, 0, c, s));
	}
	CU(cuStreamSynchronize(s));
	NC(ncclBroadcast((void *)buf, (void *)buf, 100, ncclUint8, 0, c, s));
	NC(ncclReduce((void *)buf, (void *)buf, 100, ncclUint8, ncclMin,
		      n - 1, c, s));
	CU(cuStreamSynchronize(s));
	/* odd and even ranks, keyed in reverse */
	NC(ncclCommSplit(c, rank % 2, -rank, &sub, NULL));
	NC(ncclCommUserRank(sub, &sr));
	NC(ncclCommCount(sub, &sn));
	CHECK(sn == (n - rank % 2 + 1) / 2, "split size %d", sn);
	CHECK(sr == sn - 1 - rank / 2, "split rank %d", sr);
	NC(ncclAllReduce((void *)buf, (void *)buf, 10, ncclInt64, ncclSum,
			 sub, s));
	CU(cuStreamSynchronize(s));
	NC(ncclCommDestroy(sub));
	NC(ncclCommDestroy(c));
	CU(cuCtxSynchronize());
	fflush(stdout);
	exit(failures ? 1 : 0);
}

static int check_ranks(int n, int late, int ms)
{
	ncclUniqueId id;
	int i, st, bad = 0;
	pid_t pid;

	NC(ncclGetUniqueId(&id));
	fflush(stdout);
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (!pid)
			rank_main(i, n, id, late, ms);
	}
	while ((pid = wait(&st)) > 0)
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	return bad ? 1 : 0;
}

static int check_initall(int n)
{
	ncclComm_t comms[8];
	CUstream s[8];
	CUdeviceptr buf;
	CUevent ev;
	int i, r;

	if (n < 2 || n > 8)
		return 2;
	s[0] = gpu_open(&buf, 1 << 20);
	for (i = 1; i < n; i++)
		CU(cuStreamCreate(&s[i], CU_STREAM_NON_BLOCKING));
	NC(ncclCommInitAll(comms, n, NULL));
	for (i = 0; i < n; i++) {
		NC(ncclCommUserRank(comms[i], &r));
		CHECK(r == i, "comm %d has rank %d", i, r);
	}
	/* Rank 0 alone in an all-reduce: its stream waits for the others,
	 * and queries and events say so until they come. */
	CU(cuEventCreate(&ev, 0));
	NC(ncclAllReduce((void *)buf, (void *)buf, 16, ncclFloat32, ncclSum,
			 comms[0], s[0]));
	CU(cuEventRecord(ev, s[0]));
	usleep(20000);
	CHECK(cuStreamQuery(s[0]) == CUDA_ERROR_NOT_READY,
	      "stream idle while its all-reduce waits for peers");
	CHECK(cuEventQuery(ev) == CUDA_ERROR_NOT_READY,
	      "event after a waiting all-reduce is done");
	for (i = 1; i < n; i++)
		NC(ncclAllReduce((void *)buf, (void *)buf, 16, ncclFloat32,
				 ncclSum, comms[i], s[i]));
	CU(cuStreamSynchronize(s[0]));
	CHECK(cuEventQuery(ev) == CUDA_SUCCESS, "event not done after sync");
	CU(cuEventDestroy(ev));
	NC(ncclGroupStart());
	for (i = 0; i < n; i++)
		NC(ncclAllReduce((void *)buf, (void *)buf, 1 << 16,
				 ncclFloat32, ncclSum, comms[i], s[i]));
	NC(ncclGroupEnd());
	CU(cuCtxSynchronize());
	for (i = 0; i < n; i++)
		NC(ncclCommDestroy(comms[i]));
	return failures ? 1 : 0;
}

static int check_orphan(void)
{
	ncclUniqueId id;
	ncclResult_t err = ncclSuccess;
	ncclComm_t c;
	CUdeviceptr buf;
	CUstream s;
	int st;
	pid_t pid;

	NC(ncclGetUniqueId(&id));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		NC(ncclCommInitRank(&c, 2, id, 1));
		_exit(0);	/* gone without a word */
	}
	s = gpu_open(&buf, 1 << 20);
	NC(ncclCommInitRank(&c, 2, id, 0));
	/* a zombie, not reaped until the end: it counts as gone too */
	usleep(100000);
	NC(ncclAllReduce((void *)buf, (void *)buf, 1024, ncclFloat32, ncclSum,
			 c, s));
	CU(cuStreamSynchronize(s));
	NC(ncclCommGetAsyncError(c, &err));
	CHECK(err == ncclRemoteError, "async error %d after a peer left",
	      (int)err);
	NC(ncclCommAbort(c));
	waitpid(pid, &st, 0);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "abi"))
		return check_abi();
	if (argc == 5 && !strcmp(argv[1], "ranks"))
		return check_ranks(atoi(argv[2]), atoi(argv[3]),
				   atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "initall"))
		return check_initall(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "orphan"))
		return check_orphan();
	fprintf(stderr, "usage: nccl_check abi | ranks N LATE MS | "
		"initall N | orphan\n");
	return 2;
}
