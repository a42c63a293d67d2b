// SPDX-License-Identifier: GPL-2.0
/*
 * NVML's utilization samples as windows (docs/design.md §4.10, "Device
 * counters").  NVML stamps a sample with the wall clock; idlegap's records
 * are on CLOCK_MONOTONIC.  The offset between the two is read at each
 * read of the samples, and a read preempted between its two clock reads
 * is off by the time it lost (milliseconds on a loaded host): converted
 * with it, a sample's end would land apart from where the window before
 * ended, and a run of windows that read 0% (the head, §4.12) would break
 * there.  So a window starts where the one before it ended, and only its
 * end is converted.
 */
#include <time.h>

#include "host/nvml_samples.h"

#define MAX_STEP_US	2000000ULL	/* samples further apart: no window */

static int64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t ig_nvml_wall_offset(void)
{
	int64_t best = INT64_MAX, off = 0;
	int i;

	for (i = 0; i < 3; i++) {
		int64_t m0 = clock_ns(CLOCK_MONOTONIC), r = clock_ns(CLOCK_REALTIME),
			m1 = clock_ns(CLOCK_MONOTONIC);

		if (m1 - m0 < best) {
			best = m1 - m0;
			off = r - (m0 + (m1 - m0) / 2);
		}
	}
	return off;
}

int ig_nvml_sample_windows(struct ig_nvml_sampling *st, struct ig_nvml_util_sample *v,
			   unsigned int n, int64_t off_ns, unsigned int dev,
			   ig_nvml_win_fn cb, void *ctx)
{
	unsigned int i, j;
	int k = 0;

	for (i = 1; i < n; i++)	/* oldest first */
		for (j = i; j > 0 && v[j - 1].ts_us > v[j].ts_us; j--) {
			struct ig_nvml_util_sample t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		struct ig_nvml_win w = { .kind = IG_NVML_SAMPLES, .quant_ppm = 10000 };
		uint64_t end = (uint64_t)((int64_t)(v[i].ts_us * 1000) - off_ns);

		if (v[i].ts_us <= st->last_us)
			continue;
		if (st->last_us && v[i].ts_us - st->last_us <= MAX_STEP_US && v[i].pct <= 100 &&
		    end > st->last_ns) {
			w.t0 = st->last_ns;
			w.t1 = end;
			w.busy_ppm = v[i].pct * 10000;
			cb(ctx, dev, &w);
			k++;
		}
		st->last_us = v[i].ts_us;
		st->last_ns = end;
	}
	return k;
}
