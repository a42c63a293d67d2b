// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "stream/nccl_api.h"

/* Recordings store these ids: the list only grows at its end. */
_Static_assert(IG_NA_ncclCommInitRank == 1, "enum ig_nccl_api changed");
_Static_assert(IG_NA_ncclAllReduce == 9, "enum ig_nccl_api changed");
_Static_assert(IG_NA_ncclGroupEnd == 21, "enum ig_nccl_api changed");

struct nccl_info {
	const char *name;
	unsigned char cls;
};

static const struct nccl_info apis[IG_NA__MAX] = {
#define IG_NCCL(n, c) [IG_NA_##n] = { #n, IG_NCC_##c },
#include "../../bpf/nccl_api.def"
#undef IG_NCCL
};

static const char *const ops[IG_NA__MAX] = {
	[IG_NA_ncclAllReduce] = "all_reduce",
	[IG_NA_ncclBroadcast] = "broadcast",
	[IG_NA_ncclBcast] = "broadcast",
	[IG_NA_ncclReduce] = "reduce",
	[IG_NA_ncclAllGather] = "all_gather",
	[IG_NA_ncclReduceScatter] = "reduce_scatter",
	[IG_NA_ncclSend] = "send",
	[IG_NA_ncclRecv] = "recv",
	[IG_NA_ncclAlltoAll] = "all_to_all",
	[IG_NA_ncclGather] = "gather",
	[IG_NA_ncclScatter] = "scatter",
};

const char *ig_nccl_api_name(unsigned int api)
{
	return api < IG_NA__MAX ? apis[api].name : NULL;
}

const char *ig_nccl_op_name(unsigned int api)
{
	return api < IG_NA__MAX ? ops[api] : NULL;
}

int ig_nccl_api_by_name(const char *name)
{
	unsigned int i;

	if (!name)
		return -1;
	for (i = 1; i < IG_NA__MAX; i++)
		if (apis[i].name && !strcmp(apis[i].name, name))
			return (int)i;
	return -1;
}

enum ig_nccl_class ig_nccl_class_of(unsigned int api)
{
	return api < IG_NA__MAX ? (enum ig_nccl_class)apis[api].cls : 0;
}

unsigned int ig_nccl_dtype_size(unsigned int dt)
{
	/* nccl.h: int8, uint8, int32, uint32, int64, uint64, float16,
	 * float32, float64, bfloat16, float8e4m3, float8e5m2 */
	static const unsigned char sz[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1 };

	return dt < sizeof(sz) ? sz[dt] : 0;
}

const char *ig_nccl_redop_name(unsigned int op)
{
	static const char *const n[] = { "sum", "prod", "max", "min", "avg" };

	return op < 5 ? n[op] : "premulsum";
}

const char *ig_nccl_kind_name(unsigned int kind)
{
	switch (kind) {
	case IG_NC_COMM: return "comm";
	case IG_NC_COMM_FREE: return "comm_free";
	case IG_NC_COLL: return "coll";
	case IG_NC_GROUP_END: return "group_end";
	case IG_NC_COMM_INFO: return "comm_info";
	}
	return NULL;
}

unsigned long long ig_nccl_bytes(const struct ig_nccl *r)
{
	return (unsigned long long)r->count * ig_nccl_dtype_size(r->dtype);
}

void ig_nccl_dump(FILE *f, const struct ig_nccl *r)
{
	const char *k = ig_nccl_kind_name(r->kind), *api = ig_nccl_api_name(r->api);
	typedef unsigned long long ull;

	fprintf(f, " kind=%s api=%s comm=%#llx id=%#llx rank=%d nranks=%d",
		k ? k : "?", api ? api : "?", (ull)r->comm, (ull)r->id, r->rank,
		r->nranks);
	switch (r->kind) {
	case IG_NC_COLL:
		fprintf(f, " op=%s seq=%llu bytes=%llu count=%llu dtype=%u",
			ig_nccl_op_name(r->api) ? ig_nccl_op_name(r->api) : "?",
			(ull)r->seq, ig_nccl_bytes(r), (ull)r->count, r->dtype);
		if (r->api == IG_NA_ncclAllReduce || r->api == IG_NA_ncclReduce ||
		    r->api == IG_NA_ncclReduceScatter)
			fprintf(f, " redop=%s", ig_nccl_redop_name(r->op));
		if (r->peer >= 0)
			fprintf(f, " peer=%d", r->peer);
		fprintf(f, " stream=%#llx group=%u flags=%#x", (ull)r->stream,
			r->group, r->flags);
		break;
	case IG_NC_COMM:
		fprintf(f, " begin=%llu ret=%d", (ull)r->t_begin, r->ret);
		if (r->arg)
			fprintf(f, " parent=%#llx", (ull)r->arg);
		break;
	case IG_NC_COMM_FREE:
		fprintf(f, " seq=%llu", (ull)r->seq);
		break;
	}
}
