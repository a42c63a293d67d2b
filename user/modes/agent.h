/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `idlegap agent`: host-wide sampling for a fleet.  Every process on the
 * host that maps a libcuda is found (any mount or PID namespace, started
 * later, loading it late), traced for --window seconds every --every
 * seconds, and each window's report (the --json schema) goes into the
 * Prometheus registry (metrics.h) served on /metrics (httpd.h), with the
 * workload identity of its processes (identity.h), and optionally into a
 * bounded directory of window reports.
 *
 * Between windows no uprobe is attached.  The host tracepoints stay
 * attached for the agent's life: for a thread idlegap does not track they
 * cost two map lookups per context switch; the GPU processes stay tracked
 * so that their exits are seen, and their records are dropped unread.
 */
#ifndef IG_AGENT_H
#define IG_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include "engine/engine.h"

#define IG_AGENT_WINDOW_S	10
#define IG_AGENT_EVERY_S	60
#define IG_AGENT_KEEP		100		/* --reports-keep */
#define IG_AGENT_KEEP_MB	64		/* --reports-max-mb */
#define IG_AGENT_RINGBUF_MB	8		/* --ringbuf-mb */
#define IG_AGENT_MAX_LABELS	32

struct ig_agent_opts {
	const char *listen;		/* ADDR:PORT */
	double window_s, every_s;	/* equal: continuous */
	const char *reports_dir;	/* NULL: none */
	unsigned int reports_keep;	/* files kept, oldest removed */
	unsigned long long reports_max_bytes;
	const char *libcuda_path;
	const char *cgroup;		/* --cgroup: only this subtree, NULL: all */
	const char *labels[IG_AGENT_MAX_LABELS];
	size_t nlabels;
	__u64 min_offcpu_ns;
	unsigned int ringbuf_mb;
	struct ig_engine_opts engine;
	int self_argc;			/* idlegap's own command line */
	char **self_argv;
};

/* `idlegap agent ARGS`: @argv[0] is "agent".  The exit status: 0 after
 * SIGTERM or SIGINT, 1 on failure, 2 on bad usage (one line each). */
int ig_agent_main(int argc, char **argv);
/* Runs the agent with parsed options. */
int ig_agent_run(const struct ig_agent_opts *o);

/* --cgroup (agent_scope.c): a PATH as /proc/PID/cgroup names it, at
 * most this long; 0, or -1 when it is not one. */
#define IG_AGENT_SCOPE_MAX	512
int ig_agent_scope_check(const char *path);

/* The window reports directory: created (0700) when missing; 0, or -errno
 * when it cannot be written. */
int ig_agent_reports_open(const char *dir);
/* Writes window @seq's report @json (@len bytes) as a new 0600 file in
 * @dir, then removes the oldest window reports until at most @keep files
 * of at most @max_bytes in all are left.  0 or -errno. */
int ig_agent_reports_write(const char *dir, unsigned long long seq,
			   const char *json, size_t len, unsigned int keep,
			   unsigned long long max_bytes);

#endif
