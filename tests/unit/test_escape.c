// SPDX-License-Identifier: GPL-2.0
/* The target's strings never reach the terminal raw. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dump.h"
#include "escape.h"

static void controls_escaped(void **state)
{
	char b[IG_ESC_SIZE(64)];

	(void)state;
	assert_string_equal(ig_esc(b, sizeof(b), "\033]0;pwned\a", 64), "\\x1b]0;pwned\\x07");
	assert_string_equal(ig_esc(b, sizeof(b), "a\nb\rc\x7f", 64), "a\\x0ab\\x0dc\\x7f");
	assert_string_equal(ig_esc(b, sizeof(b), "back\\slash", 64), "back\\x5cslash");
	assert_string_equal(ig_esc(b, sizeof(b), "plain /x/y.bin", 64), "plain /x/y.bin");
	/* UTF-8 stays; C1 controls (U+009B: CSI), bad bytes do not */
	assert_string_equal(ig_esc(b, sizeof(b), "caf\xc3\xa9", 64), "caf\xc3\xa9");
	assert_string_equal(ig_esc(b, sizeof(b), "\xc2\x9b" "2J", 64), "\\xc2\\x9b2J");
	assert_string_equal(ig_esc(b, sizeof(b), "\x9b" "2J\xff", 64), "\\x9b2J\\xff");
	assert_string_equal(ig_esc(b, sizeof(b), "\xe2\x82", 64), "\\xe2\\x82");
	/* no NUL within max: stops there */
	assert_string_equal(ig_esc(b, sizeof(b), "abcdef", 3), "abc");
	/* short buffer: whole escapes only, terminated */
	assert_string_equal(ig_esc(b, 6, "ab\033cd", 64), "ab");
	assert_string_equal(ig_esc(b, 8, "ab\033cd", 64), "ab\\x1bc");
}

static void dump_escapes(void **state)
{
	struct ig_proc p = { .h = { .type = IG_REC_PROC, .size = sizeof(p) } };
	char *buf = NULL;
	size_t n = 0, i;
	FILE *f = open_memstream(&buf, &n);

	(void)state;
	memcpy(p.comm, "\033]0;x\a", 6);
	memset(p.name, 0x1b, sizeof(p.name));	/* no NUL at all */
	ig_dump_record(f, &p.h);
	fclose(f);
	for (i = 0; i + 1 < n; i++)
		assert_true((unsigned char)buf[i] >= 0x20 && buf[i] != 0x7f);
	assert_non_null(strstr(buf, "comm=\\x1b]0;x\\x07"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(controls_escaped),
		cmocka_unit_test(dump_escapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
