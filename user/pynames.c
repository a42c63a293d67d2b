// SPDX-License-Identifier: GPL-2.0
/* Code objects and stacks seen in a record stream (user/pycode.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pycode.h"
#include "ustacks.h"
#include "util.h"

#define NB_BUCKETS 4096

struct entry {
	struct entry *next;
	__u32 tgid;
	__u64 key;		/* code address or stack id */
	void *rec;		/* a copy of the record */
};

struct ig_pynames {
	struct entry *code[NB_BUCKETS];
	struct entry *stack[NB_BUCKETS];
	size_t ncode, nstack;
};

static size_t bucket(__u32 tgid, __u64 key)
{
	__u64 h = (key ^ ((__u64)tgid << 32)) * 0x9e3779b97f4a7c15ULL;

	return h >> 52;
}

static struct entry *find(struct entry **tab, __u32 tgid, __u64 key)
{
	struct entry *e;

	for (e = tab[bucket(tgid, key)]; e; e = e->next)
		if (e->tgid == tgid && e->key == key)
			return e;
	return NULL;
}

static int put(struct entry **tab, __u32 tgid, __u64 key, const struct ig_hdr *rec,
	       size_t *count)
{
	struct entry *e = find(tab, tgid, key);
	void *copy = malloc(rec->size);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, rec, rec->size);
	if (e) {
		free(e->rec);
		e->rec = copy;
		return 0;
	}
	e = malloc(sizeof(*e));
	if (!e) {
		free(copy);
		return -ENOMEM;
	}
	*e = (struct entry){ tab[bucket(tgid, key)], tgid, key, copy };
	tab[bucket(tgid, key)] = e;
	(*count)++;
	return 0;
}

struct ig_pynames *ig_pynames_new(void)
{
	return calloc(1, sizeof(struct ig_pynames));
}

static void drop(struct entry **tab)
{
	struct entry *e, *next;
	size_t i;

	for (i = 0; i < NB_BUCKETS; i++)
		for (e = tab[i]; e; e = next) {
			next = e->next;
			free(e->rec);
			free(e);
		}
}

void ig_pynames_free(struct ig_pynames *n)
{
	if (!n)
		return;
	drop(n->code);
	drop(n->stack);
	free(n);
}

int ig_pynames_feed(struct ig_pynames *n, const struct ig_hdr *rec)
{
	if (rec->type == IG_REC_PYCODE && rec->size >= IG_PYCODE_SIZE(0)) {
		const struct ig_pycode *c = (const void *)rec;
		struct entry *e;
		int err;

		/* a recording is input: a table past the record is none */
		if (c->ltlen > IG_PYCODE_TABLE || IG_PYCODE_SIZE(c->ltlen) > rec->size)
			return 0;
		e = find(n->code, rec->tgid, c->code);
		/* a later failed read takes nothing from names read before */
		if (e && (c->flags & IG_PYC_UNREAD) &&
		    !(((const struct ig_pycode *)e->rec)->flags & IG_PYC_UNREAD))
			return 0;
		err = put(n->code, rec->tgid, c->code, rec, &n->ncode);
		if (!err && (e = find(n->code, rec->tgid, c->code))) {
			c = e->rec;
			((struct ig_pycode *)c)->name[sizeof(c->name) - 1] = 0;
			((struct ig_pycode *)c)->file[sizeof(c->file) - 1] = 0;
		}
		return err;
	}
	if (rec->type == IG_REC_PYSTACK && rec->size >= IG_PYSTACK_SIZE(0)) {
		const struct ig_pystack *s = (const void *)rec;

		if (s->nframes && s->nframes <= IG_PY_DEPTH &&
		    rec->size >= IG_PYSTACK_SIZE(s->nframes))
			return put(n->stack, rec->tgid, s->id, rec, &n->nstack);
	}
	return 0;
}

static void fmt_frame(struct ig_pynames *n, __u32 tgid,
		      const struct ig_pyframe *f, char *buf, size_t len)
{
	struct entry *e = find(n->code, tgid, f->code);
	const struct ig_pycode *c = e ? e->rec : NULL;
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
		struct entry *e = find(n->stack, rec->h.tgid, rec->id);

		if (!e)
			return -ENOENT;
		s = e->rec;
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
		*ncode = n->ncode;
	return n->nstack;
}

/* ---- forgetting the processes that are gone ---- */

/* A code object that a stack still kept names. */
struct code_ref {
	__u32 tgid;
	__u64 code;
};

static int by_ref(const void *a, const void *b)
{
	const struct code_ref *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->code < y->code ? -1 : x->code > y->code;
}

struct refs {
	struct code_ref *v;
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
		r->v[r->n++] = (struct code_ref){ s->h.tgid, s->f[i].code };
	}
}

/* Unlinks and frees the entries of gone processes for which @goes says
 * so; the stacks that stay add their code objects to @r. */
static void drop_where(struct entry **tab, size_t *count,
		       const struct ig_stk_forget *f, struct refs *r,
		       bool (*goes)(const struct ig_stk_forget *,
				    const struct entry *, struct refs *))
{
	struct entry **pe, *e;
	size_t i;

	for (i = 0; i < NB_BUCKETS; i++)
		for (pe = &tab[i]; (e = *pe);) {
			if (!f->gone(f->ctx, e->tgid) || !goes(f, e, r)) {
				pe = &e->next;
				continue;
			}
			*pe = e->next;
			free(e->rec);
			free(e);
			(*count)--;
		}
}

static bool stack_goes(const struct ig_stk_forget *f, const struct entry *e,
		       struct refs *r)
{
	if (!f->keep(f->ctx, e->tgid, e->key))
		return true;
	refs_add(r, e->rec);
	return false;
}

static bool code_goes(const struct ig_stk_forget *f, const struct entry *e,
		      struct refs *r)
{
	struct code_ref k = { e->tgid, e->key };

	(void)f;
	return !(r->n && bsearch(&k, r->v, r->n, sizeof(k), by_ref));
}

int ig_pynames_forget(struct ig_pynames *n, const struct ig_stk_forget *f)
{
	struct refs r = { 0 };

	drop_where(n->stack, &n->nstack, f, &r, stack_goes);
	/* code objects only when every one a kept stack names is known */
	if (!r.err) {
		if (r.n)
			qsort(r.v, r.n, sizeof(*r.v), by_ref);
		drop_where(n->code, &n->ncode, f, &r, code_goes);
	}
	free(r.v);
	return r.err;
}
