// SPDX-License-Identifier: GPL-2.0
/*
 * A collective's arrival (docs/design.md §4.9 "The arrival"): a rank's GPU
 * reaches a collective no sooner than the collective's kernel is
 * submitted, and that happens inside the call, which a loaded host may
 * preempt for tens of milliseconds between the call's entry and the
 * submission.  The entry is all the NCCL probe sees (collectives are a hot
 * path: no return probe), so a collective of a thread is held until that
 * thread's next CUDA record says more:
 *   - the first submission on the collective's stream since its entry (an
 *     IG_CU_SUBMIT whose stream's previous submission came before the
 *     entry): the collective is fed at the submission's time;
 *   - anything else from that thread (a sync, a query, a submission on
 *     another stream or one that was not the first, another NCCL call), a
 *     hold past ARRIVE_HOLD_NS, or the end of the records: it is fed at its
 *     entry, a lower bound, as before.
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

/* Feeds held call @i, at @ts (0: its entry), and forgets it. */
static void release(struct ig_engine *e, uint32_t i, uint64_t ts)
{
	struct ig_peers *ps = e->peers;
	struct ig_nccl r = ps->held[i];

	if (ts > r.h.ts)
		r.h.ts = ts;
	memmove(&ps->held[i], &ps->held[i + 1],
		(ps->nheld - i - 1) * sizeof(ps->held[0]));
	ps->nheld--;
	deliver(e, &r);
}

/* Held calls older than the hold, at @now, are fed at their entry. */
static void expire(struct ig_engine *e, uint64_t now)
{
	struct ig_peers *ps = e->peers;

	while (ps->nheld && ps->held[0].h.ts + ARRIVE_HOLD_NS < now)
		release(e, 0, 0);
}

static int held_of(const struct ig_peers *ps, uint32_t tid)
{
	uint32_t i;

	for (i = 0; i < ps->nheld; i++)
		if (ps->held[i].h.tid == tid)
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
		release(e, (uint32_t)i, 0);
	if (r->kind != IG_NC_COLL || (r->flags & IG_NCF_GROUPED)) {
		deliver(e, r);
		return;
	}
	if (ps->nheld == IG_PEERS_ARRIVE_MAX)
		release(e, 0, 0);
	ps->held[ps->nheld++] = *r;	/* in entry order: the oldest first */
}

void ig_peers_arrive_cuda(struct ig_engine *e, const struct ig_cuda *c)
{
	struct ig_peers *ps = e->peers;
	const struct ig_nccl *h;
	int i;

	if (!ps || !ps->nheld)
		return;
	expire(e, c->h.ts);
	if ((i = held_of(ps, c->h.tid)) < 0)
		return;
	h = &ps->held[i];
	if (c->kind == IG_CU_API || c->kind == IG_CU_STREAM_NEW || c->kind == IG_CU_CTX)
		return;		/* the call's own work: events, contexts */
	release(e, (uint32_t)i,
		c->kind == IG_CU_SUBMIT && c->stream == h->stream &&
		c->last_submit < h->h.ts && c->h.ts >= h->h.ts ? c->h.ts : 0);
}

void ig_peers_arrive_flush(struct ig_engine *e)
{
	while (e->peers && e->peers->nheld)
		release(e, 0, 0);
}

uint64_t ig_peers_arrive_keep_from(const struct ig_engine *e)
{
	return e->peers && e->peers->nheld ? e->peers->held[0].h.ts : IG_NS_INF;
}
