/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Collectives across ranks (docs/design.md §4.9): NCCL calls matched by
 * (communicator, sequence) over the ranks traced together, each rank's
 * time in a collective split into waiting for peers and transfer, and the
 * wait charged to the late rank with the cause of its lateness.
 *   peers.c         intake, matching and the split
 *   peers_arrive.c  a collective's arrival: its kernel's submission
 *   peers_charge.c  the late rank's GPU at its launch, and why it was late
 *   peers_report.c  the JSON and text views of it
 */
#ifndef IG_ENGINE_PEERS_H
#define IG_ENGINE_PEERS_H

#include "engine/model.h"
#include "engine/tasks.h"

#define IG_PEERS_MAX_RANKS	256	/* ranks of a communicator matched */
#define IG_PEERS_MAX_LATE	256	/* stragglers reported */
#define IG_PEERS_ARRIVE_MAX	64	/* collectives held for their submission */

/* What one rank did in one collective. */
struct peers_call {
	uint64_t launch;	/* the host launched it (0: grouped, not yet) */
	uint64_t launch_lo;	/* where launch is a return to a CPU after the
				 * submission: the submission (0: launch is) */
	uint64_t end;		/* its stream drained after it (0: not seen
				 * yet, IG_NS_INF: another came first) */
	uint64_t pend_since;	/* earlier work on its GPU pending since
				 * (0: none: the GPU reached it at launch) */
	uint64_t waited_from;	/* its launching thread last waited on its */
	uint64_t waited_to;	/* GPU in a sync: busy over [from, to), */
	uint64_t waited_pend;	/* that work pending since then */
	uint64_t prev_launch;	/* the rank's collective before this one */
	uint64_t stream;
	uint64_t bytes;
	uint32_t tid, tgid;
	int32_t rank;
	int device;
	uint32_t api;
	bool present;
};

/* One rank, as the report names it. */
struct peers_rank {
	int32_t rank;		/* in its largest communicator, -1: unknown */
	int32_t comm_size;	/* ... of that many ranks */
	uint32_t pid;
	int device;
	uint64_t late_ns;	/* other GPUs' wait charged to it */
	uint64_t wait_ns;	/* its GPU's wait for others */
	uint64_t coll_ns;	/* its GPU's time in collectives */
	uint64_t last_late;	/* when it was last late (ordering) */
	uint64_t last_launch;	/* of its newest collective */
	uint64_t collectives;	/* in which it was the late rank */
	uint64_t cause_ns[IG_C__MAX];
	struct ig_causeset walk;	/* scratch set for the walk */
};

/* A union of intervals, in one pass: intervals come about in time order
 * (collectives in launch order); one that starts before the last merged
 * run ended only extends it, never counts twice. */
struct peers_union {
	uint64_t ns;		/* committed */
	uint64_t t0, t1;	/* the run being merged */
};

/* The length of the union @u holds. */
static inline uint64_t ig_peers_union_ns(const struct peers_union *u)
{
	return u->ns + (u->t1 - u->t0);
}

/* A device's time in collectives and in peer wait: unions over its
 * ranks, which may share one device entry (several processes on one GPU,
 * or contexts created before the probes came). */
struct peers_dev {
	int ordinal;
	int32_t rank;		/* its one rank, -2: several */
	struct peers_union wait, coll;
};

/* One process's collectives of one communicator, as its host alone sees
 * them (peers_local.c): no peer needed. */
struct peers_local {
	uint64_t id;		/* communicator id */
	uint32_t tgid;
	int32_t rank, size;	/* in that communicator */
	int device;
	uint64_t calls;		/* launched */
	uint64_t ended;		/* ... whose end was seen */
	uint64_t lead_ns;	/* their launch-to-end time, summed */
	uint64_t open_at;	/* the last one's launch, its end awaited */
	uint64_t open_stream;
	uint32_t group_tid;	/* grouped: launched at this thread's group end */
	uint64_t group_stream;
	bool inferred;		/* its communicator inferred (peers_infer.c):
				 * the size unknown */
};

struct peers_infer;

/* A collective held for its arrival (peers_arrive.c): its entry, its
 * kernel's submission (0: not yet) and the thread's returns to a CPU
 * since (the last IG_PEERS_ARRIVE_INS). */
#define IG_PEERS_ARRIVE_INS	4
struct peers_held {
	struct ig_nccl r;
	uint64_t sub;
	uint64_t in[IG_PEERS_ARRIVE_INS];
	uint32_t nin;
};

