/* SPDX-License-Identifier: GPL-2.0 */
/* The registry's insides, shared by metrics.c, metrics_labels.c,
 * metrics_text.c and metrics_coll.c only. */
#ifndef IG_METRICS_IMPL_H
#define IG_METRICS_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>
#include "engine/engine.h"
#include "views/metrics.h"

/* The workload labels, in exposition order: one list. */
#define IG_METRIC_KEYS(X) \
	X(IG_MK_GPU, "gpu") X(IG_MK_UUID, "UUID") \
	X(IG_MK_NAMESPACE, "namespace") X(IG_MK_POD, "pod") \
	X(IG_MK_POD_UID, "pod_uid") X(IG_MK_CONTAINER, "container") \
	X(IG_MK_SLURM_JOB, "slurm_job") X(IG_MK_RANK, "rank") \
	X(IG_MK_COMM, "comm") X(IG_MK_PID, "pid") X(IG_MK_SELF, "self_reported")

enum ig_metric_key {
#define IG_MK_ENUM(e, name) e,
	IG_METRIC_KEYS(IG_MK_ENUM)
#undef IG_MK_ENUM
	IG_MK__MAX
};

extern const char *const ig_metrics_keys[IG_MK__MAX];

struct ig_lset {
	char v[IG_MK__MAX][sizeof(((struct ig_identity *)0)->container)];
};

/* GPU states: unresolved time split by what the evidence shows
 * (docs/design.md §4.7): the host held the GPU back, the GPU was still
 * busy, or the run is still open at the window's end. */
enum { IG_ST_BUSY, IG_ST_IDLE, IG_ST_UNRES_HOST, IG_ST_UNRES_GPU,
       IG_ST_UNRES_OPEN, IG_ST_PEER_WAIT, IG_ST_IDLE_OPEN, IG_ST__MAX };

/* Peer wait charged to a late rank, by the cause of its lateness
 * (docs/design.md §4.9): the agent's, across the windows. */
#define IG_MAX_PEER_SUMS	256
struct ig_peer_sum {
	char rank[16];
	char cause[32];
	double s;
};

#define IG_MAX_CAUSES	32
#define IG_BOUND_NS(ns) +1
#define IG_NBOUNDS	(0 IG_GAP_BOUNDS_NS(IG_BOUND_NS))

/* Upper bounds (ns) of idlegap_step_seconds: 1 ms to 60 s. */
#define IG_STEP_BOUNDS_NS(X) X(1000000) X(2500000) X(5000000) X(10000000) \
	X(25000000) X(50000000) X(100000000) X(250000000) X(500000000) \
	X(1000000000) X(2500000000) X(5000000000) X(10000000000) \
	X(30000000000) X(60000000000)
#define IG_NSTEP_BOUNDS	(0 IG_STEP_BOUNDS_NS(IG_BOUND_NS))

struct ig_cause_sum {
	char name[32];
	char method[8];		/* estimated idle's: "fit", "bound", "device" */
	double s;
};

/* One rank's collectives of one communicator (metrics_coll.c): its
 * labels as exposed, the window it was last seen in, its counters. */
struct ig_coll_sum {
	char *key;
	uint64_t last;
	double ended, lead_s;
};

/* A series of one process (gpu="unknown", its pid) is dropped this many
 * windows after its process was last seen, not the registry's keep: a
 * host that starts GPU processes by the thousand would otherwise hold
 * one series per process for ten windows. */
#define IG_METRICS_PID_KEEP	2

/* One label set and its counters. */
struct ig_target {
	char *key;		/* its labels as exposed: k="v",... */
	uint64_t last;		/* window it was last seen in */
	bool has_state, has_causes, has_hist;
	bool per_pid;		/* one process's GPU nothing placed: kept
				 * IG_METRICS_PID_KEEP windows unseen */
	bool has_peers;		/* a rank of a communicator is on it: its
				 * peer_wait series is exposed, 0 or not */
	double state[IG_ST__MAX];
	struct ig_cause_sum idle[IG_MAX_CAUSES], unres[IG_MAX_CAUSES];
	uint32_t nidle, nunres;
	struct ig_cause_sum est[IG_MAX_CAUSES];	/* estimated idle (§4.10) */
	uint32_t nest;
	uint64_t hist[IG_NBOUNDS], hist_count;
	double hist_sum;
	/* whole steps (docs/design.md §4.11): their wall time, their idle
	 * time by cause */
	bool has_steps;
	uint64_t step_hist[IG_NSTEP_BOUNDS], step_count;
	double step_sum;
	struct ig_cause_sum step_idle[IG_MAX_CAUSES];
	uint32_t nstep_idle;
};

struct ig_metrics {
	pthread_mutex_t lock;
	struct ig_target **targets;
	size_t ntargets, max;
	unsigned int keep;
	const char *const *labels;
	size_t nlabels;
	const char *version;
	uint64_t windows, partial, lost, dropped_stale, dropped_limit;
	uint64_t gpu_missed;	/* GPU processes gone before they were followed */
	uint64_t processes;
	/* GPU processes followed on a GPU nothing placed (docs/design.md
	 * §4.2), each counted once: the pids counted, and the window each
	 * was last seen in (forgotten after keep windows) */
	uint64_t gpu_unknown;
	struct { int64_t pid; uint64_t last; } *unknown;
	size_t nunknown;
	char *refused;		/* the last label set over the limit */
	uint64_t refused_at;	/* and its window */
	double observed;
	struct ig_peer_sum peer[IG_MAX_PEER_SUMS];
	uint32_t npeer;
	struct ig_coll_sum *coll;	/* metrics_coll.c */
	size_t ncoll;
};

/* ---- metrics_labels.c: label sets */
/* The labels of @s as exposed (k="v",... with values escaped), or NULL. */
char *ig_metrics_lset_text(const struct ig_lset *s);
/* @v into @f as a label value: escaped, and UTF-8 */
void ig_metrics_put_value(FILE *f, const char *v);
/* Whether @k (@n bytes) is a valid label name. */
bool ig_metrics_name_ok(const char *k, size_t n);
/* A member of a JSON report: an integer (@dflt if none), seconds (0 if
 * none), or of type @t (NULL if none). */
int64_t ig_metrics_jint(struct json_object *o, const char *k, int64_t dflt);
double ig_metrics_jsec(struct json_object *o, const char *k);
struct json_object *ig_metrics_jget(struct json_object *o, const char *k,
				    enum json_type t);
/* The identity of @pid among @ids, or NULL. */
const struct ig_identity *ig_metrics_who(const struct ig_pid_identity *ids,
					size_t n, int64_t pid);
/* The label set of a process of identity @id on @device (-1: none). */
void ig_metrics_lset_of(const struct ig_identity *id, int device, struct ig_lset *s);
/* The label set shared by the window's GPU processes on @device (-1: on
 * any device).  A device nobody claims keeps just its ordinal. */
void ig_metrics_window_lset(struct json_object *procs,
			    const struct ig_pid_identity *ids, size_t nids,
			    int64_t device, struct ig_lset *out);

/* ---- metrics_coll.c: collectives by communicator (docs/design.md §7.5) */
/* One by_communicator entry @c of a rank whose workload labels are
 * @labels (k="v",... as exposed): summed under them and the
 * communicator's; an entry that is not one is skipped. */
void ig_metrics_coll_add(struct ig_metrics *m, const char *labels,
			 struct json_object *c);
/* Drops the series not seen for the registry's keep windows. */
void ig_metrics_coll_expire(struct ig_metrics *m);
void ig_metrics_coll_free(struct ig_metrics *m);

#endif
