/* SPDX-License-Identifier: GPL-2.0 */
/* A session's state, shared by session.c (the tracing lifecycle) and
 * session_out.c (its outputs, and the replay). */
#ifndef IG_SESSION_INT_H
#define IG_SESSION_INT_H

#include <stdio.h>
#include "modes/facts.h"
#include "modes/session.h"
#include "probes/capture.h"
#include "probes/spawn.h"

/* --every: one period's engine (session_days.c). */
struct ig_period {
	struct ig_engine *engine;
	struct ig_tlb *tlb;		/* --perfetto's for the period */
	unsigned long long n;		/* from 1 */
	__u64 start, end;		/* end: 0 while it is counted */
	__u64 until;			/* held past end: at most until then */
};

/* A period's end, decided in the live loop, waiting for the records
 * before it to leave the reorder stage: what the next period's engine is
 * told first (the processes, their mappings and set-up facts). */
struct ig_period_end {
	__u64 at;
	unsigned char *recs;
	size_t len, cap;
	struct ig_stats st;		/* the period's kernel counters */
};

#define IG_SESSION_BOUNDS	4
#define IG_SESSION_CARRY	64

enum { IG_ROUTE_ALL, IG_ROUTE_BOUND, IG_ROUTE_FILE };

/* A run's freed heap given back every 10 s (ig_cli_days_heap(),
 * session_days.c, docs/design.md §3.5). */
#define IG_SESSION_TRIM_NS	(10ULL * 1000000000ULL)

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
	struct ig_html *html;	/* --html: what its page shows, gathered */
	FILE *html_f;		/* --html, opened up front */
	const char *html_path;
	/* the views' observers (--perfetto, --html, top's), one engine's */
	struct ig_engine_obs obs[3];
	unsigned int nobs;
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
	/* a long run (session_days.c): periods, SIGUSR1, pieces */
	struct ig_meta meta;		/* the run's, restated at each start */
	__u64 t0, t_end;		/* the stream's META and END */
	struct ig_facts facts;
	int route;			/* IG_ROUTE_*: where emit() sends */
	struct ig_period cur, held;
	struct ig_period_end bounds[IG_SESSION_BOUNDS];
	unsigned int nbounds;
	__u64 next_period;
	__u64 next_trim;	/* the next malloc_trim of the live loop */
	unsigned long long nperiods;
	struct ig_open_gap carry[IG_SESSION_CARRY];
	size_t ncarry;
	struct ig_stats period_base;
	unsigned int period_failed;
	unsigned int nusr1;
	pid_t usr1_child;
	bool in_child;			/* the SIGUSR1 report's process */
	unsigned int pieces_lost;
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
/* Writes @buf[@len] to @path ("-": stdout); 1 after one line. */
int ig_session_write_file(const char *path, const char *what, const char *buf, size_t len);

/* Who is traced, with what rights (session_targets.c): 1 after one line
 * when a privilege or a target is missing; the privileges given up once
 * the probes are attached. */
int ig_session_check_privileges(struct session *s);
int ig_session_check_targets(const struct ig_session_opts *o,
			     struct ig_session_opts *local, pid_t **pids);
void ig_session_drop_privileges(const struct session *s);

/* A long run (session_days.c, docs/design.md §7.10): */
/* at the run's start, right after its META: the first period */
int ig_session_days_start(struct session *s, __u64 t0);
/* the reorder stage's output: the run's engine, its timeline, the
 * period's engines */
void ig_session_days_feed(const struct ig_hdr *rec, void *ctx);
/* a record emitted while a period's or a piece's start is made */
void ig_session_days_route(struct session *s, const struct ig_hdr *rec);
/* each turn of the live loop: a piece due, a period's end, SIGUSR1 */
void ig_session_days_tick(struct session *s, __u64 now);
/* the stream's end written: the last pieces of the recording */
void ig_session_days_last_piece(struct session *s, __u64 now);
/* the stream ended (@st: the run's counters): the last periods'
 * reports; 1 after a line when one was lost */
int ig_session_days_end(struct session *s, const struct ig_stats *st);
void ig_session_days_free(struct session *s);
/* PATH.KIND-00000K: a period's (or SIGUSR1's) file beside the run's */
void ig_session_days_path(char *out, size_t n, const char *path, const char *kind,
			  unsigned long long k);

/* The run so far (session_usr1.c): */
/* SIGUSR1: a report of the run so far at the next turn */
void ig_session_usr1_signals(const struct session *s);
/* each turn of the live loop: SIGUSR1's report started, its child reaped */
void ig_session_usr1_tick(struct session *s);
/* the report under way, if any, done */
void ig_session_usr1_wait(struct session *s);

#endif
