// SPDX-License-Identifier: GPL-2.0
/*
 * Collectives across ranks (docs/design.md §4.9).  Every rank calls a
 * communicator's collectives in the same order, so (communicator id,
 * sequence number) names one collective in every rank.  When every rank
 * of the communicator has launched it, the collective is split on each
 * GPU: a rank's GPU reaches it at its launch when nothing earlier was
 * pending on that GPU (proven), else no earlier than its launch (a lower
 * bound); the last rank's arrival ends everyone's peer wait.  Each wait
 * [arrival, last arrival) is charged to the last rank (peers_charge.c).
 *
 * A collective is settled once every rank's stream has drained after it
 * (its end: the rank's time in it runs to there) or it has waited long
 * enough for that.
 */
#include <stdlib.h>
#include <string.h>
#include "engine/peers/peers.h"
#include "stream/nccl_api.h"
#include "util/util.h"

struct peers_group {
	uint64_t id, seq;
	uint64_t last;		/* its newest rank's arrival */
	uint32_t nranks, npresent, nlaunched;
	struct peers_call c[];
};

/* Grouped calls wait for their thread's ncclGroupEnd. */
struct unlaunched {
	uint64_t key;
	uint32_t tid;
	int32_t rank;
};

/* A launched collective is settled this long after its last launch at
 * the latest, ends or not, and at most this many wait at once. */
#define PEERS_SETTLE_NS		(5ULL * IG_NSEC)
#define PEERS_WAITING_MAX	256
/* A collective whose other ranks never come (on another host, or not
 * followed) is dropped, its calls unmatched, once its newest arrival is
 * older than the threads' history window, which its walks would need
 * (looked for once a second); past PEERS_OPEN_MAX open at once, once it
 * is PEERS_SETTLE_NS old (looked for every PEERS_FULL_SWEEP_NS); and no
 * new one is held past twice PEERS_OPEN_MAX. */
#define PEERS_OPEN_MAX		4096
#define PEERS_SWEEP_NS		IG_NSEC
#define PEERS_FULL_SWEEP_NS	(IG_NSEC / 10)

struct peers_priv {
	struct ig_peers pub;
	struct unlaunched *ul;
	size_t nul, capul;
	uint64_t swept;		/* the last look for stale collectives */
	struct peers_group **waiting;	/* launched by all, ends awaited */
	size_t nwait, capwait;
};

struct ig_peers *ig_peers_get(struct ig_engine *e)
{
	struct peers_priv *p;

	if (e->peers)
		return e->peers;
	p = calloc(1, sizeof(*p));
	if (!p || ig_htab_init(&p->pub.groups, 64)) {
		free(p);
		return NULL;
	}
	e->peers = &p->pub;
	return e->peers;
}

static uint64_t key_of(uint64_t id, uint64_t seq)
{
	return ig_hash64(id ^ ig_hash64(seq + 0x9e3779b97f4a7c15ULL));
}

static struct peers_rank *rank_get(struct ig_peers *ps, uint32_t pid)
{
	uint32_t i;

	for (i = 0; i < ps->nranks; i++)
		if (ps->ranks[i].pid == pid)
			return &ps->ranks[i];
	if (ps->nranks == ps->caprank) {
		uint32_t cap = ps->caprank ? ps->caprank * 2 : 8;
		struct peers_rank *v = realloc(ps->ranks, cap * sizeof(*v));

		if (!v)
			return NULL;
		ps->ranks = v;
		ps->caprank = cap;
	}
	memset(&ps->ranks[ps->nranks], 0, sizeof(ps->ranks[0]));
	ps->ranks[ps->nranks].pid = pid;
	ps->ranks[ps->nranks].rank = -1;
	ps->ranks[ps->nranks].device = -1;
	return &ps->ranks[ps->nranks++];
}

static void union_add(struct peers_union *u, uint64_t t0, uint64_t t1)
{
	if (t1 <= t0)
		return;
	if (u->t1 && t0 <= u->t1) {
		u->t1 = ig_max64(u->t1, t1);
		return;
	}
	u->ns += u->t1 - u->t0;
	u->t0 = ig_max64(t0, u->t1);
	u->t1 = ig_max64(t1, u->t0);
}

