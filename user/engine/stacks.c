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
#include "engine/attrib.h"
#include "engine/stacks.h"
#include "stacks/folded.h"
#include "stacks/pycode.h"
#include "stacks/ustacks.h"
#include "util/util.h"

#define NATIVE_ABOVE_PY	6	/* native frames shown above Python ones */
/* A sweep walks every name table: at most one a second of the trace */
#define SWEEP_EVERY_NS	1000000000ULL

/* A table entry of a gone process: its stack stays named. */
struct pin {
	uint32_t tgid;
	uint64_t py, nat;
};

struct ig_stacks {
	struct ig_pynames *py;
	struct ig_ustacks *nat;
	struct ig_stk_tab tab[2][IG_C__MAX][IG_SR__MAX];
	/* gone processes whose stacks are to go, or went but for those an
	 * entry above holds (pinned); sorted */
	uint32_t *gone;
	size_t ngone, capgone;
	bool sweep;		/* some are to go */
	uint64_t next_sweep;	/* trace time */
	struct pin *pins;	/* by tgid, during a sweep */
	size_t npins;
};

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
		r = ig_ring_push(&t->stks);
		if (!r)
			return;
		*r = last ? *last : (struct ig_stk_ref){ 0 };
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

static bool gone_cb(void *ctx, __u32 tgid)
{
	return is_gone(ctx, tgid);
}

static int by_pin(const void *a, const void *b)
{
	const struct pin *x = a, *y = b;

	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

/* Whether an entry of the tables holds stack @id (Python or native) of
 * gone process @tgid. */
static bool pinned(const struct ig_stacks *s, uint32_t tgid, uint64_t id,
		   bool py)
{
	struct pin k = { .tgid = tgid };
	const struct pin *p = bsearch(&k, s->pins, s->npins, sizeof(k), by_pin);

	if (!p)
		return false;
	while (p > s->pins && p[-1].tgid == tgid)
		p--;
	for (; p < s->pins + s->npins && p->tgid == tgid; p++)
		if ((py ? p->py : p->nat) == id)
			return true;
	return false;
}

static bool keep_py(void *ctx, __u32 tgid, __u64 id)
{
	return pinned(ctx, tgid, id, true);
}

static bool keep_nat(void *ctx, __u32 tgid, __u64 id)
{
	return pinned(ctx, tgid, id, false);
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
	struct ig_stk_forget f = { gone_cb, keep_nat, s };
	int err;

	if (!s || !s->ngone || e->win.now < s->next_sweep ||
	    (!s->sweep && !any_unpinned(s)))
		return;
	s->next_sweep = e->win.now + SWEEP_EVERY_NS;
	gone_prune(e, s, false);
	if (pin_all(s))
		return;		/* the next gc tries again */
	err = ig_ustacks_forget(s->nat, &f);
	f.keep = keep_py;
	if (ig_pynames_forget(s->py, &f))
		err = -ENOMEM;
	s->sweep = err != 0;
	if (!err)
		gone_prune(e, s, true);
	free(s->pins);
	s->pins = NULL;
	s->npins = 0;
}

static bool every_tgid(void *ctx, __u32 tgid)
{
	(void)ctx;
	(void)tgid;
	return true;
}

/* A name table is full (a process left running with ever new stacks):
 * the stacks seen longest ago go, but for those an entry of the tables
 * holds, and past their own bound the names no stack left uses. */
static void trim(struct ig_stacks *s)
{
	struct ig_stk_tab *tb = &s->tab[0][0][0];
	size_t ntab = sizeof(s->tab) / sizeof(*tb), i, n = 0;
	struct ig_stk_forget f = { every_tgid, keep_nat, s };
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
	if (ig_ustacks_full(s->nat))
		ig_ustacks_trim(s->nat, &f);
	f.keep = keep_py;
	if (ig_pynames_full(s->py))
		ig_pynames_trim(s->py, &f);
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

/* ---- naming ---- */

/* Native frames of the interpreter itself end the part shown above the
 * Python frames: those are what the Python frames already say. */
static bool interp_frame(const char *f)
{
	return !strncmp(f, "_Py", 3) || !strncmp(f, "Py", 2) || f[0] == '[' ||
	       strstr(f, "EvalFrame");
}

static void line_put(struct ig_stk_line *l, const char *f)
{
	if (l->n < IG_STK_FRAMES)
		snprintf(l->f[l->n++], IG_STK_FLEN, "%s", f);
}

static void py_frames(struct ig_stacks *s, const struct ig_stk_ent *d,
		      struct ig_stk_line *l)
{
	struct ig_pystack ref = {
		.h = { .type = IG_REC_PYSTACK, .size = IG_PYSTACK_SIZE(0),
		       .tgid = d->tgid },
		.id = d->py, .flags = IG_PYS_REF,
	};
	char buf[IG_STK_FLEN];
	int n = ig_pynames_frame(s->py, &ref, -1, buf, sizeof(buf)), i;

	for (i = 0; i < n; i++) {
		ig_pynames_frame(s->py, &ref, i, buf, sizeof(buf));
		line_put(l, buf);
	}
}

static void resolve(struct ig_stacks *s, const struct ig_stk_ent *d,
		    struct ig_stk_line *l)
{
	const char *nf[IG_STK_FRAMES];
	int nn = 0, i;

	memset(l, 0, offsetof(struct ig_stk_line, f));
	if (d->nat)
		nn = ig_ustacks_frames(s->nat, d->tgid, d->nat, nf, IG_STK_FRAMES);
	if (nn < 0)
		nn = 0;
	if (!d->py) {
		l->lang = IG_SL_NATIVE;
		for (i = 0; i < nn; i++)
			line_put(l, nf[i]);
		return;
	}
	for (i = 0; i < nn && i < NATIVE_ABOVE_PY && !interp_frame(nf[i]); i++)
		line_put(l, nf[i]);
	l->lang = l->n ? IG_SL_MIXED : IG_SL_PYTHON;
	py_frames(s, d, l);
	if (l->n == 0 || (l->lang == IG_SL_MIXED && l->n == (uint16_t)i))
		line_put(l, "[python frames not named]");
}

static bool same_frames(const struct ig_stk_line *a, const struct ig_stk_line *b)
{
	uint16_t i;

	if (a->n != b->n || a->lang != b->lang)
		return false;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->f[i], b->f[i]))
			return false;
	return true;
}

