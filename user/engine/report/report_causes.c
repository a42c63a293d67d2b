// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON report's causes (docs/design.md §7.4): each cause's time, share
 * and details (files and mounts, devices, locks, peers, holders), the
 * stacks its time went to, and the stack tables' counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "engine/report/report.h"
#include "engine/report/report_causes.h"
#include "engine/attrib/files.h"
#include "engine/attrib/atattach.h"
#include "engine/attrib/stacks.h"
#include "engine/jsonval.h"

static void mount_json(const struct ig_engine *e, jo *o, uint32_t id)
{
	const struct ig_mount *m = ig_files_mount_at(e, id);

	add(o, "mount", m ? jstr(m->path) : NULL);
	add(o, "fstype", m ? jstr(m->fstype) : NULL);
}

/* Where the file is: its path as the process names it, its mount. */
static void file_json(const struct ig_engine *e, jo *o,
		      const struct ig_detail *d)
{
	const struct ig_fileinfo *fi = d->k ? ig_files_find(e, d->k) : NULL;

	if (fi)
		add(o, "path", jstr(fi->path));
	else
		add(o, "path", d->name[0] == '/' ? jstr(d->name) : NULL);
	mount_json(e, o, fi ? fi->mount : 0);
}

static jo *detail_json(const struct ig_engine *e, const struct ig_detail *d)
{
	jo *o = json_object_new_object();
	const struct ig_biodev *b;
	char buf[64];

	add(o, "kind", jstr(ig_report_dkind_name(d->kind)));
	switch (d->kind) {
	case IG_D_FILE:
		add(o, "file", jstr(d->name));
		add(o, "pid", ju64(d->pid));
		file_json(e, o, d);
		break;
	case IG_D_MOUNT:
		mount_json(e, o, (uint32_t)d->k);
		add(o, "files", ju64(d->aux[0]));
		break;
	case IG_D_DEVICE:
		ig_report_fmt_dev((uint32_t)d->k, buf, sizeof(buf));
		add(o, "dev", jstr(buf));
		b = ig_report_biodev_find(e, (uint32_t)d->k);
		if (b) {
			add(o, "reads", ju64(b->reads));
			add(o, "read_p50_ms", jms(ig_hist_quantile(&b->lat, 0.5)));
			add(o, "read_p99_ms",
			    jms(ig_hist_quantile(&b->lat, 0.99)));
		}
		break;
	case IG_D_PROCESS:
		add(o, "pid", ju64(d->pid));
		add(o, "comm", jstr(d->name));
		break;
	case IG_D_CPU:
		add(o, "cpu", ju64(d->k));
		break;
	case IG_D_LOCK:
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)d->k);
		add(o, "addr", jstr(buf));
		add(o, "pid", ju64(d->pid));
		break;
	case IG_D_HOLDER:
		add(o, "holder_on_cpu_s", jsec(d->aux[0]));
		add(o, "holder_runnable_s", jsec(d->aux[1]));
		add(o, "holder_blocked_s", jsec(d->aux[2]));
		/* fall through */
	case IG_D_WAKER:
	case IG_D_THREAD:
		add(o, "tid", ju64(d->tid));
		add(o, "pid", ju64(d->pid));
		add(o, "comm", jstr(d->name));
		break;
	case IG_D_PEER:
		add(o, "peer", jstr(d->name));
		add(o, "proto", jstr(d->k == 6 ? "tcp" : d->k == 17 ? "udp" : "?"));
		break;
	case IG_D_API:
		add(o, "api", jstr(d->name));
		break;
	case IG_D_WHY:
		add(o, "why", jstr(d->name));
		break;
	}
	add(o, "seconds", jsec(ig_report_detail_ns(d)));
	add(o, "count", ju64(d->count));
	return o;
}

/* Per kind, the top few; the kinds that explain the cause first. */
static jo *details_json(const struct ig_engine *e, unsigned int cause,
			const struct ig_cause_acc *c, uint64_t *omitted)
{
	const struct ig_detail *top[IG_DET_CAP];
	uint8_t kinds[16];
	jo *a = json_object_new_array();
	bool done[16] = { false };
	size_t nk = ig_report_cause_kinds(cause, kinds, 3), n, i, k;
	uint32_t j;

	/* then any other kind present, in the order first seen */
	for (j = 0; j < c->ndet && nk < 16; j++) {
		for (k = 0; k < nk && kinds[k] != c->det[j].kind; k++)
			;
		if (k == nk)
			kinds[nk++] = c->det[j].kind;
	}
	*omitted = 0;
	for (k = 0; k < nk; k++) {
		if (kinds[k] >= 16 || done[kinds[k]])
			continue;
		done[kinds[k]] = true;
		n = ig_report_details_sorted(c, kinds[k], top, IG_DET_CAP);
		for (i = 0; i < n; i++) {
			if (i < IG_DET_SHOW)
				json_object_array_add(a, detail_json(e, top[i]));
			else
				(*omitted)++;
		}
	}
	return a;
}

