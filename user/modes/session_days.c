// SPDX-License-Identifier: GPL-2.0
/*
 * A run that lasts days (docs/design.md §7.10, §6.4): reports of each
 * period as the job goes (--every) and a recording in pieces of a bounded size (-o with
 * --output-max-mb, --output-files).
 *
 * A period is an engine of its own, fed the records the run's engine is
 * fed.  Its end is decided in the live loop: the processes, their
 * mappings and set-up facts are restated then, for the next period's
 * engine, and the switch is made when the first record past that instant
 * leaves the reorder stage.  A gap open at a period's end is carried as
 * the agent's continuous windows carry it (ig_engine_hold,
 * ig_engine_open_gaps, ig_engine_carry_in): each period counts its part,
 * with the cause found when the gap ends.
 *
 * The run so far (SIGUSR1) is session_usr1.c's.
 */
#include <errno.h>
#include <json-c/json.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "host/procfs.h"
#include "modes/cli_base.h"
#include "modes/session_int.h"
#include "probes/discovery.h"
#include "probes/log.h"
#include "probes/tracer.h"
#include "stream/recording.h"
#include "stream/reorder.h"
#include "util/outfile.h"
#include "util/util.h"
#include "views/timeline_build.h"

static int open_period(struct session *s, __u64 at, const struct ig_period_end *b);

static __u64 every_ns(const struct session *s)
{
	return (__u64)(s->o->every_s * 1e9);
}

/* The run's metadata, restated at @ts. */
static void meta_at(const struct session *s, __u64 ts, struct ig_meta *m)
{
	*m = s->meta;
	m->h.ts = ts;
	if (m->realtime_ns)
		m->realtime_ns += ts - s->meta.h.ts;
	m->piece = m->start_nrec = 0;
	m->run_id = 0;
}

void ig_session_days_route(struct session *s, const struct ig_hdr *rec)
{
	struct ig_period_end *b;

	if (s->route == IG_ROUTE_FILE) {
		if (s->writer && !s->write_err)
			s->write_err = ig_rec_writer_put(s->writer, rec);
		return;
	}
	b = &s->bounds[s->nbounds - 1];
	if (b->len + rec->size > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1 << 14;
		unsigned char *p;

		while (cap < b->len + rec->size)
			cap *= 2;
		p = realloc(b->recs, cap);
		if (!p) {
			s->oom = true;
			return;
		}
		b->recs = p;
		b->cap = cap;
	}
	memcpy(b->recs + b->len, rec, rec->size);
	b->len += rec->size;
}

static void emit_route(const struct ig_hdr *rec, void *ctx)
{
	ig_session_days_route(ctx, rec);
}

struct tasks_ctx {
	struct session *s;
	__u64 ts;
};

static int tasks_one(pid_t pid, void *ctx)
{
	struct tasks_ctx *t = ctx;

	ig_capture_emit_tasks(&t->s->cap, pid, t->ts);
	return 0;
}

/* What a fresh engine, or a reader of a new piece alone, needs told at
 * @ts: the targets and their descendants, the libraries probed in them,
 * their mappings and interpreters, the set-up facts; the stacks and code
 * objects are sent again in full from here on. */
static void restate(struct session *s, __u64 ts, int route)
{
	struct tasks_ctx t = { s, ts };
	int i;

	s->route = route;
	if (s->child > 0) {
		tasks_one(s->child, &t);
		ig_proc_for_each_descendant(s->child, tasks_one, &t);
	}
	for (i = 0; i < s->o->npids; i++) {
		tasks_one(s->o->pids[i], &t);
		ig_proc_for_each_descendant(s->o->pids[i], tasks_one, &t);
	}
	ig_discovery_reannounce(s->cap.disc, ts);
	ig_facts_announce(&s->facts, ts, emit_route, s);
	s->route = IG_ROUTE_ALL;
	ig_capture_forget_sent(&s->cap);
}

int ig_session_days_start(struct session *s, __u64 t0)
{
	s->t0 = t0;
	/* A run of days: memory the engines free (an estimate block's
	 * evidence, a period's engine) goes back to the system; the trim
	 * in the loop gives back what smaller blocks leave. */
	ig_cli_days_heap();
	s->next_trim = t0 + IG_SESSION_TRIM_NS;
	if (!s->o->every_s)
		return 0;
	s->next_period = t0 + every_ns(s);
	if (ig_tracer_stats(s->cap.tracer, &s->period_base))
		memset(&s->period_base, 0, sizeof(s->period_base));
	if (open_period(s, t0, NULL))
		return 1;
	return 0;
}

/* ---- periods ---------------------------------------------------------- */

