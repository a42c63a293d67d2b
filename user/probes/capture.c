// SPDX-License-Identifier: GPL-2.0
/* The capture front end of the live modes (capture.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "probes/capture.h"
#include "probes/log.h"
#include "probes/pyframes.h"
#include "host/gpudev.h"
#include "host/tstate.h"
#include "host/identity.h"
#include "host/procfs.h"
#include "stacks/symbolize.h"
#include "util/escape.h"
#include "util/util.h"

#define HOST_SCAN_EVERY_NS	(1000ULL * 1000 * 1000)

static void emit(struct ig_capture *c, const struct ig_hdr *rec)
{
	c->o.emit(rec, c->o.ctx);
}

static void emit_cb(const struct ig_hdr *rec, void *ctx)
{
	emit(ctx, rec);
}

/* The pod and container of @pid, when the node names one (design §7.7):
 * read as it is followed and at each exec, the cgroup the runtime put it
 * in before its image ran. */
static void emit_ident(struct ig_capture *c, pid_t pid, __u64 ts)
{
	struct ig_ident r;

	if (!ig_identity_record(&r, NULL, pid, ts))
		emit(c, &r.h);
}

/* Where the process's GPU is (docs/design.md §4.2), before @ts. */
static void emit_gpudev(struct ig_capture *c, pid_t pid, __u64 ts,
			bool at_work)
{
	static bool said;
	struct ig_gpudev r;
	const char *why;

	if (!ig_gpudev_record(&r, pid, ts, at_work))
		emit(c, &r.h);
	/* once, at the first GPU work seen: a job on a node without NVML
	 * is still traced, its GPU known only from its context */
	if (at_work && !said && (why = ig_gpudev_no_nvml())) {
		said = true;
		ig_warn("%s: a GPU process whose context creation is not seen "
			"is reported on an unknown GPU", why);
	}
}

/* A GPUDEV record held (ig_capture_hold_gpudev). */
struct ig_capture_held {
	pid_t pid;
	__u64 ts;
};

/* Records discovery makes go in the stream as the kernel's do; the
 * interpreter it finds is where the Python reader looks. */
static void on_disc_record(const struct ig_hdr *rec, void *ctx)
{
	const struct ig_pyrt *r = (const struct ig_pyrt *)rec;
	struct ig_capture *c = ctx;
	struct ig_pyrt_info info;
	struct ig_pybuild b = { 0 };
	char esc[IG_ESC_SIZE(256)];
	int err;

	emit(c, rec);
	if (rec->type != IG_REC_PYRT)
		return;
	ig_debug("pid %d: _PyRuntime [%#llx, %#llx) in %.*s", rec->tgid,
		 (unsigned long long)r->start, (unsigned long long)r->end,
		 (int)sizeof(r->path), r->path);
	info.start = r->start;
	info.end = r->end;
	snprintf(info.path, sizeof(info.path), "%.*s", (int)sizeof(r->path), r->path);
	err = ig_pyframes_track(c->py, rec->tgid, &info, &b);
	if (err != -ENOTSUP || !c->py) {
		if (err)
			ig_debug("pid %d: no Python frames: %s", rec->tgid, strerror(-err));
		return;
	}
	/* once per interpreter, not per worker forked from it */
	if (!strcmp(c->py_refused, info.path)) {
		ig_debug("pid %d: no Python frames for %s: %s", rec->tgid, info.path, b.why);
		return;
	}
	ig_strcpy(c->py_refused, sizeof(c->py_refused), info.path);
	ig_warn("pid %d: %s: stacks without Python frames: %s", rec->tgid,
		ig_esc(esc, sizeof(esc), info.path, sizeof(info.path)), b.why);
}

static void on_disc_event(const struct ig_disc_event *ev, void *ctx)
{
	struct ig_capture *c = ctx;

	if (c->o.event)
		c->o.event(ev, c->o.ctx);
}

/* Every kernel record feeds discovery (forks, exits, library loads)
 * before the mode's stream. */
