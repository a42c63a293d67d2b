// SPDX-License-Identifier: GPL-2.0
/*
 * From calls to launches.  Outside a group, each collective, send or
 * receive is one launch; between ncclGroupStart and the outermost
 * ncclGroupEnd, calls are collected and ncclGroupEnd launches them: one
 * launch per (communicator, stream), in the order of their first call.
 * A launch is one cuLaunchKernel of the driver's simgpu_hook kernel on the
 * call's stream, as real NCCL launches one kernel per group and device.
 */
#include <stdlib.h>
#include <string.h>

#include "simnccl.h"

/* A kernel that does nothing on a GPU: the simulated driver runs
 * simgpu_hook's function instead (simgpu/hook.c). */
static const char hook_ptx[] =
	".version 7.0\n"
	".target sm_75\n"
	".address_size 64\n"
	".visible .entry simgpu_hook(\n"
	"\t.param .u64 simgpu_hook_fn,\n"
	"\t.param .u64 simgpu_hook_arg\n"
	")\n"
	"{\n"
	"\tret;\n"
	"}\n";

static __thread int group_depth;
static __thread struct sn_launch **group;
static __thread int group_n, group_cap;
static __thread ncclResult_t group_err;

int sn_group_depth(void)
{
	return group_depth;
}

static size_t type_size(ncclDataType_t dt)
{
	switch (dt) {
	case ncclInt8: case ncclUint8:
	case ncclFloat8e4m3: case ncclFloat8e5m2:
		return 1;
	case ncclFloat16: case ncclBfloat16:
		return 2;
	case ncclInt32: case ncclUint32: case ncclFloat32:
		return 4;
	case ncclInt64: case ncclUint64: case ncclFloat64:
		return 8;
	default:
		return 0;
	}
}

static struct sn_launch *launch_new(struct ncclComm *c, CUstream stream)
{
	struct sn_launch *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->comm = c;
	l->stream = stream;
	return l;
}

static void launch_free(struct sn_launch *l)
{
	if (l) {
		free(l->t);
		free(l);
	}
}

static ncclResult_t launch_add(struct sn_launch *l, const struct sn_task *t)
{
	struct sn_task *v;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 4;
		v = realloc(l->t, sizeof(*v) * (size_t)l->cap);
		if (!v)
			return sn_error(ncclSystemError, "out of memory");
		l->t = v;
	}
	l->t[l->n++] = *t;
	return ncclSuccess;
}

/* The hook function for the current context, loaded once per context. */
static ncclResult_t load_hook(struct ncclComm *c)
{
	CUcontext ctx = NULL;
	CUmodule mod;
	CUfunction f;
	CUresult r;

	if ((r = cuCtxGetCurrent(&ctx)) || !ctx)
		return sn_error(ncclUnhandledCudaError,
				"no current CUDA context (%d)", (int)r);
	if (ctx == c->ctx)
		return ncclSuccess;
	if ((r = cuModuleLoadData(&mod, hook_ptx)) ||
	    (r = cuModuleGetFunction(&f, mod, "simgpu_hook")))
		return sn_error(ncclUnhandledCudaError,
				"cannot load the collective kernel (%d); is "
				"this the simulated driver?", (int)r);
	c->ctx = ctx;
	c->hook = f;
	return ncclSuccess;
}

/* Hands the launch to the driver, which owns it from then on. */
static ncclResult_t launch_submit(struct sn_launch *l)
{
	struct ncclComm *c = l->comm;
	unsigned long long (*fn)(void *, unsigned long long) = sn_run;
	void *arg = l, *params[] = { &fn, &arg };
	ncclResult_t res;
	CUresult r;

	pthread_mutex_lock(&c->lock);
	res = load_hook(c);
	pthread_mutex_unlock(&c->lock);
	if (res) {
		launch_free(l);
		return res;
	}
	__atomic_fetch_add(&c->pending, 1, __ATOMIC_ACQ_REL);
	r = cuLaunchKernel(c->hook, 1, 1, 1, 512, 1, 1, 0, l->stream, params,
			   NULL);
	if (r) {
		__atomic_fetch_sub(&c->pending, 1, __ATOMIC_ACQ_REL);
		launch_free(l);
		/* the ranks' sequences no longer match */
		c->async_err = ncclUnhandledCudaError;
		return sn_error(ncclUnhandledCudaError,
				"cuLaunchKernel failed (%d)", (int)r);
	}
	return ncclSuccess;
}

static struct sn_launch *group_slot(struct ncclComm *c, CUstream stream)
{
	struct sn_launch **v;
	int i;

