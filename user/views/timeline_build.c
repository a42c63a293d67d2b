// SPDX-License-Identifier: GPL-2.0
/*
 * The timeline of a session, for `--perfetto` (docs/design.md §7.8): thread
 * tracks from the record stream, device tracks and flows from the engine's
 * observer.  A gap's flow runs gap -> first interval walked -> next ...;
 * each walked stretch is a slice of its own inside the thread's off-CPU
 * slice, so that the flow ends on the part that was blamed.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stream/cuda_api.h"
#include "engine/engine.h"
#include "views/timeline_build.h"
#include "views/timeline_int.h"

#define MAX_DEVS IG_TL_MAX_DEVS

static void put(struct ig_tlb *b, const struct ig_tl_slice *s)
{
	int err = 0;

	if (b->err)
		return;
	if (!IG_TL_KIND_IS_DEVICE(s->kind)) {
		const struct tl_thread *t = ig_timeline_thread_get(b, s->tid, 0);

		err = t ? ig_timeline_declare(b, s->tid, t->tgid) : -ENOMEM;
	} else if (s->device < MAX_DEVS && !(b->dev_declared & (1ull << s->device))) {
		struct ig_tl_device d = { .id = s->device };

		b->dev_declared |= 1ull << s->device;
		err = ig_perfetto_device(b->w, &d);
	}
	if (!err)
		err = ig_perfetto_slice(b->w, s);
	if (err)
		b->err = err;
}

/* ---- the record stream: thread intervals, calls, submissions ---- */

enum { OFFCPU, WALKED };

/* "off-cpu: futex", "walked: futex": made once per reason, and at one
 * address each, which the writer's interning looks up first. */
static const char *reason_label(int what, unsigned int reason)
{
	static const char *const fmt[] = { [OFFCPU] = "off-cpu: %s", [WALKED] = "walked: %s" };
	static char names[2][IG_R__MAX + 1][48];
	unsigned int i = reason < IG_R__MAX ? reason : IG_R__MAX;

	if (!names[what][i][0])
		snprintf(names[what][i], sizeof(names[what][i]), fmt[what],
			 ig_rec_reason_name(reason));
	return names[what][i];
}

/* An off-CPU interval; its annotations are the few that say what it
 * waited on (the waker's name is on the waker's own track). */
static void offcpu(struct ig_tlb *b, const struct ig_offcpu *o)
{
	struct ig_tl_annot a[3];
	struct ig_tl_slice s = {
		.kind = IG_TL_OFFCPU, .tid = o->h.tid, .ts = o->t_off,
		.dur = ig_offcpu_on(o) - o->t_off, .name = reason_label(OFFCPU, o->reason),
		.annots = a,
	};

	if (ig_offcpu_on(o) <= o->t_off)
		return;
	if (o->flags & IG_F_DETAIL_NAME && o->detail.name[0])
		a[s.n_annots++] = (struct ig_tl_annot){ .name = "file", .type = IG_TL_STR,
							.s = o->detail.name };
	if (o->reason == IG_R_FUTEX)
		a[s.n_annots++] = (struct ig_tl_annot){ .name = "lock", .type = IG_TL_PTR,
							.u = o->arg };
	if (o->waker_tid)
		a[s.n_annots++] = (struct ig_tl_annot){ .name = "waker", .type = IG_TL_UINT,
							.u = o->waker_tid };
	ig_timeline_note_comm(b, o->waker_tid, o->waker_tgid, o->waker_comm);
	put(b, &s);
}

static void cuda(struct ig_tlb *b, const struct ig_cuda *c)
{
	const char *api = ig_api_name(c->api);
	struct ig_tl_slice s = { .tid = c->h.tid, .name = api ? api : "cuda" };

	switch (c->kind) {
	case IG_CU_SUBMIT:
		s.kind = IG_TL_SUBMIT;
		s.ts = c->h.ts;
		break;
	case IG_CU_SYNC_END:
	case IG_CU_API:
		if (!c->t_begin || c->t_begin > c->h.ts)
			return;
		s.kind = IG_TL_CALL;
		s.ts = c->t_begin;
		s.dur = c->h.ts - c->t_begin;
		break;
	default:
		return;
	}
	put(b, &s);
}

