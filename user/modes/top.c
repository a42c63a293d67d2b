// SPDX-License-Identifier: GPL-2.0
/*
 * `idlegap top` (docs/design.md §7.9): a live session whose engine's
 * observer (engine_obs.h) files each final stretch of device time into
 * one-second buckets per process and GPU; each second the last 10 s of
 * buckets become a snapshot for the screen (top_view.h).  The estimate
 * of unresolved time is made in blocks of EST_BLOCK_S as they close; each
 * GPU's last one is shown under its rows.  The job's steps are found
 * again at each refresh (ig_steps_find: bounded by the live segments
 * the steps keep).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "engine/engine_obs.h"
#include "engine/model.h"
#include "engine/steps/steps.h"
#include "probes/log.h"
#include "host/procfs.h"
#include "modes/session.h"
#include "modes/top.h"
#include "views/top_view.h"

#define WINDOW_S	10
#define NBUCKETS	(WINDOW_S + 1)
#define MAX_CAUSES	16
#define MAX_ROWS	256
#define DETAIL_LEN	112
#define NSEC		1000000000ULL
#define MAX_DEVS	64	/* devices shown at once: GPUs, and processes' unknown ones */
#define EST_BLOCK_S	5	/* the estimate's blocks (docs/design.md §4.10) */

struct bucket {
	uint64_t sec;		/* which second it holds */
	uint64_t busy, idle, unres;
	uint64_t peer;		/* waiting for peers in collectives */
	uint64_t cause[MAX_CAUSES];
};

struct row {
	uint32_t pid;
	int device;
	char comm[16];
	bool collectives;	/* a rank: in NCCL collectives */
	int32_t rank;
	uint64_t last_sec;	/* the newest second it holds */
	struct bucket b[NBUCKETS];
	char detail[MAX_CAUSES][DETAIL_LEN];	/* the newest, per cause */
};

struct topst {
	struct ig_top *view;
	bool opened;
	int err;
	struct row rows[MAX_ROWS];
	unsigned int nrows;
	const char *causes[MAX_CAUSES];	/* the engine's static names */
	unsigned int ncauses;
	int dev_key[MAX_DEVS];		/* the engine's device of each slot */
	uint64_t dev_sec[MAX_DEVS];	/* the newest second it was fed */
	unsigned int ndevs;
	uint32_t dev_pid[MAX_DEVS];	/* who fed each device last */
	struct ig_obs_estimate est[MAX_DEVS];	/* each slot's last block, t1 0: none */
	char est_why[MAX_DEVS][160];
	uint64_t next_draw, last_draw, last_records;
	int steps_dev;			/* the device the steps were of */
	uint64_t steps_final;		/* and its final time then; 0: none */
	/* the snapshot */
	struct ig_top_row out[MAX_ROWS];
};

static int cause_id(struct topst *t, const char *name)
{
	unsigned int i;

	for (i = 0; i < t->ncauses; i++)
		if (!strcmp(t->causes[i], name))
			return i;
	if (t->ncauses == MAX_CAUSES)
		return -1;
	t->causes[t->ncauses] = name;
	return t->ncauses++;
}

/* A row for a process and device seen in second sec: its own, a new
 * one, or when all are taken the one longest out of the window (its
 * process ended), so that a long run keeps showing new jobs. */
static struct row *row_get(struct topst *t, uint32_t pid, int device, uint64_t sec)
{
	struct row *r = NULL;
	unsigned int i;

	for (i = 0; i < t->nrows; i++)
		if (t->rows[i].pid == pid && t->rows[i].device == device)
			return &t->rows[i];
	if (t->nrows < MAX_ROWS)
		r = &t->rows[t->nrows++];
	else
		for (i = 0; i < t->nrows; i++)
			if (t->rows[i].last_sec + NBUCKETS < sec &&
			    (!r || t->rows[i].last_sec < r->last_sec))
				r = &t->rows[i];
	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->device = device;
	if (!pid || ig_proc_comm(pid, r->comm, sizeof(r->comm)))
		snprintf(r->comm, sizeof(r->comm), "?");
	return r;
}

static struct bucket *bucket(struct row *r, uint64_t sec)
{
	struct bucket *b = &r->b[sec % NBUCKETS];

	if (b->sec != sec) {
		memset(b, 0, sizeof(*b));
		b->sec = sec;
	}
	return b;
}

/* "file /data/x.bin, woken by loader (101)": what the deepest stretch
 * walked was waiting on. */
