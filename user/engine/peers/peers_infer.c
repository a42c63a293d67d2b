// SPDX-License-Identifier: GPL-2.0
/*
 * Communicators created before the probes came (docs/design.md §4.9
 * "Communicators created before tracing").  Their calls carry no id and
 * are numbered from the first one seen, so (id, sequence) cannot match
 * them.  Each such communicator of each process keeps its last calls:
 * op, bytes, root or peer, reduction (its signature), launch, and end
 * (the first drain of its stream after the launch, before the next
 * collective to that stream).  Two processes' communicators are taken
 * for one when, under exactly one sequence offset, the calls both hold
 * have the same signatures, no end comes before the other's launch, and
 * IG_INFER_MIN_CALLS of the last IG_INFER_WINDOW exact ends meet within
 * a 64th of a step, 100 us to 1 ms (ig_peers_infer_pair()).  Such communicators are
 * grouped transitively into one inferred communicator of as many ranks
 * as were found on this host, with an id of ours; its held calls are
 * matched, and its later calls as those of a communicator with an id.  A
 * rank found to agree later joins from the next collective.  The size is
 * not known: a rank not traced here is not waited for, so the waits are
 * lower bounds.
 *
 * A communicator whose creation some ranks' probes saw and others' did
 * not (the probes attached while those ranks were inside
 * ncclCommInitRank, waiting for the last one) has an id, a size and a
 * rank in the first and none in the others: its calls with an id are
 * held as evidence too, and an id-less communicator that agrees with
 * one of them takes that id, its sequence and a rank slot no rank with
 * the id holds (a known group: its size is the creation's), so that
 * every rank's part of each collective meets in one.
 *
 * This file keeps the evidence and translates the calls of an inferred
 * communicator; the rule and the grouping are peers_group.c's.
 */
#include <stdlib.h>
#include <string.h>
#include "engine/peers/peers_infer_int.h"
#include "stream/nccl_api.h"
#include "util/util.h"

/* ---- the evidence ---- */

static struct peers_infer *infer_get(struct ig_peers *ps)
{
	if (!ps->infer)
		ps->infer = calloc(1, sizeof(*ps->infer));
	return ps->infer;
}

/* Its end, as far as known now: the first drain of its stream after the
 * launch (struct ig_stream.coll_end, as peers_local.c), none when another
 * collective went to that stream first. */
static void end_now(struct ig_engine *e, struct infer_call *x)
{
	struct ig_stream *s;

	if (x->ended || !x->c.launch)
		return;
	s = ig_tasks_stream_find(e, x->c.tgid, x->c.stream);
	if (s && s->coll_at == x->c.launch) {
		if (s->coll_end > x->c.launch) {
			x->o.end = s->coll_end;
			x->o.exact = s->coll_end_exact;
			x->ended = true;
		}
		return;
	}
	x->o.end = 0;
	x->ended = true;
}

static void ends_of_process(struct ig_engine *e, struct peers_infer *pi,
			    uint32_t tgid)
{
	size_t i, j;

	for (i = 0; i < pi->nc; i++)
		for (j = 0; pi->c[i].tgid == tgid && j < INFER_RING; j++)
			end_now(e, &pi->c[i].ring[j]);
}

static void launch(struct ig_engine *e, struct peers_infer *pi,
		   struct infer_comm *C, struct infer_call *x, uint64_t ts)
{
	struct ig_stream *s;
	struct ig_peers *ps = e->peers;

	ends_of_process(e, pi, C->tgid);	/* before the stream's next */
	x->c.launch = x->o.launch = ts;
	/* an arrival taken at the thread's return to a CPU after the
	 * submission may lie after the launch's end; the rule's "no end
	 * before the other's launch" asks the launch's lower bound */
	if (ps->arrive_lo && ps->arrive_tid == x->c.tid)
		x->o.launch = x->c.launch_lo = ps->arrive_lo;
	x->c.prev_launch = C->prev_launch;
	C->prev_launch = ts;
	/* a call with an id: the matcher notes its place on the GPU */
	if (!C->has_id)
		ig_peers_at_launch(e, &x->c);
	/* the collective before on this stream ends where it ends, in
	 * collectives.by_communicator too, before its end is forgotten */
	ig_peers_local_close(e, C->tgid, x->c.stream);
	s = ig_tasks_stream_find(e, C->tgid, x->c.stream);
	if (s) {
		s->coll_at = ts;
		s->coll_end = 0;
	}
}