static struct peers_dev *dev_get(struct ig_peers *ps, int ordinal, int32_t rank)
{
	uint32_t i;

	for (i = 0; i < ps->ndevs; i++)
		if (ps->devs[i].ordinal == ordinal) {
			if (ps->devs[i].rank != rank)
				ps->devs[i].rank = -2;
			return &ps->devs[i];
		}
	if (ps->ndevs == IG_MAX_DEVICES)
		return NULL;
	ps->devs[ps->ndevs] = (struct peers_dev){ .ordinal = ordinal, .rank = rank };
	return &ps->devs[ps->ndevs++];
}

/* A view's observer sees each rank's time in the collective. */
static void observe(struct ig_engine *e, const struct peers_call *c,
		    const struct peers_call *L, const struct peers_rank *R,
		    const struct peers_rank *RL, uint64_t A, uint64_t coll,
		    const uint64_t *ns)
{
	struct ig_obs_span o = {
		.kind = IG_OBS_COLLECTIVE, .device = c->device, .t0 = c->launch,
		.t1 = c->launch + coll, .tid = c->tid, .tgid = c->tgid,
		.wait_until = ig_max64(A, c->launch), .rank = R->rank,
		.late_rank = RL->rank, .late_pid = L->tgid, .late_tid = L->tid,
		.op = ig_nccl_op_name(c->api),
	};
	unsigned int order[IG_C__MAX];
	size_t n = ns ? ig_names_by_ns(ns, order) : 0, k;

	for (k = 0; k < n && k < IG_OBS_CAUSES; k++) {
		o.causes[k].name = ig_names_cause(order[k]);
		o.causes[k].ns = ns[order[k]];
	}
	o.ncauses = (unsigned int)k;
	e->obs.span(e->obs.ctx, &o);
}

/* Where each rank's stream first drained after the collective, where
 * known: the stream's first drain after its last collective's launch
 * (coll_end), while that collective is this one.  Its latest drain
 * (drained_at) is read only for a stream whose collectives are not
 * noted; it may be a later sync's, as the collectives are settled at the
 * next NCCL record, which comes after the next step's syncs. */
static bool ends(struct ig_engine *e, struct peers_group *g)
{
	bool all = true;
	uint32_t i;

	for (i = 0; i < g->nranks; i++) {
		struct peers_call *c = &g->c[i];
		struct ig_stream *s;

		if (c->end)	/* seen, or none to be seen (IG_NS_INF) */
			continue;
		s = ig_tasks_stream_find(e, c->tgid, c->stream);
		if (s && s->coll_at == c->launch) {
			if (s->coll_end > c->launch)
				c->end = s->coll_end;
			else
				all = false;
		} else if (s && s->drained_at > c->launch) {
			c->end = s->drained_at;
		} else {
			all = false;
		}
	}
	return all;
}

/* The last arrival: the last launch.  A GPU still busy with earlier work
 * may reach it later; the ends (first drain after it, less the transfer)
 * would bound that, but a sync's return lags the GPU by its wake-up, which
 * on a loaded host is as long as the waits measured: not used. */
static uint64_t last_arrival(struct peers_group *g, uint32_t *L)
{
	uint64_t A = 0;
	uint32_t i;

	for (i = 0; i < g->nranks; i++)
		if (g->c[i].launch > A) {
			A = g->c[i].launch;
			*L = i;
		}
	return A;
}

static void finalize(struct ig_engine *e, struct peers_group *g)
{
	struct ig_peers *ps = e->peers;
	uint32_t i, L = 0;
	uint64_t A;

	ig_peers_arrivals_before_ends(g->c, g->nranks);
	A = last_arrival(g, &L);
	struct peers_rank *RL = rank_get(ps, g->c[L].tgid);
	uint64_t ns[IG_C__MAX];
	bool any = false;
	struct peers_dev *d;

	for (i = 0; i < g->nranks; i++) {
		const struct peers_call *c = &g->c[i];
		struct peers_rank *R = rank_get(ps, c->tgid);
		uint64_t w = i == L || A < c->launch ? 0 : A - c->launch;
		uint64_t coll = c->end > c->launch && c->end != IG_NS_INF ?
				ig_max64(c->end - c->launch, w) : w;

		if (!R || !RL)
			continue;
		R->device = c->device;
		R->wait_ns += w;
		R->coll_ns += coll;
		if ((d = dev_get(ps, c->device, R->rank))) {
			union_add(&d->coll, c->launch, c->launch + coll);
			union_add(&d->wait, c->launch, c->launch + w);
		}
		if (w) {
			any = true;
			ps->wait_ns += w;
			RL->late_ns += w;
			ig_peers_charge(e, RL, &g->c[L], c, A, ns);
		}
		if (e->obs.span && coll)
			observe(e, c, &g->c[L], R, RL, A, coll, w ? ns : NULL);
	}
	if (RL && any) {
		RL->collectives++;
		RL->last_late = A;
	}
	ps->matched++;
}

