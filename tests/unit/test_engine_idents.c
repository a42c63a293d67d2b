// SPDX-License-Identifier: GPL-2.0
/* Workload identity in the engine (idents.c, docs/design.md §4.9, §7.4):
 * each process's IDENT record names its pod in stragglers[], in each rank
 * of collectives.ranks[] and on its GPU; a forked child has its parent's;
 * a reused pid does not keep the old process's; an exited rank keeps its
 * pod; fields without their NUL are cut, never read past. */
#include "test_engine_nccl.h"
#include "engine/idents.h"

#define U2	"1f0e4b1c-2d3a-4e5f-8a9b-0c1d2e3f4a5b"
#define U3	"99999999-2d3a-4e5f-8a9b-0c1d2e3f4a5b"

static void t_ident(struct tstream *s, uint64_t ts, uint32_t tgid, const char *uid,
		    const char *pod, const char *ns)
{
	union ig_rec *r = ts_new(s, IG_REC_IDENT, sizeof(struct ig_ident), tgid, tgid, ts);

	snprintf(r->id.pod_uid, sizeof(r->id.pod_uid), "%s", uid);
	snprintf(r->id.pod, sizeof(r->id.pod), "%s", pod);
	snprintf(r->id.namespace, sizeof(r->id.namespace), "%s", ns);
	snprintf(r->id.runtime, sizeof(r->id.runtime), "containerd");
	memset(r->id.container, 'a', 64);
}

static struct json_object *rank_of(struct json_object *j, int rank)
{
	struct json_object *a = jpath(j, "collectives.ranks");
	size_t i;

	for (i = 0; i < json_object_array_length(a); i++)
		if (ji(json_object_array_get_idx(a, i), "rank") == rank)
			return json_object_array_get_idx(a, i);
	fail_msg("no rank %d", rank);
	return NULL;
}

static const char *js(struct json_object *j, const char *key)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(j, key, &v));	/* present, maybe null */
	return v ? json_object_get_string(v) : NULL;
}

static void test_pods(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *st, *d;
	union ig_rec *bad;
	uint64_t k, b;
	char *text;
	int r;

	(void)state;
	t_meta(&s, 0);
	for (r = 0; r < NR; r++) {
		t_task(&s, 0, 100 + r, 100 + r, 1, "trainer");
		t_gpumap(&s, 100 + r, r);
	}
	t_ident(&s, 100 * US, 100, "0f0e4b1c-2d3a-4e5f-8a9b-0c1d2e3f4a5b", "trainer-0", "ml");
	t_ident(&s, 101 * US, 90, U2, "trainer-2", "ml");	/* rank 2's launcher */
	t_ident(&s, 102 * US, 101, U3, "stale", "ml");	/* an earlier pid 101 */
	t_ident(&s, 103 * US, 103, U3, "", "");		/* no runtime record */
	/* a record whose fields fill their arrays, no NUL */
	bad = ts_new(&s, IG_REC_IDENT, sizeof(struct ig_ident), 95, 95, 104 * US);
	memset(bad->id.pod_uid, 'x', sizeof(struct ig_ident) - sizeof(struct ig_hdr));
	t_proc(&s, 200 * US, IG_PROC_FORK, 102, 102, 90, "trainer");
	t_proc(&s, 201 * US, IG_PROC_FORK, 101, 101, 91, "trainer");
	t_proc(&s, 202 * US, IG_PROC_EXEC, 102, 102, 0, "trainer");
	for (r = 0; r < NR; r++)
		t_nccl(&s, 100 + r, 1 * MS, IG_NC_COMM, r, 0, 0);
	/* rank 2 reads from storage 40 ms each step; the others wait */
	for (k = 0; k < 3; k++) {
		b = 10 * MS + k * 100 * MS;
		for (r = 0; r < NR; r++) {
			t_submit(&s, 100 + r, 100 + r, b + 1 * MS, L);
			t_sync(&s, 100 + r, 100 + r, b + 1 * MS + 10 * US, b + 11 * MS,
			       b + 11 * MS + 10 * US, L, b + 1 * MS);
		}
		OFF(&s, .tid = 102, .t_off = b + 12 * MS, .t_wake = b + 52 * MS,
		    .t_on = b + 52 * MS, .reason = IG_R_STORAGE, .flags = IG_F_IOWAIT,
		    .name = "shard.bin", .cpu = 1);
		for (r = 0; r < NR; r++) {
			uint64_t t = r == 2 ? b + 53 * MS : b + 12 * MS, end = b + 60 * MS;

			t_nccl(&s, 100 + r, t, IG_NC_COLL, r, k + 1, 0);
			t_submit(&s, 100 + r, 100 + r, t + 10 * US, L);
			t_sync(&s, 100 + r, 100 + r, t + 20 * US, end - 10 * US, end, L,
			       t + 10 * US);
		}
	}
	/* rank 2 ends before the report */
	t_proc(&s, 320 * MS, IG_PROC_GROUP_EXIT, 102, 102, 0, "trainer");
	t_end(&s, 400 * MS);
	ts_feed(&s, e);

	j = report(e);
	st = json_object_array_get_idx(jpath(j, "stragglers"), 0);
	assert_non_null(st);
	assert_int_equal(ji(st, "rank"), 2);
	assert_string_equal(js(st, "pod"), "trainer-2");
	assert_string_equal(js(st, "namespace"), "ml");
	assert_string_equal(js(st, "pod_uid"), U2);
	assert_string_equal(js(rank_of(j, 0), "pod"), "trainer-0");
	/* the reused pid: its parent had none, so has it */
	assert_null(js(rank_of(j, 1), "pod"));
	assert_null(js(rank_of(j, 1), "pod_uid"));
	/* a pod without its runtime record: its UID alone */
	assert_null(js(rank_of(j, 3), "pod"));
	assert_null(js(rank_of(j, 3), "namespace"));
	assert_string_equal(js(rank_of(j, 3), "pod_uid"), U3);
	d = json_object_array_get_idx(jpath(j, "gpu.devices"), 2);
	assert_int_equal(ji(d, "rank"), 2);
	assert_string_equal(js(d, "pod"), "trainer-2");
	d = json_object_array_get_idx(jpath(j, "gpu.devices"), 1);
	assert_null(js(d, "pod"));
	json_object_put(j);

	text = report_text(e);
	assert_non_null(strstr(text, "straggler: rank 2 (pid 102 on testhost pod ml/trainer-2)"));
	assert_non_null(strstr(text, " pod " U3 "\n"));
	free(text);
	/* the cut record: every field a string within its array */
	{
		const struct ig_ident *x = ig_engine_ident_of(e, 95);

		assert_non_null(x);
		assert_int_equal(strlen(x->pod_uid), sizeof(x->pod_uid) - 1);
		assert_int_equal(strlen(x->namespace), sizeof(x->namespace) - 1);
	}
	assert_null(ig_engine_ident_of(e, 91));
	ig_engine_free(e);
	ts_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pods),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
