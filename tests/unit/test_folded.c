// SPDX-License-Identifier: GPL-2.0
/* Folded stacks: root first, innermost last, equal stacks summed, names
 * that would break the format made safe. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stacks/folded.h"

/* What @f writes, in a string the caller frees. */
static char *written(struct ig_folded *f)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&buf, &n);

	assert_non_null(out);
	assert_int_equal(ig_folded_write(f, out), 0);
	fclose(out);
	return buf;
}

static void order_and_sums(void **state)
{
	const char *a[] = { "pread (pread64.c:25)", "read_file (loader.c:187)",
			    "worker_loop (loader.c:305)" };
	const char *b[] = { "futex_wait", "train_step (main.c:88)" };
	struct ig_folded *f = ig_folded_new();
	char *s;

	(void)state;
	assert_non_null(f);
	assert_int_equal(ig_folded_add(f, "storage", a, 3, 1500), 0);
	assert_int_equal(ig_folded_add(f, "lock", b, 2, 7), 0);
	assert_int_equal(ig_folded_add(f, "storage", a, 3, 500), 0);
	assert_int_equal(ig_folded_add(f, "storage", a + 1, 2, 30), 0);
	assert_int_equal(ig_folded_add(f, "gil", NULL, 0, 0), 0);	/* no weight */
	assert_int_equal(ig_folded_add(f, "unresolved", NULL, 0, 9), 0);
	s = written(f);
	assert_string_equal(s,
		"lock;train_step (main.c:88);futex_wait 7\n"
		"storage;worker_loop (loader.c:305);read_file (loader.c:187) 30\n"
		"storage;worker_loop (loader.c:305);read_file (loader.c:187);pread (pread64.c:25) 2000\n"
		"unresolved 9\n");
	free(s);
	/* writing again gives the same, already merged */
	s = written(f);
	assert_non_null(strstr(s, "pread (pread64.c:25) 2000\n"));
	free(s);
	ig_folded_free(f);
}

static void unsafe_names(void **state)
{
	const char *a[] = { "operator;()", "", "two\nlines\t", NULL };
	struct ig_folded *f = ig_folded_new();
	char *s;

	(void)state;
	assert_int_equal(ig_folded_add(f, "", a, 4, UINT64_C(12345678901234)), 0);
	s = written(f);
	assert_string_equal(s, "[unknown];[unknown];two lines ;[unknown];operator:() 12345678901234\n");
	free(s);
	ig_folded_free(f);
}

static void write_error(void **state)
{
	const char *a[] = { "main" };
	struct ig_folded *f = ig_folded_new();
	FILE *full = fopen("/dev/full", "w");

	(void)state;
	if (!full)
		skip();
	assert_int_equal(ig_folded_add(f, "storage", a, 1, 1), 0);
	/* the write's own errno, not a generic EIO */
	assert_int_equal(ig_folded_write(f, full), -ENOSPC);
	fclose(full);
	ig_folded_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(order_and_sums),
		cmocka_unit_test(unsafe_names),
		cmocka_unit_test(write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
