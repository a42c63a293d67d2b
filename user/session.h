/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One tracing run (`attach` or `run`) and one replay (`report`): sources
 * of records wired to the same reorder stage and engine.
 */
#ifndef IG_SESSION_H
#define IG_SESSION_H

#include <stdbool.h>
#include <sys/types.h>
#include "engine.h"

struct ig_output_opts {
	const char *json_path;		/* NULL: none, "-": stdout */
	bool quiet;			/* no text report */
	const char *folded_path;	/* --folded: NULL: none */
	bool dump;			/* report: records as text, no analysis */
	struct ig_engine_opts engine;
};

struct ig_session_opts {
	pid_t *pids;			/* attach: targets */
	int npids;
	char **argv;			/* run: command */
	const char *run_user;		/* run: --user */
	bool as_root;			/* run: --as-root */
	double duration_s;		/* 0: until stopped */
	const char *record_path;	/* -o */
	const char *libcuda_path;	/* --libcuda */
	__u64 min_offcpu_ns;
	unsigned int ringbuf_mb;
	unsigned int sample_hz;		/* on-CPU samples, 0: none */
	bool no_nvml;
	int self_argc;			/* idlegap's own command line */
	char **self_argv;
	struct ig_output_opts out;
};

/* Exit status for main(): 0 ok, 1 failure (one line on stderr already). */
int ig_session_trace(const struct ig_session_opts *o);
int ig_session_report(const char *path, bool partial,
		      const struct ig_output_opts *out);

#endif
