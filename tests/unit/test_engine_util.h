/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Synthetic record streams for the engine's unit tests: build records in
 * any order, then feed them sorted by timestamp (stable), as the reorder
 * stage would; read the JSON report back with json-c.
 */
#ifndef TEST_ENGINE_UTIL_H
#define TEST_ENGINE_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>
#include <json-c/json.h>
#include "engine/engine.h"
#include "engine/model.h"

#define MS	1000000ULL
#define US	1000ULL

struct tstream {
	union ig_rec *r;
	size_t n, cap;
};

static inline union ig_rec *ts_new(struct tstream *s, unsigned int type,
				size_t size, uint32_t tid, uint32_t tgid,
				uint64_t ts)
{
	union ig_rec *r;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->r = realloc(s->r, s->cap * sizeof(*s->r));
		assert_non_null(s->r);
	}
	r = &s->r[s->n++];
	memset(r, 0, sizeof(*r));
	r->h.type = (uint16_t)type;
	r->h.size = (uint16_t)size;
	r->h.tid = tid;
	r->h.tgid = tgid;
	r->h.ts = ts;
	return r;
}

static inline void t_meta(struct tstream *s, uint64_t ts)
{
	union ig_rec *r = ts_new(s, IG_REC_META, sizeof(struct ig_meta), 0, 0, ts);

	r->mt.version = IG_FORMAT_VERSION;
	r->mt.ncpus = 4;
	snprintf(r->mt.host, sizeof(r->mt.host), "testhost");
}

static inline void t_end(struct tstream *s, uint64_t ts)
{
	union ig_rec *r = ts_new(s, IG_REC_END, sizeof(struct ig_end), 0, 0, ts);

	r->x.reason = IG_STOP_DURATION;
}

static inline void t_task(struct tstream *s, uint64_t ts, uint32_t tid,
			  uint32_t tgid, uint32_t ppid, const char *comm)
{
	union ig_rec *r = ts_new(s, IG_REC_TASK, sizeof(struct ig_task), tid,
			      tgid, ts);

	r->t.ppid = ppid;
	r->t.is_thread = tid != tgid;
	snprintf(r->t.comm, sizeof(r->t.comm), "%s", comm);
	snprintf(r->t.exe, sizeof(r->t.exe), "/usr/bin/%s", comm);
}

/* Where process @tgid's GPU is (IG_REC_GPUDEV): host GPU @dev (-1:
 * unknown) from @src, the RANK of its environment @rank (-1: unset). */
static inline void t_gpudev(struct tstream *s, uint64_t ts, uint32_t tgid,
			    int dev, unsigned int src, int rank,
			    const char *uuid)
{
	union ig_rec *r = ts_new(s, IG_REC_GPUDEV, sizeof(struct ig_gpudev),
			      tgid, tgid, ts);

	r->gd.dev = dev;
	r->gd.src = src;
	r->gd.rank = rank;
	r->gd.ngpus = dev >= 0 && src == IG_GD_NVML;
	snprintf(r->gd.uuid, sizeof(r->gd.uuid), "%s", uuid ? uuid : "");
}

static inline void t_proc(struct tstream *s, uint64_t ts, unsigned int kind,
			  uint32_t tid, uint32_t tgid, uint32_t ppid,
			  const char *comm)
{
	union ig_rec *r = ts_new(s, IG_REC_PROC, sizeof(struct ig_proc), tid,
			      tgid, ts);

	r->p.kind = kind;
	r->p.ppid = ppid;
	/* like the kernel: comm is cut at 15 characters */
	if (comm)
		memcpy(r->p.comm, comm, strnlen(comm, sizeof(r->p.comm) - 1));
}

struct off_args {
	uint32_t tid, tgid;
	uint64_t t_off, t_wake, t_on;
	uint64_t t_in;		/* IG_F_IN_UNSEEN: back on CPU; t_on: sent */
	unsigned int reason, flags;
	uint64_t arg;
	uint32_t waker_tid, waker_tgid, prev_tid, prev_tgid;
	const char *name, *waker_comm, *prev_comm;
	uint32_t cpu;
	const char *peer;	/* "a.b.c.d" */
	uint16_t port;
};

