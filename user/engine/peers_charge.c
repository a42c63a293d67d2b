// SPDX-License-Identifier: GPL-2.0
/*
 * Why a late rank was late (docs/design.md §4.9).  At its launch the
 * engine notes where its GPU stood: since when earlier work was pending
 * there, and the launching thread's last sync that waited on that GPU.
 * Each wait it caused, [t0, t1), is then split:
 *
 *   - the part its launching thread spent waiting on its own GPU in a
 *     sync that waited (the GPU's queue non-empty from the stream's last
 *     submission to the drain): peer_compute, proven;
 *   - else, where its GPU still had earlier work pending at t0:
 *     peer_compute, not proven which work held it;
 *   - the rest, its host's lateness: the walk of an idle gap over the
 *     launching thread, up to when it next submitted work; work it
 *     submitted from then on ran late for the same reasons (in
 *     proportion, not proven).
 */
#include <string.h>
#include "engine/peers.h"

static struct ig_device *dev_by_ordinal(const struct ig_engine *e, int ordinal)
{
	uint32_t i;

	for (i = 0; i < e->gpu.ndevs; i++)
		if (e->gpu.devs[i]->ordinal == ordinal)
			return e->gpu.devs[i];
	return NULL;
}

void peers_at_launch(struct ig_engine *e, struct peers_call *c)
{
	struct ig_process *p = ig_process_find(e, c->tgid);
	struct ig_stream *s = p ? ig_htab_get(&p->streams, c->stream) : NULL;
	struct ig_device *d = s ? s->dev : p ? dev_by_ordinal(e, ig_proc_device(p)) : NULL;
	uint32_t i, it = 0;

	c->device = d ? d->ordinal : (p ? ig_proc_device(p) : -1);
	c->pend_since = 0;
	c->waited_from = c->waited_to = 0;
	for (i = 0; d && i < d->nopen; i++) {
		const struct ig_stream *o = d->open[i];

		if (o->proc == p && o->pending && o->p_start < c->launch &&
		    (!c->pend_since || o->p_start < c->pend_since))
			c->pend_since = o->p_start;
	}
	/* the launching thread's own sync that waited on this GPU */
	while (p && d && (s = ig_htab_next(&p->streams, &it)))
		if (s->dev == d && s->waited_tid == c->tid &&
		    s->waited_to <= c->launch && s->waited_to > c->waited_to) {
			c->waited_from = s->waited_from;
			c->waited_to = s->waited_to;
		}
}

/* The host's lateness over [a, b) of the launching thread, into R->walk. */
static void walk(struct ig_engine *e, struct peers_rank *R,
		 const struct peers_call *L, uint64_t a, uint64_t b)
{
	struct ig_piece pc = { .t0 = a, .t1 = b, .tid = L->tid, .tgid = L->tgid,
			       .device = L->device };

	if (a < b)
		ig_attribute_into(e, &R->walk, &pc);
}

void peers_charge(struct ig_engine *e, struct peers_rank *R,
		  const struct peers_call *L, uint64_t t0, uint64_t t1,
		  uint64_t *ns)
{
	uint64_t c0 = t0, c1 = t0, end = t1, walked = 0, given = 0, rest;
	uint32_t k, top = 0;

	memset(ns, 0, IG_C__MAX * sizeof(*ns));
	/* its thread waited on its own GPU: that GPU held it */
	if (L->waited_to > t0 && L->waited_from < t1) {
		c0 = ig_max64(t0, L->waited_from);
		c1 = ig_min64(t1, L->waited_to);
		ns[IG_C_PEER_COMPUTE] = c1 - c0;
	} else if (L->pend_since && L->pend_since <= t0) {
		/* its GPU already had work when the other arrived: it still
		 * computed (imbalance), not proven which work held it */
		ns[IG_C_PEER_COMPUTE] = t1 - t0;
		e->peers->unproven_wait_ns += t1 - t0;
		goto out;
	}
	/* its host was late until it next submitted work; what it
	 * submitted since ran late for the same reasons */
	if (L->pend_since && L->pend_since > t0 && L->pend_since < t1)
		end = L->pend_since;
	memset(&R->walk, 0, sizeof(R->walk));
	walk(e, R, L, t0, ig_min64(c0, end));
	walk(e, R, L, ig_max64(c1, t0), end);
	for (k = 0; k < IG_C__MAX; k++)
		walked += R->walk.c[k].ns;
	rest = (t1 - t0) - ns[IG_C_PEER_COMPUTE];
	if (!rest)
		goto out;
	if (end < t1)
		e->peers->unproven_wait_ns += ig_min64(rest, t1 - end);
	if (!walked) {
		ns[ns[IG_C_PEER_COMPUTE] ? IG_C_PEER_COMPUTE : IG_C_UNKNOWN] += rest;
		goto out;
	}
	for (k = 0; k < IG_C__MAX; k++) {
		uint64_t n = (uint64_t)((double)R->walk.c[k].ns * rest / walked);

		ns[k] += n;
		given += n;
		if (ns[k] > ns[top])
			top = k;
	}
	ns[top] += rest - ig_min64(given, rest);
out:
	for (k = 0; k < IG_C__MAX; k++)
		R->cause_ns[k] += ns[k];
}