/* Settles the collectives whose ends are known, or waited for long
 * enough (all of them with @force). */
static void settle(struct ig_engine *e, bool force)
{
	struct peers_priv *pp = (struct peers_priv *)e->peers;
	size_t i, j;

	for (i = j = 0; i < pp->nwait; i++) {
		struct peers_group *g = pp->waiting[i];
		uint64_t last = 0;
		uint32_t k;

		for (k = 0; k < g->nranks; k++)
			last = ig_max64(last, g->c[k].launch);
		if (ends(e, g) || force || pp->nwait - i > PEERS_WAITING_MAX ||
		    e->win.now > last + PEERS_SETTLE_NS) {
			finalize(e, g);
			free(g);
		} else {
			pp->waiting[j++] = g;
		}
	}
	pp->nwait = j;
}

static void try_finalize(struct ig_engine *e, uint64_t key, struct peers_group *g)
{
	struct peers_priv *pp = (struct peers_priv *)e->peers;

	if (g->npresent < g->nranks || g->nlaunched < g->nranks)
		return;
	ig_htab_del(&e->peers->groups, key);
	if (!ig_grow((void **)&pp->waiting, &pp->capwait, pp->nwait, sizeof(g))) {
		finalize(e, g);
		free(g);
		return;
	}
	pp->waiting[pp->nwait++] = g;
}

/* A rank launched another collective on @stream: its earlier ones
 * without an end seen get none (a drain now would be of both). */
static void no_end_after(struct ig_peers *ps, uint32_t tgid, uint64_t stream)
{
	struct peers_priv *pp = (struct peers_priv *)ps;
	size_t i;
	uint32_t k;

	for (i = 0; i < pp->nwait; i++)
		for (k = 0; k < pp->waiting[i]->nranks; k++) {
			struct peers_call *c = &pp->waiting[i]->c[k];

			if (c->tgid == tgid && c->stream == stream && !c->end)
				c->end = IG_NS_INF;
		}
}

static void launched(struct ig_engine *e, struct peers_group *g,
		     struct peers_call *c, uint64_t ts)
{
	struct peers_rank *R = rank_get(e->peers, c->tgid);

	no_end_after(e->peers, c->tgid, c->stream);
	c->launch = ts;
	if (e->peers->arrive_lo && e->peers->arrive_tid == c->tid)
		c->launch_lo = e->peers->arrive_lo;
	if (R) {
		c->prev_launch = R->last_launch;
		R->last_launch = ts;
	}
	ig_peers_at_launch(e, c);
	g->nlaunched++;
}

/* Rank slot @idx of @nranks in collective (@id, @seq), made if new; NULL
 * (counted unmatched) when it cannot be or is taken already. */
static struct peers_group *slot(struct ig_peers *ps, uint64_t id, uint64_t seq,
				uint32_t nranks, uint32_t idx, uint64_t ts)
{
	struct peers_group *g = ig_htab_get(&ps->groups, key_of(id, seq));

	if (!g) {
		/* held at most twice PEERS_OPEN_MAX, whatever the rate */
		if (ps->groups.n >= 2 * PEERS_OPEN_MAX) {
			ps->unmatched++;
			return NULL;
		}
		g = calloc(1, sizeof(*g) + nranks * sizeof(g->c[0]));
		if (!g || ig_htab_put(&ps->groups, key_of(id, seq), g)) {
			free(g);
			ps->unmatched++;
			return NULL;
		}
		g->id = id;
		g->seq = seq;
		g->nranks = nranks;
	}
	if (g->id != id || g->seq != seq || g->nranks != nranks ||
	    idx >= nranks || g->c[idx].present) {
		ps->unmatched++;
		return NULL;
	}
	g->npresent++;
	g->c[idx].present = true;
	g->last = ig_max64(g->last, ts);
	return g;
}

