// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "probes/capture.h"
#include "probes/cuda_attach.h"
#include "probes/discovery.h"
#include "probes/nccl_attach.h"
#include "probes/log.h"
#include "host/nvml.h"
#include "host/procfs.h"
#include "stream/recording.h"
#include "stream/reorder.h"
#include "probes/privs.h"
#include "modes/session_int.h"
#include "modes/feed.h"
#include "probes/spawn.h"
#include "probes/tracer.h"
#include "util/util.h"
#include "util/clock.h"

#define PRUNE_EVERY_NS		(500ULL * 1000 * 1000)
#define NVML_EVERY_NS		(1000ULL * 1000 * 1000)
#define LOST_READ_EVERY_NS	(1000ULL * 1000 * 1000)
#define STOP_DRAIN_NS		(5000ULL * 1000 * 1000)	/* reading what is left at a stop */
/* a failed loader hook leaves the periodic look at the maps, this often */
#define RESCAN_EVERY_S		2

extern char **environ;
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void emit(struct session *s, const struct ig_hdr *rec)
{
	if (s->route) {
		ig_session_days_route(s, rec);
		return;
	}
	if (rec->type == IG_REC_META && !s->meta.h.type)
		memcpy(&s->meta, rec, rec->size < sizeof(s->meta) ? rec->size : sizeof(s->meta));
	/* what a period's engine or a recording's piece is told at its start */
	if (s->o->every_s || s->o->output_max_bytes)
		ig_facts_seen(&s->facts, rec);
	s->nrecords++;
	if (s->writer && !s->write_err)
		s->write_err = ig_rec_writer_put(s->writer, rec);
	if (ig_reorder_push(s->reorder, rec))
		s->oom = true;
}

/* A process whose driver cannot be probed would look idle: say so now,
 * and make the run fail at the end (see ig_session_trace). */
static void on_disc_event(const struct ig_disc_event *ev, void *ctx)
{
	struct session *s = ctx;

	switch (ev->kind) {
	case IG_DISC_LIBCUDA:
		ig_debug("pid %d: %u of %u libcuda entry points probed in %s", ev->pid,
			 ev->nattached, ev->nsyms, ev->path);
		break;
	case IG_DISC_UNPROBED:
		s->nunprobed++;
		ig_warn("pid %d uses libcuda %s but idlegap cannot probe it: %s%s; its GPU work is missing from this trace",
			ev->pid, ev->name, strerror(-ev->err), ev->err == -EACCES ?
			" (another user's process in another mount namespace: idlegap needs CAP_SYS_PTRACE)" : "");
		break;
	case IG_DISC_NO_LD_HOOK:
		ig_warn("%s: cannot hook library loads: %s (libcuda loaded later is found within %d s)",
			ev->path, strerror(-ev->err), RESCAN_EVERY_S);
		break;
	case IG_DISC_GONE:
		break;
	case IG_DISC_PYLOCK:
		ig_capture_say_pylock(ev);
		break;
	}
}

static void emit_cb(const struct ig_hdr *rec, void *ctx)
{
	emit(ctx, rec);
}

/* A process's exec or exit: its set-up facts are gone. */
static void on_changed(pid_t pid, bool exec, void *ctx)
{
	struct session *s = ctx;

	(void)exec;
	ig_facts_forget(&s->facts, pid);
}

static void emit_meta(struct session *s, __u64 ts, int argc, char **argv)
{
	struct ig_meta m = {
		.h = { .type = IG_REC_META, .size = sizeof(m), .ts = ts },
		.version = IG_FORMAT_VERSION,
		.realtime_ns = ig_clock_ns(CLOCK_REALTIME),
	};
	struct utsname u;
	size_t off = 0;
	int i;

	m.ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (!uname(&u)) {
		ig_strcpy(m.host, sizeof(m.host), u.nodename);
		ig_strcpy(m.kernel, sizeof(m.kernel), u.release);
	}
	for (i = 0; i < argc && off < sizeof(m.command) - 1; i++)
		off += snprintf(m.command + off, sizeof(m.command) - off, "%s%s",
				i ? " " : "", argv[i]);
	emit(s, &m.h);
}

