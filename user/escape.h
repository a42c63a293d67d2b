/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Strings from the traced processes (comm, file names, paths, peers) are
 * the target's to choose: printed raw, "\e]0;..." would drive the
 * reader's terminal.  The text report and the record dump print them
 * through ig_esc().
 */
#ifndef IG_ESCAPE_H
#define IG_ESCAPE_H

#include <stddef.h>

/* Room for an escaped copy of @n bytes: each may become "\xNN". */
#define IG_ESC_SIZE(n) (4 * (n) + 1)

/*
 * Copies at most @max bytes of @s (it may lack a NUL within them) into
 * @buf[@n], writing control characters (C0, DEL, C1), backslashes and
 * bytes that are not UTF-8 as \xNN; other UTF-8 as it is.  Always
 * terminated; cut at a whole character when @buf is short.  Returns @buf.
 */
char *ig_esc(char *buf, size_t n, const char *s, size_t max);

#endif
