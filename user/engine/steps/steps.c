// SPDX-License-Identifier: GPL-2.0
/*
 * Steps, the intake's and the observer's side (docs/design.md §4.11): a
 * device's timeline is cut into segments at every candidate boundary (a
 * sync's return, a collective's entry, by the process that first gave
 * the device one); each launch adds its signature to the segment it was
 * made in, and each final stretch of time is charged to the segments it
 * overlaps.  What a step is, is decided at the report (steps_find.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "engine/model.h"
#include "engine/steps/steps_int.h"

int ig_steps_new(struct ig_engine *e, int marker_api)
{
	struct ig_steps *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->marker_api = marker_api;
	e->steps = s;
	return 0;
}

void ig_steps_free(struct ig_engine *e)
{
	struct ig_steps *s = e->steps;
	uint32_t i;

	if (!s)
		return;
	for (i = 0; i < s->ndevs; i++) {
		free(s->devs[i].segs.v);
		ig_steps_agg_free(&s->devs[i].agg);
	}
	free(s->devs);
	free(s);
	e->steps = NULL;
}

size_t ig_steps_bytes(const struct ig_engine *e)
{
	const struct ig_steps *s = e->steps;
	size_t b = 0;
	uint32_t i;

	if (!s)
		return 0;
	b = sizeof(*s) + s->cap * sizeof(*s->devs);
	for (i = 0; i < s->ndevs; i++)
		b += (size_t)s->devs[i].segs.cap * sizeof(struct st_seg) +
		     ig_hist_bytes(&s->devs[i].agg.wall) +
		     (ST_LIST_KEEP + ST_SLOW_KEEP) * sizeof(struct ig_step) *
		     (s->devs[i].agg.list != NULL);
	return b;
}

const struct st_dev *ig_steps_dev(const struct ig_steps *s, int dev,
				  uint32_t tgid)
{
	uint32_t i;

	if (s && s->last < s->ndevs && s->devs[s->last].dev == dev &&
	    s->devs[s->last].tgid == tgid)
		return &s->devs[s->last];
	for (i = 0; s && i < s->ndevs; i++)
		if (s->devs[i].dev == dev && s->devs[i].tgid == tgid)
			return &s->devs[i];
	return NULL;
}

static struct st_seg *seg_open(struct st_dev *d)
{
	struct st_seg *g = ig_vec_push(&d->segs);

	if (g) {
		memset(g, 0, sizeof(*g));
		g->t_end = ST_OPEN;
		g->late_cause = -1;
		g->late_rank = -1;
	}
	return g;
}

/* Process @tgid's steps on device @dev, new when it has none. */
static struct st_dev *dev_get(struct ig_steps *s, int dev, uint32_t tgid)
{
	struct st_dev *d = (struct st_dev *)ig_steps_dev(s, dev, tgid);

	if (d) {
		s->last = (uint32_t)(d - s->devs);
		return d;
	}
	if (s->ndevs == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 4;
		struct st_dev *v = realloc(s->devs, cap * sizeof(*v));

		if (!v)
			return NULL;
		s->devs = v;
		s->cap = cap;
	}
	d = &s->devs[s->ndevs];
	memset(d, 0, sizeof(*d));
	d->dev = dev;
	d->tgid = tgid;
	d->segs.esz = sizeof(struct st_seg);
	if (!seg_open(d))
		return NULL;
	s->ndevs++;
	return d;
}

static struct st_seg *seg(struct st_dev *d, uint32_t i)
{
	return (struct st_seg *)d->segs.v + i;
}

/* The open segment ends at @t with a boundary candidate. */
static void cut(struct ig_engine *e, int dev, uint32_t tgid, uint64_t t,
		enum ig_step_kind kind, unsigned int api, uint64_t extra)
{
	struct st_dev *d = e->steps ? dev_get(e->steps, dev, tgid) : NULL;
	struct st_seg *g;

	if (!d)
		return;
	g = seg(d, d->segs.n - 1);
	if (t <= st_seg_start(d, d->segs.n - 1))
		return;		/* out of order: not a boundary */
	if (d->segs.n >= ST_LIVE_MAX && d->segs.n >= d->fold_at) {
		ig_steps_fold(e->steps, d);
		g = seg(d, d->segs.n - 1);
	}
	if (d->segs.n >= IG_STEPS_MAX_SEGS) {
		d->dropped++;
		return;
	}
	g->t_end = t;
	g->kind = (uint8_t)kind;
	g->api = (uint16_t)api;
	/* a collective's size is part of what it is */
	g->sig += extra * 0x9e3779b97f4a7c15ULL;
	seg_open(d);
}

void ig_steps_sync(struct ig_engine *e, int dev, uint32_t tgid, uint64_t t,
		   unsigned int api)
{
	if (e->steps && e->steps->marker_api >= 0 &&
	    api != (unsigned int)e->steps->marker_api)
		return;
	cut(e, dev, tgid, t, IG_SK_SYNC, api, 0);
}

