// SPDX-License-Identifier: GPL-2.0
/* The hash table's iterator visits each value once, after growth and
 * deletions, and clear empties the table; ig_htab_del_where() asks once
 * for each entry and removes just those it says go. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "util/htab.h"

#define N 1000

static void test_next_visits_each_once(void **state)
{
	static int vals[N];
	static unsigned char seen[N];
	struct ig_htab h;
	uint32_t it = 0, n = 0, k;
	int *v;

	(void)state;
	assert_int_equal(ig_htab_init(&h, 4), 0);
	for (k = 0; k < N; k++) {
		vals[k] = (int)k;
		assert_int_equal(ig_htab_put(&h, k * 7919ULL, &vals[k]), 0);
	}
	for (k = 0; k < N; k += 3)
		assert_ptr_equal(ig_htab_del(&h, k * 7919ULL), &vals[k]);
	while ((v = ig_htab_next(&h, &it))) {
		assert_true(*v % 3 != 0);
		assert_int_equal(seen[*v], 0);
		seen[*v] = 1;
		n++;
	}
	assert_int_equal(n, h.n);
	assert_int_equal(n, N - (N + 2) / 3);
	assert_null(ig_htab_next(&h, &it));	/* stays at the end */
	ig_htab_clear(&h);
	it = 0;
	assert_null(ig_htab_next(&h, &it));
	assert_int_equal(h.n, 0);
	assert_null(ig_htab_get(&h, 7919ULL));
	ig_htab_free(&h);
	it = 0;
	assert_null(ig_htab_next(&h, &it));	/* a freed table is empty */
}

struct where {
	unsigned char asked[N];
	unsigned int mod;	/* 0: none goes; else a key k * 7919 with k % mod == 0 */
};

static bool goes_mod(uint64_t key, void *val, void *ctx)
{
	struct where *w = ctx;
	int k = *(int *)val;

	assert_int_equal(key, k * 7919ULL);
	w->asked[k]++;
	return w->mod && k % w->mod == 0;
}

static void test_del_where_asks_once(void **state)
{
	static const unsigned int mods[] = { 0, 1, 2, 3, 7 };
	static int vals[N];
	unsigned int m, k, want;
	struct ig_htab h;

	(void)state;
	for (m = 0; m < sizeof(mods) / sizeof(*mods); m++) {
		struct where w = { .mod = mods[m] };

		assert_int_equal(ig_htab_init(&h, 4), 0);
		for (k = 0; k < N; k++) {
			vals[k] = (int)k;
			assert_int_equal(ig_htab_put(&h, k * 7919ULL, &vals[k]), 0);
		}
		ig_htab_del_where(&h, goes_mod, &w);
		for (k = 0, want = 0; k < N; k++) {
			bool gone = w.mod && k % w.mod == 0;

			assert_int_equal(w.asked[k], 1);
			if (gone)
				assert_null(ig_htab_get(&h, k * 7919ULL));
			else
				assert_ptr_equal(ig_htab_get(&h, k * 7919ULL), &vals[k]);
			want += !gone;
		}
		assert_int_equal(h.n, want);
		ig_htab_free(&h);
		ig_htab_del_where(&h, goes_mod, &w);	/* a freed table: none */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_next_visits_each_once),
		cmocka_unit_test(test_del_where_asks_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
