/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Output files (recordings, JSON reports): they hold the target's command
 * line, host and paths, so they are created afresh with mode 0600 (owned
 * by the invoking user under sudo), and a symbolic link someone else
 * planted at the path is never followed.
 */
#ifndef IG_OUTFILE_H
#define IG_OUTFILE_H

/*
 * Opens @path for writing; "-" is stdout.  A regular file there is
 * replaced by a new one (never written through: it may be another user's,
 * or a hard link); a device or FIFO (/dev/null, a pipe) is written to; a
 * symbolic link is followed only when it belongs to root or to the
 * invoking user.  Returns the fd, or -errno: -ELOOP for a link that is not
 * followed (ig_outfile_strerror() words it).
 */
int ig_outfile_open(const char *path);
const char *ig_outfile_strerror(int err);

#endif
