// SPDX-License-Identifier: GPL-2.0
/*
 * The steps in the reports (docs/design.md §4.11, §7.3, §7.4): the job's
 * steps object at the top, the same object in each device's entry, and a
 * short section of the text report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/report/report.h"
#include "engine/jsonval.h"
#include "engine/steps/steps.h"

#define STEPS_LIST_MAX	10000	/* steps listed in the JSON at most */
#define SLOW_RULE	"wall time over 1.5 x the p50 of the whole steps"
#define WHATIF_METHOD	"first-order estimate: the cause's time taken out of " \
			"each step, and the steps it dominated taken as the " \
			"mean of those it did not; one cause at a time, not " \
			"additive: where a wait was hidden behind another (a " \
			"prefetching loader), removing one exposes the next"

static jo *jcause(int cause)
{
	const char *n = ig_steps_cause_name(cause);

	return n ? jstr(n) : NULL;
}

static jo *step_json(const struct ig_step *st)
{
	jo *o = json_object_new_object(), *c = json_object_new_object();
	unsigned int order[IG_C__MAX];
	size_t n = ig_names_by_ns(st->cause_ns, order), k;

	add(o, "index", ju64(st->index));
	add(o, "start_ns", ju64(st->t0));
	add(o, "end_ns", ju64(st->t1));
	add(o, "wall_s", jsec(st->t1 - st->t0));
	add(o, "busy_s", jsec(st->ns[IG_SS_BUSY]));
	add(o, "idle_s", jsec(st->ns[IG_SS_IDLE]));
	add(o, "peer_wait_s", jsec(st->ns[IG_SS_PEER]));
	add(o, "unresolved_s", jsec(st->ns[IG_SS_UNRES]));
	add(o, "cause", jcause(st->cause));
	for (k = 0; k < n; k++)
		add(c, ig_names_cause(order[k]), jsec(st->cause_ns[order[k]]));
	add(o, "causes", c);
	add(o, "partial", json_object_new_boolean(st->partial));
	add(o, "slow", json_object_new_boolean(st->slow));
	if (st->late_rank >= 0 || st->ns[IG_SS_PEER]) {
		add(o, "late_rank", st->late_rank >= 0 ?
		    json_object_new_int(st->late_rank) : NULL);
		add(o, "late_cause", jcause(st->late_cause));
	}
	return o;
}

static jo *steps_obj(const struct ig_steps_out *s)
{
	jo *o = json_object_new_object(), *slow = json_object_new_array();
	jo *list = json_object_new_array(), *wi = json_object_new_array();
	uint32_t i, listed = 0;

	add(o, "found", json_object_new_boolean(s->found));
	add(o, "pid", s->found ? ju64(s->pid) : NULL);
	add(o, "count", ju64(s->found ? s->n + s->list_omitted : 0));
	add(o, "complete", ju64(s->found ? s->complete : 0));
	add(o, "source", s->found ? jstr(s->source) : NULL);
	add(o, "why_none", s->found ? NULL : jstr(s->why_none));
	add(o, "p50_s", s->found ? jnum(s->p50_s, 6) : NULL);
	add(o, "p90_s", s->found ? jnum(s->p90_s, 6) : NULL);
	add(o, "p99_s", s->found ? jnum(s->p99_s, 6) : NULL);
	add(o, "mean_s", s->found ? jnum(s->mean_s, 6) : NULL);
	add(o, "slow_rule", jstr(SLOW_RULE));
	for (i = 0; s->found && i < s->n; i++) {
		if (s->v[i].slow)
			json_object_array_add(slow, ju64(s->v[i].index));
		if (listed < STEPS_LIST_MAX) {
			json_object_array_add(list, step_json(&s->v[i]));
			listed++;
		}
	}
	add(o, "slow", slow);
	add(o, "list", list);
	add(o, "list_omitted", ju64(s->found ? s->n - listed + s->list_omitted : 0));
	add(o, "segments_dropped", ju64(s->dropped_segs));
	for (i = 0; s->found && i < s->nwhatif; i++) {
		const struct ig_step_whatif *w = &s->whatif[i];
		jo *x = json_object_new_object();

		add(x, "cause", jcause(w->cause));
		add(x, "steps", ju64(w->steps));
		add(x, "step_mean_without_s", jnum(w->mean_without_s, 6));
		add(x, "step_mean_s", jnum(w->mean_s, 6));
		json_object_array_add(wi, x);
	}
	add(o, "what_if", wi);
	add(o, "what_if_method", jstr(WHATIF_METHOD));
	return o;
}

