// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stacks/pycode.h"

void ig_pycode_gil_objects(struct ig_py_codelayout *l)
{
	l->ob_type = 8;
	l->tp_name = 24;
	l->bytes_size = 16;
	l->bytes_sval = 32;
	l->uni_length = 16;
	l->uni_state = 32;
	l->uni_kind = 2;
}

static int rd64(ig_py_read_fn rd, void *ctx, __u64 a, __u64 *v)
{
	return rd(ctx, a, v, sizeof(*v));
}

/* A C string at @a (tp_name), at most @n - 1 bytes. */
static int rdcstr(ig_py_read_fn rd, void *ctx, __u64 a, char *buf, size_t n)
{
	size_t i;

	if (rd(ctx, a, buf, n - 1))
		return -EFAULT;
	buf[n - 1] = 0;
	for (i = 0; i < n - 1 && buf[i]; i++)
		;
	return 0;
}

static size_t put_utf8(char *out, size_t o, size_t n, __u32 c)
{
	char tmp[4];
	size_t k = 0, i;

	if (c < 0x80) {
		tmp[k++] = c;
	} else if (c < 0x800) {
		tmp[k++] = 0xc0 | c >> 6;
		tmp[k++] = 0x80 | (c & 0x3f);
	} else if (c < 0x10000) {
		tmp[k++] = 0xe0 | c >> 12;
		tmp[k++] = 0x80 | ((c >> 6) & 0x3f);
		tmp[k++] = 0x80 | (c & 0x3f);
	} else {
		tmp[k++] = 0xf0 | c >> 18;
		tmp[k++] = 0x80 | ((c >> 12) & 0x3f);
		tmp[k++] = 0x80 | ((c >> 6) & 0x3f);
		tmp[k++] = 0x80 | (c & 0x3f);
	}
	if (o + k >= n)
		return o;
	for (i = 0; i < k; i++)
		out[o++] = tmp[i];
	return o;
}

/* A compact str object as UTF-8; keeps the tail when @tail and too long. */
static int rdstr(const struct ig_py_codelayout *l, ig_py_read_fn rd, void *ctx,
		 __u64 a, char *out, size_t n, int tail)
{
	unsigned char raw[1024];
	__u64 len, skip = 0, i;
	__u32 state, kind, c;
	size_t o = 0;

	out[0] = 0;
	if (!a || rd64(rd, ctx, a + l->uni_length, &len) ||
	    rd(ctx, a + l->uni_state, &state, sizeof(state)))
		return -EFAULT;
	state >>= l->uni_kind & 31;
	kind = state & 7;
	if (!((state >> 3) & 1) || (kind != 1 && kind != 2 && kind != 4))
		return -EINVAL;	/* not compact: legacy strings are not read */
	if (len > sizeof(raw) / kind)
		skip = tail ? len - sizeof(raw) / kind : 0, len = sizeof(raw) / kind;
	a += (state >> 4) & 1 ? l->ascii_size : l->compact_size;
	if (rd(ctx, a + skip * kind, raw, len * kind))
		return -EFAULT;
	for (i = 0; i < len; i++) {
		c = kind == 1 ? raw[i] : kind == 2 ? ((__u16 *)raw)[i] : ((__u32 *)raw)[i];
		o = put_utf8(out, o, n, c);
	}
	out[o] = 0;
	if (tail && o >= n - 4 && n > 8) {	/* keep the end of a long path */
		size_t cut = o - (n - 8);

		memmove(out + 3, out + cut + 3, o - cut - 3 + 1);
		memcpy(out, "...", 3);
	}
	return 0;
}

static int is_code(const struct ig_py_codelayout *l, ig_py_read_fn rd, void *ctx,
		   __u64 code)
{
	char name[8];
	__u64 type, tp_name;

	if (rd64(rd, ctx, code + l->ob_type, &type) ||
	    rd64(rd, ctx, type + l->tp_name, &tp_name) ||
	    rdcstr(rd, ctx, tp_name, name, sizeof(name)))
		return 0;
	return !strcmp(name, "code");
}

static void read_table(const struct ig_py_codelayout *l, ig_py_read_fn rd,
		       void *ctx, __u64 code, struct ig_pycode *out)
{
	__u64 bytes, len;

	if (rd64(rd, ctx, code + l->linetable, &bytes) || !bytes ||
	    rd64(rd, ctx, bytes + l->bytes_size, &len))
		return;
	if (len > IG_PYCODE_TABLE) {
		len = IG_PYCODE_TABLE;
		out->flags |= IG_PYC_TRUNC;
	}
	if (!rd(ctx, bytes + l->bytes_sval, out->table, len))
		out->ltlen = len;
}

