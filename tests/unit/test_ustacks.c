// SPDX-License-Identifier: GPL-2.0
/* Stacks from USTACK and USYM records: names, the walk cut where it went
 * astray, and truncation said rather than guessed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include "stacks/ustacks.h"

#define PID 77
#define A 0x401000ULL	/* innermost: looked up as is */
#define B 0x402001ULL	/* return addresses: looked up minus one */
#define C 0x403001ULL
#define X 0x1234ULL	/* in no mapping */

static void usym(struct ig_ustacks *t, __u64 ip, __u32 flags, const char *name)
{
	union {
		struct ig_usym u;
		char b[sizeof(struct ig_usym) + 256];
	} r = { .u = { .h = { .type = IG_REC_USYM, .tgid = PID } } };

	r.u.ip = ip;
	r.u.flags = flags;
	assert_true(strlen(name) < 256);
	r.u.len = strlen(name) + 1;
	r.u.h.size = (sizeof(r.u) + r.u.len + 7) & ~7u;
	memcpy(r.u.name, name, r.u.len);
	assert_int_equal(ig_ustacks_on_record(t, &r.u.h), 0);
}

static void ustack(struct ig_ustacks *t, __u64 id, __u16 flags,
		   const __u64 *ips, int n)
{
	struct ig_ustack r = { .h = { .type = IG_REC_USTACK, .tgid = PID } };

	r.id = id;
	r.flags = flags;
	r.nips = flags & IG_USF_REF ? 0 : n;
	r.depth = n;
	r.h.size = offsetof(struct ig_ustack, ips) + 8 * r.nips;
	memcpy(r.ips, ips, 8 * (size_t)r.nips);
	assert_int_equal(ig_ustacks_on_record(t, &r.h), 0);
}

static struct ig_ustacks *fixture(void)
{
	struct ig_ustacks *t = ig_ustacks_new();

	assert_non_null(t);
	usym(t, A, IG_USYMF_LINE, "read_file (loader.c:187)");
	usym(t, B - 1, IG_USYMF_LINE, "worker_loop (loader.c:305)");
	usym(t, C - 1, IG_USYMF_ROOT, "start_thread+0x2a (libc.so.6)");
	usym(t, X - 1, IG_USYMF_UNMAPPED, "[unmapped 0x1233]");
	usym(t, C, IG_USYMF_LINE | IG_USYMF_INLINED,
	     "read_file (loader.c:187)\nread_sample (loader.c:245)\nworker_loop (loader.c:285)");
	return t;
}

static void complete_and_cut(void **state)
{
	struct ig_ustacks *t = fixture();
	const __u64 whole[] = { A, B, C }, early[] = { A, B }, astray[] = { A, X, C };
	const char *f[40];

	(void)state;
	ustack(t, 1, 0, whole, 3);
	ustack(t, 2, IG_USF_SAMPLE, early, 2);
	ustack(t, 3, 0, astray, 3);
	assert_int_equal(ig_ustacks_frames(t, PID, 1, f, 40), 3);
	assert_string_equal(f[0], "read_file (loader.c:187)");
	assert_string_equal(f[1], "worker_loop (loader.c:305)");
	assert_string_equal(f[2], "start_thread+0x2a (libc.so.6)");
	assert_int_equal(ig_ustacks_frames(t, PID, 2, f, 40), 3);
	assert_string_equal(f[1], "worker_loop (loader.c:305)");
	assert_string_equal(f[2], IG_TRUNC_NOFP);
	assert_int_equal(ig_ustacks_frames(t, PID, 3, f, 40), 2);
	assert_string_equal(f[0], "read_file (loader.c:187)");
	assert_string_equal(f[1], IG_TRUNC_NOFP);
	/* one address, three functions (two inlined) */
	ustack(t, 7, 0, (const __u64[]){ C, C }, 2);
	assert_int_equal(ig_ustacks_frames(t, PID, 7, f, 40), 4);
	assert_string_equal(f[0], "read_file (loader.c:187)");
	assert_string_equal(f[1], "read_sample (loader.c:245)");
	assert_string_equal(f[2], "worker_loop (loader.c:285)");
	assert_string_equal(f[3], "start_thread+0x2a (libc.so.6)");
	/* the walk reached a null frame pointer: whole, whatever the names */
	ustack(t, 8, IG_USF_END, early, 2);
	assert_int_equal(ig_ustacks_frames(t, PID, 8, f, 40), 2);
	ustack(t, 9, IG_USF_END, astray, 3);	/* but cut where it went astray */
	assert_int_equal(ig_ustacks_frames(t, PID, 9, f, 40), 2);
	assert_string_equal(f[1], IG_TRUNC_NOFP);
	/* no room for the mark: the frames that fit */
	assert_int_equal(ig_ustacks_frames(t, PID, 2, f, 2), 2);
	ig_ustacks_free(t);
}

