// SPDX-License-Identifier: GPL-2.0
/* On-CPU time told apart by the CPU-clock samples: the share of samples
 * taken in the kernel inside a page fault is the fault's, not the
 * thread's own computing. */
#include "test_engine_util.h"

#define L	IG_STREAM_LEGACY
#define EPS	1e-9

static void t_sample(struct tstream *s, uint32_t tid, uint64_t ts,
		     uint32_t flags)
{
	union ig_rec *r = ts_new(s, IG_REC_SAMPLE, sizeof(struct ig_sample), tid,
			      tid, ts);
	struct ig_sample *x = (struct ig_sample *)r;

	x->ip = 0x401000;
	x->flags = flags;
}

/* Gap [10, 52]: on CPU 10..30 with 10 of its 19 samples in a fault, a
 * fault on w.bin 30..40, on CPU 40..52 with plain samples. */
static void test_fault_samples(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;
	double pf = S(10) + 20e-3 * 10 / 19;
	uint64_t t;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_submit(&s, 100, 100, 5 * MS, L);
	t_sync(&s, 100, 100, 6 * MS, 0, 10 * MS, L, 5 * MS);
	for (t = 11; t < 30; t++)
		t_sample(&s, 100, t * MS, t % 2 ? IG_SF_KERNEL | IG_SF_FAULT
						 : IG_SF_KERNEL);
	OFF(&s, .tid = 100, .t_off = 30 * MS, .t_wake = 40 * MS,
	    .t_on = 40 * MS, .reason = IG_R_PAGEFAULT, .flags = IG_F_IOWAIT,
	    .arg = 0x10, .name = "w.bin");
	for (t = 41; t < 52; t++)
		t_sample(&s, 100, t * MS, 0);
	t_submit(&s, 100, 100, 52 * MS, L);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);

	assert_near(jd(j, "gpu.idle_s"), S(42), EPS);
	assert_near(cause_s(j, "causes", "page_fault"), pf, 1e-6);
	assert_near(detail_s(j, "causes", "page_fault", "file", "file",
			     "w.bin"), pf, 1e-6);
	assert_near(cause_s(j, "causes", "host_compute"), S(42) - pf, 1e-6);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fault_samples),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