static struct infer_comm *comm_get(struct peers_infer *pi, uint32_t tgid,
				   uint64_t comm)
{
	struct infer_comm *C;
	size_t i;

	for (i = 0; i < pi->nc; i++)
		if (pi->c[i].tgid == tgid && pi->c[i].comm == comm)
			return &pi->c[i];
	if (pi->nc == INFER_COMMS ||
	    !ig_grow((void **)&pi->c, &pi->capc, pi->nc, sizeof(*C)))
		return NULL;
	C = &pi->c[pi->nc++];
	memset(C, 0, sizeof(*C));
	C->tgid = tgid;
	C->comm = comm;
	C->rank = -1;
	C->group = -1;
	return C;
}

static uint64_t sig_of(const struct ig_nccl *r)
{
	uint64_t h = ig_hash64(r->api);

	h = ig_hash64(h ^ ig_nccl_bytes(r));
	h = ig_hash64(h ^ (uint32_t)r->peer);
	return ig_hash64(h ^ r->op);
}

/* @C's call @r as its inferred communicator's: false when @C was not one
 * of its ranks yet at that sequence. */
static bool translate(struct ig_engine *e, const struct peers_infer *pi,
		      const struct infer_comm *C, const struct ig_nccl *r,
		      struct ig_nccl *out)
{
	const struct infer_group *G = &pi->g[C->group];
	int64_t seq = (int64_t)r->seq + C->shift;
	uint32_t g = G->ngen ? G->ngen - 1 : 0;

	while (g && seq < G->gen[g].from)
		g--;
	if (seq < 1 || C->member >= (G->known ? G->n : G->gen[g].n))
		return false;
	*out = *r;
	out->id = G->id;
	out->seq = (uint64_t)seq;
	out->rank = (int32_t)C->member;
	out->nranks = (int32_t)(G->known ? G->n : G->gen[g].n);
	out->flags = (r->flags & ~IG_NCF_NO_ID) | IG_NCF_INFERRED;
	e->peers->inferred_calls++;
	ig_peers_local_inferred(e, out, C->rank);
	return true;
}

/* Collective @r of communicator @C, its latest, into C's ring of calls. */
static struct infer_call *ring_put(struct infer_comm *C, const struct ig_nccl *r)
{
	struct infer_call *x = &C->ring[r->seq % INFER_RING];

	memset(x, 0, sizeof(*x));
	C->last_seq = r->seq;
	x->o.seq = r->seq;
	x->o.sig = sig_of(r);
	x->c.tid = r->h.tid;
	x->c.tgid = r->h.tgid;
	x->c.stream = r->stream;
	x->c.api = r->api;
	return x;
}

bool ig_peers_infer_coll(struct ig_engine *e, const struct ig_nccl *r,
			 struct ig_nccl *out)
{
	struct peers_infer *pi = infer_get(e->peers);
	struct infer_comm *C = pi ? comm_get(pi, r->h.tgid, r->comm) : NULL;
	struct infer_call *x;
	int k;
	size_t j;

	if (!C || !r->seq)
		return false;
	if (r->rank >= 0)
		C->rank = r->rank;
	/* held as evidence also once inferred: a later rank's peers */
	x = ring_put(C, r);
	x->c.bytes = ig_nccl_bytes(r);
	x->c.present = true;
	if (!(r->flags & IG_NCF_GROUPED))
		launch(e, pi, C, x, r->h.ts);
	/* the evidence so far: the calls before this one may have ended */
	ends_of_process(e, pi, C->tgid);
	if (C->group >= 0)
		return translate(e, pi, C, r, out);
	/* a few calls after it first agreed with another, so that every
	 * rank here has had the time to say so too, its component */
	if (C->paired_at && r->seq >= C->paired_at + INFER_SETTLE_CALLS) {
		ig_peers_group_grow(e, pi, C);
		return false;
	}
	for (j = 0; j < pi->nc && !C->paired_at; j++) {
		struct infer_comm *Y = &pi->c[j];

		if (Y->tgid != C->tgid && ig_peers_group_pair(e, C, Y, &k))
			C->paired_at = r->seq, C->paired_ts = r->h.ts;
	}
	return false;
}

/* The known group of communicator @id of @n ranks, made if new; -1 when
 * it cannot be. */
static int known_group(struct peers_infer *pi, uint64_t id, uint32_t n)
{
	struct infer_group *G;
	size_t i;

	for (i = 0; i < pi->ng; i++)
		if (pi->g[i].known && pi->g[i].id == id)
			return pi->g[i].n == n ? (int)i : -1;
	if (n > IG_PEERS_MAX_RANKS ||
	    !ig_grow((void **)&pi->g, &pi->capg, pi->ng, sizeof(*G)))
		return -1;
	G = &pi->g[pi->ng];
	memset(G, 0, sizeof(*G));
	G->id = id;
	G->n = n;
	G->known = true;
	G->gen[0].from = INT64_MIN;
	G->gen[0].n = n;
	return (int)pi->ng++;
}

