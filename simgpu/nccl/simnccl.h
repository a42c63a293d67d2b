/* SPDX-License-Identifier: GPL-2.0 */
/*
 * simnccl: a simulated NCCL (libnccl.so.2) on top of the simulated driver,
 * for the processes (ranks) of one host.
 *
 * Internal interfaces.  The exported nccl* entry points live in api.c and
 * are thin wrappers; nothing in the library calls an exported nccl* symbol,
 * so a uprobe on one fires once per application call.  Device work goes to
 * the driver through its public cuLaunchKernel, as one simgpu_hook kernel
 * per launch (see simgpu/hook.c).
 *
 * Ranks meet in a shared file, /dev/shm/simnccl-<id>, named from a hash of
 * the unique id (shm.c).  Each rank's device thread posts when its stream
 * reaches a collective, waits for its peers' posts, and ends the work at
 * the last arrival plus the transfer time (device.c).
 */
#ifndef SIMNCCL_H
#define SIMNCCL_H

#include <cuda.h>
#include <nccl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NCCL_EXPORT __attribute__((visibility("default"), noinline, used))
#define NCCL_IMPL static __attribute__((noinline)) ncclResult_t

#define SN_MAX_RANKS 64
#define SN_COLL_RING 64		/* collective arrivals remembered per rank */
#define SN_P2P_RING 64		/* messages in flight per ordered pair */
#define SN_COMM_MAGIC 0x53434f4du
#define SN_UID_MAGIC "simnccl1"

/* ---- shared memory (one file per communicator) ---- */

struct sn_p2p {
	uint64_t posted;	/* messages whose stream reached them */
	uint64_t consumed;	/* of those, read by the peer */
	uint64_t ts[SN_P2P_RING];	/* arrival of message k at [k % ring] */
};

struct sn_rank {
	int32_t pid;
	int32_t dev;
	uint64_t coll_posted;	/* last collective sequence reached */
	uint64_t coll_ts[SN_COLL_RING];
	uint32_t split_gen;
	int32_t split_color[2], split_key[2];
};

struct sn_shm {
	uint32_t magic;
	uint32_t nranks;
	uint32_t joined;
	uint32_t word;		/* futex: bumped on every post */
	uint32_t aborted;
	uint32_t pad;
	struct sn_rank rank[SN_MAX_RANKS];
	/* send[i][j]: messages from i to j; recv[i][j]: receives posted at
	 * i for messages from j */
	struct sn_p2p send[SN_MAX_RANKS][SN_MAX_RANKS];
	struct sn_p2p recv[SN_MAX_RANKS][SN_MAX_RANKS];
};

/* ---- process-local ---- */

enum sn_kind { SN_ALLREDUCE, SN_BROADCAST, SN_REDUCE, SN_ALLGATHER,
	       SN_REDUCESCATTER, SN_SEND, SN_RECV, SN_NKINDS };

struct sn_task {
	enum sn_kind kind;
	int peer;		/* root, or peer of send/recv; -1: none */
	uint64_t seq;		/* collective sequence or message index */
	uint64_t bytes;		/* count x datatype size */
	uint64_t xfer_ns;
};

struct ncclComm {
	uint32_t magic;
	int rank, nranks, dev;
	uint64_t id;			/* hash of the unique id */
	ncclUniqueId uid;
	char path[64];
	struct sn_shm *shm;
	pthread_mutex_t lock;		/* host-side counters below */
	uint64_t coll_seq;
	uint64_t sent[SN_MAX_RANKS], recvd[SN_MAX_RANKS];
	uint32_t split_gen;
	CUcontext ctx;			/* simgpu_hook loaded for it */
	CUfunction hook;
	uint32_t pending;		/* launches not yet finished */
	uint32_t aborted;
	ncclResult_t async_err;
};

/* One launch: the tasks of one call, or of one group on one comm and
 * stream.  Freed by the device side once run. */
struct sn_launch {
	struct ncclComm *comm;
	CUstream stream;
	int n, cap;
	struct sn_task *t;
};

/* shm.c */
uint64_t sn_hash(const void *p, size_t n);
void sn_futex_wait(uint32_t *w, uint32_t val, uint64_t ns);
void sn_futex_wake(uint32_t *w);
uint64_t sn_now(void);
ncclResult_t sn_join(struct ncclComm *c);
ncclResult_t sn_join_wait(struct ncclComm *c);
void sn_unmap(struct ncclComm *c);
ncclResult_t sn_split_exchange(struct ncclComm *c, int color, int key,
			       int *newrank, int *newsize, ncclUniqueId *uid);
bool sn_peer_gone(struct ncclComm *c, int peer);

/* device.c */
void sn_config(double *bw, uint64_t *lat);
uint64_t sn_xfer_ns(enum sn_kind k, uint64_t bytes, int nranks);
unsigned long long sn_run(void *arg, unsigned long long start);
const char *sn_kind_name(enum sn_kind k);

/* enqueue.c */
ncclResult_t sn_enqueue(struct ncclComm *c, enum sn_kind k, const void *sbuf,
			void *rbuf, size_t count, ncclDataType_t dt, int op,
			int peer, CUstream stream);
ncclResult_t sn_group_start(void);
ncclResult_t sn_group_end(void);
int sn_group_depth(void);

/* error.c: @fmt into the thread's last error (SIMNCCL_DEBUG: printed
 * too); returns @r */
ncclResult_t sn_error(ncclResult_t r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const char *sn_last_error(void);
bool sn_comm_ok(const struct ncclComm *c);

#endif /* SIMNCCL_H */
