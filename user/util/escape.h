/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Strings from the traced processes (comm, file names, paths, peers) are
 * the target's to choose: printed raw, "\e]0;..." would drive the
 * reader's terminal.  The text report and the record dump print them
 * through ig_esc().
 */
#ifndef IG_ESCAPE_H
#define IG_ESCAPE_H

#include <stdbool.h>
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

/*
 * What idlegap writes for machines (JSON, Prometheus, Perfetto) is UTF-8
 * throughout (docs/design.md §7.2): a byte that starts no well-formed
 * character (a path of Latin-1 bytes, a name from a damaged recording)
 * becomes U+FFFD, the replacement character; control characters stay,
 * for the format's own escaping.
 */
bool ig_utf8_valid(const char *s, size_t n);
/* Room for the fixed copy of @n bytes: each may become 3. */
#define IG_UTF8_FIX_SIZE(n) (3 * (n) + 1)
/* Copies @s[0..@n) into @buf (IG_UTF8_FIX_SIZE(@n) bytes), each byte that
 * starts no character replaced; terminated; returns the length. */
size_t ig_utf8_fix(char *buf, const char *s, size_t n);
/* The same into a new buffer (free() it), NULL when out of memory. */
char *ig_utf8_dup(const char *s, size_t n);

#endif
