// SPDX-License-Identifier: GPL-2.0
/*
 * Name tables.  Designated initialisers keep each name next to its enum
 * value.  The CUDA entry point table is in user/stream/cuda_api.c.
 */
#include "engine/names.h"

static const char *const causes[IG_C__MAX] = {
#define IG_CAUSE(cause, name, doing, ...) [IG_C_##cause] = name,
#include "engine/causes.def"
#undef IG_CAUSE
};

const char *ig_names_cause(unsigned int cause)
{
	return cause < IG_C__MAX ? causes[cause] : NULL;
}
