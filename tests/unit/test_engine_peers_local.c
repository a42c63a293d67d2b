// SPDX-License-Identifier: GPL-2.0
/* What one host knows of its ranks' collectives without their peers
 * (docs/design.md §4.9, "Across hosts"): collectives.by_communicator. */
#include "test_engine_nccl.h"

/* Ranks @r0..@r1 of a 4-rank communicator: one host's share. */
static void ranks(struct tstream *s, int r0, int r1)
{
	int r;

	t_meta(s, 0);
	for (r = r0; r <= r1; r++) {
		t_task(s, 0, 100 + r, 100 + r, 1, "trainer");
		t_gpumap(s, 100 + r, r);
		t_nccl(s, 100 + r, 1 * MS, IG_NC_COMM, r, 0, 0);
	}
}

/* Rank @r's earlier work on the stream, proven done by a sync. */
static void work(struct tstream *s, int r, uint64_t b)
{
	t_submit(s, 100 + r, 100 + r, b, L);
	t_sync(s, 100 + r, 100 + r, b + 10 * US, b + 2 * MS, b + 2 * MS + 10 * US, L, b);
}

/* A collective on rank @r launched at @t, its kernel just after, then a
 * sync until @end. */
static void coll(struct tstream *s, int r, uint64_t seq, uint64_t t, uint64_t end)
{
	t_nccl(s, 100 + r, t, IG_NC_COLL, r, seq, 0);
	t_submit(s, 100 + r, 100 + r, t + 10 * US, L);
	t_sync(s, 100 + r, 100 + r, t + 20 * US, end - 10 * US, end, L, t + 10 * US);
}

static struct json_object *entry(struct json_object *j, int rank)
{
	struct json_object *a = jpath(j, "collectives.by_communicator");
	size_t i;

	for (i = 0; i < json_object_array_length(a); i++)
		if (ji(json_object_array_get_idx(a, i), "rank") == rank)
			return json_object_array_get_idx(a, i);
	fail_msg("no by_communicator entry for rank %d", rank);
	return NULL;
}

/* Ranks 2 and 3 on this host, 0 and 1 elsewhere: nothing is matched, yet
 * rank 2's collectives are 41 ms shorter than rank 3's, as much as it
 * launched later. */
static void test_one_host_of_two(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *x;
	uint64_t k, b;
	int r;

	(void)state;
	ranks(&s, 2, 3);
	for (k = 0; k < 3; k++) {
		b = 10 * MS + k * 100 * MS;
		for (r = 2; r <= 3; r++) {
			work(&s, r, b + 1 * MS);
			coll(&s, r, k + 1, r == 2 ? b + 53 * MS : b + 12 * MS, b + 60 * MS);
		}
	}
	t_end(&s, 400 * MS);
	ts_feed(&s, e);
	j = report(e);
	assert_int_equal(ji(j, "collectives.matched"), 0);
	assert_int_equal(json_object_array_length(jpath(j, "stragglers")), 0);
	assert_int_equal(json_object_array_length(jpath(j, "collectives.by_communicator")), 2);
	for (r = 2; r <= 3; r++) {
		x = entry(j, r);
		assert_string_equal(json_object_get_string(jpath(x, "communicator")),
				    "000000001234abcd");
		assert_int_equal(ji(x, "size"), NR);
		assert_int_equal(ji(x, "pid"), 100 + r);
		assert_int_equal(ji(x, "device"), r);
		assert_int_equal(ji(x, "calls"), 3);
		assert_int_equal(ji(x, "ended"), 3);
		/* from its kernel's submission, 10 us after the call, to
		 * the drain the sync proves, 10 us before it returns */
		assert_near(jd(x, "launch_to_end_s"),
			    3 * ((r == 2 ? 7 * MS : 48 * MS) - 20 * US) / 1e9, 1e-9);
	}
	assert_near(jd(entry(j, 3), "launch_to_end_s") - jd(entry(j, 2), "launch_to_end_s"),
		    S(123), 1e-9);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* A collective whose stream drains only after the next one was launched
 * has no end of its own; a grouped one is launched at its group's end. */
static void test_no_end_grouped(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *x;

	(void)state;
	ranks(&s, 0, 0);
	work(&s, 0, 5 * MS);
	/* two collectives back to back, one sync after both */
	t_nccl(&s, 100, 10 * MS, IG_NC_COLL, 0, 1, 0);
	t_submit(&s, 100, 100, 10 * MS + 10 * US, L);
	coll(&s, 0, 2, 11 * MS, 20 * MS);
	/* grouped at 30 ms, the group ends at 35 ms, done at 40 ms */
	t_nccl(&s, 100, 30 * MS, IG_NC_COLL, 0, 3, IG_NCF_GROUPED);
	t_nccl(&s, 100, 35 * MS, IG_NC_GROUP_END, 0, 0, 0);
	t_submit(&s, 100, 100, 35 * MS + 10 * US, L);
	t_sync(&s, 100, 100, 35 * MS + 20 * US, 40 * MS - 10 * US, 40 * MS, L, 35 * MS + 10 * US);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);
	x = entry(j, 0);
	assert_int_equal(ji(x, "calls"), 3);
	assert_int_equal(ji(x, "ended"), 2);
	/* the second from its kernel's submission (10 us after the call),
	 * the grouped one from its group's end */
	assert_near(jd(x, "launch_to_end_s"), (9 * MS - 20 * US + 5 * MS - 10 * US) / 1e9, 1e-9);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_host_of_two),
		cmocka_unit_test(test_no_end_grouped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
