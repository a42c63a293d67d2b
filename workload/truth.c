// SPDX-License-Identifier: GPL-2.0
/*
 * Ground truth: when the GPU was busy, from the simulated driver's trace
 * files (every op of every process) or, on a real GPU, from the
 * %globaltimer stamps each idlegap_spin kernel recorded.  Busy time is the
 * union of all ops; the span runs from the first op's start to the last
 * op's end; idle is the span minus busy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trainsim.h"
#include "../simgpu/pathfmt.h"

struct ivl {
	uint64_t start, end;
};

struct ivls {
	struct ivl *v;
	size_t n, cap;
};

struct gpu_truth {
	double busy_s, idle_s;
	uint64_t span_start, span_end;
	size_t ops;
};

static void ivls_add(struct ivls *s, uint64_t a, uint64_t b)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 4096;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			die("out of memory");
	}
	s->v[s->n++] = (struct ivl){ a, b };
}

static int by_start(const void *a, const void *b)
{
	const struct ivl *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void ivls_union(struct ivls *s, struct gpu_truth *t)
{
	uint64_t busy = 0, cs = 0, ce = 0;
	size_t i;

	memset(t, 0, sizeof(*t));
	t->ops = s->n;
	if (!s->n)
		return;
	qsort(s->v, s->n, sizeof(*s->v), by_start);
	t->span_start = s->v[0].start;
	cs = s->v[0].start;
	ce = s->v[0].end;
	for (i = 1; i < s->n; i++) {
		if (s->v[i].start > ce) {
			busy += ce - cs;
			cs = s->v[i].start;
		}
		if (s->v[i].end > ce)
			ce = s->v[i].end;
	}
	busy += ce - cs;
	t->span_end = ce;
	t->busy_s = (double)busy / 1e9;
	t->idle_s = (double)(t->span_end - t->span_start - busy) / 1e9;
}

static void read_trace(const char *path, struct ivls *s)
{
	char line[256], kind[32], stream[128];
	unsigned long long a, b;
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%31s %127s %llu %llu", kind, stream, &a, &b)
		    == 4 && b >= a)
			ivls_add(s, a, b);
	fclose(f);
}

/* SIMGPU_TRACE with %p expanded for the feeder, the only process that
 * uses the driver; without %p every process shares the one file. */
void trace_path(char *out, size_t len)
{
	sim_path_expand(getenv("SIMGPU_TRACE"), out, len);
}

/* On a real GPU the kernels' own %globaltimer stamps are the truth: write
 * them in the simulator's trace format, so that one scorer reads both. */
