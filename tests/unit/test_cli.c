// SPDX-License-Identifier: GPL-2.0
/* Option parsing: what is accepted, what is bad usage (exit 2). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include "modes/cli.h"
#include "test_engine_util.h"
#include "engine/estimate/estimate.h"

static int parse(struct ig_cli *c, int argc, const char **argv)
{
	return ig_cli_parse(argc, (char **)argv, c);
}

/* argv as the kernel gives it: NULL-terminated */
#define PARSE(c, ...) ({ const char *v_[] = { "idlegap", __VA_ARGS__, NULL }; \
	parse(c, sizeof(v_) / sizeof(v_[0]) - 1, v_); })

static void attach_ok(void **state)
{
	struct ig_cli c;

	(void)state;
	assert_int_equal(PARSE(&c, "attach", "-p", "12,34", "-d", "2.5",
			       "--json", "out.json", "-o", "rec"), 0);
	assert_int_equal(c.cmd, IG_CMD_ATTACH);
	assert_int_equal(c.s.npids, 2);
	assert_int_equal(c.pids[0], 12);
	assert_int_equal(c.pids[1], 34);
	assert_true(c.s.duration_s == 2.5);
	assert_string_equal(c.s.out.json_path, "out.json");
	assert_string_equal(c.s.record_path, "rec");
	assert_int_equal(c.s.min_offcpu_ns, 1000);
}

static void run_keeps_command_args(void **state)
{
	struct ig_cli c;

	(void)state;
	assert_int_equal(PARSE(&c, "run", "-q", "--", "python3", "-u", "x.py", "-d", "3"), 0);
	assert_int_equal(c.cmd, IG_CMD_RUN);
	assert_true(c.s.out.quiet);
	assert_string_equal(c.s.argv[0], "python3");
	assert_string_equal(c.s.argv[1], "-u");	/* the command's, not ours */
	assert_string_equal(c.s.argv[3], "-d");
	assert_null(c.s.argv[5]);
	assert_true(c.s.duration_s == 0);
	/* without "--" too */
	assert_int_equal(PARSE(&c, "run", "-d", "1", "sleep", "-h"), 0);
	assert_string_equal(c.s.argv[0], "sleep");
	assert_string_equal(c.s.argv[1], "-h");
	assert_true(c.s.duration_s == 1);
}

static void report_and_check(void **state)
{
	struct ig_cli c;

	(void)state;
	assert_int_equal(PARSE(&c, "report", "--partial", "--json", "-", "f.igrec"), 0);
	assert_int_equal(c.cmd, IG_CMD_REPORT);
	assert_true(c.partial);
	assert_string_equal(c.recording, "f.igrec");
	assert_false(c.s.out.engine.verbose);
	assert_int_equal(PARSE(&c, "report", "-v", "f.igrec"), 0);
	assert_true(c.s.out.engine.verbose);
	assert_int_equal(PARSE(&c, "check", "-p", "77", "--libcuda", "/x/libcuda.so.1"), 0);
	assert_int_equal(c.check_pid, 77);
	assert_string_equal(c.s.libcuda_path, "/x/libcuda.so.1");
	assert_int_equal(PARSE(&c, "check"), 0);
}

