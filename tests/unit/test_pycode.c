// SPDX-License-Identifier: GPL-2.0
/*
 * Code objects and line tables of CPython 3.9-3.13 from memory captured by
 * tools/pycapture.py (tests/fixtures/py/): the layout found for the
 * interpreter, the function's names, file and first line, and the line
 * of every instruction as CPython itself gives it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../user/probes/pyframes.h"
#include "../../user/stacks/pycode.h"
#include "../../user/stacks/ustacks.h"

#define MAXREG 16
#define MAXLINE 256

struct image {
	char path[64], name[96], qualname[96], file[256];
	unsigned long long runtime, code;
	unsigned int firstline;
	struct { unsigned long long addr; size_t len; unsigned char *b; } reg[MAXREG];
	int nreg;
	struct { unsigned int lasti; int line; } lines[MAXLINE];
	int nlines;
};

static int img_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	struct image *im = ctx;
	int i;

	for (i = 0; i < im->nreg; i++)
		if (addr >= im->reg[i].addr && addr + len <= im->reg[i].addr + im->reg[i].len) {
			memcpy(buf, im->reg[i].b + (addr - im->reg[i].addr), len);
			return 0;
		}
	return -EFAULT;
}

static void add_mem(struct image *im, unsigned long long a, const char *hex)
{
	size_t n = strlen(hex) / 2, i;
	unsigned char *b = malloc(n);

	assert_non_null(b);
	assert_true(im->nreg < MAXREG);
	for (i = 0; i < n; i++)
		assert_int_equal(sscanf(hex + 2 * i, "%2hhx", &b[i]), 1);
	im->reg[im->nreg].addr = a;
	im->reg[im->nreg].len = n;
	im->reg[im->nreg++].b = b;
}

static void load(struct image *im, const char *name)
{
	static char line[8192], hex[8192];
	const char *top = getenv("IG_TOP");
	char path[512];
	unsigned long long a;
	FILE *f;

	memset(im, 0, sizeof(*im));
	snprintf(path, sizeof(path), "%s/tests/fixtures/py/%s", top ? top : ".", name);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "mem ", 4) && sscanf(line + 4, "%llx %8191s", &a, hex) == 2)
			add_mem(im, a, hex);
		else if (!strncmp(line, "line ", 5) && im->nlines < MAXLINE &&
			 sscanf(line + 5, "%u %d", &im->lines[im->nlines].lasti,
				&im->lines[im->nlines].line) == 2)
			im->nlines++;
		sscanf(line, "path %63s", im->path);
		sscanf(line, "runtime %llx", &im->runtime);
		sscanf(line, "code %llx", &im->code);
		sscanf(line, "firstline %u", &im->firstline);
		sscanf(line, "name %95s", im->name);
		sscanf(line, "qualname %95s", im->qualname);
		sscanf(line, "file %255s", im->file);
	}
	fclose(f);
	assert_true(im->nreg >= 5);
	assert_true(im->nlines > 10);
}

static void unload(struct image *im)
{
	int i;

	for (i = 0; i < im->nreg; i++)
		free(im->reg[i].b);
}

static void check_fixture(const char *name, unsigned int version)
{
	struct image im;
	struct ig_pyrt_info rt = { 0 };
	struct ig_py_offsets o;
	struct ig_py_codelayout l;
	static struct ig_pycode c;
	int i, bad = 0;

	load(&im, name);
	rt.start = im.runtime;
	snprintf(rt.path, sizeof(rt.path), "/x/%s", im.path);
	assert_int_equal(ig_pylayout_find(img_read, &im, &rt, &o, &l, NULL), 0);
	assert_int_equal(o.version, version);
	assert_int_equal(l.version, version);
	assert_int_equal(o.runtime, im.runtime);
	ig_pycode_read(&l, img_read, &im, im.code, &c);
	assert_int_equal(c.flags & IG_PYC_UNREAD, 0);
	assert_string_equal(c.name, im.qualname);
	assert_string_equal(c.file, im.file);
	assert_int_equal(c.firstline, im.firstline);
	assert_true(c.ltlen > 0);
	for (i = 0; i < im.nlines; i++)
		if (ig_pycode_line(&c, im.lines[i].lasti) != im.lines[i].line) {
			print_message("# %s: lasti %u: line %d, CPython says %d\n", name,
				      im.lines[i].lasti, ig_pycode_line(&c, im.lines[i].lasti),
				      im.lines[i].line);
			bad++;
		}
	assert_int_equal(bad, 0);
	/* not a code object (its name string): never named */
	ig_pycode_read(&l, img_read, &im, im.reg[4].addr, &c);
	assert_int_equal(c.flags & IG_PYC_UNREAD, IG_PYC_UNREAD);
	assert_string_equal(c.name, "?");
	/* unmapped memory: the same */
	ig_pycode_read(&l, img_read, &im, 0x10, &c);
	assert_int_equal(c.flags & IG_PYC_UNREAD, IG_PYC_UNREAD);
	unload(&im);
}