static void detail_of(const struct ig_obs_step *st, char *buf, size_t n)
{
	char comm[16] = "";
	size_t off;

	buf[0] = 0;
	off = 0;
	if (st->detail[0])
		off = snprintf(buf, n, "%s %s", st->iv.reason == IG_R_SOCKET ? "peer" : "file",
			       st->detail);
	else if (st->iv.reason == IG_R_FUTEX)
		off = snprintf(buf, n, "lock %#llx", (unsigned long long)st->iv.arg);
	if (st->iv.waker_tid && off < n) {
		ig_proc_comm(st->iv.waker_tid, comm, sizeof(comm));
		snprintf(buf + off, n - off, "%swoken by %s (%u)", off ? ", " : "",
			 comm[0] ? comm : "?", st->iv.waker_tid);
	}
}

static void add_idle(struct topst *t, const struct ig_obs_span *o,
		     struct bucket *b, uint64_t part)
{
	uint64_t dur = o->t1 - o->t0;
	unsigned int i;

	b->idle += part;
	for (i = 0; i < o->ncauses; i++) {
		int c = cause_id(t, o->causes[i].name);

		if (c >= 0)
			b->cause[c] += (double)o->causes[i].ns * part / dur;
	}
}

/* The slot of the engine's device @key seen in second @sec: a GPU, or
 * one process's device that nothing placed (docs/design.md §4.2), kept
 * apart from every GPU.  When all are taken, the one longest out of the
 * window (its processes ended) is given to @key; -1 when none is. */
static int dev_slot(struct topst *t, int key, uint64_t sec)
{
	unsigned int i;
	int old = -1;

	if (key < 0)
		return -1;
	for (i = 0; i < t->ndevs; i++)
		if (t->dev_key[i] == key)
			goto found;
	if (t->ndevs < MAX_DEVS) {
		i = t->ndevs++;
	} else {
		for (i = 0; i < t->ndevs; i++)
			if (t->dev_sec[i] + NBUCKETS < sec &&
			    (old < 0 || t->dev_sec[i] < t->dev_sec[old]))
				old = i;
		if (old < 0)
			return -1;
		i = old;
	}
	t->dev_key[i] = key;
	t->dev_pid[i] = 0;
	memset(&t->est[i], 0, sizeof(t->est[i]));
	t->dev_sec[i] = 0;
found:
	if (sec > t->dev_sec[i])
		t->dev_sec[i] = sec;
	return i;
}

/* A rank's time in a collective, settled after the device's own spans:
 * its wait for peers, [t0, wait_until), per second. */
static void on_collective(struct topst *t, const struct ig_obs_span *o)
{
	struct row *r = row_get(t, o->tgid, o->device, o->t0 / NSEC);
	uint64_t x, end = o->wait_until < o->t1 ? o->wait_until : o->t1;

	if (!r)
		return;
	r->collectives = true;
	r->rank = o->rank;
	for (x = o->t0; x < end;) {
		uint64_t sec = x / NSEC, e = (sec + 1) * NSEC;
		uint64_t part = (e < end ? e : end) - x;

		bucket(r, sec)->peer += part;
		x += part;
	}
}

static void on_span(void *ctx, const struct ig_obs_span *o)
{
	struct topst *t = ctx;
	const struct ig_obs_step *st;
	uint32_t pid = o->tgid;
	uint64_t x;
	struct row *r;
	int c, slot;

	if (o->t1 <= o->t0 || (slot = dev_slot(t, o->device, o->t1 / NSEC)) < 0)
		return;
	if (o->kind == IG_OBS_COLLECTIVE) {
		on_collective(t, o);
		return;
	}
	if (!pid && ig_gpu_dev_unknown(o->device))	/* its one process's */
		pid = o->device & (IG_DEV_UNKNOWN - 1);
	if (pid)
		t->dev_pid[slot] = pid;
	else
		pid = t->dev_pid[slot];
	r = row_get(t, pid, o->device, o->t0 / NSEC);
	if (!r)
		return;
	if (o->t1 / NSEC > r->last_sec)
		r->last_sec = o->t1 / NSEC;
	for (x = o->t0; x < o->t1;) {
		uint64_t sec = x / NSEC, end = (sec + 1) * NSEC;
		uint64_t part = (end < o->t1 ? end : o->t1) - x;
		struct bucket *b = bucket(r, sec);

		if (o->kind == IG_OBS_BUSY)
			b->busy += part;
		else if (o->kind == IG_OBS_UNRES)
			b->unres += part;
		else
			add_idle(t, o, b, part);
		x += part;
	}
	if (o->kind == IG_OBS_IDLE && o->ncauses &&
	    (st = ig_observe_cause_step(o, o->causes[0].name)) &&
	    (c = cause_id(t, o->causes[0].name)) >= 0)
		detail_of(st, r->detail[c], DETAIL_LEN);
}

static void on_estimate(void *ctx, const struct ig_obs_estimate *x)
{
	struct topst *t = ctx;
	int slot = dev_slot(t, x->device, x->t1 / NSEC);

	if (slot < 0)
		return;
	t->est[slot] = *x;
	snprintf(t->est_why[slot], sizeof(t->est_why[0]), "%s",
		 x->refused ? x->refused : "no evidence");
	t->est[slot].refused = t->est_why[slot];
}

