// SPDX-License-Identifier: GPL-2.0
/* Code objects and stacks seen in a record stream (user/stacks/pycode.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stacks/proctab.h"
#include "stacks/pycode.h"
#include "stacks/ustacks.h"
#include "util/util.h"

struct ig_pynames {
	/* (tgid, code address) -> a copy of the IG_REC_PYCODE record;
	 * (tgid, stack id) -> a copy of the IG_REC_PYSTACK record, used: the
	 * clock when last seen */
	struct ig_proctab code, stack;
	__u32 clock;		/* counts the stack records seen */
	__u64 evicted, evicted_code;
	size_t code_bound;	/* 0: IG_PYCODE_MAX */
};

/* Sets (tgid, key) to a copy of @rec. */
static int put(struct ig_proctab *tab, __u32 tgid, __u64 key,
	       const struct ig_hdr *rec, __u32 now)
{
	void *copy = malloc(rec->size);
	struct ig_proctab_ent *e;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, rec, rec->size);
	e = ig_proctab_set(tab, tgid, key, copy, free);
	if (!e)
		return -ENOMEM;
	e->used = now;
	return 0;
}

struct ig_pynames *ig_pynames_new(void)
{
	return calloc(1, sizeof(struct ig_pynames));
}

void ig_pynames_free(struct ig_pynames *n)
{
	if (!n)
		return;
	ig_proctab_free(&n->code, free);
	ig_proctab_free(&n->stack, free);
	free(n);
}

int ig_pynames_feed(struct ig_pynames *n, const struct ig_hdr *rec)
{
	if (rec->type == IG_REC_PYCODE && rec->size >= IG_PYCODE_SIZE(0)) {
		const struct ig_pycode *c = (const void *)rec;
		struct ig_proctab_ent *e;
		int err;

		/* a recording is input: a table past the record is none */
		if (c->ltlen > IG_PYCODE_TABLE || IG_PYCODE_SIZE(c->ltlen) > rec->size)
			return 0;
		e = ig_proctab_get(&n->code, rec->tgid, c->code);
		/* a later failed read takes nothing from names read before */
		if (e && (c->flags & IG_PYC_UNREAD) &&
		    !(((const struct ig_pycode *)e->val)->flags & IG_PYC_UNREAD))
			return 0;
		err = put(&n->code, rec->tgid, c->code, rec, 0);
		if (!err && (e = ig_proctab_get(&n->code, rec->tgid, c->code))) {
			c = e->val;
			((struct ig_pycode *)c)->name[sizeof(c->name) - 1] = 0;
			((struct ig_pycode *)c)->file[sizeof(c->file) - 1] = 0;
		}
		return err;
	}
	if (rec->type == IG_REC_PYSTACK && rec->size >= IG_PYSTACK_SIZE(0)) {
		const struct ig_pystack *s = (const void *)rec;
		struct ig_proctab_ent *e;

		if (!++n->clock)	/* 0 is never seen; a wrap ages a few early */
			n->clock = 1;
		if ((s->flags & IG_PYS_REF) &&
		    (e = ig_proctab_get(&n->stack, rec->tgid, s->id))) {
			e->used = n->clock;
			return 0;
		}
		if (s->nframes && s->nframes <= IG_PY_DEPTH &&
		    rec->size >= IG_PYSTACK_SIZE(s->nframes))
			return put(&n->stack, rec->tgid, s->id, rec, n->clock);
	}
	return 0;
}

static void fmt_frame(struct ig_pynames *n, __u32 tgid,
		      const struct ig_pyframe *f, char *buf, size_t len)
{
	const struct ig_proctab_ent *e = ig_proctab_get(&n->code, tgid, f->code);
	const struct ig_pycode *c = e ? e->val : NULL;
	int line;

	if (!c || (c->flags & IG_PYC_UNREAD)) {
		snprintf(buf, len, "? (code %#llx)", (unsigned long long)f->code);
		return;
	}
	line = ig_pycode_line(c, f->lasti);
	if (line > 0)
		snprintf(buf, len, "%s (%s:%d)", c->name, c->file, line);
	else
		snprintf(buf, len, "%s (%s)", c->name, c->file);
}

int ig_pynames_frame(struct ig_pynames *n, const struct ig_pystack *rec,
		     int i, char *buf, size_t len)
{
	const struct ig_pystack *s = rec;

	if (rec->flags & IG_PYS_REF) {
		const struct ig_proctab_ent *e;

		e = ig_proctab_get(&n->stack, rec->h.tgid, rec->id);
		if (!e)
			return -ENOENT;
		s = e->val;
	}
	if (s->nframes > IG_PY_DEPTH || s->h.size < IG_PYSTACK_SIZE(s->nframes))
		return -EINVAL;
	if (i >= 0 && i < s->nframes)
		fmt_frame(n, rec->h.tgid, &s->f[i], buf, len);
	return s->nframes;
}

