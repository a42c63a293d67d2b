// SPDX-License-Identifier: GPL-2.0
/* A report's file written whole and closed, with one line when it did not
 * all get there: the run's reports, its periods' and SIGUSR1's; and the
 * names of a period's and SIGUSR1's files. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "probes/log.h"
#include "util/outfile.h"
#include "modes/session_int.h"

/* Flushes @f and closes it (stdout is only flushed): 1 and one line when
 * what was written did not all get there, and the file made at @path
 * (NULL: none) is removed; @werr is the errno of a write that failed
 * before, when known. */
int ig_session_close_output(FILE *f, const char *what, const char *path, int werr)
{
	int err = 0;

	if (fflush(f))
		err = errno;
	else if (ferror(f))
		err = werr > 0 ? werr : EIO;
	if (err && f != stdout && path)
		ig_outfile_discard(path, fileno(f));
	if (f != stdout && fclose(f) && !err)
		err = errno;
	if (!err)
		return 0;
	ig_err("cannot write %s: %s", what, strerror(err));
	return 1;
}

int ig_session_write_file(const char *path, const char *what, const char *buf, size_t len)
{
	FILE *f;
	int fd;

	if (!strcmp(path, "-")) {
		f = stdout;
	} else {
		fd = ig_outfile_open(path);
		if (fd < 0) {
			ig_err("cannot write %s: %s", path, ig_outfile_strerror(fd));
			return 1;
		}
		f = fdopen(fd, "w");
		if (!f) {
			ig_err("cannot write %s: %s", path, strerror(errno));
			ig_outfile_discard(path, fd);
			close(fd);
			return 1;
		}
	}
	fwrite(buf, 1, len, f);
	return ig_session_close_output(f, what, f == stdout ? NULL : path, 0);
}

/* PATH.period-000001: beside the run's report, in the order they came. */
void ig_session_days_path(char *out, size_t n, const char *path, const char *kind,
			  unsigned long long k)
{
	snprintf(out, n, "%s.%s-%06llu", path, kind, k);
}
