/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names of attribution causes.  Record field names are in records.h, CUDA
 * driver entry points in cuda_api.h.
 */
#ifndef IG_ENGINE_NAMES_H
#define IG_ENGINE_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include "stream/records.h"
#include "stream/cuda_api.h"

/* Attribution causes (docs/design.md §5.5), listed in engine/attrib/causes.def. */
enum ig_cause {
#define IG_CAUSE(cause, name, doing, ...) IG_C_##cause,
#include "engine/attrib/causes.def"
#undef IG_CAUSE
	IG_C__MAX,
};

/* JSON cause identifier; NULL outside enum ig_cause. */
const char *ig_names_cause(unsigned int cause);

/* The causes with time in @ns (IG_C__MAX entries; NULL: none) into
 * @out, most first (ties in enum order); how many. */
size_t ig_names_by_ns(const uint64_t *ns, unsigned int *out);

#endif
