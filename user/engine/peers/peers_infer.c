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
 */
#include <stdlib.h>
#include <string.h>
#include "engine/peers/peers.h"
#include "stream/nccl_api.h"
#include "util/util.h"

#define INFER_RING	64	/* calls held per communicator */
#define INFER_COMMS	256	/* communicators without an id, held */
#define INFER_HOLD_NS	(10ULL * IG_NSEC)	/* held this long at most */
#define INFER_MEMBERS	IG_PEERS_MAX_RANKS
#define INFER_SETTLE_CALLS	4	/* grouped this many calls after it agreed */
#define INFER_SETTLE_MAX	32	/* ... or up to this many, while a process
					 * whose calls look alike has not agreed */
#define INFER_GENS	16	/* ranks joining an inferred communicator later */

struct infer_call {
	struct ig_infer_obs o;
	struct peers_call c;	/* launch 0: grouped, not launched yet */
	bool ended;		/* o.end final (0: none will be seen) */
};

struct infer_comm {
	uint32_t tgid;
	bool has_id;		/* the probes saw it created: evidence only,
				 * its calls go to the matcher as they are */
	int32_t rank;		/* as the probes know it, -1: unknown */
	uint64_t comm;		/* the process's handle */
	uint64_t last_seq;	/* of its newest call */
	uint64_t prev_launch;
	uint64_t paired_at;	/* its seq when it first agreed with another */
	uint64_t paired_ts;	/* ... and when */
	struct infer_call ring[INFER_RING];	/* by seq % INFER_RING */
	int group;		/* index in groups, -1: none yet */
	uint32_t member;	/* its slot there */
	int64_t shift;		/* its seq + shift: the group's */
	int64_t k;		/* scratch: offset from the component's first */
	bool seen;		/* scratch: in the component */
};

/* An inferred communicator; a rank that agrees with its members later
 * joins from a sequence on (a generation of one more size). */
struct infer_group {
	uint64_t id;
	uint32_t n;		/* ranks now (a known group's: its size) */
	bool known;		/* a communicator the probes saw created */
	uint32_t nid;		/* ... the processes that have its id */
	uint64_t taken[(IG_PEERS_MAX_RANKS + 63) / 64];	/* its rank slots held */
	uint32_t ngen;
	struct {
		int64_t from;	/* the group's sequence from which */
		uint32_t n;	/* ... it has this many ranks */
	} gen[INFER_GENS];
};

struct peers_infer {
	struct infer_comm *c;
	size_t nc, capc;
	struct ig_infer_held *held;	/* for the matcher, from the first */
	size_t nheld, capheld, next;
	struct infer_group *g;
	size_t ng, capg;
	bool finishing;		/* the trace ended: group what agrees now */
};

/* ---- the rule ---- */

static bool known(uint64_t end)
{
	return end && end != IG_NS_INF;
}

/*
 * Under offset k, the calls both hold: every pair of the same signature;
 * where both ends were seen, neither before the other's launch (a
 * collective cannot end on any rank before every rank launched it); and,
 * of the last IG_INFER_WINDOW pairs with both ends exact (seen by syncs
 * that waited), at least IG_INFER_MIN_CALLS with ends within a 64th of
 * the time since a's call before, IG_INFER_END_NS to IG_INFER_END_MAX_NS
 * (every rank's part ends within the interconnect's latency, but a
 * loaded host wakes syncs late: docs/design.md §4.9).  Returns how many agreed, 0
 * when refuted or too few.  Without @closeness, the ends' closeness is
 * not asked: how many pairs of the same signature, none refuted.
 */
static size_t agreeing(const struct ig_infer_obs *a, size_t na,
		       const struct ig_infer_obs *b, size_t nb, int k,
		       bool closeness)
{
	size_t i, j = nb, both = 0, close = 0, matched = 0;

	for (i = na; i-- > 0;) {
		uint64_t want = a[i].seq + (uint64_t)(int64_t)k, d, tol;

		while (j > 0 && b[j - 1].seq > want)
			j--;
		if (j == 0)
			break;
		if (b[j - 1].seq != want)
			continue;
		if (a[i].sig != b[j - 1].sig)
			return 0;
		matched++;
		if (!known(a[i].end) || !known(b[j - 1].end))
			continue;
		if (ig_min64(a[i].end, b[j - 1].end) <
		    ig_max64(a[i].launch, b[j - 1].launch))
			return 0;
		/* a sync that returned at once bounds the end only */
		if (!a[i].exact || !b[j - 1].exact)
			continue;
		d = a[i].end > b[j - 1].end ? a[i].end - b[j - 1].end
					    : b[j - 1].end - a[i].end;
		tol = i && a[i - 1].seq + 1 == a[i].seq &&
		      a[i].launch > a[i - 1].launch ?
		      (a[i].launch - a[i - 1].launch) / IG_INFER_END_DIV : 0;
		tol = ig_min64(ig_max64(tol, IG_INFER_END_NS), IG_INFER_END_MAX_NS);
		if (++both <= IG_INFER_WINDOW)
			close += d <= tol;
	}
	if (!closeness)
		close = matched;
	return close >= IG_INFER_MIN_CALLS ? close : 0;
}

