// SPDX-License-Identifier: GPL-2.0
/*
 * Output paths (outfile.h, docs/design.md §7.2): walked one component at
 * a time from "/" or the working directory with O_PATH|O_NOFOLLOW, so the
 * kernel never follows a link on the way whatever fs.protected_symlinks
 * says; links are read and followed here, by the rule below.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "util/outfile.h"

#define MAX_LINKS	40	/* as the kernel's own walk */

/* The user who ran sudo, or -1. */
static uid_t sudo_id(const char *var)
{
	const char *s = getenv(var);
	char *end;
	long v;

	if (!s || !*s)
		return (uid_t)-1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > INT_MAX)
		return (uid_t)-1;
	return (uid_t)v;
}

/* Root, the user idlegap runs as, or the one who ran sudo. */
static bool trusted(uid_t u)
{
	return u == 0 || u == geteuid() || u == sudo_id("SUDO_UID");
}

/* A link is followed when a trusted user made it, and it has one name (a
 * hard link to root's link elsewhere is not root's choice of place). */
static bool link_ok(const struct stat *st)
{
	return trusted(st->st_uid) && st->st_nlink == 1;
}

/* Anyone may write it, and another user owns it. */
static bool open_to_all(const struct stat *st)
{
	return !trusted(st->st_uid) && (st->st_mode & S_IWOTH);
}

static int check_dir(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (open_to_all(&st) && !(st.st_mode & S_ISVTX))
		return -IG_OUT_EDIR;
	return 0;
}