static void test_39(void **state) { (void)state; check_fixture("3.9.txt", 0x0309); }
static void test_310(void **state) { (void)state; check_fixture("3.10.txt", 0x030a); }
static void test_311(void **state) { (void)state; check_fixture("3.11.txt", 0x030b); }
static void test_311_debian(void **state) { (void)state; check_fixture("debian-3.11.txt", 0x030b); }
static void test_312(void **state) { (void)state; check_fixture("3.12.txt", 0x030c); }
static void test_313(void **state) { (void)state; check_fixture("3.13.txt", 0x030d); }
static void test_314(void **state) { (void)state; check_fixture("3.14.txt", 0x030e); }
static void test_315(void **state) { (void)state; check_fixture("3.15.txt", 0x030f); }
/* free-threaded 3.14 (make free-threaded): object headers 16 bytes longer */
static void test_314t(void **state) { (void)state; check_fixture("3.14t.txt", 0x030e); }

/* An interpreter of a version without a layout (3.8; 3.14 by its debug
 * offsets but not their 3.14 size) gets none: native frames only. */
static void test_unknown(void **state)
{
	struct image im;
	struct ig_pyrt_info rt = { 0 };
	struct ig_py_offsets o;
	struct ig_py_codelayout l;

	(void)state;
	load(&im, "3.12.txt");
	rt.start = im.runtime;
	snprintf(rt.path, sizeof(rt.path), "/usr/lib/libpython3.8.so.1.0");
	assert_int_equal(ig_pylayout_find(img_read, &im, &rt, &o, &l, NULL), -ENOTSUP);
	snprintf(rt.path, sizeof(rt.path), "/usr/bin/python");
	assert_int_equal(ig_pylayout_find(img_read, &im, &rt, &o, &l, NULL), -ENOTSUP);
	unload(&im);
	load(&im, "3.13.txt");
	rt.start = im.runtime;
	im.reg[0].b[8 + 2] = 0x0e;	/* PY_VERSION_HEX 3.14 */
	assert_int_equal(ig_pylayout_find(img_read, &im, &rt, &o, &l, NULL), -ENOTSUP);
	unload(&im);
}

/* What 3.13+ say of themselves: the version and build; a later version
 * whose offsets, read as the last known layout, do not hold is refused
 * with the reason, and so is a free-threaded build whose offsets do not
 * hold or whose version's struct is not known. */
static void test_published(void **state)
{
	struct image im;
	struct ig_pyrt_info rt = { 0 };
	struct ig_py_offsets o;
	struct ig_py_codelayout l;
	struct ig_pybuild b;

	(void)state;
	load(&im, "3.14.txt");
	rt.start = im.runtime;
	assert_int_equal(ig_pylayout_find(img_read, &im, &rt, &o, &l, &b), 0);
	assert_true(b.published);
	assert_false(b.free_threaded);
	assert_int_equal(b.hexversion >> 16, 0x030e);
	assert_int_equal(o.owner_cstack, 3);
	im.reg[0].b[8 + 2] = 0x10;	/* PY_VERSION_HEX 3.16: read as 3.15's */
	assert_int_equal(ig_pylayout_find(img_read, &im, &rt, &o, &l, &b), -ENOTSUP);
	assert_non_null(strstr(b.why, "read as 3.15's"));
	im.reg[0].b[8 + 2] = 0x0e;
	/* a GIL build's offsets said to be free-threaded: no thread-local
	 * bytecode published (its offsets are 0), refused */
	im.reg[0].b[16] = 1;
	assert_int_equal(ig_pylayout_find(img_read, &im, &rt, &o, &l, &b), -ENOTSUP);
	assert_true(b.free_threaded);
	assert_non_null(strstr(b.why, "thread-local bytecode"));
	unload(&im);
	/* a free-threaded 3.15: where its struct keeps the object headers is
	 * not known */
	load(&im, "3.15.txt");
	rt.start = im.runtime;
	im.reg[0].b[16] = 1;
	assert_int_equal(ig_pylayout_find(img_read, &im, &rt, &o, &l, &b), -ENOTSUP);
	assert_true(b.free_threaded);
	assert_non_null(strstr(b.why, "free-threaded build of 3.15"));
	unload(&im);
}