struct ig_peers {
	struct peers_dev devs[IG_MAX_DEVICES];
	uint32_t ndevs;
	struct ig_htab groups;	/* hash(id, seq) -> struct peers_group */
	struct peers_rank *ranks;
	uint32_t nranks, caprank;
	uint64_t calls, matched, unmatched, no_id, grouped_pending;
	uint64_t dropped;	/* collectives whose other ranks never came */
	uint64_t wait_ns, unproven_wait_ns;
	uint64_t libs, static_libs;
	char static_path[128];
	struct peers_local *local;
	uint32_t nlocal, caplocal;
	struct peers_infer *infer;	/* peers_infer.c */
	uint64_t inferred_calls;	/* matched through an inferred communicator */
	uint32_t inferred_comms;
	/* peers_arrive.c: collectives held until their thread's next call
	 * after the kernel's submission (one per thread, the oldest entry
	 * first) */
	struct peers_held held[IG_PEERS_ARRIVE_MAX];
	uint32_t nheld;
	/* the call being fed: its thread, and its entry or submission
	 * where its arrival (its time) was taken later (0: none), a lower
	 * bound for what its arrival must not refute */
	uint32_t arrive_tid;
	uint64_t arrive_lo;
};

/* The peers' state, made on first use (NULL: out of memory). */
struct ig_peers *ig_peers_get(struct ig_engine *e);

/* ---- peers_arrive.c ---- */
/* An NCCL record from the probes: a collective is held until its
 * thread's next CUDA record; the rest go on at once. */
void ig_peers_arrive_nccl(struct ig_engine *e, const struct ig_nccl *r);
/* A CUDA record, before the GPU model takes it: it may release a held
 * collective of its thread, at its time where it is the collective's
 * kernel's submission. */
void ig_peers_arrive_cuda(struct ig_engine *e, const struct ig_cuda *c);
/* An off-CPU record: its thread's return to a CPU, for its held call. */
void ig_peers_arrive_offcpu(struct ig_engine *e, const struct ig_offcpu *r);
/* The end of the records (or of a window's): every held call goes on. */
void ig_peers_arrive_flush(struct ig_engine *e);
/* No rank's part of a collective ends before every rank reached it: an
 * arrival taken at a return to a CPU (peers_arrive.c) later than a known
 * end of the collective's @n calls @c was a wait after the launch had
 * returned, and its submission stands. */
static inline void ig_peers_arrivals_before_ends(struct peers_call *c, uint32_t n)
{
	uint64_t first_end = IG_NS_INF;
	uint32_t i;

	for (i = 0; i < n; i++)
		if (c[i].end && c[i].end < first_end)
			first_end = c[i].end;
	for (i = 0; i < n; i++)
		if (c[i].launch_lo && c[i].launch > first_end)
			c[i].launch = c[i].launch_lo;
}
/* The oldest held call's entry (IG_NS_INF: none). */
uint64_t ig_peers_arrive_keep_from(const struct ig_engine *e);

void ig_peers_feed(struct ig_engine *e, const struct ig_nccl *r);
void ig_peers_lib(struct ig_engine *e, const struct ig_libnccl *r);
/* No more records: what never matched is counted so. */
void ig_peers_finish(struct ig_engine *e);
void ig_peers_free(struct ig_engine *e);
/* Thread history the unsettled collectives still need: from here (their
 * lateness is walked when they settle). */
uint64_t ig_peers_keep_from(const struct ig_engine *e);
/* The rank of a process, -1 if unknown. */
int32_t ig_peers_rank_of(const struct ig_engine *e, uint32_t pid);
/* A device's wait and collective time. */
void ig_peers_dev(const struct ig_engine *e, int ordinal, uint64_t *wait_ns,
		  uint64_t *coll_ns, int32_t *rank);
/* Stragglers, the latest (most waited for) first; returns how many (caller frees).
 * A rank is one when the others' GPUs waited for it at least
 * IG_PEERS_LATE_SHARE of a rank's mean time in collectives: in a balanced
 * job every rank is last now and then, by little. */
#define IG_PEERS_LATE_SHARE	0.10
size_t ig_peers_stragglers(const struct ig_engine *e, const struct peers_rank ***out);

/* ---- peers_infer.c ---- */
/* A record of ours, never the probes': a call of a communicator created
 * before the probes, its id and sequence inferred. */
#define IG_NCF_INFERRED	(1u << 31)
/* A call without a communicator id: true when its communicator has been
 * inferred, with the call as the matcher takes it in @out; false when it
 * is held as evidence (counted without a communicator). */
bool ig_peers_infer_coll(struct ig_engine *e, const struct ig_nccl *r,
			 struct ig_nccl *out);