/* The device's last estimated block, as shares of its unresolved time. */
static void row_est(const struct topst *t, int slot, uint64_t now, struct ig_top_est *o)
{
	const struct ig_obs_estimate *x = &t->est[slot];
	double u = (double)x->unres_ns;

	if (!x->t1 || !x->unres_ns)
		return;
	o->shown = true;
	o->have = x->have;
	o->bounded = x->bounded;
	o->idle = x->idle_ns / u;
	o->low = x->low_ns / u;
	o->high = x->high_ns / u;
	o->at_least = x->at_least_ns / u;
	o->unres_s = u / 1e9;
	o->age_s = now > x->t1 ? (double)(now - x->t1) / 1e9 : 0;
	o->refused = x->refused;
	o->device = x->have && x->method && !strcmp(x->method, "device");
}

/* The row's share of the last WINDOW_S seconds (those final so far). */
static bool row_snapshot(const struct topst *t, const struct row *r, uint64_t now,
			 struct ig_top_row *out)
{
	uint64_t busy = 0, idle = 0, unres = 0, peer = 0, cause[MAX_CAUSES] = { 0 }, all;
	uint64_t now_sec = now / NSEC;
	unsigned int i, j, k;

	for (i = 0; i < NBUCKETS; i++) {
		const struct bucket *b = &r->b[i];

		if (b->sec + WINDOW_S <= now_sec || b->sec > now_sec)
			continue;
		busy += b->busy;
		idle += b->idle;
		unres += b->unres;
		peer += b->peer;
		for (j = 0; j < t->ncauses; j++)
			cause[j] += b->cause[j];
	}
	all = busy + idle + unres;
	if (!all)
		return false;
	memset(out, 0, sizeof(*out));
	out->pid = r->pid;
	out->comm = r->comm;
	out->device = ig_gpu_dev_unknown(r->device) ? -1 : r->device;
	out->busy = (double)busy / all;
	out->idle = (double)idle / all;
	out->unresolved = (double)unres / all;
	out->collectives = r->collectives;
	out->rank = r->rank;
	/* the wait was counted busy or unresolved by the device's spans */
	out->peer_wait = (double)(peer < busy + unres ? peer : busy + unres) / all;
	for (i = 0; i < t->ndevs; i++)
		if (t->dev_key[i] == r->device)
			row_est(t, i, now, &out->est);
	for (k = 0; k < IG_TOP_CAUSES; k++) {	/* the largest, in order */
		int best = -1;

		for (j = 0; j < t->ncauses; j++)
			if (cause[j] && (best < 0 || cause[j] > cause[best]))
				best = j;
		if (best < 0)
			break;
		out->causes[k].name = t->causes[best];
		out->causes[k].share = (double)cause[best] / all;
		out->causes[k].detail = r->detail[best][0] ? r->detail[best] : NULL;
		out->n_causes++;
		cause[best] = 0;
	}
	return true;
}

/* The whole steps of @o that ended in the last WINDOW_S s of its
 * device's final time. */
static uint32_t steps_lately(const struct ig_steps_out *o)
{
	uint64_t fin = o->n ? o->v[o->n - 1].t1 : 0, from;
	uint32_t i, n = 0;

	from = fin > WINDOW_S * NSEC ? fin - WINDOW_S * NSEC : 0;
	for (i = o->n; i-- > 0 && o->v[i].t1 > from;)
		n += !o->v[i].partial;
	return n;
}

/* The job's steps: of the device, among those fed in the window, whose
 * loop made the most whole steps lately (so that an ended job's, or a
 * slow one's, give way); its slot in *slot, -1: none found. */
static void steps_find(const struct topst *t, const struct ig_engine *e,
		       uint64_t now, struct ig_steps_out *o, int *slot)
{
	struct ig_steps_out x;
	uint32_t best = 0, n;
	unsigned int i;

	memset(o, 0, sizeof(*o));
	*slot = -1;
	for (i = 0; e && i < t->ndevs; i++) {
		if (t->dev_sec[i] + WINDOW_S <= now / NSEC)
			continue;
		ig_steps_find(e, t->dev_key[i], &x);
		n = x.found ? steps_lately(&x) : 0;
		if (n && n > best) {
			ig_steps_out_free(o);
			*o = x;
			*slot = (int)i;
			best = n;
		} else {
			ig_steps_out_free(&x);
		}
	}
}

/*
 * The job's steps (docs/design.md §4.11, §7.9).  The rate is of the
 * complete steps that ended in the device's time made final since the
 * last refresh, over that time; a loop slower than the refresh counts
 * from its newest complete step's start instead.  No time made final
 * (a stalled loop waits in a gap that no submission has ended yet, or
 * the job ended): no step either, 0 a second.
 */
