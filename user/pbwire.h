/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small protobuf wire-format encoder: varints, fixed64, length-delimited
 * fields and nested messages, appended to a growable buffer.  Errors are
 * sticky (the first -errno is kept and later calls do nothing), so a
 * caller encodes a whole message and checks once.
 */
#ifndef IG_PBWIRE_H
#define IG_PBWIRE_H

#include <stddef.h>
#include <stdint.h>

struct ig_pb {
	uint8_t *p;
	size_t len, cap;
	int err;		/* 0 or the first -errno */
};

#define IG_PB_VARINT_MAX 10

/* Writes @v as a varint to @out (IG_PB_VARINT_MAX bytes); returns its length. */
size_t ig_pb_put_varint(uint8_t *out, uint64_t v);
size_t ig_pb_varint_len(uint64_t v);

void ig_pb_reset(struct ig_pb *b);	/* empties, keeps the memory */
void ig_pb_free(struct ig_pb *b);

void ig_pb_varint(struct ig_pb *b, uint32_t field, uint64_t v);
void ig_pb_sint(struct ig_pb *b, uint32_t field, int64_t v);	/* int64: two's complement */
void ig_pb_fixed64(struct ig_pb *b, uint32_t field, uint64_t v);
void ig_pb_bytes(struct ig_pb *b, uint32_t field, const void *d, size_t n);
void ig_pb_string(struct ig_pb *b, uint32_t field, const char *s);

/*
 * Nested message: ig_pb_begin() returns a mark, ig_pb_end() writes the
 * length in front of what was appended since.  The length takes one byte
 * until it is known; a longer one moves the body (messages here are small).
 */
size_t ig_pb_begin(struct ig_pb *b, uint32_t field);
void ig_pb_end(struct ig_pb *b, size_t mark);

#endif
