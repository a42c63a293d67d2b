// SPDX-License-Identifier: GPL-2.0
/*
 * trainsim: the kernel mixes of the scenarios that check estimated idle
 * (docs/design.md §4.10): two kernel signatures of different durations,
 * kernels whose duration drifts over the run, and a step's kernels as one
 * CUDA graph.  Everything else about
 * a step is the feeder's.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#include "trainsim.h"

/* The graphs scenario's graph: @n idlegap_spin nodes of @ns each, made
 * once, launched as one exec per step. */
static CUgraphExec step_graph(struct gpu *g, int n, uint64_t ns)
{
	static CUgraphExec exec;
	CUresult (*create)(CUgraph *, unsigned int);
	CUresult (*add)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
			const CUDA_KERNEL_NODE_PARAMS *);
	CUresult (*inst)(CUgraphExec *, CUgraph, unsigned long long);
	unsigned long long dur = ns;
	CUdeviceptr rec = 0;
	void *args[] = { &dur, &rec };
	CUDA_KERNEL_NODE_PARAMS p = { .func = g->spin, .gridDimX = 1,
				      .gridDimY = 1, .gridDimZ = 1,
				      .blockDimX = 1, .blockDimY = 1,
				      .blockDimZ = 1, .kernelParams = args };
	CUgraphNode node, prev;
	CUgraph graph;
	int i;

	if (exec)
		return exec;
	create = (CUresult (*)(CUgraph *, unsigned int))dlsym(g->lib, "cuGraphCreate");
	add = (CUresult (*)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
			    const CUDA_KERNEL_NODE_PARAMS *))
		dlsym(g->lib, "cuGraphAddKernelNode_v2");
	inst = (CUresult (*)(CUgraphExec *, CUgraph, unsigned long long))
		dlsym(g->lib, "cuGraphInstantiateWithFlags");
	if (!create || !add || !inst)
		die("the driver has no CUDA graphs");
	gpu_check(g, create(&graph, 0), "cuGraphCreate");
	for (i = 0; i < n; i++) {
		gpu_check(g, add(&node, graph, i ? &prev : NULL, i ? 1 : 0, &p),
			  "cuGraphAddKernelNode");
		prev = node;
	}
	gpu_check(g, inst(&exec, graph, 0), "cuGraphInstantiate");
	return exec;
}

static void graph_launch(struct gpu *g, CUgraphExec x)
{
	static CUresult (*launch)(CUgraphExec, CUstream);

	if (!launch)
		launch = (CUresult (*)(CUgraphExec, CUstream))dlsym(g->lib, "cuGraphLaunch");
	if (!launch)
		die("the driver has no cuGraphLaunch");
	gpu_check(g, launch(x, g->stream), "cuGraphLaunch");
}

/* Launch idlegap_spin for @ns with @grid blocks: the grid is part of a
 * launch's signature, the duration is not. */
static void spin_grid(struct gpu *g, uint64_t ns, unsigned int grid)
{
	unsigned long long dur = ns;
	CUdeviceptr rec = 0;
	void *args[] = { &dur, &rec };

	gpu_check(g, g->cuLaunchKernel(g->spin, grid, 1, 1, 1, 1, 1, 0,
				       g->stream, args, NULL),
		  "cuLaunchKernel");
}

void kmix_launch(struct gpu *g, enum kmix mix, uint64_t kernel_ns, long step,
		 int k, int nkern, double progress)
{
	switch (mix) {
	case KM_TWO:
		/* one kernel in three long (grid 1), the others a fifth of
		 * it (grid 2); the mix before each sync changes from step
		 * to step, so the syncs tell the two apart */
		if ((k + step) % 3 == 0)
			spin_grid(g, kernel_ns, 1);
		else
			spin_grid(g, kernel_ns / 5, 2);
		break;
	case KM_GRAPH:
		/* the step's kernels as one graph, launched where the first
		 * would be; the feeder's host work after each op stays */
		if (k == 0)
			graph_launch(g, step_graph(g, nkern, kernel_ns));
		break;
	case KM_DRIFT:
		/* from kernel_ns at the start to twice it at the end */
		spin_grid(g, (uint64_t)((double)kernel_ns * (1.0 + progress)), 1);
		break;
	default:
		gpu_spin(g, kernel_ns);
		break;
	}
}