/* A held call of an inferred communicator (peers_infer.c), launched, its
 * place on the GPU at its launch noted then. */
static void add_held(struct ig_engine *e, const struct ig_infer_held *h)
{
	/* a grouped call not launched yet arrives now */
	struct peers_group *g = slot(e->peers, h->id, h->seq, h->nranks, h->idx,
				     h->c.launch ? h->c.launch : e->win.now);
	struct peers_rank *R = rank_get(e->peers, h->c.tgid);

	if (!g)
		return;
	g->c[h->idx] = h->c;
	g->c[h->idx].present = true;
	g->nlaunched++;
	if (R && h->c.launch > R->last_launch)
		R->last_launch = h->c.launch;
	try_finalize(e, key_of(h->id, h->seq), g);
}

static void on_coll(struct ig_engine *e, struct ig_peers *ps, const struct ig_nccl *r)
{
	struct peers_priv *pp = (struct peers_priv *)ps;
	struct peers_group *g;
	struct peers_call *c;
	struct peers_rank *R;
	struct ig_nccl tr;
	struct ig_infer_held h;

	ps->calls++;
	/* the rank, also for a window that did not see the creation (or a
	 * communicator created before tracing: its rank alone, if known) */
	if (r->rank >= 0 && (R = rank_get(ps, r->h.tgid)) &&
	    (r->nranks > R->comm_size || (!r->id && R->rank < 0))) {
		R->rank = r->rank;
		R->comm_size = r->nranks > 0 ? r->nranks : 0;
	}
	if (!r->id) {	/* created before the probes: peers_infer.c */
		if (!ig_peers_infer_coll(e, r, &tr)) {
			ps->no_id++;
			while (ig_peers_infer_next(e, &h))
				add_held(e, &h);
			return;
		}
		r = &tr;
	}
	if (!r->id || r->nranks <= 0 || r->nranks > IG_PEERS_MAX_RANKS ||
	    r->rank < 0 || r->rank >= r->nranks || !r->seq) {
		ps->no_id++;
		return;
	}
	/* evidence for ranks of its communicator here without its id */
	if (!(r->flags & IG_NCF_INFERRED))
		ig_peers_infer_known(e, r);
	if (!(g = slot(ps, r->id, r->seq, (uint32_t)r->nranks, (uint32_t)r->rank, r->h.ts)))
		return;
	c = &g->c[r->rank];
	c->tid = r->h.tid;
	c->tgid = r->h.tgid;
	c->rank = r->flags & IG_NCF_INFERRED ? -1 : r->rank;
	c->stream = r->stream;
	c->api = r->api;
	c->bytes = ig_nccl_bytes(r);
	if (r->flags & IG_NCF_GROUPED) {
		struct unlaunched *u;

		if (!ig_grow((void **)&pp->ul, &pp->capul, pp->nul, sizeof(*u))) {
			launched(e, g, c, r->h.ts);
		} else {
			u = &pp->ul[pp->nul++];
			u->key = key_of(r->id, r->seq);
			u->tid = r->h.tid;
			u->rank = r->rank;
		}
	} else {
		launched(e, g, c, r->h.ts);
	}
	try_finalize(e, key_of(r->id, r->seq), g);
}

static void on_group_end(struct ig_engine *e, struct ig_peers *ps, const struct ig_nccl *r)
{
	struct peers_priv *pp = (struct peers_priv *)ps;
	size_t i, j;

	for (i = j = 0; i < pp->nul; i++) {
		struct unlaunched u = pp->ul[i];
		struct peers_group *g;

		if (u.tid != r->h.tid) {
			pp->ul[j++] = u;
			continue;
		}
		g = ig_htab_get(&ps->groups, u.key);
		if (!g || g->c[u.rank].launch)
			continue;
		launched(e, g, &g->c[u.rank], r->h.ts);
		try_finalize(e, u.key, g);
	}
	pp->nul = j;
}

