// SPDX-License-Identifier: GPL-2.0
/*
 * A stand-in libnccl.so.2 for the probe tests: the public entry points of
 * nccl.h with its ABI, doing nothing but keep each communicator's rank
 * and size.  Each function is its own code (no identical-code folding), so
 * each has its own probe.
 */
#include <stdlib.h>
#include <string.h>
#include <nccl.h>

struct ncclComm {
	int rank, nranks;
};

#define F __attribute__((noinline, visibility("default")))

F ncclResult_t ncclGetVersion(int *v) { *v = NCCL_VERSION_CODE; return ncclSuccess; }

F ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
	memset(id, 0, sizeof(*id));
	return ncclSuccess;
}

static ncclResult_t make(ncclComm_t *comm, int nranks, int rank)
{
	*comm = calloc(1, sizeof(**comm));
	if (!*comm)
		return ncclSystemError;
	(*comm)->rank = rank;
	(*comm)->nranks = nranks;
	return ncclSuccess;
}

F ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
	(void)id;
	return make(comm, nranks, rank);
}

F ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id,
				      int rank, ncclConfig_t *config)
{
	(void)id; (void)config;
	return make(comm, nranks, rank + 0);
}

F ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist)
{
	int i;

	(void)devlist;
	for (i = 0; i < ndev; i++)
		if (make(&comm[i], ndev, i))
			return ncclSystemError;
	return ncclSuccess;
}

F ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
			     ncclConfig_t *config)
{
	(void)config; (void)key;
	if (color == NCCL_SPLIT_NOCOLOR) {
		*newcomm = NULL;
		return ncclSuccess;
	}
	return make(newcomm, comm->nranks / 2, comm->rank / 2);
}

F ncclResult_t ncclCommDestroy(ncclComm_t comm) { free(comm); return ncclSuccess; }
F ncclResult_t ncclCommAbort(ncclComm_t comm) { free(comm); return ncclInvalidArgument - 4; }
F ncclResult_t ncclCommCount(const ncclComm_t comm, int *n) { *n = comm->nranks; return ncclSuccess; }
F ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *r) { *r = comm->rank; return ncclSuccess; }

static volatile unsigned long sink;
#define COLL(body) { sink += (unsigned long)(body); return ncclSuccess; }

F ncclResult_t ncclAllReduce(const void *s, void *r, size_t count, ncclDataType_t dt,
			     ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
COLL((size_t)s + (size_t)r + count + dt + op + (size_t)comm + (size_t)stream + 1)
F ncclResult_t ncclBroadcast(const void *s, void *r, size_t count, ncclDataType_t dt,
			     int root, ncclComm_t comm, cudaStream_t stream)
COLL((size_t)s + (size_t)r + count + dt + root + (size_t)comm + (size_t)stream + 2)
F ncclResult_t ncclBcast(void *b, size_t count, ncclDataType_t dt, int root,
			 ncclComm_t comm, cudaStream_t stream)
COLL((size_t)b + count + dt + root + (size_t)comm + (size_t)stream + 3)
F ncclResult_t ncclReduce(const void *s, void *r, size_t count, ncclDataType_t dt,
			  ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
COLL((size_t)s + (size_t)r + count + dt + op + root + (size_t)comm + (size_t)stream + 4)
F ncclResult_t ncclAllGather(const void *s, void *r, size_t count, ncclDataType_t dt,
			     ncclComm_t comm, cudaStream_t stream)
COLL((size_t)s + (size_t)r + count + dt + (size_t)comm + (size_t)stream + 5)
F ncclResult_t ncclReduceScatter(const void *s, void *r, size_t count, ncclDataType_t dt,
				 ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
COLL((size_t)s + (size_t)r + count + dt + op + (size_t)comm + (size_t)stream + 6)
F ncclResult_t ncclSend(const void *s, size_t count, ncclDataType_t dt, int peer,
			ncclComm_t comm, cudaStream_t stream)
COLL((size_t)s + count + dt + peer + (size_t)comm + (size_t)stream + 7)
F ncclResult_t ncclRecv(void *r, size_t count, ncclDataType_t dt, int peer,
			ncclComm_t comm, cudaStream_t stream)
COLL((size_t)r + count + dt + peer + (size_t)comm + (size_t)stream + 8)

static int depth;
F ncclResult_t ncclGroupStart(void) { depth++; return ncclSuccess; }
F ncclResult_t ncclGroupEnd(void) { depth--; return ncclSuccess; }
