// SPDX-License-Identifier: GPL-2.0
/*
 * Name tables.  Designated initialisers keep each name next to its enum
 * value.  The CUDA entry point table is in user/stream/cuda_api.c.
 */
#include <stddef.h>
#include "engine/names.h"

static const char *const causes[IG_C__MAX] = {
#define IG_CAUSE(cause, name, doing, ...) [IG_C_##cause] = name,
#include "engine/attrib/causes.def"
#undef IG_CAUSE
};

const char *ig_names_cause(unsigned int cause)
{
	return cause < IG_C__MAX ? causes[cause] : NULL;
}

size_t ig_names_by_ns(const uint64_t *ns, unsigned int *out)
{
	size_t n = 0, i, j;

	for (i = 0; ns && i < IG_C__MAX; i++) {
		if (!ns[i])
			continue;
		for (j = n; j > 0 && ns[out[j - 1]] < ns[i]; j--)
			out[j] = out[j - 1];
		out[j] = (unsigned int)i;
		n++;
	}
	return n;
}
