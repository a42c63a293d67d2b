// SPDX-License-Identifier: GPL-2.0
/*
 * Stacks tied to each cause's time (docs/design.md §5.13).  Every charge
 * of the walk goes, with its nanoseconds, to the stack of the thread that
 * waited (waiter), of the thread that read, faulted or received (blocked),
 * and for the GIL and locks of the thread that held them (holder).  Tables
 * are bounded: the top IG_STK_CAP stacks per (set, cause, role), a new one
 * taking the smallest's place and inheriting its time as error.  Names come
 * from the stream's own records, so replay names the same frames.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "engine/attrib/walk.h"
#include "engine/attrib/stacks.h"
#include "engine/attrib/stacks_int.h"
#include "engine/tasks.h"
#include "stacks/folded.h"
#include "stacks/pycode.h"
#include "stacks/ustacks.h"
#include "util/util.h"

/* A sweep walks every name table: at most one a second of the trace */
#define SWEEP_EVERY_NS	1000000000ULL

int ig_stacks_new(struct ig_engine *e)
{
	struct ig_stacks *s = calloc(1, sizeof(*s));

	e->stk = s;
	if (!s)
		return -ENOMEM;
	s->py = ig_pynames_new();
	s->nat = ig_ustacks_new();
	return s->py && s->nat ? 0 : -ENOMEM;
}

void ig_stacks_free(struct ig_engine *e)
{
	if (!e->stk)
		return;
	ig_pynames_free(e->stk->py);
	ig_ustacks_free(e->stk->nat);
	free(e->stk->gone);
	free(e->stk);
	e->stk = NULL;
}

size_t ig_stacks_bytes(const struct ig_engine *e)
{
	return e->stk ? sizeof(*e->stk) + e->stk->capgone * sizeof(uint32_t) : 0;
}

/* ---- per thread: the stack ids over time ---- */

static void note(struct ig_thread *t, uint64_t ts, bool py, uint64_t id)
{
	struct ig_stk_ref *last = ig_ring_back(&t->stks), *r;

	if (last && last->t > ts)
		return;		/* keys stay ordered */
	if (last && (py ? last->py : last->nat) == id)
		return;
	if (last && last->t == ts) {
		r = last;
	} else {
		/* copied first: the push may move the ring, and last with it */
		struct ig_stk_ref prev = last ? *last : (struct ig_stk_ref){ 0 };

		r = ig_ring_push(&t->stks);
		if (!r)
			return;
		*r = prev;
		r->t = ts;
	}
	if (py)
		r->py = id;
	else
		r->nat = id;
}

static void trim(struct ig_stacks *s);

void ig_stacks_on_rec(struct ig_engine *e, struct ig_thread *t,
		      const struct ig_hdr *rec)
{
	struct ig_stacks *s = e->stk;

	if (!s)
		return;
	switch (rec->type) {
	case IG_REC_PYCODE:
		ig_pynames_feed(s->py, rec);
		break;
	case IG_REC_USYM:
		ig_ustacks_on_record(s->nat, rec);
		break;
	case IG_REC_PYSTACK: {
		const struct ig_pystack *p = (const void *)rec;

		if (rec->size < IG_PYSTACK_SIZE(0))
			return;
		ig_pynames_feed(s->py, rec);
		if (ig_pynames_full(s->py))
			trim(s);
		if (t)
			note(t, rec->ts, true, (p->flags & IG_PYS_NONE) ? 0 : p->id);
		break;
	}
	case IG_REC_USTACK: {
		const struct ig_ustack *u = (const void *)rec;

		if (rec->size < offsetof(struct ig_ustack, ips))
			return;
		ig_ustacks_on_record(s->nat, rec);
		if (ig_ustacks_full(s->nat))
			trim(s);
		if (t)
			note(t, rec->ts, false, u->id);
		break;
	}
	default:
		break;
	}
}

