// SPDX-License-Identifier: GPL-2.0
/*
 * Recordings of several hosts in one analysis (docs/design.md §4.9, §7.4).
 *
 * Each recording is read whole and put in time order first, so a corrupt
 * or truncated one fails the report before anything is printed.  Its
 * collectives' ends are found by an analysis of it alone; the same
 * (communicator, sequence) ends on every rank within the network's
 * latency, so the median difference of matched ends against the first
 * recording is the recording's clock offset, and their spread the error
 * assumed.  Then every recording's records go to one engine: timestamps
 * shifted by the offset, pids and threads (i << 24 | pid), CPUs (after
 * the earlier recordings' CPUs), GPUs (i * 100 + n) and file keys made
 * its own (each record's such fields are listed in bpf/record_fields.def,
 * user/stream/remap.c moves them), one META, one STATS and one END for
 * them all.
 */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "engine/merge.h"
#include "engine/model.h"
#include "modes/feed.h"
#include "modes/report_merge.h"
#include "modes/session_int.h"
#include "probes/log.h"
#include "stream/recording.h"
#include "stream/remap.h"
#include "util/util.h"

#define MIN_ENDS		3	/* matched ends to align on */
#define MAX_DRIFT		1e-3	/* clocks drifting more apart: not believed */

/* One recording, its records in time order. */
struct rec {
	const char *path;
	char *buf;
	size_t len, cap;
	struct ig_meta meta;
	bool have_meta, complete;
	struct ig_stats stats;
	bool have_stats;
	unsigned long late;	/* too late for its replay's reorder stage */
	struct ig_end end;
	int64_t off;		/* added to its times at its start (META) */
	double drift;		/* and this much more per ns of its clock */
	uint32_t cpu_base;
	size_t pos;		/* the merge's cursor */
	bool oom;
};

static void keep(const struct ig_hdr *h, void *ctx)
{
	struct rec *r = ctx;

	if (r->oom)
		return;
	if (r->cap < r->len + h->size) {
		size_t cap = r->cap ? r->cap * 2 : 1 << 20;
		char *p = realloc(r->buf, cap);

		if (!p) {
			r->oom = true;
			return;
		}
		r->buf = p;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, h, h->size);
	r->len += h->size;
	if (h->type == IG_REC_META && !r->have_meta) {
		memcpy(&r->meta, h, ig_min64(h->size, sizeof(r->meta)));
		r->have_meta = true;
	} else if (h->type == IG_REC_STATS) {
		memset(&r->stats, 0, sizeof(r->stats));
		memcpy(&r->stats, h, ig_min64(h->size, sizeof(r->stats)));
		r->have_stats = true;
	} else if (h->type == IG_REC_END) {
		memcpy(&r->end, h, ig_min64(h->size, sizeof(r->end)));
	}
}

static int push(const struct ig_hdr *h, void *ctx)
{
	return ig_reorder_push(ctx, h);
}

/* 0, or 1 after its line. */
static int load(struct rec *r, bool partial)
{
	struct ig_reorder *ro = ig_feed_new(false, keep, r);
	struct ig_read_result res;
	int err;

	if (!ro) {
		ig_err("out of memory");
		return 1;
	}
	err = ig_recording_read(r->path, partial, push, ro, &res);
	if (!err)
		ig_reorder_flush(ro);
	r->late = ig_reorder_late(ro);
	ig_reorder_free(ro);
	if (err) {
		ig_err("%s%s", res.error, partial || !res.records ? "" :
		       err == -EBADMSG ? "; --partial leaves the corrupt part out" :
		       "; --partial analyses what is there");
		return 1;
	}
	if (r->oom) {
		ig_err("%s: out of memory", r->path);
		return 1;
	}
	if (!r->have_meta) {
		ig_err("%s: no run metadata record", r->path);
		return 1;
	}
	if (res.skipped_blocks)
		ig_warn("%s: left out %zu corrupt block%s (%zu bytes)", r->path,
			res.skipped_blocks, res.skipped_blocks == 1 ? "" : "s",
			res.skipped_bytes);
	r->complete = res.complete;
	if (!res.complete)
		ig_warn("%s; analysing the %zu records before it", res.error, res.records);
	return 0;
}

static const struct ig_hdr *at(const struct rec *r, size_t pos)
{
	return pos < r->len ? (const struct ig_hdr *)(r->buf + pos) : NULL;
}

/* The recording's collective ends, by an analysis of it alone. */
static int ends_of(struct rec *r, const struct ig_output_opts *out,
		   struct ig_collend **ends, size_t *n)
{
	struct ig_engine *e = ig_engine_new(&out->engine);
	struct ig_collends *c = ig_merge_collends_new();
	const struct ig_collend *v;
	const struct ig_hdr *h;
	size_t pos;

