// SPDX-License-Identifier: GPL-2.0
/*
 * The `--html` page's steps and flame graph (html_data.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/jsonval.h"
#include "engine/steps/steps.h"
#include "views/html_data.h"

static jo *whatif_json(const struct ig_steps_out *o)
{
	jo *a = json_object_new_array();
	uint32_t i;

	for (i = 0; a && i < o->nwhatif; i++) {
		jo *w = json_object_new_object();

		add(w, "cause", jstr(ig_steps_cause_name(o->whatif[i].cause)));
		add(w, "steps", ju64(o->whatif[i].steps));
		add(w, "mean_s", jnum(o->whatif[i].mean_s, 6));
		add(w, "mean_without_s", jnum(o->whatif[i].mean_without_s, 6));
		json_object_array_add(a, w);
	}
	return a;
}

/* Steps [i, j) as one point: the longest one's wall and cause. */
static jo *point(const struct ig_steps_out *o, uint32_t i, uint32_t j)
{
	jo *p = json_object_new_array_ext(7);
	uint32_t k, top = i;
	double sum = 0;
	int slow = 0, partial = 0;
	const char *cause;

	for (k = i; k < j; k++) {
		const struct ig_step *s = &o->v[k];

		sum += (double)(s->t1 - s->t0);
		if (s->t1 - s->t0 > o->v[top].t1 - o->v[top].t0)
			top = k;
		slow |= s->slow;
		partial |= s->partial;
	}
	cause = ig_steps_cause_name(o->v[top].cause);
	json_object_array_add(p, ju64(o->v[i].index));
	json_object_array_add(p, ju64(o->v[j - 1].index));
	json_object_array_add(p, jnum((double)(o->v[top].t1 - o->v[top].t0) / 1e6, 3));
	json_object_array_add(p, jnum(sum / (j - i) / 1e6, 3));
	json_object_array_add(p, cause ? jstr(cause) : NULL);
	json_object_array_add(p, json_object_new_int(slow));
	json_object_array_add(p, json_object_new_int(partial));
	return p;
}

jo *ig_html_steps_json(const struct ig_engine *e, int dev, unsigned int points)
{
	struct ig_steps_out o;
	jo *s = json_object_new_object(), *pts;
	uint32_t i, group;

	ig_steps_find(e, dev, &o);
	add(s, "key", json_object_new_int(dev));
	add(s, "found", json_object_new_boolean(o.found));
	if (!o.found) {
		add(s, "why_none", jstr(o.why_none));
		ig_steps_out_free(&o);
		return s;
	}
	group = (o.n + points - 1) / points;
	if (!group)
		group = 1;
	add(s, "pid", ju64(o.pid));
	add(s, "source", jstr(o.source));
	add(s, "count", ju64(o.n));
	add(s, "complete", ju64(o.complete));
	add(s, "list_omitted", ju64(o.list_omitted));
	add(s, "p50_s", jnum(o.p50_s, 6));
	add(s, "p90_s", jnum(o.p90_s, 6));
	add(s, "p99_s", jnum(o.p99_s, 6));
	add(s, "mean_s", jnum(o.mean_s, 6));
	add(s, "slow_factor", jnum(o.slow_factor, 2));
	add(s, "slow", ju64(o.nslow));
	add(s, "what_if", whatif_json(&o));
	add(s, "grouped", ju64(group));
	pts = json_object_new_array();
	for (i = 0; pts && i < o.n; i += group)
		json_object_array_add(pts, point(&o, i, i + group < o.n ? i + group : o.n));
	add(s, "points", pts);
	ig_steps_out_free(&o);
	return s;
}

/* The flame graph's tree: nodes in one array, children by index. */
struct node {
	char *name;
	unsigned long long ns;
	int child, next;	/* -1: none */
};

struct tree {
	struct node v[IG_HTML_FLAME_NODES];
	int n;
	unsigned long long truncated;
};

static int child(struct tree *t, int parent, const char *name, size_t len)
{
	int c;

	if (len > IG_HTML_NAME_MAX)
		len = IG_HTML_NAME_MAX;
	for (c = t->v[parent].child; c >= 0; c = t->v[c].next)
		if (strlen(t->v[c].name) == len && !memcmp(t->v[c].name, name, len))
			return c;
	if (t->n == IG_HTML_FLAME_NODES)
		return -1;
	c = t->n;
	t->v[c] = (struct node){ .name = strndup(name, len), .child = -1,
				 .next = t->v[parent].child };
	if (!t->v[c].name)
		return -1;
	t->n++;
	t->v[parent].child = c;
	return c;
}

/* One "a;b;c ns" line. */
static void add_line(struct tree *t, const char *line, size_t len)
{
	const char *sp = memrchr(line, ' ', len), *p = line, *semi;
	unsigned long long ns;
	int at = 0, c;

	if (!sp || sscanf(sp + 1, "%llu", &ns) != 1)
		return;
	t->v[0].ns += ns;
	while (p < sp) {
		semi = memchr(p, ';', (size_t)(sp - p));
		if (!semi)
			semi = sp;
		c = child(t, at, p, (size_t)(semi - p));
		if (c < 0) {
			t->truncated++;
			break;
		}
		at = c;
		t->v[at].ns += ns;
		p = semi + 1;
	}
}

static jo *node_json(const struct tree *t, int i)
{
	jo *o = json_object_new_object(), *kids = NULL;
	int c;

	add(o, "n", jstr(t->v[i].name));
	add(o, "v", ju64(t->v[i].ns));
	for (c = t->v[i].child; c >= 0; c = t->v[c].next) {
		if (!kids)
			kids = json_object_new_array();
		json_object_array_add(kids, node_json(t, c));
	}
	if (kids)
		add(o, "c", kids);
	return o;
}

jo *ig_html_flame_json(const char *text)
{
	struct tree *t = calloc(1, sizeof(*t));
	const char *p = text, *nl;
	jo *o;
	int i;

	if (!t)
		return NULL;
	t->v[0] = (struct node){ .name = strdup(""), .child = -1, .next = -1 };
	t->n = 1;
	for (; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		add_line(t, p, nl ? (size_t)(nl - p) : strlen(p));
	}
	o = node_json(t, 0);
	add(o, "truncated", ju64(t->truncated));
	for (i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t);
	return o;
}