static void bad_usage(void **state)
{
	struct ig_cli c;
	FILE *saved = stderr;

	(void)state;
	stderr = fopen("/dev/null", "w");	/* the messages are argp's */
	assert_int_equal(PARSE(&c, "frobnicate"), 2);
	assert_int_equal(PARSE(&c, "attach"), 2);			/* no -p */
	assert_int_equal(PARSE(&c, "attach", "-p", "abc"), 2);
	assert_int_equal(PARSE(&c, "attach", "-p", "0"), 2);
	assert_int_equal(PARSE(&c, "attach", "-p", "1", "-d", "-3"), 2);
	assert_int_equal(PARSE(&c, "attach", "-p", "1", "-d", "soon"), 2);
	assert_int_equal(PARSE(&c, "attach", "-p", "1", "--bogus"), 2);
	assert_int_equal(PARSE(&c, "attach", "-p", "1", "extra"), 2);
	assert_int_equal(PARSE(&c, "run"), 2);				/* no command */
	assert_int_equal(PARSE(&c, "run", "-p", "1", "--", "true"), 2);
	assert_int_equal(PARSE(&c, "report"), 2);			/* no file */
	/* several recordings merge (docs/design.md §4.9); --dump takes one,
	 * --clock-offset needs several and NAME=SECONDS */
	assert_int_equal(PARSE(&c, "report", "--dump", "a", "b"), 2);
	assert_int_equal(PARSE(&c, "report", "--clock-offset", "a=1", "a"), 2);
	assert_int_equal(PARSE(&c, "report", "--clock-offset", "=1", "a", "b"), 2);
	assert_int_equal(PARSE(&c, "report", "--clock-offset", "b", "a", "b"), 2);
	assert_int_equal(PARSE(&c, "report", "--clock-offset", "b=soon", "a", "b"), 2);
	assert_int_equal(PARSE(&c, "run", "--clock-offset", "b=1", "--", "true"), 2);
	assert_int_equal(PARSE(&c, "report", "--clock-offset", "node2=-0.25", "a", "b"), 0);
	assert_int_equal(c.nrecordings, 2);
	assert_string_equal(c.recordings[1], "b");
	assert_string_equal(c.recording, "a");
	assert_int_equal(c.noffsets, 1);
	assert_string_equal(c.offsets[0].name, "node2");
	assert_true(c.offsets[0].seconds == -0.25);
	assert_int_equal(PARSE(&c, "report", "-o", "x", "a"), 2);
	assert_int_equal(PARSE(&c, "check", "--partial"), 2);
	assert_int_equal(PARSE(&c, "attach", "-p", "1", "--ringbuf-mb", "3"), 2);
	{
		const char *v[] = { "idlegap", NULL };

		assert_int_equal(parse(&c, 1, v), 2);
	}
	fclose(stderr);
	stderr = saved;
}

/* Parses with stderr caught; returns the status, *msg what was printed. */
static int parse_err(struct ig_cli *c, char *msg, size_t n, const char **argv, int argc)
{
	FILE *saved = stderr;
	size_t k;
	int rc;

	stderr = tmpfile();
	assert_non_null(stderr);
	rc = parse(c, argc, argv);
	rewind(stderr);
	k = fread(msg, 1, n - 1, stderr);
	msg[k] = 0;
	fclose(stderr);
	stderr = saved;
	return rc;
}

#define PARSE_ERR(c, msg, ...) ({ const char *v_[] = { "idlegap", __VA_ARGS__, NULL }; \
	parse_err(c, msg, sizeof(msg), v_, sizeof(v_) / sizeof(v_[0]) - 1); })

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

/* Durations that overflow the deadline: refused, not a 60 ms run. */
static void duration_bounded(void **state)
{
	const char *bad[] = { "1e100", "inf", "-inf", "nan", "-1", "0", "1e9", "" };
	struct ig_cli c;
	char msg[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(PARSE_ERR(&c, msg, "attach", "-p", "1", "-d", bad[i]), 2);
		assert_int_equal(count(msg, "invalid duration"), 1);
		assert_non_null(strstr(msg, "at most"));
	}
	assert_int_equal(PARSE(&c, "attach", "-p", "1", "-d", "86400"), 0);
	assert_true(c.s.duration_s == 86400);
}

/* One message per bad ring size, naming the range. */
static void ringbuf_range_named(void **state)
{
	const char *bad[] = { "-1", "0", "3", "4096", "x" };
	struct ig_cli c;
	char msg[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(PARSE_ERR(&c, msg, "run", "--ringbuf-mb", bad[i], "--", "true"), 2);
		assert_int_equal(count(msg, "invalid"), 1);
		assert_non_null(strstr(msg, "power of two from 1 to 1024"));
	}
	assert_int_equal(PARSE(&c, "run", "--ringbuf-mb", "1024", "--", "true"), 0);
	assert_int_equal(c.s.ringbuf_mb, 1024);
}