/* @s's object, "device" added where it is not a device's own; @s is
 * freed. */
static jo *steps_take(struct ig_steps_out *s, bool device)
{
	jo *o = steps_obj(s);

	if (device)
		add(o, "device", s->found ? json_object_new_int(s->device) : NULL);
	ig_steps_out_free(s);
	return o;
}

struct json_object *ig_report_steps_json(const struct ig_engine *e, int dev,
					 bool job)
{
	struct ig_steps_out s;

	if (job)
		ig_steps_find_job(e, &s);
	else
		ig_steps_find(e, dev, &s);
	return steps_take(&s, job);
}

struct json_object *ig_report_steps_json_pid(const struct ig_engine *e,
					     uint32_t pid)
{
	struct ig_steps_out s;

	ig_steps_find_pid(e, pid, &s);
	return steps_take(&s, true);
}

static void slow_causes(FILE *out, const struct ig_steps_out *s)
{
	uint32_t n[IG_C__MAX + 2] = { 0 }, i, c, best, shown;

	for (i = 0; i < s->n; i++)
		if (s->v[i].slow)
			n[s->v[i].cause + 1]++;
	for (shown = 0; shown < 3; shown++) {
		for (best = 0, c = 1; c < IG_C__MAX + 2; c++)
			if (n[c] > n[best])
				best = c;
		if (!n[best])
			break;
		fprintf(out, "%s%s %u", shown ? ", " : "", best ?
			ig_steps_cause_name((int)best - 1) : "no idle", n[best]);
		n[best] = 0;
	}
}

void ig_report_steps_text(const struct ig_engine *e, FILE *out)
{
	struct ig_steps_out s;
	uint32_t i, shown = 0;

	ig_steps_find_job(e, &s);
	if (!s.found) {
		fprintf(out, "Steps: none found (%s)\n\n", s.why_none);
		ig_steps_out_free(&s);
		return;
	}
	fprintf(out, "Steps: %u whole, %llu cut by the trace's ends; each ends at\n"
		"  %s; p50 %.2f ms, p90 %.2f ms, p99 %.2f ms\n", s.complete,
		(unsigned long long)(s.n + s.list_omitted - s.complete),
		s.source, s.p50_s * 1e3, s.p90_s * 1e3, s.p99_s * 1e3);
	if (s.nslow) {
		fprintf(out, "  %u slow (over %.1f x p50): ", s.nslow,
			s.slow_factor);
		slow_causes(out, &s);
		fprintf(out, "\n");
	}
	for (i = 0; i < s.n && shown < 3; i++) {
		const struct ig_step *st = &s.v[i];

		if (!st->slow)
			continue;
		fprintf(out, "    step %u: %.2f ms, idle %.2f ms", st->index,
			(double)(st->t1 - st->t0) / 1e6,
			(double)st->ns[IG_SS_IDLE] / 1e6);
		if (st->cause >= 0)
			fprintf(out, ", mostly %s", ig_steps_cause_name(st->cause));
		if (st->late_rank >= 0)
			fprintf(out, " (rank %d late)", st->late_rank);
		fprintf(out, "\n");
		shown++;
	}
	for (i = 0; i < s.nwhatif && i < 3; i++) {
		const struct ig_step_whatif *w = &s.whatif[i];

		if (w->mean_s - w->mean_without_s < 0.01 * w->mean_s)
			break;
		if (!i)
			fprintf(out, "  what if (estimates, one cause at a time, "
				"not additive):\n");
		fprintf(out, "    without %s: %.2f ms a step, not %.2f "
			"(%u steps)\n", ig_steps_cause_name(w->cause),
			w->mean_without_s * 1e3, w->mean_s * 1e3, w->steps);
	}
	fprintf(out, "\n");
	ig_steps_out_free(&s);
}