/* Whether @a and @b could be one communicator's under some offset: the
 * signatures of IG_INFER_MIN_CALLS calls both hold agree and no end
 * refutes it, whatever their ends' closeness. */
static bool alike(const struct ig_infer_obs *a, size_t na,
		  const struct ig_infer_obs *b, size_t nb)
{
	int k;

	for (k = -IG_INFER_MAX_SHIFT; k <= IG_INFER_MAX_SHIFT; k++)
		if (agreeing(a, na, b, nb, k, false))
			return true;
	return false;
}

bool ig_peers_infer_pair(const struct ig_infer_obs *a, size_t na,
			 const struct ig_infer_obs *b, size_t nb, int *k)
{
	int found = 0, kk;

	for (kk = -IG_INFER_MAX_SHIFT; kk <= IG_INFER_MAX_SHIFT; kk++)
		if (agreeing(a, na, b, nb, kk, true)) {
			*k = kk;
			found++;
		}
	return found == 1;	/* two offsets agreeing: no telling which */
}

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

	ends_of_process(e, pi, C->tgid);	/* before the stream's next */
	x->c.launch = x->o.launch = ts;
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

/* @C's held calls, oldest first, those launched within the hold. */
static size_t held(const struct infer_comm *C, uint64_t now,
		   struct ig_infer_obs *o, const struct infer_call **x)
{
	uint64_t s0 = C->last_seq > INFER_RING ? C->last_seq - INFER_RING + 1 : 1;
	size_t n = 0;
	uint64_t s;

	for (s = s0; s <= C->last_seq; s++) {
		const struct infer_call *y = &C->ring[s % INFER_RING];

		if (y->o.seq != s || !y->c.launch ||
		    y->c.launch + INFER_HOLD_NS < now)
			continue;
		o[n] = y->o;
		if (!y->ended)
			o[n].end = 0;
		else if (!y->o.end)
			o[n].end = IG_NS_INF;	/* none seen: no evidence */
		if (x)
			x[n] = y;
		n++;
	}
	return n;
}

static bool pair(struct ig_engine *e, const struct infer_comm *A,
		 const struct infer_comm *B, int *k)
{
	struct ig_infer_obs a[INFER_RING], b[INFER_RING];
	size_t na = held(A, e->win.now, a, NULL), nb = held(B, e->win.now, b, NULL);

	return na >= IG_INFER_MIN_CALLS && nb >= IG_INFER_MIN_CALLS &&
	       ig_peers_infer_pair(a, na, b, nb, k);
}

/* ---- the inferred communicator ---- */

/* Its held calls into the matcher, from the first sequence every member
 * still holds. */
static void replay(struct ig_engine *e, struct peers_infer *pi,
		   const struct infer_group *G, struct infer_comm **m, uint32_t n)
{
	struct ig_infer_obs o[INFER_RING];
	const struct infer_call *x[INFER_RING];
	int64_t from = 1;
	uint32_t i;
	size_t j, nh;

	for (i = 0; i < n; i++) {
		ig_peers_local_member(e, m[i]->tgid, G->id, m[i]->rank);
		nh = held(m[i], e->win.now, o, x);
		if (nh && (int64_t)o[0].seq + m[i]->shift > from)
			from = (int64_t)o[0].seq + m[i]->shift;
	}
	for (i = 0; i < n; i++) {
		nh = held(m[i], e->win.now, o, x);
		for (j = 0; j < nh; j++) {
			struct peers_call c = x[j]->c;
			int64_t seq = (int64_t)o[j].seq + m[i]->shift;

			if (seq < from)
				continue;
			c.end = known(o[j].end) ? o[j].end : o[j].end ? IG_NS_INF : 0;
			c.rank = -1;
			if (!ig_grow((void **)&pi->held, &pi->capheld, pi->nheld,
				     sizeof(pi->held[0])))
				return;
			if (e->peers->no_id)
				e->peers->no_id--;
			e->peers->inferred_calls++;
			pi->held[pi->nheld++] = (struct ig_infer_held){
				.id = G->id, .seq = (uint64_t)seq, .nranks = G->n,
				.idx = m[i]->member, .c = c };
		}
	}
}

