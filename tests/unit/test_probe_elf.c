// SPDX-License-Identifier: GPL-2.0
/*
 * The probe layer's view of a library, without root: ELF symbols and the
 * libcuda entry points idlegap would attach, read from the stand-in
 * build/tests/fakecuda/libcuda.so.1.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "stream/cuda_api.h"
#include "probes/cuda_attach.h"
#include "host/elfsym.h"

/* What the stand-in exports of the probed entry points. */
static const char *const fake_apis[] = {
	"cuLaunchKernel", "cuLaunchKernel_ptsz", "cuStreamSynchronize",
	"cuStreamQuery", "cuStreamQuery_ptsz", "cuCtxSynchronize",
	"cuEventRecord", "cuEventSynchronize", "cuEventQuery",
	"cuMemcpyHtoD_v2", "cuMemcpyHtoDAsync_v2", "cuMemAlloc_v2",
	"cuStreamCreate",
};
#define NFAKE (sizeof(fake_apis) / sizeof(fake_apis[0]))

static char lib[PATH_MAX];

static int find_lib(void **state)
{
	const char *top = getenv("IG_TOP");

	(void)state;
	snprintf(lib, sizeof(lib), "%s/build/tests/fakecuda/libcuda.so.1",
		 top ? top : ".");
	return 0;
}

static void need_lib(void)
{
	if (access(lib, R_OK)) {
		fprintf(stderr, "SKIP: %s not built (make test-progs)\n", lib);
		skip();
	}
}

struct count {
	unsigned int n, nfunc;
	bool saw_launch;
};

static int count_cb(const struct ig_elf_sym *s, void *ctx)
{
	struct count *c = ctx;

	c->n++;
	c->nfunc += s->func;
	if (!strcmp(s->name, "cuLaunchKernel"))
		c->saw_launch = s->func && s->file_off > 0;
	return 0;
}

static void test_elf_symbols(void **state)
{
	struct ig_elf_sym s;
	struct count c = {};
	uint64_t base;
	bool dyn = false;

	(void)state;
	need_lib();
	assert_int_equal(ig_elf_for_each_sym(lib, true, count_cb, &c), 0);
	assert_true(c.nfunc >= NFAKE);
	assert_true(c.saw_launch);
	assert_int_equal(ig_elf_find_sym(lib, "cuStreamSynchronize", &s), 0);
	assert_true(s.func);
	assert_true(s.file_off > 0);
	assert_int_equal(ig_elf_find_sym(lib, "cuNoSuchThing", &s), -ENOENT);
	assert_int_equal(ig_elf_load_base(lib, &base, &dyn), 0);
	assert_true(dyn);
	assert_true(ig_elf_for_each_sym("/nonexistent/libcuda.so.1", true,
					count_cb, &c) < 0);
}

struct scan {
	unsigned int n, last;
	unsigned int api[IG_API__MAX];
	size_t off[IG_API__MAX];
	bool sorted;
};

static void scan_cb(unsigned int api, const char *name, size_t off, void *ctx)
{
	struct scan *c = ctx;

	assert_true(api > 0 && api < IG_API__MAX);
	assert_string_equal(name, ig_api_name(api));
	if (api <= c->last)
		c->sorted = false;
	c->last = api;
	c->api[c->n] = api;
	c->off[c->n++] = off;
}

/* Every probed entry point the library has is found once, by its id, at
 * its symbol's file offset; nothing else is. */
static void test_cuda_scan(void **state)
{
	struct scan c = { .sorted = true };
	struct ig_elf_sym s;
	unsigned int i, k;

	(void)state;
	need_lib();
	assert_int_equal(ig_cuda_scan(lib, scan_cb, &c), 0);
	assert_int_equal(c.n, NFAKE);
	assert_true(c.sorted);
	for (i = 0; i < NFAKE; i++) {
		int api = ig_api_by_name(fake_apis[i]);

		assert_true(api > 0);
		for (k = 0; k < c.n && c.api[k] != (unsigned int)api; k++)
			;
		if (k == c.n)
			fail_msg("%s not found", fake_apis[i]);
		assert_int_equal(ig_elf_find_sym(lib, fake_apis[i], &s), 0);
		assert_int_equal(c.off[k], s.file_off);
	}
	assert_true(ig_cuda_scan("/nonexistent/libcuda.so.1", scan_cb, &c) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elf_symbols),
		cmocka_unit_test(test_cuda_scan),
	};

	return cmocka_run_group_tests(tests, find_lib, NULL);
}
