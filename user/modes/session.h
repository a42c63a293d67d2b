/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One tracing run (`attach` or `run`) and one replay (`report`): sources
 * of records wired to the same reorder stage and engine.
 */
#ifndef IG_SESSION_H
#define IG_SESSION_H

#include <stdbool.h>
#include <sys/types.h>
#include "engine/engine.h"
#include "engine/engine_obs.h"

struct ig_output_opts {
	const char *json_path;		/* NULL: none, "-": stdout */
	const char *perfetto_path;	/* --perfetto: NULL none, "-": stdout */
	const char *html_path;		/* --html: NULL none, "-": stdout */
	bool quiet;			/* no text report */
	const char *folded_path;	/* --folded: NULL: none */
	bool dump;			/* report: records as text, no analysis */
	struct ig_engine_opts engine;
	struct ig_engine_obs obs;	/* a view's observer (span NULL: none) */
};

/* Where a live session stands, for a view. */
struct ig_session_tick {
	__u64 now;		/* CLOCK_MONOTONIC ns */
	__u64 nrecords;		/* records so far */
	__u64 lost;		/* records lost so far (kernel and here) */
	const struct ig_engine *engine;	/* the session's, between records */
};

struct ig_session_opts {
	pid_t *pids;			/* attach: targets */
	int npids;
	char **argv;			/* run: command */
	const char *run_user;		/* run: --user */
	bool as_root;			/* run: --as-root */
	double duration_s;		/* 0: until stopped */
	double every_s;			/* --every: a report each period (0: none) */
	const char *record_path;	/* -o */
	unsigned long long output_max_bytes;	/* --output-max-mb: -o in pieces */
	unsigned int output_files;	/* --output-files: pieces kept (0: all) */
	const char *libcuda_path;	/* --libcuda */
	__u64 min_offcpu_ns;
	unsigned int ringbuf_mb;
	unsigned int sample_hz;		/* on-CPU samples, 0: none */
	bool no_nvml;
	bool host_wide;			/* top: every GPU process on the host,
					 * looked for again every second */
	/* top: called each turn of the loop; non-zero stops the run */
	int (*tick)(void *ctx, const struct ig_session_tick *t);
	void *tick_ctx;
	int self_argc;			/* idlegap's own command line */
	char **self_argv;
	struct ig_output_opts out;
};

/* Exit status for main(): 0 ok, 1 failure (one line on stderr already). */
int ig_session_trace(const struct ig_session_opts *o);
int ig_session_report(const char *path, bool partial,
		      const struct ig_output_opts *out);
/* Several recordings that are pieces of one run (-o with --output-max-mb):
 * read in the order of their pieces, as one.  -1 when none of them are
 * pieces of one run (recordings of several hosts: ig_merge_report); 2
 * after one line when some are and the others are not, or one is
 * missing between them. */
int ig_session_report_pieces(const char *const *paths, int n, bool partial,
			     const struct ig_output_opts *out);

#endif
