// SPDX-License-Identifier: GPL-2.0
/* A vector gives back the memory of a burst (ig_vec_fit()): once its
 * elements fall below a quarter of its slots it is halved until they
 * fill a quarter at least, keeping its elements in order, and never
 * below 64 slots; a vector that is still full enough keeps its size. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include "util/vec.h"

static void fill(struct ig_vec *v, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint64_t *x = ig_vec_push(v);

		assert_non_null(x);
		*x = i;
	}
}

static void test_fit_after_burst(void **state)
{
	struct ig_vec v = { .esz = sizeof(uint64_t) };
	uint32_t i;

	(void)state;
	fill(&v, 100000);
	assert_int_equal(v.cap, 131072);
	/* the burst's front dropped: 20,000 left */
	v.n = 20000;
	ig_vec_fit(&v);
	assert_int_equal(v.cap, 65536);	/* 20,000 * 4 >= 65,536 */
	for (i = 0; i < v.n; i++)
		assert_int_equal(((uint64_t *)v.v)[i], i);
	/* full enough: kept */
	ig_vec_fit(&v);
	assert_int_equal(v.cap, 65536);
	/* nearly empty: down to 64 slots, no fewer */
	v.n = 3;
	ig_vec_fit(&v);
	assert_int_equal(v.cap, 64);
	assert_int_equal(((uint64_t *)v.v)[2], 2);
	free(v.v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit_after_burst),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
