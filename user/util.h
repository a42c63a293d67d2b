/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IG_UTIL_H
#define IG_UTIL_H

#include <string.h>

/* Copies what fits of @src into @dst[n], always terminated. */
static inline void ig_strcpy(char *dst, size_t n, const char *src)
{
	size_t len = strnlen(src, n - 1);

	memcpy(dst, src, len);
	dst[len] = 0;
}

#endif
