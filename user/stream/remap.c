// SPDX-License-Identifier: GPL-2.0
/*
 * Records moved into another frame (docs/design.md §6.2): the table of
 * their fields comes from bpf/record_fields.def, so a record type gets
 * its times moved by being listed there, not by a case in each place
 * that moves records.
 */
#include <string.h>
#include "stream/remap.h"

#define MEMBER(s, m)		(((struct s *)0)->m)
#define FK_SIZE_TIME		8
#define FK_SIZE_PID		4
#define FK_SIZE_CPU		4
#define FK_SIZE_FILE_KEY	8
#define FK_SIZE_DEVICE		4

/* Each field's size is its kind's. */
#define CHECK(K, s, m) \
	_Static_assert(sizeof(MEMBER(s, m)) == FK_SIZE_##K, #s "." #m " is not a " #K);
#define IG_FIELDS_NONE(T)
#define IG_FIELD(T, K, s, m)			CHECK(K, s, m)
#define IG_FIELD_IF(T, K, s, m, test, v)	CHECK(K, s, m)
#define IG_FIELD_IF_FLAG(T, K, s, m, test, f)	CHECK(K, s, m)
#define IG_FIELD_EACH(T, K, s, a, m, count)	CHECK(K, s, a[0].m)
#include "../../bpf/record_fields.def"
#undef IG_FIELDS_NONE
#undef IG_FIELD
#undef IG_FIELD_IF
#undef IG_FIELD_IF_FLAG
#undef IG_FIELD_EACH

#define FIELD(T, K, s, m) \
	.type = IG_REC_##T, .kind = IG_FK_##K, .size = sizeof(MEMBER(s, m)), \
	.off = offsetof(struct s, m)
#define TEST(s, test) \
	.test_off = offsetof(struct s, test), .test_size = sizeof(MEMBER(s, test))

static const struct ig_field table[] = {
#define IG_FIELDS_NONE(T)			{ .type = IG_REC_##T, .kind = IG_FK_NONE },
#define IG_FIELD(T, K, s, m)			{ FIELD(T, K, s, m) },
#define IG_FIELD_IF(T, K, s, m, test, v) \
	{ FIELD(T, K, s, m), .when = IG_FW_EQ, TEST(s, test), .value = (v) },
#define IG_FIELD_IF_FLAG(T, K, s, m, test, f) \
	{ FIELD(T, K, s, m), .when = IG_FW_FLAG, TEST(s, test), .value = (f) },
#define IG_FIELD_EACH(T, K, s, a, m, count) \
	{ .type = IG_REC_##T, .kind = IG_FK_##K, .size = sizeof(MEMBER(s, a[0].m)), \
	  .off = offsetof(struct s, a[0].m) - offsetof(struct s, a), \
	  .base = offsetof(struct s, a), .stride = sizeof(MEMBER(s, a[0])), \
	  .max = sizeof(MEMBER(s, a)) / sizeof(MEMBER(s, a[0])), \
	  .count_off = offsetof(struct s, count), .count_size = sizeof(MEMBER(s, count)) },
#include "../../bpf/record_fields.def"
#undef IG_FIELDS_NONE
#undef IG_FIELD
#undef IG_FIELD_IF
#undef IG_FIELD_IF_FLAG
#undef IG_FIELD_EACH
};

static uint64_t load(const char *p, unsigned int size)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (size) {
	case 1: memcpy(&u8, p, 1); return u8;
	case 2: memcpy(&u16, p, 2); return u16;
	case 4: memcpy(&u32, p, 4); return u32;
	case 8: memcpy(&u64, p, 8); return u64;
	}
	return 0;
}

static void store(char *p, unsigned int size, uint64_t v)
{
	uint32_t u32 = (uint32_t)v;

	if (size == 4)
		memcpy(p, &u32, 4);
	else if (size == 8)
		memcpy(p, &v, 8);
}

/* The value at @off of a record of @len bytes, through @fn. */
static void move(char *r, size_t len, size_t off, const struct ig_field *f,
		 ig_remap_fn fn, void *ctx)
{
	uint64_t v;

	if (off + f->size > len)
		return;
	v = load(r + off, f->size);
	if ((f->kind == IG_FK_TIME && (!v || v == UINT64_MAX)) ||
	    (f->kind == IG_FK_PID && !v))
		return;
	store(r + off, f->size, fn(ctx, f->kind, v));
}

static bool applies(const char *r, size_t len, const struct ig_field *f)
{
	uint64_t t;

	if (f->when == IG_FW_ALWAYS)
		return true;
	if (f->test_off + f->test_size > len)
		return false;
	t = load(r + f->test_off, f->test_size);
	return f->when == IG_FW_EQ ? t == f->value : (t & f->value) != 0;
}

static void remap_field(char *r, size_t len, const struct ig_field *f,
			ig_remap_fn fn, void *ctx)
{
	uint64_t k, n;

	if (f->kind == IG_FK_NONE || !applies(r, len, f))
		return;
	if (!f->stride) {
		move(r, len, f->off, f, fn, ctx);
		return;
	}
	n = f->count_off + f->count_size <= len ? load(r + f->count_off, f->count_size) : 0;
	for (k = 0; k < n && k < f->max && f->base + (k + 1) * f->stride <= len; k++)
		move(r, len, f->base + k * f->stride + f->off, f, fn, ctx);
}

void ig_remap_record(struct ig_hdr *h, ig_remap_fn fn, void *ctx)
{
	static const struct ig_field ts = { .kind = IG_FK_TIME, .size = 8 };
	static const struct ig_field pid = { .kind = IG_FK_PID, .size = 4 };
	char *r = (char *)h;
	size_t k;

	move(r, h->size, offsetof(struct ig_hdr, ts), &ts, fn, ctx);
	move(r, h->size, offsetof(struct ig_hdr, tid), &pid, fn, ctx);
	move(r, h->size, offsetof(struct ig_hdr, tgid), &pid, fn, ctx);
	h->cpu = (h->cpu & ~0xffffu) |
		 ((uint32_t)fn(ctx, IG_FK_CPU, IG_HDR_CPU(h->cpu)) & 0xffffu);
	for (k = 0; k < sizeof(table) / sizeof(table[0]); k++)
		if (table[k].type == h->type)
			remap_field(r, h->size, &table[k], fn, ctx);
}

const struct ig_field *ig_remap_table(size_t *n)
{
	*n = sizeof(table) / sizeof(table[0]);
	return table;
}

bool ig_remap_listed(unsigned int type)
{
	size_t k;

	for (k = 0; k < sizeof(table) / sizeof(table[0]); k++)
		if (table[k].type == type)
			return true;
	return false;
}