/* The top stacks of each role: {"kind": "stack", "role", "lang",
 * "frames" (innermost first), "seconds", "count"}. */
#define STACKS_SHOWN	4

static void stacks_json(const struct ig_engine *e, bool idle,
			unsigned int cause, jo *a)
{
	struct ig_stk_line *l = malloc(IG_STK_CAP * sizeof(*l));
	size_t n, i;
	unsigned int role;
	uint16_t k;

	if (!l)
		return;
	for (role = 0; role < IG_SR__MAX; role++) {
		n = ig_stacks_lines(e, idle, cause, role, l, IG_STK_CAP);
		for (i = 0; i < n && i < STACKS_SHOWN; i++) {
			jo *o = json_object_new_object(), *f = json_object_new_array();

			add(o, "kind", jstr("stack"));
			add(o, "role", jstr(ig_stacks_role_name(role)));
			add(o, "lang", jstr(ig_stacks_lang_name(l[i].lang)));
			for (k = 0; k < l[i].n; k++)
				json_object_array_add(f, jstr(l[i].f[k]));
			add(o, "frames", f);
			add(o, "seconds", jsec(l[i].ns));
			add(o, "count", ju64(l[i].count));
			json_object_array_add(a, o);
		}
	}
	free(l);
}

/*
 * Shares rounded so the printed values sum to exactly 1 (largest
 * remainder, in millionths).
 */
static void shares(const struct ig_causeset *s, const unsigned int *order,
		   size_t n, uint64_t *micro)
{
	uint64_t left = 1000000, rem[IG_C__MAX];
	size_t i, j;

	for (i = 0; i < n; i++) {
		unsigned __int128 x = (unsigned __int128)s->c[order[i]].ns *
				      1000000;

		micro[i] = (uint64_t)(x / s->total_ns);
		rem[i] = (uint64_t)(x % s->total_ns);
		left -= micro[i];
	}
	while (left && n) {
		for (j = 0, i = 1; i < n; i++)
			if (rem[i] > rem[j])
				j = i;
		micro[j]++;
		rem[j] = 0;
		left--;
	}
}

jo *ig_report_causes_json(const struct ig_engine *e, const struct ig_causeset *s)
{
	unsigned int order[IG_C__MAX];
	uint64_t micro[IG_C__MAX];
	size_t n = ig_report_causes_sorted(s, order), i;
	jo *a = json_object_new_array();

	if (!s->total_ns)
		return a;
	shares(s, order, n, micro);
	for (i = 0; i < n; i++) {
		const struct ig_cause_acc *c = &s->c[order[i]];
		jo *o = json_object_new_object();
		uint64_t omitted;

		add(o, "cause", jstr(ig_names_cause(order[i])));
		add(o, "seconds", jsec(c->ns));
		add(o, "share", jnum((double)micro[i] / 1e6, 6));
		/* through waits whose reason /proc gave at the start (§5.14) */
		if (s == &e->attr.idle && e->atattach)
			add(o, "recovered_at_attach_s",
			    jsec(ig_atattach_cause_ns(e, (int)order[i])));
		add(o, "details", details_json(e, order[i], c, &omitted));
		stacks_json(e, s == &e->attr.idle, order[i],
			    json_object_object_get(o, "details"));
		add(o, "details_omitted", ju64(omitted));
		add(o, "details_approximate",
		    json_object_new_boolean(c->evicted != 0));
		json_object_array_add(a, o);
	}
	return a;
}

/* The name tables of stacks: what they hold, and what their bounds
 * evicted (user/stacks/ustacks.h). */
jo *ig_report_stack_tables_json(const struct ig_engine *e)
{
	jo *o = json_object_new_object();
	struct ig_stk_held h;

	ig_stacks_held(e, &h);
	add(o, "native_stacks", ju64(h.nat));
	add(o, "native_names", ju64(h.syms));
	add(o, "python_stacks", ju64(h.py));
	add(o, "python_code", ju64(h.code));
	add(o, "evicted_native_stacks", ju64(h.ev_nat));
	add(o, "evicted_native_names", ju64(h.ev_syms));
	add(o, "evicted_python_stacks", ju64(h.ev_py));
	add(o, "evicted_python_code", ju64(h.ev_code));
	return o;
}