void ig_timeline_record(struct ig_tlb *b, const struct ig_hdr *rec)
{
	switch (rec->type) {
	case IG_REC_TASK:
		ig_timeline_note_comm(b, rec->tid, rec->tgid, ((const struct ig_task *)rec)->comm);
		break;
	case IG_REC_PROC:
		ig_timeline_note_comm(b, rec->tid, rec->tgid, ((const struct ig_proc *)rec)->comm);
		break;
	case IG_REC_OFFCPU:
		offcpu(b, (const struct ig_offcpu *)rec);
		break;
	case IG_REC_CUDA:
		cuda(b, (const struct ig_cuda *)rec);
		break;
	default:
		break;
	}
}

/* ---- the engine's conclusions: device tracks and flows ---- */

static void busy_flush(struct ig_tlb *b, int dev)
{
	struct ig_tl_slice s = { .kind = IG_TL_BUSY, .device = dev, .name = "busy" };

	if (b->busy_t1[dev] <= b->busy_t0[dev])
		return;
	s.ts = b->busy_t0[dev];
	s.dur = b->busy_t1[dev] - b->busy_t0[dev];
	b->busy_t0[dev] = b->busy_t1[dev] = 0;
	put(b, &s);
}

static void busy(struct ig_tlb *b, const struct ig_obs_span *o)
{
	int d = o->device;

	if (b->busy_t1[d] == o->t0 && b->busy_t1[d]) {	/* adjacent: merge */
		b->busy_t1[d] = o->t1;
		return;
	}
	busy_flush(b, d);
	b->busy_t0[d] = o->t0;
	b->busy_t1[d] = o->t1;
}

static const char *const bound_names[] = {
	[IG_OBS_OPEN] = "unresolved: open",
	[IG_OBS_HOST_BOUND] = "unresolved: host-bound",
	[IG_OBS_GPU_BOUND] = "unresolved: GPU-bound",
};

static void unres(struct ig_tlb *b, const struct ig_obs_span *o)
{
	struct ig_tl_annot a[] = {
		{ .name = "pid", .type = IG_TL_UINT, .u = o->tgid },
		{ .name = "tid", .type = IG_TL_UINT, .u = o->tid },
	};
	struct ig_tl_slice s = {
		.kind = IG_TL_UNRESOLVED, .device = o->device, .ts = o->t0,
		.dur = o->t1 - o->t0, .name = bound_names[o->bound],
		.annots = a, .n_annots = o->tid ? 2 : 0,
	};

	put(b, &s);
}

/* What a walked interval was waiting on, as annotations. */
static unsigned int step_annots(struct ig_tlb *b, const struct ig_obs_step *st,
				struct ig_tl_annot *a)
{
	const struct tl_thread *w = st->iv.waker_tid ? ig_timeline_thread_get(b, st->iv.waker_tid, 0) : NULL;
	unsigned int n = 0;

	a[n++] = (struct ig_tl_annot){ .name = "wait", .type = IG_TL_STR,
				       .s = ig_rec_reason_name(st->iv.reason) };
	if (st->detail[0])
		a[n++] = (struct ig_tl_annot){ .name = st->iv.reason == IG_R_SOCKET ? "peer" : "file",
					       .type = IG_TL_STR, .s = st->detail };
	if (st->iv.reason == IG_R_FUTEX)
		a[n++] = (struct ig_tl_annot){ .name = "lock", .type = IG_TL_PTR, .u = st->iv.arg };
	if (st->iv.waker_tid)
		a[n++] = (struct ig_tl_annot){ .name = "waker", .type = IG_TL_UINT,
					       .u = st->iv.waker_tid };
	if (w && w->comm[0])
		a[n++] = (struct ig_tl_annot){ .name = "waker_comm", .type = IG_TL_STR,
					       .s = w->comm };
	return n;
}

