/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libcuda uprobes.  A uprobe hit costs microseconds, so the programs keep
 * per-stream state in a map and emit a record only when it changes what
 * user space can know of the GPU (docs/design.md §4.3): first submission on
 * a stream after a sync or query returned, sync ends, query results.  A
 * launch costs one map lookup.
 *
 * Ordering: a returning sync sets the stream's `announce`, then (after a
 * full barrier) reads its last submission; a submission stores
 * last_submit, then (after a full barrier) reads `announce`.  Either the
 * sync sees the submission (and proves nothing drained) or the submission
 * sees `announce` (and is reported).
 */
#ifndef IG_CUDA_BPF_H
#define IG_CUDA_BPF_H

#include "arch.bpf.h"
#include "maps.bpf.h"
#include "sched.bpf.h"

#define CUDA_SUCCESS		0
#define CUDA_ERROR_NOT_READY	600
#define CU_STREAM_NON_BLOCKING	0x1

static __always_inline __u64 stream_key_of(__u64 h, bool ptsz, __u32 tid)
{
	/* CU_STREAM_LEGACY = 0x1, CU_STREAM_PER_THREAD = 0x2; a NULL
	 * handle is the per-thread stream in _ptsz/_ptds entry points */
	if (h == 0)
		return ptsz ? (IG_STREAM_PTD_BIT | tid) : IG_STREAM_LEGACY;
	if (h == 0x1)
		return IG_STREAM_LEGACY;
	if (h == 0x2)
		return IG_STREAM_PTD_BIT | tid;
	return h;
}

/* Per entry point; user space derives the totals (one map update per
 * hit is all the hot path can afford). */
static __always_inline void count_hit(__u32 api)
{
	__u64 *v = bpf_map_lookup_elem(&api_hits, &api);

	if (v)
		*v += 1;
}

static __always_inline struct stream_state *stream_get(__u32 tgid, __u64 stream)
{
	struct stream_key k = { .tgid = tgid, .stream = stream };
	struct stream_state *st = bpf_map_lookup_elem(&streams, &k);
	struct stream_state *zero;
	__u32 z = 0;

	if (st)
		return st;
	zero = bpf_map_lookup_elem(&stream_new, &z);
	if (!zero)
		return NULL;
	__builtin_memset(zero, 0, sizeof(*zero));
	/* Created streams say it at cuStreamCreate; the per-thread default
	 * streams are blocking (ig_stream_syncs_with()). */
	zero->blocking = (stream & IG_STREAM_PTD_BIT) || stream == IG_STREAM_LEGACY;
	zero->announce = 1;
	if (bpf_map_update_elem(&streams, &k, zero, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&streams, &k)) {
		stat_add(IG_STAT_MAP_FULL, 1);
		return NULL;
	}
	return bpf_map_lookup_elem(&streams, &k);
}

static __always_inline bool stream_pending(struct stream_state *st)
{
	return st->last_submit > st->drain_ts;
}

/* A sync or query on the stream returned: report its next submission, and
 * say whether work submitted after @begin (by another thread) is there,
 * which leaves the stream not proven drained. */
static __always_inline bool announce_busy_since(struct stream_state *st,
						__u64 begin)
{
	st->announce = 1;
	__sync_fetch_and_add(&st->nreturns, 1);	/* full barrier (lock xadd) */
	return st->last_submit > begin;
}

static __always_inline struct ig_cuda *cuda_rec(__u32 kind, __u32 api, __u32 tid,
						__u32 tgid, __u64 ts, __u64 stream)
{
	struct ig_cuda *r = rec_reserve(sizeof(*r), IG_REC_CUDA, tid, tgid, ts);

	if (!r)
		return NULL;
	r->stream = stream;
	r->handle = 0;
	r->t_begin = 0;
	r->t_wake = 0;
	r->last_submit = 0;
	r->arg = 0;
	r->kind = kind;
	r->api = api;
	r->ret = 0;
	r->nsub = 0;
	r->flags = 0;
	r->pad = 0;
	return r;
}