static int open_period(struct session *s, __u64 at, const struct ig_period_end *b)
{
	const struct ig_output_opts *out = &s->o->out;
	struct ig_period *p = &s->cur;
	struct ig_meta m;
	char path[4096];
	size_t off, i;
	int err;

	memset(p, 0, sizeof(*p));
	p->engine = ig_engine_new(&out->engine);
	if (!p->engine)
		return -ENOMEM;
	p->n = ++s->nperiods;
	p->start = at;
	if (out->perfetto_path && strcmp(out->perfetto_path, "-")) {
		struct ig_engine_obs o = { 0 };

		ig_session_days_path(path, sizeof(path), out->perfetto_path, "period", p->n);
		err = ig_timeline_open(&p->tlb, path);
		if (err) {
			ig_warn("cannot write %s: %s", path, ig_outfile_strerror(err));
			s->period_failed++;
			p->tlb = NULL;
		} else {
			ig_timeline_observer(p->tlb, &o);
			ig_engine_observe(p->engine, &o);
		}
	}
	if (!b)
		return 0;	/* the first: fed the stream from its start */
	meta_at(s, at, &m);
	ig_engine_feed(p->engine, &m.h);
	for (off = 0; off < b->len; off += ((const struct ig_hdr *)(b->recs + off))->size)
		ig_engine_feed(p->engine, (const struct ig_hdr *)(b->recs + off));
	for (i = 0; i < s->ncarry; i++)
		ig_engine_carry_in(p->engine, &s->carry[i], at);
	s->ncarry = 0;
	return 0;
}

/* The period's place in the run, added to its JSON report. */
static char *amend(const struct session *s, const struct ig_period *p, char *text,
		   size_t *len, __u64 extended)
{
	struct json_object *j = json_tokener_parse(text), *o;
	const char *t;
	char *nt;

	if (!j)
		return text;
	o = json_object_new_object();
	json_object_object_add(o, "index", json_object_new_int64((int64_t)p->n));
	json_object_object_add(o, "every_s", json_object_new_double(s->o->every_s));
	json_object_object_add(o, "start_s", json_object_new_double((p->start - s->t0) / 1e9));
	json_object_object_add(o, "end_s", json_object_new_double((p->end - s->t0) / 1e9));
	json_object_object_add(o, "extended_s", json_object_new_double(extended / 1e9));
	json_object_object_add(j, "period", o);
	t = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
			JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
	nt = t ? malloc(strlen(t) + 2) : NULL;
	if (nt) {
		*len = strlen(t) + 1;
		memcpy(nt, t, *len - 1);
		nt[*len - 1] = '\n';
		nt[*len] = '\0';
		free(text);
		text = nt;
	}
	json_object_put(j);
	return text;
}

/* The wall-clock time of @ts, from the run's metadata: a run of days
 * is read by the time of day. */