static void deep_and_unknown(void **state)
{
	struct ig_ustacks *t = fixture();
	__u64 deep[IG_USTACK_DEPTH];
	const char *f[40];
	int i;

	(void)state;
	for (i = 0; i < IG_USTACK_DEPTH; i++)
		deep[i] = i ? B : A;
	ustack(t, 4, IG_USF_FULL, deep, IG_USTACK_DEPTH);
	assert_int_equal(ig_ustacks_frames(t, PID, 4, f, 40), IG_USTACK_DEPTH + 1);
	assert_string_equal(f[IG_USTACK_DEPTH], IG_TRUNC_DEPTH);
	deep[1] = 0x500001;	/* never named */
	ustack(t, 5, 0, deep, 2);
	assert_int_equal(ig_ustacks_frames(t, PID, 5, f, 40), 3);
	assert_string_equal(f[1], "[0x500000]");
	/* a reference adds nothing; unknown stacks and processes */
	ustack(t, 6, IG_USF_REF, deep, 2);
	assert_int_equal(ig_ustacks_frames(t, PID, 6, f, 40), -ENOENT);
	assert_int_equal(ig_ustacks_frames(t, PID + 1, 4, f, 40), -ENOENT);
	ig_ustacks_free(t);
}

/* Many processes and stacks: the table grows and keeps them apart. */
static void many(void **state)
{
	struct ig_ustacks *t = ig_ustacks_new();
	struct ig_ustack r = { .h = { .type = IG_REC_USTACK } };
	const char *f[4];
	__u32 i;

	(void)state;
	r.nips = 1;
	r.h.size = offsetof(struct ig_ustack, ips) + 8;
	for (i = 0; i < 5000; i++) {
		r.h.tgid = i % 7;
		r.id = i;
		r.ips[0] = 0x1000 + i;
		assert_int_equal(ig_ustacks_on_record(t, &r.h), 0);
	}
	for (i = 0; i < 5000; i += 97) {
		char want[24];

		snprintf(want, sizeof(want), "[%#x]", 0x1000 + i);
		assert_int_equal(ig_ustacks_frames(t, i % 7, i, f, 4), 2);
		assert_string_equal(f[0], want);
		assert_int_equal(ig_ustacks_frames(t, (i + 1) % 7, i, f, 4), -ENOENT);
	}
	ig_ustacks_free(t);
}

/* Processes 1, 3 and 5 are gone; of theirs only stack 21 stays wanted. */
static const __u32 odd_gone[] = { 1, 3, 5 };
static const struct ig_proctab_pair keep_21[] = { { 1, 21 }, { 3, 21 }, { 5, 21 } };

/* Gone processes' stacks go but for those kept, and with them the names
 * only they used; the rest of the table is found as before. */
