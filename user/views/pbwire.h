/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small protobuf wire-format encoder: varints, fixed64, length-delimited
 * fields and nested messages, appended to a growable buffer.  Errors are
 * sticky (the first -errno is kept and later calls do nothing), so a
 * caller encodes a whole message and checks once.
 *
 * The field writers are inline: a trace has a few fields per record of a
 * recording, and a call each cost more than the encoding.  They grow the
 * buffer out of line (ig_pb_reserve) when it lacks room.
 */
#ifndef IG_PBWIRE_H
#define IG_PBWIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ig_pb {
	uint8_t *p;
	size_t len, cap;
	int err;		/* 0 or the first -errno */
};

#define IG_PB_VARINT_MAX 10

/* Room for @more bytes past what is there: 0 or the sticky error. */
int ig_pb_reserve(struct ig_pb *b, size_t more);
void ig_pb_reset(struct ig_pb *b);	/* empties, keeps the memory */
void ig_pb_free(struct ig_pb *b);
void ig_pb_end_long(struct ig_pb *b, size_t mark);

/* Writes @v as a varint at @p; returns the end. */
static inline uint8_t *ig_pb__varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Writes @v as a varint to @out (IG_PB_VARINT_MAX bytes); returns its length. */
static inline size_t ig_pb_put_varint(uint8_t *out, uint64_t v)
{
	return (size_t)(ig_pb__varint(out, v) - out);
}

static inline size_t ig_pb_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/*
 * The field's tag written, with room for @more bytes after it: where they
 * go, or NULL after an error.  The writers below keep the position in a
 * local and store the length once at the end (ig_pb__done): a byte store
 * may alias @b, so each b->len += ... would load it again.
 */
static inline uint8_t *ig_pb__tag(struct ig_pb *b, uint32_t field, int wt, size_t more)
{
	more += IG_PB_VARINT_MAX;
	if (b->err || (b->cap - b->len < more && ig_pb_reserve(b, more)))
		return NULL;
	return ig_pb__varint(b->p + b->len, (uint64_t)field << 3 | wt);
}

static inline void ig_pb__done(struct ig_pb *b, const uint8_t *end)
{
	b->len = (size_t)(end - b->p);
}

enum { IG_PB_WT_VARINT = 0, IG_PB_WT_I64 = 1, IG_PB_WT_LEN = 2 };

static inline void ig_pb_varint(struct ig_pb *b, uint32_t field, uint64_t v)
{
	uint8_t *p = ig_pb__tag(b, field, IG_PB_WT_VARINT, IG_PB_VARINT_MAX);

	if (p)
		ig_pb__done(b, ig_pb__varint(p, v));
}

/* int64: two's complement */
static inline void ig_pb_sint(struct ig_pb *b, uint32_t field, int64_t v)
{
	ig_pb_varint(b, field, (uint64_t)v);
}

static inline void ig_pb_fixed64(struct ig_pb *b, uint32_t field, uint64_t v)
{
	uint8_t *p = ig_pb__tag(b, field, IG_PB_WT_I64, 8);
	int i;

	if (!p)
		return;
	for (i = 0; i < 8; i++)	/* little-endian on the wire */
		p[i] = (uint8_t)(v >> (8 * i));
	ig_pb__done(b, p + 8);
}

static inline void ig_pb_bytes(struct ig_pb *b, uint32_t field, const void *d, size_t n)
{
	uint8_t *p = ig_pb__tag(b, field, IG_PB_WT_LEN, IG_PB_VARINT_MAX + n);

	if (!p)
		return;
	p = ig_pb__varint(p, n);
	if (n)
		memcpy(p, d, n);
	ig_pb__done(b, p + n);
}

static inline void ig_pb_string(struct ig_pb *b, uint32_t field, const char *s)
{
	ig_pb_bytes(b, field, s, strlen(s));
}

/*
 * Nested message: ig_pb_begin() returns a mark, ig_pb_end() writes the
 * length in front of what was appended since.  The length takes one byte
 * until it is known; a longer one moves the body (messages here are small).
 */
static inline size_t ig_pb_begin(struct ig_pb *b, uint32_t field)
{
	uint8_t *p = ig_pb__tag(b, field, IG_PB_WT_LEN, 1);

	if (!p)
		return 0;
	*p++ = 0;
	ig_pb__done(b, p);
	return b->len;
}

static inline void ig_pb_end(struct ig_pb *b, size_t mark)
{
	if (b->err)
		return;
	if (b->len - mark < 0x80)
		b->p[mark - 1] = (uint8_t)(b->len - mark);
	else
		ig_pb_end_long(b, mark);
}

#endif