	if (!e || !c) {
		ig_engine_free(e);
		ig_merge_collends_free(c);
		ig_err("out of memory");
		return 1;
	}
	for (pos = 0; (h = at(r, pos)); pos += h->size) {
		ig_engine_feed(e, h);
		ig_merge_collends_after(c, e, h);
	}
	*n = ig_merge_collends_get(c, &v);
	*ends = malloc((*n ? *n : 1) * sizeof(**ends));
	if (*ends)
		memcpy(*ends, v, *n * sizeof(**ends));
	ig_merge_collends_free(c);
	ig_engine_free(e);
	if (!*ends) {
		ig_err("out of memory");
		return 1;
	}
	return 0;
}

/* Offset of @b's clock against @a's from their matched ends.  Clocks may
 * drift apart over a long recording: the drift is the median of the
 * slopes between ends half the matched ones apart (robust to outliers),
 * believed up to MAX_DRIFT and where it narrows the spread; the offset
 * at @b's start @t0 is then the median of the differences less the
 * drift, and the error the larger distance from it to their 10th and
 * 90th percentiles.  Returns how many
 * matched; fewer than MIN_ENDS tell no spread, nothing to state an error
 * from. */
struct pair {
	int64_t t;		/* b's end less @t0, on b's clock */
	int64_t d;		/* a's end less b's */
	double r;		/* d less the drift */
};

static int by_t(const void *x, const void *y)
{
	const struct pair *p = x, *q = y;

	return (p->t > q->t) - (p->t < q->t);
}

static int by_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static int by_r(const void *x, const void *y)
{
	return by_dbl(&((const struct pair *)x)->r, &((const struct pair *)y)->r);
}

/* The offset at the start with @drift: the median of what is left of the
 * differences, the error the larger distance to their 10th and 90th
 * percentiles. */
static void spread(struct pair *v, size_t n, double drift, int64_t *off, uint64_t *err)
{
	double med;
	size_t k;

	for (k = 0; k < n; k++)
		v[k].r = (double)v[k].d - drift * (double)v[k].t;
	qsort(v, n, sizeof(*v), by_r);
	med = v[n / 2].r;
	*off = (int64_t)med;
	*err = (uint64_t)fmax(med - v[n / 10].r, v[n - 1 - n / 10].r - med);
}

static size_t align(const struct ig_collend *a, size_t na, const struct ig_collend *b,
		    size_t nb, uint64_t t0, int64_t *off, double *drift, uint64_t *err)
{
	struct pair *v = malloc((ig_min64(na, nb) + 1) * sizeof(*v));
	double *s = NULL;
	size_t i = 0, j = 0, n = 0, h, k, ns = 0;

	if (!v)
		return 0;
	while (i < na && j < nb) {
		if (a[i].id == b[j].id && a[i].seq == b[j].seq) {
			v[n].t = (int64_t)(b[j].end - t0);
			v[n++].d = (int64_t)(a[i].end - b[j].end);
			i++, j++;
		} else if (a[i].id < b[j].id || (a[i].id == b[j].id && a[i].seq < b[j].seq)) {
			i++;
		} else {
			j++;
		}
	}
	*drift = 0;
	h = n / 2;
	if (n >= MIN_ENDS) {
		qsort(v, n, sizeof(*v), by_t);
		s = malloc((h + 1) * sizeof(*s));
	}
	for (k = 0; s && k < h; k++)
		if (v[k + h].t > v[k].t)
			s[ns++] = (double)(v[k + h].d - v[k].d) / (double)(v[k + h].t - v[k].t);
	if (ns) {
		qsort(s, ns, sizeof(*s), by_dbl);
		if (s[ns / 2] <= MAX_DRIFT && s[ns / 2] >= -MAX_DRIFT)
			*drift = s[ns / 2];
	}
	free(s);
	if (n) {
		spread(v, n, *drift, off, err);
		/* a drift that does not narrow the spread by a quarter is the
		 * ends' noise over a short recording: not believed */
		if (*drift) {
			int64_t off0;
			uint64_t err0;

			spread(v, n, 0, &off0, &err0);
			if (4 * *err >= 3 * err0) {
				*drift = 0;
				*off = off0;
				*err = err0;
			}
		}
	}
	free(v);
	return n;
}

static const struct ig_clock_offset *given(const struct rec *r,
					   const struct ig_clock_offset *offs, int noffs)
{
	int k;

	for (k = 0; k < noffs; k++)
		if (!strcmp(offs[k].name, r->path) || !strcmp(offs[k].name, r->meta.host))
			return &offs[k];
	return NULL;
}