void ig_pycode_read(const struct ig_py_codelayout *l, ig_py_read_fn rd,
		    void *ctx, __u64 code, struct ig_pycode *out)
{
	__u64 name = 0, file = 0;
	__s32 first = 0;

	memset((char *)out + sizeof(out->h), 0, IG_PYCODE_SIZE(0) - sizeof(out->h));
	out->code = code;
	out->version = l->version;
	out->adaptive = l->adaptive;
	if (!is_code(l, rd, ctx, code) ||
	    rd(ctx, code + l->firstlineno, &first, sizeof(first)) ||
	    rd64(rd, ctx, code + (l->qualname ? l->qualname : l->name), &name) ||
	    rd64(rd, ctx, code + l->filename, &file) ||
	    rdstr(l, rd, ctx, name, out->name, sizeof(out->name), 0) ||
	    rdstr(l, rd, ctx, file, out->file, sizeof(out->file), 1)) {
		out->flags = IG_PYC_UNREAD;
		snprintf(out->name, sizeof(out->name), "?");
		out->file[0] = 0;
		return;
	}
	out->firstline = first > 0 ? first : 0;
	read_table(l, rd, ctx, code, out);
}

/* 3.9 co_lnotab: (bytecode delta, signed line delta) pairs; @off bytes. */
static int line_lnotab(const struct ig_pycode *c, __u32 off)
{
	__u32 addr = 0, i;
	int line = c->firstline;

	for (i = 0; i + 1 < c->ltlen; i += 2) {
		addr += c->table[i];
		if (addr > off)
			break;
		line += (signed char)c->table[i + 1];
	}
	return line;
}

/* 3.10 co_linetable: (bytecode delta, line delta or -128: none) pairs,
 * each covering [start, end) of the bytecode; @off bytes. */
static int line_310(const struct ig_pycode *c, __u32 off)
{
	__u32 start, end = 0, i;
	int line = c->firstline, cur;

	for (i = 0; i + 1 < c->ltlen; i += 2) {
		start = end;
		end += c->table[i];
		if ((signed char)c->table[i + 1] != -128)
			line += (signed char)c->table[i + 1];
		cur = (signed char)c->table[i + 1] == -128 ? -1 : line;
		if (off >= start && off < end)
			return cur;
	}
	return -1;
}

static __u32 varint(const struct ig_pycode *c, __u32 *i)
{
	__u32 v = 0, shift = 0, b;

	do {
		if (*i >= c->ltlen || shift > 28)
			return 0;
		b = c->table[(*i)++];
		v |= (b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return v;
}

static int svarint(const struct ig_pycode *c, __u32 *i)
{
	__u32 v = varint(c, i);

	return v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
}

/* 3.11+ location table: entries of (code, length in code units), the
 * line delta by code (15: none, 14: long, 13: no column, 10-12: one-line,
 * 0-9: short forms, same line); @unit is the code unit. */
static int line_311(const struct ig_pycode *c, __u32 unit)
{
	__u32 i = 0, addr = 0, len, code;
	int line = c->firstline, cur;

	while (i < c->ltlen) {
		code = (c->table[i] >> 3) & 15;
		len = (c->table[i] & 7) + 1;
		i++;
		cur = line;
		if (code == 15) {
			cur = -1;
		} else if (code == 14) {
			line += svarint(c, &i);
			cur = line;
			varint(c, &i), varint(c, &i), varint(c, &i);
		} else if (code == 13) {
			line += svarint(c, &i);
			cur = line;
		} else if (code >= 10) {
			line += code - 10;
			cur = line;
			i += 2;
		} else {
			i += 1;
		}
		if (unit >= addr && unit < addr + len)
			return cur;
		addr += len;
	}
	return -1;
}

int ig_pycode_line(const struct ig_pycode *c, __u32 lasti)
{
	if (c->flags & IG_PYC_UNREAD)
		return -1;
	if (c->version < 0x030a)
		return line_lnotab(c, lasti);
	if (c->version < 0x030b)
		return line_310(c, lasti * 2);
	if (lasti < c->adaptive)
		return -1;
	return line_311(c, (lasti - c->adaptive) / 2);
}
