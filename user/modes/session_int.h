/* SPDX-License-Identifier: GPL-2.0 */
/* A session's state, shared by session.c (the tracing lifecycle) and
 * session_out.c (its outputs, and the replay). */
#ifndef IG_SESSION_INT_H
#define IG_SESSION_INT_H

#include <stdio.h>
#include "modes/session.h"
#include "probes/spawn.h"

/* A GPU process found host-wide, and the last look that saw it. */
struct host_pid {
	pid_t pid;
	unsigned int gen;
};

struct session {
	const struct ig_session_opts *o;
	struct ig_tracer *tracer;
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
	struct ig_discovery *disc;
	unsigned int nunprobed;	/* processes using a libcuda not probed */
	struct ig_run_as run_as;
	pid_t child;
	int child_status;
	bool child_reaped;
	struct ig_nvml *nvml;
	struct host_pid *host_pids;	/* host-wide: the GPU processes of the last look */
	size_t nhost, caphost;
	unsigned int host_gen;		/* which look */
	__u64 next_host_scan;
	__u64 next_lost_read, lost;	/* for a view's tick */
	struct ig_pyframes *py;	/* Python stacks (user/probes/pyframes.c) */
	struct ig_symbolizer *sym;	/* names of native stack frames */
};

/* The context of ig_sess_track_one() (session.c). */
struct track_ctx {
	struct session *s;
	__u64 ts;
	int err;
	bool named;		/* a target the user named, not a descendant */
};

/* Tracks @pid, its threads and its libcuda (ig_proc_for_each_* callback). */
int ig_sess_track_one(pid_t pid, void *ctx);
/* session_view.c: host-wide, the GPU processes not followed yet, once a
 * second; a view's turn (s->o->tick), non-zero to stop. */
void ig_sess_host_scan(struct session *s, __u64 now);
int ig_sess_tick(struct session *s, __u64 now);

/* Opens the engine (or the record dump), the recording and the --json
 * file; 1 after one line when one cannot be. */
int ig_sess_setup_outputs(struct session *s, const struct ig_output_opts *out,
			  const char *record_path);
/* The text and JSON reports; 1 after one line when one fails. */
int ig_sess_write_reports(struct session *s, const struct ig_output_opts *out);
/* Writes the rest of the --perfetto trace and closes it; 1 after one
 * line when it fails. */
int ig_sess_close_timeline(struct session *s, const struct ig_output_opts *out);
/* Flushes @f and closes it (stdout is only flushed); 1 and one line
 * naming @what when not all got there (@werr: errno of an earlier write). */
int ig_sess_close_output(FILE *f, const char *what, const char *path, int werr);
void ig_sess_teardown(struct session *s);

#endif
