// SPDX-License-Identifier: GPL-2.0
/* The estimate a block at a time (engine/estimate/est_block.c, docs/design.md
 * §4.10): a long job's evidence, cut into blocks of a few hundred
 * launches, gives an estimate whose interval holds the truth, near the
 * estimate made at once, with its evidence freed as it goes; the
 * estimated stretches still cover the whole job; a refusal in one block
 * refuses the whole. */
#include <stddef.h>

#include "test_engine_util.h"
#include "engine/estimate/estimate.h"
#include "engine/engine_obs.h"

#define L	IG_STREAM_LEGACY
#define STEPS	400
#define OPS	4
#define KERNEL	(500 * US)	/* the true duration, never recorded */
#define GAP	(600 * US)	/* host work between launches */

/* Per step OPS kernels launched GAP apart, then a sync: @wait, entered
 * 10 us after the last launch, sleeping until its kernel ends; else
 * entered 20 us after its kernel ended (none waits).
 * From @bad_step on, each step launches a function of its own. */
static struct json_object *job_of(struct ig_engine *e, uint32_t steps, bool wait,
				  uint32_t bad_step, double *truth)
{
	struct tstream s = { 0 };
	struct json_object *j;
	uint64_t t = MS, busy_in = 0;
	uint32_t k, i;

	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_gpudev(&s, 0, 100, 0, IG_GD_NVML, -1, NULL);
	for (k = 0; k < steps; k++) {
		uint64_t last = 0, in, end;

		for (i = 0; i < OPS; i++) {
			last = t + i * GAP;
			t_launch(&s, last, k >= bad_step ? 0x2000 + k : 0x1000);
		}
		end = last + KERNEL;
		if (wait) {
			in = last + 10 * US;
			OFF(&s, .tid = 100, .t_off = in + US, .t_wake = end + 5 * US,
			    .t_on = end + 6 * US, .reason = IG_R_FUTEX,
			    .flags = IG_F_FUTEX_BITSET | IG_F_IN_CUDA_SYNC);
			t_sync(&s, 100, 100, in, end + 5 * US, end + 10 * US, L, last);
			busy_in += (OPS - 1) * KERNEL + 10 * US;	/* before the entry */
		} else {
			in = end + 20 * US;
			t_sync(&s, 100, 100, in, 0, in + 5 * US, L, last);
			busy_in += OPS * KERNEL;
		}
		t = end + 12 * MS;	/* host work after the sync */
	}
	t_end(&s, t + MS);
	ts_feed(&s, e);
	ts_free(&s);
	j = report(e);
	*truth = jd(j, "gpu.unresolved_s") - S((double)busy_in / MS);
	return j;
}

static struct json_object *job(struct ig_engine *e, bool wait, uint32_t bad_step,
			       double *truth)
{
	return job_of(e, STEPS, wait, bad_step, truth);
}

static struct ig_engine *engine(uint32_t block)
{
	struct ig_engine_opts o = { .sz = sizeof(o), .est_block = block };
	struct ig_engine *e = ig_engine_new(&o);

	assert_non_null(e);
	return e;
}

static void sum_idle(void *ctx, int dev, uint64_t t0, uint64_t t1, bool idle)
{
	(void)dev;
	if (idle)
		*(uint64_t *)ctx += t1 - t0;
}

/* Blocks of 128 launches and all at once, on the same job. */
static void both(bool wait, const char *method)
{
	struct ig_engine *eb = engine(128), *e1 = engine(0);
	struct json_object *jb, *j1;
	double truth, truth1, est, lo, hi;
	uint64_t idle = 0;
	size_t evb, ev1;

	jb = job(eb, wait, STEPS, &truth);
	j1 = job(e1, wait, STEPS, &truth1);
	assert_near(truth, truth1, 1e-6);
	assert_true(ji(jb, "gpu.estimate_fit.blocks") >= 5);
	assert_int_equal(ji(j1, "gpu.estimate_fit.blocks"), 1);
	assert_null(jpath(jb, "gpu.estimate_refused"));
	assert_string_equal(json_object_get_string(jpath(jb, "gpu.estimate_method")), method);
	est = jd(jb, "gpu.idle_estimated_s");
	lo = jd(jb, "gpu.idle_estimated_low_s");
	hi = jd(jb, "gpu.idle_estimated_high_s");
	assert_true(lo <= est && est <= hi);
	assert_true(lo <= truth + 1e-6 && truth <= hi + 1e-6);
	/* the blocks' estimate is the one made at once, near enough: a
	 * tenth of the unresolved time */
	assert_near(est, jd(j1, "gpu.idle_estimated_s"), 0.1 * jd(jb, "gpu.unresolved_s"));
	assert_true(ji(jb, "gpu.estimate_fit.syncs_checked") >= 20);
	/* the estimated stretches cover every block */
	ig_engine_estimates(eb, sum_idle, &idle);
	assert_near(S((double)idle / MS), est, 1e-5);
	/* and the evidence went as the blocks closed */
	ig_est_bytes(eb, &evb);
	ig_est_bytes(e1, &ev1);
	assert_true(evb * 2 < ev1);
	json_object_put(jb);
	json_object_put(j1);
	ig_engine_free(eb);
	ig_engine_free(e1);
}

