// SPDX-License-Identifier: GPL-2.0
/*
 * The estimate's evidence (docs/design.md §4.10): launches from
 * IG_REC_LAUNCHES, the marks syncs and queries leave, the unresolved
 * spans, and the feeder stretches their walk gave a cause.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/estimate/est_int.h"
#include "engine/tasks.h"

/* Too much evidence for one report: all of it goes, and the estimate is
 * refused; the unresolved time is still counted. */
static void est_overflow(struct ig_est *s)
{
	uint32_t i;

	s->overflow = true;
	for (i = 0; i < s->ndev; i++) {
		struct est_dev *d = s->dev[i];

		free(d->l.v);
		free(d->m.v);
		free(d->u.v);
		free(d->z.v);
		d->l = (struct ig_vec){ .esz = d->l.esz };
		d->m = (struct ig_vec){ .esz = d->m.esz };
		d->u = (struct ig_vec){ .esz = d->u.esz };
		d->z = (struct ig_vec){ .esz = d->z.esz };
	}
	free(s->segs.v);
	s->segs = (struct ig_vec){ .esz = s->segs.esz };
}

void ig_est_seg_note(struct ig_engine *e, uint64_t *ns, uint64_t x, uint64_t y)
{
	struct ig_est *s = ig_est_get(e);
	struct ig_vec *segs = s && !s->done && !s->overflow && s->segs.n < EST_MAX_SEGS ?
			      &s->segs : NULL;
	struct est_seg *g;
	uint32_t c, best = IG_C__MAX;

	for (c = 0; c < IG_C__MAX; c++)
		if (ns[c] && (best == IG_C__MAX || ns[c] > ns[best]))
			best = c;
	memset(ns, 0, sizeof(uint64_t) * IG_C__MAX);
	if (!segs || best == IG_C__MAX || y <= x)
		return;
	g = segs->n ? (struct est_seg *)segs->v + segs->n - 1 : NULL;
	if (g && g->y == x && g->cause == best) {
		g->y = y;
		return;
	}
	if ((g = ig_vec_push(segs)))
		*g = (struct est_seg){ .x = x, .y = y, .cause = best };
}


static struct est_dev *dev_of(struct ig_engine *e, int ordinal)
{
	struct ig_est *s = ig_est_get(e);
	struct est_dev *d;
	uint32_t i;

	if (!s)
		return NULL;
	for (i = 0; i < s->ndev; i++)
		if (s->dev[i]->ordinal == ordinal)
			return s->dev[i];
	if (s->ndev == IG_MAX_DEVICES || !(d = calloc(1, sizeof(*d))))
		return NULL;
	d->ordinal = ordinal;
	d->l.esz = sizeof(struct est_launch);
	d->m.esz = sizeof(struct est_mark);
	d->u.esz = sizeof(struct ig_piece);
	d->z.esz = sizeof(struct est_ival);
	d->st.esz = sizeof(struct est_stretch);
	d->errs.esz = sizeof(double);
	s->dev[s->ndev++] = d;
	return d;
}

static uint32_t sig_of(struct ig_est *s, uint32_t tgid, const struct ig_launch *l)
{
	struct est_sigkey k = { .tgid = tgid, .grid = l->grid, .block = l->block,
				.func = l->func };
	uint32_t i;

	for (i = 0; i < s->nsig; i++)
		if (!memcmp(&s->sig[i], &k, sizeof(k)))
			return i;
	if (s->nsig == EST_MAX_SIGS)
		return EST_MAX_SIGS - 1;	/* the rest share the last */
	s->sig[s->nsig] = k;
	return s->nsig++;
}

void ig_est_on_launches(struct ig_engine *e, const struct ig_hdr *rec)
{
	const struct ig_launches *r = (const void *)rec;
	struct ig_process *p = ig_tasks_process_get(e, rec->tgid, rec->ts);
	uint32_t i, n = (rec->size - offsetof(struct ig_launches, e)) /
			sizeof(struct ig_launch);
	struct ig_est *s = ig_est_get(e);
	struct est_dev *d;

	if (!p || !s || !(d = dev_of(e, ig_gpu_proc_device(p))))
		return;
	if (n > r->n)
		n = r->n;
	if (n > IG_LBUF)
		n = IG_LBUF;
	if (!n)
		return;
	if (!d->tgid) {
		d->tgid = rec->tgid;
		d->stream = r->stream;
	} else if (d->tgid != rec->tgid || d->stream != r->stream) {
		d->multi = true;
	}
	for (i = 0; i < n; i++) {
		struct est_launch *l;

		if (s->nlaunch >= EST_MAX_LAUNCHES) {
			est_overflow(s);
			return;
		}
		if (!(l = ig_vec_push(&d->l)))
			return;
		l->t = r->e[i].ts;
		l->sig = sig_of(s, rec->tgid, &r->e[i]);
		l->pad = 0;
		s->nlaunch++;
	}
}

void ig_est_on_sync(struct ig_engine *e, struct ig_process *p, uint64_t t_in,
		    uint64_t t_end, uint64_t t_wake, bool waited)
{
	struct est_dev *d = dev_of(e, ig_gpu_proc_device(p));
	struct est_mark *m;

	if (d && waited && t_end >= t_in)
		ig_est_nv_wait(e, d->ordinal, t_end);
	if (!d || !t_in || t_end < t_in || e->est->overflow || !(m = ig_vec_push(&d->m)))
		return;
	m->t_in = t_in;
	m->t_end = t_end;
	m->t_wake = t_wake >= t_in && t_wake < t_end ? t_wake : 0;
	m->waited = waited;
	m->fold = d->m.n % EST_FOLDS;
}

void ig_est_on_unres(struct ig_engine *e, const struct ig_piece *pc)
{
	struct est_dev *d = dev_of(e, pc->device);
	struct ig_piece *u;

	if (!d || pc->t1 <= pc->t0)
		return;
	ig_est_block_try(e, d, pc->t0);
	ig_est_nv_piece(e, pc);
	d->unres_ns += pc->t1 - pc->t0;
	if (!e->est->overflow && (u = ig_vec_push(&d->u)))
		*u = *pc;
}

/* Kept for a device the estimate already follows (its launches and marks
 * come first), never one made for it: an idle piece left out counts as
 * busy, a larger high end. */
static void idle_note(struct ig_engine *e, int ordinal, uint64_t t0, uint64_t t1)
{
	struct est_dev *d = NULL;
	struct est_ival *z;
	uint32_t i;

	for (i = 0; e->est && i < e->est->ndev && !d; i++)
		if (e->est->dev[i]->ordinal == ordinal)
			d = e->est->dev[i];
	if (!d || t1 <= t0 || e->est->overflow || d->z.n >= EST_MAX_IDLE)
		return;
	if ((z = ig_vec_push(&d->z)))
		*z = (struct est_ival){ t0, t1 };
}

/* A proven idle piece of a device: to the counters' pieces and the
 * device's idle list. */
void ig_est_on_idle(struct ig_engine *e, int ordinal, uint64_t t0, uint64_t t1)
{
	if (t1 <= t0)
		return;
	ig_est_nv_idle(e, ordinal, t0, t1);
	idle_note(e, ordinal, t0, t1);
}
