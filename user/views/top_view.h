/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The screen of `idlegap top`: each second the caller hands a snapshot
 * (per process and GPU: busy, idle and unresolved shares of the last
 * window, the first causes with their detail, and for a rank of a
 * multi-GPU job its wait for peers; and the job's steps) and the view
 * draws it, on a terminal as a full screen (top_term.h), elsewhere as
 * one line per row (and one for the steps).
 * Keys (docs/design.md §7.9): q quits, p pauses (the screen keeps the
 * last snapshot), s cycles the sort.  Strings are the target's and are
 * drawn escaped.
 */
#ifndef IG_TOP_VIEW_H
#define IG_TOP_VIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define IG_TOP_CAUSES 3

struct ig_top_cause {
	const char *name;	/* "storage", "gil", "lock", ... */
	double share;		/* of the window, 0..1 */
	const char *detail;	/* "file /data/x.bin holder loader (101)", or NULL */
};

/* The estimate of the row's GPU over its last closed block (docs/design.md
 * §4.10): shares of that block's unresolved time. */
struct ig_top_est {
	bool shown;		/* a block of the GPU was estimated */
	bool have, bounded;	/* the estimate stands; the lower end does */
	double idle, low, high, at_least;
	double unres_s;		/* the block's unresolved seconds */
	double age_s;		/* how long ago the block ended */
	const char *refused;	/* why no estimate */
	bool device;		/* from the GPU's own counters (method "device") */
};

struct ig_top_row {
	uint32_t pid;
	const char *comm;
	int device;		/* the host GPU; -1: unknown, the process's own */
	double busy, idle, unresolved;	/* shares of the window, 0..1 */
	struct ig_top_cause causes[IG_TOP_CAUSES];	/* largest first */
	unsigned int n_causes;
	/* in NCCL collectives (docs/design.md §4.9): its rank (-1: unknown)
	 * and the share of the window its GPU waited for peers (inside the
	 * busy and unresolved shares, where the model counted it) */
	bool collectives;
	int32_t rank;
	double peer_wait;
	struct ig_top_est est;
};

/* The job's steps (docs/design.md §4.11): the loop's rate lately, from
 * its complete steps, and its last slow step. */
struct ig_top_steps {
	bool found;		/* false: none found yet, or */
	bool gone;		/* none in the window (window_s), where some
				 * were before */
	int device;		/* the GPU they are of; -1: unknown */
	uint32_t pid;		/* the process that fed it last, 0: unknown */
	double per_s;		/* complete steps a second */
	bool slow;		/* a slow step seen: the last one */
	uint32_t slow_index;
	char slow_cause[32];	/* "storage", ...; "no idle" */
	double slow_ms;		/* its wall time */
};

struct ig_top_snapshot {
	uint64_t now_ns;	/* CLOCK_REALTIME, for the line output's time */
	double window_s;	/* what the shares cover, e.g. 10 */
	double records_per_s;
	uint64_t lost_records;	/* since the start */
	const struct ig_top_row *rows;
	unsigned int n_rows;
	struct ig_top_steps steps;
};

enum ig_top_sort { IG_TOP_BY_IDLE, IG_TOP_BY_BUSY, IG_TOP_BY_PID, IG_TOP_SORTS };

struct ig_top;

/*
 * Opens the view on @fd (the terminal, or where lines go: then @out is
 * written and @fd is unused for input).  Returns 0 or -errno.
 */
int ig_top_open(struct ig_top **out, int fd);
/* Draws @s unless paused; keeps a copy of the rows' order only. */
int ig_top_draw(struct ig_top *t, const struct ig_top_snapshot *s);
/*
 * Waits up to @timeout_ms for keys and terminal events, redrawing the
 * last snapshot after a resize or a resume.  Returns 1 when the user
 * quit, 0 when the time ran out, -errno on error.
 */
int ig_top_wait(struct ig_top *t, int timeout_ms);
bool ig_top_paused(const struct ig_top *t);
enum ig_top_sort ig_top_sort(const struct ig_top *t);
/* Puts the terminal back and frees. */
void ig_top_close(struct ig_top *t);

#endif
