/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's Prometheus registry: counters accumulated across windows
 * from each window's JSON report (report_json.c), keyed by workload label
 * set, and their text exposition (format 0.0.4).
 *
 * Label sets.  A device's series (idlegap_gpu_seconds_total by state) carry
 * the labels that every process on that device shares; the causes and the
 * gap histogram, which the report gives for the whole window, carry the
 * labels that every GPU process of the window shares.  A label the
 * processes disagree on is left off rather than guessed, so a window of
 * one job on one GPU has one label set for all its series.  No pid label:
 * the window reports carry pids.
 *
 * Bounded: a label set not seen for keep_windows windows is dropped, and
 * at most max_series label sets are kept; both are counted in
 * idlegap_series_dropped_total{reason="stale"|"limit"}.
 *
 * Thread-safe: a window is added, and a scrape rendered, under one mutex,
 * so a scrape sees whole windows only.
 */
#ifndef IG_METRICS_H
#define IG_METRICS_H

#include <stddef.h>
#include <sys/types.h>
#include "host/identity.h"

struct json_object;
struct ig_metrics;

struct ig_metrics_opts {
	size_t sz;			/* sizeof(struct ig_metrics_opts) */
	const char *const *labels;	/* "KEY=VALUE", on every series */
	size_t nlabels;
	unsigned int keep_windows;	/* 0: 10 */
	size_t max_series;		/* label sets; 0: 1024 */
	const char *version;		/* idlegap_build_info's; NULL: "unknown" */
};

/* The identity of one pid of a window (identity.h). */
struct ig_pid_identity {
	pid_t pid;
	struct ig_identity id;
};

/* NULL with errno set: EINVAL for a bad --label (see ig_metrics_check_label). */
struct ig_metrics *ig_metrics_new(const struct ig_metrics_opts *opts);
void ig_metrics_free(struct ig_metrics *m);

/*
 * A --label pair: 0; -EINVAL when there is no '=' or KEY is not a
 * Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not __*); -E2BIG when
 * VALUE is over 256 bytes; -EILSEQ when VALUE holds a control character,
 * a backslash or bytes that are not UTF-8; -EEXIST when KEY is one the
 * agent sets itself.
 */
int ig_metrics_check_label(const char *kv);

/*
 * Adds one window: @report is its JSON report, @ids the identities of its
 * pids (a pid without one gets no workload labels).  -EINVAL when the
 * report is not one (nothing added), -ENOMEM.
 */
int ig_metrics_add_window(struct ig_metrics *m, struct json_object *report,
			  const struct ig_pid_identity *ids, size_t nids);

/* The exposition, in a new buffer (free it) of *@len bytes; -ENOMEM. */
int ig_metrics_render(struct ig_metrics *m, char **buf, size_t *len);

/* The Content-Type of the exposition. */
#define IG_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