static int open_root(const char *path, int from)
{
	int fd = *path == '/' ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC) :
		 openat(from, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* The target of link @name in @dirfd ("" for @dirfd itself), into @buf. */
static int read_link(int dirfd, const char *name, char *buf, size_t n)
{
	ssize_t len = readlinkat(dirfd, name, buf, n);

	if (len < 0)
		return -errno;
	if ((size_t)len >= n)
		return -ENAMETOOLONG;
	buf[len] = 0;
	return len ? 0 : -ENOENT;
}

/*
 * Walks all but the last component of @path from @from (a directory fd,
 * or AT_FDCWD) to *@dirfd, and copies that last one into @leaf.  *@links
 * counts the links followed.
 */
static int walk(int from, const char *path, int *links, int *dirfd, char *leaf,
		size_t n)
{
	char buf[2 * PATH_MAX], tgt[PATH_MAX], *p, *e, *rest;
	struct stat st;
	int fd, nfd, err;
	size_t len;

	if (!*path)
		return -ENOENT;
	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	fd = open_root(buf, from);
	if (fd < 0)
		return fd;
	if ((err = check_dir(fd)))
		goto fail;
	for (p = buf;;) {
		while (*p == '/')
			p++;
		if (!*p) {	/* "/", "a/": the directory itself */
			snprintf(leaf, n, ".");
			break;
		}
		e = p + strcspn(p, "/");
		rest = e;
		while (*rest == '/')
			rest++;
		len = (size_t)(e - p);
		if (!*rest) {	/* the last component */
			if (len >= n) {
				err = -ENAMETOOLONG;
				goto fail;
			}
			memcpy(leaf, p, len);
			leaf[len] = 0;
			break;
		}
		*e = 0;
		nfd = openat(fd, p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 || fstat(nfd, &st)) {
			err = -errno;
			if (nfd >= 0)
				close(nfd);
			goto fail;
		}
		if (S_ISLNK(st.st_mode)) {
			err = !link_ok(&st) ? -IG_OUT_ELINK :
			      ++*links > MAX_LINKS ? -ELOOP :
			      read_link(nfd, "", tgt, sizeof(tgt));
			close(nfd);
			if (err)
				goto fail;
			/* go on from the link's target, then the rest */
			if (strlen(tgt) + 1 + strlen(rest) >= sizeof(buf)) {
				err = -ENAMETOOLONG;
				goto fail;
			}
			memmove(buf + strlen(tgt) + 1, rest, strlen(rest) + 1);
			memcpy(buf, tgt, strlen(tgt));
			buf[strlen(tgt)] = '/';
			p = buf;
			if (*tgt == '/') {
				close(fd);
				fd = open_root(buf, AT_FDCWD);
				if (fd < 0)
					return fd;
				if ((err = check_dir(fd)))
					goto fail;
			}
			continue;
		}
		if ((err = check_dir(nfd))) {
			close(nfd);
			goto fail;
		}
		close(fd);
		fd = nfd;
		p = rest;
	}
	*dirfd = fd;
	return 0;
fail:
	close(fd);
	return err;
}

int ig_outfile_walk(const char *path, int *dirfd, char *leaf, size_t n)
{
	int links = 0;

	return walk(AT_FDCWD, path, &links, dirfd, leaf, n);
}

/* /proc/PID/fd/N (/dev/stdout, /dev/fd/N) names an open file, a pipe
 * among them, not a path: the kernel's own link, for the kernel to open. */
static bool in_proc(int dirfd)
{
	struct statfs sf;

	return !fstatfs(dirfd, &sf) && sf.f_type == PROC_SUPER_MAGIC;
}

/*
 * Follows links at @leaf in *@dirfd (by the rule above) to what is not a
 * link, or to nothing; its lstat in @st (st_mode 0: nothing there).
 * Returns 1 at a trusted link in /proc, left for the kernel to follow.
 */
static int resolve_leaf(int *dirfd, char *leaf, size_t n, int *links, struct stat *st)
{
	char tgt[PATH_MAX];
	int err, nd;

	for (;;) {
		if (fstatat(*dirfd, leaf, st, AT_SYMLINK_NOFOLLOW)) {
			if (errno != ENOENT)
				return -errno;
			st->st_mode = 0;
			return 0;
		}
		if (!S_ISLNK(st->st_mode))
			return 0;
		if (!link_ok(st))
			return -IG_OUT_ELINK;
		if (in_proc(*dirfd))
			return 1;
		if (++*links > MAX_LINKS)
			return -ELOOP;
		if ((err = read_link(*dirfd, leaf, tgt, sizeof(tgt))))
			return err;
		err = walk(*dirfd, tgt, links, &nd, leaf, n);
		if (err)
			return err;
		close(*dirfd);
		*dirfd = nd;
	}
}

static int create_fresh(int dirfd, const char *leaf, bool replace)
{
	uid_t uid = sudo_id("SUDO_UID");
	gid_t gid = sudo_id("SUDO_GID");
	int fd;

	if (replace && unlinkat(dirfd, leaf, 0) && errno != ENOENT)
		return -errno;
	/* O_EXCL: a link or file planted since is an error, not a target */
	fd = openat(dirfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* the invoking user reads their own report without sudo */
	if (geteuid() == 0 && uid != (uid_t)-1 && uid != 0 &&
	    fchown(fd, uid, gid == (gid_t)-1 ? (gid_t)-1 : gid)) {
		int e = errno;

		close(fd);
		unlinkat(dirfd, leaf, 0);
		return -e;
	}
	return fd;
}

/* A device, FIFO or socket the user named, or a file /proc names: written
 * to, but a FIFO nobody reads is refused rather than waited on (Ctrl-C
 * could not end the wait). */
static int open_special(int dirfd, const char *leaf, bool proc)
{
	int fd = openat(dirfd, leaf, O_WRONLY | O_NONBLOCK | O_CLOEXEC |
			(proc ? 0 : O_NOFOLLOW));
	struct stat st;
	int fl;

	if (fd < 0 && errno == ENXIO && !fstatat(dirfd, leaf, &st, 0) && S_ISFIFO(st.st_mode))
		return -IG_OUT_ENOREADER;
	if (fd < 0)
		return -errno;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
		fl = -errno;
		close(fd);
		return fl;
	}
	return fd;
}

static bool dot(const char *leaf)
{
	return !strcmp(leaf, ".") || !strcmp(leaf, "..");
}

/* Opens @leaf in *@dirfd (which it may move on, following links). */
static int open_leaf(int *dirfd, char *leaf, size_t n, int links)
{
	struct stat st, dst;
	int err;

	if (dot(leaf))
		return -EISDIR;
	err = resolve_leaf(dirfd, leaf, n, &links, &st);
	if (err)
		return err < 0 ? err : open_special(*dirfd, leaf, true);
	if (dot(leaf))
		return -EISDIR;
	if (!st.st_mode)
		return create_fresh(*dirfd, leaf, false);
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return open_special(*dirfd, leaf, false);
	/* in a sticky directory open to all, another user's file stays */
	if (fstat(*dirfd, &dst))
		return -errno;
	if (open_to_all(&dst) && !trusted(st.st_uid))
		return -IG_OUT_EFILE;
	return create_fresh(*dirfd, leaf, true);
}

int ig_outfile_openat(int dirfd, const char *name)
{
	char leaf[NAME_MAX + 1];
	int d, fd;

	if (strchr(name, '/') || strlen(name) >= sizeof(leaf))
		return -EINVAL;
	d = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (d < 0)
		return -errno;
	strcpy(leaf, name);
	fd = open_leaf(&d, leaf, sizeof(leaf), 0);
	close(d);
	return fd;
}

int ig_outfile_open(const char *path)
{
	char leaf[NAME_MAX + 1];
	int dirfd, fd, links = 0;
	size_t n = strlen(path);

	if (!strcmp(path, "-")) {
		fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	if (n && path[n - 1] == '/')
		return -EISDIR;
	fd = walk(AT_FDCWD, path, &links, &dirfd, leaf, sizeof(leaf));
	if (fd)
		return fd;
	fd = open_leaf(&dirfd, leaf, sizeof(leaf), links);
	close(dirfd);
	return fd;
}

void ig_outfile_discard(const char *path, int fd)
{
	char leaf[NAME_MAX + 1];
	struct stat mine, st;
	int dirfd, links = 0;

	if (fd < 0 || !path || !strcmp(path, "-") || fstat(fd, &mine) ||
	    !S_ISREG(mine.st_mode))
		return;
	if (walk(AT_FDCWD, path, &links, &dirfd, leaf, sizeof(leaf)))
		return;
	/* 0: not a link /proc made (the user's own open file) */
	if (!resolve_leaf(&dirfd, leaf, sizeof(leaf), &links, &st) &&
	    S_ISREG(st.st_mode) && st.st_dev == mine.st_dev && st.st_ino == mine.st_ino)
		unlinkat(dirfd, leaf, 0);
	close(dirfd);
}

int ig_outfile_opendir(const char *path, bool create)
{
	char leaf[NAME_MAX + 1];
	struct stat st;
	int dirfd, fd, err, links = 0;

	err = walk(AT_FDCWD, path, &links, &dirfd, leaf, sizeof(leaf));
	if (err)
		return err;
	if (!dot(leaf)) {
		err = resolve_leaf(&dirfd, leaf, sizeof(leaf), &links, &st);
		if (!err && !st.st_mode && create && mkdirat(dirfd, leaf, 0700) &&
		    errno != EEXIST)
			err = -errno;
	}
	/* 1: /proc's link to an open directory, for the kernel to follow */
	fd = err < 0 ? -1 : openat(dirfd, leaf, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
				   (err ? 0 : O_NOFOLLOW));
	err = err > 0 ? 0 : err;
	if (!err && fd < 0)
		err = errno == ELOOP ? -IG_OUT_ELINK : -errno;
	close(dirfd);
	if (!err && (err = check_dir(fd)))
		close(fd);
	return err ? err : fd;
}

const char *ig_outfile_strerror(int err)
{
	switch (-err) {
	case IG_OUT_ELINK:
		return "a symbolic link owned by another user is on the path (not followed)";
	case IG_OUT_EDIR:
		return "a directory on the path belongs to another user and anyone may write it";
	case IG_OUT_EFILE:
		return "another user's file is there, in a directory anyone may write";
	case IG_OUT_ENOREADER:
		return "a FIFO that nothing reads (start the reader first)";
	}
	return strerror(-err);
}
