// SPDX-License-Identifier: GPL-2.0
/*
 * The entry point table, generated from bpf/cuda_api.def beside the enum,
 * so that adding a driver entry point is one line there.
 */
#include <string.h>
#include "stream/cuda_api.h"

/* Recordings store these ids: the list only grows at its end. */
_Static_assert(IG_API_cuLaunchKernel == 1, "enum ig_api changed");
_Static_assert(IG_API_cuMemcpyAsync == 9, "enum ig_api changed");
_Static_assert(IG_API_cuMemcpyHtoD == 34, "enum ig_api changed");
_Static_assert(IG_API_cuStreamSynchronize == 54, "enum ig_api changed");
_Static_assert(IG_API_cuInit == 89, "enum ig_api changed");
_Static_assert(IG_API__MAX >= 90, "enum ig_api lost entries");

struct api_info {
	const char *name;
	unsigned char cls;	/* enum ig_api_class */
	unsigned char devarg;
};

static const struct api_info apis[IG_API__MAX] = {
#define IG_API(n, c, d) [IG_API_##n] = { #n, IG_AC_##c, d },
#include "../../bpf/cuda_api.def"
#undef IG_API
};

const char *ig_api_name(unsigned int api)
{
	return api < IG_API__MAX ? apis[api].name : NULL;
}

int ig_api_by_name(const char *name)
{
	unsigned int i;

	if (!name)
		return -1;
	for (i = 1; i < IG_API__MAX; i++)
		if (apis[i].name && !strcmp(apis[i].name, name))
			return (int)i;
	return -1;
}

enum ig_api_class ig_api_class_of(unsigned int api)
{
	return api < IG_API__MAX ? (enum ig_api_class)apis[api].cls : 0;
}

unsigned int ig_api_dev_arg(unsigned int api)
{
	return api < IG_API__MAX ? apis[api].devarg : 0;
}

bool ig_api_submits(unsigned int api)
{
	return IG_AC_SUBMITS(ig_api_class_of(api));
}

int ig_api_is_sync_copy(unsigned int api)
{
	return ig_api_class_of(api) == IG_AC_SYNC_COPY;
}
