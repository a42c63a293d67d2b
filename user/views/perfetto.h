/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writes a timeline (timeline.h) as a Perfetto trace in its native
 * protobuf format (TrackEvent), streaming: each call appends packets to the
 * file, and memory stays bounded by the intern tables, which are cleared
 * and started over (an incremental-state reset) when full.
 *
 * Usage: ig_perfetto_open(), declare each device and thread once before
 * its slices, add slices in any order, ig_perfetto_close().  Every call
 * returns 0 or -errno; after a failure the writer only keeps the error,
 * and close() reports it (-ENOSPC when the disk filled) and removes
 * nothing: the caller decides what to say.
 */
#ifndef IG_PERFETTO_H
#define IG_PERFETTO_H

#include <stdint.h>
#include <stdio.h>
#include "views/timeline.h"

struct ig_perfetto;

struct ig_perfetto_stats {
	uint64_t bytes;		/* of the trace so far (the file has them at close) */
	uint64_t packets, slices, instants;
	uint64_t interned;	/* strings given an iid */
	uint64_t resets;	/* intern tables cleared when full */
	uint64_t flows;		/* started */
	uint64_t flows_left_out;	/* by the timeline's bound on flows across
					 * ranks (timeline_build.h); 0 here */
};

/* Creates @path through ig_outfile_open() ("-": stdout). */
int ig_perfetto_open(struct ig_perfetto **out, const char *path);
/* Writes to @f, which the writer owns from now on (fclose at close). */
int ig_perfetto_fopen(struct ig_perfetto **out, FILE *f);

int ig_perfetto_device(struct ig_perfetto *w, const struct ig_tl_device *d);
int ig_perfetto_thread(struct ig_perfetto *w, const struct ig_tl_thread *t);
int ig_perfetto_slice(struct ig_perfetto *w, const struct ig_tl_slice *s);

void ig_perfetto_stats(const struct ig_perfetto *w, struct ig_perfetto_stats *st);
/* Flushes, closes and frees; returns the first error seen, if any. */
int ig_perfetto_close(struct ig_perfetto *w);
/* Closes and frees without finishing: the file ig_perfetto_open() made is
 * removed (so is one whose close fails). */
void ig_perfetto_abandon(struct ig_perfetto *w);

/* Bounds on the intern tables (strings per table, bytes of all strings). */
#define IG_PERFETTO_INTERN_MAX	4096
#define IG_PERFETTO_INTERN_BYTES (1u << 20)

#endif
