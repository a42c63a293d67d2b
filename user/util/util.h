/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IG_UTIL_H
#define IG_UTIL_H

#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Copies what fits of @src into @dst[n], always terminated. */
static inline void ig_strcpy(char *dst, size_t n, const char *src)
{
	size_t len = strnlen(src, n - 1);

	memcpy(dst, src, len);
	dst[len] = 0;
}

/* Makes room for element @n of the array *@v (capacity *@cap elements of
 * @elem bytes), doubling it from @first; false when out of memory. */
static inline bool ig_grow_from(void **v, size_t *cap, size_t n, size_t elem,
				size_t first)
{
	size_t c = *cap ? *cap * 2 : first;
	void *p;

	if (n < *cap)
		return true;
	p = realloc(*v, c * elem);
	if (!p)
		return false;
	*v = p;
	*cap = c;
	return true;
}

static inline bool ig_grow(void **v, size_t *cap, size_t n, size_t elem)
{
	return ig_grow_from(v, cap, n, elem, 16);
}

/* SIGINT, SIGTERM and SIGHUP call @fn (which asks the main loop to stop). */
static inline void ig_on_stop_signals(void (*fn)(int))
{
	struct sigaction sa = { .sa_handler = fn };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

#endif