static void on_kernel_record(const struct ig_hdr *rec, void *ctx)
{
	struct ig_capture *c = ctx;

	if (rec->type == IG_REC_GPULIB) {
		if (c->o.gpulib)
			c->o.gpulib(rec, c->o.ctx);
		return;
	}
	ig_discovery_on_record(c->disc, rec);
	if (rec->type == IG_REC_PROC &&
	    (((const struct ig_proc *)rec)->kind == IG_PROC_EXEC ||
	     ((const struct ig_proc *)rec)->kind == IG_PROC_GROUP_EXIT)) {
		ig_pyframes_forget(c->py, rec->tgid);
		if (c->sym)
			ig_sym_forget(c->sym, rec->tgid);
		if (c->o.changed)
			c->o.changed((pid_t)rec->tgid,
				     ((const struct ig_proc *)rec)->kind == IG_PROC_EXEC, c->o.ctx);
	}
	if (c->o.keep && !c->o.keep(rec, c->o.ctx))
		return;
	ig_usym_on_record(&c->sym, rec, emit_cb, c);
	/* a process whose GPU was not known when it was followed: asked
	 * again when it uses the GPU, stamped just before */
	if (rec->type == IG_REC_CUDA && rec->ts &&
	    ig_gpudev_wanted((pid_t)rec->tgid, rec->ts))
		emit_gpudev(c, (pid_t)rec->tgid, rec->ts - 1, true);
	/* the names of new code objects go in just before the stack */
	if (rec->type == IG_REC_PYSTACK)
		ig_pyframes_on_stack(c->py, rec, emit_cb, c);
	emit(c, rec);
	if (rec->type == IG_REC_PROC &&
	    ((const struct ig_proc *)rec)->kind == IG_PROC_EXEC) {
		emit_ident(c, (pid_t)rec->tgid, rec->ts);
		emit_gpudev(c, (pid_t)rec->tgid, rec->ts, false);
	}
	if (rec->type == IG_REC_PROC &&
	    ((const struct ig_proc *)rec)->kind == IG_PROC_GROUP_EXIT)
		ig_gpudev_forget((pid_t)rec->tgid);
}

int ig_capture_open(struct ig_capture *c, const struct ig_capture_opts *o)
{
	struct ig_tracer_opts to = {
		.sz = sizeof(to),
		.min_offcpu_ns = o->min_offcpu_ns,
		.ringbuf_mb = o->ringbuf_mb,
		.gpulib_watch = o->gpulib_watch,
	};
	struct ig_discovery_opts d = {
		.sz = sizeof(d),
		.libcuda_path = o->libcuda_path,
		.detach_on_exit = o->detach_on_exit,
		.windows = o->windows,
		.record = on_disc_record,
		.event = on_disc_event,
		.ctx = c,
	};
	char why[512];

	memset(c, 0, sizeof(*c));
	c->o = *o;
	c->tracer = ig_tracer_open(&to, on_kernel_record, c, why, sizeof(why));
	if (!c->tracer) {
		ig_err("%s", why);
		return 1;
	}
	c->py = ig_pyframes_new(c->tracer);
	if (ig_tracer_attach_host(c->tracer, why, sizeof(why))) {
		ig_err("%s", why);
		return 1;
	}
	d.tracer = c->tracer;
	c->disc = ig_discovery_new(&d);
	if (!c->disc) {
		ig_err("out of memory");
		return 1;
	}
	return 0;
}

void ig_capture_close(struct ig_capture *c)
{
	/* the tracer first: its probes go with it, at once */
	ig_tracer_close(c->tracer);
	ig_discovery_free(c->disc);
	ig_pyframes_free(c->py);
	ig_sym_free(c->sym);
	free(c->held);
	c->disc = NULL;
	c->py = NULL;
	c->tracer = NULL;
	c->sym = NULL;
	c->held = NULL;
	c->nheld = c->capheld = 0;
}

