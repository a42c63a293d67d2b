/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one-gap fixture of the attribution tests: begin() opens a gap the
 * main thread drains at 10 ms, the test fills what happened in it,
 * finish() closes it at 52 ms and checks that every ns of it landed in
 * exactly one cause.
 */
#ifndef TEST_ENGINE_GAP_H
#define TEST_ENGINE_GAP_H

#include "test_engine_util.h"

#define L	IG_STREAM_LEGACY
#define EPS	1e-9
#define GAP_MS	42	/* every scenario's gap is [10, 52] ms */

/* Main thread 100 of python3 (pid 100) drains the GPU at 10 ms and
 * submits again at 52 ms; the scenario fills what it did in between. */
static inline void begin(struct tstream *s)
{
	t_meta(s, 0);
	t_task(s, 0, 100, 100, 1, "python3");
	t_task(s, 0, 101, 100, 1, "python3");
	/* NVML lists it on GPU 0 */
	t_gpudev(s, 0, 100, 0, IG_GD_NVML, -1, NULL);
	t_submit(s, 100, 100, 5 * MS, L);
	t_sync(s, 100, 100, 6 * MS, 0, 10 * MS, L, 5 * MS);
}

static inline struct json_object *finish(struct tstream *s, struct ig_engine *e)
{
	struct json_object *j;
	struct json_object *c;
	size_t i;
	double sum = 0, share = 0;

	t_submit(s, 100, 100, 52 * MS, L);
	t_end(s, 100 * MS);
	ts_feed(s, e);
	j = report(e);
	assert_int_equal(ji(j, "gpu.gaps"), 1);
	assert_near(jd(j, "gpu.idle_s"), S(GAP_MS), EPS);
	/* every ns lands in exactly one cause */
	c = jpath(j, "causes");
	for (i = 0; i < json_object_array_length(c); i++) {
		sum += jd(json_object_array_get_idx(c, i), "seconds");
		share += jd(json_object_array_get_idx(c, i), "share");
	}
	assert_near(sum, S(GAP_MS), 1e-6);
	assert_near(share, 1.0, 1e-9);
	return j;
}

static inline void done(struct json_object *j, struct ig_engine *e,
		 struct tstream *s)
{
	json_object_put(j);
	ig_engine_free(e);
	ts_free(s);
}

#endif
