// SPDX-License-Identifier: GPL-2.0
/* Progress lines: their text, silence off a terminal, the rate limit. */
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "views/progress.h"

static void text(void **state)
{
	char b[128];

	(void)state;
	ig_progress_format(b, sizeof(b), "reading x.igrec", 50, 200, 1234567, 2000000000ull);
	assert_string_equal(b, "reading x.igrec:  25% 1.2M records, 617.3k records/s");
	ig_progress_format(b, sizeof(b), "reading -", 50, 0, 999, 0);
	assert_string_equal(b, "reading -: 999 records, 0 records/s");
	ig_progress_format(b, sizeof(b), "r", 300, 200, 5, 1000000000ull);
	assert_string_equal(b, "r: 100% 5 records, 5 records/s");
	assert_int_equal(ig_progress_format(b, 8, "reading", 1, 2, 3, 4), 7);
}

static void silent_off_a_terminal(void **state)
{
	struct ig_progress p;
	char b[64];
	int fd[2];

	(void)state;
	assert_int_equal(pipe(fd), 0);
	ig_progress_init(&p, fd[1], "reading", 100);
	ig_progress_at(&p, 50, 10, p.start_ns + 10 * IG_PROGRESS_INTERVAL_NS);
	ig_progress_end(&p);
	close(fd[1]);
	assert_int_equal(read(fd[0], b, sizeof(b)), 0);
	close(fd[0]);
}

/* On a pseudo-terminal: drawn, at most once per interval, cleared at the end. */
static void rate_limited_on_a_terminal(void **state)
{
	struct ig_progress p;
	char b[512];
	int m = posix_openpt(O_RDWR | O_NOCTTY), s;
	ssize_t n = 0;
	size_t len;

	(void)state;
	if (m < 0 || grantpt(m) || unlockpt(m))
		skip();
	s = open(ptsname(m), O_RDWR | O_NOCTTY);
	assert_true(s >= 0);
	ig_progress_init(&p, s, "reading", 100);
	ig_progress_at(&p, 10, 1, p.start_ns + 1);	/* too soon */
	ig_progress_at(&p, 20, 2, p.start_ns + IG_PROGRESS_INTERVAL_NS);
	ig_progress_at(&p, 30, 3, p.start_ns + IG_PROGRESS_INTERVAL_NS + 5);	/* too soon */
	ig_progress_end(&p);
	/* the pty hands the writes over in their own time: read until
	 * nothing more comes for a while */
	for (len = 0; len < sizeof(b) - 1; len += n) {
		struct pollfd pf = { .fd = m, .events = POLLIN };

		if (poll(&pf, 1, 500) <= 0)
			break;
		n = read(m, b + len, sizeof(b) - 1 - len);
		if (n <= 0)
			break;
	}
	assert_true(len > 0);
	b[len] = 0;
	assert_string_equal(b, "\rreading:  20% 2 records, 8 records/s\033[K\r\033[K");
	close(s);
	close(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text),
		cmocka_unit_test(silent_off_a_terminal),
		cmocka_unit_test(rate_limited_on_a_terminal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
