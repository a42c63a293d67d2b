// SPDX-License-Identifier: GPL-2.0
/*
 * trainsim: the kernel mixes of the scenarios that check estimated idle
 * (docs/design.md §4.9): two kernel signatures of different durations,
 * and kernels whose duration drifts over the run.  Everything else about
 * a step is the feeder's.
 */
#include <stdint.h>

#include "trainsim.h"

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
		 int k, double progress)
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
	case KM_DRIFT:
		/* from kernel_ns at the start to twice it at the end */
		spin_grid(g, (uint64_t)((double)kernel_ns * (1.0 + progress)), 1);
		break;
	default:
		gpu_spin(g, kernel_ns);
		break;
	}
}