void ig_peers_infer_known(struct ig_engine *e, const struct ig_nccl *r)
{
	struct peers_infer *pi = infer_get(e->peers);
	struct infer_comm *C;
	struct infer_call *x;
	struct infer_group *G;
	int gi;
	size_t i;

	if (!pi || r->nranks < 2 || r->rank < 0 || r->rank >= r->nranks || !r->seq)
		return;
	for (i = 0; i < pi->nc; i++)
		if (pi->c[i].tgid == r->h.tgid && pi->c[i].comm == r->comm)
			break;
	if (i == pi->nc) {
		/* every rank has the id here: nothing to infer for it; and
		 * half the room stays for the communicators without one */
		gi = known_group(pi, r->id, (uint32_t)r->nranks);
		if (gi < 0 || pi->g[gi].nid == pi->g[gi].n || pi->nc >= INFER_COMMS / 2 ||
		    ig_peers_slot_taken(&pi->g[gi], (uint32_t)r->rank) ||
		    !(C = comm_get(pi, r->h.tgid, r->comm)))
			return;
		G = &pi->g[gi];
		C->has_id = true;
		C->group = gi;
		C->member = (uint32_t)r->rank;
		C->shift = 0;
		ig_peers_slot_take(G, (uint32_t)r->rank);
		G->nid++;
	}
	C = &pi->c[i];		/* found, or just added at the end */
	if (!C->has_id || pi->g[C->group].nid == pi->g[C->group].n)
		return;
	C->rank = r->rank;
	x = ring_put(C, r);
	if (!(r->flags & IG_NCF_GROUPED))
		launch(e, pi, C, x, r->h.ts);
	ends_of_process(e, pi, C->tgid);
}

void ig_peers_infer_finish(struct ig_engine *e)
{
	struct peers_infer *pi = e->peers ? e->peers->infer : NULL;
	size_t i;

	if (!pi)
		return;
	pi->finishing = true;
	for (i = 0; i < pi->nc; i++)
		if (pi->c[i].group < 0 && pi->c[i].paired_at)
			ig_peers_group_grow(e, pi, &pi->c[i]);
	pi->finishing = false;
}

bool ig_peers_infer_next(struct ig_engine *e, struct ig_infer_held *out)
{
	struct peers_infer *pi = e->peers ? e->peers->infer : NULL;

	if (!pi || pi->next == pi->nheld) {
		if (pi)
			pi->next = pi->nheld = 0;
		return false;
	}
	*out = pi->held[pi->next++];
	return true;
}

void ig_peers_infer_group_end(struct ig_engine *e, const struct ig_nccl *r)
{
	struct peers_infer *pi = e->peers ? e->peers->infer : NULL;
	size_t i, j;

	for (i = 0; pi && i < pi->nc; i++) {
		struct infer_comm *C = &pi->c[i];

		if (C->tgid != r->h.tgid)
			continue;
		for (j = 0; j < INFER_RING; j++) {
			struct infer_call *x = &C->ring[j];

			if (x->o.seq && !x->c.launch && x->c.tid == r->h.tid)
				launch(e, pi, C, x, r->h.ts);
		}
	}
}

uint64_t ig_peers_infer_keep_from(const struct ig_engine *e)
{
	const struct peers_infer *pi = e->peers ? e->peers->infer : NULL;
	uint64_t keep = IG_NS_INF;
	uint32_t tgid = 0;
	bool need = false;
	size_t i, j;

	/* held calls are matched only when a new inferred communicator is
	 * made, of two processes at least (one joining replays none), or
	 * when one joins a communicator whose creation was seen */
	for (i = 0; pi && i < pi->nc && !need; i++)
		if (pi->c[i].group < 0 && tgid && pi->c[i].tgid != tgid)
			need = true;
		else if (pi->c[i].group < 0)
			tgid = pi->c[i].tgid;
	for (i = 0; pi && tgid && i < pi->ng && !need; i++)
		need = pi->g[i].known;
	if (!need)
		return keep;
	for (i = 0; i < pi->nc; i++) {
		const struct infer_comm *C = &pi->c[i];

		for (j = 0; C->group < 0 && j < INFER_RING; j++) {
			const struct peers_call *c = &C->ring[j].c;

			if (!C->ring[j].o.seq || !c->launch ||
			    c->launch + INFER_HOLD_NS < e->win.now)
				continue;
			keep = ig_min64(keep, c->launch);
			if (c->waited_pend)
				keep = ig_min64(keep, c->waited_pend);
		}
	}
	return keep;
}

void ig_peers_infer_free(struct ig_engine *e)
{
	if (!e->peers || !e->peers->infer)
		return;
	free(e->peers->infer->c);
	free(e->peers->infer->g);
	free(e->peers->infer->held);
	free(e->peers->infer);
	e->peers->infer = NULL;
}