/* Send the stream's buffered launches (IG_REC_LAUNCHES, docs/design.md
 * §4.10); a lost record loses them, as any other. */
static __always_inline void launches_flush(struct stream_state *st, __u32 tid,
					   __u32 tgid, __u64 now, __u64 stream)
{
	struct ig_launches *r;
	__u32 n = st->nl;

	if (!n)
		return;
	st->nl = 0;
	r = rec_reserve(sizeof(*r), IG_REC_LAUNCHES, tid, tgid, now);
	if (!r)
		return;
	r->stream = stream;
	r->n = n < IG_LBUF ? n : IG_LBUF;
	r->pad = 0;
	__builtin_memcpy(r->e, st->lb, sizeof(r->e));
	rec_submit(r);
}

/* What a launch says about its work: its function (or graph, or the
 * api of a copy) and its size; the duration model's signature. */
struct launch_sig {
	__u64 func;
	__u32 grid, block;
};

/* A submission of work on @stream at @now by the current thread. */
static __always_inline void submit(__u32 api, __u32 tid, __u32 tgid,
				   __u64 stream, __u64 now, __u32 flags,
				   const struct launch_sig *sig)
{
	struct stream_state *st = stream_get(tgid, stream);
	struct ig_thread_state *ts;
	struct ig_cuda *r;
	__u64 prev;
	__u32 i;

	if (!st)
		return;
	/* the launch buffer first: a full one is sent before it takes more */
	i = st->nl;
	if (i >= IG_LBUF) {
		launches_flush(st, tid, tgid, now, stream);
		i = 0;
	}
	i &= IG_LBUF - 1;
	st->lb[i].ts = now;
	st->lb[i].func = sig->func;
	st->lb[i].grid = sig->grid;
	st->lb[i].block = sig->block;
	st->nl = i + 1;
	prev = st->last_submit;
	st->last_submit = now;
	__sync_fetch_and_add(&st->nsub, 1);	/* full barrier */
	if (!st->announce)
		return;
	/* the submission the engine hears of: a gap it ends needs its
	 * thread's wait first (seen_running()) */
	ts = bpf_map_lookup_elem(&threads, &tid);
	if (ts)
		seen_running(ts, tid, now);
	r = cuda_rec(IG_CU_SUBMIT, api, tid, tgid, now, stream);
	if (!r)
		return;	/* try again on the next submission */
	r->last_submit = prev;
	r->nsub = st->nsub;
	r->flags = flags;
	rec_submit(r);
	st->nsub = 0;
	st->announce = 0;
}

static __always_inline __u64 launch_stream(struct pt_regs *ctx, __u32 cls,
					   __u32 api, struct launch_sig *sig)
{
	/* Every register load up front, at fixed context offsets: the
	 * verifier refuses a context pointer the compiler has offset first. */
	__u64 sp = PT_REGS_SP(ctx), a1 = PT_REGS_PARM1(ctx);
	__u64 a2 = PT_REGS_PARM2(ctx), a3 = PT_REGS_PARM3(ctx);
	__u64 a4 = PT_REGS_PARM4(ctx), a5 = PT_REGS_PARM5(ctx);
	__u64 a6 = PT_REGS_ARG6(ctx);
	__u64 h = 0;
	__u32 cfg[10];

	sig->func = api;
	sig->grid = IG_LB_NOTKERNEL;
	sig->block = 0;
	switch (cls) {
	case IG_AC_LAUNCH_STACK9:
		/* the 9th argument on the stack (arch.bpf.h) */
		bpf_probe_read_user(&h, sizeof(h), (void *)(sp + LAUNCH_ARG9_SP_OFF));
		/* f, gridDimX..Z, blockDimX, blockDimY in registers */
		sig->func = a1;
		sig->grid = (__u32)a2 * (__u32)a3 * (__u32)a4;
		sig->block = (__u32)a5 * (__u32)a6;
		break;
	case IG_AC_LAUNCH_EX:
		/* CUlaunchConfig: gridDimX..Z, blockDimX..Z, shared memory,
		 * then hStream at 32 */
		if (bpf_probe_read_user(cfg, sizeof(cfg), (void *)a1))
			break;
		h = (__u64)cfg[8] | (__u64)cfg[9] << 32;
		sig->func = a2;
		sig->grid = cfg[0] * cfg[1] * cfg[2];
		sig->block = cfg[3] * cfg[4];
		break;
	case IG_AC_STREAM_ARG2:
		h = a2;
		if (api == IG_API_cuGraphLaunch || api == IG_API_cuGraphLaunch_ptsz) {
			sig->func = a1;	/* the graph's exec handle */
			sig->grid = 0;
		}
		break;
	case IG_AC_STREAM_ARG4:
		h = a4;
		break;
	case IG_AC_STREAM_ARG6:
		h = a6;
		break;
	}
	return h;
}