static inline void t_off(struct tstream *s, const struct off_args *a)
{
	union ig_rec *r = ts_new(s, IG_REC_OFFCPU, sizeof(struct ig_offcpu),
			      a->tid, a->tgid ? a->tgid : a->tid, a->t_on);

	r->h.cpu = a->cpu;
	r->o.t_off = a->t_off;
	r->o.t_wake = a->t_wake;
	r->o.arg = a->arg;
	r->o.reason = (uint16_t)a->reason;
	r->o.flags = (uint16_t)a->flags;
	r->o.waker_tid = a->waker_tid;
	r->o.waker_tgid = a->waker_tgid ? a->waker_tgid : a->waker_tid;
	r->o.prev_tid = a->prev_tid;
	r->o.prev_tgid = a->prev_tgid ? a->prev_tgid : a->prev_tid;
	r->o.t_in = a->t_in;
	r->o.syscall = -1;
	if (a->waker_comm)
		snprintf(r->o.waker_comm, IG_COMM_LEN, "%s", a->waker_comm);
	if (a->prev_comm)
		snprintf(r->o.prev_comm, IG_COMM_LEN, "%s", a->prev_comm);
	if (a->name) {
		snprintf(r->o.detail.name, IG_NAME_LEN, "%s", a->name);
		r->o.flags |= IG_F_DETAIL_NAME;
	}
	if (a->peer) {
		unsigned int b[4];

		sscanf(a->peer, "%u.%u.%u.%u", &b[0], &b[1], &b[2], &b[3]);
		r->o.detail.peer.family = 2;	/* AF_INET */
		r->o.detail.peer.dport = a->port;
		r->o.detail.peer.proto = 6;
		r->o.detail.peer.daddr[0] = (uint8_t)b[0];
		r->o.detail.peer.daddr[1] = (uint8_t)b[1];
		r->o.detail.peer.daddr[2] = (uint8_t)b[2];
		r->o.detail.peer.daddr[3] = (uint8_t)b[3];
	}
}

#define OFF(s, ...) t_off((s), &(struct off_args){ __VA_ARGS__ })

struct cu_args {
	unsigned int kind, api, flags, nsub;
	uint32_t tid, tgid;
	uint64_t ts, stream, t_begin, t_wake, last_submit, arg;
	int ret;
};

static inline void t_cuda(struct tstream *s, const struct cu_args *a)
{
	union ig_rec *r = ts_new(s, IG_REC_CUDA, sizeof(struct ig_cuda), a->tid,
			      a->tgid ? a->tgid : a->tid, a->ts);

	r->c.kind = a->kind;
	r->c.api = a->api;
	r->c.flags = a->flags;
	r->c.nsub = a->nsub;
	r->c.stream = a->stream;
	r->c.t_begin = a->t_begin;
	r->c.t_wake = a->t_wake;
	r->c.last_submit = a->last_submit;
	r->c.arg = a->arg;
	r->c.ret = a->ret;
}

#define CU(s, ...) t_cuda((s), &(struct cu_args){ __VA_ARGS__ })

static inline void t_submit(struct tstream *s, uint32_t tid, uint32_t tgid,
			    uint64_t ts, uint64_t stream)
{
	CU(s, .kind = IG_CU_SUBMIT, .api = IG_API_cuLaunchKernel, .nsub = 1,
	   .tid = tid, .tgid = tgid, .ts = ts, .stream = stream);
}

/* cuStreamSynchronize over [t0, ts], slept until t_wake (0: never). */
static inline void t_sync(struct tstream *s, uint32_t tid, uint32_t tgid,
			  uint64_t t0, uint64_t t_wake, uint64_t ts,
			  uint64_t stream, uint64_t last_submit)
{
	CU(s, .kind = IG_CU_SYNC_BEGIN, .api = IG_API_cuStreamSynchronize,
	   .tid = tid, .tgid = tgid, .ts = t0, .stream = stream);
	CU(s, .kind = IG_CU_SYNC_END, .api = IG_API_cuStreamSynchronize,
	   .tid = tid, .tgid = tgid, .ts = ts, .stream = stream, .t_begin = t0,
	   .t_wake = t_wake, .last_submit = last_submit,
	   .flags = t_wake ? IG_CF_BLOCKED : 0);
}

/* A launch of @func by thread 100 on the legacy stream at @ts, and the
 * per-launch record that carries it (docs/design.md §4.10). */
static inline void t_launch(struct tstream *s, uint64_t ts, uint64_t func)
{
	union ig_rec *r;
	struct ig_launches *l;

	t_submit(s, 100, 100, ts, IG_STREAM_LEGACY);
	r = ts_new(s, IG_REC_LAUNCHES, offsetof(struct ig_launches, e) +
		   sizeof(struct ig_launch), 100, 100, ts);
	l = (struct ig_launches *)r;
	l->stream = IG_STREAM_LEGACY;
	l->n = 1;
	l->e[0].ts = ts;
	l->e[0].func = func;
	l->e[0].grid = 1;
	l->e[0].block = 32;
}

static inline void t_pyrt(struct tstream *s, uint64_t ts, uint32_t tgid,
			  uint64_t start, uint64_t end)
{
	union ig_rec *r = ts_new(s, IG_REC_PYRT, sizeof(struct ig_pyrt), tgid,
			      tgid, ts);

	r->y.start = start;
	r->y.end = end;
}

static inline void t_mapping(struct tstream *s, uint64_t ts, uint32_t tgid,
			     uint64_t start, uint64_t end, const char *path)
{
	union ig_rec *r = ts_new(s, IG_REC_MAPPING, sizeof(struct ig_mapping),
			      tgid, tgid, ts);

	r->m.start = start;
	r->m.end = end;
	snprintf(r->m.path, sizeof(r->m.path), "%s", path);
}

