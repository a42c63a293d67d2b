// SPDX-License-Identifier: GPL-2.0
/* Option parsing: what is accepted, what is bad usage (exit 2). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

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
	assert_int_equal(PARSE(&c, "report", "a", "b"), 2);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(attach_ok),
		cmocka_unit_test(run_keeps_command_args),
		cmocka_unit_test(report_and_check),
		cmocka_unit_test(bad_usage),
		cmocka_unit_test(help_exits_zero),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