/* @A's component (the communicators not inferred yet that agree with it,
 * pairwise, transitively) and the inferred communicator it agrees with,
 * if any (*@gi, @A's sequence + *@shift_a is its).  False: refused (two
 * paths give one communicator two offsets, two of one process). */
static bool component(struct ig_engine *e, struct peers_infer *pi,
		      struct infer_comm *A, struct infer_comm **m, uint32_t *pn,
		      int *gi, int64_t *shift_a)
{
	uint32_t n = 0, i, done = 0;
	size_t j;
	int k;

	for (j = 0; j < pi->nc; j++)
		pi->c[j].seen = false;
	A->seen = true;
	A->k = 0;
	m[n++] = A;
	*gi = -1;
	while (done < n) {
		struct infer_comm *X = m[done++];

		for (j = 0; j < pi->nc; j++) {
			struct infer_comm *Y = &pi->c[j];

			if (Y->tgid == X->tgid || !pair(e, X, Y, &k))
				continue;
			if (Y->group >= 0) {
				/* seq_Y = seq_X + k; seq_X = seq_A + k_X */
				int64_t sa = k + Y->shift + X->k;

				if (*gi >= 0 && (*gi != Y->group || *shift_a != sa))
					return false;
				*gi = Y->group;
				*shift_a = sa;
				continue;
			}
			if (Y->seen) {
				if (Y->k != X->k + k)
					return false;
				continue;
			}
			for (i = 0; i < n && m[i]->tgid != Y->tgid; i++)
				;
			if (i < n || n == INFER_MEMBERS)
				return false;
			Y->seen = true;
			Y->k = X->k + k;
			m[n++] = Y;
		}
	}
	*pn = n;
	return true;
}

/* Whether @A's component @m (@n) can be made an inferred communicator
 * now: every process here whose calls look like @A's (one whose
 * communicator has an id among them) agrees, or
 * INFER_SETTLE_MAX calls or half the hold passed since @A first agreed.
 * A rank that joins later is matched only from then on, and its peers'
 * waits for it before are lost, so a rank whose exact ends are few yet
 * is given the time to show them. */
static bool settled(struct ig_engine *e, struct peers_infer *pi,
		    const struct infer_comm *A, struct infer_comm **m, uint32_t n)
{
	struct ig_infer_obs a[INFER_RING], y[INFER_RING];
	size_t na, ny, j;
	uint32_t i;

	if (pi->finishing || A->last_seq >= A->paired_at + INFER_SETTLE_MAX ||
	    e->win.now >= A->paired_ts + INFER_HOLD_NS / 2)
		return true;
	na = held(A, e->win.now, a, NULL);
	for (j = 0; j < pi->nc; j++) {
		const struct infer_comm *Y = &pi->c[j];

		/* one with an id too: the ranks that look like it may be
		 * its communicator's, whose id they would take */
		if (Y->group >= 0 && !Y->has_id)
			continue;
		for (i = 0; i < n && m[i]->tgid != Y->tgid; i++)
			;
		if (i < n)
			continue;	/* in it, or another of a member's */
		ny = held(Y, e->win.now, y, NULL);
		if (alike(a, na, y, ny))
			return false;
	}
	return true;
}

/* @m (@n) join inferred communicator @gi from the sequence after any of
 * its ranks' or theirs: a generation of more ranks.  What came before is
 * matched without them. */
static void join(struct peers_infer *pi, int gi, struct infer_comm **m,
		 uint32_t n, int64_t shift_a)
{
	struct infer_group *G = &pi->g[gi];
	int64_t from = 1;
	uint32_t i;
	size_t j;

	if (G->ngen == INFER_GENS || G->n + n > INFER_MEMBERS)
		return;
	for (j = 0; j < pi->nc; j++) {
		const struct infer_comm *C = &pi->c[j];

		if (C->group != gi)
			continue;
		for (i = 0; i < n && m[i]->tgid != C->tgid; i++)
			;
		if (i < n)
			return;	/* two of one process: refused */
		from = ig_max64(from, (int64_t)C->last_seq + C->shift + 1);
	}
	for (i = 0; i < n; i++)
		from = ig_max64(from, (int64_t)m[i]->last_seq + shift_a - m[i]->k + 1);
	for (i = 0; i < n; i++) {
		m[i]->group = gi;
		m[i]->member = G->n + i;
		m[i]->shift = shift_a - m[i]->k;
	}
	G->n += n;
	G->gen[G->ngen].from = from;
	G->gen[G->ngen++].n = G->n;
}