/* --gaps 0 lists none (the engine's 0 means its default). */
static void gaps_zero_is_none(void **state)
{
	struct ig_cli c;
	char msg[512];

	(void)state;
	assert_int_equal(PARSE(&c, "report", "--gaps", "0", "f"), 0);
	assert_int_equal(c.s.out.engine.max_gaps_json, IG_GAPS_NONE);
	assert_int_equal(PARSE(&c, "report", "--gaps", "-1", "f"), 0);
	assert_int_equal(c.s.out.engine.max_gaps_json, -1);
	assert_int_equal(PARSE(&c, "report", "f"), 0);
	assert_int_equal(c.s.out.engine.max_gaps_json, 0);
	assert_int_equal(PARSE_ERR(&c, msg, "report", "--gaps", "-2", "f"), 2);
}

static void help_exits_zero(void **state)
{
	struct ig_cli c;
	FILE *saved = stdout;

	(void)state;
	stdout = fopen("/dev/null", "w");
	assert_int_equal(PARSE(&c, "--help"), -1);
	assert_int_equal(PARSE(&c, "attach", "--help"), -1);
	assert_int_equal(PARSE(&c, "--version"), -1);
	fclose(stdout);
	stdout = saved;
}

/* A launch-heavy window, one device: 6,000 steps of 20 launches 100 us
 * apart and a sync, 120,000 launches in 12.6 s; the estimate's evidence
 * held once it is fed. */
static size_t window_evidence(const struct ig_engine_opts *o, int64_t *blocks)
{
	struct ig_engine *e = ig_engine_new(o);
	struct tstream s = { 0 };
	struct json_object *j;
	uint64_t t = MS, last = 0;
	size_t ev;
	uint32_t k, i;

	assert_non_null(e);
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "trainsim");
	for (k = 0; k < 6000; k++) {
		for (i = 0; i < 20; i++) {
			last = t + i * 100 * US;
			t_launch(&s, last, 0x1000 + i % 4);
		}
		t_sync(&s, 100, 100, last + 10 * US, 0, last + 100 * US, IG_STREAM_LEGACY,
		       last);
		t = last + 100 * US;
	}
	t_end(&s, t + MS);
	ts_feed(&s, e);
	ts_free(&s);
	ig_est_bytes(e, &ev);
	j = report(e);
	*blocks = ji(j, "gpu.estimate_fit.blocks");
	json_object_put(j);
	ig_engine_free(e);
	return ev;
}

/* attach, run and the agent's windows fold the estimate's evidence in
 * blocks of 32k launches (docs/design.md §3.5): a window of 120,000
 * launches holds the open block's alone, 48k launches at most (16 bytes
 * each, and an unresolved piece of 32 bytes between two, in arrays that
 * double), where an engine that folds by the default 128k blocks holds
 * all of them. */
static void days_engine_folds(void **state)
{
	struct ig_engine_opts o = { .sz = sizeof(o) }, whole = { .sz = sizeof(o) };
	int64_t nb, nw;
	size_t ev, evw;

	(void)state;
	ig_cli_days_engine(&o, false, false);
	assert_int_equal(o.est_block, IG_DAYS_EST_BLOCK);
	assert_true(o.est_block_s == IG_DAYS_EST_BLOCK_S);
	assert_true(o.no_est_track);
	ev = window_evidence(&o, &nb);
	evw = window_evidence(&whole, &nw);
	print_message("# evidence held: %zu bytes in blocks of 32k (%lld blocks), "
		      "%zu in blocks of 128k (%lld)\n", ev, (long long)nb, evw,
		      (long long)nw);
	assert_true(nb >= 3);
	assert_int_equal(nw, 1);
	assert_true(ev < (4u << 20));
	assert_true(evw > (6u << 20));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(attach_ok),
		cmocka_unit_test(run_keeps_command_args),
		cmocka_unit_test(report_and_check),
		cmocka_unit_test(bad_usage),
		cmocka_unit_test(help_exits_zero),
		cmocka_unit_test(duration_bounded),
		cmocka_unit_test(ringbuf_range_named),
		cmocka_unit_test(gaps_zero_is_none),
		cmocka_unit_test(days_engine_folds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