static int by_ns(const void *a, const void *b)
{
	const struct ig_stk_line *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

size_t ig_stacks_lines(const struct ig_engine *e, bool idle, unsigned int cause,
		       unsigned int role, struct ig_stk_line *out, size_t max)
{
	const struct ig_stk_tab *tb;
	size_t n = 0, k;
	uint32_t i;

	if (!e->stk || cause >= IG_C__MAX || role >= IG_SR__MAX || !max)
		return 0;
	tb = &e->stk->tab[idle ? 0 : 1][cause][role];
	for (i = 0; i < tb->n; i++) {
		const struct ig_stk_ent *d = &tb->v[i];
		struct ig_stk_line *l = &out[n];

		if (d->ns <= d->err)
			continue;	/* nothing known of it for sure */
		resolve(e->stk, d, l);
		l->role = role;
		l->ns = d->ns - d->err;
		l->count = d->count;
		for (k = 0; k < n && !same_frames(&out[k], l); k++)
			;
		if (k < n) {
			out[k].ns += l->ns;
			out[k].count += l->count;
		} else if (++n == max) {
			break;
		}
	}
	qsort(out, n, sizeof(*out), by_ns);
	return n;
}

const char *ig_stacks_role_name(unsigned int role)
{
	static const char *const names[] = { "waiter", "holder", "blocked" };

	return role < IG_SR__MAX ? names[role] : "?";
}

const char *ig_stacks_lang_name(unsigned int lang)
{
	static const char *const names[] = { "python", "native", "mixed" };

	return lang <= IG_SL_MIXED ? names[lang] : "?";
}

/* ---- folded output ---- */

/* The role that says most of a cause: what blocked, else who held, else
 * who waited; one role per cause so that its stacks sum to its time. */
static unsigned int folded_role(const struct ig_stacks *s, unsigned int c)
{
	if (s->tab[0][c][IG_SR_BLOCKED].n)
		return IG_SR_BLOCKED;
	if (s->tab[0][c][IG_SR_HOLDER].n)
		return IG_SR_HOLDER;
	return IG_SR_WAITER;
}

int ig_engine_folded(struct ig_engine *e, FILE *out)
{
	struct ig_stk_line *l = malloc(IG_STK_CAP * sizeof(*l));
	struct ig_folded *f = ig_folded_new();
	const char *fr[IG_STK_FRAMES];
	unsigned int c;
	size_t n, i, k;
	int err = 0;

	if (!l || !f || !e->stk) {
		err = -ENOMEM;
		goto out;
	}
	for (c = 0; c < IG_C__MAX && !err; c++) {
		n = ig_stacks_lines(e, true, c, folded_role(e->stk, c), l, IG_STK_CAP);
		for (i = 0; i < n && !err; i++) {
			for (k = 0; k < l[i].n; k++)
				fr[k] = l[i].f[k];
			err = ig_folded_add(f, ig_names_cause(c), fr, l[i].n, l[i].ns);
		}
	}
	if (!err)
		err = ig_folded_write(f, out);
out:
	ig_folded_free(f);
	free(l);
	return err;
}
