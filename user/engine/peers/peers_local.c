// SPDX-License-Identifier: GPL-2.0
/*
 * What one host knows of its ranks' collectives without their peers
 * (docs/design.md §4.9 "Across hosts", §7.5): for each process and
 * communicator, the collectives it launched, and for those whose end its
 * GPU was seen at (the first drain of the collective's stream after its
 * launch, before another collective of that communicator), the time from
 * launch to end.  A collective ends on every rank at about the same
 * instant (it cannot end before the last rank's GPU reached it, then
 * every rank transfers alike), so a rank's launch-to-end time is longer by
 * as much as it launched earlier than a later rank: comparing the ranks'
 * means needs no clock shared between hosts.  Matching is not needed:
 * every call of a communicator with an id counts.
 */
#include <stdlib.h>
#include <string.h>
#include "engine/peers/peers.h"
#include "engine/jsonval.h"
#include "util/util.h"

#define PEERS_LOCAL_MAX	1024	/* (process, communicator) pairs */

static struct peers_local *local_get(struct ig_peers *ps, uint32_t tgid,
				     uint64_t id)
{
	uint32_t i;

	for (i = 0; i < ps->nlocal; i++)
		if (ps->local[i].tgid == tgid && ps->local[i].id == id)
			return &ps->local[i];
	if (ps->nlocal == PEERS_LOCAL_MAX)
		return NULL;
	if (ps->nlocal == ps->caplocal) {
		uint32_t cap = ps->caplocal ? ps->caplocal * 2 : 8;
		struct peers_local *v = realloc(ps->local, cap * sizeof(*v));

		if (!v)
			return NULL;
		ps->local = v;
		ps->caplocal = cap;
	}
	memset(&ps->local[ps->nlocal], 0, sizeof(ps->local[0]));
	ps->local[ps->nlocal].tgid = tgid;
	ps->local[ps->nlocal].id = id;
	ps->local[ps->nlocal].device = -1;
	return &ps->local[ps->nlocal++];
}

/* The open collective of @L: timed when its stream drained after it. */
static void close_open(struct ig_engine *e, struct peers_local *L)
{
	struct ig_stream *s;

	if (!L->open_at)
		return;
	s = ig_tasks_stream_find(e, L->tgid, L->open_stream);
	/* coll_at: no other collective went to that stream since */
	if (s && s->coll_at == L->open_at && s->coll_end > L->open_at) {
		L->ended++;
		L->lead_ns += s->coll_end - L->open_at;
	}
	L->open_at = 0;
}

static void open_at(struct ig_engine *e, struct peers_local *L, uint64_t ts)
{
	struct ig_stream *s = ig_tasks_stream_find(e, L->tgid, L->open_stream);
	struct ig_process *p;

	close_open(e, L);
	if (L->device < 0 && (p = ig_tasks_process_find(e, L->tgid)))
		L->device = s && s->dev ? s->dev->ordinal : ig_gpu_proc_device(p);
	if (!s)		/* nothing of that stream seen yet: no end to see */
		return;
	s->coll_at = ts;
	s->coll_end = 0;
	L->open_at = ts;
}

static void on_coll(struct ig_engine *e, const struct ig_nccl *r)
{
	struct ig_peers *ps = e->peers;
	struct peers_local *L;

	if (!r->id || r->nranks <= 0 || r->rank < 0 || r->rank >= r->nranks ||
	    !(L = local_get(ps, r->h.tgid, r->id)))
		return;
	L->rank = r->rank;
	L->size = r->nranks;
	L->calls++;
	if (r->flags & IG_NCF_GROUPED) {
		/* launched at its thread's outermost ncclGroupEnd */
		close_open(e, L);
		L->group_tid = r->h.tid;
		L->group_stream = r->stream;
		return;
	}
	close_open(e, L);
	L->group_tid = 0;
	L->open_stream = r->stream;
	open_at(e, L, r->h.ts);
}

void ig_peers_local_inferred(struct ig_engine *e, const struct ig_nccl *r,
			     int32_t rank)
{
	struct peers_local *L;

	on_coll(e, r);
	L = local_get(e->peers, r->h.tgid, r->id);
	if (L) {
		L->inferred = true;
		L->rank = rank;
		L->size = 0;
	}
}

void ig_peers_local_member(struct ig_engine *e, uint32_t tgid, uint64_t id,
			   int32_t rank)
{
	struct peers_local *L = e->peers ? local_get(e->peers, tgid, id) : NULL;

	if (L) {
		L->inferred = true;
		L->rank = rank;
		L->size = 0;
	}
}

static void on_group_end(struct ig_engine *e, const struct ig_nccl *r)
{
	struct ig_peers *ps = e->peers;
	uint32_t i;

	for (i = 0; i < ps->nlocal; i++) {
		struct peers_local *L = &ps->local[i];

		if (!L->group_tid || L->group_tid != r->h.tid)
			continue;
		L->group_tid = 0;
		close_open(e, L);
		L->open_stream = L->group_stream;
		open_at(e, L, r->h.ts);
	}
}

void ig_peers_local_feed(struct ig_engine *e, const struct ig_nccl *r)
{
	if (!e->peers)
		return;
	if (r->kind == IG_NC_COLL)
		on_coll(e, r);
	else if (r->kind == IG_NC_GROUP_END)
		on_group_end(e, r);
}

void ig_peers_local_close(struct ig_engine *e, uint32_t tgid, uint64_t stream)
{
	uint32_t i;

	for (i = 0; e->peers && i < e->peers->nlocal; i++) {
		struct peers_local *L = &e->peers->local[i];

		if (L->tgid == tgid && L->open_at && L->open_stream == stream)
			close_open(e, L);
	}
}

void ig_peers_local_finish(struct ig_engine *e)
{
	uint32_t i;

	for (i = 0; e->peers && i < e->peers->nlocal; i++)
		close_open(e, &e->peers->local[i]);
}

/* collectives.by_communicator */
jo *ig_peers_local_json(const struct ig_engine *e)
{
	const struct ig_peers *ps = e->peers;
	jo *a = json_object_new_array();
	char id[24];
	uint32_t i;

	for (i = 0; ps && i < ps->nlocal; i++) {
		const struct peers_local *L = &ps->local[i];
		jo *o = json_object_new_object();

		snprintf(id, sizeof(id), "%016llx", (unsigned long long)L->id);
		json_object_object_add(o, "communicator", json_object_new_string(id));
		json_object_object_add(o, "rank", L->rank >= 0 ?
				       json_object_new_int(L->rank) : NULL);
		json_object_object_add(o, "size", L->size > 0 ?
				       json_object_new_int(L->size) : NULL);
		json_object_object_add(o, "inferred", json_object_new_boolean(L->inferred));
		json_object_object_add(o, "pid", json_object_new_int64(L->tgid));
		/* null also for a GPU nothing placed (its key, not a GPU) */
		json_object_object_add(o, "device", L->device >= 0 &&
				       !ig_gpu_dev_unknown(L->device) ?
				       json_object_new_int(L->device) : NULL);
		json_object_object_add(o, "calls", ju64(L->calls));
		json_object_object_add(o, "ended", ju64(L->ended));
		json_object_object_add(o, "launch_to_end_s", jsec(L->lead_ns));
		json_object_array_add(a, o);
	}
	return a;
}
