// SPDX-License-Identifier: GPL-2.0
/*
 * Communicators created before tracing (docs/design.md §4.9), inferred:
 * the rule that two processes' communicators are one
 * (ig_peers_infer_pair(), on the calls each holds), and the communicators
 * that agree grown into an inferred communicator of ours, or joining one,
 * their held calls replayed into the matcher.  The evidence they are
 * inferred from is peers_infer.c's (peers_infer_int.h).
 */
#include <stdlib.h>
#include <string.h>
#include "engine/peers/peers_infer_int.h"
#include "stream/nccl_api.h"
#include "util/util.h"

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

bool ig_peers_group_pair(struct ig_engine *e, const struct infer_comm *A,
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

			if (Y->tgid == X->tgid || !ig_peers_group_pair(e, X, Y, &k))
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
		    !ig_peers_slot_taken(G, (uint32_t)m[i]->rank)) {
			slot[i] = (uint32_t)m[i]->rank;
		} else {
			while (free_at < G->n && ig_peers_slot_taken(G, free_at))
				free_at++;
			if (free_at == G->n)
				return;	/* more ranks than it has: refused */
			slot[i] = free_at;
		}
		ig_peers_slot_take(G, slot[i]);
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
void ig_peers_group_grow(struct ig_engine *e, struct peers_infer *pi,
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