/* A code object read while its process lived keeps its names when a later
 * read fails (the process exited before its last stacks were read). */
static void test_unread_later(void **state)
{
	struct ig_pynames *n = ig_pynames_new();
	struct ig_pycode c = { .h = { .type = IG_REC_PYCODE, .tgid = 7,
				      .size = IG_PYCODE_SIZE(0) },
			       .code = 0x1000, .version = 0x030c, .firstline = 3 };
	struct ig_pystack st = { .h = { .type = IG_REC_PYSTACK, .tgid = 7,
					.size = IG_PYSTACK_SIZE(1) },
				 .id = 1, .nframes = 1, .f = { { 0x1000, 0 } } };
	char buf[128];

	(void)state;
	assert_non_null(n);
	snprintf(c.name, sizeof(c.name), "touch_batch");
	snprintf(c.file, sizeof(c.file), "train.py");
	assert_int_equal(ig_pynames_feed(n, &c.h), 0);
	memset(c.name, 0, sizeof(c.name));
	memset(c.file, 0, sizeof(c.file));
	c.flags = IG_PYC_UNREAD;
	assert_int_equal(ig_pynames_feed(n, &c.h), 0);
	assert_int_equal(ig_pynames_frame(n, &st, 0, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "touch_batch (train.py)");
	/* a new object read at the address replaces it */
	c.flags = 0;
	snprintf(c.name, sizeof(c.name), "read_batch");
	snprintf(c.file, sizeof(c.file), "train.py");
	assert_int_equal(ig_pynames_feed(n, &c.h), 0);
	assert_int_equal(ig_pynames_frame(n, &st, 0, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "read_batch (train.py)");
	ig_pynames_free(n);
}

static const __u32 pid7_gone[] = { 7 };
/* stack 1 of processes 7, 8 and 9 */
static const struct ig_proctab_pair keep_1[] = { { 7, 1 }, { 8, 1 }, { 9, 1 } };

static void feed_code(struct ig_pynames *n, __u32 tgid, __u64 code,
		      const char *name)
{
	struct ig_pycode c = { .h = { .type = IG_REC_PYCODE, .tgid = tgid,
				      .size = IG_PYCODE_SIZE(0) },
			       .code = code, .version = 0x030c };

	snprintf(c.name, sizeof(c.name), "%s", name);
	snprintf(c.file, sizeof(c.file), "train.py");
	assert_int_equal(ig_pynames_feed(n, &c.h), 0);
}

static void feed_stack(struct ig_pynames *n, __u32 tgid, __u64 id,
		       __u64 inner, __u64 outer)
{
	struct ig_pystack st = { .h = { .type = IG_REC_PYSTACK, .tgid = tgid,
					.size = IG_PYSTACK_SIZE(2) },
				 .id = id, .nframes = 2,
				 .f = { { inner, 0 }, { outer, 0 } } };

	assert_int_equal(ig_pynames_feed(n, &st.h), 0);
}

/* A gone process's stacks go but for those kept, and its code objects
 * but for those a kept stack names; a live process keeps all. */
static void test_forget(void **state)
{
	struct ig_pynames *n = ig_pynames_new();
	const struct ig_stk_forget f = { .gone = pid7_gone, .ngone = 1,
					 .keep = keep_1, .nkeep = 3 };
	struct ig_pystack ref = { .h = { .type = IG_REC_PYSTACK, .tgid = 7,
					 .size = IG_PYSTACK_SIZE(0) },
				  .id = 1, .flags = IG_PYS_REF };
	char buf[128];
	size_t ncode;
	__u32 p;

	(void)state;
	for (p = 7; p <= 8; p++) {
		feed_code(n, p, 0x1000, "read_batch");
		feed_code(n, p, 0x2000, "train");
		feed_code(n, p, 0x3000, "collate");
		feed_stack(n, p, 1, 0x1000, 0x2000);
		feed_stack(n, p, 2, 0x3000, 0x2000);
	}
	assert_int_equal(ig_pynames_count(n, &ncode), 4);
	assert_int_equal(ncode, 6);
	assert_int_equal(ig_pynames_forget(n, &f), 0);
	assert_int_equal(ig_pynames_count(n, &ncode), 3);
	assert_int_equal(ncode, 5);
	assert_int_equal(ig_pynames_frame(n, &ref, 1, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "train (train.py)");
	ig_pynames_frame(n, &ref, 0, buf, sizeof(buf));
	assert_string_equal(buf, "read_batch (train.py)");
	ref.id = 2;
	assert_int_equal(ig_pynames_frame(n, &ref, 0, buf, sizeof(buf)), -ENOENT);
	ref.h.tgid = 8;
	assert_int_equal(ig_pynames_frame(n, &ref, 0, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "collate (train.py)");
	ig_pynames_free(n);
}

/* A live process with ever new stacks: the table stays within its bound,
 * the stacks seen longest ago go first (a reference counts as seen), one
 * the caller holds stays, and the evictions are counted. */
static void test_bounded(void **state)
{
	struct ig_pynames *n = ig_pynames_new();
	const struct ig_stk_forget f = { .all = true, .keep = keep_1, .nkeep = 3 };
	struct ig_pystack ref = { .h = { .type = IG_REC_PYSTACK, .tgid = 9,
					 .size = IG_PYSTACK_SIZE(0) },
				  .flags = IG_PYS_REF };
	uint64_t ev, evcode;
	char buf[128];
	__u32 i, m = 3 * IG_PYSTACKS_MAX;

	(void)state;
	feed_code(n, 9, 0x1000, "read_batch");
	feed_code(n, 9, 0x2000, "train");
	feed_stack(n, 9, 1, 0x1000, 0x2000);	/* held by the caller */
	feed_stack(n, 9, 2, 0x1000, 0x2000);	/* in use all along */
	for (i = 0; i < m; i++) {
		feed_stack(n, 9, 100 + i, 0x1000, 0x2000);
		ref.id = 2;
		assert_int_equal(ig_pynames_feed(n, &ref.h), 0);
		if (ig_pynames_full(n))
			assert_int_equal(ig_pynames_trim(n, &f), 0);
		assert_true(ig_pynames_count(n, NULL) <= IG_PYSTACKS_MAX);
	}
	ig_pynames_evicted(n, &ev, &evcode);
	assert_int_equal(ev + ig_pynames_count(n, NULL), m + 2);
	assert_true(ev >= m - IG_PYSTACKS_MAX);
	assert_int_equal(evcode, 0);
	for (i = 0; i < 4; i++) {
		const __u64 id[] = { 1, 2, 100 + m - 1, 100 };

		ref.id = id[i];
		assert_int_equal(ig_pynames_frame(n, &ref, 1, buf, sizeof(buf)),
				 i < 3 ? 2 : -ENOENT);
		if (i < 3)
			assert_string_equal(buf, "train (train.py)");
	}
	ig_pynames_free(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_39),
		cmocka_unit_test(test_310),
		cmocka_unit_test(test_311),
		cmocka_unit_test(test_311_debian),
		cmocka_unit_test(test_312),
		cmocka_unit_test(test_313),
		cmocka_unit_test(test_314),
		cmocka_unit_test(test_315),
		cmocka_unit_test(test_314t),
		cmocka_unit_test(test_published),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_unread_later),
		cmocka_unit_test(test_forget),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