static void drop_stale(struct ig_engine *e)
{
	struct peers_priv *pp = (struct peers_priv *)e->peers;
	struct ig_htab *h = &pp->pub.groups;
	bool full = h->n > PEERS_OPEN_MAX;
	uint64_t now = e->win.now, age = full ? PEERS_SETTLE_NS : e->window_ns;
	struct ig_htab_sweep s;
	struct ig_htab_kv *kv;

	if (!h->n || now < pp->swept + (full ? PEERS_FULL_SWEEP_NS : PEERS_SWEEP_NS))
		return;
	pp->swept = now;
	ig_htab_sweep_start(h, &s);
	while ((kv = ig_htab_sweep_next(h, &s))) {
		struct peers_group *g = kv->val;

		if (g->last + age > now)
			continue;
		pp->pub.unmatched += g->npresent;
		pp->pub.dropped++;
		ig_htab_sweep_del(h, &s);
		free(g);
	}
}

void ig_peers_feed(struct ig_engine *e, const struct ig_nccl *r)
{
	struct ig_peers *ps = ig_peers_get(e);
	struct peers_rank *R;

	if (!ps)
		return;
	if (((struct peers_priv *)ps)->nwait)
		settle(e, false);
	drop_stale(e);
	switch (r->kind) {
	case IG_NC_COLL:
		on_coll(e, ps, r);
		break;
	case IG_NC_GROUP_END:
		on_group_end(e, ps, r);
		ig_peers_infer_group_end(e, r);
		break;
	case IG_NC_COMM:
	case IG_NC_COMM_INFO:
		/* a process's rank: in its largest communicator */
		R = rank_get(ps, r->h.tgid);
		if (R && r->rank >= 0 && r->nranks > R->comm_size) {
			R->rank = r->rank;
			R->comm_size = r->nranks;
		}
		break;
	}
}

void ig_peers_lib(struct ig_engine *e, const struct ig_libnccl *r)
{
	struct ig_peers *ps = ig_peers_get(e);

	if (!ps)
		return;
	if (r->is_static) {
		ps->static_libs++;
		memcpy(ps->static_path, r->path, sizeof(ps->static_path) - 1);
	} else if (r->nattached) {
		ps->libs++;
	}
}

void ig_peers_finish(struct ig_engine *e)
{
	struct ig_peers *ps = e->peers;
	uint32_t it = 0;
	struct peers_group *g;
	struct ig_infer_held h;

	if (!ps)
		return;
	ig_peers_infer_finish(e);
	while (ig_peers_infer_next(e, &h))
		add_held(e, &h);
	settle(e, true);
	while ((g = ig_htab_next(&ps->groups, &it)))
		ps->unmatched += g->npresent;
}

static uint64_t group_first(const struct peers_group *g, uint64_t keep)
{
	uint32_t k;

	for (k = 0; k < g->nranks; k++) {
		if (g->c[k].launch && g->c[k].launch < keep)
			keep = g->c[k].launch;
		/* a late rank's work queued late is walked from there */
		if (g->c[k].waited_pend && g->c[k].waited_pend < keep)
			keep = g->c[k].waited_pend;
	}
	return keep;
}

uint64_t ig_peers_keep_from(const struct ig_engine *e)
{
	const struct peers_priv *pp = (const struct peers_priv *)e->peers;
	uint64_t keep = IG_NS_INF;
	uint32_t it = 0;
	const struct peers_group *g;
	size_t i;

	if (!pp)
		return keep;
	keep = ig_peers_infer_keep_from(e);
	for (i = 0; i < pp->nwait; i++)
		keep = group_first(pp->waiting[i], keep);
	while ((g = ig_htab_next(&pp->pub.groups, &it)))
		keep = group_first(g, keep);
	return keep;
}

void ig_peers_free(struct ig_engine *e)
{
	struct peers_priv *pp = (struct peers_priv *)e->peers;
	uint32_t it = 0;
	struct peers_group *g;

	if (!pp)
		return;
	while ((g = ig_htab_next(&pp->pub.groups, &it)))
		free(g);
	ig_htab_free(&pp->pub.groups);
	ig_peers_infer_free(e);
	free(pp->pub.ranks);
	free(pp->pub.local);
	free(pp->ul);
	for (it = 0; it < pp->nwait; it++)
		free(pp->waiting[it]);
	free(pp->waiting);
	free(pp);
	e->peers = NULL;
}