static void write_trace(char *path, size_t len, const uint64_t *v, size_t n)
{
	FILE *f;
	size_t i;

	trace_path(path, len);
	if (!path[0] || !(f = fopen(path, "w"))) {
		path[0] = '\0';
		return;
	}
	for (i = 0; i < n; i++)
		fprintf(f, "kernel gpu %llu %llu\n", (unsigned long long)v[2 * i],
			(unsigned long long)v[2 * i + 1]);
	if (fclose(f))
		path[0] = '\0';
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void json_pids(FILE *f, const struct run *r)
{
	const pid_t *w = r->o->threads ? r->worker_tid : r->worker_pid;
	int i;

	fprintf(f, "  \"pids\": {\"feeder\": %d, \"workers_are_threads\": %s, "
		"\"workers\": [", (int)getpid(),
		r->o->threads ? "true" : "false");
	for (i = 0; i < r->nworkers; i++)
		fprintf(f, "%s%d", i ? ", " : "", (int)w[i]);
	fprintf(f, "], \"hogs\": [");
	for (i = 0; i < r->nhogs; i++)
		fprintf(f, "%s%d", i ? ", " : "", (int)r->hog_pid[i]);
	fprintf(f, "], \"server\": %d, \"lock_holder_tid\": %d},\n",
		r->server > 0 ? (int)r->server : 0, (int)r->holder_tid);
}

/*
 * Per step: when it began (before its batch wait) and ended (just after
 * its last driver call returned), in CLOCK_MONOTONIC ns, and the cause
 * injected into it on purpose; the steps slowed on purpose beyond the
 * others.  irregular: its requests, with no step structure.
 */
static void json_steps(FILE *f, const struct run *r,
		       const struct step_stats *st)
{
	const struct opts *o = r->o;
	size_t i, k = 0;

	fprintf(f, "  \"step_structure\": %s,\n  \"slow_every\": %d,\n"
		"  \"no_slow\": %s,\n  \"slow_steps\": [",
		o->sc->irregular ? "false" : "true",
		o->slow_every > 0 ? o->slow_every : 0,
		o->no_slow ? "true" : "false");
	for (i = 0; i < st->nrec; i++)
		if (st->rec[i].slowed)
			fprintf(f, "%s%zu", k++ ? ", " : "", i);
	fprintf(f, "],\n  \"step_list\": [");
	for (i = 0; i < st->nrec; i++) {
		const struct step_rec *s = &st->rec[i];

		fprintf(f, "%s\n    {\"index\": %zu, \"start_ns\": %llu, "
			"\"end_ns\": %llu, \"cause\": ", i ? "," : "", i,
			(unsigned long long)s->start,
			(unsigned long long)s->end);
		if (s->cause)
			json_str(f, s->cause);
		else
			fputs("null", f);
		fprintf(f, ", \"rank\": %d, \"run_delay_ns\": %llu, "
			"\"cpu_ns\": %llu, "
			"\"loader_run_delay_ns\": %llu, \"loader_cpu_ns\": %llu",
			ranks_rank(), (unsigned long long)s->run_delay,
			(unsigned long long)s->cpu,
			(unsigned long long)s->loader_run_delay,
			(unsigned long long)s->loader_cpu);
		if (s->late_rank >= 0)
			fprintf(f, ", \"late_rank\": %d", s->late_rank);
		fputc('}', f);
	}
	fprintf(f, "%s],\n", st->nrec ? "\n  " : "");
}

/* The scenario's cause, none when --no-slow took its stall out. */
static const char *expected_cause(const struct opts *o)
{
	return o->no_slow && o->sc->slow != SLOW_NONE ? NULL : o->sc->cause;
}

static void json_write(FILE *f, const struct run *r, const struct gpu *g,
		       const struct step_stats *st, const struct gpu_truth *t,
		       const char *trace)
{
	const struct opts *o = r->o;
	double wall = (double)(st->t_end - st->t_start) / 1e9;
	double span = (double)(t->span_end - t->span_start) / 1e9;
	const char *cause = expected_cause(o);

	fprintf(f, "{\n  \"scenario\": ");
	json_str(f, o->sc->name);
	fprintf(f, ",\n  \"expected_cause\": ");
	if (cause)
		json_str(f, cause);
	else
		fputs("null", f);
	fprintf(f, ",\n  \"simulated\": %s,\n  \"device\": ",
		g->sim ? "true" : "false");
	json_str(f, g->name);
	fprintf(f, ",\n  \"wall_s\": %.6f,\n  \"steps\": %ld,\n"
		"  \"steps_per_s\": %.3f,\n", wall, st->steps,
		wall > 0 ? (double)st->steps / wall : 0.0);
	json_steps(f, r, st);
	fprintf(f, "  \"gpu\": {\"busy_s\": %.6f, \"idle_s\": %.6f, "
		"\"idle_share\": %.4f, \"span_start_ns\": %llu, "
		"\"span_end_ns\": %llu, \"ops\": %zu},\n", t->busy_s, t->idle_s,
		span > 0 ? t->idle_s / span : 0.0,
		(unsigned long long)t->span_start,
		(unsigned long long)t->span_end, t->ops);
	fprintf(f, "  \"trace_files\": [");
	if (trace)
		json_str(f, trace);
	fprintf(f, "],\n");
	json_pids(f, r);
	if (r->acct0.sampled && r->acct.sampled)
		acct_json(f, &r->acct0, &r->acct);
	if (ranks_active())
		ranks_json(f);
	fprintf(f, "  \"config\": {\"workers\": %d, \"queue\": \"%s\", "
		"\"kernels\": %d, \"kernel_us\": %g, \"batch_bytes\": %zu, "
		"\"sync\": %s, \"sync_every\": %d, \"slow_ms\": %d, "
		"\"seed\": %lu}\n}\n", r->nworkers,
		o->queue == Q_SHM ? "shm" : "pipe", o->kernels, o->kernel_us,
		r->batch_bytes, o->no_sync ? "false" : "true", o->sync_every,
		o->slow_ms > 0 ? o->slow_ms : 0, o->seed);
}

int truth_report(const struct run *r, struct gpu *g,
		 const struct step_stats *st)
{
	const struct opts *o = r->o;
	struct ivls s = { 0 };
	struct gpu_truth t;
	char trace[4200] = "";
	double wall = (double)(st->t_end - st->t_start) / 1e9, span;
	FILE *f;
	size_t i, n;

	if (g->sim) {
		trace_path(trace, sizeof(trace));
		read_trace(trace, &s);
	} else {
		uint64_t *v = gpu_kernel_intervals(g, &n);

		for (i = 0; i < n; i++)
			ivls_add(&s, v[2 * i], v[2 * i + 1]);
		write_trace(trace, sizeof(trace), v, n);
		free(v);
	}
	ivls_union(&s, &t);
	free(s.v);
	span = (double)(t.span_end - t.span_start) / 1e9;
	if (!o->quiet) {
		printf("trainsim: %s on %s: %ld steps in %.2f s "
		       "(%.1f steps/s)\n", o->sc->name, g->name, st->steps,
		       wall, wall > 0 ? (double)st->steps / wall : 0.0);
		printf("trainsim: GPU busy %.3f s, idle %.3f s = %.1f%% of "
		       "%.3f s span, %zu ops; expected cause: %s\n", t.busy_s,
		       t.idle_s, span > 0 ? 100 * t.idle_s / span : 0.0, span,
		       t.ops, expected_cause(o) ? expected_cause(o) : "none");
	}
	if (!o->truth)
		return 0;
	f = strcmp(o->truth, "-") ? fopen(o->truth, "w") : stdout;
	if (!f) {
		perror(o->truth);
		return -1;
	}
	json_write(f, r, g, st, &t, trace[0] ? trace : NULL);
	return f == stdout ? fflush(f) : fclose(f);
}