/* Each --clock-offset names a recording other than the first (the
 * reference): 0, or 2 (bad usage) after its line. */
static int offsets_named(const struct rec *rv, int n, const struct ig_clock_offset *offs,
			 int noffs)
{
	int i, k;

	for (k = 0; k < noffs; k++) {
		for (i = 1; i < n; i++)
			if (given(&rv[i], &offs[k], 1))
				break;
		if (i < n)
			continue;
		if (given(&rv[0], &offs[k], 1))
			ig_err("--clock-offset %s: the first recording is the reference clock; "
			       "give the others' offsets against it", offs[k].name);
		else
			ig_err("--clock-offset %s: no recording of that file or host", offs[k].name);
		return 2;
	}
	return 0;
}

static int clocks(struct rec *rv, int n, const struct ig_clock_offset *offs, int noffs,
		  const struct ig_output_opts *out, struct ig_merge *m)
{
	struct ig_collend *e0 = NULL, *ei;
	size_t n0 = 0, ni;
	int i, rc = 0;

	for (i = 0; i < n && !rc; i++) {
		const struct ig_clock_offset *g = i ? given(&rv[i], offs, noffs) : NULL;
		struct ig_merge_host *h = &m->h[i];

		ig_strcpy(h->host, sizeof(h->host), rv[i].meta.host);
		if (g) {
			h->given = true;
			h->offset_ns = (int64_t)(g->seconds * 1e9);
		} else if (!i) {
			rc = ends_of(&rv[0], out, &e0, &n0);
		} else if (!(rc = ends_of(&rv[i], out, &ei, &ni))) {
			h->collectives = align(e0, n0, ei, ni, rv[i].meta.h.ts, &h->offset_ns,
					       &h->drift, &h->error_ns);
			free(ei);
			if (h->collectives < MIN_ENDS) {
				ig_err("cannot align the clock of %s (%s) on %s's: %s collective "
				       "ends in both (give --clock-offset %s=SECONDS)",
				       rv[i].path, rv[i].meta.host, rv[0].path,
				       h->collectives ? "fewer than 3" : "no", rv[i].path);
				rc = 1;
			}
		}
		rv[i].off = h->offset_ns;
		rv[i].drift = h->drift;
	}
	free(e0);
	return rc;
}

/* @ts of recording @r on the first recording's clock. */
static uint64_t shift(uint64_t ts, const struct rec *r)
{
	int64_t off;

	if (!ts || ts == UINT64_MAX)
		return ts;
	off = r->off + (int64_t)(r->drift * (double)(int64_t)(ts - r->meta.h.ts));
	return off < 0 && (uint64_t)-off >= ts ? 1 : ts + (uint64_t)off;
}

struct remap_ctx {
	uint32_t i;		/* the recording's place */
	const struct rec *r;
};

/* A value in the @i-th recording's records as the merged analysis sees it
 * (which fields hold one: bpf/record_fields.def). */
static uint64_t remap(void *ctx, enum ig_field_kind kind, uint64_t v)
{
	const struct remap_ctx *c = ctx;

	switch (kind) {
	case IG_FK_TIME:
		return shift(v, c->r);
	case IG_FK_PID:
		return ig_merge_pid(c->i, (uint32_t)v);
	case IG_FK_CPU:
		return v + c->r->cpu_base;
	case IG_FK_FILE_KEY:
		return v ^ (uint64_t)c->i << 56;
	case IG_FK_DEVICE:
		return v + c->i * IG_MERGE_DEV_STRIDE;
	case IG_FK_NONE:
		break;
	}
	return v;
}

static void feed(struct session *s, const struct ig_hdr *h)
{
	ig_reorder_push(s->reorder, h);
}

/* META, STATS and END of them all. */
static void synth_meta(struct session *s, struct rec *rv, int n, uint64_t ts)
{
	struct ig_meta m = rv[0].meta;
	size_t k = 0;
	int i;

	m.h.size = sizeof(m);
	m.h.ts = ts;
	m.ncpus = 0;
	for (i = 0; i < n; i++) {
		m.ncpus += rv[i].meta.ncpus;
		k += (size_t)snprintf(m.host + ig_min64(k, sizeof(m.host) - 1),
				      sizeof(m.host) - ig_min64(k, sizeof(m.host) - 1),
				      "%s%s", i ? "," : "", rv[i].meta.host);
	}
	feed(s, &m.h);
}

