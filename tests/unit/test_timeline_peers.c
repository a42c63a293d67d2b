// SPDX-License-Identifier: GPL-2.0
/*
 * The timeline's collectives (docs/design.md §7.8): a wait for peers that
 * matters starts a flow to a late slice on the late rank's track, one
 * that does not starts none, late slices that could not nest start none,
 * and past IG_TIMELINE_PEER_FLOWS the waits are counted, not flowed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "views/timeline_build.h"

struct feed {
	struct ig_tlb *b;
	struct ig_engine_obs o;
	char path[64];
};

static void feed_open(struct feed *f)
{
	int fd;

	snprintf(f->path, sizeof(f->path), "/tmp/test_timeline_peers.XXXXXX");
	fd = mkstemp(f->path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(ig_timeline_open(&f->b, f->path), 0);
	ig_timeline_observer(f->b, &f->o);
}

static void feed_close(struct feed *f, struct ig_perfetto_stats *st)
{
	assert_int_equal(ig_timeline_close(f->b, st), 0);
	unlink(f->path);
}

/* Rank @rank (pid 100 + rank) in a collective [t0, t1) waiting until
 * @until for rank 2 (pid 102), late for storage. */
static void coll(struct feed *f, int32_t rank, uint64_t t0, uint64_t until, uint64_t t1)
{
	struct ig_obs_span s = {
		.kind = IG_OBS_COLLECTIVE, .device = rank, .t0 = t0, .t1 = t1,
		.tid = 100 + rank, .tgid = 100 + rank, .wait_until = until,
		.rank = rank, .late_rank = 2, .late_pid = 102, .late_tid = 102,
		.op = "all_reduce", .ncauses = until > t0,
	};

	s.causes[0].name = "storage";
	s.causes[0].ns = until - t0;
	f->o.span(f->o.ctx, &s);
}

static void flows(void **state)
{
	struct ig_perfetto_stats st;
	struct feed f;

	(void)state;
	feed_open(&f);
	/* ranks 0 and 1 wait for rank 2: a flow each, their late slices nest */
	coll(&f, 0, 1000, 9000, 10000);
	coll(&f, 1, 3000, 9000, 10000);
	/* rank 2 itself waits for none: no wait slice, no flow */
	coll(&f, 2, 9000, 9000, 10000);
	/* a wait of 5% of the collective: drawn, no flow */
	coll(&f, 0, 20000, 20500, 30000);
	/* the next collective's waits, the second settled after a later one
	 * ended on rank 2's track: its late slice would not nest, no flow */
	coll(&f, 0, 40000, 50000, 51000);
	coll(&f, 1, 32000, 45000, 46000);
	feed_close(&f, &st);
	assert_int_equal(st.flows, 3);
	assert_int_equal(st.flows_left_out, 0);
	/* 6 collectives, 5 waits, 3 late slices */
	assert_int_equal(st.slices, 6 + 5 + 3);
}

static void bound(void **state)
{
	struct ig_perfetto_stats st;
	struct feed f;
	uint64_t i, t;

	(void)state;
	feed_open(&f);
	for (i = 0; i < IG_TIMELINE_PEER_FLOWS + 7; i++) {
		t = 1000000 + i * 1000;
		coll(&f, 0, t, t + 800, t + 900);
	}
	feed_close(&f, &st);
	assert_int_equal(st.flows, IG_TIMELINE_PEER_FLOWS);
	assert_int_equal(st.flows_left_out, 7);
	/* the waits beyond are drawn still, without their late slice */
	assert_int_equal(st.slices, 2 * (IG_TIMELINE_PEER_FLOWS + 7) + IG_TIMELINE_PEER_FLOWS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flows),
		cmocka_unit_test(bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
