// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/report/report.h"
#include "engine/peers/peers.h"

void ig_report_peer_carve(const struct ig_engine *e, int ordinal, uint64_t *busy,
			  uint64_t *unres, uint64_t *unres_gpu, uint64_t *wait)
{
	uint64_t coll, w, x, y;
	int32_t rank;

	ig_peers_dev(e, ordinal, &w, &coll, &rank);
	/* a collective's kernel occupies the GPU while it waits: the model
	 * counted that time busy where proven, else unresolved (pending) */
	x = ig_min64(w, *busy);
	*busy -= x;
	y = ig_min64(w - x, *unres);
	*unres -= y;
	*unres_gpu -= ig_min64(y, *unres_gpu);
	/* never more than the pending time it came out of */
	*wait = x + y;
}

void ig_report_gpu_totals(const struct ig_engine *e, struct ig_gpu_totals *t)
{
	uint32_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < e->gpu.ndevs; i++) {
		const struct ig_device *d = e->gpu.devs[i];
		uint64_t end = ig_gpu_span_end(d);
		uint64_t busy = d->busy_ns, unres = d->unres_ns, ugpu = d->unres_gpu_ns, pw = 0;

		if (!d->active)
			continue;
		ig_report_peer_carve(e, d->ordinal, &busy, &unres, &ugpu, &pw);
		t->ndevs++;
		t->busy_ns += busy;
		t->peer_wait_ns += pw;
		t->idle_ns += d->idle_ns;
		t->idle_open_ns += d->idle_open_ns;
		t->unres_ns += unres;
		t->unres_host_ns += d->unres_host_ns;
		t->unres_gpu_ns += ugpu;
		t->unres_open_ns += unres > d->unres_host_ns + ugpu ?
				    unres - d->unres_host_ns - ugpu : 0;
		t->gaps += d->gaps;
		t->span_ns += end - d->span_start;
		if (!t->span_start || d->span_start < t->span_start)
			t->span_start = d->span_start;
		if (end > t->span_end)
			t->span_end = end;
	}
}

uint64_t ig_report_unres_open_ns(const struct ig_device *d)
{
	uint64_t known = d->unres_host_ns + d->unres_gpu_ns;

	return d->unres_ns > known ? d->unres_ns - known : 0;
}

size_t ig_report_causes_sorted(const struct ig_causeset *s, unsigned int *out)
{
	uint64_t ns[IG_C__MAX];
	size_t i;

	for (i = 0; i < IG_C__MAX; i++)
		ns[i] = s->c[i].ns;
	return ig_names_by_ns(ns, out);
}

uint64_t ig_report_detail_ns(const struct ig_detail *d)
{
	return d->ns - d->err;
}

static int cmp_det(const void *a, const void *b)
{
	uint64_t x = ig_report_detail_ns(*(const struct ig_detail *const *)a);
	uint64_t y = ig_report_detail_ns(*(const struct ig_detail *const *)b);

	return x > y ? -1 : x < y;
}

size_t ig_report_details_sorted(const struct ig_cause_acc *c, uint8_t kind,
				const struct ig_detail **out, size_t max)
{
	const struct ig_detail *all[IG_DET_CAP];
	size_t n = 0, i;

	for (i = 0; i < c->ndet; i++) {
		const struct ig_detail *d = &c->det[i];

		if ((!kind || d->kind == kind) && ig_report_detail_ns(d))
			all[n++] = d;
	}
	qsort(all, n, sizeof(*all), cmp_det);
	if (n > max)
		n = max;
	for (i = 0; i < n; i++)
		out[i] = all[i];
	return n;
}

double ig_report_share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

uint64_t ig_report_duration_ns(const struct ig_engine *e)
{
	uint64_t start = e->win.have_meta ? e->win.meta_ts : e->win.first_ts;
	uint64_t end = e->win.have_end ? e->win.end_ts : e->win.now;

	return end > start ? end - start : 0;
}

void ig_report_fmt_dev(uint32_t dev, char *buf, size_t n)
{
	snprintf(buf, n, "%u:%u", IG_DEV_MAJOR(dev), IG_DEV_MINOR(dev));
}

static int cmp_proc(const void *a, const void *b)
{
	const struct ig_process *x = *(const struct ig_process *const *)a;
	const struct ig_process *y = *(const struct ig_process *const *)b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

size_t ig_report_procs_sorted(const struct ig_engine *e, const struct ig_process ***out)
{
	const struct ig_process **v = calloc(e->tasks.nprocs + 1, sizeof(*v));
	const struct ig_process *p;
	size_t n = 0;
	uint32_t it = 0;

	*out = v;
	if (!v)
		return 0;
	while (n < e->tasks.nprocs && (p = ig_htab_next(&e->tasks.procs, &it)))
		v[n++] = p;
	qsort(v, n, sizeof(*v), cmp_proc);
	return n;
}

const char *ig_report_dkind_name(uint8_t kind)
{
	switch (kind) {
	case IG_D_FILE: return "file";
	case IG_D_DEVICE: return "device";
	case IG_D_PROCESS: return "process";
	case IG_D_CPU: return "cpu";
	case IG_D_LOCK: return "lock";
	case IG_D_WAKER: return "waker";
	case IG_D_HOLDER: return "holder";
	case IG_D_PEER: return "peer";
	case IG_D_API: return "api";
	case IG_D_THREAD: return "thread";
	case IG_D_WHY: return "why";
	case IG_D_MOUNT: return "mount";
	}
	return "?";
}

size_t ig_report_cause_kinds(unsigned int cause, uint8_t *out, size_t max)
{
	static const uint8_t kinds[IG_C__MAX][3] = {
#define IG_CAUSE(cause, name, doing, ...) [IG_C_##cause] = { __VA_ARGS__ },
#include "engine/attrib/causes.def"
#undef IG_CAUSE
	};
	size_t n = 0;

	while (cause < IG_C__MAX && n < max && n < 3 && kinds[cause][n]) {
		out[n] = kinds[cause][n];
		n++;
	}
	return n;
}

const struct ig_biodev *ig_report_biodev_find(const struct ig_engine *e, uint32_t dev)
{
	uint32_t i;

	for (i = 0; i < e->acct.nbiodev; i++)
		if (e->acct.biodev[i].dev == dev)
			return &e->acct.biodev[i];
	return NULL;
}
