// SPDX-License-Identifier: GPL-2.0
/* The out-of-line parts of pbwire.h: growing, and long nested lengths. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "views/pbwire.h"

int ig_pb_reserve(struct ig_pb *b, size_t more)
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

/* A body of 128 bytes or more: its length takes more than the byte kept. */
void ig_pb_end_long(struct ig_pb *b, size_t mark)
{
	size_t body = b->len - mark, n = ig_pb_varint_len(body);

	if (ig_pb_reserve(b, n - 1))
		return;
	memmove(b->p + mark + n - 1, b->p + mark, body);
	b->len += n - 1;
	ig_pb_put_varint(b->p + mark - 1, body);
}
