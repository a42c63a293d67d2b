// SPDX-License-Identifier: GPL-2.0
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/escape.h"

/* Length of the well-formed UTF-8 character at @s (of @left bytes), or 0;
 * 0 for a C1 control too unless @c1. */
static size_t utf8_char(const unsigned char *s, size_t left, bool c1)
{
	size_t len, i;
	unsigned int cp;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > left)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF, C1 controls */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ||
	    (!c1 && cp >= 0x80 && cp <= 0x9f))
		return 0;
	return len;
}

static size_t utf8_len(const unsigned char *s, size_t left)
{
	return utf8_char(s, left, false);
}

/* The length of the valid UTF-8 that @s[0..@n) starts with. */
static size_t utf8_prefix(const unsigned char *s, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		/* ASCII eight bytes at a time: most strings are all of it */
		while (i + 8 <= n) {
			uint64_t w;

			memcpy(&w, s + i, 8);
			if (w & 0x8080808080808080ull)
				break;
			i += 8;
		}
		if (i >= n)
			break;
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		k = utf8_char(s + i, n - i, true);
		if (!k)
			break;
		i += k;
	}
	return i;
}

bool ig_utf8_valid(const char *s, size_t n)
{
	return utf8_prefix((const unsigned char *)s, n) == n;
}

size_t ig_utf8_fix(char *buf, const char *src, size_t n)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, o = 0, k;

	while (i < n) {
		k = utf8_prefix(s + i, n - i);
		memcpy(buf + o, s + i, k);
		o += k;
		i += k;
		if (i < n) {	/* one byte that starts no character */
			memcpy(buf + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	buf[o] = 0;
	return o;
}

char *ig_utf8_dup(const char *s, size_t n)
{
	char *buf = malloc(IG_UTF8_FIX_SIZE(n));

	if (buf)
		ig_utf8_fix(buf, s, n);
	return buf;
}

char *ig_esc(char *buf, size_t n, const char *src, size_t max)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, o = 0, k;

	if (!n)
		return buf;
	for (; i < max && s[i]; i += k) {
		k = s[i] < 0x80 ? 1 : utf8_len(s + i, max - i);
		if (k && (s[i] >= 0x80 || (s[i] >= 0x20 && s[i] != 0x7f && s[i] != '\\'))) {
			if (o + k >= n)
				break;
			for (size_t j = 0; j < k; j++)
				buf[o++] = s[i + j];
			continue;
		}
		k = 1;
		if (o + 4 >= n)
			break;
		snprintf(buf + o, 5, "\\x%02x", s[i]);
		o += 4;
	}
	buf[o] = 0;
	return buf;
}
