// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>
#include "log.h"

bool ig_verbose;

void ig_log(enum ig_log_level level, const char *fmt, ...)
{
	static const char *const prefix[] = {
		[IG_LOG_ERR] = "error: ", [IG_LOG_WARN] = "warning: ",
		[IG_LOG_INFO] = "", [IG_LOG_DEBUG] = "debug: ",
	};
	va_list ap;

	if (level == IG_LOG_DEBUG && !ig_verbose)
		return;
	fprintf(stderr, "idlegap: %s", prefix[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	(void)level;
	if (!ig_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void ig_log_setup_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
