// SPDX-License-Identifier: GPL-2.0
/*
 * The terminal report: the answer first (how idle the GPU was and why),
 * then the evidence behind it.  Fits 80 columns; every column header says
 * its unit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/estimate/estimate.h"
#include "engine/report/report.h"
#include "engine/peers/peers.h"
#include "engine/merge.h"
#include "engine/attrib/files.h"
#include "engine/attrib/stacks.h"
#include "util/escape.h"

#define LABEL_W		56	/* detail label column */
#define SHOW_DETAILS	2	/* per cause in the text report */

static double sec(uint64_t ns)
{
	return (double)ns / 1e9;
}

static double pct(uint64_t part, uint64_t whole)
{
	return 100.0 * ig_report_share(part, whole);
}

/* Keep the end of long labels (file names matter at their tail). */
static void fit(char *s, size_t w)
{
	size_t n = strlen(s), from;

	if (n <= w)
		return;
	/* from a character's start: no stray UTF-8 continuation bytes */
	for (from = n - (w - 3); ((unsigned char)s[from] & 0xc0) == 0x80; from++)
		;
	memmove(s + 3, s + from, n - from + 1);
	memcpy(s, "...", 3);
}

/* 1234567 -> "1,234,567" */
static void thousands(uint64_t v, char *buf, size_t n)
{
	char raw[24];
	size_t len, i, at = 0;

	len = (size_t)snprintf(raw, sizeof(raw), "%llu", (unsigned long long)v);
	for (i = 0; i < len && at + 2 < n; i++) {
		if (i && (len - i) % 3 == 0)
			buf[at++] = ',';
		buf[at++] = raw[i];
	}
	buf[at] = '\0';
}

/* The escaped end of @path: the label shows a path's tail (fit()). */
static char *esc_tail(char *buf, size_t n, const char *path)
{
	size_t len = strlen(path), keep = (n - 1) / 4;

	return ig_esc(buf, n, path + (len > keep ? len - keep : 0), keep);
}

static void detail_label(const struct ig_engine *e, const struct ig_detail *d,
			 char *buf, size_t n)
{
	char dev[32], nm[IG_ESC_SIZE(sizeof(d->name))], pth[IG_ESC_SIZE(48)];
	const struct ig_fileinfo *fi;
	const struct ig_biodev *b;
	const struct ig_mount *m;

	/* names are the target's: never raw to the terminal */
	ig_esc(nm, sizeof(nm), d->name, sizeof(d->name));
	switch (d->kind) {
	case IG_D_FILE:
		fi = d->k ? ig_files_find(e, d->k) : NULL;
		snprintf(buf, n, "%s", fi ? esc_tail(pth, sizeof(pth), fi->path) : nm);
		break;
	case IG_D_MOUNT:
		m = ig_files_mount_at(e, (uint32_t)d->k);
		thousands(d->aux[0], dev, sizeof(dev));
		snprintf(buf, n, "reading %s file%s under %s (%s)", dev,
			 d->aux[0] == 1 ? "" : "s",
			 m ? esc_tail(pth, sizeof(pth), m->path) : "?",
			 m ? ig_esc(nm, sizeof(nm), m->fstype, sizeof(m->fstype)) : "?");
		break;
	case IG_D_DEVICE:
		ig_report_fmt_dev((uint32_t)d->k, dev, sizeof(dev));
		b = ig_report_biodev_find(e, (uint32_t)d->k);
		if (b)
			snprintf(buf, n, "dev %s, reads p50 %.1f ms p99 %.1f ms",
				 dev, ig_hist_quantile(&b->lat, 0.5) / 1e6,
				 ig_hist_quantile(&b->lat, 0.99) / 1e6);
		else
			snprintf(buf, n, "dev %s", dev);
		break;
	case IG_D_PROCESS:
		snprintf(buf, n, "ran instead: pid %u (%s)", d->pid, nm);
		break;
	case IG_D_CPU:
		snprintf(buf, n, "on cpu %llu", (unsigned long long)d->k);
		break;
	case IG_D_LOCK:
		snprintf(buf, n, "lock 0x%llx in pid %u",
			 (unsigned long long)d->k, d->pid);
		break;
	case IG_D_WAKER:
		snprintf(buf, n, "woken by tid %u (%s, pid %u)", d->tid,
			 nm, d->pid);
		break;
	case IG_D_HOLDER:
		snprintf(buf, n, "holder tid %u (%s), on cpu %.0f%%", d->tid,
			 nm, pct(d->aux[0], d->aux[0] + d->aux[1] +
					       d->aux[2]));
		break;
	case IG_D_PEER:
		snprintf(buf, n, "peer %s", nm);
		break;
	case IG_D_API:
		snprintf(buf, n, "%s", nm);
		break;
	case IG_D_THREAD:
		snprintf(buf, n, "tid %u (%s, pid %u)", d->tid, nm,
			 d->pid);
		break;
	case IG_D_WHY:
		snprintf(buf, n, "%s", nm);
		break;
	default:
		snprintf(buf, n, "?");
	}
	fit(buf, LABEL_W);
}

