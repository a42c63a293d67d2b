/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Progress of long work (a report over a large recording) on one line of
 * stderr: percentage, records and records/s, redrawn at most a few times a
 * second, and only when stderr is a terminal: a pipe or a file gets
 * nothing.  The line is cleared when the work ends, so what follows
 * prints as if it had never been there.
 */
#ifndef IG_PROGRESS_H
#define IG_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IG_PROGRESS_INTERVAL_NS 250000000ull	/* 4 redraws a second */

struct ig_progress {
	int fd;
	bool on, drawn;
	const char *what;	/* "reading rec.igrec" */
	uint64_t total;		/* bytes of input; 0: unknown */
	uint64_t start_ns, last_ns;
	unsigned int calls;
};

/* Shows progress on @fd when it is a terminal; @total may be 0. */
void ig_progress_init(struct ig_progress *p, int fd, const char *what, uint64_t total);
/* Cheap per record: looks at the clock every 256 calls. */
void ig_progress_update(struct ig_progress *p, uint64_t done, uint64_t records);
/* Same, at a given CLOCK_MONOTONIC time, always looking (for tests). */
void ig_progress_at(struct ig_progress *p, uint64_t done, uint64_t records, uint64_t now_ns);
/* Clears the line. */
void ig_progress_end(struct ig_progress *p);
/* The line's text, without the terminal controls. */
size_t ig_progress_format(char *buf, size_t n, const char *what, uint64_t done,
			  uint64_t total, uint64_t records, uint64_t elapsed_ns);

#endif
