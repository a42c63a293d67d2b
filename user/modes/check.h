/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IG_CHECK_H
#define IG_CHECK_H

#include <sys/types.h>

/* Prints readiness; 0 when tracing will work, 1 when it will not. */
int ig_check(pid_t pid, const char *libcuda);

#endif
