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
#include "agent.h"
#include "outfile.h"

#define PREFIX	"idlegap-window-"
#define SUFFIX	".json"

struct rfile {
	char name[96];
	unsigned long long size;
};

int ig_agent_reports_open(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return access(dir, W_OK | X_OK) ? -errno : 0;
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
static int list_reports(const char *dir, struct rfile **out, size_t *n)
{
	DIR *d = opendir(dir);
	struct rfile *v = NULL, *nv;
	size_t cap = 0;
	struct dirent *e;
	struct stat st;

	*n = 0;
	if (!d)
		return -errno;
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

static int prune(const char *dir, unsigned int keep, unsigned long long max_bytes)
{
	unsigned long long total = 0;
	struct rfile *v = NULL;
	char path[4096];
	size_t n, i;
	int err = list_reports(dir, &v, &n);

	if (err)
		return err;
	for (i = 0; i < n; i++)
		total += v[i].size;
	/* the newest one stays, whatever its size */
	for (i = 0; i + 1 < n && (n - i > keep || total > max_bytes); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, v[i].name);
		if (unlink(path) && errno != ENOENT)
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
	char path[4096], stamp[32];
	struct tm tm;
	time_t now = time(NULL);
	size_t off = 0;
	ssize_t w;
	int fd, err = 0;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(path, sizeof(path), "%s/" PREFIX "%s-%06llu" SUFFIX, dir, stamp, seq);
	fd = ig_outfile_open(path);
	if (fd < 0)
		return fd;
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
	if (err) {
		unlink(path);
		return err;
	}
	return prune(dir, keep, max_bytes);
}