/* The most telling details: the top one of each kind the cause is
 * explained by, or the top two when it has one kind. */
static size_t top_details(const struct ig_cause_acc *c, unsigned int cause,
			  const struct ig_detail **out)
{
	uint8_t kinds[3];
	size_t nk = ig_report_cause_kinds(cause, kinds, 3), n = 0, i;

	if (nk == 1)
		n = ig_report_details_sorted(c, kinds[0], out, SHOW_DETAILS);
	for (i = 0; nk > 1 && i < nk && n < SHOW_DETAILS; i++)
		n += ig_report_details_sorted(c, kinds[i], out + n, 1);
	/* hide what rounds to nothing */
	while (n && ig_report_detail_ns(out[n - 1]) < 500000)
		n--;
	return n;
}

/* "func (/a/b/file.py:12)" as "func (file.py:12)": the JSON has paths. */
static size_t short_frame(char *buf, size_t n, const char *sep, const char *f)
{
	const char *p = strstr(f, " ("), *slash = p ? strrchr(p, '/') : NULL;
	int w;

	if (slash)
		w = snprintf(buf, n, "%s%.*s (%s", sep, (int)(p - f), f, slash + 1);
	else
		w = snprintf(buf, n, "%s%s", sep, f);
	return w < 0 ? 0 : (size_t)w;
}

/* Where in the code: the cause's top stack, of the role that says most
 * (what blocked, what held, who waited), on one or two lines of 80. */
#define STACK_W		72

