/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stacks tied to each cause's time (docs/design.md §5.13): per thread the
 * history of its Python and native stack ids (a thread's stack at a time
 * is its latest stack record at or before it), the names those ids stand
 * for (PYCODE/USYM records), and per (set, cause, role) the top stacks by
 * the time they account for.  Attribution calls in; it calls nothing of
 * attribution back.
 */
#ifndef IG_ENGINE_STACKS_H
#define IG_ENGINE_STACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct ig_engine;
struct ig_thread;
struct ig_ival;
struct ig_hdr;
struct walk;

enum ig_stk_role {
	IG_SR_WAITER,	/* the critical-path thread at the wait's switch-out */
	IG_SR_HOLDER,	/* what the GIL or lock holder ran meanwhile */
	IG_SR_BLOCKED,	/* what issued the read, faulted, received */
	IG_SR__MAX,
};

enum ig_stk_lang { IG_SL_PYTHON, IG_SL_NATIVE, IG_SL_MIXED };

#define IG_STK_CAP	16	/* stacks kept per (set, cause, role) */
#define IG_STK_FRAMES	40	/* frames shown of one stack */
#define IG_STK_FLEN	192	/* bytes of one frame's name */

/* One change of a thread's stack (struct ig_thread.stks, by t). */
struct ig_stk_ref {
	uint64_t t;
	uint64_t py;	/* Python stack id, 0: no Python frame */
	uint64_t nat;	/* native stack id, 0: none seen */
};

/* Where a charge's stack comes from: the thread's stack at the switch-out
 * of @iv, or (no @iv) its CPU samples over [x, y). */
struct ig_stk_pos {
	const struct ig_thread *th;
	const struct ig_ival *iv;
	uint64_t x, y;
};

struct ig_stk_ent {
	uint32_t tgid;
	uint32_t pinned;	/* of a gone process: keeps its names */
	uint64_t py, nat;
	uint64_t ns, err, count;
};

struct ig_stk_tab {
	uint32_t n;
	uint32_t unpinned;	/* pinned entries evicted since the sweep */
	uint64_t evicted;
	struct ig_stk_ent v[IG_STK_CAP];
};

/* A stack as the reports show it, equal ones merged. */
struct ig_stk_line {
	uint8_t lang;		/* enum ig_stk_lang */
	uint8_t role;
	uint16_t n;
	uint64_t ns, count;
	char f[IG_STK_FRAMES][IG_STK_FLEN];	/* innermost first */
};

struct ig_stacks;

/* 0 or -ENOMEM; ig_stacks_free accepts a half-made one. */
int ig_stacks_new(struct ig_engine *e);
void ig_stacks_free(struct ig_engine *e);
size_t ig_stacks_bytes(const struct ig_engine *e);
/* A PYSTACK, USTACK (for thread @t, may be NULL), PYCODE or USYM record. */
void ig_stacks_on_rec(struct ig_engine *e, struct ig_thread *t,
		      const struct ig_hdr *rec);
/* Process @tgid is gone: no charge reaches its stacks any more.  The
 * next ig_stacks_gc frees those the tables do not show, and their names;
 * the rest when the tables drop them. */
void ig_stacks_gone(struct ig_engine *e, uint32_t tgid);
/* Frees what gone processes left, when there is something to free. */
void ig_stacks_gc(struct ig_engine *e);

/* What the name tables hold (tests, -v). */
struct ig_stk_held {
	size_t nat, syms;	/* native stacks, names of addresses */
	size_t py, code;	/* Python stacks, code objects */
	size_t gone;		/* gone processes a table still shows */
	/* evicted from the full tables of live processes (user/stacks/ustacks.h) */
	uint64_t ev_nat, ev_syms, ev_py, ev_code;
};
void ig_stacks_held(const struct ig_engine *e, struct ig_stk_held *h);
/* The thread's stack ids at @t; false when none was seen by then. */
bool ig_stacks_at(const struct ig_thread *th, uint64_t t, struct ig_stk_ref *out);

/* The walk gave @ns to cause @c: the waiter's and the blocked thread's
 * stacks get it (attrib.h: w->top, w->cur). */
void ig_stacks_on_charge(struct walk *w, unsigned int c, uint64_t ns);
/* @ns of cause @c went to a wait on @holder over [x, y). */
void ig_stacks_holder(struct walk *w, unsigned int c,
		      const struct ig_thread *holder, uint64_t x, uint64_t y,
		      uint64_t ns);

/* The stacks of (set, cause, role), most time first, merged by their
 * frames; @out holds @max.  Returns how many. */
size_t ig_stacks_lines(const struct ig_engine *e, bool idle, unsigned int cause,
		       unsigned int role, struct ig_stk_line *out, size_t max);
const char *ig_stacks_role_name(unsigned int role);
const char *ig_stacks_lang_name(unsigned int lang);

#endif
