// SPDX-License-Identifier: GPL-2.0
/* Names of native stack frames for the record stream: each address a
 * process's stacks carry is named once, in an IG_REC_USYM record sent
 * before the stack (symbolize.h). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stacks/symbolize_int.h"
#include "stacks/ustacks.h"
#include "util/util.h"

/* Forgets @ip, remembered by seen_before: named later. */
static void unsee(struct symproc *p, uint64_t ip)
{
	size_t lo = 0, hi = p->nseen, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->seen[mid] == ip) {
			memmove(p->seen + mid, p->seen + mid + 1,
				(p->nseen - mid - 1) * sizeof(ip));
			p->nseen--;
			return;
		}
		if (p->seen[mid] < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
}

/* Whether @ip was named for @p already; remembers it if not (the list
 * stays sorted: one insertion, not a sort per address). */
static bool seen_before(struct symproc *p, uint64_t ip)
{
	size_t lo = 0, hi = p->nseen, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->seen[mid] == ip)
			return true;
		if (p->seen[mid] < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (p->nseen >= IG_USYMS_MAX) {
		/* a process with ever new code: start over, naming each
		 * address again once (the name tables take it again) */
		p->nseen = 0;
		lo = 0;
	}
	if (!ig_grow_from((void **)&p->seen, &p->capseen, p->nseen, sizeof(*p->seen), 64))
		return true;	/* nameless rather than unbounded */
	memmove(p->seen + lo + 1, p->seen + lo, (p->nseen - lo) * sizeof(ip));
	p->seen[lo] = ip;
	p->nseen++;
	return false;
}

static void emit_usym(const struct ig_hdr *st, uint64_t ip,
		      const struct ig_sym_frame *f, ig_usym_emit_fn emit,
		      void *ctx)
{
	union {
		struct ig_usym u;
		char buf[sizeof(struct ig_usym) + IG_USYM_NAME_MAX + 8];
	} r;
	size_t len = strnlen(f->name, sizeof(f->name) - 1) + 1;

	memset(&r, 0, sizeof(r));
	r.u.h.type = IG_REC_USYM;
	r.u.h.size = (sizeof(r.u) + len + 7) & ~(size_t)7;
	r.u.h.cpu = IG_HDR_CPU(st->cpu);
	r.u.h.tid = st->tgid;
	r.u.h.tgid = st->tgid;
	r.u.h.ts = st->ts;
	r.u.ip = ip;
	r.u.flags = f->flags;
	r.u.len = len;
	memcpy(r.u.name, f->name, len - 1);
	emit(&r.u.h, ctx);
}

/*
 * Addresses in none of a process's maps while those were too fresh to
 * read again: named unmapped for now, and again once the maps may be
 * read, at the process's next stack record, a reference included.  A
 * stack sent whole once and then only referred to (a loop's sleep, first
 * seen while its library was still being mapped) would otherwise keep the
 * unmapped names for the whole recording.
 */
#define PENDING_MAX	64

static void pend(struct ig_symbolizer *s, struct symproc *p, uint64_t ip)
{
	if (p->npending >= PENDING_MAX ||
	    !ig_grow_from((void **)&p->pending, &p->cappending, p->npending,
			  sizeof(*p->pending), 16)) {
		unsee(p, ip);	/* named again when a stack carries it */
		return;
	}
	p->pending[p->npending++] = ip;
	s->npending++;
}

/* Names @p's pending addresses once its maps are read again.  An address
 * still in none of them (or maps that cannot be read) keeps its unmapped
 * name: with the maps just read, ig_sym_proc_stream() says -EAGAIN. */
static void name_pending(struct ig_symbolizer *s, struct symproc *p,
			 const struct ig_hdr *st, ig_usym_emit_fn emit,
			 void *ctx)
{
	struct ig_sym_frame f;
	size_t i;
	int err;

	if (!p->npending)
		return;
	err = ig_sym_proc_reread(p);
	if (err == -EAGAIN)
		return;
	for (i = 0; i < p->npending && !err; i++)
		if (!ig_sym_proc_stream(s, p, p->pending[i], &f))
			emit_usym(st, p->pending[i], &f, emit, ctx);
	s->npending -= p->npending;
	p->npending = 0;
}

static void on_ustack(struct ig_symbolizer *s, const struct ig_ustack *st,
		      ig_usym_emit_fn emit, void *ctx)
{
	bool ref = st->flags & IG_USF_REF;
	struct symproc *p;
	unsigned int i, n = st->nips;

	if (ref && !s->npending)
		return;		/* names nothing, and nothing is pending */
	p = ref ? ig_sym_proc_find(s, st->h.tgid) : ig_sym_proc_get(s, st->h.tgid);
	if (!p)
		return;		/* gone: its frames stay unnamed */
	name_pending(s, p, &st->h, emit, ctx);
	if (ref)
		return;
	if (n > IG_USTACK_DEPTH ||
	    st->h.size < offsetof(struct ig_ustack, ips) + 8 * (size_t)n)
		return;
	for (i = 0; i < n; i++) {
		uint64_t ip = ig_ustack_lookup_ip(st->ips[i], i);
		struct ig_sym_frame f;
		int err;

		if (seen_before(p, ip))
			continue;
		err = ig_sym_proc_stream(s, p, ip, &f);
		if (err == -EAGAIN)
			pend(s, p, ip);
		else if (err)
			continue;
		emit_usym(&st->h, ip, &f, emit, ctx);
	}
}

void ig_usym_on_record(struct ig_symbolizer **s, const struct ig_hdr *rec,
		       ig_usym_emit_fn emit, void *ctx)
{
	if (rec->type == IG_REC_PROC) {
		unsigned int k = ((const struct ig_proc *)rec)->kind;

		if (*s && (k == IG_PROC_EXEC || k == IG_PROC_GROUP_EXIT))
			ig_sym_forget(*s, rec->tgid);
		return;
	}
	if (rec->type != IG_REC_USTACK ||
	    rec->size < offsetof(struct ig_ustack, ips))
		return;
	if (!*s)
		*s = ig_sym_new();
	if (*s)
		on_ustack(*s, (const struct ig_ustack *)rec, emit, ctx);
}