/* What a libcuda probe knows on entry: its attach cookie, decoded, and
 * the calling thread. */
struct cu_call {
	__u64 cookie;
	__u32 api, cls, tid, tgid;
	bool ptsz;
};

static __always_inline struct cu_call cu_call_of(struct pt_regs *ctx, __u64 cookie)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct cu_call c = {
		.cookie = cookie,
		.api = IG_COOKIE_API(cookie),
		.cls = IG_COOKIE_CLASS(cookie),
		.ptsz = IG_COOKIE_PTSZ(cookie),
		.tid = (__u32)pid_tgid,
		.tgid = pid_tgid >> 32,
	};

	return c;
}

static __always_inline int cu_submit(struct pt_regs *ctx, __u64 cookie)
{
	struct cu_call c = cu_call_of(ctx, cookie);
	struct launch_sig sig = { .func = c.api, .grid = IG_LB_NOTKERNEL };
	__u64 h;

	/* attached for every process (`run`): the others return here */
	if (!proc_tracked(c.tgid))
		return 0;
	h = c.cls == IG_AC_SUBMIT_NOSTREAM ? 0 : launch_stream(ctx, c.cls, c.api, &sig);
	count_hit(c.api);
	submit(c.api, c.tid, c.tgid, stream_key_of(h, c.ptsz, c.tid),
	       bpf_ktime_get_ns(), c.ptsz ? IG_CF_PTSZ : 0, &sig);
	return 0;
}