static void forget(void **state)
{
	struct ig_ustacks *t = ig_ustacks_new();
	struct ig_ustack r = { .h = { .type = IG_REC_USTACK } };
	const struct ig_stk_forget f = { .gone = odd_gone, .ngone = 3,
					 .keep = keep_21, .nkeep = 3 };
	union {
		struct ig_usym u;
		char b[sizeof(struct ig_usym) + 32];
	} y = { .u = { .h = { .type = IG_REC_USYM } } };
	size_t nsyms;
	const char *fr[4];
	__u32 i;

	(void)state;
	r.nips = 2;
	r.h.size = offsetof(struct ig_ustack, ips) + 16;
	y.u.h.size = sizeof(y.b);
	for (i = 0; i < 3000; i++) {
		r.h.tgid = y.u.h.tgid = i % 6;
		r.id = i;
		r.ips[0] = 0x1000 + i;
		r.ips[1] = 0x100001;	/* looked up as 0x100000 */
		assert_int_equal(ig_ustacks_on_record(t, &r.h), 0);
		y.u.ip = 0x1000 + i;
		y.u.len = snprintf(y.u.name, 32, "f%u", i) + 1;
		assert_int_equal(ig_ustacks_on_record(t, &y.u.h), 0);
		if (i < 6) {		/* one shared caller per process */
			y.u.ip = 0x100000;
			y.u.len = snprintf(y.u.name, 32, "main%u", i) + 1;
			assert_int_equal(ig_ustacks_on_record(t, &y.u.h), 0);
		}
	}
	assert_int_equal(ig_ustacks_count(t, &nsyms), 3000);
	assert_int_equal(nsyms, 3006);
	assert_int_equal(ig_ustacks_forget(t, &f), 0);
	/* 1500 of even processes, and 21 of process 3 */
	assert_int_equal(ig_ustacks_count(t, &nsyms), 1501);
	assert_int_equal(nsyms, 1501 + 3 + 1);
	assert_int_equal(ig_ustacks_frames(t, 3, 21, fr, 4), 3);
	assert_string_equal(fr[0], "f21");
	assert_string_equal(fr[1], "main3");
	assert_int_equal(ig_ustacks_frames(t, 1, 19, fr, 4), -ENOENT);
	for (i = 0; i < 3000; i += 2) {
		char want[16];

		snprintf(want, sizeof(want), "f%u", i);
		assert_int_equal(ig_ustacks_frames(t, i % 6, i, fr, 4), 3);
		assert_string_equal(fr[0], want);
	}
	/* nothing more to go: nothing changes */
	assert_int_equal(ig_ustacks_forget(t, &f), 0);
	assert_int_equal(ig_ustacks_count(t, NULL), 1501);
	ig_ustacks_free(t);
}

/* A process left running with ever new stacks: the table stays within
 * its bound, the stacks seen longest ago go first (a reference counts as
 * seen), one the caller holds stays, and the evictions are counted. */
static void bounded(void **state)
{
	struct ig_ustacks *t = ig_ustacks_new();
	struct ig_ustack r = { .h = { .type = IG_REC_USTACK, .tgid = PID } };
	const struct ig_proctab_pair keep = { PID, 21 };
	const struct ig_stk_forget f = { .all = true, .keep = &keep, .nkeep = 1 };
	uint64_t ev, evsyms;
	const char *fr[4];
	__u32 i, n = 3 * IG_USTACKS_MAX;

	(void)state;
	r.nips = 1;
	r.h.size = offsetof(struct ig_ustack, ips) + 8;
	for (i = 0; i < n; i++) {
		r.id = 1000 + i;
		r.ips[0] = 0x1000 + i;
		r.flags = 0;
		assert_int_equal(ig_ustacks_on_record(t, &r.h), 0);
		/* stack 1000 stays in use all along, by reference */
		r.id = 1000;
		r.flags = IG_USF_REF;
		r.h.size = offsetof(struct ig_ustack, ips);
		assert_int_equal(ig_ustacks_on_record(t, &r.h), 0);
		r.h.size = offsetof(struct ig_ustack, ips) + 8;
		if (ig_ustacks_full(t))
			assert_int_equal(ig_ustacks_trim(t, &f), 0);
		assert_true(ig_ustacks_count(t, NULL) <= IG_USTACKS_MAX);
	}
	ig_ustacks_evicted(t, &ev, &evsyms);
	/* each stack put is either held or evicted, but for 21 (never put) */
	assert_int_equal(ev + ig_ustacks_count(t, NULL), n);
	assert_true(ev >= n - IG_USTACKS_MAX);
	assert_int_equal(evsyms, 0);
	assert_int_equal(ig_ustacks_frames(t, PID, 1000, fr, 4), 2);	/* in use */
	assert_int_equal(ig_ustacks_frames(t, PID, 1001, fr, 4), -ENOENT);	/* oldest */
	assert_int_equal(ig_ustacks_frames(t, PID, 1000 + n - 1, fr, 4), 2);	/* newest */
	ig_ustacks_free(t);
}

/* A leaf's return address in the innermost function itself (arm64's link
 * register left from a call that returned) is no caller: dropped; one in
 * another function is the leaf's caller: kept. */
