// SPDX-License-Identifier: GPL-2.0
/* The recordings' checksum: the same value as zlib's crc32 for every
 * length and alignment, whole or chained, fast path or not. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "stream/crc32.h"

#define BUF (70000 + 64)

static unsigned char *random_buf(void)
{
	unsigned char *b = malloc(BUF);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t i;

	assert_non_null(b);
	for (i = 0; i < BUF; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		b[i] = (unsigned char)x;
	}
	return b;
}

static void known_values(void **state)
{
	(void)state;
	assert_int_equal(ig_crc32(0, "", 0), 0);
	assert_int_equal(ig_crc32(0, "123456789", 9), 0xcbf43926);	/* the check value */
}

static void every_length_and_alignment(void **state)
{
	unsigned char *b = random_buf();
	size_t n, a;

	(void)state;
	for (a = 0; a < 16; a++)
		for (n = 0; n <= 600; n++)
			assert_int_equal(ig_crc32(0, b + a, n), crc32_z(0, b + a, n));
	for (n = 1000; n <= 70000; n = n * 3 + 7)
		assert_int_equal(ig_crc32(0, b + 5, n), crc32_z(0, b + 5, n));
	free(b);
}

static void chained(void **state)
{
	unsigned char *b = random_buf();
	size_t cut[] = { 0, 1, 12, 63, 64, 65, 200, 4096 };
	uint32_t c;
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		c = ig_crc32(0, b, cut[i]);
		c = ig_crc32(c, b + cut[i], 9000 - cut[i]);
		assert_int_equal(c, crc32_z(0, b, 9000));
	}
	/* a zero block is no special case */
	memset(b, 0, 4096);
	assert_int_equal(ig_crc32(0, b, 4096), crc32_z(0, b, 4096));
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(known_values),
		cmocka_unit_test(every_length_and_alignment),
		cmocka_unit_test(chained),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
