/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the two argp parsers of the command line share (cli.c for check,
 * attach, run, report and top; agent_cli.c for agent): the run of
 * argp_parse(), usage errors, and the options and values both take.
 */
#ifndef IG_CLI_BASE_H
#define IG_CLI_BASE_H

#include <argp.h>
#include <stdbool.h>
#include "engine/engine.h"

enum ig_cli_errors {
	IG_CLI_ARGP,		/* argp's message: "CMD: MSG" and its "Try" line */
	IG_CLI_ONE_LINE,	/* the first error alone, one ig_err() line */
};

/* Whether @argv (before any "--") asks for --help, --usage or --version. */
bool ig_cli_asks_help(int argc, char **argv);

/*
 * argp_parse() of @argv (argv[0] the command's name, as help shows it)
 * into @input, never exiting; @errors how usage errors are printed, with
 * @prefix before each one-line message.  0 to go on, 2 after a usage
 * error, -1 when help or the version was asked for.
 */
int ig_cli_run(const struct argp *argp, int argc, char **argv, unsigned int flags,
	       void *input, enum ig_cli_errors errors, const char *prefix);
/* A usage error of the parse under way, printed as ig_cli_run() was told. */
void ig_cli_error(struct argp_state *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Whether the parse under way has had a usage error. */
bool ig_cli_failed(void);
/* Whether it was asked for help, --usage or the version. */
bool ig_cli_helping(void);

/* @s as a whole number from @lo to @hi into @v: false when it is not. */
bool ig_cli_long(const char *s, long lo, long hi, long *v);
/* @s as seconds, more than 0 and at most @max (with @whole, a whole
 * number) into @v: false when it is not. */
bool ig_cli_seconds(const char *s, double max, bool whole, double *v);

/* --ringbuf-mb: a power of two from 1 to 1024 MiB, else @dflt after the
 * error. */
unsigned int ig_cli_ringbuf(struct argp_state *st, const char *s, unsigned int dflt);
/* --node-root DIR: an absolute directory. */
void ig_cli_node_root(struct argp_state *st, const char *arg);

/* The engine of a mode left on a host for days (attach, run, and the
 * agent's windows; docs/design.md §3.5): the estimate's evidence folded
 * a block at a time, a block of IG_DAYS_EST_BLOCK launches or of
 * IG_DAYS_EST_BLOCK_S seconds of trace (where --estimate-block and
 * --estimate-block-s do not say: @block_s_given), and its stretches kept
 * only for a timeline (@timeline). */
#define IG_DAYS_EST_BLOCK_S	300
/* a block's fit and replay cost about 40 bytes a launch while it closes,
 * 1.3 MiB for these, on top of what the run holds */
#define IG_DAYS_EST_BLOCK	(32u << 10)
void ig_cli_days_engine(struct ig_engine_opts *o, bool block_s_given, bool timeline);
/* For a process that frees engines and estimate blocks as it goes (run,
 * attach, the agent): buffers of IG_DAYS_MMAP_MIN and more in mappings
 * of their own, which a free returns whole, where glibc would otherwise
 * raise the threshold past the first one freed and leave the next ones
 * as holes in the heap; a malloc_trim() then gives back what smaller
 * blocks leave (docs/design.md §3.5). */
#define IG_DAYS_MMAP_MIN	(128 << 10)
void ig_cli_days_heap(void);

#endif
