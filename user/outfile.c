// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "outfile.h"

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

static int create_fresh(const char *path, bool replace)
{
	uid_t uid = sudo_id("SUDO_UID");
	gid_t gid = sudo_id("SUDO_GID");
	int fd;

	if (replace && unlink(path) && errno != ENOENT)
		return -errno;
	/* O_EXCL: a link or file planted since is an error, not a target */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* the invoking user reads their own report without sudo */
	if (geteuid() == 0 && uid != (uid_t)-1 && uid != 0 &&
	    fchown(fd, uid, gid == (gid_t)-1 ? (gid_t)-1 : gid)) {
		int e = errno;

		close(fd);
		unlink(path);
		return -e;
	}
	return fd;
}

int ig_outfile_open(const char *path)
{
	struct stat st;
	uid_t owner;
	int fd;

	if (!strcmp(path, "-")) {
		fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	if (lstat(path, &st))
		return errno == ENOENT ? create_fresh(path, false) : -errno;
	if (S_ISREG(st.st_mode))
		return create_fresh(path, true);
	if (S_ISLNK(st.st_mode)) {
		owner = st.st_uid;
		if (owner != 0 && owner != geteuid() && owner != sudo_id("SUDO_UID"))
			return -ELOOP;
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		return fd < 0 ? -errno : fd;
	}
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	/* a device, FIFO or socket the user named: write to it */
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

const char *ig_outfile_strerror(int err)
{
	if (err == -ELOOP)
		return "a symbolic link owned by another user is there (not followed)";
	return strerror(-err);
}