/* Entry of a sync, query or timed call: remember what the return needs. */
static __always_inline int cu_enter(struct pt_regs *ctx, __u64 cookie)
{
	struct cu_call c = cu_call_of(ctx, cookie);
	__u32 api = c.api, cls = c.cls, tid = c.tid, tgid = c.tgid;
	bool ptsz = c.ptsz;
	struct ig_thread_state *ts = thread_get(tid, tgid);
	struct stream_state *st;
	__u64 now = bpf_ktime_get_ns();

	if (!ts)
		return 0;
	seen_running(ts, tid, now);
	count_hit(api);
	ts->cu_cookie_api = api;
	ts->cu_class = cls;
	ts->cu_blocked = 0;
	ts->cu_wake = 0;
	ts->cu_emit = 1;
	ts->cu_obj = 0;
	ts->cu_arg = 0;

	switch (cls) {
	case IG_AC_STREAM_SYNC:
	case IG_AC_STREAM_QUERY:
		ts->cu_obj = stream_key_of(PT_REGS_PARM1(ctx), ptsz, tid);
		st = stream_get(tgid, ts->cu_obj);
		/* Nothing pending: the sync learns nothing new. */
		if (st && !stream_pending(st) && cls == IG_AC_STREAM_SYNC)
			ts->cu_emit = 0;
		break;
	case IG_AC_EVENT_SYNC:
	case IG_AC_EVENT_QUERY:
		ts->cu_obj = PT_REGS_PARM1(ctx);
		break;
	case IG_AC_SYNC_COPY: {
		struct launch_sig sig = { .func = api, .grid = IG_LB_NOTKERNEL };
		struct ig_cuda *r;

		ts->cu_obj = stream_key_of(0, ptsz, tid);
		submit(api, tid, tgid, ts->cu_obj, now, ptsz ? IG_CF_PTSZ : 0, &sig);
		/* Begin record: the copy is a submission user space must see
		 * at once, even if the stream was already pending. */
		r = cuda_rec(IG_CU_SYNC_BEGIN, api, tid, tgid, now, ts->cu_obj);
		if (r) {
			r->arg = PT_REGS_PARM3(ctx);
			r->flags = ptsz ? IG_CF_PTSZ : 0;
			rec_submit(r);
		}
		break;
	}
	case IG_AC_STREAM_CREATE:
		ts->cu_arg = PT_REGS_PARM1(ctx);	/* CUstream * */
		ts->cu_obj = PT_REGS_PARM2(ctx);	/* flags */
		break;
	case IG_AC_CTX_DEVICE:
		switch (IG_COOKIE_DEVARG(c.cookie)) {
		case 2: ts->cu_obj = PT_REGS_PARM2(ctx); break;
		case 3: ts->cu_obj = PT_REGS_PARM3(ctx); break;
		case 4: ts->cu_obj = PT_REGS_PARM4(ctx); break;
		}
		break;
	}
	ts->cu_begin = now;	/* last: marks the call as in progress */
	return 0;
}

/* A whole-context sync (every stream of the process) or a synchronous
 * copy returned: the copy waited for the streams its own stream waits
 * for (ig_stream_syncs_with(), docs/design.md §4.2).  A first walk looks
 * at them all; only if none was submitted on during the call does a
 * second walk mark them drained, as the engine closes all or none of
 * them (a stream taken as drained here hides its next sync, §4.3). */
struct drain_all {
	__u32 tgid, tid;
	bool copy;		/* a synchronous copy on @stream */
	bool mark;		/* second walk: mark them drained at @now */
	__u64 stream;
	__u64 begin, now;
	__u64 last;		/* newest submission among them */
	bool partial;		/* some was submitted during the call */
};

static long drain_cb(struct bpf_map *map, struct stream_key *k,
		     struct stream_state *st, struct drain_all *d)
{
	if (k->tgid != d->tgid || (d->copy &&
	    !ig_stream_syncs_with(d->stream, 0, k->stream, st->blocking)))
		return 0;
	if (d->mark) {
		st->drain_ts = d->now;
		return 0;
	}
	launches_flush(st, d->tid, d->tgid, d->now, k->stream);
	if (announce_busy_since(st, d->begin))
		d->partial = true;
	if (st->last_submit > d->last)
		d->last = st->last_submit;
	return 0;
}