size_t ig_pynames_count(const struct ig_pynames *n, size_t *ncode)
{
	if (ncode)
		*ncode = n->code.n;
	return n->stack.n;
}

/* ---- forgetting the processes that are gone ---- */

/* The code objects that the stacks kept name. */
struct refs {
	struct ig_proctab_pair *v;
	size_t n, cap;
	int err;
};

static void refs_add(struct refs *r, const struct ig_pystack *s)
{
	unsigned int i;

	for (i = 0; i < s->nframes && !r->err; i++) {
		if (!ig_grow_from((void **)&r->v, &r->cap, r->n, sizeof(*r->v), 256)) {
			r->err = -ENOMEM;
			return;
		}
		r->v[r->n++] = (struct ig_proctab_pair){ s->h.tgid, s->f[i].code };
	}
}

static void refs_sort(struct refs *r)
{
	if (r->n)
		qsort(r->v, r->n, sizeof(*r->v), ig_proctab_pair_cmp);
}

static bool named(const struct refs *r, const struct ig_proctab_ent *e)
{
	struct ig_proctab_pair k = { e->tgid, e->key };

	return r->n && bsearch(&k, r->v, r->n, sizeof(k), ig_proctab_pair_cmp);
}

struct forget {
	const struct ig_stk_forget *f;
	struct refs *r;
	__u32 clock, young;	/* trimming: stacks this old or younger stay */
};

/* A stack of a gone process goes unless @f keeps it; one kept adds its
 * code objects to the refs. */
static bool stack_goes(void *ctx, const struct ig_proctab_ent *e)
{
	const struct forget *g = ctx;

	if (!ig_stk_forget_gone(g->f, e->tgid))
		return false;
	if (!ig_stk_forget_keeps(g->f, e->tgid, e->key))
		return true;
	refs_add(g->r, e->val);
	return false;
}

static bool code_goes(void *ctx, const struct ig_proctab_ent *e)
{
	const struct forget *g = ctx;

	return ig_stk_forget_gone(g->f, e->tgid) && !named(g->r, e);
}

int ig_pynames_forget(struct ig_pynames *n, const struct ig_stk_forget *f)
{
	struct refs r = { 0 };
	struct forget g = { .f = f, .r = &r };

	ig_proctab_drop_where(&n->stack, stack_goes, &g, free);
	/* code objects only when every one a kept stack names is known */
	if (!r.err) {
		refs_sort(&r);
		ig_proctab_drop_where(&n->code, code_goes, &g, free);
	}
	free(r.v);
	return r.err;
}

/* ---- bounds for a tracer left running ---- */

bool ig_pynames_full(const struct ig_pynames *n)
{
	return n->stack.n >= IG_PYSTACKS_MAX ||
	       n->code.n >= (n->code_bound ? n->code_bound : IG_PYCODE_MAX);
}

void ig_pynames_evicted(const struct ig_pynames *n, uint64_t *stacks, uint64_t *code)
{
	*stacks = n->evicted;
	*code = n->evicted_code;
}

/* Trimming: a stack older than g->young goes unless @f keeps it; one
 * that stays adds its code objects to the refs. */
static bool stack_old(void *ctx, const struct ig_proctab_ent *e)
{
	const struct forget *g = ctx;

	if (g->clock - e->used > g->young &&
	    !ig_stk_forget_keeps(g->f, e->tgid, e->key))
		return true;
	refs_add(g->r, e->val);
	return false;
}

static bool code_unnamed(void *ctx, const struct ig_proctab_ent *e)
{
	return !named(((const struct forget *)ctx)->r, e);
}

int ig_pynames_trim(struct ig_pynames *n, const struct ig_stk_forget *f)
{
	size_t stay = IG_PYSTACKS_MAX / 4 * 3, before = n->stack.n;
	struct refs r = { 0 };
	struct forget g = { .f = f, .r = &r, .clock = n->clock, .young = ~0u };

	if (n->stack.n > stay &&
	    ig_proctab_age_at(&n->stack, n->clock, stay - 1, &g.young))
		return -ENOMEM;
	ig_proctab_drop_where(&n->stack, stack_old, &g, free);
	n->evicted += before - n->stack.n;
	/* code objects past their own bound, those no stack left names */
	if (!r.err && n->code.n >= IG_PYCODE_MAX) {
		refs_sort(&r);
		before = n->code.n;
		ig_proctab_drop_where(&n->code, code_unnamed, &g, free);
		n->evicted_code += before - n->code.n;
		/* all named by stacks kept: room for more before the next */
		n->code_bound = n->code.n + IG_PYCODE_MAX / 4;
		if (n->code_bound < IG_PYCODE_MAX)
			n->code_bound = IG_PYCODE_MAX;
	}
	free(r.v);
	return r.err;
}