static void steps_snapshot(struct topst *t, const struct ig_engine *e, uint64_t now,
			   struct ig_top_steps *out)
{
	struct ig_steps_out s;
	const struct ig_step *last = NULL, *prev = NULL;
	uint64_t from, fin;
	uint32_t i, n = 0;
	const char *c;
	int slot;

	memset(out, 0, sizeof(*out));
	steps_find(t, e, now, &s, &slot);
	for (i = s.found ? s.n : 0; i-- > 0;)
		if (!s.v[i].partial) {
			last = &s.v[i];
			break;
		}
	if (!last) {
		ig_steps_out_free(&s);
		out->gone = t->steps_final != 0;
		return;
	}
	fin = s.v[s.n - 1].t1;	/* the device's final time */
	from = s.device == t->steps_dev && t->steps_final ? t->steps_final :
	       fin > NSEC ? fin - NSEC : 0;	/* first seen: the last second */
	for (i = 0; s.v[i].partial; i++)
		;
	if (from < s.v[i].t0)	/* the loop's, from its first whole step */
		from = s.v[i].t0;
	if (last->t0 < from && fin > from)
		from = last->t0;
	for (i = last - s.v + 1; fin > from && i-- > 0;) {
		const struct ig_step *st = &s.v[i];

		if (st->t1 <= from || (prev && st->index + 1 != prev->index))
			break;		/* older, or folded steps between */
		if (!st->partial)
			n++;
		prev = st;
	}
	out->found = true;
	out->device = ig_gpu_dev_unknown(s.device) ? -1 : s.device;
	out->pid = slot >= 0 ? t->dev_pid[slot] : 0;
	out->per_s = fin > from ? n * 1e9 / (fin - from) : 0;
	for (i = s.n; i-- > 0;) {
		const struct ig_step *st = &s.v[i];

		if (!st->slow)
			continue;
		c = ig_steps_cause_name(st->cause);
		out->slow = true;
		out->slow_index = st->index;
		snprintf(out->slow_cause, sizeof(out->slow_cause), "%s", c ? c : "no idle");
		out->slow_ms = (st->t1 - st->t0) / 1e6;
		break;
	}
	t->steps_dev = s.device;
	t->steps_final = fin;
	ig_steps_out_free(&s);
}

static int draw(struct topst *t, const struct ig_session_tick *k)
{
	struct ig_top_snapshot s = { .window_s = WINDOW_S, .rows = t->out };
	struct timespec ts;
	double dt = (k->now - t->last_draw) / 1e9;
	unsigned int i;

	for (i = 0; i < t->nrows; i++)
		if (row_snapshot(t, &t->rows[i], k->now, &t->out[s.n_rows]))
			s.n_rows++;
	clock_gettime(CLOCK_REALTIME, &ts);
	s.now_ns = (uint64_t)ts.tv_sec * NSEC + ts.tv_nsec;
	s.records_per_s = dt > 0 ? (k->nrecords - t->last_records) / dt : 0;
	s.lost_records = k->lost;
	steps_snapshot(t, k->engine, k->now, &s.steps);
	t->last_draw = k->now;
	t->last_records = k->nrecords;
	return ig_top_draw(t->view, &s);
}

static int tick(void *ctx, const struct ig_session_tick *k)
{
	struct topst *t = ctx;
	int rc;

	if (!t->opened) {	/* after the session's first line */
		t->opened = true;
		t->err = ig_top_open(&t->view, STDOUT_FILENO);
		if (t->err)
			return 1;
		t->last_draw = k->now;
		t->next_draw = k->now + NSEC;
	}
	rc = ig_top_wait(t->view, 1);	/* keys: a look, not a wait */
	if (rc) {
		t->err = rc < 0 ? rc : 0;
		return 1;
	}
	if (k->now < t->next_draw)
		return 0;
	t->next_draw += NSEC;
	if (t->next_draw <= k->now)
		t->next_draw = k->now + NSEC;
	t->err = draw(t, k);
	return t->err ? 1 : 0;
}

int ig_top_main(struct ig_session_opts *o)
{
	struct topst *t = calloc(1, sizeof(*t));
	int rc;

	if (!t) {
		ig_err("out of memory");
		return 1;
	}
	o->host_wide = !o->npids;
	o->tick = tick;
	o->tick_ctx = t;
	o->out.quiet = true;
	o->out.obs.span = on_span;
	o->out.obs.estimate = on_estimate;
	o->out.obs.ctx = t;
	o->out.engine.est_block_s = EST_BLOCK_S;
	o->no_nvml = true;
	rc = ig_session_trace(o);
	ig_top_close(t->view);	/* the terminal as it was, before any line */
	if (t->err) {
		ig_err("top: %s", strerror(-t->err));
		rc = 1;
	}
	free(t);
	return rc;
}
