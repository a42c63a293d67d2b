// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>
#include "log.h"

bool ig_verbose;

static void vline(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "idlegap: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void ig_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("", fmt, ap);
	va_end(ap);
}

void ig_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("warning: ", fmt, ap);
	va_end(ap);
}

void ig_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("", fmt, ap);
	va_end(ap);
}

void ig_debug(const char *fmt, ...)
{
	va_list ap;

	if (!ig_verbose)
		return;
	va_start(ap, fmt);
	vline("debug: ", fmt, ap);
	va_end(ap);
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
