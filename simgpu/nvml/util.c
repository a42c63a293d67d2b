// SPDX-License-Identifier: GPL-2.0
/*
 * simnvml's utilization: the share of time the union of every process's
 * executed work covered a GPU, from the machine's busy intervals.  Work is
 * published when it completes (a run of back-to-back ops at the latest
 * every 10 ms), so a window that ends now may miss an op in flight.
 */
#include <stdlib.h>
#include <string.h>

#include "simnvml.h"

/* NVML's utilization sample period: one sample every 1/6 s. */
#define PERIOD_NS (NS / 6)
#define NSAMPLES 120		/* samples kept: 20 s */
#define RATE_NS NS		/* nvmlDeviceGetUtilizationRates' window */
#define GPM_MIN_NS (NS / 10)
#define GPM_MAGIC 0x47504d53u

struct nvmlGpmSample_st {
	uint32_t magic;
	int dev;		/* -1 until taken */
	uint64_t t_ns;
};

/* End of the last complete sample period. */
static uint64_t period_end(void)
{
	return clock_ns(CLOCK_MONOTONIC) / PERIOD_NS * PERIOD_NS;
}

/* The oldest time whose busy intervals are all still held. */
static uint64_t history_start(uint64_t lost_until)
{
	uint64_t created = __atomic_load_n(&machine->created_ns,
					   __ATOMIC_ACQUIRE);

	return lost_until > created ? lost_until : created;
}

static unsigned int pct(uint64_t part, uint64_t whole)
{
	return whole ? (unsigned int)((part * 100 + whole / 2) / whole) : 0;
}

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d,
						  nvmlUtilization_t *u)
{
	uint64_t end = period_end(), lost;
	struct simm_iv *v;
	int i, n;

	NEED_DEV(d, i);
	if (off("SIMNVML_NO_UTILIZATION"))
		return NVML_ERROR_NOT_SUPPORTED;
	if (!u)
		return NVML_ERROR_INVALID_ARGUMENT;
	n = simm_read(machine, (unsigned int)i, end - RATE_NS, 0, &v, &lost);
	if (n < 0)
		return NVML_ERROR_MEMORY;
	u->gpu = pct(simm_covered(v, n, end - RATE_NS, end), RATE_NS);
	u->memory = 0;
	free(v);
	return NVML_SUCCESS;
}

/* Sample periods [first, end) held and newer than last_seen. */
static uint64_t samples_from(uint64_t end, uint64_t lost,
			     unsigned long long last_seen)
{
	uint64_t first = end - NSAMPLES * PERIOD_NS, h = history_start(lost);

	while (first < end && (first < h || to_us(first + PERIOD_NS) <= last_seen))
		first += PERIOD_NS;
	return first;
}

EXPORT nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t d,
					 nvmlSamplingType_t type,
					 unsigned long long last_seen,
					 nvmlValueType_t *val_type,
					 unsigned int *count,
					 nvmlSample_t *samples)
{
	uint64_t end = period_end(), lost, t;
	struct simm_iv *v;
	unsigned int k = 0;
	int i, n;

	NEED_DEV(d, i);
	if (type != NVML_GPU_UTILIZATION_SAMPLES ||
	    off("SIMNVML_NO_SAMPLES"))
		return NVML_ERROR_NOT_SUPPORTED;
	if (!count || !val_type || (samples && !*count))
		return NVML_ERROR_INVALID_ARGUMENT;
	n = simm_read(machine, (unsigned int)i, end - NSAMPLES * PERIOD_NS, 0,
		      &v, &lost);
	if (n < 0)
		return NVML_ERROR_MEMORY;
	*val_type = NVML_VALUE_TYPE_UNSIGNED_INT;
	t = samples_from(end, lost, samples ? last_seen : 0);
	for (; t < end && (!samples || k < *count); t += PERIOD_NS, k++)
		if (samples) {
			samples[k].timeStamp = to_us(t + PERIOD_NS);
			samples[k].sampleValue.uiVal =
				pct(simm_covered(v, n, t, t + PERIOD_NS),
				    PERIOD_NS);
		}
	free(v);
	*count = k;
	return k ? NVML_SUCCESS : NVML_ERROR_NOT_FOUND;
}

/* Each process's share of [from, end) on the device, one per process with
 * some: at most max written to out, the count returned. */
static int by_process(unsigned int dev, uint64_t from, uint64_t end,
		      nvmlProcessUtilizationSample_t *out, unsigned int max)
{
	int32_t pids[SIMM_MAXPROC];
	struct simm_iv *v;
	uint64_t lost, busy;
	unsigned int np, k, w = 0;
	int n;

	np = simm_procs(machine, dev, pids, SIMM_MAXPROC);
	if (np > SIMM_MAXPROC)
		np = SIMM_MAXPROC;
	for (k = 0; k < np; k++) {
		n = simm_read(machine, dev, from, pids[k], &v, &lost);
		if (n < 0)
			return -1;
		busy = simm_covered(v, n, from, end);
		free(v);
		if (!busy)
			continue;
		if (out && w < max) {
			memset(&out[w], 0, sizeof(out[w]));
			out[w].pid = (unsigned int)pids[k];
			out[w].timeStamp = to_us(end);
			out[w].smUtil = pct(busy, end - from);
		}
		w++;
	}
	return (int)w;
}

EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(
	nvmlDevice_t d, nvmlProcessUtilizationSample_t *util,
	unsigned int *count, unsigned long long last_seen)
{
	uint64_t end = period_end(), from, lost;
	struct simm_iv *v;
	int i, n;

	NEED_DEV(d, i);
	if (off("SIMNVML_NO_PROCESS_UTILIZATION"))
		return NVML_ERROR_NOT_SUPPORTED;
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	n = simm_read(machine, (unsigned int)i, end, 0, &v, &lost);
	if (n < 0)
		return NVML_ERROR_MEMORY;
	free(v);
	from = samples_from(end, lost, last_seen);
	if (from >= end)
		return NVML_ERROR_NOT_FOUND;
	n = by_process((unsigned int)i, from, end, util, util ? *count : 0);
	if (n < 0)
		return NVML_ERROR_MEMORY;
	if (!n)
		return NVML_ERROR_NOT_FOUND;
	if (!util || (unsigned int)n > *count) {
		*count = (unsigned int)n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	*count = (unsigned int)n;
	return NVML_SUCCESS;
}

/* ---- GPM ----------------------------------------------------------------- */

EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t d,
					      nvmlGpmSupport_t *s)
{
	int i;

	NEED_DEV(d, i);
	if (!s)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (s->version != NVML_GPM_SUPPORT_VERSION)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	s->isSupportedDevice = !off("SIMNVML_NO_GPM");
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *s)
{
	nvmlReturn_t r = ready();

	if (r)
		return r;
	if (!s)
		return NVML_ERROR_INVALID_ARGUMENT;
	*s = calloc(1, sizeof(**s));
	if (!*s)
		return NVML_ERROR_MEMORY;
	(*s)->magic = GPM_MAGIC;
	(*s)->dev = -1;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t s)
{
	nvmlReturn_t r = ready();

	if (r)
		return r;
	if (!s || s->magic != GPM_MAGIC)
		return NVML_ERROR_INVALID_ARGUMENT;
	s->magic = 0;
	free(s);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t s)
{
	int i;

	NEED_DEV(d, i);
	if (off("SIMNVML_NO_GPM"))
		return NVML_ERROR_NOT_SUPPORTED;
	if (!s || s->magic != GPM_MAGIC)
		return NVML_ERROR_INVALID_ARGUMENT;
	s->dev = i;
	s->t_ns = clock_ns(CLOCK_MONOTONIC);
	return NVML_SUCCESS;
}

/* GRAPHICS_UTIL over [t1, t2): the busy share, in percent. */
static nvmlReturn_t graphics_util(int dev, uint64_t t1, uint64_t t2,
				  double *out)
{
	struct simm_iv *v;
	uint64_t lost;
	int n;

	n = simm_read(machine, (unsigned int)dev, t1, 0, &v, &lost);
	if (n < 0)
		return NVML_ERROR_MEMORY;
	if (t1 < history_start(lost)) {
		free(v);
		return NVML_ERROR_NO_DATA;
	}
	*out = 100.0 * (double)simm_covered(v, n, t1, t2) / (double)(t2 - t1);
	free(v);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *g)
{
	const struct nvmlGpmSample_st *a, *b;
	nvmlReturn_t r = ready();
	unsigned int k;

	if (r)
		return r;
	if (!g)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (g->version != NVML_GPM_METRICS_GET_VERSION)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if (off("SIMNVML_NO_GPM"))
		return NVML_ERROR_NOT_SUPPORTED;
	a = g->sample1;
	b = g->sample2;
	if (!a || !b || a->magic != GPM_MAGIC || b->magic != GPM_MAGIC ||
	    a->dev < 0 || a->dev != b->dev || g->numMetrics > NVML_GPM_METRIC_MAX)
		return NVML_ERROR_INVALID_ARGUMENT;
	/* The counters refresh every 100 ms: closer samples say nothing. */
	if (b->t_ns < a->t_ns + GPM_MIN_NS)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (k = 0; k < g->numMetrics; k++) {
		nvmlGpmMetric_t *m = &g->metrics[k];

		memset(&m->metricInfo, 0, sizeof(m->metricInfo));
		m->value = 0;
		if (m->metricId != NVML_GPM_METRIC_GRAPHICS_UTIL)
			m->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
		else
			m->nvmlReturn = graphics_util(a->dev, a->t_ns, b->t_ns,
						      &m->value);
	}
	return NVML_SUCCESS;
}
