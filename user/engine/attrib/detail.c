// SPDX-License-Identifier: GPL-2.0
/*
 * Detail accounting: each cause keeps its time and a bounded table of the
 * files, threads, peers... that make it up; a full table gives the slot of
 * its smallest entry to a new key and counts the error it inherits.
 */
#include <string.h>
#include "engine/attrib/attrib.h"

static bool det_match(const struct ig_detail *d, uint8_t kind, uint32_t tid,
		      uint32_t pid, uint64_t k, const char *name)
{
	return d->kind == kind && d->tid == tid && d->pid == pid &&
	       d->k == k && !strncmp(d->name, name, sizeof(d->name));
}

/*
 * Top details with bounded memory: when the table is full a new key takes
 * the smallest entry's place and inherits its time as error (space-saving),
 * so a key that matters cannot be crowded out by many small ones.
 */
static struct ig_detail *det_get(struct ig_cause_acc *c, uint8_t kind,
				 uint32_t tid, uint32_t pid, uint64_t k,
				 const char *name)
{
	struct ig_detail *d, *min = NULL;
	uint32_t i;
	uint64_t inherit = 0;

	if (!name)
		name = "";
	for (i = 0; i < c->ndet; i++) {
		d = &c->det[i];
		if (det_match(d, kind, tid, pid, k, name))
			return d;
		if (!min || d->ns < min->ns)
			min = d;
	}
	if (c->ndet < IG_DET_CAP) {
		d = &c->det[c->ndet++];
	} else {
		d = min;
		inherit = min->ns;
		c->evicted++;
	}
	memset(d, 0, sizeof(*d));
	d->kind = kind;
	d->tid = tid;
	d->pid = pid;
	d->k = k;
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->ns = inherit;
	d->err = inherit;
	return d;
}

struct ig_detail *ig_detail_add(struct ig_cause_acc *c, uint8_t kind,
				 uint32_t tid, uint32_t pid, uint64_t k,
				 const char *name, uint64_t ns)
{
	struct ig_detail *d = det_get(c, kind, tid, pid, k, name);

	d->ns += ns;
	d->count++;
	return d;
}

struct ig_cause_acc *ig_detail_cause_add(struct walk *w, enum ig_cause c,
					 uint64_t ns)
{
	w->set->c[c].ns += ns;
	w->set->total_ns += ns;
	if (w->dev_ns)
		w->dev_ns[c] += ns;
	if (w->obs)
		w->obs->ns[c] += ns;
	if (w->segs)
		w->seg_ns[c] += ns;
	if (w->recov)
		ig_atattach_charge(w, c, ns);
	ig_stacks_on_charge(w, c, ns);
	return &w->set->c[c];
}

void ig_detail_unknown(struct walk *w, uint64_t ns, const char *why)
{
	ig_detail_add(ig_detail_cause_add(w, IG_C_UNKNOWN, ns), IG_D_WHY, 0, 0, 0, why, ns);
}
