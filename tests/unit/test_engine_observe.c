// SPDX-License-Identifier: GPL-2.0
/* The engine's observer (engine_obs.h): the stretches it is shown tile the
 * device's timeline and sum to the report's busy, idle and unresolved
 * time; a gap comes with its causes, largest first, and the waits its
 * attribution walked, in order; without an observer nothing is noted. */
#include "engine/engine_obs.h"
#include "test_engine_gap.h"

#define MAX_SPANS 64

struct seen {
	struct ig_obs_span s[MAX_SPANS];
	struct ig_obs_step steps[IG_OBS_STEPS];
	char cause0[32];
	unsigned int n;
	uint64_t ns[3];		/* by kind */
};

static void on_span(void *ctx, const struct ig_obs_span *o)
{
	struct seen *v = ctx;

	assert_true(o->t1 > o->t0);
	v->ns[o->kind] += o->t1 - o->t0;
	if (v->n == MAX_SPANS)
		return;
	v->s[v->n] = *o;
	if (o->kind == IG_OBS_IDLE) {
		memcpy(v->steps, o->steps, o->nsteps * sizeof(*o->steps));
		snprintf(v->cause0, sizeof(v->cause0), "%s", o->ncauses ? o->causes[0].name : "");
	}
	v->n++;
}

/* The dataloader gap of test_engine_attrib: main waits on a pipe the
 * worker writes after a disk read. */
static struct json_object *dataloader(struct tstream *s, struct ig_engine *e)
{
	begin(s);
	t_proc(s, 1 * MS, IG_PROC_FORK, 200, 200, 100, "pt_data_worker");
	OFF(s, .tid = 200, .t_off = 11 * MS, .t_wake = 41 * MS,
	    .t_on = 41 * MS, .reason = IG_R_STORAGE, .flags = IG_F_IOWAIT | IG_F_DETAIL_NAME,
	    .name = "shard-0.tar");
	OFF(s, .tid = 100, .t_off = 11 * MS, .t_wake = 50 * MS,
	    .t_on = 50 * MS, .reason = IG_R_PIPE, .waker_tid = 200,
	    .waker_comm = "pt_data_worker");
	return finish(s, e);
}

static void test_gap_and_walk(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct ig_engine_obs o = { .span = on_span };
	struct seen v = { 0 };
	const struct ig_obs_span *g = NULL;
	struct json_object *j;
	unsigned int i;

	(void)state;
	o.ctx = &v;
	ig_engine_observe(e, &o);
	j = dataloader(&s, e);
	for (i = 0; i < v.n; i++)
		if (v.s[i].kind == IG_OBS_IDLE)
			g = &v.s[i];
	assert_non_null(g);
	assert_int_equal(g->t0, 10 * MS);
	assert_int_equal(g->t1, 52 * MS);
	assert_int_equal(g->tid, 100);
	assert_int_equal(g->device, 0);
	assert_string_equal(v.cause0, "storage");
	assert_int_equal(g->causes[0].ns, 30 * MS);
	assert_true(g->ncauses >= 2 && g->causes[1].ns <= g->causes[0].ns);
	/* main's pipe wait, then the worker's disk read inside it */
	assert_true(g->nsteps >= 2);
	assert_int_equal(v.steps[0].tid, 100);
	assert_int_equal(v.steps[0].iv.reason, IG_R_PIPE);
	assert_int_equal(v.steps[0].iv.t_on, 50 * MS);
	assert_int_equal(v.steps[1].tid, 200);
	assert_int_equal(v.steps[1].iv.reason, IG_R_STORAGE);
	assert_string_equal(v.steps[1].detail, "shard-0.tar");
	assert_true(v.steps[1].x >= 11 * MS && v.steps[1].y <= 41 * MS);
	/* the stretches add up to what the report says */
	assert_near(S(v.ns[IG_OBS_BUSY] / (double)MS), jd(j, "gpu.busy_s"), EPS);
	assert_near(S(v.ns[IG_OBS_IDLE] / (double)MS), jd(j, "gpu.idle_s"), EPS);
	assert_near(S(v.ns[IG_OBS_UNRES] / (double)MS), jd(j, "gpu.unresolved_s"), EPS);
	done(j, e, &s);
}

/* The same stream with and without an observer: the same report. */
static void test_same_report(void **state)
{
	struct tstream s1 = { 0 }, s2 = { 0 };
	struct ig_engine *e1 = new_engine(0, 0), *e2 = new_engine(0, 0);
	struct ig_engine_obs o = { .span = on_span };
	struct seen v = { 0 };
	struct json_object *j1, *j2;

	(void)state;
	o.ctx = &v;
	ig_engine_observe(e2, &o);
	j1 = dataloader(&s1, e1);
	j2 = dataloader(&s2, e2);
	assert_string_equal(json_object_to_json_string(jpath(j1, "causes")),
			    json_object_to_json_string(jpath(j2, "causes")));
	assert_string_equal(json_object_to_json_string(jpath(j1, "gpu")),
			    json_object_to_json_string(jpath(j2, "gpu")));
	assert_true(v.n > 0);
	done(j1, e1, &s1);
	done(j2, e2, &s2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gap_and_walk),
		cmocka_unit_test(test_same_report),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
