// SPDX-License-Identifier: GPL-2.0
/* The hash table's iterator visits each value once, after growth and
 * deletions, and clear empties the table; a sweep (ig_htab_sweep_next())
 * gives each entry once and removes just those it is told to; a table of
 * entries in place keeps them whole through growth and deletions, three
 * quarters full at most and at least three eighths once grown. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
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

static bool goes_mod(uint64_t key, void *val, struct where *w)
{
	int k = *(int *)val;

	assert_int_equal(key, k * 7919ULL);
	w->asked[k]++;
	return w->mod && k % w->mod == 0;
}

/* The sweep, removing the entries goes_mod() says go. */
static void del_where(struct ig_htab *h, struct where *w)
{
	struct ig_htab_sweep s;
	struct ig_htab_kv *kv;

	ig_htab_sweep_start(h, &s);
	while ((kv = ig_htab_sweep_next(h, &s)))
		if (goes_mod(kv->key, kv->val, w))
			ig_htab_sweep_del(h, &s);
}

static void test_sweep_gives_each_once(void **state)
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
		del_where(&h, &w);
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
		del_where(&h, &w);	/* a freed table: none */
	}
}

struct ent {
	uint64_t key;
	uint32_t a, b;
	void *p;
};


static void test_entries_in_place(void **state)
{
	struct ig_htab h, z = { 0 };
	struct ig_htab_sweep sw;
	unsigned int asked = 0;
	uint32_t it = 0, k, n = 0;
	struct ent *e;

	(void)state;
	assert_int_equal(ig_htab_init_ents(&h, 4, 20, 3), -EINVAL);
	assert_int_equal(ig_htab_init_ents(&h, 4, sizeof(struct ent), 4), -EINVAL);
	assert_int_equal(ig_htab_init_ents(&h, 4, sizeof(struct ent), 3), 0);
	assert_null(ig_htab_ent(&h, 1));
	for (k = 0; k < N; k++) {
		e = ig_htab_ent_add(&h, k * 7919ULL);
		assert_non_null(e);
		assert_int_equal(e->key, k * 7919ULL);
		assert_int_equal(e->a | e->b, 0);
		assert_null(e->p);
		e->a = k;
		e->b = ~k;
		e->p = &h;
		/* at most three quarters full, and grown only when past it */
		assert_true((uint64_t)h.n * 4 <= (uint64_t)h.cap * 3);
		assert_true(h.cap == 16 || (uint64_t)h.n * 8 > (uint64_t)h.cap * 3);
	}
	assert_int_equal(h.cap, 2048);
	assert_int_equal(ig_htab_bytes(&h), 2048 * sizeof(struct ent) + 2048 / 8);
	ig_htab_sweep_start(&h, &sw);
	while ((e = ig_htab_sweep_next(&h, &sw))) {
		asked++;
		if (e->a % 2)
			ig_htab_sweep_del(&h, &sw);
	}
	assert_int_equal(asked, N);
	assert_int_equal(h.n, N / 2);
	for (k = 0; k < N; k++) {
		e = ig_htab_ent(&h, k * 7919ULL);
		if (k % 2) {
			assert_null(e);
			continue;
		}
		assert_non_null(e);
		assert_int_equal(e->a, k);
		assert_int_equal(e->b, ~k);
		assert_ptr_equal(e->p, &h);
	}
	while ((e = ig_htab_ent_next(&h, &it)))
		n++;
	assert_int_equal(n, N / 2);
	ig_htab_free(&h);
	assert_null(ig_htab_ent(&h, 0));
	/* a zeroed table: empty, and a table of pointers once put to */
	assert_null(ig_htab_get(&z, 5));
	assert_null(ig_htab_del(&z, 5));
	assert_int_equal(ig_htab_put(&z, 5, &z), 0);
	assert_ptr_equal(ig_htab_get(&z, 5), &z);
	ig_htab_free(&z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_next_visits_each_once),
		cmocka_unit_test(test_sweep_gives_each_once),
		cmocka_unit_test(test_entries_in_place),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
