// SPDX-License-Identifier: GPL-2.0
/* Capture paused between the agent's windows (bpf/maps.bpf.h, paused). */
#include <errno.h>
#include <bpf/bpf.h>
#include "probes/tracer_int.h"
#include "idlegap.skel.h"

int ig_tracer_pause(struct ig_tracer *t, bool paused)
{
	__u32 zero = 0, v = paused;

	if (bpf_map__update_elem(t->skel->maps.paused, &zero, sizeof(zero),
				 &v, sizeof(v), BPF_ANY))
		return -errno;
	return 0;
}
