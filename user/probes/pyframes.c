// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "probes/pyframes.h"
#include "probes/tracer.h"
#include "util/util.h"


struct seen;

struct pyproc {
	pid_t tgid;
	struct ig_py_codelayout l;
	struct seen *seen;	/* code objects sent, open addressing */
	size_t nseen, capseen;	/* capseen: a power of two */
};

struct ig_pyframes {
	struct ig_tracer *t;
	struct pyproc *p;
	size_t n, cap;
};

struct ig_pyframes *ig_pyframes_new(struct ig_tracer *t)
{
	struct ig_pyframes *p;

	if (getenv("IDLEGAP_NO_PYSTACKS"))
		return NULL;
	p = calloc(1, sizeof(*p));

	if (p)
		p->t = t;
	return p;
}

void ig_pyframes_free(struct ig_pyframes *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++)
		free(p->p[i].seen);
	free(p->p);
	free(p);
}

static struct pyproc *proc_of(struct ig_pyframes *p, pid_t tgid)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->p[i].tgid == tgid)
			return &p->p[i];
	return NULL;
}

bool ig_pyframes_tracked(struct ig_pyframes *p, pid_t tgid)
{
	return p && proc_of(p, tgid);
}

int ig_pyframes_track(struct ig_pyframes *p, pid_t tgid,
		      const struct ig_pyrt_info *rt, struct ig_pybuild *info)
{
	struct ig_py_offsets o;
	struct ig_py_codelayout l;
	struct pyproc *pp;
	int err;

	if (!p)
		return -ENOTSUP;
	err = ig_pylayout_find(ig_pylayout_read_mem, &tgid, rt, &o, &l, info);
	if (err)
		return err;
	pp = proc_of(p, tgid);
	if (!pp) {
		if (!ig_grow((void **)&p->p, &p->cap, p->n, sizeof(*p->p)))
			return -ENOMEM;
		pp = &p->p[p->n++];
		memset(pp, 0, sizeof(*pp));
		pp->tgid = tgid;
	}
	pp->l = l;
	return ig_tracer_py_offsets(p->t, tgid, &o);
}

void ig_pyframes_forget(struct ig_pyframes *p, pid_t tgid)
{
	struct pyproc *pp = p ? proc_of(p, tgid) : NULL;

	if (!pp)
		return;
	ig_tracer_py_offsets(p->t, tgid, NULL);
	free(pp->seen);
	*pp = p->p[--p->n];
}

void ig_pyframes_forget_sent(struct ig_pyframes *p)
{
	size_t i;

	for (i = 0; p && i < p->n; i++) {
		free(p->p[i].seen);
		p->p[i].seen = NULL;
		p->p[i].nseen = p->p[i].capseen = 0;
	}
}

struct seen {
	__u64 code, sig;
};

/* What tells one code object from a later one at the same address (the
 * first freed, its memory reused): its name, file and line table objects
 * and first line.  0: unreadable. */
static __u64 code_sig(const struct pyproc *pp, pid_t pid, __u64 code)
{
	const struct ig_py_codelayout *l = &pp->l;
	unsigned char b[256];
	__u32 f[5] = { l->name, l->qualname, l->filename, l->linetable,
		       l->firstlineno };
	__u64 h = 0xcbf29ce484222325ULL, v;
	size_t i;

	if (ig_pylayout_read_mem(&pid, code, b, sizeof(b)))
		return 0;
	for (i = 0; i < 5; i++) {
		if (f[i] > sizeof(b) - 8)
			continue;
		memcpy(&v, b + f[i], sizeof(v));
		if (i == 4)
			v &= 0xffffffff;
		h = (h ^ v) * 0x100000001b3ULL;
	}
	return h ? h : 1;
}

static bool seen_grow(struct pyproc *pp)
{
	size_t cap = pp->capseen ? 2 * pp->capseen : 256, i, m;
	struct seen *old = pp->seen, *s = calloc(cap, sizeof(*s));

	if (!s)
		return false;
	for (i = 0; i < pp->capseen; i++)
		for (m = old[i].code * 0x9e3779b97f4a7c15ULL; old[i].code; m++)
			if (!s[m & (cap - 1)].code) {
				s[m & (cap - 1)] = old[i];
				break;
			}
	pp->seen = s;
	pp->capseen = cap;
	free(old);
	return true;
}

/* Whether @code with @sig is news: not sent yet, or sent for another
 * object that lived at the same address.  An unreadable object (sig 0:
 * mostly a process that exited before its last stacks were read) is news
 * only the first time: it says nothing against the names already sent. */
static bool seen_add(struct pyproc *pp, __u64 code, __u64 sig)
{
	size_t m;

	if (2 * (pp->nseen + 1) > pp->capseen && !seen_grow(pp))
		return true;	/* sent again rather than lost */
	for (m = code * 0x9e3779b97f4a7c15ULL;; m++) {
		struct seen *e = &pp->seen[m & (pp->capseen - 1)];

		if (e->code == code) {
			if (e->sig == sig || !sig)
				return false;
			e->sig = sig;
			return true;
		}
		if (!e->code) {
			*e = (struct seen){ code, sig };
			pp->nseen++;
			return true;
		}
	}
}

void ig_pyframes_on_stack(struct ig_pyframes *p, const struct ig_hdr *rec,
			  ig_pyemit_fn emit, void *ctx)
{
	const struct ig_pystack *s = (const void *)rec;
	struct pyproc *pp = p ? proc_of(p, rec->tgid) : NULL;
	static struct ig_pycode c;
	pid_t pid = rec->tgid;
	int i;

	if (!pp || rec->size < IG_PYSTACK_SIZE(s->nframes))
		return;
	for (i = 0; i < s->nframes && i < IG_PY_DEPTH; i++) {
		if (!s->f[i].code ||
		    !seen_add(pp, s->f[i].code, code_sig(pp, pid, s->f[i].code)))
			continue;
		ig_pycode_read(&pp->l, ig_pylayout_read_mem, &pid, s->f[i].code, &c);
		c.h = (struct ig_hdr){ .type = IG_REC_PYCODE,
				       .size = IG_PYCODE_SIZE(c.ltlen),
				       .cpu = rec->cpu & 0xffff, .tid = rec->tid,
				       .tgid = rec->tgid, .ts = rec->ts };
		emit(&c.h, ctx);
	}
}