static void stale_link_register(void **state)
{
	struct ig_ustacks *t = fixture();
	const __u64 P = 0x7000, Q = 0x7040, R = 0x9000;
	const char *f[40];

	(void)state;
	usym(t, P, IG_USYMF_LINE, "__libc_read (read.c:26)");
	usym(t, Q - 1, IG_USYMF_LINE, "__libc_read (read.c:24)");
	usym(t, R - 1, IG_USYMF_LINE, "worker_loop (loader.c:305)");
	ustack(t, 20, IG_USF_LEAF, (const __u64[]){ P, Q, B, C }, 4);
	assert_int_equal(ig_ustacks_frames(t, PID, 20, f, 40), 3);
	assert_string_equal(f[0], "__libc_read (read.c:26)");
	assert_string_equal(f[1], "worker_loop (loader.c:305)");
	assert_string_equal(f[2], "start_thread+0x2a (libc.so.6)");
	/* the same addresses without a leaf found: the walk's own frames */
	ustack(t, 21, 0, (const __u64[]){ P, Q, B, C }, 4);
	assert_int_equal(ig_ustacks_frames(t, PID, 21, f, 40), 4);
	assert_string_equal(f[1], "__libc_read (read.c:24)");
	/* the same without line numbers: a library's symbol and offset */
	usym(t, P + 0x100, 0, "read+0x6c (libc.so.6)");
	usym(t, P + 0x140 - 1, 0, "read+0x53 (libc.so.6)");
	ustack(t, 23, IG_USF_LEAF, (const __u64[]){ P + 0x100, P + 0x140, B, C }, 4);
	assert_int_equal(ig_ustacks_frames(t, PID, 23, f, 40), 3);
	assert_string_equal(f[0], "read+0x6c (libc.so.6)");
	assert_string_equal(f[1], "worker_loop (loader.c:305)");
	/* a leaf's return address in its caller stays */
	ustack(t, 22, IG_USF_LEAF, (const __u64[]){ P, R, B, C }, 4);
	assert_int_equal(ig_ustacks_frames(t, PID, 22, f, 40), 4);
	assert_string_equal(f[1], "worker_loop (loader.c:305)");
	ig_ustacks_free(t);
}

static size_t heap_bytes(void)
{
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd;
}

/* At their bounds, over four processes, the tables of stacks and names
 * hold their entries in place, with no allocation of their own: with each
 * stack's and each name's own copy (32 bytes of heap each here), 80 bytes
 * of heap an entry at these counts; an entry allocated on its own, in a
 * table of pointers half full at most, made it 96. */
static void compact_at_bounds(void **state)
{
	union {
		struct ig_usym u;
		char b[sizeof(struct ig_usym) + 8];
	} y = { .u = { .h = { .type = IG_REC_USYM } } };
	struct ig_ustack r = { .h = { .type = IG_REC_USTACK } };
	struct ig_ustacks *t;
	size_t before, nsyms, per;
	__u32 i;

	(void)state;
	before = heap_bytes();
	t = ig_ustacks_new();
	assert_non_null(t);
	r.nips = 1;
	r.h.size = offsetof(struct ig_ustack, ips) + 8;
	y.u.len = 2;
	y.u.h.size = sizeof(y.u) + 8;
	memcpy(y.u.name, "f", 2);
	for (i = 0; i < IG_USYMS_MAX; i++) {
		if (i < IG_USTACKS_MAX) {
			r.h.tgid = 100 + i % 4;
			r.id = i;
			r.ips[0] = 0x1000 + i;
			assert_int_equal(ig_ustacks_on_record(t, &r.h), 0);
		}
		y.u.h.tgid = 100 + i % 4;
		y.u.ip = 0x1000 + i;
		assert_int_equal(ig_ustacks_on_record(t, &y.u.h), 0);
	}
	assert_int_equal(ig_ustacks_count(t, &nsyms), IG_USTACKS_MAX);
	assert_int_equal(nsyms, IG_USYMS_MAX);
	per = (heap_bytes() - before) / (IG_USTACKS_MAX + IG_USYMS_MAX);
	print_message("%zu bytes of heap an entry\n", per);
	assert_true(per <= 88);
	ig_ustacks_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(complete_and_cut),
		cmocka_unit_test(deep_and_unknown),
		cmocka_unit_test(many),
		cmocka_unit_test(forget),
		cmocka_unit_test(bounded),
		cmocka_unit_test(compact_at_bounds),
		cmocka_unit_test(stale_link_register),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
