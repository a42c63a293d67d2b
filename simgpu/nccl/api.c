// SPDX-License-Identifier: GPL-2.0
/*
 * Entry points with nccl.h's signatures: communicators, errors, and the
 * collectives.  Each exported function is a few instructions around an
 * out-of-line implementation, and none is called from inside the library.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "simnccl.h"

#define CONFIG_MAGIC 0xcafebeefu

/* ---- communicators ------------------------------------------------------ */

NCCL_IMPL unique_id(ncclUniqueId *out)
{
	struct { uint64_t rnd[2]; int32_t pid; uint64_t t; } s;

	if (!out)
		return sn_error(ncclInvalidArgument, "uniqueId is NULL");
	if (getrandom(s.rnd, sizeof(s.rnd), 0) != sizeof(s.rnd))
		s.rnd[0] = s.rnd[1] = sn_hash(&s, sizeof(s));
	s.pid = (int32_t)getpid();
	s.t = sn_now();
	memset(out, 0, sizeof(*out));
	memcpy(out->internal, SN_UID_MAGIC, 8);
	memcpy(out->internal + 8, &s, sizeof(s));
	return ncclSuccess;
}

static struct ncclComm *comm_new(int nranks, const ncclUniqueId *uid,
				 int rank, int dev)
{
	struct ncclComm *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->magic = SN_COMM_MAGIC;
	c->rank = rank;
	c->nranks = nranks;
	c->dev = dev;
	c->uid = *uid;
	c->id = sn_hash(uid, sizeof(*uid));
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

static void comm_free(struct ncclComm *c)
{
	sn_unmap(c);
	c->magic = 0;
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static ncclResult_t check_config(const ncclConfig_t *cfg)
{
	if (cfg && (cfg->magic != CONFIG_MAGIC ||
		    cfg->size < offsetof(ncclConfig_t, blocking)))
		return sn_error(ncclInvalidArgument,
				"config not set with NCCL_CONFIG_INITIALIZER");
	return ncclSuccess;
}

NCCL_IMPL init_rank(ncclComm_t *out, int nranks, const ncclUniqueId *uid,
		    int rank, const ncclConfig_t *cfg)
{
	struct ncclComm *c;
	ncclResult_t r;

	if (!out)
		return sn_error(ncclInvalidArgument, "comm is NULL");
	*out = NULL;
	if ((r = check_config(cfg)))
		return r;
	if (nranks < 1 || nranks > SN_MAX_RANKS)
		return sn_error(ncclInvalidArgument,
				"nranks %d outside 1..%d", nranks,
				SN_MAX_RANKS);
	if (rank < 0 || rank >= nranks)
		return sn_error(ncclInvalidArgument, "rank %d outside 0..%d",
				rank, nranks - 1);
	if (memcmp(uid->internal, SN_UID_MAGIC, 8))
		return sn_error(ncclInvalidArgument,
				"not a unique id from ncclGetUniqueId");
	if (!(c = comm_new(nranks, uid, rank, 0)))
		return sn_error(ncclSystemError, "out of memory");
	if ((r = sn_join(c)) || (r = sn_join_wait(c))) {
		comm_free(c);
		return r;
	}
	*out = c;
	return ncclSuccess;
}

NCCL_IMPL init_all(ncclComm_t *comms, int ndev, const int *devlist)
{
	ncclUniqueId uid;
	ncclResult_t r;
	int i, j;

	if (!comms)
		return sn_error(ncclInvalidArgument, "comms is NULL");
	if (ndev < 1 || ndev > SN_MAX_RANKS)
		return sn_error(ncclInvalidArgument, "ndev %d outside 1..%d",
				ndev, SN_MAX_RANKS);
	if ((r = unique_id(&uid)))
		return r;
	for (i = 0; i < ndev; i++) {
		comms[i] = comm_new(ndev, &uid, i, devlist ? devlist[i] : i);
		if (!comms[i]) {
			r = sn_error(ncclSystemError, "out of memory");
			break;
		}
		if ((r = sn_join(comms[i]))) {
			comm_free(comms[i]);
			break;
		}
	}
	for (j = 0; !r && j < ndev; j++)
		r = sn_join_wait(comms[j]);
	if (r) {
		for (j = 0; j < i; j++)
			comm_free(comms[j]);
		for (j = 0; j < ndev; j++)
			comms[j] = NULL;
	}
	return r;
}

NCCL_IMPL comm_split(ncclComm_t comm, int color, int key,
		     ncclComm_t *newcomm, const ncclConfig_t *cfg)
{
	ncclUniqueId uid;
	ncclResult_t r;
	int rank = 0, size = 0;

	if (!sn_comm_ok(comm) || !newcomm)
		return sn_error(ncclInvalidArgument, "invalid argument");
	*newcomm = NULL;
	if ((r = check_config(cfg)))
		return r;
	if (color < 0 && color != NCCL_SPLIT_NOCOLOR)
		return sn_error(ncclInvalidArgument, "color %d", color);
	if ((r = sn_split_exchange(comm, color, key, &rank, &size, &uid)))
		return r;
	if (color == NCCL_SPLIT_NOCOLOR)
		return ncclSuccess;
	if (!(*newcomm = comm_new(size, &uid, rank, comm->dev)))
		return sn_error(ncclSystemError, "out of memory");
	if ((r = sn_join(*newcomm)) || (r = sn_join_wait(*newcomm))) {
		comm_free(*newcomm);
		*newcomm = NULL;
	}
	return r;
}

/* Waits until the device side has run every launch of the communicator. */
static void drain(struct ncclComm *c)
{
	struct timespec ms = { 0, 1000000 };

	while (__atomic_load_n(&c->pending, __ATOMIC_ACQUIRE))
		nanosleep(&ms, NULL);
}

NCCL_IMPL comm_finalize(ncclComm_t comm)
{
	if (!sn_comm_ok(comm))
		return sn_error(ncclInvalidArgument, "invalid communicator");
	drain(comm);
	return ncclSuccess;
}

NCCL_IMPL comm_destroy(ncclComm_t comm, bool abort)
{
	if (!comm && abort)
		return ncclSuccess;
	if (!sn_comm_ok(comm))
		return sn_error(ncclInvalidArgument, "invalid communicator");
	if (abort) {
		/* Peers blocked in this communicator give up too. */
		__atomic_store_n(&comm->aborted, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&comm->shm->aborted, 1, __ATOMIC_RELEASE);
		__atomic_fetch_add(&comm->shm->word, 1, __ATOMIC_RELEASE);
		sn_futex_wake(&comm->shm->word);
	}
	drain(comm);
	comm_free(comm);
	return ncclSuccess;
}

NCCL_IMPL comm_query(const struct ncclComm *c, int *out, int what)
{
	if (!sn_comm_ok(c))
		return sn_error(ncclInvalidArgument, "invalid communicator");
	if (!out)
		return sn_error(ncclInvalidArgument, "output is NULL");
	*out = what == 0 ? c->nranks : what == 1 ? c->rank : c->dev;
	return ncclSuccess;
}

NCCL_IMPL async_error(ncclComm_t comm, ncclResult_t *out)
{
	if (!sn_comm_ok(comm) || !out)
		return sn_error(ncclInvalidArgument, "invalid argument");
	*out = __atomic_load_n(&comm->async_err, __ATOMIC_ACQUIRE);
	return ncclSuccess;
}

static const char *error_string(ncclResult_t r)
{
	switch (r) {
	case ncclSuccess: return "no error";
	case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
	case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
	case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
	case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	case ncclRemoteError: return "remote process exited or there was a network error";
	case ncclInProgress: return "NCCL operation in progress";
	default: return "unknown result code";
	}
}

/* ---- exported ----------------------------------------------------------- */

NCCL_EXPORT ncclResult_t ncclGetVersion(int *version)
{
	if (!version)
		return sn_error(ncclInvalidArgument, "version is NULL");
	*version = NCCL_VERSION_CODE;
	return ncclSuccess;
}

NCCL_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId)
{
	return unique_id(uniqueId);
}

NCCL_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks,
					  ncclUniqueId commId, int rank)
{
	return init_rank(comm, nranks, &commId, rank, NULL);
}

