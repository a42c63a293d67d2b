/* SPDX-License-Identifier: GPL-2.0 */
/* NVML's buffered utilization samples as windows on CLOCK_MONOTONIC
 * (docs/design.md §4.10, "Device counters"), apart from the library so
 * that the conversion is tested without one. */
#ifndef IG_NVML_SAMPLES_H
#define IG_NVML_SAMPLES_H

#include <stdint.h>

#include "host/nvml.h"

/* What one device's reads so far leave for the next. */
struct ig_nvml_sampling {
	unsigned long long last_us;	/* newest sample seen: its end, wall µs */
	uint64_t last_ns;		/* the same end, as its window gave it */
};

struct ig_nvml_util_sample {
	unsigned long long ts_us;	/* the sample's end, wall-clock µs */
	unsigned int pct;		/* busy share since the one before */
};

/* CLOCK_REALTIME minus CLOCK_MONOTONIC now, from the pair of reads
 * closest in time of a few (a thread preempted between two reads would
 * otherwise shift it by the time it lost). */
int64_t ig_nvml_wall_offset(void);

/* The @n samples @v (sorted here, oldest first) newer than the last seen
 * as windows of device @dev to @cb: each from the sample before it, the
 * first one ever seen only starting the next, none across more than 2 s.
 * A window starts exactly where the one before it ended, whatever
 * @off_ns (ig_nvml_wall_offset() at this read) says: consecutive samples
 * share their end.  Their count. */
int ig_nvml_sample_windows(struct ig_nvml_sampling *st, struct ig_nvml_util_sample *v,
			   unsigned int n, int64_t off_ns, unsigned int dev,
			   ig_nvml_win_fn cb, void *ctx);

#endif