/* The context of track_one(). */
struct track_ctx {
	struct session *s;
	__u64 ts;
	int err;
	bool named;		/* a target the user named, not a descendant */
};

static int track_one(pid_t pid, void *ctx)
{
	struct track_ctx *c = ctx;
	struct session *s = c->s;
	int err = ig_capture_track(&s->cap, pid);

	if (err == -ESRCH && !c->named)
		return 0;	/* a descendant gone meanwhile */
	if (err == -ESRCH)
		ig_err("pid %d exited before tracing started", pid);
	else if (err)
		ig_err("cannot track pid %d: %s", pid, strerror(-err));
	if (err)
		return c->err = err;
	ig_capture_emit_tasks(&s->cap, pid, c->ts);
	/* one that cannot be probed fails the start: nothing is lost yet */
	return c->err = ig_discovery_add(s->cap.disc, pid, c->ts);
}

/* Host-wide (top): every process mapping a libcuda, and its descendants,
 * as they come. */
static int host_found(pid_t pid, __u64 now, void *ctx)
{
	struct track_ctx c = { .s = ctx, .ts = now };

	track_one(pid, &c);	/* one gone meanwhile, or unprobed: said */
	ig_proc_for_each_descendant(pid, track_one, &c);
	return 0;
}

static void host_scan(struct session *s, __u64 now)
{
	if (s->o->host_wide)
		ig_capture_scan_host(&s->cap, now, host_found, s);
}

/* A view's turn: the records and losses so far, read once a second. */
static int view_tick(struct session *s, __u64 now)
{
	struct ig_session_tick t = { .now = now, .nrecords = s->nrecords,
				     .engine = s->engine };
	struct ig_stats st;

	if (now >= s->next_lost_read) {
		s->next_lost_read = now + LOST_READ_EVERY_NS;
		if (!ig_tracer_stats(s->cap.tracer, &st))
			s->lost = st.stat[IG_STAT_DROPS] + ig_reorder_late(s->reorder);
	}
	t.lost = s->lost;
	return s->o->tick(s->o->tick_ctx, &t);
}

static int start_child(struct session *s, struct ig_child *c)
{
	int e = ig_spawn_start(c, &s->child_status);

	if (!e)
		return 0;
	s->child_reaped = true;
	if (c->switch_failed)
		ig_err("cannot run %s as user %u: %s", s->o->argv[0], s->run_as.uid, strerror(e));
	else
		ig_err("cannot run %s: %s", s->o->argv[0], strerror(e));
	return 1;
}

struct nvwin_ctx {
	struct session *s;
	__u64 ts;
	int nproc;
};

static void emit_nvwin(void *ctx, unsigned int dev, const struct ig_nvml_win *w)
{
	struct nvwin_ctx *c = ctx;
	struct ig_nvwin r = {
		.h = { .type = IG_REC_NVWIN, .size = sizeof(r), .ts = c->ts },
		.device = dev, .kind = (__u16)w->kind,
		.nproc = c->nproc > 0 && c->nproc < 0xffff ? (__u16)c->nproc : 0,
		.t0 = w->t0, .t1 = w->t1,
		.busy_ppm = w->busy_ppm, .quant_ppm = w->quant_ppm,
	};

	emit(c->s, &r.h);
}

/* Each second: the dashboard's figure, and the windows of the device's
 * own counters that ended since (docs/design.md §4.10). */
static void sample_nvml(struct session *s, __u64 ts)
{
	unsigned int d, util, mem;
	struct nvwin_ctx c = { .s = s, .ts = ts };

	for (d = 0; d < ig_nvml_ndevices(s->nvml); d++) {
		c.nproc = ig_nvml_nprocs(s->nvml, d);
		ig_nvml_windows(s->nvml, d, emit_nvwin, &c);
	}

	for (d = 0; d < ig_nvml_ndevices(s->nvml); d++) {
		struct ig_nvml r = {
			.h = { .type = IG_REC_NVML, .size = sizeof(r), .ts = ts },
			.device = d,
		};

		if (ig_nvml_sample(s->nvml, d, &util, &mem))
			continue;
		r.util_pct = util;
		r.mem_pct = mem;
		emit(s, &r.h);
	}
}

