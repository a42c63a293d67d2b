// SPDX-License-Identifier: GPL-2.0
/*
 * The engine's observer (engine_obs.h): each final stretch of a device's
 * timeline as the sweep settles it, and for each idle gap the causes and
 * the thread intervals its attribution walked, noted during the walk
 * (attrib.c) only while an observer is set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/model.h"
#include "engine/steps/steps.h"

/* Gaps go to attribution through here while an observer is set: the walk
 * is noted, then the gap with it goes to the observer. */
static void obs_idle_gap(void *ctx, const struct ig_gap *g)
{
	struct ig_engine *e = ctx;
	struct ig_obs_walk *w = e->obs_walk;

	/* the stretches walked only for a view: the steps need the causes */
	memset(w->ns, 0, sizeof(w->ns));
	w->n = 0;
	w->dropped = 0;
	w->stretches = e->obs_view.span != NULL;
	e->obs_sink.idle_gap(e->obs_sink.ctx, g);
	ig_observe_gap(e, g);
}

static void obs_unresolved(void *ctx, const struct ig_piece *p)
{
	struct ig_engine *e = ctx;

	e->obs_sink.unresolved(e->obs_sink.ctx, p);
}

static int cause_index(const char *name)
{
	unsigned int c;

	for (c = 0; name && c < IG_C__MAX; c++)
		if (!strcmp(ig_names_cause(c), name))
			return (int)c;
	return -1;
}

/* What the engine observes goes to the steps (idle gaps are handed to
 * them whole, with every cause, in ig_observe_gap()), then to the view. */
static void obs_span(void *ctx, const struct ig_obs_span *s)
{
	struct ig_engine *e = ctx;

	if (e->steps) {
		switch (s->kind) {
		case IG_OBS_BUSY:
			ig_steps_span(e, s->device, IG_SS_BUSY, s->t0, s->t1);
			break;
		case IG_OBS_UNRES:
			ig_steps_span(e, s->device, IG_SS_UNRES, s->t0, s->t1);
			break;
		case IG_OBS_COLLECTIVE:
			if (s->wait_until > s->t0)
				ig_steps_peer(e, s->device, s->t0, s->wait_until,
					      s->late_rank, s->ncauses ?
					      cause_index(s->causes[0].name) : -1);
			break;
		default:
			break;
		}
	}
	if (e->obs_view.span)
		e->obs_view.span(e->obs_view.ctx, s);
}

static void obs_estimate(void *ctx, const struct ig_obs_estimate *x)
{
	struct ig_engine *e = ctx;

	if (e->obs_view.estimate)
		e->obs_view.estimate(e->obs_view.ctx, x);
}

/* The engine observes while the steps or a view want it. */
static void obs_set(struct ig_engine *e)
{
	bool on = e->steps || e->obs_view.span;

	if (on && !e->obs_walk)
		e->obs_walk = calloc(1, sizeof(*e->obs_walk));
	if (on && e->obs_walk) {
		if (!e->obs.span) {
			e->obs_sink = e->gpu.sink;
			e->gpu.sink.idle_gap = obs_idle_gap;
			e->gpu.sink.unresolved = obs_unresolved;
			e->gpu.sink.ctx = e;
		}
		e->obs.span = obs_span;
		e->obs.estimate = e->obs_view.estimate ? obs_estimate : NULL;
		e->obs.ctx = e;
		return;
	}
	if (e->obs.span)
		e->gpu.sink = e->obs_sink;
	memset(&e->obs, 0, sizeof(e->obs));
}

void ig_engine_observe(struct ig_engine *e, const struct ig_engine_obs *o)
{
	if (o && o->span)
		e->obs_view = *o;
	else
		memset(&e->obs_view, 0, sizeof(e->obs_view));
	obs_set(e);
}

/* The steps observe from the engine's creation. */
int ig_observe_steps(struct ig_engine *e, int marker_api)
{
	int err = ig_steps_new(e, marker_api);

	if (!err)
		obs_set(e);
	return err;
}

void ig_observe_span(struct ig_engine *e, const struct ig_device *d, int kind,
		     uint64_t t0, uint64_t t1, uint32_t tid, uint32_t tgid, int bound)
{
	struct ig_obs_span s = {
		.kind = kind, .device = d->ordinal, .t0 = t0, .t1 = t1,
		.tid = tid, .tgid = tgid, .bound = bound,
	};

	if (e->obs.span && t1 > t0)
		e->obs.span(e->obs.ctx, &s);
}

static bool shows(const struct ig_obs_step *st, const char *cause)
{
	if (st->iv.flags & IG_F_PYLOCK)	/* an object's lock, waited or spun for */
		return !strcmp(cause, "lock");
	switch (ig_rec_reason_kind(st->iv.reason)) {
	case IG_RK_STORAGE:
		return !strcmp(cause, "storage");
	case IG_RK_FAULT:
		return !strcmp(cause, "page_fault");
	case IG_RK_FUTEX:
		return !strcmp(cause, "lock") || !strcmp(cause, "gil");
	case IG_RK_NETWORK:
		return !strcmp(cause, "network");
	case IG_RK_SLEEP:
		return !strcmp(cause, "sleep");
	case IG_RK_RUNNABLE:
		return !strcmp(cause, "cpu_starvation");
	default:
		return (st->iv.flags & IG_F_IOWAIT) && !strcmp(cause, "storage");
	}
}

const struct ig_obs_step *ig_observe_cause_step(const struct ig_obs_span *s,
						const char *cause)
{
	unsigned int i;

	for (i = s->nsteps; cause && i-- > 0;)
		if (shows(&s->steps[i], cause))
			return &s->steps[i];
	return NULL;
}

/* After the gap's walk: its causes, largest first, and the stretches. */
void ig_observe_gap(struct ig_engine *e, const struct ig_gap *g)
{
	struct ig_obs_walk *w = e->obs_walk;
	struct ig_obs_span s = {
		.kind = IG_OBS_IDLE, .device = g->device, .t0 = g->t0, .t1 = g->t1,
		.tid = g->tid, .tgid = g->tgid, .steps = w->steps, .nsteps = w->n,
		.steps_dropped = w->dropped,
	};
	struct ig_obs_cause all[IG_C__MAX];
	uint64_t ns[IG_C__MAX];
	unsigned int i, k;

	if (e->steps)
		ig_steps_idle(e, g->device, g->t0, g->t1, w->ns);
	if (!e->obs_view.span)
		return;
	memcpy(ns, w->ns, sizeof(ns));
	for (k = 0; k < IG_C__MAX; k++) {
		int best = -1;

		for (i = 0; i < IG_C__MAX; i++)
			if (ns[i] && (best < 0 || ns[i] > ns[best]))
				best = i;
		if (best < 0)
			break;
		all[k].name = ig_names_cause(best);
		all[k].ns = ns[best];
		if (k < IG_OBS_CAUSES)
			s.causes[s.ncauses++] = all[k];
		ns[best] = 0;
	}
	s.all = all;
	s.nall = k;
	e->obs_view.span(e->obs_view.ctx, &s);
}