static bool slot_taken(const struct infer_group *G, uint32_t i)
{
	return G->taken[i / 64] & (1ULL << (i % 64));
}

static void slot_take(struct infer_group *G, uint32_t i)
{
	G->taken[i / 64] |= 1ULL << (i % 64);
}

/* @m (@n) join known group @gi (a communicator whose creation other
 * ranks' probes saw): each takes a rank slot no rank holds (its own rank
 * where the probes said it), and its held calls are matched, as those of
 * a new inferred communicator: the ranks with the id have theirs in the
 * matcher already. */
static void join_known(struct ig_engine *e, struct peers_infer *pi, int gi,
		       struct infer_comm **m, uint32_t n, int64_t shift_a)
{
	struct infer_group *G = &pi->g[gi];
	uint32_t i, slot[INFER_MEMBERS], free_at = 0;

	for (i = 0; i < n; i++) {
		if (m[i]->rank >= 0 && (uint32_t)m[i]->rank < G->n &&
		    !slot_taken(G, (uint32_t)m[i]->rank)) {
			slot[i] = (uint32_t)m[i]->rank;
		} else {
			while (free_at < G->n && slot_taken(G, free_at))
				free_at++;
			if (free_at == G->n)
				return;	/* more ranks than it has: refused */
			slot[i] = free_at;
		}
		slot_take(G, slot[i]);
	}
	for (i = 0; i < n; i++) {
		m[i]->group = gi;
		m[i]->member = slot[i];
		m[i]->shift = shift_a - m[i]->k;
	}
	e->peers->inferred_comms += !G->ngen;
	G->ngen = 1;
	replay(e, pi, G, m, n);
}

/* The communicators that agree with @A: a new inferred communicator, its
 * held calls matched, or ranks joining one. */
static void grow(struct ig_engine *e, struct peers_infer *pi,
		 struct infer_comm *A)
{
	struct infer_comm *m[INFER_MEMBERS];
	uint32_t n = 0, i;
	int64_t kmin = 0, shift_a = 0;
	uint64_t id = 0x1d1e9a95ULL;
	struct infer_group *G;
	int gi;

	if (!component(e, pi, A, m, &n, &gi, &shift_a))
		return;
	if (gi < 0 && !settled(e, pi, A, m, n))
		return;		/* another rank may agree yet */
	if (gi >= 0 && pi->g[gi].known) {
		join_known(e, pi, gi, m, n, shift_a);
		return;
	}
	if (gi >= 0) {
		join(pi, gi, m, n, shift_a);
		return;
	}
	if (n < 2 || !ig_grow((void **)&pi->g, &pi->capg, pi->ng, sizeof(*G)))
		return;
	for (i = 0; i < n; i++) {	/* the id: of its members, in any order */
		kmin = ig_min64(kmin, m[i]->k);
		id += ig_hash64(((uint64_t)m[i]->tgid << 32) ^ m[i]->comm);
	}
	id = ig_hash64(id);
	G = &pi->g[pi->ng];
	memset(G, 0, sizeof(*G));
	G->id = id ? id : 1;
	G->n = n;
	G->gen[0].from = INT64_MIN;
	G->gen[0].n = n;
	G->ngen = 1;
	for (i = 0; i < n; i++) {
		m[i]->group = (int)pi->ng;
		m[i]->member = i;
		/* seq_A + k_m aligns with seq_m: the group's is seq_m - k_m */
		m[i]->shift = -(m[i]->k - kmin);
	}
	pi->ng++;
	e->peers->inferred_comms++;
	replay(e, pi, G, m, n);
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
		grow(e, pi, C);
		return false;
	}
	for (j = 0; j < pi->nc && !C->paired_at; j++) {
		struct infer_comm *Y = &pi->c[j];

		if (Y->tgid != C->tgid && pair(e, C, Y, &k))
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
		    slot_taken(&pi->g[gi], (uint32_t)r->rank) ||
		    !(C = comm_get(pi, r->h.tgid, r->comm)))
			return;
		G = &pi->g[gi];
		C->has_id = true;
		C->group = gi;
		C->member = (uint32_t)r->rank;
		C->shift = 0;
		slot_take(G, (uint32_t)r->rank);
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
			grow(e, pi, &pi->c[i]);
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