/* Sleep until the ring fills, 50 ms pass, or a rescan is due. */
static int poll_timeout_ms(const struct session *s)
{
	__u64 now = ig_mono_ns(), due = ig_discovery_next_due(s->cap.disc);

	if (!due)
		return 50;
	if (due <= now)
		return 0;
	return (due - now) / 1000000 + 1 < 50 ? (int)((due - now) / 1000000 + 1) : 50;
}

static enum ig_stop_reason trace_loop(struct session *s, __u64 t0)
{
	__u64 deadline = s->o->duration_s > 0 ?
			 t0 + (__u64)(s->o->duration_s * 1e9) : 0;
	__u64 next_prune = t0 + PRUNE_EVERY_NS, next_nvml = t0;
	__u64 now, flushed = 0;
	int n;

	for (;;) {
		n = ig_tracer_poll(s->cap.tracer, poll_timeout_ms(s));
		if (n < 0) {
			ig_err("reading the ring buffer: %s", strerror(-n));
			return IG_STOP_ERROR;
		}
		ig_feed_advance(s->reorder, s->cap.tracer);
		now = ig_mono_ns();
		/* a killed tracer loses at most the last poll's records */
		if (s->writer && s->nrecords != flushed) {
			ig_rec_writer_flush(s->writer);
			flushed = s->nrecords;
		}
		/* a piece due, a period's end, SIGUSR1 */
		ig_session_days_tick(s, now);
		if (s->nvml && now >= next_nvml) {
			sample_nvml(s, now);
			next_nvml = now + NVML_EVERY_NS;
		}
		ig_discovery_poll(s->cap.disc, now);
		host_scan(s, now);
		if (stop_signal)
			return IG_STOP_SIGNAL;
		if (s->o->tick && view_tick(s, now))
			return IG_STOP_SIGNAL;
		if (deadline && now >= deadline)
			return IG_STOP_DURATION;
		if (s->child > 0 && !s->child_reaped &&
		    waitpid(s->child, &s->child_status, WNOHANG) == s->child) {
			s->child_reaped = true;
			return IG_STOP_TARGET_EXIT;
		}
		if (now >= next_prune) {
			next_prune = now + PRUNE_EVERY_NS;
			if (ig_tracer_prune(s->cap.tracer) == 0 && !s->o->host_wide)
				return IG_STOP_TARGET_EXIT;
		}
		if (s->oom) {
			ig_err("out of memory");
			return IG_STOP_ERROR;
		}
	}
}

static int finish_stream(struct session *s, enum ig_stop_reason why)
{
	struct ig_stats st = {
		.h = { .type = IG_REC_STATS, .size = sizeof(st) },
	};
	struct ig_end end = {
		.h = { .type = IG_REC_END, .size = sizeof(end) },
		.reason = why,
	};

	int err;

	/* what the kernel still holds, unless a job that sends faster than
	 * it is read would hold the stop for ever */
	st.h.ts = end.h.ts = s->t_end = ig_tracer_drain(s->cap.tracer, STOP_DRAIN_NS, &err);
	/* records lost to it: the report says so, and the exit status */
	if (err)
		end.reason = IG_STOP_ERROR;
	if (ig_tracer_stats(s->cap.tracer, &st))
		ig_warn("cannot read the kernel counters");
	st.user_lost = ig_reorder_late(s->reorder);
	emit(s, &st.h);
	end.nrecords = s->nrecords;
	emit(s, &end.h);
	ig_reorder_flush(s->reorder);
	ig_engine_finish(s->engine);
	/* the last periods' reports, before the run's */
	return ig_session_days_end(s, &st) | (err != 0);
}

