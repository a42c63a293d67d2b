// SPDX-License-Identifier: GPL-2.0
/* The agent's directory of window reports: one 0600 file per window,
 * named so that names sort by age, the oldest removed past a count and a
 * size.  Only files of that name shape are ever removed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "modes/agent.h"
#include "util/outfile.h"

#define PREFIX	"idlegap-window-"
#define SUFFIX	".json"

struct rfile {
	char name[96];
	unsigned long long size;
};

/* The directory is reached by the output walk (outfile.h): no link
 * another user planted, no directory another user owns that anyone may
 * write; each use walks it again. */
int ig_agent_reports_open(const char *dir)
{
	int fd = ig_outfile_opendir(dir, true), err = 0;

	if (fd < 0)
		return fd;
	if (faccessat(fd, ".", W_OK | X_OK, AT_EACCESS))
		err = -errno;
	close(fd);
	return err;
}

static bool is_report(const char *name)
{
	size_t n = strlen(name);

	return n > strlen(PREFIX) + strlen(SUFFIX) && n < sizeof(((struct rfile *)0)->name) &&
	       !strncmp(name, PREFIX, strlen(PREFIX)) &&
	       !strcmp(name + n - strlen(SUFFIX), SUFFIX);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct rfile *)a)->name, ((const struct rfile *)b)->name);
}

/* The window reports in @dir, oldest first, into *@out. */
static int list_reports(int dir, struct rfile **out, size_t *n)
{
	int fd = fcntl(dir, F_DUPFD_CLOEXEC, 3);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct rfile *v = NULL, *nv;
	size_t cap = 0;
	struct dirent *e;
	struct stat st;

	*n = 0;
	if (!d) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return -e;
	}
	while ((e = readdir(d))) {
		if (!is_report(e->d_name) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
		}
		snprintf(v[*n].name, sizeof(v[*n].name), "%s", e->d_name);
		v[(*n)++].size = st.st_size;
	}
	closedir(d);
	qsort(v, *n, sizeof(*v), by_name);
	*out = v;
	return 0;
}

static int prune(int dirfd, unsigned int keep, unsigned long long max_bytes)
{
	unsigned long long total = 0;
	struct rfile *v = NULL;
	size_t n, i;
	int err = list_reports(dirfd, &v, &n);

	if (err)
		return err;
	for (i = 0; i < n; i++)
		total += v[i].size;
	/* the newest one stays, whatever its size */
	for (i = 0; i + 1 < n && (n - i > keep || total > max_bytes); i++) {
		if (unlinkat(dirfd, v[i].name, 0) && errno != ENOENT)
			err = -errno;
		total -= v[i].size;
	}
	free(v);
	return err;
}

int ig_agent_reports_write(const char *dir, unsigned long long seq,
			   const char *json, size_t len, unsigned int keep,
			   unsigned long long max_bytes)
{
	char name[96], stamp[32];
	struct tm tm;
	time_t now = time(NULL);
	size_t off = 0;
	ssize_t w;
	int dirfd, fd, err = 0;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(name, sizeof(name), PREFIX "%s-%06llu" SUFFIX, stamp, seq);
	dirfd = ig_outfile_opendir(dir, false);
	if (dirfd < 0)
		return dirfd;
	fd = ig_outfile_openat(dirfd, name);
	if (fd < 0) {
		close(dirfd);
		return fd;
	}
	while (off < len) {
		w = write(fd, json + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			err = w < 0 ? -errno : -EIO;
			break;
		}
		off += w;
	}
	if (close(fd) && !err)
		err = -errno;
	if (err)
		unlinkat(dirfd, name, 0);
	else
		err = prune(dirfd, keep, max_bytes);
	close(dirfd);
	return err;
}