bool ig_stacks_at(const struct ig_thread *th, uint64_t t, struct ig_stk_ref *out)
{
	uint32_t i = ig_ring_upper(&th->stks, offsetof(struct ig_stk_ref, t), t);

	if (!i)
		return false;
	*out = *(const struct ig_stk_ref *)ig_ring_at(&th->stks, i - 1);
	return out->py || out->nat;
}

/* ---- accounting ---- */

static void tab_add(struct ig_stk_tab *tb, uint32_t tgid,
		    const struct ig_stk_ref *r, uint64_t ns, uint64_t count)
{
	struct ig_stk_ent *d, *min = NULL;
	uint32_t i;

	for (i = 0; i < tb->n; i++) {
		d = &tb->v[i];
		if (d->tgid == tgid && d->py == r->py && d->nat == r->nat) {
			d->ns += ns;
			d->count += count;
			return;
		}
		if (!min || d->ns < min->ns)
			min = d;
	}
	if (tb->n < IG_STK_CAP) {
		d = &tb->v[tb->n++];
		*d = (struct ig_stk_ent){ 0 };
	} else {
		d = min;
		tb->unpinned += d->pinned;
		d->err = d->ns;
		d->count = 0;
		d->pinned = 0;
		tb->evicted++;
	}
	d->tgid = tgid;
	d->py = r->py;
	d->nat = r->nat;
	d->ns += ns;
	d->count += count;
}

static struct ig_stk_tab *tab_of(struct walk *w, unsigned int c,
				 unsigned int role)
{
	if (!w->e->stk || c >= IG_C__MAX ||
	    (w->set != &w->e->attr.idle && w->set != &w->e->attr.unres))
		return NULL;
	if (w->set != &w->e->attr.idle && w->set != &w->e->attr.unres)
		return NULL;	/* estimated idle keeps no stacks */
	return &w->e->stk->tab[w->set == &w->e->attr.idle ? 0 : 1][c][role];
}

/* @ns over the thread's CPU samples in [x, y), each at its stack; with no
 * sample there, all of it at its latest stack before y. */
static void add_run(struct ig_stk_tab *tb, const struct ig_thread *th,
		    uint64_t x, uint64_t y, uint64_t ns)
{
	uint32_t i0 = ig_ring_upper(&th->samples,
				    offsetof(struct ig_sample_ref, t),
				    x ? x - 1 : 0), i, n = 0;
	struct ig_stk_ref r;
	uint64_t share, left = ns;

	for (i = i0; i < th->samples.len; i++, n++)
		if (((const struct ig_sample_ref *)ig_ring_at(&th->samples, i))->t >= y)
			break;
	if (!n) {
		if (ig_stacks_at(th, y ? y - 1 : 0, &r))
			tab_add(tb, th->tgid, &r, ns, 1);
		return;
	}
	share = ns / n;
	for (i = i0; i < i0 + n; i++) {
		const struct ig_sample_ref *s = ig_ring_at(&th->samples, i);
		uint64_t part = i + 1 == i0 + n ? left : share;

		left -= part;
		if (ig_stacks_at(th, s->t, &r))
			tab_add(tb, th->tgid, &r, part, i == i0);
	}
}

static void add_pos(struct ig_stk_tab *tb, const struct ig_stk_pos *p,
		    uint64_t ns)
{
	struct ig_stk_ref r;

	if (!tb || !p->th)
		return;
	if (!p->iv) {
		add_run(tb, p->th, p->x, p->y, ns);
		return;
	}
	if (ig_stacks_at(p->th, p->iv->t_off, &r))
		tab_add(tb, p->th->tgid, &r, ns, 1);
}

void ig_stacks_on_charge(struct walk *w, unsigned int c, uint64_t ns)
{
	add_pos(tab_of(w, c, IG_SR_WAITER), &w->top, ns);
	if (c == IG_C_STORAGE || c == IG_C_PAGE_FAULT || c == IG_C_NETWORK)
		add_pos(tab_of(w, c, IG_SR_BLOCKED), &w->cur, ns);
}

