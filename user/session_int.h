/* SPDX-License-Identifier: GPL-2.0 */
/* A session's state, shared by session.c (the tracing lifecycle) and
 * session_out.c (its outputs, and the replay). */
#ifndef IG_SESSION_INT_H
#define IG_SESSION_INT_H

#include <stdio.h>
#include "session.h"
#include "spawn.h"

struct session {
	const struct ig_session_opts *o;
	struct ig_tracer *tracer;
	struct ig_engine *engine;
	struct ig_reorder *reorder;
	struct ig_rec_writer *writer;
	FILE *json;		/* --json, opened up front */
	FILE *folded;		/* --folded, opened up front */
	int write_err;
	bool oom;
	__u64 nrecords;
	struct ig_discovery *disc;
	unsigned int nunprobed;	/* processes using a libcuda not probed */
	struct ig_run_as run_as;
	pid_t child;
	int child_status;
	bool child_reaped;
	struct ig_nvml *nvml;
	struct ig_pyframes *py;	/* Python stacks (user/pyframes.c) */
	struct ig_symbolizer *sym;	/* names of native stack frames */
};

/* Opens the engine (or the record dump), the recording and the --json
 * file; 1 after one line when one cannot be. */
int ig_sess_setup_outputs(struct session *s, const struct ig_output_opts *out,
			  const char *record_path);
/* The text and JSON reports; 1 after one line when one fails. */
int ig_sess_write_reports(struct session *s, const struct ig_output_opts *out);
/* Flushes @f and closes it (stdout is only flushed); 1 and one line
 * naming @what when not all got there (@werr: errno of an earlier write). */
int ig_sess_close_output(FILE *f, const char *what, int werr);
void ig_sess_teardown(struct session *s);

#endif