void ig_steps_coll(struct ig_engine *e, int dev, uint32_t tgid, uint64_t t,
		   unsigned int api, uint64_t count)
{
	if (e->steps && e->steps->marker_api >= 0)
		return;
	cut(e, dev, tgid, t, IG_SK_COLL, api, count + 1);
}

/* The segment @t lies in, looked for from the newest back. */
static struct st_seg *seg_of(struct st_dev *d, uint64_t t)
{
	uint32_t i = d->segs.n;

	while (i-- > 0)
		if (st_seg_start(d, i) <= t)
			return t < seg(d, i)->t_end ? seg(d, i) : NULL;
	return NULL;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

void ig_steps_launches(struct ig_engine *e, int dev, uint32_t tgid,
		       const struct ig_launches *l)
{
	struct st_dev *d = e->steps ? dev_get(e->steps, dev, tgid) : NULL;
	uint32_t i, n = l->n < IG_LBUF ? l->n : IG_LBUF;

	if (!d)
		return;
	for (i = 0; i < n; i++) {
		struct st_seg *g = seg_of(d, l->e[i].ts);

		if (!g)
			continue;
		g->sig += mix64(l->e[i].func * 31 + l->e[i].grid);
		g->nlaunch++;
	}
}

/* Each segment [t0, t1) overlaps, of each process's steps on device
 * @dev (the device's time is theirs alike): @fn with the part's share. */
static void charge(struct ig_engine *e, int dev, uint64_t t0, uint64_t t1,
		   void (*fn)(struct st_seg *g, uint64_t part, uint64_t len,
			      const void *arg),
		   const void *arg)
{
	struct ig_steps *s = e->steps;
	uint32_t k, i;

	for (k = 0; s && t1 > t0 && k < s->ndevs; k++) {
		struct st_dev *d = &s->devs[k];

		if (d->dev != dev)
			continue;
		if (!d->t_first || t0 < d->t_first)
			d->t_first = t0;
		if (t1 > d->t_last)
			d->t_last = t1;
		i = d->cur < d->segs.n ? d->cur : d->segs.n - 1;
		while (i > 0 && st_seg_start(d, i) > t0)
			i--;
		while (i + 1 < d->segs.n && seg(d, i)->t_end <= t0)
			i++;
		for (; i < d->segs.n && st_seg_start(d, i) < t1; i++) {
			uint64_t a = st_seg_start(d, i) > t0 ? st_seg_start(d, i) : t0;
			uint64_t b = seg(d, i)->t_end < t1 ? seg(d, i)->t_end : t1;

			if (b > a)
				fn(seg(d, i), b - a, t1 - t0, arg);
			d->cur = i;
		}
	}
}

static void add_state(struct st_seg *g, uint64_t part, uint64_t len,
		      const void *arg)
{
	(void)len;
	g->ns[*(const enum ig_step_state *)arg] += part;
}

void ig_steps_span(struct ig_engine *e, int dev, enum ig_step_state state,
		   uint64_t t0, uint64_t t1)
{
	charge(e, dev, t0, t1, add_state, &state);
}

/* A gap's causes are not known instant by instant: a part of the gap
 * gets each cause's share of it.  The parts are the gap's ends, a sync's
 * return inside it: the drained point lies a wakeup before it. */
static void add_idle(struct st_seg *g, uint64_t part, uint64_t len,
		     const void *arg)
{
	const uint64_t *cause_ns = arg;
	unsigned int c;

	g->ns[IG_SS_IDLE] += part;
	for (c = 0; c < IG_C__MAX; c++)
		if (cause_ns[c])
			g->cause_ns[c] += part == len ? cause_ns[c] :
				(uint64_t)((double)cause_ns[c] * part / len);
}

void ig_steps_idle(struct ig_engine *e, int dev, uint64_t t0, uint64_t t1,
		   const uint64_t *cause_ns)
{
	charge(e, dev, t0, t1, add_idle, cause_ns);
}

struct peer_arg {
	int late_rank, late_cause;
};

static void add_peer(struct st_seg *g, uint64_t part, uint64_t len,
		     const void *arg)
{
	const struct peer_arg *p = arg;

	(void)len;
	g->ns[IG_SS_PEER] += part;
	if (part > g->late_ns) {
		g->late_ns = part;
		g->late_rank = p->late_rank;
		g->late_cause = (int8_t)p->late_cause;
	}
}

void ig_steps_peer(struct ig_engine *e, int dev, uint64_t t0, uint64_t t1,
		   int late_rank, int late_cause)
{
	struct peer_arg p = { late_rank, late_cause };

	charge(e, dev, t0, t1, add_peer, &p);
}
