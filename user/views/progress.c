// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "views/progress.h"
#include "util/clock.h"

void ig_progress_init(struct ig_progress *p, int fd, const char *what, uint64_t total)
{
	memset(p, 0, sizeof(*p));
	p->fd = fd;
	p->on = isatty(fd);
	p->what = what;
	p->total = total;
	p->start_ns = p->last_ns = ig_mono_ns();
}

/* 1234567 -> "1.2M" */
static const char *human(char *b, size_t n, double v)
{
	static const char unit[] = " kMGT";
	int u = 0;

	while (v >= 1000 && u < 4) {
		v /= 1000;
		u++;
	}
	if (u)
		snprintf(b, n, "%.1f%c", v, unit[u]);
	else
		snprintf(b, n, "%.0f", v);
	return b;
}

size_t ig_progress_format(char *buf, size_t n, const char *what, uint64_t done,
			  uint64_t total, uint64_t records, uint64_t elapsed_ns)
{
	double secs = elapsed_ns / 1e9;
	char pct[16] = "", r[16], rate[16];
	int len;

	if (total)
		snprintf(pct, sizeof(pct), "%3u%% ", (unsigned int)(done >= total ? 100
				: done * 100 / total));
	len = snprintf(buf, n, "%s: %s%s records, %s records/s", what, pct,
		       human(r, sizeof(r), records),
		       human(rate, sizeof(rate), secs > 0 ? records / secs : 0));
	return len < 0 ? 0 : (size_t)len < n ? (size_t)len : n - 1;
}

static void put(int fd, const char *s, size_t n)
{
	ssize_t w;

	/* best effort: progress never fails the work */
	while (n && ((w = write(fd, s, n)) > 0 || (w < 0 && errno == EINTR)))
		if (w > 0) {
			s += w;
			n -= w;
		}
}

void ig_progress_at(struct ig_progress *p, uint64_t done, uint64_t records, uint64_t now_ns)
{
	char line[160];
	size_t n;

	if (!p->on || now_ns - p->last_ns < IG_PROGRESS_INTERVAL_NS)
		return;
	p->last_ns = now_ns;
	line[0] = '\r';
	n = 1 + ig_progress_format(line + 1, sizeof(line) - 4, p->what, done, p->total,
				   records, now_ns - p->start_ns);
	memcpy(line + n, "\033[K", 3);
	put(p->fd, line, n + 3);
	p->drawn = true;
}

void ig_progress_update(struct ig_progress *p, uint64_t done, uint64_t records)
{
	if (p->on && (++p->calls & 255) == 0)
		ig_progress_at(p, done, records, ig_mono_ns());
}

void ig_progress_end(struct ig_progress *p)
{
	if (p->drawn)
		put(p->fd, "\r\033[K", 4);
	p->drawn = false;
}
