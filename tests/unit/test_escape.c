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
#include "modes/dump.h"
#include "util/escape.h"
#include "engine/jsonval.h"

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

/* What goes to JSON, Prometheus and Perfetto: UTF-8, bad bytes U+FFFD. */
static void utf8_fixed(void **state)
{
	char b[IG_UTF8_FIX_SIZE(16)];
	char *d;

	(void)state;
	assert_true(ig_utf8_valid("plain ascii, long enough for words", 34));
	assert_true(ig_utf8_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14));
	/* C1 controls are UTF-8 (the formats escape them) */
	assert_true(ig_utf8_valid("\xc2\x9b", 2));
	assert_true(ig_utf8_valid("", 0));
	assert_false(ig_utf8_valid("\xff\xfe", 2));
	assert_false(ig_utf8_valid("abcdefgh\xe2\x82", 10));	/* cut */
	assert_false(ig_utf8_valid("\xc0\xaf", 2));		/* overlong */
	assert_false(ig_utf8_valid("\xed\xa0\x80", 3));	/* surrogate */
	assert_false(ig_utf8_valid("\xf4\x90\x80\x80", 4));	/* > U+10FFFF */
	assert_int_equal(ig_utf8_fix(b, "/x/\xff\xfe.bin", 9), 13);
	assert_string_equal(b, "/x/\xef\xbf\xbd\xef\xbf\xbd.bin");
	ig_utf8_fix(b, "a\xe2\x82", 3);
	assert_string_equal(b, "a\xef\xbf\xbd\xef\xbf\xbd");
	ig_utf8_fix(b, "caf\xc3\xa9", 5);
	assert_string_equal(b, "caf\xc3\xa9");
	d = ig_utf8_dup("\x80", 1);
	assert_string_equal(d, "\xef\xbf\xbd");
	free(d);
}

/* json-c copies bytes as they are: the report's strings are fixed first. */
static void json_strings(void **state)
{
	jo *o = json_object_new_object();
	const char *txt;

	(void)state;
	add(o, "path", jstr("data \xff\xfe.bin"));
	add(o, "ok", jstr("caf\xc3\xa9"));
	add(o, "cut", jstrn("abc\xe2", 4));
	txt = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	assert_true(ig_utf8_valid(txt, strlen(txt)));
	assert_non_null(strstr(txt, "data \xef\xbf\xbd\xef\xbf\xbd.bin"));
	assert_non_null(strstr(txt, "caf\xc3\xa9"));
	assert_non_null(strstr(txt, "abc\xef\xbf\xbd"));
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(controls_escaped),
		cmocka_unit_test(dump_escapes),
		cmocka_unit_test(utf8_fixed),
		cmocka_unit_test(json_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
