// SPDX-License-Identifier: GPL-2.0
/* The protobuf encoder under the Perfetto writer, and the writer's errors. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "views/pbwire.h"
#include "views/perfetto.h"

static void varints(void **state)
{
	static const struct { uint64_t v; size_t n; uint8_t b[10]; } c[] = {
		{ 0, 1, { 0 } },
		{ 1, 1, { 1 } },
		{ 127, 1, { 0x7f } },
		{ 128, 2, { 0x80, 0x01 } },
		{ 300, 2, { 0xac, 0x02 } },
		{ UINT64_MAX, 10, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 } },
	};
	uint8_t out[IG_PB_VARINT_MAX];
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		assert_int_equal(ig_pb_put_varint(out, c[i].v), c[i].n);
		assert_int_equal(ig_pb_varint_len(c[i].v), c[i].n);
		assert_memory_equal(out, c[i].b, c[i].n);
	}
}

static void fields(void **state)
{
	struct ig_pb b = { 0 };
	static const uint8_t want[] = {
		0x08, 0x96, 0x01,			/* 1: varint 150 */
		0x11, 1, 2, 3, 4, 5, 6, 7, 8,		/* 2: fixed64, little-endian */
		0x1a, 0x03, 'a', 'b', 'c',		/* 3: string */
		0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* 4: int64 -1 */
	};

	(void)state;
	ig_pb_varint(&b, 1, 150);
	ig_pb_fixed64(&b, 2, 0x0807060504030201ull);
	ig_pb_string(&b, 3, "abc");
	ig_pb_sint(&b, 4, -1);
	assert_int_equal(b.err, 0);
	assert_int_equal(b.len, sizeof(want));
	assert_memory_equal(b.p, want, sizeof(want));
	ig_pb_free(&b);
}

/* Nested lengths: one byte, then a body over 127 bytes moves to make room. */
static void nesting(void **state)
{
	struct ig_pb b = { 0 };
	char body[200];
	size_t outer, inner;

	(void)state;
	memset(body, 'x', sizeof(body));
	outer = ig_pb_begin(&b, 5);
	inner = ig_pb_begin(&b, 6);
	ig_pb_varint(&b, 1, 1);
	ig_pb_end(&b, inner);
	ig_pb_bytes(&b, 2, body, sizeof(body));
	ig_pb_end(&b, outer);
	assert_int_equal(b.err, 0);
	/* 5 (LEN) len=2+2+1+2+200=207 -> 0xcf 0x01 */
	assert_int_equal(b.len, 1 + 2 + 207);
	assert_int_equal(b.p[0], 0x2a);
	assert_int_equal(b.p[1], 0xcf);
	assert_int_equal(b.p[2], 0x01);
	assert_int_equal(b.p[3], 0x32);		/* 6 (LEN) */
	assert_int_equal(b.p[4], 2);
	assert_int_equal(b.p[5], 0x08);
	assert_int_equal(b.p[6], 1);
	assert_int_equal(b.p[7], 0x12);
	assert_int_equal(b.p[8], 0xc8);		/* 200 */
	assert_int_equal(b.p[9], 0x01);
	assert_memory_equal(b.p + 10, body, sizeof(body));
	ig_pb_reset(&b);
	assert_int_equal(b.len, 0);
	ig_pb_free(&b);
}

/* After an error every writer leaves the buffer as it is, room or not. */
static void sticky_errors(void **state)
{
	struct ig_pb b = { 0 };
	size_t m;

	(void)state;
	assert_int_equal(ig_pb_reserve(&b, 4096), 0);
	ig_pb_varint(&b, 1, 1);
	b.err = -ENOMEM;
	ig_pb_varint(&b, 1, 150);
	ig_pb_fixed64(&b, 2, 1);
	ig_pb_string(&b, 3, "abc");
	m = ig_pb_begin(&b, 4);
	ig_pb_varint(&b, 1, 1);
	ig_pb_end(&b, m);
	assert_int_equal(m, 0);
	assert_int_equal(b.len, 2);
	assert_int_equal(ig_pb_reserve(&b, 1), -ENOMEM);
	ig_pb_reset(&b);			/* reset clears it */
	ig_pb_varint(&b, 1, 150);
	assert_int_equal(b.len, 3);
	ig_pb_free(&b);
}

static void writer_full_disk(void **state)
{
	struct ig_tl_device d = { .id = 1, .name = "GPU 1" };
	struct ig_tl_slice s = { .kind = IG_TL_IDLE, .device = 1, .ts = 10, .dur = 5,
				 .name = "idle: storage" };
	struct ig_perfetto *w;
	FILE *f = fopen("/dev/full", "w");
	int i, err = 0;

	(void)state;
	if (!f)
		skip();
	assert_int_equal(ig_perfetto_fopen(&w, f), 0);	/* buffered so far */
	assert_int_equal(ig_perfetto_device(w, &d), 0);
	for (i = 0; i < 100000 && !err; i++)
		err = ig_perfetto_slice(w, &s);
	/* the buffer filled and the error came back, or close says it */
	if (!err)
		err = ig_perfetto_close(w);
	else
		assert_int_equal(ig_perfetto_close(w), -ENOSPC);
	assert_int_equal(err, -ENOSPC);
}

static void writer_rejects(void **state)
{
	struct ig_tl_slice s = { .kind = IG_TL_BUSY, .name = NULL };
	struct ig_perfetto_stats st;
	struct ig_perfetto *w;
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	(void)state;
	assert_non_null(f);
	assert_int_equal(ig_perfetto_fopen(&w, f), 0);
	assert_int_equal(ig_perfetto_slice(w, &s), -EINVAL);	/* no name */
	s.name = "busy";
	s.n_annots = 1000;
	assert_int_equal(ig_perfetto_slice(w, &s), -EINVAL);
	s.n_annots = 0;
	assert_int_equal(ig_perfetto_slice(w, &s), 0);		/* not sticky */
	assert_int_equal(ig_perfetto_slice(w, &s), 0);
	ig_perfetto_stats(w, &st);
	assert_int_equal(st.slices, 2);
	assert_int_equal(st.interned, 1);			/* "busy" once */
	assert_int_equal(ig_perfetto_close(w), 0);
	assert_int_equal(n, st.bytes);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(varints),
		cmocka_unit_test(fields),
		cmocka_unit_test(nesting),
		cmocka_unit_test(sticky_errors),
		cmocka_unit_test(writer_full_disk),
		cmocka_unit_test(writer_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
