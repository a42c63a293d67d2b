// SPDX-License-Identifier: GPL-2.0
/* Code objects and stacks seen in a record stream (user/stacks/pycode.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stacks/pycode.h"
#include "stacks/ustacks.h"
#include "util/util.h"

#define NB_BUCKETS 4096

struct entry {
	struct entry *next;
	__u32 tgid;
	__u32 used;		/* stacks: the clock when last seen */
	__u64 key;		/* code address or stack id */
	void *rec;		/* a copy of the record */
};

struct ig_pynames {
	struct entry *code[NB_BUCKETS];
	struct entry *stack[NB_BUCKETS];
	size_t ncode, nstack;
	__u32 clock;		/* counts the stack records seen */
	__u64 evicted, evicted_code;
	size_t code_bound;	/* 0: IG_PYCODE_MAX */
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
	       size_t *count, __u32 now)
{
	struct entry *e = find(tab, tgid, key);
	void *copy = malloc(rec->size);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, rec, rec->size);
	if (e) {
		free(e->rec);
		e->rec = copy;
		e->used = now;
		return 0;
	}
	e = malloc(sizeof(*e));
	if (!e) {
		free(copy);
		return -ENOMEM;
	}
	*e = (struct entry){ tab[bucket(tgid, key)], tgid, now, key, copy };
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
		err = put(n->code, rec->tgid, c->code, rec, &n->ncode, 0);
		if (!err && (e = find(n->code, rec->tgid, c->code))) {
			c = e->rec;
			((struct ig_pycode *)c)->name[sizeof(c->name) - 1] = 0;
			((struct ig_pycode *)c)->file[sizeof(c->file) - 1] = 0;
		}
		return err;
	}
	if (rec->type == IG_REC_PYSTACK && rec->size >= IG_PYSTACK_SIZE(0)) {
		const struct ig_pystack *s = (const void *)rec;
		struct entry *e;

		if (!++n->clock)	/* 0 is never seen; a wrap ages a few early */
			n->clock = 1;
		if ((s->flags & IG_PYS_REF) &&
		    (e = find(n->stack, rec->tgid, s->id))) {
			e->used = n->clock;
			return 0;
		}
		if (s->nframes && s->nframes <= IG_PY_DEPTH &&
		    rec->size >= IG_PYSTACK_SIZE(s->nframes))
			return put(n->stack, rec->tgid, s->id, rec, &n->nstack,
				   n->clock);
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

/* ---- bounds for a tracer left running ---- */

bool ig_pynames_full(const struct ig_pynames *n)
{
	return n->nstack >= IG_PYSTACKS_MAX ||
	       n->ncode >= (n->code_bound ? n->code_bound : IG_PYCODE_MAX);
}

void ig_pynames_evicted(const struct ig_pynames *n, uint64_t *stacks, uint64_t *code)
{
	*stacks = n->evicted;
	*code = n->evicted_code;
}

static int by_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

static void unlink_free(struct entry **pe, size_t *count)
{
	struct entry *e = *pe;

	*pe = e->next;
	free(e->rec);
	free(e);
	(*count)--;
}

int ig_pynames_trim(struct ig_pynames *n, const struct ig_stk_forget *f)
{
	size_t stay = IG_PYSTACKS_MAX / 4 * 3, i, k = 0, before;
	struct refs r = { 0 };
	struct entry **pe, *e;
	__u32 young = ~0u, *ages;

	if (n->nstack > stay) {
		ages = malloc(n->nstack * sizeof(*ages));
		if (!ages)
			return -ENOMEM;
		for (i = 0; i < NB_BUCKETS; i++)
			for (e = n->stack[i]; e; e = e->next)
				ages[k++] = n->clock - e->used;
		qsort(ages, k, sizeof(*ages), by_u32);
		young = ages[stay - 1];
		free(ages);
	}
	before = n->nstack;
	for (i = 0; i < NB_BUCKETS; i++)
		for (pe = &n->stack[i]; (e = *pe);) {
			if (n->clock - e->used > young &&
			    !f->keep(f->ctx, e->tgid, e->key)) {
				unlink_free(pe, &n->nstack);
				continue;
			}
			refs_add(&r, e->rec);
			pe = &e->next;
		}
	n->evicted += before - n->nstack;
	/* code objects past their own bound, those no stack left names */
	if (!r.err && n->ncode >= IG_PYCODE_MAX) {
		if (r.n)
			qsort(r.v, r.n, sizeof(*r.v), by_ref);
		before = n->ncode;
		for (i = 0; i < NB_BUCKETS; i++)
			for (pe = &n->code[i]; (e = *pe);) {
				struct code_ref c = { e->tgid, e->key };

				if (r.n && bsearch(&c, r.v, r.n, sizeof(c), by_ref))
					pe = &e->next;
				else
					unlink_free(pe, &n->ncode);
			}
		n->evicted_code += before - n->ncode;
		/* all named by stacks kept: room for more before the next */
		n->code_bound = n->ncode + IG_PYCODE_MAX / 4;
		if (n->code_bound < IG_PYCODE_MAX)
			n->code_bound = IG_PYCODE_MAX;
	}
	free(r.v);
	return r.err;
}
