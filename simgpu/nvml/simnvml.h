/* SPDX-License-Identifier: GPL-2.0 */
/* simnvml's internal interfaces (nvml.c: init and devices; util.c:
 * utilization). */
#ifndef SIMNVML_H
#define SIMNVML_H

#define NVML_NO_UNVERSIONED_FUNC_DEFS 1
#include <nvml.h>

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "../machine.h"

#define EXPORT __attribute__((visibility("default"), noinline, used))
#define NS 1000000000ull

struct nvmlDevice_st {
	unsigned int index;
};

extern struct simm *machine;
unsigned int ndevices(void);
extern struct nvmlDevice_st devs[SIMM_MAXDEV];

uint64_t clock_ns(clockid_t c);
unsigned long long to_us(uint64_t mono);
uint64_t from_us(unsigned long long us);
bool off(const char *what);
nvmlReturn_t ready(void);
/* The device index of a handle, or -1. */
int dev_of(nvmlDevice_t d);

#define NEED_DEV(d, i)							\
	do {								\
		nvmlReturn_t r_ = ready();				\
		if (r_)							\
			return r_;					\
		if (((i) = dev_of(d)) < 0)				\
			return NVML_ERROR_INVALID_ARGUMENT;		\
	} while (0)

#endif