/* Return of a sync call: what drained, and since when. */
static __always_inline void sync_exit(struct ig_thread_state *ts, __u32 tid,
				      __u32 tgid, __u64 now, long rc)
{
	struct stream_state *st = NULL;
	struct event_key ek = { .tgid = tgid, .event = ts->cu_obj };
	struct event_state *ev;
	__u32 cls = ts->cu_class, flags = 0;
	__u64 stream = ts->cu_obj, last = 0;
	struct ig_cuda *r;

	if (ts->cu_blocked)
		flags |= IG_CF_BLOCKED;
	switch (cls) {
	case IG_AC_STREAM_SYNC:
		st = stream_get(tgid, stream);
		if (!st)
			return;
		launches_flush(st, tid, tgid, now, stream);
		if (announce_busy_since(st, ts->cu_begin))
			flags |= IG_CF_PARTIAL;
		else if (rc == CUDA_SUCCESS)
			st->drain_ts = now;
		last = st->last_submit;
		break;
	case IG_AC_CTX_SYNC:
	case IG_AC_SYNC_COPY: {
		struct drain_all d = {
			.tgid = tgid, .tid = tid, .copy = cls == IG_AC_SYNC_COPY,
			.stream = stream, .begin = ts->cu_begin, .now = now,
		};

#ifdef IG_NO_FOR_EACH
		d.partial = true;	/* no walk: nothing proven drained */
#else
		bpf_for_each_map_elem(&streams, drain_cb, &d, 0);
#endif
		if (d.partial)
			flags |= IG_CF_PARTIAL;
		d.mark = !d.partial && rc == CUDA_SUCCESS;
		if (d.mark)
			bpf_for_each_map_elem(&streams, drain_cb, &d, 0);
		last = d.last;
		if (cls == IG_AC_CTX_SYNC)
			stream = 0;
		break;
	}
	case IG_AC_EVENT_SYNC:
		ev = bpf_map_lookup_elem(&events, &ek);
		if (!ev) {
			flags |= IG_CF_PARTIAL;	/* recorded before attach */
			break;
		}
		stream = ev->stream;
		st = stream_get(tgid, stream);
		if (!st)
			return;
		launches_flush(st, tid, tgid, now, stream);
		if (announce_busy_since(st, ev->record_ts)) {
			flags |= IG_CF_EVENT_PARTIAL;
		} else if (rc == CUDA_SUCCESS) {
			flags |= IG_CF_EVENT_ALL;
			st->drain_ts = now;
		}
		last = st->last_submit;
		break;
	}
	r = cuda_rec(IG_CU_SYNC_END, ts->cu_cookie_api, tid, tgid, now, stream);
	if (!r)
		return;
	r->handle = cls == IG_AC_EVENT_SYNC ? ts->cu_obj : 0;
	r->t_begin = ts->cu_begin;
	r->t_wake = ts->cu_wake;
	r->last_submit = last;
	r->ret = rc;
	r->flags = flags;
	if (st) {
		r->nsub = st->nsub;
		st->nsub = 0;
	}
	rec_submit(r);
}

/* Return of a query: CUDA_SUCCESS proves drained at the return,
 * CUDA_ERROR_NOT_READY proves pending work at the entry. */
static __always_inline void query_exit(struct ig_thread_state *ts, __u32 tid,
				       __u32 tgid, __u64 now, long rc)
{
	__u64 stream = ts->cu_obj, since = ts->cu_begin;
	struct stream_state *st;
	struct ig_cuda *r;
	__u32 flags = 0;

	if (ts->cu_class == IG_AC_EVENT_QUERY) {
		struct event_key ek = { .tgid = tgid, .event = ts->cu_obj };
		struct event_state *ev = bpf_map_lookup_elem(&events, &ek);

		if (!ev)
			return;
		stream = ev->stream;
		since = ev->record_ts;
		flags |= IG_CF_EVENT_ALL;
	}
	st = stream_get(tgid, stream);
	if (!st)
		return;
	launches_flush(st, tid, tgid, now, stream);
	if (rc == CUDA_SUCCESS) {
		if (!stream_pending(st))
			return;		/* nothing new */
		/* work submitted after the event (or during the call) is not
		 * proven done */
		if (announce_busy_since(st, since < ts->cu_begin ? since : ts->cu_begin))
			return;
		st->drain_ts = now;
		r = cuda_rec(IG_CU_QUERY_DONE, ts->cu_cookie_api, tid, tgid,
			     now, stream);
	} else if (rc == CUDA_ERROR_NOT_READY) {
		if (now - st->busy_emit_ts < busy_query_gap_ns)
			return;
		st->busy_emit_ts = now;
		r = cuda_rec(IG_CU_QUERY_BUSY, ts->cu_cookie_api, tid, tgid,
			     ts->cu_begin, stream);
	} else {
		return;
	}
	if (!r)
		return;
	r->handle = ts->cu_class == IG_AC_EVENT_QUERY ? ts->cu_obj : 0;
	r->t_begin = ts->cu_begin;
	r->last_submit = st->last_submit;
	r->ret = rc;
	r->flags = flags;
	r->nsub = st->nsub;
	st->nsub = 0;
	rec_submit(r);
}

