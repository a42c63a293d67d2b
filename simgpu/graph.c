// SPDX-License-Identifier: GPL-2.0
/*
 * CUDA graphs, as much as trainsim's graphs scenario needs: a graph of
 * kernel nodes (cuGraphCreate, cuGraphAddKernelNode), instantiated
 * (cuGraphInstantiate) and launched on a stream (cuGraphLaunch) as one op
 * that lasts its kernels' durations end to end.  Dependencies are taken
 * as a chain: the nodes run one after another.
 */
#include <stdlib.h>

#include "simgpu.h"

struct graph {
	uint64_t ns;		/* the kernels' durations, summed */
	uint32_t nodes;
};

struct graph_exec {
	uint64_t ns;
};

SIM_EXPORT CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	struct graph *g;

	if (!sim_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!phGraph || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (!(g = calloc(1, sizeof(*g))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	sim_lock();
	reg_add(g, OBJ_GRAPH);
	sim_unlock();
	*phGraph = (CUgraph)g;
	return CUDA_SUCCESS;
}

static bool is(const void *p, enum obj_type t)
{
	bool ok;

	sim_lock();
	ok = p && reg_has(p, t);
	sim_unlock();
	return ok;
}

/* idlegap_spin's first parameter is its duration in ns; other kernels
 * take the configured default. */
SIM_EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode,
					    CUgraph hGraph,
					    const CUgraphNode *dependencies,
					    size_t numDependencies,
					    const CUDA_KERNEL_NODE_PARAMS *p)
{
	struct graph *g = (struct graph *)hGraph;
	struct func *f = p ? (struct func *)p->func : NULL;
	uint64_t ns = sim.cfg.kernel_ns;

	(void)dependencies;
	(void)numDependencies;
	if (!phGraphNode || !p || !is(g, OBJ_GRAPH) || !is(f, OBJ_FUNC))
		return CUDA_ERROR_INVALID_VALUE;
	if (f->spin) {
		if (!p->kernelParams || !p->kernelParams[0])
			return CUDA_ERROR_INVALID_VALUE;
		ns = *(const unsigned long long *)p->kernelParams[0];
	}
	g->ns += ns;
	g->nodes++;
	*phGraphNode = (CUgraphNode)(uintptr_t)g->nodes;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec,
						CUgraph hGraph,
						unsigned long long flags)
{
	struct graph *g = (struct graph *)hGraph;
	struct graph_exec *x;

	(void)flags;
	if (!phGraphExec || !is(g, OBJ_GRAPH))
		return CUDA_ERROR_INVALID_VALUE;
	if (!(x = calloc(1, sizeof(*x))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	x->ns = g->ns;
	sim_lock();
	reg_add(x, OBJ_GRAPH_EXEC);
	sim_unlock();
	*phGraphExec = (CUgraphExec)x;
	return CUDA_SUCCESS;
}

SIM_IMPL graph_launch(CUgraphExec hGraphExec, CUstream hStream, bool ptds)
{
	struct graph_exec *x = (struct graph_exec *)hGraphExec;
	struct stream *s;
	CUresult r;

	if (!sim_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ctx_current())
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!is(x, OBJ_GRAPH_EXEC))
		return CUDA_ERROR_INVALID_HANDLE;
	if ((r = stream_resolve(hStream, ptds, &s)))
		return r;
	burn_ns(sim.cfg.launch_ns);
	return stream_submit(s, OP_KERNEL, x->ns, NULL, NULL, NULL);
}

SIM_EXPORT CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	return graph_launch(hGraphExec, hStream, false);
}

SIM_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	return graph_launch(hGraphExec, hStream, true);
}

SIM_EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	if (!is(hGraphExec, OBJ_GRAPH_EXEC))
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	reg_del(hGraphExec);
	sim_unlock();
	free(hGraphExec);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuGraphDestroy(CUgraph hGraph)
{
	if (!is(hGraph, OBJ_GRAPH))
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	reg_del(hGraph);
	sim_unlock();
	free(hGraph);
	return CUDA_SUCCESS;
}