NCCL_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks,
						ncclUniqueId commId, int rank,
						ncclConfig_t *config)
{
	return init_rank(comm, nranks, &commId, rank, config);
}

NCCL_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev,
					 const int *devlist)
{
	return init_all(comm, ndev, devlist);
}

NCCL_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
				       ncclComm_t *newcomm,
				       ncclConfig_t *config)
{
	return comm_split(comm, color, key, newcomm, config);
}

NCCL_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
	return comm_finalize(comm);
}

NCCL_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	return comm_destroy(comm, false);
}

NCCL_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm)
{
	return comm_destroy(comm, true);
}

NCCL_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm,
					       ncclResult_t *asyncError)
{
	return async_error(comm, asyncError);
}

NCCL_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
	return comm_query(comm, count, 0);
}

NCCL_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
	return comm_query(comm, rank, 1);
}

NCCL_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device)
{
	return comm_query(comm, device, 2);
}

NCCL_EXPORT const char *ncclGetErrorString(ncclResult_t result)
{
	return error_string(result);
}

NCCL_EXPORT const char *ncclGetLastError(ncclComm_t comm)
{
	(void)comm;
	return sn_last_error();
}

NCCL_EXPORT ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff,
				       size_t count, ncclDataType_t datatype,
				       ncclRedOp_t op, ncclComm_t comm,
				       cudaStream_t stream)
{
	return sn_enqueue(comm, SN_ALLREDUCE, sendbuff, recvbuff, count,
			  datatype, (int)op, -1, (CUstream)stream);
}

