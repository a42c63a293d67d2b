// SPDX-License-Identifier: GPL-2.0
/* The GPU's own counters where host evidence ends (engine/estimate/est_device.c,
 * docs/design.md §4.10 "Device counters"): a per-op job whose syncs all
 * return at once leaves the launch model too loose for an estimate; its
 * counter's windows (whole percent per 1/6 s, as NVML's samples) give
 * one whose interval holds the truth, near it; without them nothing
 * changes; a GPU with another process on it is labelled shared. */
#include <stddef.h>

#include "test_engine_util.h"
#include "engine/estimate/estimate.h"

#define L	IG_STREAM_LEGACY
#define STEPS	300
#define OPS	4
#define KERNEL	(200 * US)	/* the true duration, never recorded */
#define GAP	(600 * US)	/* host work after each launch */
#define PERIOD	(1000 * MS / 6)

struct ivs {
	uint64_t a[STEPS * OPS], b[STEPS * OPS];
	uint32_t n;
};

static uint64_t busy_in(const struct ivs *v, uint64_t x, uint64_t y)
{
	uint64_t s = 0;
	uint32_t i;

	for (i = 0; i < v->n; i++)
		if (v->b[i] > x && v->a[i] < y)
			s += (v->b[i] < y ? v->b[i] : y) - (v->a[i] > x ? v->a[i] : x);
	return s;
}

/* The counter's windows over [0, @end): whole percent (+@skew points),
 * @nproc processes, each recorded a little after its period ends. */
static void windows(struct tstream *s, const struct ivs *v, uint64_t end,
		    int skew, uint16_t nproc)
{
	uint64_t t;

	for (t = 0; t + PERIOD <= end; t += PERIOD) {
		union ig_rec *r = ts_new(s, IG_REC_NVWIN, sizeof(struct ig_nvwin),
					 0, 0, t + PERIOD + MS);
		uint64_t b = busy_in(v, t, t + PERIOD);
		int pct = (int)((b * 100 + PERIOD / 2) / PERIOD) + skew;

		r->nw.device = 0;
		r->nw.kind = IG_NVW_SAMPLES;
		r->nw.nproc = nproc;
		r->nw.t0 = t;
		r->nw.t1 = t + PERIOD;
		r->nw.busy_ppm = (uint32_t)(pct < 0 ? 0 : pct > 100 ? 100 : pct) * 10000;
		r->nw.quant_ppm = 10000;
	}
}

/* Per step OPS kernels launched GAP apart, each done before the next
 * launch, then a sync entered 20 us after the last ended (at once);
 * with @nwin the counter's windows (@nproc processes on the GPU). */
static struct json_object *job(struct ig_engine *e, bool nwin, uint16_t nproc,
			       double *truth)
{
	static struct ivs v;
	struct tstream s = { 0 };
	struct json_object *j;
	uint64_t t = 50 * MS, a, b;
	uint32_t k, i;

	v.n = 0;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	/* NVML lists it on GPU 0: the counter's device (design §4.2) */
	t_gpudev(&s, 0, 100, 0, IG_GD_NVML, -1, "GPU-aaaa");
	for (k = 0; k < STEPS; k++) {
		uint64_t last = 0, in;

		for (i = 0; i < OPS; i++) {
			last = t + i * GAP;
			t_launch(&s, last, 0x1000 + i % 2);
			v.a[v.n] = last;
			v.b[v.n++] = last + KERNEL;
		}
		in = last + KERNEL + 20 * US;
		t_sync(&s, 100, 100, in, 0, in + 5 * US, L, last);
		t = in + 2 * MS;	/* host work after the sync */
	}
	if (nwin)
		windows(&s, &v, t + 400 * MS, 0, nproc);
	t_end(&s, t + 400 * MS);
	ts_feed(&s, e);
	ts_free(&s);
	j = report(e);
	a = (uint64_t)ji(j, "gpu.span_start_ns");
	b = (uint64_t)ji(j, "gpu.span_end_ns");
	*truth = (double)(b - a - busy_in(&v, a, b)) / 1e9;
	return j;
}

static struct ig_engine *engine(void)
{
	struct ig_engine_opts o = { .sz = sizeof(o) };
	struct ig_engine *e = ig_engine_new(&o);

	assert_non_null(e);
	return e;
}

static bool is_null(struct json_object *j, const char *path)
{
	return jpath(j, path) == NULL;
}

/* The counters give an estimate where the launch model gave none. */
static void test_counters(void **state)
{
	struct ig_engine *e = engine();
	struct json_object *j;
	double truth, idle, lo, hi, est, span;

	(void)state;
	j = job(e, true, 1, &truth);
	assert_string_equal(json_object_get_string(jpath(j, "gpu.estimate_method")), "device");
	idle = jd(j, "gpu.idle_s");
	span = jd(j, "gpu.span_s");
	est = jd(j, "gpu.idle_estimated_s");
	lo = jd(j, "gpu.idle_estimated_low_s");
	hi = jd(j, "gpu.idle_estimated_high_s");
	assert_true(lo <= est && est <= hi);
	assert_true(idle + lo <= truth + 1e-6 && truth <= idle + hi + 1e-6);
	assert_true(fabs(idle + est - truth) <= 0.02 * span);
	assert_true(hi - lo <= 0.05 * span);
	assert_string_equal(json_object_get_string(jpath(j, "gpu.estimate_device.counter")),
			    "utilization_samples");
	assert_false(json_object_get_boolean(jpath(j, "gpu.estimate_device.shared")));
	assert_true(ji(j, "gpu.estimate_device.windows") > 0);
	assert_true(is_null(j, "gpu.estimate_refused"));
	json_object_put(j);
	ig_engine_free(e);
}

/* Without them, the launch model's answer, as before. */
static void test_no_counters(void **state)
{
	struct ig_engine *e = engine();
	struct json_object *j;
	double truth;

	(void)state;
	j = job(e, false, 1, &truth);
	assert_true(is_null(j, "gpu.estimate_device"));
	assert_true(is_null(j, "gpu.estimate_method") ||
		    strcmp(json_object_get_string(jpath(j, "gpu.estimate_method")), "device"));
	json_object_put(j);
	ig_engine_free(e);
}

/* Another process on the GPU: the figure is the GPU's, said so. */
static void test_shared(void **state)
{
	struct ig_engine *e = engine();
	struct json_object *j;
	double truth;

	(void)state;
	j = job(e, true, 2, &truth);
	assert_true(json_object_get_boolean(jpath(j, "gpu.estimate_device.shared")));
	assert_int_equal(ji(j, "gpu.estimate_device.processes_on_gpu"), 2);
	assert_true(json_object_get_boolean(jpath(j, "gpu.estimate_device.device_wide")));
	json_object_put(j);
	ig_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_no_counters),
		cmocka_unit_test(test_shared),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
