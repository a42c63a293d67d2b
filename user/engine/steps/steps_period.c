// SPDX-License-Identifier: GPL-2.0
/*
 * A device's period and the boundary of its steps (docs/design.md §4.11):
 * a segment's signature is its launches (functions and grid sizes), how
 * many, and the call that ends it; the period is the smallest P for
 * which at least IG_STEPS_MATCH of the segments have the signature of the
 * one P later; the boundary, the first sync return at or after the
 * segment with the most launches, in the periods that the next one
 * repeats.
 */
#include <stdio.h>
#include <string.h>
#include "engine/steps/steps_int.h"
#include "stream/cuda_api.h"
#include "stream/nccl_api.h"

#define IG_STEPS_MATCH		0.7	/* of segments matching P later */
#define IG_STEPS_MIN_SEGS	6	/* candidates needed at least */
#define IG_STEPS_MAX_PERIOD	32

static uint64_t sig_of(const struct st_seg *g)
{
	return g->sig ^ ((uint64_t)g->nlaunch << 40) ^
	       ((uint64_t)g->api << 24) ^ ((uint64_t)g->kind << 16);
}

static uint64_t sig_at(const struct st_dev *d, uint32_t i)
{
	return sig_of(st_seg_at(d, i));
}

/* The smallest period of segments [from, to), 0: none. */
static uint32_t period_of(const struct st_dev *d, uint32_t from, uint32_t to)
{
	uint32_t P, i, same, n = to - from;

	for (P = 1; P <= IG_STEPS_MAX_PERIOD && P * 3 <= n; P++) {
		for (same = 0, i = from; i + P < to; i++)
			same += sig_at(d, i) == sig_at(d, i + P);
		if (same >= IG_STEPS_MATCH * (n - P))
			return P;
	}
	return 0;
}

/* Does the window of @P segments from @i repeat with a shorter period
 * that divides P?  A run of one segment (set-up's copies of a model's
 * weights, each a copy and a sync) repeats itself at every P, and is no
 * period of the loop's. */
static bool shorter(const struct st_dev *d, uint32_t i, uint32_t P)
{
	uint32_t p, j;

	for (p = 1; p < P; p++) {
		if (P % p)
			continue;
		for (j = 0; j + p < P && sig_at(d, i + j) == sig_at(d, i + j + p); j++)
			;
		if (j + p >= P)
			return true;
	}
	return false;
}

/* The segment whose signature ends a step, in the period from @first:
 * from the segment with the most launches (the compute) on, the first
 * sync return after the period's last collective (the gradients'
 * all-reduce ends the step's work), or without collectives the first sync
 * return (the loss read back); a period of collectives alone, the last
 * collective. */
static uint32_t boundary_of(const struct st_dev *d, uint32_t first, uint32_t P)
{
	uint32_t i, j = first, k, from = 0;

	for (i = first; i < first + P; i++)
		if (st_seg_at(d, i)->nlaunch > st_seg_at(d, j)->nlaunch)
			j = i;
	for (i = 0; i < P; i++)
		if (st_seg_at(d, first + (j - first + i) % P)->kind == IG_SK_COLL)
			from = i;
	for (i = from; i < P; i++) {
		k = first + (j - first + i) % P;
		if (st_seg_at(d, k)->kind == IG_SK_SYNC)
			return k;
	}
	return first + (j - first + from) % P;
}

/*
 * The boundary segment: of the periods that the next one repeats (and
 * that are not a shorter one repeated), the boundary most of them give.
 * A warm-up's periods repeat too (forward passes without the backward,
 * say), but fewer times than the loop's; none repeating, the first
 * period's.
 */
static uint32_t boundary(const struct st_dev *d, uint32_t from, uint32_t to,
			 uint32_t P)
{
	struct { uint64_t sig; uint32_t n, at; } v[16];
	uint32_t nv = 0, i, j, k, b, best = 0;

	for (i = from; i + 2 * P <= to; i++) {
		for (j = 0; j < P && sig_at(d, i + j) == sig_at(d, i + j + P); j++)
			;
		if (j < P || shorter(d, i, P))
			continue;
		b = boundary_of(d, i, P);
		for (k = 0; k < nv && v[k].sig != sig_at(d, b); k++)
			;
		if (k == nv) {
			if (nv == sizeof(v) / sizeof(v[0]))
				continue;
			v[nv].sig = sig_at(d, b);
			v[nv].n = 0;
			v[nv++].at = b;
		}
		v[k].n++;
	}
	if (!nv)
		return boundary_of(d, from, P);
	for (k = 1; k < nv; k++)
		if (v[k].n > v[best].n)
			best = k;
	return v[best].at;
}

static void kind_source(const struct st_seg *g, char *buf, size_t len)
{
	if (g->kind == IG_SK_COLL)
		snprintf(buf, len, "collective:%s", ig_nccl_op_name(g->api));
	else
		snprintf(buf, len, "sync:%s", ig_api_name(g->api));
}

void ig_steps_plan(const struct ig_steps *s, const struct st_dev *d,
		   struct st_plan *pl)
{
	uint32_t m = d->segs.n ? d->segs.n - 1 : 0, from, b;

	memset(pl, 0, sizeof(*pl));
	pl->marker = s && s->marker_api >= 0;
	/* before anything was folded, the first segment holds set-up */
	from = d->base ? 0 : 1;
	if (m < from + IG_STEPS_MIN_SEGS) {
		snprintf(pl->why, sizeof(pl->why), "%s", pl->marker ?
			 "the marker call returned fewer than 6 times" :
			 "fewer than 6 syncs or collectives");
		return;
	}
	if (pl->marker) {
		pl->ok = true;
		pl->P = 1;
		snprintf(pl->source, sizeof(pl->source), "marker:cuda:%s",
			 ig_api_name((unsigned int)s->marker_api));
		return;
	}
	pl->P = period_of(d, from, m);
	if (!pl->P) {
		snprintf(pl->why, sizeof(pl->why), "no repeating sequence of "
			 "launches, syncs and collectives");
		return;
	}
	b = boundary(d, from, m, pl->P);
	pl->B = sig_at(d, b);
	kind_source(st_seg_at(d, b), pl->source, sizeof(pl->source));
	pl->ok = true;
}

bool ig_steps_ends_step(const struct st_plan *pl, const struct st_seg *g)
{
	return g->t_end != ST_OPEN && (pl->marker || sig_of(g) == pl->B);
}
