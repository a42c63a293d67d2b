// SPDX-License-Identifier: GPL-2.0
/*
 * The head in the reports (docs/design.md §4.12, §7.3, §7.4): the time
 * from the start of tracing to each device's first GPU work seen, how
 * much of it the GPU's counter proved idle, and what the threads were
 * doing then, recovered at attach from /proc (§5.14).
 */
#include <string.h>

#include "engine/head.h"
#include "engine/jsonval.h"
#include "engine/names.h"
#include "engine/attrib/atattach.h"
#include "engine/attrib/files.h"
#include "engine/report/report.h"
#include "engine/report/report_causes.h"
#include "util/escape.h"

static const char *proof_name(const struct ig_head_dev *h)
{
	if (!h->idle_ns)
		return NULL;
	return h->counter == IG_NVW_GPM ? "gpm_graphics_util" : "utilization_samples";
}

/* The states /proc gave the threads of process @pid at the start, and
 * those of every thread whose wait they explained; how many did. */
static unsigned int threads_json(const struct ig_engine *e, uint32_t pid, jo *a)
{
	const struct ig_tstate *s;
	unsigned int n = 0;
	uint32_t it = 0;

	while ((s = ig_atattach_next(e, &it))) {
		jo *o;
		char st[2] = { s->state, 0 };

		/* the feeder's process, and every thread whose wait it explained */
		if (s->h.tgid != pid && !s->pad[0])
			continue;
		o = json_object_new_object();
		add(o, "tid", ju64(s->h.tid));
		add(o, "pid", ju64(s->h.tgid));
		add(o, "state", jstr(st));
		add(o, "syscall", s->syscall >= 0 ? ju64((uint64_t)s->syscall) : NULL);
		add(o, "wchan", jstr(s->wchan));
		add(o, "reason", jstr(ig_rec_reason_name(s->reason)));
		add(o, "name", (s->oflags & IG_F_DETAIL_NAME) ?
			       jstrn(s->detail.name, strnlen(s->detail.name, IG_NAME_LEN)) : NULL);
		add(o, "read_ns", ju64(s->read_ns));
		add(o, "explained_a_wait", json_object_new_boolean(s->pad[0]));
		json_object_array_add(a, o);
		n += s->pad[0] != 0;
	}
	return n;
}

jo *ig_report_head_json(const struct ig_engine *e, int device)
{
	const struct ig_head_dev *h = ig_head_of(e, device);
	jo *o, *t;

	if (!h)
		return NULL;
	o = json_object_new_object();
	/* a GPU nothing placed is no index (§4.2) */
	add(o, "device", h->device >= IG_DEV_UNKNOWN ? NULL : ju64((uint64_t)h->device));
	add(o, "from_ns", ju64(h->from));
	add(o, "first_work_ns", ju64(h->to));
	add(o, "seconds", jsec(h->to - h->from));
	add(o, "idle_s", jsec(h->idle_ns));
	add(o, "unresolved_s", jsec(h->unres_ns));
	add(o, "not_known_s", jsec(h->outside_ns));
	add(o, "proof", proof_name(h) ? jstr(proof_name(h)) : NULL);
	add(o, "counter_windows", ju64(h->nwin));
	add(o, "counter_live", json_object_new_boolean(h->counter_live));
	add(o, "feeder_tid", ju64(h->tid));
	add(o, "feeder_pid", ju64(h->tgid));
	add(o, "recovered_at_attach_s",
	    jsec(h->idle_ns ? ig_atattach_gap_ns(e, device, h->to - h->unres_ns - h->idle_ns) : 0));
	add(o, "causes", h->label ? ig_report_causes_json(e, h->label) :
				    json_object_new_array());
	t = json_object_new_array();
	/* its label rests on states read at the start */
	add(o, "recovered_at_attach", json_object_new_boolean(threads_json(e, h->tgid, t) > 0));
	add(o, "threads", t);
	return o;
}

/* The top detail of a cause of the label, for the text: a file's path
 * where it is known, else its name. */