int ig_capture_track(struct ig_capture *c, pid_t pid)
{
	int err = ig_tracer_track(c->tracer, pid);

	if (!err && ig_proc_exited(pid))
		err = -ESRCH;	/* a zombie: nothing left to trace */
	return err;
}

struct tasks_ctx {
	struct ig_capture *c;
	__u64 ts;
};

/* What thread @tid was doing as tracing began, stamped when read: the
 * reason of a wait the kernel sees end without its start (§5.14). */
static void emit_tstate(struct ig_capture *c, pid_t tgid, pid_t tid, __u64 ts)
{
	struct ig_tstate r;
	struct ig_file f;
	struct timespec now;
	bool have_file;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (ig_tstate_read(&r, tgid, tid, ts, (__u64)now.tv_sec * 1000000000ULL +
			   (__u64)now.tv_nsec, &f, &have_file))
		return;
	if (have_file) {
		f.h.tid = (__u32)tid;
		f.h.ts = ts;
		emit(c, &f.h);
	}
	emit(c, &r.h);
}

static int emit_thread(pid_t tid, void *ctx)
{
	struct tasks_ctx *t = ctx;
	pid_t tgid = ig_proc_tgid(tid);
	struct ig_task r;

	if (tgid > 0 && tgid != tid) {	/* the leader has its own record */
		ig_proc_task_record(&r, tid, tgid, t->ts);
		emit(t->c, &r.h);
	}
	if (tgid > 0)
		emit_tstate(t->c, tgid, tid, t->ts);
	return 0;
}

void ig_capture_emit_tasks(struct ig_capture *c, pid_t pid, __u64 ts)
{
	struct tasks_ctx t = { c, ts };
	struct ig_task r;

	ig_proc_task_record(&r, pid, pid, ts);
	emit(c, &r.h);
	emit_ident(c, pid, ts);
	if (!c->hold_gpudev ||
	    !ig_grow((void **)&c->held, &c->capheld, c->nheld, sizeof(*c->held)))
		emit_gpudev(c, pid, ts, false);
	else
		c->held[c->nheld++] = (struct ig_capture_held){ pid, ts };
	ig_proc_for_each_thread(pid, emit_thread, &t);
}

void ig_capture_hold_gpudev(struct ig_capture *c)
{
	c->hold_gpudev = true;
}

void ig_capture_release_gpudev(struct ig_capture *c)
{
	size_t i;

	c->hold_gpudev = false;
	for (i = 0; i < c->nheld; i++)
		emit_gpudev(c, c->held[i].pid, c->held[i].ts, false);
	free(c->held);
	c->held = NULL;
	c->nheld = c->capheld = 0;
}

void ig_capture_scan_host(struct ig_capture *c, __u64 now,
			  int (*found)(pid_t pid, __u64 now, void *ctx), void *ctx)
{
	int n;

	if (now < c->next_host_scan)
		return;
	c->next_host_scan = now + HOST_SCAN_EVERY_NS;
	n = ig_discovery_scan(c->disc, now, found, ctx);
	if (n < 0 && !c->scan_failed)
		ig_warn("cannot list the GPU processes: %s", strerror(-n));
	c->scan_failed = n < 0;
}

void ig_capture_forget_sent(struct ig_capture *c)
{
	int err = ig_tracer_forget_stacks(c->tracer);

	if (err)
		ig_debug("stacks sent before: %s", strerror(-err));
	ig_pyframes_forget_sent(c->py);
	ig_sym_free(c->sym);
	c->sym = NULL;
}

void ig_capture_say_pylock(const struct ig_disc_event *ev)
{
	if (!ev->err)
		ig_debug("pid %d: %s is free-threaded: its critical sections probed",
			 ev->pid, ev->path);
	else
		ig_warn("%s is free-threaded, but idlegap cannot probe its critical sections: %s (a wait for an object's lock is then followed to its waker)",
			ev->path, strerror(-ev->err));
}
