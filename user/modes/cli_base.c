// SPDX-License-Identifier: GPL-2.0
/* The base of the command line's argp parsers (cli.c, agent_cli.c). */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "host/identity.h"
#include "modes/cli_base.h"
#include "probes/log.h"

/* argp_error() prints; ARGP_NO_EXIT makes it return, so remember it. */
static struct {
	enum ig_cli_errors errors;
	const char *prefix;
	bool bad, helping;
} cur;

bool ig_cli_asks_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return false;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-?") ||
		    !strcmp(argv[i], "--usage") || !strcmp(argv[i], "--version") ||
		    !strcmp(argv[i], "-V"))
			return true;
	}
	return false;
}

int ig_cli_run(const struct argp *argp, int argc, char **argv, unsigned int flags,
	       void *input, enum ig_cli_errors errors, const char *prefix)
{
	int idx = 0, err;

	cur.errors = errors;
	cur.prefix = prefix;
	cur.bad = false;
	cur.helping = ig_cli_asks_help(argc, argv);
	err = argp_parse(argp, argc, argv, ARGP_NO_EXIT | flags, &idx, input);
	if (cur.helping)
		return -1;
	return err || cur.bad ? 2 : 0;
}

/* One line, as every other error of the agent (argp's would add two). */
static void one_line(const char *fmt, va_list ap)
{
	char msg[1024];

	if (cur.bad)
		return;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	vsnprintf(msg, sizeof(msg), fmt, ap);
#pragma GCC diagnostic pop
	ig_err("%s%s", cur.prefix ? cur.prefix : "", msg);
}

void ig_cli_error(struct argp_state *st, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (cur.errors == IG_CLI_ONE_LINE) {
		one_line(fmt, ap);
	} else if (vasprintf(&msg, fmt, ap) >= 0) {
		argp_error(st, "%s", msg);
		free(msg);
	} else {
		argp_error(st, "out of memory");
	}
	va_end(ap);
	cur.bad = true;
}

bool ig_cli_failed(void)
{
	return cur.bad;
}

bool ig_cli_helping(void)
{
	return cur.helping;
}

bool ig_cli_long(const char *s, long lo, long hi, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return !errno && !*end && end != s && *v >= lo && *v <= hi;
}

bool ig_cli_seconds(const char *s, double max, bool whole, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return !errno && !*end && end != s && *v > 0 && *v <= max &&
	       (!whole || *v == floor(*v));
}

unsigned int ig_cli_ringbuf(struct argp_state *st, const char *s, unsigned int dflt)
{
	long v;

	if (!ig_cli_long(s, 1, 1024, &v) || (v & (v - 1))) {
		ig_cli_error(st, "invalid --ringbuf-mb: '%s' (a power of two from 1 to 1024)", s);
		return dflt;
	}
	return v;
}

void ig_cli_node_root(struct argp_state *st, const char *arg)
{
	if (arg[0] != '/' || strlen(arg) >= 200)
		ig_cli_error(st, "invalid --node-root: '%s' (an absolute directory)", arg);
	else
		ig_identity_set_node_root(arg);
}

void ig_cli_days_engine(struct ig_engine_opts *o, bool block_s_given, bool timeline)
{
	if (!block_s_given)
		o->est_block_s = IG_DAYS_EST_BLOCK_S;
	if (!o->est_block)
		o->est_block = IG_DAYS_EST_BLOCK;
	o->no_est_track = !timeline;
}

void ig_cli_days_heap(void)
{
	mallopt(M_MMAP_THRESHOLD, IG_DAYS_MMAP_MIN);
}