	for (i = 0; i < group_n; i++)
		if (group[i]->comm == c && group[i]->stream == stream)
			return group[i];
	if (group_n == group_cap) {
		group_cap = group_cap ? group_cap * 2 : 8;
		v = realloc(group, sizeof(*v) * (size_t)group_cap);
		if (!v)
			return NULL;
		group = v;
	}
	if (!(group[group_n] = launch_new(c, stream)))
		return NULL;
	return group[group_n++];
}

static ncclResult_t check(struct ncclComm *c, enum sn_kind k,
			  const void *sbuf, const void *rbuf, size_t count,
			  ncclDataType_t dt, int op, int peer)
{
	if (!sn_comm_ok(c))
		return sn_error(ncclInvalidArgument, "invalid communicator");
	if (__atomic_load_n(&c->aborted, __ATOMIC_ACQUIRE))
		return sn_error(ncclInvalidUsage, "communicator aborted");
	if (!type_size(dt))
		return sn_error(ncclInvalidArgument, "invalid datatype %d",
				(int)dt);
	if ((k == SN_ALLREDUCE || k == SN_REDUCE || k == SN_REDUCESCATTER) &&
	    (op < 0 || op >= ncclNumOps))
		return sn_error(ncclInvalidArgument, "invalid reduction %d",
				op);
	if ((k == SN_BROADCAST || k == SN_REDUCE || k == SN_SEND ||
	     k == SN_RECV) && (peer < 0 || peer >= c->nranks))
		return sn_error(ncclInvalidArgument, "%s: invalid %s %d",
				sn_kind_name(k),
				k == SN_SEND || k == SN_RECV ? "peer" : "root",
				peer);
	if (count && k != SN_RECV && !sbuf && !(k == SN_BROADCAST &&
						 c->rank != peer))
		return sn_error(ncclInvalidArgument, "%s: sendbuff is NULL",
				sn_kind_name(k));
	if (count && k != SN_SEND && !rbuf &&
	    !(k == SN_REDUCE && c->rank != peer))
		return sn_error(ncclInvalidArgument, "%s: recvbuff is NULL",
				sn_kind_name(k));
	return ncclSuccess;
}

ncclResult_t sn_enqueue(struct ncclComm *c, enum sn_kind k, const void *sbuf,
			void *rbuf, size_t count, ncclDataType_t dt, int op,
			int peer, CUstream stream)
{
	struct sn_task t = { .kind = k, .peer = -1 };
	struct sn_launch *l;
	ncclResult_t r;

	if ((r = check(c, k, sbuf, rbuf, count, dt, op, peer))) {
		if (group_depth)
			group_err = r;
		return r;
	}
	if (k == SN_BROADCAST || k == SN_REDUCE || k == SN_SEND ||
	    k == SN_RECV)
		t.peer = peer;
	t.bytes = (uint64_t)count * type_size(dt);
	t.xfer_ns = sn_xfer_ns(k, t.bytes, c->nranks);
	l = group_depth ? group_slot(c, stream) : launch_new(c, stream);
	if (!l)
		return sn_error(ncclSystemError, "out of memory");
	/* Sequences follow call order, which must be the same on every
	 * rank, as NCCL requires. */
	pthread_mutex_lock(&c->lock);
	if (k == SN_SEND)
		t.seq = ++c->sent[peer];
	else if (k == SN_RECV)
		t.seq = ++c->recvd[peer];
	else
		t.seq = ++c->coll_seq;
	pthread_mutex_unlock(&c->lock);
	if ((r = launch_add(l, &t))) {
		if (!group_depth)
			launch_free(l);
		else
			group_err = r;
		return r;
	}
	return group_depth ? ncclSuccess : launch_submit(l);
}

ncclResult_t sn_group_start(void)
{
	if (!group_depth++)
		group_err = ncclSuccess;
	return ncclSuccess;
}

/* The outermost end launches everything collected, even after an error in
 * one call, so that the ranks' sequences stay matched. */
ncclResult_t sn_group_end(void)
{
	ncclResult_t r, first;
	int i;

	if (!group_depth)
		return sn_error(ncclInvalidUsage,
				"ncclGroupEnd without ncclGroupStart");
	if (--group_depth)
		return ncclSuccess;
	first = group_err;
	for (i = 0; i < group_n; i++) {
		r = launch_submit(group[i]);
		if (r && !first)
			first = r;
	}
	group_n = 0;
	group_err = ncclSuccess;
	return first;
}
