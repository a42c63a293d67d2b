/* SPDX-License-Identifier: GPL-2.0 */
/* A session's state, shared by session.c (the tracing lifecycle) and
 * session_out.c (its outputs, and the replay). */
#ifndef IG_SESSION_INT_H
#define IG_SESSION_INT_H

#include <stdio.h>
#include "modes/session.h"
#include "probes/capture.h"
#include "probes/spawn.h"

struct session {
	const struct ig_session_opts *o;
	struct ig_capture cap;	/* tracer, discovery, Python and native names */
	struct ig_engine *engine;
	struct ig_reorder *reorder;
	struct ig_rec_writer *writer;
	FILE *json;		/* --json, opened up front */
	struct ig_tlb *tlb;	/* --perfetto, opened up front */
	FILE *folded;		/* --folded, opened up front */
	const char *json_path, *folded_path;	/* theirs, removed when unwritten */
	int write_err;
	bool oom;
	__u64 nrecords;
	unsigned int nunprobed;	/* processes using a libcuda not probed */
	struct ig_run_as run_as;
	pid_t child;
	int child_status;
	bool child_reaped;
	struct ig_nvml *nvml;
	__u64 next_lost_read, lost;	/* for a view's tick */
};

/* Opens the engine (or the record dump), the recording and the --json
 * file; 1 after one line when one cannot be. */
int ig_session_setup_outputs(struct session *s, const struct ig_output_opts *out,
			     const char *record_path);
/* The text and JSON reports; 1 after one line when one fails. */
int ig_session_write_reports(struct session *s, const struct ig_output_opts *out);
/* Writes the rest of the --perfetto trace and closes it; 1 after one
 * line when it fails. */
int ig_session_close_timeline(struct session *s, const struct ig_output_opts *out);
/* Flushes @f and closes it (stdout is only flushed); 1 and one line
 * naming @what when not all got there (@werr: errno of an earlier write). */
int ig_session_close_output(FILE *f, const char *what, const char *path, int werr);
void ig_session_teardown(struct session *s);

#endif
