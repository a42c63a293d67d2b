// SPDX-License-Identifier: GPL-2.0
/*
 * What the reports must not do: print the target's strings raw to the
 * terminal, list gaps after --gaps 0, hide that the process table was
 * capped.
 */
#include "test_engine_util.h"
#include "util/escape.h"

#define L IG_STREAM_LEGACY

/* n idle gaps of a python3 job (pid 100), each 5 ms. */
static void gap_stream(struct tstream *s, unsigned int n, const char *comm)
{
	uint64_t t = 10 * MS;
	unsigned int i;

	t_meta(s, 0);
	t_task(s, 0, 100, 100, 1, comm);
	for (i = 0; i < n; i++) {
		t_submit(s, 100, 100, t, L);
		t_sync(s, 100, 100, t + 1 * MS, t + 2 * MS, t + 2 * MS, L, t);
		t += 7 * MS;
	}
	t_submit(s, 100, 100, t, L);
	t_sync(s, 100, 100, t + 1 * MS, t + 2 * MS, t + 2 * MS, L, t);
	t_end(s, t + 10 * MS);
}

static void assert_no_controls(const char *txt)
{
	for (; *txt; txt++)
		assert_true(*txt == '\n' || ((unsigned char)*txt >= 0x20 && *txt != 0x7f));
}

static void text_escapes_names(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	char *txt;

	(void)state;
	gap_stream(&s, 10, "\033]0;pwned\a");
	t_proc(&s, 1 * MS, IG_PROC_FORK, 200, 200, 100, "\033[2J\033[H");
	/* inside the first gap (12-17 ms) */
	OFF(&s, .tid = 100, .t_off = 12 * MS + 500 * US, .t_wake = 16 * MS,
	    .t_on = 16 * MS, .reason = IG_R_STORAGE, .name = "/data/\033]0;x\a.bin");
	OFF(&s, .tid = 100, .t_off = 30 * MS, .t_wake = 31 * MS, .t_on = 31 * MS,
	    .reason = IG_R_FUTEX, .waker_tid = 200, .waker_tgid = 200,
	    .waker_comm = "\033[31mred");
	ts_feed(&s, e);
	txt = report_text(e);
	assert_no_controls(txt);
	assert_non_null(strstr(txt, "\\x1b]0;pwned\\x07"));
	assert_non_null(strstr(txt, "\\x1b]0;x\\x07.bin"));
	free(txt);
	ig_engine_free(e);
	ts_free(&s);
}

static void gaps_none_lists_none(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(IG_GAPS_NONE, 0);
	struct json_object *j;

	(void)state;
	gap_stream(&s, 20, "python3");
	ts_feed(&s, e);
	j = report(e);
	assert_int_equal(ji(j, "gpu.gaps"), 20);
	assert_int_equal(json_object_array_length(jpath(j, "gpu.gap_list")), 0);
	assert_int_equal(ji(j, "gpu.gap_list_omitted"), 20);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

/* 2000 short-lived processes: more than the table keeps; both reports
 * count them all and say how many are not listed. */
static void capped_table_said(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j;
	uint32_t i, pid;
	char *txt;

	(void)state;
	t_meta(&s, 0);
	for (i = 0; i < 2000; i++) {
		pid = 1000 + i;
		t_proc(&s, (i + 1) * MS, IG_PROC_FORK, pid, pid, 1, "storm");
		t_proc(&s, (i + 1) * MS + 500 * US, IG_PROC_GROUP_EXIT, pid, pid, 1, "storm");
	}
	t_end(&s, 2100 * MS);
	ts_feed(&s, e);
	j = report(e);
	assert_true(ji(j, "processes_not_kept") > 0);
	assert_int_equal(json_object_array_length(jpath(j, "processes")) +
			 ji(j, "processes_not_kept"), 2000);
	txt = report_text(e);
	assert_non_null(strstr(txt, "2000 processes"));
	assert_non_null(strstr(txt, "more exited and were not kept"));
	free(txt);
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_escapes_names),
		cmocka_unit_test(gaps_none_lists_none),
		cmocka_unit_test(capped_table_said),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