/* The walk: one slice per stretch, chained by flows from the gap. */
static void walk(struct ig_tlb *b, const struct ig_obs_span *o, uint64_t first)
{
	unsigned int i;

	for (i = 0; i < o->nsteps; i++) {
		const struct ig_obs_step *st = &o->steps[i];
		uint64_t in = first + i, out = first + i + 1;
		struct ig_tl_annot a[7];
		struct ig_tl_slice s = {
			.kind = IG_TL_OFFCPU, .tid = st->tid, .ts = st->x,
			.dur = st->y - st->x, .name = reason_label(WALKED, st->iv.reason),
			.flow_in = &in,
			.n_flow_in = 1, .flow_out = &out,
			.n_flow_out = i + 1 < o->nsteps, .annots = a,
		};

		a[0] = (struct ig_tl_annot){ .name = "step", .type = IG_TL_UINT, .u = i + 1 };
		a[1] = (struct ig_tl_annot){ .name = "gap_cause", .type = IG_TL_STR,
					     .s = o->ncauses ? o->causes[0].name : "unknown" };
		s.n_annots = 2 + step_annots(b, st, a + 2);
		put(b, &s);
	}
}

/* snprintf's result, the text a piece of @n bytes leaves at @dst. */
static size_t put_piece(char *dst, size_t room, const char *piece, size_t n)
{
	size_t k = n < room ? n : room - 1;

	memcpy(dst, piece, k);
	dst[k] = 0;
	return n;
}

/* What snprintf(dst, room, "%s%s %.0f%%", sep, name, pct) writes and
 * returns; without printf, which took a tenth of a trace's time.  "%.0f"
 * rounds to nearest, ties to even, as nearbyint() does. */
static size_t put_share(char *dst, size_t room, const char *sep, const char *name,
			double pct)
{
	double r = nearbyint(pct);
	size_t ls = strlen(sep), ln = strlen(name);
	char piece[96], *p, num[24], *d = num + sizeof(num);
	unsigned long long v;

	if (!(r >= 0 && r < 1e15) || signbit(r) || ls + ln + sizeof(num) > sizeof(piece))
		return snprintf(dst, room, "%s%s %.0f%%", sep, name, pct);
	for (v = (unsigned long long)r; d == num + sizeof(num) || v; v /= 10)
		*--d = (char)('0' + v % 10);
	p = piece;
	memcpy(p, sep, ls);
	memcpy(p += ls, name, ln);
	*(p += ln) = ' ';
	memcpy(++p, d, num + sizeof(num) - d);
	p += num + sizeof(num) - d;
	*p++ = '%';
	return put_piece(dst, room, piece, p - piece);
}

static void idle(struct ig_tlb *b, const struct ig_obs_span *o)
{
	const struct tl_thread *t = o->tid ? ig_timeline_thread_get(b, o->tid, o->tgid) : NULL;
	const char *cause = o->ncauses ? o->causes[0].name : "unknown";
	const struct ig_obs_step *st;
	uint64_t flow = b->next_flow + 1;
	struct ig_tl_annot a[16];
	char name[48], shares[128];
	size_t off = 0;
	unsigned int i, n = 0;
	struct ig_tl_slice s = {
		.kind = IG_TL_IDLE, .device = o->device, .ts = o->t0,
		.dur = o->t1 - o->t0, .name = name, .annots = a,
		.flow_out = &flow, .n_flow_out = o->nsteps > 0,
	};

	memcpy(name, "idle: ", 6);
	put_piece(name + 6, sizeof(name) - 6, cause, strlen(cause));
	shares[0] = 0;
	for (i = 0; i < o->ncauses && off < sizeof(shares); i++)
		off += put_share(shares + off, sizeof(shares) - off, i ? ", " : "",
				 o->causes[i].name, 100.0 * o->causes[i].ns / (o->t1 - o->t0));
	a[n++] = (struct ig_tl_annot){ .name = "cause", .type = IG_TL_STR, .s = cause };
	a[n++] = (struct ig_tl_annot){ .name = "causes", .type = IG_TL_STR, .s = shares };
	if (o->tid) {
		a[n++] = (struct ig_tl_annot){ .name = "pid", .type = IG_TL_UINT, .u = o->tgid };
		a[n++] = (struct ig_tl_annot){ .name = "tid", .type = IG_TL_UINT, .u = o->tid };
	}
	if (t && t->comm[0])
		a[n++] = (struct ig_tl_annot){ .name = "comm", .type = IG_TL_STR, .s = t->comm };
	/* the detail of the first cause: the disk read, the lock, the peer */
	if ((st = ig_observe_cause_step(o, o->ncauses ? o->causes[0].name : NULL)))
		n += step_annots(b, st, a + n);
	s.n_annots = n;
	put(b, &s);
	if (o->nsteps) {
		walk(b, o, flow);
		b->next_flow += o->nsteps;
	}
}