void ig_stacks_holder(struct walk *w, unsigned int c,
		      const struct ig_thread *holder, uint64_t x, uint64_t y,
		      uint64_t ns)
{
	struct ig_stk_tab *tb = tab_of(w, c, IG_SR_HOLDER);

	if (tb && holder)
		add_run(tb, holder, x, y, ns);
}

/* ---- processes gone ---- */

static int by_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool is_gone(const struct ig_stacks *s, uint32_t tgid)
{
	return s->ngone && bsearch(&tgid, s->gone, s->ngone, sizeof(tgid), by_u32);
}

void ig_stacks_gone(struct ig_engine *e, uint32_t tgid)
{
	struct ig_stacks *s = e->stk;
	size_t i;

	if (!s || is_gone(s, tgid))
		return;
	if (!ig_grow_from((void **)&s->gone, &s->capgone, s->ngone, sizeof(*s->gone), 64))
		return;		/* kept: names rather than memory */
	for (i = s->ngone; i && s->gone[i - 1] > tgid; i--)
		s->gone[i] = s->gone[i - 1];
	s->gone[i] = tgid;
	s->ngone++;
	s->sweep = true;
}

static int by_pin(const void *a, const void *b)
{
	const struct pin *x = a, *y = b;

	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

/* The order of ig_proctab_pair_cmp(), which struct ig_stk_forget's lists
 * keep: by tgid, then stack id. */
static int by_pair(const void *a, const void *b)
{
	const struct ig_proctab_pair *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* The stacks s->pins holds, Python's (@py) or native, as the sorted
 * (process, stack id) pairs a forget keeps: 0, or -ENOMEM. */
static int keep_list(const struct ig_stacks *s, bool py,
		     struct ig_proctab_pair **v, size_t *n)
{
	size_t i;

	*v = malloc((s->npins ? s->npins : 1) * sizeof(**v));
	*n = 0;
	if (!*v)
		return -ENOMEM;
	for (i = 0; i < s->npins; i++)
		(*v)[i] = (struct ig_proctab_pair){
			s->pins[i].tgid, py ? s->pins[i].py : s->pins[i].nat };
	qsort(*v, s->npins, sizeof(**v), by_pair);
	*n = s->npins;
	return 0;
}

/* Hands the native table, then the Python one, the stacks to keep, and
 * @f's gone processes: each table forgets (@trim: trims) on its own.  0,
 * or -ENOMEM. */
static int forget_both(struct ig_stacks *s, struct ig_stk_forget *f, bool trim)
{
	struct ig_proctab_pair *v;
	int err;

	if (keep_list(s, false, &v, &f->nkeep))
		return -ENOMEM;
	f->keep = v;
	if (!trim)
		err = ig_ustacks_forget(s->nat, f);
	else
		err = ig_ustacks_full(s->nat) ? ig_ustacks_trim(s->nat, f) : 0;
	free(v);
	if (keep_list(s, true, &v, &f->nkeep))
		return -ENOMEM;
	f->keep = v;
	if (!trim) {
		if (ig_pynames_forget(s->py, f))
			err = -ENOMEM;
	} else if (ig_pynames_full(s->py)) {
		ig_pynames_trim(s->py, f);
	}
	free(v);
	f->keep = NULL;
	f->nkeep = 0;
	return err;
}

/* Pins the entries of gone processes, and lists them in s->pins. */
static int pin_all(struct ig_stacks *s)
{
	struct ig_stk_tab *tb = &s->tab[0][0][0];
	size_t ntab = sizeof(s->tab) / sizeof(*tb), i, n = 0;
	uint32_t k;

	s->pins = malloc(ntab * IG_STK_CAP * sizeof(*s->pins));
	if (!s->pins)
		return -ENOMEM;
	for (i = 0; i < ntab; i++) {
		tb[i].unpinned = 0;
		for (k = 0; k < tb[i].n; k++) {
			struct ig_stk_ent *d = &tb[i].v[k];

			d->pinned = is_gone(s, d->tgid);
			if (d->pinned)
				s->pins[n++] = (struct pin){ d->tgid, d->py, d->nat };
		}
	}
	s->npins = n;
	qsort(s->pins, n, sizeof(*s->pins), by_pin);
	return 0;
}

/* Processes alive again under their pid, and those nothing is left of,
 * leave the list. */
static void gone_prune(struct ig_engine *e, struct ig_stacks *s, bool all)
{
	size_t i, n = 0;

	for (i = 0; i < s->ngone; i++) {
		const struct ig_process *p = ig_tasks_process_find(e, s->gone[i]);
		struct pin k = { .tgid = s->gone[i] };

		if (p && (p->exit_ts == IG_NS_INF || p->threads))
			continue;
		if (all && !bsearch(&k, s->pins, s->npins, sizeof(k), by_pin))
			continue;
		s->gone[n++] = s->gone[i];
	}
	s->ngone = n;
}

static bool any_unpinned(const struct ig_stacks *s)
{
	const struct ig_stk_tab *tb = &s->tab[0][0][0];
	size_t ntab = sizeof(s->tab) / sizeof(*tb), i;

	for (i = 0; i < ntab; i++)
		if (tb[i].unpinned)
			return true;
	return false;
}

void ig_stacks_gc(struct ig_engine *e)
{
	struct ig_stacks *s = e->stk;
	struct ig_stk_forget f = { 0 };
	int err;

	if (!s || !s->ngone || e->win.now < s->next_sweep ||
	    (!s->sweep && !any_unpinned(s)))
		return;
	s->next_sweep = e->win.now + SWEEP_EVERY_NS;
	gone_prune(e, s, false);
	if (pin_all(s))
		return;		/* the next gc tries again */
	f.gone = s->gone;
	f.ngone = s->ngone;
	err = forget_both(s, &f, false);
	s->sweep = err != 0;
	if (!err)
		gone_prune(e, s, true);
	free(s->pins);
	s->pins = NULL;
	s->npins = 0;
}

/* A name table is full (a process left running with ever new stacks):
 * the stacks seen longest ago go, but for those an entry of the tables
 * holds, and past their own bound the names no stack left uses. */
static void trim(struct ig_stacks *s)
{
	struct ig_stk_tab *tb = &s->tab[0][0][0];
	size_t ntab = sizeof(s->tab) / sizeof(*tb), i, n = 0;
	struct ig_stk_forget f = { .all = true };
	struct pin *saved = s->pins;
	size_t nsaved = s->npins;
	uint32_t k;

	s->pins = malloc(ntab * IG_STK_CAP * sizeof(*s->pins));
	if (!s->pins) {
		s->pins = saved;
		return;		/* the next stack record tries again */
	}
	for (i = 0; i < ntab; i++)
		for (k = 0; k < tb[i].n; k++)
			s->pins[n++] = (struct pin){ tb[i].v[k].tgid, tb[i].v[k].py,
						     tb[i].v[k].nat };
	s->npins = n;
	qsort(s->pins, n, sizeof(*s->pins), by_pin);
	forget_both(s, &f, true);
	free(s->pins);
	s->pins = saved;
	s->npins = nsaved;
}

void ig_stacks_held(const struct ig_engine *e, struct ig_stk_held *h)
{
	memset(h, 0, sizeof(*h));
	if (!e->stk)
		return;
	h->nat = ig_ustacks_count(e->stk->nat, &h->syms);
	h->py = ig_pynames_count(e->stk->py, &h->code);
	h->gone = e->stk->ngone;
	ig_ustacks_evicted(e->stk->nat, &h->ev_nat, &h->ev_syms);
	ig_pynames_evicted(e->stk->py, &h->ev_py, &h->ev_code);
}