static const char *top_name(const struct ig_engine *e, const struct ig_cause_acc *c)
{
	const struct ig_detail *d[1];
	const struct ig_fileinfo *fi;

	if (ig_report_details_sorted(c, IG_D_FILE, d, 1) && d[0]->k &&
	    (fi = ig_files_find(e, d[0]->k)) && fi->path)
		return fi->path;
	return ig_report_details_sorted(c, 0, d, 1) && d[0]->name[0] ? d[0]->name : NULL;
}

jo *ig_report_heads_json(const struct ig_engine *e)
{
	const struct ig_head_dev *h;
	jo *a = json_object_new_array();
	uint32_t i;

	for (i = 0; (h = ig_head_dev(e, i)); i++)
		json_object_array_add(a, ig_report_head_json(e, h->device));
	return a;
}

static const char *tail_proof(const struct ig_tail_dev *t)
{
	return t->counter == IG_NVW_GPM ? "gpm_graphics_util" : "utilization_samples";
}

jo *ig_report_tails_json(const struct ig_engine *e)
{
	const struct ig_tail_dev *t;
	jo *a = json_object_new_array(), *o;
	uint32_t i;

	for (i = 0; (t = ig_head_tail_dev(e, i)); i++) {
		o = json_object_new_object();
		add(o, "device", t->device >= IG_DEV_UNKNOWN ? NULL : ju64((uint64_t)t->device));
		add(o, "from_ns", ju64(t->from));
		add(o, "to_ns", ju64(t->to));
		add(o, "seconds", jsec(t->to - t->from));
		add(o, "idle_s", jsec(t->idle_ns));
		add(o, "unresolved_s", jsec(t->unres_ns));
		add(o, "proof", jstr(tail_proof(t)));
		add(o, "counter_windows", ju64(t->nwin));
		add(o, "feeder_tid", ju64(t->tid));
		add(o, "feeder_pid", ju64(t->tgid));
		json_object_array_add(a, o);
	}
	return a;
}

static void tail_text(FILE *out, const struct ig_engine *e)
{
	const struct ig_tail_dev *t;
	uint32_t i;

	for (i = 0; (t = ig_head_tail_dev(e, i)); i++) {
		fprintf(out, "  after its last work seen, work still pending");
		if (ig_head_tail_dev(e, 1) && t->device < IG_DEV_UNKNOWN)
			fprintf(out, " (GPU %d)", t->device);
		fprintf(out, ": %.3f s,\n    of it idle %.3f s (counter 0%%), unresolved %.3f s\n",
			(t->to - t->from) / 1e9, t->idle_ns / 1e9, t->unres_ns / 1e9);
	}
}

void ig_report_head_text(FILE *out, const struct ig_engine *e)
{
	const struct ig_head_dev *h;
	unsigned int order[IG_C__MAX];
	char esc[4 * IG_NAME_LEN];
	uint32_t i;
	size_t n, k;

	for (i = 0; (h = ig_head_dev(e, i)); i++) {
		fprintf(out, "  before its first work seen");
		if (ig_head_dev(e, 1) && h->device < IG_DEV_UNKNOWN)
			fprintf(out, " (GPU %d)", h->device);
		fprintf(out, ": %.3f s,\n    of it idle %.3f s%s, unresolved %.3f s, "
			"not known %.3f s\n", (h->to - h->from) / 1e9, h->idle_ns / 1e9,
			h->idle_ns ? " (counter 0%)" : "", h->unres_ns / 1e9,
			h->outside_ns / 1e9);
		if (!h->label || !(n = ig_report_causes_sorted(h->label, order)))
			continue;
		fprintf(out, "    what the threads did then, recovered at attach:\n");
		for (k = 0; k < n && k < 2; k++) {
			const struct ig_cause_acc *c = &h->label->c[order[k]];
			const char *nm = top_name(e, c);

			fprintf(out, "      %-14s %7.3f s", ig_names_cause(order[k]), c->ns / 1e9);
			if (nm)
				fprintf(out, "  %.50s", ig_esc(esc, sizeof(esc), nm, 2 * IG_NAME_LEN));
			fprintf(out, "\n");
		}
	}
	tail_text(out, e);
}
