// SPDX-License-Identifier: GPL-2.0
/*
 * simgpu_hook: device work defined by another library in the same process,
 * such as the simulated NCCL (nccl.c), whose collectives wait for other
 * processes' streams.
 *
 * A module whose PTX declares ".entry simgpu_hook" yields a function that
 * is launched like any kernel (cuLaunchKernel and its variants) with two
 * parameters: a function pointer fn of type
 *
 *	unsigned long long fn(void *arg, unsigned long long start_ns);
 *
 * and its argument arg.  When the stream reaches the op, its device thread
 * calls fn(arg, start) without any lock held, start being the op's start on
 * the ideal timeline (CLOCK_MONOTONIC ns); fn may block, and returns the
 * op's end time.  The device thread then waits until that time, writes the
 * op's trace line (kind "kernel") and completes it.  Until then the op
 * counts as pending for every query and synchronization: its duration is
 * unknown in advance.
 */
#include "simgpu.h"

/* kernelParams only: params[0] points at fn, params[1] at arg. */
bool hook_params(void **params, sim_hook_fn *fn, void **arg)
{
	if (!params || !params[0] || !params[1])
		return false;
	*fn = *(sim_hook_fn *)params[0];
	*arg = *(void **)params[1];
	return *fn != NULL;
}

CUresult hook_submit(struct stream *s, sim_hook_fn fn, void *arg)
{
	CUresult r;
	uint64_t seq;
	bool kick;

	sim_lock();
	r = submit_locked(s, OP_KERNEL, 0, NULL, NULL, &seq, &kick);
	if (!r) {
		s->tail->hook = fn;
		s->tail->hook_arg = arg;
		/* The queue's ideal end is no longer known in advance. */
		s->ideal_ok = false;
	}
	sim_unlock();
	if (kick)
		stream_kick(s);
	return r;
}
