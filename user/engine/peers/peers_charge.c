// SPDX-License-Identifier: GPL-2.0
/*
 * Why a late rank was late (docs/design.md §4.9).  At its launch the
 * engine notes where its GPU stood: since when earlier work was pending
 * there, and the launching thread's last sync that waited on that GPU.
 * Each wait it caused, [t0, t1), is then split:
 *
 *   - its GPU already had work pending at t0, queued since its previous
 *     collective, and its launching thread then waited on it in a sync
 *     that waited (the queue non-empty from the stream's last submission
 *     to the drain): peer_compute up to the drain, proven from that last
 *     submission on, less what it queued later than the other did (its
 *     host's lateness);
 *   - else, where its GPU still had earlier work pending at t0 (no such
 *     sync): peer_compute, not proven which work held it;
 *   - the rest, its host's lateness: the walk of an idle gap over the
 *     launching thread, except where work it queued after t0 ran (a sync
 *     that waited on it, or work pending at its launch): that work ran
 *     late for the same reasons, in proportion (not proven).
 */
#include <string.h>
#include "engine/peers/peers.h"

static struct ig_device *dev_by_ordinal(const struct ig_engine *e, int ordinal)
{
	uint32_t i;

	for (i = 0; i < e->gpu.ndevs; i++)
		if (e->gpu.devs[i]->ordinal == ordinal)
			return e->gpu.devs[i];
	return NULL;
}

void ig_peers_at_launch(struct ig_engine *e, struct peers_call *c)
{
	struct ig_process *p = ig_tasks_process_find(e, c->tgid);
	struct ig_stream *s = p ? ig_htab_get(&p->streams, c->stream) : NULL;
	struct ig_device *d = s ? s->dev : p ? dev_by_ordinal(e, ig_gpu_proc_device(p)) : NULL;
	uint32_t i, it = 0;

	c->device = d ? d->ordinal : (p ? ig_gpu_proc_device(p) : -1);
	c->pend_since = 0;
	c->waited_pend = c->waited_from = c->waited_to = 0;
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
			c->waited_pend = s->waited_pend;
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
		ig_attrib_into(e, &R->walk, &pc);
}

/* In this step (after the rank's previous collective), its launching
 * thread's sync waited for work queued then. */
static bool step_waited(const struct peers_call *c)
{
	return c->waited_to && c->waited_pend > c->prev_launch;
}

void ig_peers_charge(struct ig_engine *e, struct peers_rank *R,
		  const struct peers_call *L, const struct peers_call *r,
		  uint64_t t1, uint64_t *ns)
{
	uint64_t t0 = r->launch, late = 0;
	/* out of the walk: [x[i][0], x[i][1]), in time order */
	uint64_t x[2][2] = { { t1, t1 }, { t1, t1 } }, a = t0, walked = 0;
	uint64_t given = 0, rest, unproven = 0;
	uint32_t k, top = 0;

	memset(ns, 0, IG_C__MAX * sizeof(*ns));
	/* a sync of this step's work (not of the collective before, which
	 * ended on every rank at once) */
	if (step_waited(L) && L->waited_to > t0 && L->waited_pend < t1) {
		x[0][0] = ig_max64(t0, L->waited_pend);
		x[0][1] = ig_min64(t1, L->waited_to);
		if (L->waited_pend <= t0) {
			/* its GPU already had work when the other arrived,
			 * and its thread then waited on it: that GPU held it
			 * (proven from the work's last submission on), less
			 * what it queued after the other had queued its own:
			 * that its host's lateness (in [r's queue, L's)) */
			if (step_waited(r) && r->waited_pend < L->waited_pend)
				late = ig_min64(L->waited_pend - r->waited_pend,
						x[0][1] - t0);
			ns[IG_C_PEER_COMPUTE] = x[0][1] - t0 - late;
			unproven += ig_min64(ig_max64(L->waited_from, t0), x[0][1]) - t0;
			unproven -= ig_min64(unproven, late);
		}
		/* else work it queued late ran late: its host's causes */
	} else if (L->pend_since && L->pend_since <= t0) {
		/* its GPU already had work when the other arrived: it still
		 * computed (imbalance), not proven which work held it */
		ns[IG_C_PEER_COMPUTE] = t1 - t0;
		e->peers->unproven_wait_ns += t1 - t0;
		goto out;
	}
	/* work it submitted at launch, queued after the other arrived */
	if (L->pend_since > ig_max64(t0, x[0][1]) && L->pend_since < t1)
		x[1][0] = L->pend_since;
	/* its host was late outside those: the walk says why, and the work
	 * it queued late ran late for the same reasons, in proportion */
	memset(&R->walk, 0, sizeof(R->walk));
	if (late)
		walk(e, R, L, L->waited_pend - late, L->waited_pend);
	for (k = 0; k < 2; k++) {
		walk(e, R, L, a, ig_max64(a, x[k][0]));
		a = ig_max64(a, x[k][1]);
	}
	for (k = 0; k < IG_C__MAX; k++)
		walked += R->walk.c[k].ns;
	rest = (t1 - t0) - ns[IG_C_PEER_COMPUTE];
	unproven += rest - ig_min64(walked, rest);
	e->peers->unproven_wait_ns += unproven;
	if (!rest)
		goto out;
	if (!walked) {
		ns[IG_C_UNKNOWN] += rest;
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
