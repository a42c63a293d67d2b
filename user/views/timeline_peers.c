// SPDX-License-Identifier: GPL-2.0
/*
 * Collectives in the timeline (docs/design.md §4.9, §7.8).  Each rank's
 * collectives go on a track of its own, "rank R collectives (pid P)": a
 * slice per collective and inside it the wait for peers, named by the late
 * rank and why it was late.  A wait that matters (IG_TIMELINE_PEER_SHARE of
 * the rank's time in the collective) starts a flow to a slice on the late
 * rank's process, "late: CAUSE" on its track "rank L late (pid P)", over
 * the time the waiting rank waited for it: the lateness the walk of the
 * late rank's launching thread explained (or its GPU's earlier work,
 * `late: peer_compute`).  At most IG_TIMELINE_PEER_FLOWS such flows are
 * written; those beyond are counted.
 */
#include <errno.h>
#include <stdio.h>
#include "views/timeline_build.h"
#include "views/timeline_int.h"

#define COLL_TRACK	0x2000u
#define LATE_TRACK	0x3000u

static void fail(struct ig_tlb *b, int err)
{
	if (err && !b->err)
		b->err = err;
}

/*
 * Process @pid's track among @t: its slot, -1 when none is left or on an
 * error.  A new one is numbered @base + slot and named "rank R WHAT (pid
 * P)" ("WHAT (pid P)" without a rank); with @tid, it is drawn under the
 * process's own track, declared first with that thread.
 */
static int pid_track(struct ig_tlb *b, struct tl_tracks *t, uint32_t base,
		     const char *what, int rank, uint32_t pid, uint32_t tid)
{
	struct ig_tl_device d = { 0 };
	char tname[64];
	uint32_t i;

	for (i = 0; i < t->n && t->pid[i] != pid; i++)
		;
	if (i < t->n)
		return (int)i;
	if (i == IG_TL_MAX_DEVS)
		return -1;
	if (tid) {
		fail(b, ig_timeline_declare(b, tid, pid));
		if (b->err)
			return -1;
		d.pid = pid;
	}
	t->pid[t->n++] = pid;
	if (rank >= 0)
		snprintf(tname, sizeof(tname), "rank %d %s (pid %u)", rank, what, pid);
	else
		snprintf(tname, sizeof(tname), "%s (pid %u)", what, pid);
	d.id = base + i;
	d.name = tname;
	fail(b, ig_perfetto_device(b->w, &d));
	return b->err ? -1 : (int)i;
}

/* The collectives track of @o's rank: its slot, -1 when none is left. */
static int coll_track(struct ig_tlb *b, const struct ig_obs_span *o)
{
	return pid_track(b, &b->coll, COLL_TRACK, "collectives", o->rank, o->tgid, 0);
}

/* The late rank's track under its process (declared with its launching
 * thread): its slot, -1 when none. */
static int late_track(struct ig_tlb *b, const struct ig_obs_span *o)
{
	if (!o->late_pid)
		return -1;
	return pid_track(b, &b->late_tracks, LATE_TRACK, "late", o->late_rank, o->late_pid,
			 o->late_tid ? o->late_tid : o->late_pid);
}

/*
 * Where a late slice over [*t0, t1) may go on @l so that its slices nest:
 * one ending where the newest ones end nests in them, starting no earlier
 * than those before them ended; one ending later starts a new run there.
 * False when it would end before (collectives settled out of order).
 */
static bool late_place(struct tl_late *l, uint64_t *t0, uint64_t t1)
{
	if (t1 < l->end)
		return false;
	if (t1 > l->end) {
		l->floor = l->end;
		l->end = t1;
	}
	if (*t0 < l->floor)
		*t0 = l->floor;
	return *t0 < t1;
}

/* The late rank's slice the wait's flow @id ends on. */
static void late_slice(struct ig_tlb *b, const struct ig_obs_span *o, int slot,
		       uint64_t t0, uint64_t id, const char *cause)
{
	struct ig_tl_annot a[2 + IG_OBS_CAUSES];
	struct ig_tl_slice s = { .kind = IG_TL_BUSY, .device = LATE_TRACK + (uint32_t)slot,
				 .ts = t0, .dur = o->wait_until - t0, .annots = a,
				 .flow_in = &id, .n_flow_in = 1 };
	char name[64];
	unsigned int i, n = 0;

	snprintf(name, sizeof(name), "late: %s", cause);
	s.name = name;
	if (o->rank >= 0)
		a[n++] = (struct ig_tl_annot){ .name = "waiting_rank", .type = IG_TL_INT,
					       .i = o->rank };
	a[n++] = (struct ig_tl_annot){ .name = "waiting_pid", .type = IG_TL_UINT, .u = o->tgid };
	for (i = 0; i < o->ncauses; i++)
		a[n++] = (struct ig_tl_annot){ .name = o->causes[i].name, .type = IG_TL_UINT,
					       .u = o->causes[i].ns };
	s.n_annots = n;
	fail(b, ig_perfetto_slice(b->w, &s));
}

void ig_timeline_collective(struct ig_tlb *b, const struct ig_obs_span *o)
{
	const char *cause = o->ncauses ? o->causes[0].name : "unknown";
	struct ig_tl_slice s = { .kind = IG_TL_BUSY, .ts = o->t0, .dur = o->t1 - o->t0,
				 .name = o->op ? o->op : "collective" };
	struct ig_tl_annot a[1 + IG_OBS_CAUSES];
	uint64_t wait, id = 0, lt0 = o->t0;
	int slot = coll_track(b, o), ls = -1;
	unsigned int i, n = 0;
	char name[96];

	if (slot < 0 || b->err)
		return;
	s.device = COLL_TRACK + (uint32_t)slot;
	fail(b, ig_perfetto_slice(b->w, &s));
	if (b->err || o->wait_until <= o->t0)
		return;
	wait = o->wait_until - o->t0;
	if (o->late_rank >= 0)
		snprintf(name, sizeof(name), "waiting for rank %d: %s", o->late_rank, cause);
	else
		snprintf(name, sizeof(name), "waiting for pid %u: %s", o->late_pid, cause);
	a[n++] = (struct ig_tl_annot){ .name = "late_pid", .type = IG_TL_UINT, .u = o->late_pid };
	for (i = 0; i < o->ncauses && n < 1 + IG_OBS_CAUSES; i++)
		a[n++] = (struct ig_tl_annot){ .name = o->causes[i].name,
					       .type = IG_TL_UINT, .u = o->causes[i].ns };
	/* a wait that matters flows to the late rank's lateness */
	if (o->ncauses && wait >= IG_TIMELINE_PEER_SHARE * (double)(o->t1 - o->t0)) {
		if (b->peer_flows >= IG_TIMELINE_PEER_FLOWS)
			b->peer_flows_left++;
		else if ((ls = late_track(b, o)) >= 0 &&
			 late_place(&b->late[ls], &lt0, o->wait_until))
			id = ++b->next_flow;
	}
	s.ts = o->t0;
	s.dur = wait;
	s.name = name;
	s.annots = a;
	s.n_annots = n;
	s.flow_out = &id;
	s.n_flow_out = id != 0;
	fail(b, ig_perfetto_slice(b->w, &s));
	/* after the wait's slice: at its start or later, the flow's end
	 * comes after its start in the trace's order */
	if (id && !b->err) {
		late_slice(b, o, ls, lt0, id, cause);
		b->peer_flows++;
	}
}
