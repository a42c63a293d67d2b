/* SPDX-License-Identifier: GPL-2.0 */
/* A trace path from the environment, shared by the simulated driver, the
 * simulated NCCL and trainsim: "%p" becomes the process id, "%%" a '%'. */
#ifndef SIMGPU_PATHFMT_H
#define SIMGPU_PATHFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

/* Expands @t into @out (@len bytes, at least 32); true when it names the
 * process id (a file per process). */
static inline bool sim_path_expand(const char *t, char *out, size_t len)
{
	bool per_pid = false;
	size_t o = 0;

	for (; t && *t && o + 24 < len; t++) {
		if (t[0] == '%' && t[1] == 'p') {
			o += (size_t)snprintf(out + o, len - o, "%d", (int)getpid());
			per_pid = true;
			t++;
		} else if (t[0] == '%' && t[1] == '%') {
			out[o++] = '%';
			t++;
		} else {
			out[o++] = *t;
		}
	}
	out[o] = '\0';
	return per_pid;
}

#endif