static void utc(const struct session *s, __u64 ts, char *out, size_t n)
{
	time_t t = (time_t)((s->meta.realtime_ns + (ts - s->meta.h.ts)) / 1000000000ULL);
	struct tm tm;

	if (!s->meta.realtime_ns || !gmtime_r(&t, &tm) ||
	    !strftime(out, n, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(out, n, "?");
}

/* A period's reports: its text, its JSON and its timeline. */
static void report_period(struct session *s, struct ig_period *p, __u64 extended)
{
	const struct ig_output_opts *out = &s->o->out;
	bool json_stdout = out->json_path && !strcmp(out->json_path, "-");
	bool pf_stdout = out->perfetto_path && !strcmp(out->perfetto_path, "-");
	struct ig_perfetto_stats st;
	char path[4096], *text = NULL;
	size_t len = 0;
	int err;

	ig_engine_finish(p->engine);
	ig_session_usr1_wait(s);
	if (!out->quiet && !json_stdout && !pf_stdout) {
		char a[32], b[32];

		utc(s, p->start, a, sizeof(a));
		utc(s, p->end, b, sizeof(b));
		printf("=== period %llu: %.1f s to %.1f s of the run (%s to %s) ===\n", p->n,
		       (p->start - s->t0) / 1e9, (p->end - s->t0) / 1e9, a, b);
		ig_engine_report_text(p->engine, stdout);
		if (fflush(stdout))
			s->period_failed++;
	}
	if (out->json_path) {
		err = ig_engine_report_json_buf(p->engine, &text, &len);
		if (err) {
			ig_warn("period %llu: cannot make the JSON report: %s", p->n, strerror(-err));
			s->period_failed++;
		} else {
			text = amend(s, p, text, &len, extended);
			ig_session_days_path(path, sizeof(path), out->json_path, "period", p->n);
			s->period_failed += ig_session_write_file(json_stdout ? "-" : path,
								  json_stdout ? "the period's JSON report" : path,
								  text, len);
			free(text);
		}
	}
	if (p->tlb) {
		ig_timeline_estimates(p->tlb, p->engine);
		err = ig_timeline_close(p->tlb, &st);
		p->tlb = NULL;
		if (err) {
			ig_warn("period %llu: cannot write its timeline: %s", p->n, strerror(-err));
			s->period_failed++;
		}
	}
	ig_engine_free(p->engine);
	memset(p, 0, sizeof(*p));
}

/* The held period ends at @ts (its gap ended, or it waited a period). */
static void finish_held(struct session *s, __u64 ts)
{
	struct ig_end end = {
		.h = { .type = IG_REC_END, .size = sizeof(end) },
		.reason = IG_STOP_DURATION,
	};
	struct ig_period *h = &s->held;
	__u64 last;

	end.h.ts = ts < h->until ? ts : h->until;
	ig_engine_feed(h->engine, &end.h);
	last = !ig_engine_held_open(h->engine) ? ig_engine_held_ended(h->engine) : 0;
	if (!last || last > end.h.ts)
		last = end.h.ts;
	report_period(s, h, last > h->end ? last - h->end : 0);
}

/* The period ends at the first bound: counted to there, a gap open then
 * held until it ends and carried into the next one. */
static void period_switch(struct session *s)
{
	struct ig_period_end b = s->bounds[0];
	struct ig_end end = {
		.h = { .type = IG_REC_END, .size = sizeof(end), .ts = b.at },
		.reason = IG_STOP_DURATION,
	};
	struct ig_period *p = &s->cur;

	memmove(&s->bounds[0], &s->bounds[1], (s->nbounds - 1) * sizeof(s->bounds[0]));
	s->nbounds--;
	if (p->engine) {
		b.st.h.ts = b.at;
		ig_engine_feed(p->engine, &b.st.h);
		end.nrecords = 0;
		ig_engine_feed(p->engine, &end.h);
		/* one period held at most */
		if (s->held.engine)
			finish_held(s, b.at);
		ig_engine_hold(p->engine, b.at, true);
		s->ncarry = ig_engine_open_gaps(p->engine, s->carry, IG_SESSION_CARRY);
		p->end = b.at;
		if (ig_engine_held_open(p->engine)) {
			s->held = *p;
			s->held.until = b.at + every_ns(s);
			memset(p, 0, sizeof(*p));
		} else {
			report_period(s, p, 0);
		}
	}
	if (open_period(s, b.at, &b))
		s->oom = true;
	free(b.recs);
}

void ig_session_days_feed(const struct ig_hdr *rec, void *ctx)
{
	struct session *s = ctx;

	if (s->in_child) {
		ig_engine_feed(s->engine, rec);
		return;
	}
	if (s->tlb)
		ig_timeline_record(s->tlb, rec);
	ig_engine_feed(s->engine, rec);
	if (!s->o->every_s)
		return;
	while (s->nbounds && rec->ts >= s->bounds[0].at)
		period_switch(s);
	/* a period's counters are its own (period_switch, days_end) */
	if (rec->type == IG_REC_STATS)
		return;
	if (s->held.engine) {
		ig_engine_feed(s->held.engine, rec);
		if (!ig_engine_held_open(s->held.engine) || rec->ts >= s->held.until)
			finish_held(s, rec->ts);
	}
	if (s->cur.engine) {
		if (s->cur.tlb)
			ig_timeline_record(s->cur.tlb, rec);
		ig_engine_feed(s->cur.engine, rec);
	}
}

/* The kernel's counters since @base, which moves to now. */
static void stats_since(struct session *s, struct ig_stats *st, struct ig_stats *base)
{
	struct ig_stats now = { .h = { .type = IG_REC_STATS, .size = sizeof(now) } };
	size_t i;

	memset(st, 0, sizeof(*st));
	st->h = now.h;
	if (ig_tracer_stats(s->cap.tracer, &now))
		return;
	for (i = 0; i < IG_STAT__MAX; i++)
		st->stat[i] = now.stat[i] - base->stat[i];
	for (i = 0; i < IG_API__MAX; i++)
		st->api_hits[i] = now.api_hits[i] - base->api_hits[i];
	*base = now;
}

static void period_bound(struct session *s, __u64 now)
{
	struct ig_period_end *b;

	if (s->nbounds == IG_SESSION_BOUNDS)
		return;		/* the reorder stage is that far behind */
	b = &s->bounds[s->nbounds++];
	memset(b, 0, sizeof(*b));
	b->at = now;
	stats_since(s, &b->st, &s->period_base);
	restate(s, now, IG_ROUTE_BOUND);
}

int ig_session_days_end(struct session *s, const struct ig_stats *st)
{
	struct ig_stats d = *st;
	size_t i;

	/* a report of the run so far under way comes out before the run's */
	ig_session_usr1_wait(s);
	if (!s->o->every_s)
		return 0;
	while (s->nbounds)	/* past the last record: nothing after them */
		free(s->bounds[--s->nbounds].recs);
	if (s->held.engine)
		finish_held(s, s->held.until);
	if (s->cur.engine) {
		for (i = 0; i < IG_STAT__MAX; i++)
			d.stat[i] -= s->period_base.stat[i];
		for (i = 0; i < IG_API__MAX; i++)
			d.api_hits[i] -= s->period_base.api_hits[i];
		/* fed after the END: an engine takes STATS at any time */
		ig_engine_feed(s->cur.engine, &d.h);
		s->cur.end = st->h.ts;
		report_period(s, &s->cur, 0);
	}
	if (s->period_failed)
		ig_err("%u period report%s could not be written (see above)", s->period_failed,
		       s->period_failed == 1 ? "" : "s");
	return s->period_failed ? 1 : 0;
}

/* ---- pieces ------------------------------------------------------------ */

/* The piece ends here: its counters and END, then the next one's start. */
static void next_piece(struct session *s, __u64 now)
{
	struct ig_stats st = { .h = { .type = IG_REC_STATS, .size = sizeof(st), .ts = now } };
	struct ig_end end = {
		.h = { .type = IG_REC_END, .size = sizeof(end), .ts = now },
		.reason = IG_STOP_PIECE,
		.nrecords = s->nrecords,
	};
	const struct ig_hdr *tail[] = { &st.h, &end.h };
	struct ig_meta m;
	int err;

	if (ig_tracer_stats(s->cap.tracer, &st))
		memset(st.stat, 0, sizeof(st.stat));
	st.user_lost = ig_reorder_late(s->reorder);
	err = ig_rec_writer_next(s->writer, tail, 2);
	if (!err) {
		meta_at(s, now, &m);
		ig_rec_writer_put(s->writer, &m.h);
		restate(s, now, IG_ROUTE_FILE);
		err = ig_rec_writer_started(s->writer);
	}
	if (err && !s->write_err)
		s->write_err = err;
	ig_debug("recording: now %s", ig_rec_writer_path(s->writer));
}

static void say_lost(struct session *s)
{
	char path[4096];
	unsigned int total;
	int err;

	while (ig_rec_writer_lost(s->writer, path, sizeof(path), &err, &total)) {
		s->pieces_lost = total;
		ig_warn("recording piece %s lost: %s; the run goes on, and the recording with the next piece",
			path, ig_outfile_strerror(-err));
	}
}

void ig_session_days_last_piece(struct session *s, __u64 now)
{
	if (!s->writer || !ig_rec_writer_path(s->writer))
		return;
	/* the end of the stream, in pieces of their size too */
	if (!s->write_err)
		s->write_err = ig_rec_writer_flush(s->writer);
	while (ig_rec_writer_due(s->writer) && !s->write_err) {
		next_piece(s, now);
		say_lost(s);
	}
	say_lost(s);
}

void ig_session_days_tick(struct session *s, __u64 now)
{
	if (now >= s->next_trim) {
		s->next_trim = now + IG_SESSION_TRIM_NS;
		malloc_trim(0);
	}
	if (s->writer && ig_rec_writer_path(s->writer)) {
		say_lost(s);
		while (ig_rec_writer_due(s->writer) && !s->write_err) {
			next_piece(s, now);
			say_lost(s);
		}
	}
	if (s->o->every_s && now >= s->next_period) {
		period_bound(s, now);
		s->next_period += every_ns(s);
		if (s->next_period <= now)
			s->next_period = now + every_ns(s);
	}
	ig_session_usr1_tick(s);
}

void ig_session_days_free(struct session *s)
{
	ig_session_usr1_wait(s);
	while (s->nbounds)
		free(s->bounds[--s->nbounds].recs);
	ig_timeline_abandon(s->cur.tlb);
	ig_timeline_abandon(s->held.tlb);
	ig_engine_free(s->cur.engine);
	ig_engine_free(s->held.engine);
	memset(&s->cur, 0, sizeof(s->cur));
	memset(&s->held, 0, sizeof(s->held));
	ig_facts_free(&s->facts);
}