static void stack_lines(FILE *out, const struct ig_engine *e, bool idle,
			unsigned int cause)
{
	static const unsigned int roles[] = { IG_SR_BLOCKED, IG_SR_HOLDER,
					      IG_SR_WAITER };
	struct ig_stk_line *l = malloc(IG_STK_CAP * sizeof(*l));
	char buf[2 * STACK_W + 1];
	size_t n = 0, i, off, len;
	uint16_t k;

	for (i = 0; l && i < 3 && !n; i++)
		n = ig_stacks_lines(e, idle, cause, roles[i], l, IG_STK_CAP);
	if (!n || l[0].ns < 500000) {
		free(l);
		return;
	}
	off = snprintf(buf, sizeof(buf), "%s (%s, %.3f s): ",
		       ig_stacks_role_name(l[0].role), ig_stacks_lang_name(l[0].lang),
		       sec(l[0].ns));
	for (k = 0; k < l[0].n && off < sizeof(buf) - 1; k++)
		off += short_frame(buf + off, sizeof(buf) - off, k ? " < " : "",
				   l[0].f[k]);
	for (i = 0; buf[i]; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
	len = strlen(buf);
	fprintf(out, "      %.*s\n", STACK_W, buf);
	if (len > STACK_W)
		fprintf(out, "        %.*s%s\n", STACK_W - 2, buf + STACK_W,
			len > 2 * STACK_W - 2 ? "..." : "");
	free(l);
}

static void causes_table(FILE *out, const struct ig_engine *e,
			 const struct ig_causeset *s, size_t max_causes)
{
	unsigned int order[IG_C__MAX];
	size_t n = ig_report_causes_sorted(s, order), i, k, nd, shown = 0;
	const struct ig_detail *top[SHOW_DETAILS];
	char label[IG_ESC_SIZE(IG_NAME_LEN) + 64];

	fprintf(out, "  %-18s %10s %9s\n", "cause", "time(s)", "share(%)");
	for (i = 0; i < n && shown < max_causes; i++) {
		const struct ig_cause_acc *c = &s->c[order[i]];

		if (c->ns < 500000)
			break;
		shown++;
		fprintf(out, "  %-18s %10.3f %9.1f\n", ig_names_cause(order[i]),
			sec(c->ns), pct(c->ns, s->total_ns));
		nd = top_details(c, order[i], top);
		for (k = 0; k < nd; k++) {
			detail_label(e, top[k], label, sizeof(label));
			fprintf(out, "      %-*s %9.3f s\n", LABEL_W, label,
				sec(ig_report_detail_ns(top[k])));
		}
		stack_lines(out, e, s == &e->attr.idle, order[i]);
	}
	if (n > shown)
		fprintf(out, "  (%zu more below, in the JSON report)\n",
			n - shown);
}

/* What the host did, for the bottleneck line. */
static const char *doing(unsigned int cause)
{
	switch (cause) {
#define IG_CAUSE(cause, name, doing, ...) case IG_C_##cause: return doing;
#include "engine/attrib/causes.def"
#undef IG_CAUSE
	}
	return "doing something unknown";
}

/* How the unresolved spans ended says which side was the bottleneck:
 * a sync that returned at once found the GPU done (host-bound), one that
 * waited found it working (GPU-bound). */
static void bound_line(FILE *out, const struct ig_engine *e,
		       const struct ig_gpu_totals *t)
{
	unsigned int order[IG_C__MAX];
	size_t n = ig_report_causes_sorted(&e->attr.unres, order);
	double h = pct(t->unres_host_ns, t->unres_ns);
	double g = pct(t->unres_gpu_ns, t->unres_ns);

	if (h > 50.0) {
		fprintf(out, "host-bound: in %.0f%% of unresolved time the GPU "
			"had finished before the host asked", h);
		if (n)
			fprintf(out, ";\nthe host was %s (%.0f%%)",
				doing(order[0]),
				pct(e->attr.unres.c[order[0]].ns, e->attr.unres.total_ns));
	} else if (g > 50.0) {
		fprintf(out, "GPU-bound: in %.0f%% of unresolved time the host "
			"had to wait for the GPU", g);
	} else {
		fprintf(out, "bottleneck unclear: unresolved time %.0f%% "
			"host-bound, %.0f%% GPU-bound, %.0f%% open", h, g,
			pct(t->unres_open_ns, t->unres_ns));
	}
	fprintf(out, "\n(a sync or query that returns within %.0f us found "
		"the GPU done)\n\n", IG_AT_ONCE_NS / 1e3);
}

/* Host probes cannot prove idle time between launches or inside
 * synchronous copies; say what the host did then when it matters. */
static void unresolved_part(FILE *out, const struct ig_engine *e,
			    const struct ig_gpu_totals *t)
{
	if (!t->unres_ns || pct(t->unres_ns, t->span_ns) < 1.0)
		return;
	fprintf(out, "While the GPU state was unresolved: %.3f s (what the "
		"host did while no\nevidence could tell idle from busy)\n",
		sec(t->unres_ns));
	causes_table(out, e, &e->attr.unres, 5);
	fprintf(out, "\n");
}

static void gpu_section(FILE *out, const struct ig_engine *e,
			const struct ig_gpu_totals *t)
{
	uint32_t i;

	if (t->ndevs > 1) {
		for (i = 0; i < e->gpu.ndevs; i++) {
			const struct ig_device *d = e->gpu.devs[i];
			uint64_t span = ig_gpu_span_end(d) - d->span_start;

			if (!d->active)
				continue;
			if (ig_gpu_dev_unknown(d->ordinal))
				fprintf(out, "  device unknown (pid %d)",
					d->ordinal & (IG_DEV_UNKNOWN - 1));
			else
				fprintf(out, "  device %d", d->ordinal);
			fprintf(out, " over %.3f s: busy %.1f%%, "
				"idle %.1f%%, unresolved %.1f%%\n",
				sec(span), pct(d->busy_ns, span),
				pct(d->idle_ns, span), pct(d->unres_ns, span));
		}
	}
	for (i = 0; i < e->gpu.ndevs; i++)
		if (e->gpu.devs[i]->active &&
		    ig_gpu_dev_unknown(e->gpu.devs[i]->ordinal))
			fprintf(out, "the GPU of pid %d is not known (no "
				"context creation seen, nothing\nnames it): "
				"counted as a device of its own\n",
				e->gpu.devs[i]->ordinal & (IG_DEV_UNKNOWN - 1));
	if (e->lost.any)
		fprintf(out, "warning: records were lost; idle time near the "
			"loss may show as\nunresolved or unknown\n");
	fprintf(out, "\n");
	/* waiting for peers first when it outweighs idle time */
	if (t->peer_wait_ns > t->idle_ns)
		ig_peers_text(out, e);
	/* the larger of the two first: when most of the GPU's waiting could
	 * not be proven idle (back-to-back launches, synchronous copies), what
	 * the host did then is the answer */
	if (t->unres_ns > t->idle_ns) {
		bound_line(out, e, t);
		unresolved_part(out, e, t);
	}
	if (!t->idle_ns) {
		fprintf(out, "No known idle gap%s.\n\n", t->unres_ns ?
			" (the GPU's state was never proven idle)" : "");
	} else {
		fprintf(out, "Why the GPU was idle: %.3f s in %llu gaps "
			"(p50 %.2f ms, p99 %.2f ms)\n", sec(t->idle_ns),
			(unsigned long long)t->gaps,
			ig_hist_quantile(&e->attr.gap_hist, 0.5) / 1e6,
			ig_hist_quantile(&e->attr.gap_hist, 0.99) / 1e6);
		causes_table(out, e, &e->attr.idle, IG_C__MAX);
		fprintf(out, "\n");
	}
	if (t->unres_ns <= t->idle_ns)
		unresolved_part(out, e, t);
	if (t->peer_wait_ns <= t->idle_ns)
		ig_peers_text(out, e);
}

static void processes_section(FILE *out, const struct ig_engine *e)
{
	const struct ig_process **v;
	size_t n = ig_report_procs_sorted(e, &v), i;
	char exe[IG_ESC_SIZE(sizeof(((struct ig_process *)0)->exe))];
	char comm[IG_ESC_SIZE(IG_COMM_LEN)];

	fprintf(out, "Processes: %zu", n);
	if (e->tasks.procs_freed)	/* the table is capped: say so */
		fprintf(out, " listed; %llu more exited and were not kept",
			(unsigned long long)e->tasks.procs_freed);
	fprintf(out, "\n");
	fprintf(out, "  %8s %8s %8s %8s  %-16s %s\n", "pid", "ppid",
		"threads", "subs(n)", "comm", "exe");
	for (i = 0; i < n && i < 20; i++) {
		ig_esc(exe, sizeof(exe), v[i]->exe, sizeof(v[i]->exe));
		fit(exe, 22);
		fprintf(out, "  %8u %8u %8u %8llu  %-16s %s\n", v[i]->pid,
			v[i]->ppid, v[i]->nthreads_seen,
			(unsigned long long)v[i]->submissions,
			ig_esc(comm, sizeof(comm), v[i]->comm, sizeof(v[i]->comm)), exe);
	}
	if (n > 20)
		fprintf(out, "  (%zu more in the JSON report)\n", n - 20);
	free(v);
	fprintf(out, "\n");
}

/* Said only once a bound evicted something: names then may be missing. */
/* What the estimate folded or dropped to keep memory bounded (design
 * §3.5), once it did: proven time is never part of it. */
static void folded_line(FILE *out, const struct ig_engine *e)
{
	struct ig_est_bounds b;

	ig_est_bounds(e, &b);
	if (b.blocks)
		fprintf(out, "Estimate evidence folded as it aged: %llu blocks "
			"(their launches, syncs and unresolved spans summed; "
			"%llu counter windows)\n", (unsigned long long)b.blocks,
			(unsigned long long)b.windows_folded);
	if (b.pieces_dropped)
		fprintf(out, "Device counters: %.3f s of unresolved or idle time "
			"waited %llu s for a window and was left uncovered "
			"(%llu pieces)\n", b.pieces_dropped_ns / 1e9,
			EST_PEND_AGE_S, (unsigned long long)b.pieces_dropped);
	if (b.stretches_left_off)
		fprintf(out, "Timeline: %llu estimated stretches left off the "
			"track (memory bound)\n",
			(unsigned long long)b.stretches_left_off);
	if (b.errs_seen > b.errs_kept)
		fprintf(out, "Estimate check: p50/p90 over a sample of %llu of "
			"%llu held-out syncs\n", (unsigned long long)b.errs_kept,
			(unsigned long long)b.errs_seen);
}

static void stack_tables_line(FILE *out, const struct ig_engine *e)
{
	struct ig_stk_held h;

	ig_stacks_held(e, &h);
	if (!(h.ev_nat | h.ev_syms | h.ev_py | h.ev_code))
		return;
	fprintf(out, "Stack tables full: evicted %llu native stacks, %llu names, "
		"%llu Python stacks, %llu code objects (seen longest ago)\n",
		(unsigned long long)h.ev_nat, (unsigned long long)h.ev_syms,
		(unsigned long long)h.ev_py, (unsigned long long)h.ev_code);
}

static void events_section(FILE *out, const struct ig_engine *e)
{
	const __u64 *st = e->acct.stats.stat;
	uint64_t total = 0;
	unsigned int i;

	fprintf(out, "Records: %llu", (unsigned long long)e->acct.nrec);
	if (e->acct.have_stats)
		fprintf(out, ", dropped %llu (kernel %llu, aggregator %llu)",
			(unsigned long long)(st[IG_STAT_DROPS] +
					     e->acct.stats.user_lost),
			(unsigned long long)st[IG_STAT_DROPS],
			(unsigned long long)e->acct.stats.user_lost);
	else
		fprintf(out, ", drop counters not recorded");
	fprintf(out, "%s\n", e->win.have_end ? "" : " (recording incomplete)");
	fprintf(out, "CUDA: %llu submissions, %llu launches\n",
		(unsigned long long)e->acct.submissions,
		(unsigned long long)e->acct.launches);
	stack_tables_line(out, e);
	if (e->win.hist_trims)
		fprintf(out, "History budget full: %llu times, down to %.1f s of "
			"thread history (idle time before it: unknown cause)\n",
			(unsigned long long)e->win.hist_trims,
			e->win.hist_kept_min / 1e9);
	folded_line(out, e);
	fprintf(out, "On-CPU samples: %llu, %llu in the CUDA driver\n\n",
		(unsigned long long)e->acct.nsamples,
		(unsigned long long)e->acct.nsamples_cuda);

	for (i = 1; i < IG_R__MAX; i++)
		total += e->acct.offcpu_ns[i];
	fprintf(out, "Off-CPU time of traced threads: %.3f s "
		"(runnable %.3f s)\n", sec(total), sec(e->acct.runnable_ns));
	if (total) {
		fprintf(out, "  %-12s %10s %9s\n", "reason", "time(s)",
			"share(%)");
		for (i = 1; i < IG_R__MAX; i++)
			if (e->acct.offcpu_ns[i])
				fprintf(out, "  %-12s %10.3f %9.1f\n",
					ig_rec_reason_name(i), sec(e->acct.offcpu_ns[i]),
					pct(e->acct.offcpu_ns[i], total));
	}
	fprintf(out, "\n");
}

static void dashboard_line(FILE *out, const struct ig_engine *e)
{
	uint64_t n = 0, u = 0;
	uint32_t i;

	for (i = 0; i < e->acct.nnvml; i++) {
		n += e->acct.nvml[i].n;
		u += e->acct.nvml[i].util_sum;
	}
	if (!n) {
		fprintf(out, "dashboard utilization: NVML not available\n");
		return;
	}
	fprintf(out, "dashboard utilization (NVML): %.1f%% mean over %llu "
		"samples\n", (double)u / n, (unsigned long long)n);
}

/* Time from the start of tracing to each GPU's span: before its first
 * work seen, and not proven idle there (docs/design.md §4.12). */
static uint64_t before_span_ns(const struct ig_engine *e)
{
	uint64_t t0 = e->win.have_meta ? e->win.meta_ts : e->win.first_ts, n = 0;
	uint32_t i;

	for (i = 0; i < e->gpu.ndevs; i++) {
		const struct ig_device *d = e->gpu.devs[i];

		if (d->active && d->span_start > t0)
			n += d->span_start - t0;
	}
	return n;
}

/* The traced time, each GPU's, in each state: what the span leaves out
 * is before the first GPU work seen (its head, where no counter proved
 * it idle), or after the last evidence. */
static void traced_line(FILE *out, const struct ig_engine *e,
			const struct ig_gpu_totals *t)
{
	uint64_t all = ig_report_duration_ns(e) * t->ndevs, in, out_ns, before;

	if (!t->ndevs || !all)
		return;
	in = t->busy_ns + t->idle_ns + t->unres_ns + t->peer_wait_ns +
	     t->idle_open_ns;
	out_ns = all > in ? all - in : 0;
	before = ig_min64(before_span_ns(e), out_ns);
	fprintf(out, "  of it: busy %.1f%%, idle %.1f%%", pct(t->busy_ns, all),
		pct(t->idle_ns, all));
	if (t->idle_open_ns)
		fprintf(out, " (+%.1f%% open at the end)", pct(t->idle_open_ns, all));
	if (t->peer_wait_ns)
		fprintf(out, ", peers %.1f%%", pct(t->peer_wait_ns, all));
	fprintf(out, ", unresolved %.1f%%,\n  not known %.1f%% (outside the GPU's "
		"span: before its first work %.1f%%,\n  after its last %.1f%%)\n",
		pct(t->unres_ns, all), pct(out_ns, all), pct(before, all),
		pct(out_ns - before, all));
}

int ig_engine_report_text(struct ig_engine *e, FILE *out)
{
	struct ig_gpu_totals t;

	if (!e || !out)
		return -EINVAL;
	ig_engine_finish(e);
	ig_report_gpu_totals(e, &t);
	/* the answer first */
	if (!t.ndevs) {
		fprintf(out, "No GPU activity: the traced processes submitted "
			"no CUDA work in %.3f s.\n", sec(ig_report_duration_ns(e)));
	} else {
		fprintf(out, "GPU busy %.1f%%, idle %.1f%%, unresolved %.1f%% "
			"of %.3f s\n", pct(t.busy_ns, t.span_ns),
			pct(t.idle_ns, t.span_ns), pct(t.unres_ns, t.span_ns),
			sec(t.span_ns));
		ig_est_text(ig_est_total(e), t.idle_ns, t.span_ns, out);
		if (t.peer_wait_ns)
			fprintf(out, "GPU waiting for peers %.1f%% (in collectives, "
				"not counted busy)\n", pct(t.peer_wait_ns, t.span_ns));
	}
	fprintf(out, "traced %.3f s: %u GPU%s with work, %llu processes%s\n",
		sec(ig_report_duration_ns(e)), t.ndevs, t.ndevs == 1 ? "" : "s",
		(unsigned long long)(e->tasks.nprocs + e->tasks.procs_freed),
		e->win.have_end ? "" : " (recording incomplete)");
	traced_line(out, e, &t);
	ig_report_head_text(out, e);
	ig_merge_text(out, e);
	if (t.ndevs) {
		gpu_section(out, e, &t);
		ig_report_steps_text(e, out);
	} else
		fprintf(out, "\n");
	processes_section(out, e);
	events_section(out, e);
	dashboard_line(out, e);
	return ferror(out) ? -EIO : 0;
}