static int start_tracing(struct session *s, __u64 *t0)
{
	const struct ig_session_opts *o = s->o;
	struct ig_capture_opts co = {
		.min_offcpu_ns = o->min_offcpu_ns,
		.ringbuf_mb = o->ringbuf_mb,
		.libcuda_path = o->libcuda_path,
		.emit = emit_cb,
		.event = on_disc_event,
		.changed = on_changed,
		.ctx = s,
	};
	struct track_ctx c = { .s = s, .named = true };
	int err, i;

	if (ig_capture_open(&s->cap, &co))
		return 1;
	/* released once every probe is in (ig_session_trace) */
	ig_capture_hold_gpudev(&s->cap);
	if (o->sample_hz) {
		err = ig_tracer_attach_sampling(s->cap.tracer, o->sample_hz);
		if (err)
			ig_warn("no CPU-clock sampling (%s): time inside launches counts as host compute",
				strerror(-err));
	}
	*t0 = c.ts = ig_mono_ns();
	emit_meta(s, c.ts, o->self_argc, o->self_argv);
	if (ig_session_days_start(s, c.ts)) {
		ig_err("out of memory");
		return 1;
	}
	/* on disk before the targets are probed, which can take seconds: a
	 * tracer killed meanwhile leaves a recording --partial reads */
	if (s->writer && !s->write_err)
		s->write_err = ig_rec_writer_flush(s->writer);
	/* this machine's own loader: what a launched command uses */
	ig_discovery_hook_loaders(s->cap.disc, getpid());
	if (o->argv) {
		char lib[PATH_MAX];
		const char *cu = o->libcuda_path;

		/* the libcuda it would load, probed for every process before
		 * it runs: a process that loads it and creates its context
		 * at once is tracked from its fork, so its first calls are
		 * seen (docs/design.md §3.6) */
		if (!cu && !ig_cuda_find_for_exec(environ, lib, sizeof(lib)))
			cu = lib;
		if (cu && (err = ig_discovery_add_cuda_all(s->cap.disc, cu))) {
			ig_err("cannot probe %s: %s: the command was not started", cu,
			       strerror(err < 0 ? -err : EINVAL));
			return 1;
		}
		if (track_one(s->child, &c)) {
			ig_err("cannot trace the command: it was not started");
			return 1;
		}
		if (cu == lib && (err = ig_discovery_add_lib(s->cap.disc, s->child, lib, c.ts))) {
			ig_err("cannot probe %s: %s: the command was not started", lib,
			       strerror(err < 0 ? -err : EINVAL));
			return 1;
		}
		/* a libnccl it would load, probed before it runs: its
		 * ranks may create communicators before their maps are read;
		 * without one, nothing is attached */
		if (!ig_nccl_find_for_exec(environ, lib, sizeof(lib)) &&
		    (err = ig_discovery_add_nccl(s->cap.disc, lib, c.ts)))
			ig_warn("cannot probe %s: %s", lib, strerror(-err));
		/* until it maps libcuda, which names the driver's code */
		ig_discovery_watch(s->cap.disc, s->child, c.ts);
		return 0;
	}
	host_scan(s, c.ts);
	for (i = 0; i < o->npids; i++) {
		c.named = true;
		if (track_one(o->pids[i], &c))
			return 1;
		c.named = false;
		ig_proc_for_each_descendant(o->pids[i], track_one, &c);
	}
	return c.err ? 1 : 0;
}

static void say_child_end(const struct session *s)
{
	const char *cmd = s->o->argv ? s->o->argv[0] : "";

	if (s->child > 0 && !s->child_reaped)
		ig_info("stopped tracing; %s (pid %d) keeps running", cmd, s->child);
	else if (s->child > 0 && WIFEXITED(s->child_status) && WEXITSTATUS(s->child_status))
		ig_info("%s exited with status %d", cmd, WEXITSTATUS(s->child_status));
	else if (s->child > 0 && WIFSIGNALED(s->child_status))
		ig_info("%s was killed by signal %d", cmd, WTERMSIG(s->child_status));
}

/* The exit status of `run` when idlegap itself did not fail: the job's,
 * as a shell gives it (128 + the signal for a job a signal ended), or 0
 * for a job that keeps running past the trace (docs/design.md §7.2). */
static int job_status(const struct session *s)
{
	if (s->child <= 0 || !s->child_reaped)
		return 0;
	if (WIFEXITED(s->child_status))
		return WEXITSTATUS(s->child_status);
	if (WIFSIGNALED(s->child_status))
		return 128 + WTERMSIG(s->child_status);
	return 0;
}

