// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pbwire.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2 };

size_t ig_pb_put_varint(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

size_t ig_pb_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static int reserve(struct ig_pb *b, size_t more)
{
	size_t cap;
	uint8_t *p;

	if (b->err)
		return b->err;
	if (b->len + more <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + more)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return b->err = -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

void ig_pb_reset(struct ig_pb *b)
{
	b->len = 0;
	b->err = 0;
}

void ig_pb_free(struct ig_pb *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static void put_tag(struct ig_pb *b, uint32_t field, int wt, size_t more)
{
	if (reserve(b, IG_PB_VARINT_MAX + more))
		return;
	b->len += ig_pb_put_varint(b->p + b->len, (uint64_t)field << 3 | wt);
}

void ig_pb_varint(struct ig_pb *b, uint32_t field, uint64_t v)
{
	put_tag(b, field, WT_VARINT, IG_PB_VARINT_MAX);
	if (!b->err)
		b->len += ig_pb_put_varint(b->p + b->len, v);
}

void ig_pb_sint(struct ig_pb *b, uint32_t field, int64_t v)
{
	ig_pb_varint(b, field, (uint64_t)v);
}

void ig_pb_fixed64(struct ig_pb *b, uint32_t field, uint64_t v)
{
	int i;

	put_tag(b, field, WT_I64, 8);
	if (b->err)
		return;
	for (i = 0; i < 8; i++)	/* little-endian on the wire */
		b->p[b->len++] = (uint8_t)(v >> (8 * i));
}

void ig_pb_bytes(struct ig_pb *b, uint32_t field, const void *d, size_t n)
{
	put_tag(b, field, WT_LEN, IG_PB_VARINT_MAX + n);
	if (b->err)
		return;
	b->len += ig_pb_put_varint(b->p + b->len, n);
	if (n)
		memcpy(b->p + b->len, d, n);
	b->len += n;
}

void ig_pb_string(struct ig_pb *b, uint32_t field, const char *s)
{
	ig_pb_bytes(b, field, s, strlen(s));
}

size_t ig_pb_begin(struct ig_pb *b, uint32_t field)
{
	put_tag(b, field, WT_LEN, 1);
	if (b->err)
		return 0;
	b->p[b->len++] = 0;
	return b->len;
}

void ig_pb_end(struct ig_pb *b, size_t mark)
{
	size_t body, n;

	if (b->err)
		return;
	body = b->len - mark;
	n = ig_pb_varint_len(body);
	if (n > 1) {
		if (reserve(b, n - 1))
			return;
		memmove(b->p + mark + n - 1, b->p + mark, body);
		b->len += n - 1;
	}
	ig_pb_put_varint(b->p + mark - 1, body);
}
