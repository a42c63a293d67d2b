/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `idlegap report A.igrec B.igrec ...`: recordings of several hosts in one
 * analysis, their clocks aligned on matched collective ends
 * (docs/design.md §4.9, §7.4).
 */
#ifndef IG_MODES_REPORT_MERGE_H
#define IG_MODES_REPORT_MERGE_H

#include <stdbool.h>
#include "modes/session.h"

/* A clock offset the user gives: NAME is a recording's host or its path
 * as given; SECONDS is added to its timestamps. */
struct ig_clock_offset {
	char name[256];
	double seconds;
};

/* Exit status for main(): 0 ok, 1 failure, 2 an offset that names no
 * recording but the first (one line on stderr). */
int ig_merge_report(const char *const *paths, int npaths, bool partial,
		    const struct ig_clock_offset *offs, int noffs,
		    const struct ig_output_opts *out);

#endif