NCCL_EXPORT ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff,
				       size_t count, ncclDataType_t datatype,
				       int root, ncclComm_t comm,
				       cudaStream_t stream)
{
	return sn_enqueue(comm, SN_BROADCAST, sendbuff, recvbuff, count,
			  datatype, 0, root, (CUstream)stream);
}

NCCL_EXPORT ncclResult_t ncclBcast(void *buff, size_t count,
				   ncclDataType_t datatype, int root,
				   ncclComm_t comm, cudaStream_t stream)
{
	return sn_enqueue(comm, SN_BROADCAST, buff, buff, count, datatype, 0,
			  root, (CUstream)stream);
}

NCCL_EXPORT ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff,
				    size_t count, ncclDataType_t datatype,
				    ncclRedOp_t op, int root, ncclComm_t comm,
				    cudaStream_t stream)
{
	return sn_enqueue(comm, SN_REDUCE, sendbuff, recvbuff, count,
			  datatype, (int)op, root, (CUstream)stream);
}

NCCL_EXPORT ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff,
				       size_t sendcount,
				       ncclDataType_t datatype,
				       ncclComm_t comm, cudaStream_t stream)
{
	return sn_enqueue(comm, SN_ALLGATHER, sendbuff, recvbuff, sendcount,
			  datatype, 0, -1, (CUstream)stream);
}

NCCL_EXPORT ncclResult_t ncclReduceScatter(const void *sendbuff,
					   void *recvbuff, size_t recvcount,
					   ncclDataType_t datatype,
					   ncclRedOp_t op, ncclComm_t comm,
					   cudaStream_t stream)
{
	return sn_enqueue(comm, SN_REDUCESCATTER, sendbuff, recvbuff,
			  recvcount, datatype, (int)op, -1, (CUstream)stream);
}

NCCL_EXPORT ncclResult_t ncclSend(const void *sendbuff, size_t count,
				  ncclDataType_t datatype, int peer,
				  ncclComm_t comm, cudaStream_t stream)
{
	return sn_enqueue(comm, SN_SEND, sendbuff, NULL, count, datatype, 0,
			  peer, (CUstream)stream);
}

NCCL_EXPORT ncclResult_t ncclRecv(void *recvbuff, size_t count,
				  ncclDataType_t datatype, int peer,
				  ncclComm_t comm, cudaStream_t stream)
{
	return sn_enqueue(comm, SN_RECV, NULL, recvbuff, count, datatype, 0,
			  peer, (CUstream)stream);
}

NCCL_EXPORT ncclResult_t ncclGroupStart(void)
{
	return sn_group_start();
}

NCCL_EXPORT ncclResult_t ncclGroupEnd(void)
{
	return sn_group_end();
}
