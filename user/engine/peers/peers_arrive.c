// SPDX-License-Identifier: GPL-2.0
/*
 * A collective's arrival (docs/design.md §4.9 "The arrival"): a rank's GPU
 * reaches a collective when the collective's kernel is submitted, at the
 * end of the launch call inside the NCCL call, and a loaded host may
 * preempt the thread for tens of milliseconds between the call's entry
 * and the submission, or inside the launch itself.  The entry is all the
 * NCCL probe sees (collectives are a hot path: no return probe), so a
 * collective of a thread is held until that thread's next CUDA record
 * says more:
 *   - the first submission on the collective's stream since its entry (an
 *     IG_CU_SUBMIT whose stream's previous submission came before the
 *     entry) is the launch's entry; the call is held on until the
 *     thread's next call (CUDA or NCCL), whose entry the launch had
 *     returned by.  The kernel reached the GPU in the thread's last
 *     stretch on a CPU before that: at the submission, or where the
 *     thread was off CPU in between, at its last return to a CPU (the
 *     launch, not the code after it, taken as what was held up);
 *   - anything else from that thread first (a sync, a query, a submission
 *     on another stream or one that was not the first, another NCCL
 *     call), a hold past ARRIVE_HOLD_NS, or the end of the records: it is
 *     fed at its entry, or its submission where that was seen, a lower
 *     bound.
 * Grouped calls are launched at their group's end and are not held.
 */
#include <string.h>
#include "engine/peers/peers.h"
#include "util/util.h"

#define ARRIVE_HOLD_NS	(IG_NSEC / 2)		/* held this long at most */

static void deliver(struct ig_engine *e, const struct ig_nccl *r)
{
	ig_peers_feed(e, r);
	ig_peers_local_feed(e, r);
}

/* The held call's arrival with its thread's next call entered at @bound
 * (0: none seen): its submission, or its thread's last return to a CPU
 * before @bound; its entry where no submission was seen. */
static uint64_t arrival(const struct peers_held *h, uint64_t bound)
{
	uint64_t a = h->sub;
	uint32_t k;

	if (!a)
		return h->r.h.ts;
	for (k = 0; k < h->nin && bound; k++)
		if (h->in[k] > a && h->in[k] <= bound)
			a = h->in[k];
	return a;
}

/* Feeds held call @i, its next call entered at @bound (0: none seen),
 * and forgets it. */
static void release(struct ig_engine *e, uint32_t i, uint64_t bound)
{
	struct ig_peers *ps = e->peers;
	struct ig_nccl r = ps->held[i].r;
	uint64_t ts = arrival(&ps->held[i], bound);

	uint64_t lo = ps->held[i].sub > r.h.ts ? ps->held[i].sub : r.h.ts;

	if (ts > r.h.ts)
		r.h.ts = ts;
	memmove(&ps->held[i], &ps->held[i + 1],
		(ps->nheld - i - 1) * sizeof(ps->held[0]));
	ps->nheld--;
	ps->arrive_tid = r.h.tid;
	ps->arrive_lo = lo < r.h.ts ? lo : 0;
	deliver(e, &r);
	ps->arrive_lo = 0;
}

/* Held calls older than the hold, at @now, are fed at their entry or
 * submission. */
static void expire(struct ig_engine *e, uint64_t now)
{
	struct ig_peers *ps = e->peers;

	while (ps->nheld && ps->held[0].r.h.ts + ARRIVE_HOLD_NS < now)
		release(e, 0, 0);
}

static int held_of(const struct ig_peers *ps, uint32_t tid)
{
	uint32_t i;

	for (i = 0; i < ps->nheld; i++)
		if (ps->held[i].r.h.tid == tid)
			return (int)i;
	return -1;
}

void ig_peers_arrive_nccl(struct ig_engine *e, const struct ig_nccl *r)
{
	struct ig_peers *ps = ig_peers_get(e);
	int i;

	if (!ps) {
		deliver(e, r);
		return;
	}
	expire(e, r->h.ts);
	if ((i = held_of(ps, r->h.tid)) >= 0)
		release(e, (uint32_t)i, r->h.ts);
	if (r->kind != IG_NC_COLL || (r->flags & IG_NCF_GROUPED)) {
		deliver(e, r);
		return;
	}
	if (ps->nheld == IG_PEERS_ARRIVE_MAX)
		release(e, 0, 0);
	/* in entry order: the oldest first */
	memset(&ps->held[ps->nheld], 0, sizeof(ps->held[0]));
	ps->held[ps->nheld++].r = *r;
}

void ig_peers_arrive_cuda(struct ig_engine *e, const struct ig_cuda *c)
{
	struct ig_peers *ps = e->peers;
	struct peers_held *h;
	int i;

	if (!ps || !ps->nheld)
		return;
	expire(e, c->h.ts);
	if ((i = held_of(ps, c->h.tid)) < 0)
		return;
	h = &ps->held[i];
	if (h->sub) {
		/* the thread's next call: the launch had returned when it
		 * was entered */
		release(e, (uint32_t)i, c->t_begin && c->t_begin <= c->h.ts &&
			c->t_begin >= h->sub ? c->t_begin : c->h.ts);
		return;
	}
	if (c->kind == IG_CU_API || c->kind == IG_CU_STREAM_NEW || c->kind == IG_CU_CTX)
		return;		/* the call's own work: events, contexts */
	if (c->kind == IG_CU_SUBMIT && c->stream == h->r.stream &&
	    c->last_submit < h->r.h.ts && c->h.ts >= h->r.h.ts)
		h->sub = c->h.ts;
	else
		release(e, (uint32_t)i, 0);
}

void ig_peers_arrive_offcpu(struct ig_engine *e, const struct ig_offcpu *r)
{
	struct ig_peers *ps = e->peers;
	struct peers_held *h;
	uint64_t on = ig_offcpu_on(r);
	int i;

	if (!ps || !ps->nheld || (i = held_of(ps, r->h.tid)) < 0)
		return;
	h = &ps->held[i];
	if (!h->sub || on <= h->sub)
		return;
	if (h->nin == IG_PEERS_ARRIVE_INS) {
		memmove(&h->in[0], &h->in[1], (IG_PEERS_ARRIVE_INS - 1) * sizeof(h->in[0]));
		h->nin--;
	}
	h->in[h->nin++] = on;
}

void ig_peers_arrive_flush(struct ig_engine *e)
{
	while (e->peers && e->peers->nheld)
		release(e, 0, 0);
}

uint64_t ig_peers_arrive_keep_from(const struct ig_engine *e)
{
	return e->peers && e->peers->nheld ? e->peers->held[0].r.h.ts : IG_NS_INF;
}