/* Traces until a stop, then writes the recording's end and the reports;
 * the exit status. */
static int trace_and_report(struct session *s, __u64 t0)
{
	const struct ig_session_opts *o = s->o;
	enum ig_stop_reason why = trace_loop(s, t0);
	const char *piece = ig_rec_writer_path(s->writer);
	char last[4096];
	int rc, werr;

	snprintf(last, sizeof(last), "%s", piece ? piece : o->record_path ? o->record_path : "");
	/* the counters' windows that ended since the last second's */
	if (s->nvml && why != IG_STOP_ERROR)
		sample_nvml(s, ig_mono_ns());
	rc = finish_stream(s, why);
	ig_session_days_last_piece(s, s->t_end);
	werr = ig_rec_writer_close(s->writer);
	s->writer = NULL;
	rc |= ig_session_write_reports(s, &o->out);
	if (werr) {
		ig_err("recording %s is incomplete: %s", last, strerror(-werr));
		rc = 1;
	} else if (s->pieces_lost) {
		ig_err("recording %s: %u piece%s lost (see above)", o->record_path,
		       s->pieces_lost, s->pieces_lost == 1 ? "" : "s");
		rc = 1;
	}
	if (why == IG_STOP_ERROR)
		rc = 1;
	if (s->nunprobed) {
		ig_err("%u process%s used a libcuda idlegap could not probe (see the warnings above): the report misses their GPU work",
		       s->nunprobed, s->nunprobed == 1 ? "" : "es");
		rc = 1;
	}
	say_child_end(s);
	return rc ? rc : job_status(s);
}

int ig_session_trace(const struct ig_session_opts *o)
{
	struct session s = { .o = o, .child = -1 };
	struct ig_child child = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	pid_t *pids = NULL;
	int rc = 1;
	const char *why_nvml = NULL;
	__u64 t_start = ig_mono_ns(), t0 = 0, t_attached;
	struct ig_session_opts local = *o;

	if (ig_session_check_privileges(&s))
		return 1;
	s.o = &local;
	if (ig_session_check_targets(o, &local, &pids) ||
	    ig_session_setup_outputs(&s, &o->out, o->record_path))
		goto out;
	ig_on_stop_signals(on_signal);
	if (!o->tick)
		ig_session_usr1_signals(&s);
	if (o->argv) {
		int err = ig_spawn_paused(o->argv, &s.run_as, &child);

		if (err) {
			ig_err("cannot start %s: %s", o->argv[0], strerror(-err));
			goto out;
		}
		s.child = child.pid;
	}
	if (start_tracing(&s, &t0))
		goto out;
	t_attached = ig_mono_ns();
	ig_session_drop_privileges(&s);
	if (o->argv && start_child(&s, &child))
		goto out;
	ig_info("tracing %s (probes attached in %.0f ms)%s",
		o->argv ? o->argv[0] : o->host_wide ? "every GPU process on the host" :
		"the target processes",
		(t_attached - t_start) / 1e6, o->duration_s > 0 ? "" : "; Ctrl-C to stop");
	/* What no probe waits for comes after them (docs/design.md §7.1):
	 * NVML, whose first call can take long, and where each followed
	 * process's GPU is, before the first kernel record is read. */
	if (!o->no_nvml && !(s.nvml = ig_nvml_open(&why_nvml)))
		ig_debug("%s", why_nvml);
	ig_capture_release_gpudev(&s.cap);
	rc = trace_and_report(&s, t0);
out:
	if (child.go_fd >= 0)
		close(child.go_fd);	/* the paused child sees EOF and exits */
	if (child.err_fd >= 0)
		close(child.err_fd);
	if (s.child > 0 && !s.child_reaped && rc && !t0)
		waitpid(s.child, NULL, 0);
	/* a recording of a run that never began holds nothing: removed */
	if (s.writer && !t0)
		ig_rec_writer_abandon(s.writer, o->record_path);
	else if (s.writer)
		ig_rec_writer_close(s.writer);
	ig_session_days_free(&s);
	ig_session_teardown(&s);
	free(pids);
	return rc;
}
