/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the inference of communicators created before tracing
 * (docs/design.md §4.9), shared by
 *   peers_infer.c  the evidence: each id-less communicator's last calls,
 *                  and the calls of an inferred one translated
 *   peers_group.c  the rule that two agree, and the ranks that agree
 *                  grown into an inferred communicator
 * peers_infer.c calls peers_group.c, never the other way.
 */
#ifndef IG_PEERS_INFER_INT_H
#define IG_PEERS_INFER_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "engine/peers/peers.h"

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

static inline bool ig_peers_slot_taken(const struct infer_group *G, uint32_t i)
{
	return G->taken[i / 64] & (1ULL << (i % 64));
}

static inline void ig_peers_slot_take(struct infer_group *G, uint32_t i)
{
	G->taken[i / 64] |= 1ULL << (i % 64);
}

/* ---- peers_group.c */
/* Whether @A and @B agree (ig_peers_infer_pair() on the calls each
 * holds), and under which sequence offset @k. */
bool ig_peers_group_pair(struct ig_engine *e, const struct infer_comm *A,
			 const struct infer_comm *B, int *k);
/* The communicators that agree with @A: a new inferred communicator, its
 * held calls matched, or ranks joining one. */
void ig_peers_group_grow(struct ig_engine *e, struct peers_infer *pi,
			 struct infer_comm *A);

#endif