static void synth_tail(struct session *s, struct rec *rv, int n, uint64_t ts)
{
	struct ig_stats st = {};
	struct ig_end x = rv[0].end;
	bool stats = false, complete = true;
	int i, k;

	for (i = 0; i < n; i++) {
		complete &= rv[i].complete;
		st.user_lost += rv[i].late;
		stats |= rv[i].late > 0;
		if (!rv[i].have_stats)
			continue;
		stats = true;
		for (k = 0; k < IG_STAT__MAX; k++)
			st.stat[k] += rv[i].stats.stat[k];
		for (k = 0; k < IG_API__MAX; k++)
			st.api_hits[k] += rv[i].stats.api_hits[k];
		st.user_lost += rv[i].stats.user_lost;
		if (rv[i].complete)
			ts = ig_max64(ts, shift(rv[i].end.h.ts, &rv[i]));
	}
	if (stats) {
		st.h = (struct ig_hdr){ .type = IG_REC_STATS, .size = sizeof(st), .ts = ts };
		feed(s, &st.h);
	}
	if (complete) {
		x.h.ts = ts;
		x.h.tid = x.h.tgid = 0;
		for (i = 1; i < n; i++)
			x.nrecords += rv[i].end.nrecords;
		feed(s, &x.h);
	}
}

static void merge_feed(struct session *s, struct rec *rv, int n)
{
	static union { struct ig_hdr h; char b[1 << 16]; } tmp;
	uint64_t meta_ts = UINT64_MAX, last = 0;
	bool meta_sent = false;
	int i;

	for (i = 0; i < n; i++)
		meta_ts = ig_min64(meta_ts, shift(rv[i].meta.h.ts, &rv[i]));
	for (;;) {
		const struct ig_hdr *h;
		uint64_t best = UINT64_MAX;
		int b = -1;

		for (i = 0; i < n; i++) {
			h = at(&rv[i], rv[i].pos);
			if (h && shift(h->ts, &rv[i]) < best) {
				best = shift(h->ts, &rv[i]);
				b = i;
			}
		}
		if (b < 0)
			break;
		h = at(&rv[b], rv[b].pos);
		rv[b].pos += h->size;
		if (h->type == IG_REC_META || h->type == IG_REC_STATS || h->type == IG_REC_END)
			continue;
		if (!meta_sent && best >= meta_ts) {
			synth_meta(s, rv, n, meta_ts);
			meta_sent = true;
		}
		memcpy(tmp.b, h, h->size);
		ig_remap_record(&tmp.h, remap, &(struct remap_ctx){ (uint32_t)b, &rv[b] });
		feed(s, &tmp.h);
		last = ig_max64(last, tmp.h.ts);
	}
	if (!meta_sent)
		synth_meta(s, rv, n, meta_ts);
	synth_tail(s, rv, n, last);
}

static bool same_run(const struct rec *a, const struct rec *b)
{
	return a->meta.h.ts == b->meta.h.ts && a->meta.realtime_ns == b->meta.realtime_ns &&
	       !strcmp(a->meta.host, b->meta.host);
}

int ig_merge_report(const char *const *paths, int npaths, bool partial,
		    const struct ig_clock_offset *offs, int noffs,
		    const struct ig_output_opts *out)
{
	struct session s = {};
	struct ig_merge *m = calloc(1, sizeof(*m));
	struct rec *rv = calloc(npaths, sizeof(*rv));
	uint32_t cpus = 0;
	int i, j, rc = 1;

	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	if (!m || !rv) {
		ig_err("out of memory");
		goto out;
	}
	for (i = 0; i < npaths; i++) {
		rv[i].path = paths[i];
		if (load(&rv[i], partial))
			goto out;
		for (j = 0; j < i; j++)
			if (same_run(&rv[i], &rv[j])) {
				ig_err("%s and %s hold the same run: merge recordings of "
				       "different hosts", paths[j], paths[i]);
				goto out;
			}
		rv[i].cpu_base = cpus;
		cpus += rv[i].meta.ncpus;
	}
	m->n = npaths;
	if ((rc = offsets_named(rv, npaths, offs, noffs)) ||
	    (rc = 1, clocks(rv, npaths, offs, noffs, out, m)))
		goto out;
	if (ig_session_setup_outputs(&s, out, NULL))
		goto out;
	if (ig_engine_set_merge(s.engine, m)) {
		ig_err("out of memory");
		goto out;
	}
	merge_feed(&s, rv, npaths);
	ig_reorder_flush(s.reorder);
	ig_engine_finish(s.engine);
	rc = ig_session_write_reports(&s, out);
out:
	ig_session_teardown(&s);
	for (i = 0; rv && i < npaths; i++)
		free(rv[i].buf);
	free(rv);
	free(m);
	return rc;
}
