// SPDX-License-Identifier: GPL-2.0
/*
 * The library's errors: the last one's message, per thread, as
 * ncclGetLastError returns it, and the check of a communicator that every
 * entry point makes.  The entry points (api.c), the launches (enqueue.c)
 * and the rendezvous (shm.c) all report through here, and it calls none
 * of them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "simnccl.h"

static __thread char last_err[256];

ncclResult_t sn_error(ncclResult_t r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_err, sizeof(last_err), fmt, ap);
	va_end(ap);
	if (getenv("SIMNCCL_DEBUG"))
		fprintf(stderr, "simnccl: %s\n", last_err);
	return r;
}

bool sn_comm_ok(const struct ncclComm *c)
{
	return c && c->magic == SN_COMM_MAGIC;
}

const char *sn_last_error(void)
{
	return last_err;
}
