// SPDX-License-Identifier: GPL-2.0
/*
 * Recordings of several hosts in one analysis (docs/design.md §4.9, §7.4).
 * The hosts table names a merged pid's host and its pid there, and the
 * report states each recording's clock offset and the error it assumed.
 * The collective ends of one recording are what its clock is aligned on:
 * a collective ends on every rank within the network's latency, so the
 * same (communicator, sequence) ending on two hosts' clocks tells their
 * offset.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "engine/jsonval.h"
#include "engine/merge.h"
#include "engine/model.h"
#include "engine/tasks.h"
#include "util/util.h"

int ig_engine_set_merge(struct ig_engine *e, const struct ig_merge *m)
{
	if (!e->merge && !(e->merge = malloc(sizeof(*e->merge))))
		return -ENOMEM;
	*e->merge = *m;
	return 0;
}

static const struct ig_merge_host *host_rec(const struct ig_engine *e, uint32_t pid)
{
	uint32_t i = pid >> IG_MERGE_PID_SHIFT;

	return e->merge && i < e->merge->n ? &e->merge->h[i] : NULL;
}

const char *ig_merge_host_of(const struct ig_engine *e, uint32_t pid)
{
	const struct ig_merge_host *h = host_rec(e, pid);

	return h ? h->host : e->win.meta.host;
}

uint32_t ig_merge_host_pid(const struct ig_engine *e, uint32_t pid)
{
	return e->merge ? pid & IG_MERGE_PID_MASK : pid;
}

struct json_object *ig_merge_json(const struct ig_engine *e)
{
	struct json_object *a;
	uint32_t i;

	if (!e->merge)
		return NULL;
	a = json_object_new_array();
	for (i = 0; i < e->merge->n; i++) {
		const struct ig_merge_host *h = &e->merge->h[i];
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "host", jstr(h->host));
		json_object_object_add(o, "pid_base",
				       ju64((uint64_t)i << IG_MERGE_PID_SHIFT));
		json_object_object_add(o, "device_base",
				       ju64((uint64_t)i * IG_MERGE_DEV_STRIDE));
		json_object_object_add(o, "offset_s", jnum((double)h->offset_ns / 1e9, 6));
		json_object_object_add(o, "drift_ppm", jnum(h->drift * 1e6, 3));
		json_object_object_add(o, "error_s", jnum((double)h->error_ns / 1e9, 6));
		json_object_object_add(o, "collectives", ju64(h->collectives));
		json_object_object_add(o, "given", json_object_new_boolean(h->given));
		json_object_array_add(a, o);
	}
	return a;
}

void ig_merge_text(FILE *out, const struct ig_engine *e)
{
	uint32_t i;

	if (!e->merge)
		return;
	fprintf(out, "%u recordings merged, clocks aligned on the first's:\n", e->merge->n);
	for (i = 0; i < e->merge->n; i++) {
		const struct ig_merge_host *h = &e->merge->h[i];

		if (!i)
			fprintf(out, "  %-20.20s reference clock; pids as recorded, GPUs 0..\n",
				h->host);
		else if (h->given)
			fprintf(out, "  %-20.20s offset %+.6f s (given); pids +%u, GPUs %u..\n",
				h->host, (double)h->offset_ns / 1e9,
				i << IG_MERGE_PID_SHIFT, i * IG_MERGE_DEV_STRIDE);
		else
			fprintf(out, "  %-20.20s offset %+.6f s +/- %.6f s, drift %+.1f ppm, from "
				"%llu collective ends; pids +%u, GPUs %u..\n", h->host,
				(double)h->offset_ns / 1e9, (double)h->error_ns / 1e9,
				h->drift * 1e6, (unsigned long long)h->collectives,
				i << IG_MERGE_PID_SHIFT, i * IG_MERGE_DEV_STRIDE);
	}
	fprintf(out, "\n");
}

void ig_merge_free(struct ig_engine *e)
{
	free(e->merge);
	e->merge = NULL;
}

/* ---- collective ends ---- */

/* A collective a rank launched, its end not seen yet. */
struct open_call {
	uint64_t id, seq, stream, launch;	/* launch 0: grouped, not yet */
	uint32_t tid, tgid;
};

struct ig_collends {
	struct open_call *open;
	size_t nopen, capopen;
	struct ig_collend *ends;
	size_t nends, capends;
	bool sorted;
};

struct ig_collends *ig_merge_collends_new(void)
{
	return calloc(1, sizeof(struct ig_collends));
}

static void add_end(struct ig_collends *c, const struct open_call *o, uint64_t end)
{
	if (!ig_grow((void **)&c->ends, &c->capends, c->nends, sizeof(*c->ends)))
		return;	/* one end fewer to align on */
	c->ends[c->nends++] = (struct ig_collend){ .id = o->id, .seq = o->seq, .end = end };
	c->sorted = false;
}

static void drop_open(struct ig_collends *c, size_t i)
{
	c->open[i] = c->open[--c->nopen];
}

static void on_nccl(struct ig_collends *c, const struct ig_nccl *r)
{
	size_t i;

	if (r->kind == IG_NC_GROUP_END) {
		for (i = 0; i < c->nopen; i++)
			if (!c->open[i].launch && c->open[i].tid == r->h.tid)
				c->open[i].launch = r->h.ts;
		return;
	}
	if (r->kind != IG_NC_COLL || !r->id || !r->seq)
		return;
	/* a drain from now on would be of both: the earlier has no end */
	for (i = 0; i < c->nopen; i++)
		if (c->open[i].tgid == r->h.tgid && c->open[i].stream == r->stream)
			drop_open(c, i--);
	if (!ig_grow((void **)&c->open, &c->capopen, c->nopen, sizeof(*c->open)))
		return;
	c->open[c->nopen++] = (struct open_call){
		.id = r->id, .seq = r->seq, .stream = r->stream,
		.launch = r->flags & IG_NCF_GROUPED ? 0 : r->h.ts,
		.tid = r->h.tid, .tgid = r->h.tgid };
}

void ig_merge_collends_after(struct ig_collends *c, struct ig_engine *e,
			     const struct ig_hdr *rec)
{
	size_t i;

	if (rec->type == IG_REC_NCCL && rec->size >= sizeof(struct ig_nccl)) {
		on_nccl(c, (const struct ig_nccl *)rec);
		return;
	}
	if (rec->type != IG_REC_CUDA)
		return;
	for (i = 0; i < c->nopen; i++) {
		const struct open_call *o = &c->open[i];
		struct ig_stream *s = o->launch ?
				      ig_tasks_stream_find(e, o->tgid, o->stream) : NULL;

		if (s && s->drained_at > o->launch) {
			add_end(c, o, s->drained_at);
			drop_open(c, i--);
		}
	}
}

static int by_key(const void *a, const void *b)
{
	const struct ig_collend *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

size_t ig_merge_collends_get(struct ig_collends *c, const struct ig_collend **out)
{
	size_t i, j;

	if (!c->sorted) {
		qsort(c->ends, c->nends, sizeof(*c->ends), by_key);
		/* the earliest of the recording's ranks: the one least late
		 * to see it (a sync returns after the GPU finished) */
		for (i = j = 0; i < c->nends; i++)
			if (!j || c->ends[j - 1].id != c->ends[i].id ||
			    c->ends[j - 1].seq != c->ends[i].seq)
				c->ends[j++] = c->ends[i];
		c->nends = j;
		c->sorted = true;
	}
	*out = c->ends;
	return c->nends;
}

void ig_merge_collends_free(struct ig_collends *c)
{
	if (!c)
		return;
	free(c->open);
	free(c->ends);
	free(c);
}
