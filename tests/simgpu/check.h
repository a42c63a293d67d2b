/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the simulator's test program: checks that count failures,
 * a kernel module with idlegap_spin, and a parser for the trace file.
 *
 * cuda.h is included with every versioned name visible, so each test calls
 * exactly the entry point it names (cuMemcpyHtoD_v2, cuLaunchKernel_ptsz...).
 */
#ifndef SIMGPU_CHECK_H
#define SIMGPU_CHECK_H

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checks.h"

/* CU_IS(call, want): the call returns the CUresult want. */
#define CU_IS(call, want)                                                 \
	do {                                                              \
		CUresult r_ = (call);                                     \
		CHECK(r_ == (want), "%s returned %d, want %d", #call,     \
		      (int)r_, (int)(want));                              \
	} while (0)
#define CU_OK(call) CU_IS(call, CUDA_SUCCESS)

static const char test_ptx[] =
	".version 7.0\n"
	".target sm_75\n"
	".address_size 64\n"
	".visible .entry idlegap_spin(.param .u64 ns)\n"
	"{\n\tret;\n}\n"
	".visible .entry other_kernel()\n"
	"{\n\tret;\n}\n";

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct top {
	char kind[16];
	char stream[48];
	uint64_t start, end;
};

struct trace {
	struct top *v;
	int n;
};

static struct trace trace_read(const char *path)
{
	struct trace t = { NULL, 0 };
	char line[256];
	FILE *f = fopen(path, "r");
	int cap = 0;

	if (!f)
		return t;
	while (fgets(line, sizeof(line), f)) {
		struct top o;
		unsigned long long s, e;

		if (sscanf(line, "%15s %47s %llu %llu", o.kind, o.stream, &s,
			   &e) != 4)
			continue;
		o.start = s;
		o.end = e;
		if (t.n == cap) {
			cap = cap ? cap * 2 : 64;
			t.v = realloc(t.v, sizeof(*t.v) * (size_t)cap);
			if (!t.v)
				abort();
		}
		t.v[t.n++] = o;
	}
	fclose(f);
	return t;
}

static double dur_ratio(const struct top *o, uint64_t want_ns)
{
	return (double)(o->end - o->start) / (double)want_ns;
}

#endif /* SIMGPU_CHECK_H */