static void on_span(void *ctx, const struct ig_obs_span *o)
{
	struct ig_tlb *b = ctx;

	if (o->kind == IG_OBS_COLLECTIVE) {
		if (!b->err && o->t1 > o->t0)
			ig_timeline_collective(b, o);
		return;
	}
	if (o->device < 0 || o->device >= MAX_DEVS || o->t1 <= o->t0)
		return;
	if (o->kind != IG_OBS_BUSY)
		busy_flush(b, o->device);
	if (o->kind == IG_OBS_BUSY)
		busy(b, o);
	else if (o->kind == IG_OBS_IDLE)
		idle(b, o);
	else
		unres(b, o);
}

void ig_timeline_observer(struct ig_tlb *b, struct ig_engine_obs *o)
{
	o->span = on_span;
	o->estimate = NULL;
	o->ctx = b;
}

int ig_timeline_open(struct ig_tlb **out, const char *path)
{
	struct ig_tlb *b = calloc(1, sizeof(*b));
	int err;

	if (!b)
		return -ENOMEM;
	err = ig_timeline_threads_grow(b);
	if (!err)
		err = ig_perfetto_open(&b->w, path);
	if (err) {
		free(b->thr);
		free(b);
		return err;
	}
	*out = b;
	return 0;
}

void ig_timeline_abandon(struct ig_tlb *b)
{
	if (!b)
		return;
	ig_perfetto_abandon(b->w);
	free(b->thr);
	free(b);
}

/* The model's estimate on its own track per GPU, "GPU N (estimated)":
 * never on the proven one (docs/design.md §4.10, §7.8). */
#define EST_TRACK	0x1000u

static void est_slice(void *ctx, int device, uint64_t t0, uint64_t t1, bool idle)
{
	struct ig_tlb *b = ctx;
	struct ig_tl_slice s = { .kind = idle ? IG_TL_IDLE : IG_TL_BUSY,
				 .device = EST_TRACK + (uint32_t)device,
				 .ts = t0, .dur = t1 - t0,
				 .name = idle ? "estimated idle" : "estimated busy" };
	char name[48];
	int err = 0;

	if (b->err || device < 0 || device >= MAX_DEVS)
		return;
	if (!(b->est_declared & (1ull << device))) {
		struct ig_tl_device d = { .id = s.device, .name = name };

		snprintf(name, sizeof(name), "GPU %d (estimated)", device);
		b->est_declared |= 1ull << device;
		err = ig_perfetto_device(b->w, &d);
	}
	if (!err)
		err = ig_perfetto_slice(b->w, &s);
	if (err)
		b->err = err;
}

void ig_timeline_estimates(struct ig_tlb *b, const struct ig_engine *e)
{
	if (b && e)
		ig_engine_estimates(e, est_slice, b);
}

int ig_timeline_close(struct ig_tlb *b, struct ig_perfetto_stats *st)
{
	int d, err;

	if (!b)
		return 0;
	for (d = 0; d < MAX_DEVS; d++)
		busy_flush(b, d);
	if (st) {
		ig_perfetto_stats(b->w, st);
		st->flows_left_out = b->peer_flows_left;
	}
	err = ig_perfetto_close(b->w);
	if (!err)
		err = b->err;
	free(b->thr);
	free(b);
	return err;
}