static inline void t_bio(struct tstream *s, uint32_t tid, uint32_t tgid,
			 uint64_t t_issue, uint64_t ts, uint32_t dev)
{
	union ig_rec *r = ts_new(s, IG_REC_BIO, sizeof(struct ig_bio), tid, tgid,
			      ts);

	r->b.t_issue = t_issue;
	r->b.dev = dev;
	r->b.bytes = 4096;
	r->b.op = 0;
}

static inline int rec_cmp(const void *a, const void *b)
{
	const union ig_rec *x = a, *y = b;

	if (x->h.ts != y->h.ts)
		return x->h.ts < y->h.ts ? -1 : 1;
	/* stable: records were built in causal order */
	return x < y ? -1 : x > y;
}

/* Sort (stable) and feed; the stream is emptied. */
static inline void ts_feed(struct tstream *s, struct ig_engine *e)
{
	size_t i;
	union ig_rec *tmp = malloc((s->n + 1) * sizeof(*tmp));
	size_t *idx = malloc((s->n + 1) * sizeof(*idx));

	assert_non_null(tmp);
	assert_non_null(idx);
	/* insertion by index keeps equal timestamps in build order */
	for (i = 0; i < s->n; i++) {
		size_t j = i;

		while (j > 0 && s->r[idx[j - 1]].h.ts > s->r[i].h.ts) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = i;
	}
	for (i = 0; i < s->n; i++)
		tmp[i] = s->r[idx[i]];
	for (i = 0; i < s->n; i++)
		ig_engine_feed(e, &tmp[i].h);
	free(tmp);
	free(idx);
	s->n = 0;
}

static inline void ts_free(struct tstream *s)
{
	free(s->r);
	memset(s, 0, sizeof(*s));
}

static inline struct ig_engine *new_engine(int max_gaps, int depth)
{
	struct ig_engine_opts o = { .sz = sizeof(o), .max_gaps_json = max_gaps,
				    .max_depth = depth };
	struct ig_engine *e = ig_engine_new(&o);

	assert_non_null(e);
	return e;
}

/* Feed, finish, and return the parsed JSON report. */
static inline struct json_object *report(struct ig_engine *e)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json_object *j;

	assert_non_null(f);
	assert_int_equal(ig_engine_report_json(e, f), 0);
	fclose(f);
	j = json_tokener_parse(buf);
	if (!j)
		fail_msg("report is not JSON:\n%s", buf);
	free(buf);
	return j;
}

static inline char *report_text(struct ig_engine *e)
{
	char *buf = NULL, *out;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(ig_engine_report_text(e, f), 0);
	fclose(f);
	out = strdup(buf);
	free(buf);
	return out;
}

/* "gpu.idle_s", "events.by_type.offcpu" */
static inline struct json_object *jpath(struct json_object *j,
					const char *path)
{
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && j;
	     tok = strtok_r(NULL, ".", &save)) {
		struct json_object *next = NULL;

		if (!json_object_object_get_ex(j, tok, &next))
			fail_msg("no field %s (in %s)", tok, path);
		j = next;
	}
	return j;
}

static inline double jd(struct json_object *j, const char *path)
{
	return json_object_get_double(jpath(j, path));
}

static inline int64_t ji(struct json_object *j, const char *path)
{
	return json_object_get_int64(jpath(j, path));
}

/* The cause entry named `cause` in array `arr` ("causes"), or NULL. */
static inline struct json_object *jcause(struct json_object *j,
					 const char *arr, const char *cause)
{
	struct json_object *a = jpath(j, arr);
	size_t i;

	for (i = 0; i < json_object_array_length(a); i++) {
		struct json_object *c = json_object_array_get_idx(a, i);

		if (!strcmp(json_object_get_string(jpath(c, "cause")), cause))
			return c;
	}
	return NULL;
}

static inline double cause_s(struct json_object *j, const char *arr,
			     const char *cause)
{
	struct json_object *c = jcause(j, arr, cause);

	return c ? jd(c, "seconds") : 0.0;
}

/* Seconds of the detail of `kind` whose `field` equals `val`. */
static inline double detail_s(struct json_object *j, const char *arr,
			      const char *cause, const char *kind,
			      const char *field, const char *val)
{
	struct json_object *c = jcause(j, arr, cause), *d;
	size_t i;

	if (!c)
		return 0.0;
	d = jpath(c, "details");
	for (i = 0; i < json_object_array_length(d); i++) {
		struct json_object *x = json_object_array_get_idx(d, i), *f;

		if (strcmp(json_object_get_string(jpath(x, "kind")), kind))
			continue;
		if (!json_object_object_get_ex(x, field, &f))
			continue;
		if (!strcmp(json_object_get_string(f), val))
			return jd(x, "seconds");
	}
	return 0.0;
}

#define assert_near(a, b, eps)						\
	do {								\
		double _a = (a), _b = (b);				\
		if (fabs(_a - _b) > (eps))				\
			fail_msg("%s = %.9f, want %.9f", #a, _a, _b);	\
	} while (0)

/* Seconds from milliseconds, for comparisons. */
#define S(ms)	((double)(ms) / 1000.0)

#endif
