// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "util/escape.h"
#include "views/top_term.h"
#include "views/top_view.h"

#define MIN_COLS 80
#define BAR_MIN 10

struct ig_top {
	int fd;
	bool tty, paused;
	enum ig_top_sort sort;
	struct ig_top_snapshot last;	/* a deep copy, for redraws */
	struct ig_top_row *rows;
	char *strs;			/* the copy's strings */
};

static const char *const sort_names[IG_TOP_SORTS] = { "idle", "busy", "pid" };

int ig_top_open(struct ig_top **out, int fd)
{
	struct ig_top *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	t->fd = fd;
	err = ig_term_enter(fd);
	if (err && err != -ENOTTY) {
		free(t);
		return err;
	}
	t->tty = !err;
	*out = t;
	return 0;
}

void ig_top_close(struct ig_top *t)
{
	if (!t)
		return;
	if (t->tty)
		ig_term_leave();
	free(t->rows);
	free(t->strs);
	free(t);
}

bool ig_top_paused(const struct ig_top *t)
{
	return t->paused;
}

enum ig_top_sort ig_top_sort(const struct ig_top *t)
{
	return t->sort;
}

/* ---- keeping the last snapshot -------------------------------------- */

static size_t slen(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

static const char *scopy(char **p, const char *s)
{
	char *d = *p;
	size_t n = slen(s);

	if (!s)
		return NULL;
	memcpy(d, s, n);
	*p += n;
	return d;
}

static size_t row_strs(const struct ig_top_row *r)
{
	size_t n = slen(r->comm);
	unsigned int i;

	for (i = 0; i < r->n_causes && i < IG_TOP_CAUSES; i++)
		n += slen(r->causes[i].name) + slen(r->causes[i].detail);
	return n;
}

static int keep(struct ig_top *t, const struct ig_top_snapshot *s)
{
	struct ig_top_row *rows = calloc(s->n_rows ? s->n_rows : 1, sizeof(*rows));
	size_t n = 1;
	unsigned int i, c;
	char *strs, *p;

	for (i = 0; i < s->n_rows; i++)
		n += row_strs(&s->rows[i]);
	strs = malloc(n);
	if (!rows || !strs) {
		free(rows);
		free(strs);
		return -ENOMEM;
	}
	for (i = 0, p = strs; i < s->n_rows; i++) {
		rows[i] = s->rows[i];
		if (rows[i].n_causes > IG_TOP_CAUSES)
			rows[i].n_causes = IG_TOP_CAUSES;
		rows[i].comm = scopy(&p, s->rows[i].comm);
		for (c = 0; c < rows[i].n_causes; c++) {
			rows[i].causes[c].name = scopy(&p, s->rows[i].causes[c].name);
			rows[i].causes[c].detail = scopy(&p, s->rows[i].causes[c].detail);
		}
	}
	free(t->rows);
	free(t->strs);
	t->rows = rows;
	t->strs = strs;
	t->last = *s;
	t->last.rows = rows;
	return 0;
}

/* ---- order ------------------------------------------------------------ */

static int cmp_rows(const void *a, const void *b, void *arg)
{
	const struct ig_top_row *x = a, *y = b;
	enum ig_top_sort by = *(enum ig_top_sort *)arg;
	double dx = by == IG_TOP_BY_BUSY ? x->busy : x->idle;
	double dy = by == IG_TOP_BY_BUSY ? y->busy : y->idle;

	if (by != IG_TOP_BY_PID && dx != dy)
		return dx < dy ? 1 : -1;	/* largest first */
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	/* unknown devices (-1) after every GPU */
	return (unsigned int)x->device < (unsigned int)y->device ? -1 :
	       (unsigned int)x->device > (unsigned int)y->device;
}

static void order(struct ig_top *t)
{
	qsort_r(t->rows, t->last.n_rows, sizeof(*t->rows), cmp_rows, &t->sort);
}

/* ---- drawing ---------------------------------------------------------- */

static int pct(double x)
{
	return x <= 0 ? 0 : x >= 1 ? 100 : (int)(x * 100 + 0.5);
}

/* @s escaped, cut to @w bytes (and so to at most @w columns) */
static const char *fit(char *buf, size_t size, const char *s, int w)
{
	size_t n = w < 0 ? 1 : (size_t)w + 1;

	return ig_esc(buf, n < size ? n : size, s ? s : "?", 4096);
}

static void bar(FILE *f, const struct ig_top_row *r, int w)
{
	int nb = (int)(r->busy * w + 0.5), ni = (int)(r->idle * w + 0.5);
	int nu = (int)(r->unresolved * w + 0.5), i;

	nb = nb > w ? w : nb;
	ni = ni > w - nb ? w - nb : ni;
	nu = nu > w - nb - ni ? w - nb - ni : nu;
	fputc('[', f);
	for (i = 0; i < w; i++)
		fputc(i < nb ? '#' : i < nb + ni ? '-' : i < nb + ni + nu ? '?' : ' ', f);
	fputc(']', f);
}

/* "~idle 92% of 1.8 s unresolved (85-100%), 6 s ago": the GPU's last
 * estimated block, its idle as a share of its unresolved time. */
static void draw_est(FILE *f, const struct ig_top_est *e, int cols)
{
	char why[256];

	if (e->have)
		fprintf(f, "        %-14s %4d%%  of %.1f s unresolved (%d-%d%%), %.0f s ago%s",
			"~idle", pct(e->idle), e->unres_s, pct(e->low), pct(e->high),
			e->age_s, e->device ? ", GPU counters" : "");
	else if (e->bounded)
		fprintf(f, "        %-14s>=%3d%%  of %.1f s unresolved, %.0f s ago (no estimate)",
			"~idle", pct(e->at_least), e->unres_s, e->age_s);
	else
		fprintf(f, "        %-14s    -  no estimate: %s", "~idle",
			fit(why, sizeof(why), e->refused, cols - 43 > 8 ? cols - 43 : 8));
	fputs("\033[K\r\n", f);
}

/* The row's GPU: its index, or "?" where nothing placed its process
 * (docs/design.md §4.2). */
static const char *dev_name(char *buf, size_t n, int device)
{
	if (device < 0)
		snprintf(buf, n, "?");
	else
		snprintf(buf, n, "%d", device);
	return buf;
}

/* The row's lines: itself and its causes; returns how many were drawn. */
static int draw_row(FILE *f, const struct ig_top_row *r, int cols, int room)
{
	char comm[64], name[64], detail[512], dev[16];
	unsigned int c;
	int n = 1;

	fprintf(f, "%7u %-16s %3s %4d%% %4d%% %4d%%  ", r->pid, fit(comm, sizeof(comm), r->comm, 16),
		dev_name(dev, sizeof(dev), r->device), pct(r->busy), pct(r->idle),
		pct(r->unresolved));
	/* 48 columns before the bar, 2 brackets, the last column left free */
	bar(f, r, cols - 51 < BAR_MIN ? BAR_MIN : cols - 51);
	fputs("\033[K\r\n", f);
	for (c = 0; c < r->n_causes && n < room; c++, n++)
		fprintf(f, "        %-14s %4d%%  %s\033[K\r\n",
			fit(name, sizeof(name), r->causes[c].name, 14), pct(r->causes[c].share),
			r->causes[c].detail ? fit(detail, sizeof(detail), r->causes[c].detail,
						  cols - 31) : "");
	if (r->collectives && n < room) {
		if (r->rank >= 0)
			fprintf(f, "        %-14s %4d%%  rank %d\033[K\r\n", "peer_wait",
				pct(r->peer_wait), r->rank);
		else
			fprintf(f, "        %-14s %4d%%\033[K\r\n", "peer_wait", pct(r->peer_wait));
		n++;
	}
	if (r->est.shown && n < room) {
		draw_est(f, &r->est, cols);
		n++;
	}
	return n;
}

/* "183.2/s", "0.25/s" */
static const char *rate(char *buf, size_t n, double per_s)
{
	snprintf(buf, n, per_s >= 1 || per_s <= 0 ? "%.1f/s" : "%.2f/s", per_s);
	return buf;
}

/* "steps 183.2/s (pid 4242, GPU 0), last slow: step 196 storage 10.9 ms",
 * cut to the screen's width */
static void draw_steps(FILE *f, const struct ig_top_steps *st, double window_s, int cols)
{
	char line[256], r[32], dev[16], pid[32] = "";
	int n;

	if (!st->found) {
		if (st->gone)
			fprintf(f, "steps: none in the last %.0f s\033[K\r\n", window_s);
		else
			fputs("steps: none found yet\033[K\r\n", f);
		return;
	}
	if (st->pid)
		snprintf(pid, sizeof(pid), "pid %u, ", st->pid);
	n = snprintf(line, sizeof(line), "steps %s (%sGPU %s), ", rate(r, sizeof(r), st->per_s),
		     pid, dev_name(dev, sizeof(dev), st->device));
	if (st->slow)
		snprintf(line + n, sizeof(line) - n, "last slow: step %u %.32s %.1f ms",
			 st->slow_index, st->slow_cause, st->slow_ms);
	else
		snprintf(line + n, sizeof(line) - n, "none slow");
	fprintf(f, "%.*s\033[K\r\n", cols - 1, line);
}

static void draw_screen(struct ig_top *t, FILE *f, int rows, int cols)
{
	const struct ig_top_snapshot *s = &t->last;
	/* the bottom line stays empty: a newline there would scroll */
	int line = 4, need, limit = rows - 1;
	unsigned int i;

	fprintf(f, "\033[H\033[1midlegap top\033[m  %u rows  %.0f records/s  %llu lost  "
		"last %.0f s  sort: %s%s\033[K\r\n", s->n_rows, s->records_per_s,
		(unsigned long long)s->lost_records, s->window_s, sort_names[t->sort],
		t->paused ? "  \033[7mPAUSED\033[m" : "");
	draw_steps(f, &s->steps, s->window_s, cols);
	fputs("q quit  p pause  s sort        bar: # busy  - idle  ? unresolved\033[K\r\n", f);
	fputs("\033[7m    PID COMM             GPU  BUSY  IDLE UNRES  share of the window", f);
	fprintf(f, "%*s\033[m\033[K\r\n", cols > 70 ? cols - 70 : 0, "");
	for (i = 0; i < s->n_rows; i++) {
		need = 1 + (int)t->rows[i].n_causes + t->rows[i].collectives +
		       t->rows[i].est.shown;
		/* a row with its first cause, or not at all; one line for "more" */
		if (line + (need < 2 ? need : 2) > limit - 1)
			break;
		line += draw_row(f, &t->rows[i], cols, limit - 1 - line);
	}
	if (i < s->n_rows)
		fprintf(f, "  ... %u more (a taller terminal shows them)\033[K\r\n", s->n_rows - i);
	else if (!s->n_rows)
		fputs("  no GPU process seen yet\033[K\r\n", f);
	fputs("\033[J", f);
}

static void draw_lines(struct ig_top *t, FILE *f)
{
	const struct ig_top_snapshot *s = &t->last;
	char when[32], comm[64], name[64], detail[256], dev[16];
	time_t sec = s->now_ns / 1000000000ull;
	const struct ig_top_row *r;
	struct tm tm;
	unsigned int i;

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&sec, &tm));
	if (s->steps.found) {
		fprintf(f, "%s steps %s", when, rate(name, sizeof(name), s->steps.per_s));
		if (s->steps.pid)
			fprintf(f, " pid %u", s->steps.pid);
		fprintf(f, " gpu %s", dev_name(dev, sizeof(dev), s->steps.device));
		if (s->steps.slow)
			fprintf(f, " last_slow step %u %s %.1f ms", s->steps.slow_index,
				fit(name, sizeof(name), s->steps.slow_cause, 32),
				s->steps.slow_ms);
		fputc('\n', f);
	}
	if (!s->n_rows)
		fprintf(f, "%s no GPU process rec/s %.0f lost %llu\n", when, s->records_per_s,
			(unsigned long long)s->lost_records);
	for (i = 0; i < s->n_rows; i++) {
		r = &t->rows[i];
		fprintf(f, "%s pid %u %s gpu %s busy %d%% idle %d%% unresolved %d%%", when, r->pid,
			fit(comm, sizeof(comm), r->comm, 16), dev_name(dev, sizeof(dev), r->device),
			pct(r->busy), pct(r->idle), pct(r->unresolved));
		if (r->n_causes)
			fprintf(f, " first %s %d%%%s%s", fit(name, sizeof(name), r->causes[0].name, 32),
				pct(r->causes[0].share), r->causes[0].detail ? " " : "",
				r->causes[0].detail ? fit(detail, sizeof(detail),
							  r->causes[0].detail, 200) : "");
		if (r->est.shown && r->est.have)
			fprintf(f, " est_unresolved_idle %d%% (%d-%d%%)%s", pct(r->est.idle),
				pct(r->est.low), pct(r->est.high),
				r->est.device ? " device" : "");
		else if (r->est.shown && r->est.bounded)
			fprintf(f, " est_unresolved_idle >=%d%%", pct(r->est.at_least));
		else if (r->est.shown)
			fprintf(f, " est_unresolved_idle none");
		if (r->collectives && r->rank >= 0)
			fprintf(f, " rank %d peer_wait %d%%", r->rank, pct(r->peer_wait));
		else if (r->collectives)	/* its communicator inferred, §4.9 */
			fprintf(f, " rank ? peer_wait %d%%", pct(r->peer_wait));
		fprintf(f, " rec/s %.0f lost %llu\n", s->records_per_s,
			(unsigned long long)s->lost_records);
	}
}

