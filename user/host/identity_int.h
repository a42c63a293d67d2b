/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by identity.c (/proc) and identity_runtime.c (the container
 * runtime's records): which bytes a label may hold. */
#ifndef IG_IDENTITY_INT_H
#define IG_IDENTITY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include "host/identity.h"

typedef bool (*ig_char_ok)(char c);

static inline bool id_c_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static inline bool id_c_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline bool id_c_alnum(char c)
{
	return id_c_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline bool id_c_dns(char c)
{
	return id_c_digit(c) || (c >= 'a' && c <= 'z') || c == '-' || c == '.';
}

static inline bool id_c_step(char c)
{
	return id_c_alnum(c) || c == '_';
}

/* CUDA_VISIBLE_DEVICES: "0,2", "GPU-8f3c...", "MIG-GPU-.../1/0" */
static inline bool id_c_cvd(char c)
{
	return id_c_alnum(c) || c == ',' || c == '-' || c == '/' || c == '_';
}

/* Copies @s[@len] into @dst[@n] when every byte passes @ok. */
static inline bool id_set_if(char *dst, size_t n, const char *s, size_t len,
		   ig_char_ok ok)
{
	size_t i;

	if (!len || len >= n)
		return false;
	for (i = 0; i < len; i++)
		if (!ok(s[i]))
			return false;
	memcpy(dst, s, len);
	dst[len] = '\0';
	return true;
}

/* The runtime's record of @id's container, under the node root
 * (identity_runtime.c): the pod's name and namespace, the container's
 * NVIDIA_VISIBLE_DEVICES. */
void ig_identity_read_runtime(struct ig_identity *id);

#endif
