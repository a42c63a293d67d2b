// SPDX-License-Identifier: GPL-2.0
/* The threads' states at the start (atattach.h, docs/design.md §5.14). */
#include <stdlib.h>
#include <string.h>

#include "engine/attrib/atattach.h"
#include "engine/attrib/walk.h"
#include "util/htab.h"

_Static_assert(!(IG_F_STATE_READ & (IG_F_IOWAIT | IG_F_UNINTERRUPTIBLE |
		 IG_F_WAKER_IRQ | IG_F_FUTEX_PLAIN | IG_F_FUTEX_BITSET |
		 IG_F_IN_CUDA_SYNC | IG_F_NET_INET6 | IG_F_DETAIL_NAME |
		 IG_F_PYLOCK | IG_F_WAKER_KERNEL | IG_F_FILE_KEY |
		 IG_F_AT_ATTACH)), "IG_F_STATE_READ is a record's flag");

#define ATA_GAPS	64

struct ata_gap {
	int device;
	uint64_t t0, ns;
};

struct ig_atattach {
	struct ig_htab bytid;	/* tid -> struct ig_tstate */
	uint64_t cause_ns[IG_C__MAX];
	struct ata_gap gaps[ATA_GAPS];
	uint32_t ngaps;
};

static struct ig_atattach *ata_of(struct ig_engine *e)
{
	if (!e->atattach) {
		e->atattach = calloc(1, sizeof(*e->atattach));
		if (e->atattach && ig_htab_init(&e->atattach->bytid, 64)) {
			free(e->atattach);
			e->atattach = NULL;
		}
	}
	return e->atattach;
}

void ig_atattach_on_rec(struct ig_engine *e, const struct ig_tstate *r)
{
	struct ig_atattach *a = ata_of(e);
	struct ig_tstate *s;

	if (!a || r->reason >= IG_R__MAX)
		return;
	s = ig_htab_get(&a->bytid, r->h.tid);
	if (!s) {
		if (!(s = malloc(sizeof(*s))) || ig_htab_put(&a->bytid, r->h.tid, s)) {
			free(s);
			return;
		}
	}
	*s = *r;
	s->wchan[sizeof(s->wchan) - 1] = '\0';
	s->detail.name[IG_NAME_LEN - 1] = '\0';
}

void ig_atattach_apply(struct ig_engine *e, struct ig_offcpu *o)
{
	const struct ig_tstate *s = ig_atattach_state(e, o->h.tid);

	if (!(o->flags & IG_F_AT_ATTACH))
		return;
	/* read after the thread ran again: it says nothing of this wait
	 * (the records come in time order, so one read later is not here
	 * yet; one read before the wait's start is an older one) */
	if (!s || s->read_ns > o->h.ts || s->read_ns < o->t_off)
		return;
	((struct ig_tstate *)s)->pad[0] = 1;	/* used: a wait explained */
	o->reason = s->reason;
	o->flags = (uint16_t)((o->flags & (IG_F_AT_ATTACH | IG_F_WAKER_IRQ |
					   IG_F_WAKER_KERNEL)) |
			      (s->oflags & ~IG_F_AT_ATTACH) | IG_F_STATE_READ);
	o->arg = s->arg;
	o->syscall = s->syscall;
	memcpy(&o->detail, &s->detail, sizeof(o->detail));
	/* a runnable thread was never woken */
	if (s->reason == IG_R_PREEMPT)
		o->t_wake = 0;
}

void ig_atattach_charge(struct walk *w, int c, uint64_t ns)
{
	struct ig_atattach *a = ata_of(w->e);

	w->recov_ns += ns;
	if (a && w->set == &w->e->attr.idle && c >= 0 && c < IG_C__MAX)
		a->cause_ns[c] += ns;
}

void ig_atattach_gap(struct ig_engine *e, int device, uint64_t t0, uint64_t ns)
{
	struct ig_atattach *a = ata_of(e);

	if (a && a->ngaps < ATA_GAPS)
		a->gaps[a->ngaps++] = (struct ata_gap){ device, t0, ns };
}

uint64_t ig_atattach_cause_ns(const struct ig_engine *e, int c)
{
	return e->atattach && c >= 0 && c < IG_C__MAX ? e->atattach->cause_ns[c] : 0;
}

uint64_t ig_atattach_gap_ns(const struct ig_engine *e, int device, uint64_t t0)
{
	uint32_t i;

	for (i = 0; e->atattach && i < e->atattach->ngaps; i++)
		if (e->atattach->gaps[i].device == device && e->atattach->gaps[i].t0 == t0)
			return e->atattach->gaps[i].ns;
	return 0;
}

const struct ig_tstate *ig_atattach_state(const struct ig_engine *e, uint32_t tid)
{
	return e->atattach ? ig_htab_get((struct ig_htab *)&e->atattach->bytid, tid) : NULL;
}

const struct ig_tstate *ig_atattach_next(const struct ig_engine *e, uint32_t *it)
{
	return e->atattach ? ig_htab_next(&e->atattach->bytid, it) : NULL;
}

void ig_atattach_free(struct ig_engine *e)
{
	struct ig_tstate *s;
	uint32_t it = 0;

	if (!e->atattach)
		return;
	while ((s = ig_htab_next(&e->atattach->bytid, &it)))
		free(s);
	ig_htab_free(&e->atattach->bytid);
	free(e->atattach);
	e->atattach = NULL;
}