/* A held call of a communicator just inferred, for the matcher: a
 * launched call @c (its place on the GPU at its launch already noted), as
 * rank slot @idx of @nranks in collective (@id, @seq).  False: none left. */
struct ig_infer_held {
	uint64_t id, seq;
	uint32_t nranks, idx;
	struct peers_call c;
};
bool ig_peers_infer_next(struct ig_engine *e, struct ig_infer_held *out);
/* The trace ended: the communicators that agree now, waiting for another
 * rank to agree too, are grouped; their held calls follow from
 * ig_peers_infer_next(). */
void ig_peers_infer_finish(struct ig_engine *e);
/* A call of a communicator whose creation the probes saw (an id, a
 * rank, a size): held as evidence while some of its ranks may be here
 * without the id, their communicator created before their probes came;
 * one that agrees with it joins it (peers_infer.c). */
void ig_peers_infer_known(struct ig_engine *e, const struct ig_nccl *r);
void ig_peers_infer_group_end(struct ig_engine *e, const struct ig_nccl *r);
uint64_t ig_peers_infer_keep_from(const struct ig_engine *e);
void ig_peers_infer_free(struct ig_engine *e);
/* One call of a communicator as the inference sees it. */
struct ig_infer_obs {
	uint64_t seq;		/* the process's own count of its calls */
	uint64_t sig;		/* op, bytes, root or peer, reduction */
	uint64_t launch;
	uint64_t end;		/* first drain after it, 0: not known */
	bool exact;		/* @end seen by a sync that waited for it, not
				 * only a bound on it */
};
#define IG_INFER_MIN_CALLS	8	/* calls whose ends agree ... */
#define IG_INFER_WINDOW		12	/* ... of the last so many with ends */
#define IG_INFER_END_NS		100000	/* ends within this, */
#define IG_INFER_END_MAX_NS	1000000	/* ... or up to this, */
#define IG_INFER_END_DIV	64	/* ... a 64th of the time since the
					 * call before, of each other */
#define IG_INFER_MAX_SHIFT	2	/* ranks' sequences apart at most */
/* Whether two processes' calls @a and @b (each in sequence order, @b's
 * sequence = @a's + *@k) are the same communicator's: see peers_infer.c. */
bool ig_peers_infer_pair(const struct ig_infer_obs *a, size_t na,
			 const struct ig_infer_obs *b, size_t nb, int *k);

/* ---- peers_local.c ---- */
/* An inferred communicator's call @r (peers_infer.c), its rank @rank
 * (-1: unknown). */
void ig_peers_local_inferred(struct ig_engine *e, const struct ig_nccl *r,
			     int32_t rank);
/* After ig_peers_feed (which makes e->peers): a collective or a group end. */
/* Process @tgid is rank @rank (-1: unknown) of inferred communicator @id,
 * whether or not a call of it follows. */
void ig_peers_local_member(struct ig_engine *e, uint32_t tgid, uint64_t id,
			   int32_t rank);
void ig_peers_local_feed(struct ig_engine *e, const struct ig_nccl *r);
/* Another collective of @tgid goes to @stream: the one open there is
 * timed now, before the stream forgets its end. */
void ig_peers_local_close(struct ig_engine *e, uint32_t tgid, uint64_t stream);
void ig_peers_local_finish(struct ig_engine *e);
/* ---- peers_charge.c ---- */
/* Where @c's GPU stood at its launch: since when earlier work was pending
 * there, and the launching thread's last sync that waited on it. */
void ig_peers_at_launch(struct ig_engine *e, struct peers_call *c);
/* The late rank @L made @r wait over [r->launch, t1): why, into @ns (per
 * enum ig_cause) and @R's (L's) totals. */
void ig_peers_charge(struct ig_engine *e, struct peers_rank *R,
		  const struct peers_call *L, const struct peers_call *r,
		  uint64_t t1, uint64_t *ns);

/* ---- peers_report.c ---- */
#include <json-c/json.h>
/* gpu.devices[]: rank, collective_s, peer_wait_s. */
void ig_peers_json_dev(const struct ig_engine *e, struct json_object *o, int ordinal);
/* Top-level "stragglers". */
struct json_object *ig_peers_json_stragglers(const struct ig_engine *e);
/* collectives.by_communicator (peers_local.c) */
struct json_object *ig_peers_local_json(const struct ig_engine *e);
/* Top-level "collectives": what was matched, what was not. */
struct json_object *ig_peers_json_summary(const struct ig_engine *e);
uint64_t ig_peers_wait_ns(const struct ig_engine *e);
/* The text report's "Waiting for peers" section (nothing without NCCL). */
void ig_peers_text(FILE *out, const struct ig_engine *e);

#endif
