/* SPDX-License-Identifier: GPL-2.0 */
/* Records of one NCCL communicator for the engine tests of collectives
 * (test_engine_peers.c, test_engine_peers_local.c). */
#ifndef TEST_ENGINE_NCCL_H
#define TEST_ENGINE_NCCL_H

#include "test_engine_util.h"

#define L	IG_STREAM_LEGACY
#define ID	0x1234abcdULL
#define NR	4

static inline void t_gpumap(struct tstream *s, uint32_t tgid, int dev)
{
	union ig_rec *r = ts_new(s, IG_REC_GPUMAP, sizeof(struct ig_gpumap), tgid, tgid, 0);

	r->g.n = 1;
	r->g.dev[0] = dev;
}

static inline void t_nccl(struct tstream *s, uint32_t tgid, uint64_t ts, unsigned int kind,
		   int rank, uint64_t seq, uint32_t flags)
{
	union ig_rec *r = ts_new(s, IG_REC_NCCL, sizeof(struct ig_nccl), tgid, tgid, ts);

	r->nc.kind = kind;
	r->nc.api = kind == IG_NC_GROUP_END ? IG_NA_ncclGroupEnd :
		    kind == IG_NC_COMM ? IG_NA_ncclCommInitRank : IG_NA_ncclAllReduce;
	r->nc.comm = 0x5000 + tgid;
	r->nc.id = kind == IG_NC_GROUP_END ? 0 : ID;
	r->nc.rank = rank;
	r->nc.nranks = kind == IG_NC_GROUP_END ? 0 : NR;
	r->nc.seq = seq;
	r->nc.stream = L;
	r->nc.count = 1 << 20;
	r->nc.dtype = 7;
	r->nc.flags = flags;
}

#endif
