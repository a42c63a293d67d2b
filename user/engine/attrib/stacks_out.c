// SPDX-License-Identifier: GPL-2.0
/*
 * The stacks of each cause's time, named (docs/design.md §5.13): the
 * lines of the text and JSON reports, and the folded output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/attrib/walk.h"
#include "engine/attrib/stacks.h"
#include "engine/attrib/stacks_int.h"
#include "stacks/folded.h"
#include "stacks/pycode.h"
#include "stacks/ustacks.h"
#include "util/util.h"

#define NATIVE_ABOVE_PY	6	/* native frames shown above Python ones */

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
