// SPDX-License-Identifier: GPL-2.0
/*
 * Estimated idle in the reports (docs/design.md §4.10, §7.3, §7.4): apart
 * from proven idle, with its interval, the check it passed, or why there
 * is none.
 */
#include <string.h>

#include "engine/estimate/estimate.h"
#include "engine/jsonval.h"
#include "engine/report/report.h"

static const char *counter_name(uint32_t kind)
{
	return kind == 1 ? "utilization_samples" : kind == 2 ? "gpm_graphics_util" : "?";
}

/* The device counters' part (docs/design.md §4.10, "Device counters"). */
static jo *devfig_json(const struct est_devfig *v)
{
	jo *o = json_object_new_object();

	add(o, "counter", jstr(counter_name(v->kind)));
	add(o, "windows", ju64(v->windows));
	add(o, "period_s", jnum(v->period_s, 3));
	add(o, "step_pct", jnum(v->quant_pct, 4));
	add(o, "unresolved_covered_s", jsec(v->covered_ns));
	/* the counter counts every process on the GPU */
	add(o, "device_wide", json_object_new_boolean(1));
	add(o, "processes_on_gpu", ju64(v->nproc));
	add(o, "shared", json_object_new_boolean(v->nproc > 1));
	add(o, "launch_model", jstr(v->model ? v->model : "refused"));
	add(o, "launch_model_method", v->with ? jstr(v->with) : NULL);
	return o;
}

void ig_est_json(const struct est_result *r, jo *o)
{
	const char *why = r ? r->refused : "no GPU time";
	unsigned int order[IG_C__MAX];
	size_t n, i;
	jo *a, *f;

	if (r && r->have) {
		add(o, "idle_estimated_s", jsec(r->idle_ns));
		add(o, "idle_estimated_low_s", jsec(r->low_ns));
		add(o, "idle_estimated_high_s", jsec(r->high_ns));
		add(o, "estimate_host_bound_s", jsec(r->host_bound_ns));
		add(o, "estimate_gpu_bound_s", jsec(r->gpu_bound_ns));
	} else {
		add(o, "idle_estimated_s", NULL);
		add(o, "idle_estimated_low_s", NULL);
		add(o, "idle_estimated_high_s", NULL);
		add(o, "estimate_host_bound_s", NULL);
		add(o, "estimate_gpu_bound_s", NULL);
	}
	/* a bound the tool stands behind apart from the estimate: present
	 * where the bounds' check passed, even when the point is refused */
	add(o, "idle_at_least_s", r && r->bounded ? jsec(r->at_least_ns) : NULL);
	f = json_object_new_object();
	add(f, "syncs_checked", ju64(r ? r->checked : 0));
	add(f, "p50_error_us", jnum(r ? r->p50_us : 0, 1));
	add(f, "p90_error_us", jnum(r ? r->p90_us : 0, 1));
	add(f, "blocks", ju64(r ? r->blocks : 0));
	add(o, "estimate_fit", f);
	add(o, "estimate_method", r && r->have && r->method ? jstr(r->method) : NULL);
	add(o, "estimate_refused", r && r->have ? NULL : jstr(why ? why : "no evidence"));
	add(o, "estimate_device", r && r->have && r->dv.have ? devfig_json(&r->dv) : NULL);
	a = json_object_new_array();
	n = r && r->have ? ig_names_by_ns(r->causes, order) : 0;
	for (i = 0; i < n; i++) {
		jo *c = json_object_new_object();

		add(c, "cause", jstr(ig_names_cause(order[i])));
		add(c, "seconds", jsec(r->causes[order[i]]));
		json_object_array_add(a, c);
	}
	add(o, "estimated_causes", a);
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

void ig_est_text(const struct est_result *r, uint64_t idle_ns, uint64_t span_ns,
		 FILE *out)
{
	if (!r || !r->unres_ns)
		return;
	if (!r->have && r->bounded) {	/* a bound, apart from any estimate */
		fprintf(out, "GPU idle %.1f%% proven; at least %.1f%% with bounds from "
			"%llu syncs that\n  returned at once (no estimate: ",
			pct(idle_ns, span_ns), pct(idle_ns + r->at_least_ns, span_ns),
			(unsigned long long)r->bound_marks);
		if (r->wide)
			fprintf(out, "the bounds leave %.0f%% of the span open)\n",
				pct(r->unres_ns - ig_min64(r->at_least_ns, r->unres_ns),
				    span_ns));
		else
			fprintf(out, "%s)\n", r->refused ? r->refused : "no evidence");
		return;
	}
	if (!r->have) {
		fprintf(out, "GPU idle %.1f%% proven; no estimate of the unresolved "
			"time: %s\n", pct(idle_ns, span_ns),
			r->refused ? r->refused : "no evidence");
		return;
	}
	fprintf(out, "GPU idle %.1f%% proven; with estimates %.1f%% (%.1f-%.1f%%), ",
		pct(idle_ns, span_ns), pct(idle_ns + r->idle_ns, span_ns),
		pct(idle_ns + r->low_ns, span_ns), pct(idle_ns + r->high_ns, span_ns));
	if (r->dv.have) {
		fprintf(out, "from the GPU's own counter (%s, %u windows of %.3f s)",
			r->dv.kind == 2 ? "GPM" : "utilization samples",
			r->dv.windows, r->dv.period_s);
		if (r->dv.with)
			fprintf(out, ",\n  the launch model's (%s) %s with it", r->dv.with,
				r->dv.model);
		if (r->dv.nproc > 1)
			fprintf(out, ",\n  device-wide: %u processes share the GPU", r->dv.nproc);
	} else if (r->method && !strcmp(r->method, "bound"))
		fprintf(out, "bounded by %llu syncs that returned at once, "
			"held-out p90 overshoot %.0f us",
			(unsigned long long)r->checked, r->p90_us);
	else
		fprintf(out, "model checked on %llu syncs, p90 error %.0f us",
			(unsigned long long)r->checked, r->p90_us);
	if (r->blocks > 1)	/* a long run's, a block at a time (§4.10) */
		fprintf(out, ", in %u blocks", r->blocks);
	fputc('\n', out);
}