static int write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= w;
	}
	return 0;
}

static int render(struct ig_top *t)
{
	int rows = 24, cols = MIN_COLS, err;
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (!f)
		return -errno;
	if (t->tty) {
		ig_term_size(t->fd, &rows, &cols);
		draw_screen(t, f, rows, cols < MIN_COLS ? MIN_COLS : cols);
	} else {
		draw_lines(t, f);
	}
	err = fclose(f) ? -ENOMEM : 0;
	if (!err)
		err = write_all(t->fd, buf, n);
	free(buf);
	return err;
}

int ig_top_draw(struct ig_top *t, const struct ig_top_snapshot *s)
{
	int err;

	if (t->paused)
		return 0;
	err = keep(t, s);
	if (err)
		return err;
	order(t);
	return render(t);
}

/* ---- input ------------------------------------------------------------ */

/* Returns 1 on q, 0 otherwise, redrawing what a key changed. */
static int keys(struct ig_top *t)
{
	char buf[64];
	ssize_t n, i;
	int quit = 0, redraw = 0;

	n = read(t->fd, buf, sizeof(buf));
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	if (n == 0)
		return 1;	/* the terminal went away */
	for (i = 0; i < n; i++) {
		switch (buf[i]) {
		case 'q': case 'Q':
			quit = 1;
			break;
		case 'p': case 'P': case ' ':
			t->paused = !t->paused;
			redraw = 1;
			break;
		case 's': case 'S':
			t->sort = (t->sort + 1) % IG_TOP_SORTS;
			order(t);
			redraw = 1;
			break;
		}
	}
	if (quit)
		return 1;
	return redraw ? render(t) : 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ll + ts.tv_nsec / 1000000;
}

int ig_top_wait(struct ig_top *t, int timeout_ms)
{
	int64_t end = now_ms() + timeout_ms, left;
	struct pollfd p = { .fd = t->fd, .events = POLLIN };
	int r, err;

	while ((left = end - now_ms()) > 0) {
		r = poll(&p, t->tty ? 1 : 0, (int)left);
		if (r < 0 && errno != EINTR)
			return -errno;
		/* a resize or a return from Ctrl-Z: draw the screen again */
		if (t->tty && ig_term_events() && (err = render(t)))
			return err;
		if (r > 0 && (err = keys(t)))
			return err;
	}
	return 0;
}