static void test_fit_blocks(void **state)
{
	(void)state;
	both(true, "fit");
}

static void test_bound_blocks(void **state)
{
	(void)state;
	both(false, "bound");
}

/* From the middle on each step launches a function of its own: those
 * blocks' bounds fail their check, and the whole is refused, with the
 * reason of the first refused block and the lower end of those that
 * stood. */
static void test_one_refused(void **state)
{
	struct ig_engine *e = engine(128);
	struct json_object *j;
	double truth;

	(void)state;
	j = job(e, false, STEPS / 2, &truth);
	assert_true(ji(j, "gpu.estimate_fit.blocks") >= 5);
	assert_null(jpath(j, "gpu.idle_estimated_s"));
	assert_non_null(jpath(j, "gpu.estimate_refused"));
	assert_int_equal(json_object_array_length(jpath(j, "gpu.estimated_causes")), 0);
	assert_non_null(jpath(j, "gpu.idle_at_least_s"));
	assert_true(jd(j, "gpu.idle_at_least_s") <= truth + 1e-6);
	json_object_put(j);
	ig_engine_free(e);
}

struct seen {
	unsigned int n;
	uint64_t last_t1, unres;
	bool all_have, in_order;
};

static void no_span(void *ctx, const struct ig_obs_span *sp)
{
	(void)ctx;
	(void)sp;
}

static void on_estimate(void *ctx, const struct ig_obs_estimate *x)
{
	struct seen *v = ctx;

	v->in_order &= x->t0 < x->t1 && x->t0 >= v->last_t1 && x->device == 0;
	v->all_have &= x->have && x->low_ns <= x->idle_ns && x->idle_ns <= x->high_ns;
	v->last_t1 = x->t1;
	v->unres += x->unres_ns;
	v->n++;
}

/* Blocks by time, as `idlegap top` asks: each closed block is told to the
 * observer as it closes, in order, with its estimate. */
static void test_blocks_by_time(void **state)
{
	struct ig_engine_opts o = { .sz = sizeof(o), .est_block_s = 0.5 };
	struct ig_engine *e = ig_engine_new(&o);
	struct seen v = { .all_have = true, .in_order = true };
	struct ig_engine_obs ob = { .span = no_span, .estimate = on_estimate, .ctx = &v };
	struct json_object *j;
	double truth;

	(void)state;
	assert_non_null(e);
	ig_engine_observe(e, &ob);
	j = job(e, true, STEPS, &truth);
	/* 400 steps of 13.5 ms: blocks of 0.25-0.5 s, the last one told
	 * by the report alone */
	assert_true(v.n >= 8);
	assert_true(v.in_order);
	assert_true(v.all_have);
	assert_int_equal(ji(j, "gpu.estimate_fit.blocks"), v.n + 1);
	assert_true(S((double)v.unres / MS) < jd(j, "gpu.unresolved_s"));
	assert_null(jpath(j, "gpu.estimate_refused"));
	json_object_put(j);
	ig_engine_free(e);
}

struct peak {
	struct ig_engine *e;
	unsigned int n;
	size_t ev[512];		/* the evidence's bytes at each close */
};

static void on_close(void *ctx, const struct ig_obs_estimate *x)
{
	struct peak *p = ctx;

	(void)x;
	if (p->n < 512)
		ig_est_bytes(p->e, &p->ev[p->n]);
	p->n++;
}

/* A long job (16k launches, blocks of 64): the launches that came
 * between two tries are closed with the next block, so the open block's
 * evidence is as large at the job's end as after its first blocks, and
 * every block but the last closed on the way. */
static void test_open_block_bounded(void **state)
{
	struct ig_engine *e = engine(64);
	struct peak p = { .e = e };
	struct ig_engine_obs ob = { .span = no_span, .estimate = on_close, .ctx = &p };
	struct json_object *j;
	size_t first = 0, last = 0;
	unsigned int i, q;
	double truth;

	(void)state;
	ig_engine_observe(e, &ob);
	j = job_of(e, 4000, true, 4000, &truth);
	assert_true(p.n >= 16000 / 64 - 8 && p.n <= 512);
	q = p.n / 4;
	for (i = 0; i < q; i++) {
		first = p.ev[i] > first ? p.ev[i] : first;
		last = p.ev[p.n - 1 - i] > last ? p.ev[p.n - 1 - i] : last;
	}
	assert_true(last <= first);
	assert_int_equal(ji(j, "gpu.estimate_fit.blocks"), p.n + 1);
	json_object_put(j);
	ig_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit_blocks),
		cmocka_unit_test(test_bound_blocks),
		cmocka_unit_test(test_one_refused),
		cmocka_unit_test(test_blocks_by_time),
		cmocka_unit_test(test_open_block_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
