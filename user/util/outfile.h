/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Output files (recordings, reports, timelines, the agent's window
 * reports): they hold the target's command line, host and paths, so they
 * are created afresh with mode 0600 (owned by the invoking user under
 * sudo), and the path to them is resolved one component at a time, never
 * through a symbolic link or directory someone else planted
 * (docs/design.md §7.2).
 */
#ifndef IG_OUTFILE_H
#define IG_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>

/* Refusals of the path walk, returned negated beside -errno values;
 * ig_outfile_strerror() words them. */
enum {
	IG_OUT_ELINK = 4096,	/* a symbolic link owned by another user */
	IG_OUT_EDIR,		/* a directory another user owns and anyone may write */
	IG_OUT_EFILE,		/* another user's file in such a sticky directory */
	IG_OUT_ENOREADER,	/* a FIFO nobody reads */
};

/*
 * Opens @path for writing; "-" is stdout.  The directories on the way are
 * walked without letting the kernel follow a link: a symbolic link is
 * followed only when root or the invoking user owns it (and has one name);
 * a directory owned by another user that anyone may write is refused
 * unless it is sticky and the file there is new or ours.  A regular file at
 * the path is replaced by a new one (never written through: it may be
 * another user's, or a hard link); a device is written to; a FIFO is
 * written to when something reads it, refused otherwise (no wait).
 * Returns the fd, or -errno / -IG_OUT_*.
 */
int ig_outfile_open(const char *path);

/*
 * Removes the file ig_outfile_open() made at @path for @fd, when it is
 * still there (a write to it failed: no empty or cut file stays behind).
 * Devices, FIFOs and stdout are left alone.  Call before closing @fd.
 */
void ig_outfile_discard(const char *path, int fd);

/*
 * Opens directory @path (made 0700 when missing and @create) by the same
 * walk, for reading and for openat()/unlinkat() in it.  Returns the fd or
 * -errno / -IG_OUT_*.
 */
int ig_outfile_opendir(const char *path, bool create);

/* Opens @name in directory @dirfd as ig_outfile_open() would. */
int ig_outfile_openat(int dirfd, const char *name);

const char *ig_outfile_strerror(int err);

/*
 * The walk itself, for tests: resolves all but the last component of
 * @path to an O_PATH directory fd (*@dirfd) and copies the last into
 * @leaf[@n] ("." when @path names a directory).  Returns 0 or -errno /
 * -IG_OUT_*.
 */
int ig_outfile_walk(const char *path, int *dirfd, char *leaf, size_t n);

#endif