static __always_inline void api_exit(struct ig_thread_state *ts, __u32 tid,
				     __u32 tgid, __u64 now, long rc)
{
	struct ig_cuda *r;
	__u32 kind = IG_CU_API;
	__u64 arg = 0, stream = 0;

	if (ts->cu_class == IG_AC_STREAM_CREATE && rc == CUDA_SUCCESS) {
		__u64 h = 0;
		struct stream_state *st;

		bpf_probe_read_user(&h, sizeof(h), (void *)ts->cu_arg);
		st = stream_get(tgid, h);
		if (st) {
			st->flags = ts->cu_obj;
			st->blocking = !(ts->cu_obj & CU_STREAM_NON_BLOCKING);
		}
		kind = IG_CU_STREAM_NEW;
		stream = h;
		arg = ts->cu_obj;
	} else if (ts->cu_class == IG_AC_CTX_DEVICE && rc == CUDA_SUCCESS) {
		kind = IG_CU_CTX;
		arg = ts->cu_obj;
	} else if (now - ts->cu_begin < min_api_ns) {
		return;
	}
	r = cuda_rec(kind, ts->cu_cookie_api, tid, tgid, now, stream);
	if (!r)
		return;
	r->t_begin = ts->cu_begin;
	r->arg = arg;
	r->ret = rc;
	rec_submit(r);
}

static __always_inline int cu_exit(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, tgid = pid_tgid >> 32;
	struct ig_thread_state *ts = bpf_map_lookup_elem(&threads, &tid);
	long rc = PT_REGS_RC(ctx);
	__u64 now = bpf_ktime_get_ns();

	if (!ts)
		return 0;
	seen_running(ts, tid, now);
	if (!ts->cu_begin)
		return 0;
	switch (ts->cu_class) {
	case IG_AC_STREAM_SYNC:
	case IG_AC_CTX_SYNC:
	case IG_AC_EVENT_SYNC:
	case IG_AC_SYNC_COPY:
		if (ts->cu_emit)
			sync_exit(ts, tid, tgid, now, (int)rc);
		break;
	case IG_AC_STREAM_QUERY:
	case IG_AC_EVENT_QUERY:
		query_exit(ts, tid, tgid, now, (int)rc);
		break;
	default:
		api_exit(ts, tid, tgid, now, (int)rc);
		break;
	}
	ts->cu_begin = 0;
	return 0;
}

/* cuEventRecord(event, stream): remember which stream, and when. */
static __always_inline int cu_event_record(struct pt_regs *ctx, __u64 cookie)
{
	struct cu_call c = cu_call_of(ctx, cookie);
	struct event_key k = { .tgid = c.tgid, .event = PT_REGS_PARM1(ctx) };
	struct event_state ev;

	if (!proc_tracked(c.tgid))
		return 0;
	count_hit(c.api);
	ev.stream = stream_key_of(PT_REGS_PARM2(ctx), c.ptsz, c.tid);
	ev.record_ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&events, &k, &ev, BPF_ANY))
		stat_add(IG_STAT_MAP_FULL, 1);
	return 0;
}

/* The program for one CUDA entry point: the kind of probe its class
 * takes, with its cookie (a constant where the kernel has no attach
 * cookies). */
static __always_inline int cu_probe(struct pt_regs *ctx, __u64 cookie)
{
	__u32 cls = IG_COOKIE_CLASS(cookie);

	if (IG_AC_SUBMITS(cls) && cls != IG_AC_SYNC_COPY)
		return cu_submit(ctx, cookie);
	if (cls == IG_AC_EVENT_RECORD)
		return cu_event_record(ctx, cookie);
	return cu_enter(ctx, cookie);
}

#endif
