/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The terminal under `idlegap top`, without curses: raw input (no echo, no
 * line buffering; Ctrl-C and Ctrl-Z still signal), the alternate screen and
 * a hidden cursor.  The terminal is put back as it was on ig_term_leave(),
 * at exit, on SIGINT, SIGTERM, SIGHUP and SIGQUIT (then the signal does what
 * it would have), and on SIGTSTP (raw again on SIGCONT).  One terminal per
 * process.
 */
#ifndef IG_TOP_TERM_H
#define IG_TOP_TERM_H

#include <stdbool.h>

enum {
	IG_TERM_RESIZED = 1,	/* SIGWINCH: read the size again */
	IG_TERM_RESUMED = 2,	/* back from a stop: the screen was lost */
};

/* Returns 0, -ENOTTY when @fd is not a terminal, or -errno. */
int ig_term_enter(int fd);
void ig_term_leave(void);
bool ig_term_active(void);
/* The size, at least 80x24 is drawn well; returns -errno. */
int ig_term_size(int fd, int *rows, int *cols);
/* IG_TERM_* seen since the last call, then cleared. */
int ig_term_events(void);

#endif
