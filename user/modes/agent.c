// SPDX-License-Identifier: GPL-2.0
/* `idlegap agent`: host-wide discovery and the duty cycle (agent.h). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "modes/agent_int.h"
#include "modes/feed.h"
#include "modes/cli_base.h"
#include "probes/capture.h"
#include "probes/cuda_attach.h"
#include "probes/nccl_attach.h"
#include "probes/discovery.h"
#include "views/httpd.h"
#include "probes/log.h"
#include "util/outfile.h"
#include "util/util.h"
#include "probes/privs.h"
#include "host/procfs.h"
#include "probes/tracer.h"

#define NS			1000000000ULL
#define PRUNE_EVERY_NS		(500ULL * 1000 * 1000)
#define IDLE_POLL_MS		200
#define LATE_POLL_MS		10	/* waiting for the last probes to go */
#define IDLE_SCAN_NS		(5ULL * NS)	/* the sweep between windows */
/* how long past its end a window reads on for the records up to it, sent
 * before and not read yet, when the agent reads slower than they come */
#define LAG_MAX_NS		(10ULL * NS)

extern const char *argp_program_version;
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* Every process found using a libcuda is tracked, probed or not: its exit
 * is what lets discovery forget it. */
static void on_disc_event(const struct ig_disc_event *ev, void *ctx)
{
	struct agent *a = ctx;

	switch (ev->kind) {
	case IG_DISC_LIBCUDA:
		ig_debug("pid %d: %u of %u libcuda entry points probed in %s",
			 ev->pid, ev->nattached, ev->nsyms, ev->path);
		/* its task and GPU records before any of its probes' */
		ig_agent_track(a, ev->pid, ev->ts ? ev->ts : ig_mono_ns() - 1);
		break;
	case IG_DISC_UNPROBED:
		if ((ev->err == -ENOENT || ev->err == -ESRCH) && ig_proc_exited(ev->pid)) {
			/* gone before it could be probed: not followed (a
			 * window counts it in gpu_processes.missed) */
			ig_debug("pid %d: %s: %s", ev->pid, ev->name, strerror(-ev->err));
			break;
		}
		if (ev->err == -ENOENT || ev->err == -ESRCH)
			ig_debug("pid %d: %s: %s", ev->pid, ev->name, strerror(-ev->err));
		else
			ig_warn("pid %d uses libcuda %s but idlegap cannot probe it: %s",
			ev->pid, ev->name, strerror(-ev->err));
		ig_agent_track(a, ev->pid, ig_mono_ns() - 1);
		break;
	case IG_DISC_NO_LD_HOOK:
		ig_debug("%s: cannot hook library loads: %s", ev->path, strerror(-ev->err));
		break;
	case IG_DISC_GONE:
		ig_debug("pid %d ended", ev->pid);
		break;
	case IG_DISC_PYLOCK:
		ig_capture_say_pylock(ev);
		break;
	}
}

static void emit_cb(const struct ig_hdr *rec, void *ctx)
{
	ig_agent_emit(ctx, rec);
}

/* What was sent before the window opened (read late, or while the last
 * one's probes came off) is not this window's, nor what a process the
 * kernel tracks from its libcuda mapping sent before the agent followed
 * it (to its exit, when it ends first); a set-up fact is kept for the
 * windows to come, whenever it was sent. */
static bool keep(const struct ig_hdr *rec, void *ctx)
{
	struct agent *a = ctx;

	bool gone = rec->type == IG_REC_PROC &&
		    ((const struct ig_proc *)rec)->kind == IG_PROC_GROUP_EXIT;
	bool pending = ig_agent_pending(a, rec->tgid);

	ig_agent_setup_seen(a, rec);
	if (gone)
		ig_agent_gone(a, rec->tgid);
	if (pending)
		return false;
	return (a->in_window && rec->ts >= a->opened_at) ||
	       (a->held.engine && rec->ts >= a->held.at);
}

static void on_gpulib(const struct ig_hdr *rec, void *ctx)
{
	ig_agent_on_gpulib(ctx, rec);
}

static void on_changed(pid_t pid, bool exec, void *ctx)
{
	ig_agent_forget_identity(ctx, pid, exec);
	ig_agent_setup_forget(ctx, pid);
}

static int render(void *ctx, char **buf, size_t *len)
{
	return ig_metrics_render(ctx, buf, len);
}

/* What `attach` needs, for every process of the host: CAP_SYS_PTRACE too,
 * since a container's libcuda is reached through /proc/PID/root. */
static int check_privileges(void)
{
	struct ig_privs_target t = {};
	char why[256];

	if (ig_privs_check(&t, why, sizeof(why))) {
		ig_err("%s (see CAPABILITIES in idlegap(8))", why);
		return 1;
	}
	if (!(ig_privs_effective() & (IG_CAP(CAP_SYS_PTRACE)))) {
		ig_err("missing CAP_SYS_PTRACE: the agent reads every GPU process's libcuda through /proc/PID/root (see CAPABILITIES in idlegap(8))");
		return 1;
	}
	return 0;
}

/* Keeps what the agent needs all its life (it probes processes at every
 * window), before any thread starts: capability sets are per thread. */
static void limit_privileges(void)
{
	uint64_t keep = IG_CAP(CAP_BPF) | IG_CAP(CAP_PERFMON) |
			IG_CAP(CAP_SYS_PTRACE) | IG_CAP(CAP_SYS_ADMIN) |
			IG_CAP(CAP_DAC_READ_SEARCH) | IG_CAP(CAP_DAC_OVERRIDE) |
			IG_CAP(CAP_SYS_RESOURCE);
	int err = ig_privs_limit(keep & ig_privs_effective());

	if (err)
		ig_warn("cannot give up capabilities: %s", strerror(-err));
}

/* A GPU process is tracked by the kernel from its first libcuda mapping,
 * and the set-up entry points of the libcuda this host's loader picks
 * (or --libcuda's), and a libnccl in the agent's LD_LIBRARY_PATH, are
 * probed for every process from the start: a job
 * that loads libcuda and creates its context at once, in a window or
 * between two, is seen doing it (docs/design.md §7.10). */
static void track_at_mapping(struct agent *a)
{
	char lib[PATH_MAX];
	const char *cu = a->o->libcuda_path;
	int fd = a->o->cgroup ? ig_agent_scope_fd(a) : -1, err;

	if (a->o->cgroup && fd < 0) {
		ig_warn("--cgroup %s: cannot open it (%s): a GPU process is tracked once "
			"idlegap has looked at it, and may set up before", a->o->cgroup,
			strerror(-fd));
		return;
	}
	err = ig_tracer_gpulib_track(a->cap.tracer, fd);
	if (fd >= 0)
		close(fd);
	if (err) {
		ig_warn("cannot track GPU processes at their first libcuda mapping: %s",
			strerror(-err));
		return;
	}
	a->track_at_mapping = true;
	if (!cu && !ig_cuda_find_for_exec(environ, lib, sizeof(lib)))
		cu = lib;
	if (cu && (err = ig_discovery_setup_file(a->cap.disc, cu)))
		ig_warn("cannot probe %s: %s", cu, strerror(-err));
	/* and a libnccl.so.2 in its LD_LIBRARY_PATH, as `run` does */
	if (!ig_nccl_find_for_exec(environ, lib, sizeof(lib)) &&
	    (err = ig_discovery_add_nccl(a->cap.disc, lib, ig_mono_ns())))
		ig_warn("cannot probe %s: %s", lib, strerror(-err));
}

static int open_tracing(struct agent *a)
{
	const struct ig_agent_opts *o = a->o;
	struct ig_capture_opts co = {
		.min_offcpu_ns = o->min_offcpu_ns,
		.ringbuf_mb = o->ringbuf_mb,
		.gpulib_watch = true,
		.libcuda_path = o->libcuda_path,
		.detach_on_exit = true,
		.windows = true,
		.emit = emit_cb,
		.keep = keep,
		.event = on_disc_event,
		.gpulib = on_gpulib,
		.changed = on_changed,
		.ctx = a,
	};
	char why[512];

	if (ig_capture_open(&a->cap, &co))
		return 1;
	/* short-lived GPU processes: seen at their first libcuda mapping
	 * rather than at the next sweep of /proc */
	if (ig_tracer_attach_gpulib(a->cap.tracer, why, sizeof(why)))
		ig_warn("%s: GPU processes are found by looking at /proc every second only, "
			"and those missed are not counted", why);
	else
		track_at_mapping(a);
	/* nothing probed until the first window */
	ig_discovery_detach_all(a->cap.disc);
	return 0;
}

/* The window's records and a held one's leave their reorder stages as far
 * as the ring buffer was read whole (docs/design.md §3.4). */
static void advance(struct agent *a)
{
	ig_feed_advance(a->reorder, a->cap.tracer);
	ig_feed_advance(a->held.reorder, a->cap.tracer);
}

/* A GPU process the sweep found: followed when in --cgroup's subtree. */
static int scan_found(pid_t pid, __u64 now, void *ctx)
{
	struct agent *a = ctx;

	if (ig_agent_in_scope(a, pid))
		ig_discovery_add(a->cap.disc, pid, now);
	return 0;
}

static int poll_ms(const struct agent *a, __u64 now, __u64 end)
{
	__u64 due = ig_discovery_next_due(a->cap.disc), next = end;

	if (due && due < next)
		next = due;
	if (next <= now)
		return 0;
	return (next - now) / 1000000 + 1 < 50 ? (int)((next - now) / 1000000 + 1) : 50;
}

/* Between windows: until discovery's next look, IDLE_POLL_MS at most. */
static int idle_ms(const struct agent *a, __u64 now)
{
	__u64 due = ig_discovery_next_due(a->cap.disc);

	if (!due || due >= now + IDLE_POLL_MS * 1000000ULL)
		return IDLE_POLL_MS;
	return due <= now ? 0 : (int)((due - now) / 1000000 + 1);
}

/* One window from @start until @end or a stop: probes every process using
 * a libcuda, looks for new ones every second, reports.  @handover: the
 * probes are still attached from the last window, which closed at @start;
 * this one takes the records from that instant on.  @next: whether the
 * next window follows at once (continuous windows keep the probes). */
static int run_window(struct agent *a, __u64 start, __u64 end, bool handover,
		      bool next)
{
	__u64 now = ig_mono_ns(), next_prune = now + PRUNE_EVERY_NS;
	unsigned int why = IG_STOP_DURATION;
	int n, nfacts;

	a->handover = handover;
	if (ig_agent_window_open(a, start))
		return 1;
	n = handover ? ig_discovery_reannounce(a->cap.disc, start) :
		       ig_discovery_attach_all(a->cap.disc, start);
	nfacts = ig_agent_setup_announce(a, start, emit_cb);
	ig_debug("window %llu: %d processes probed in %.0f ms, %d set-up facts announced",
		 a->nwindows + 1, n, (ig_mono_ns() - now) / 1e6, nfacts);
	for (;;) {
		ig_capture_scan_host(&a->cap, now, a->o->cgroup ? scan_found : NULL, a);
		n = ig_tracer_poll(a->cap.tracer, poll_ms(a, now, end < a->cap.next_host_scan ?
							  end : a->cap.next_host_scan));
		if (n < 0) {
			ig_err("reading the ring buffer: %s", strerror(-n));
			why = IG_STOP_ERROR;
		}
		advance(a);
		now = ig_mono_ns();
		ig_discovery_poll(a->cap.disc, now);
		if (now >= next_prune) {
			ig_tracer_prune(a->cap.tracer);
			next_prune = now + PRUNE_EVERY_NS;
		}
		if (a->oom) {
			ig_err("out of memory");
			why = IG_STOP_ERROR;
		}
		/* the last window, held inside a gap, ends with it */
		if (ig_agent_held_poll(a, false))
			why = IG_STOP_ERROR;
		if (stop_signal && why == IG_STOP_DURATION)
			why = IG_STOP_SIGNAL;
		if (why != IG_STOP_DURATION)
			break;
		/* the window ends where the stream reached its end: records
		 * after it wait for the next window; those before it, still
		 * in the ring, are read first, LAG_MAX_NS at most */
		if (now >= end) {
			ig_tracer_stop_at(a->cap.tracer, end);
			if (ig_tracer_reached(a->cap.tracer) || n == 0 ||
			    now >= end + LAG_MAX_NS)
				break;
		}
	}
	if (ig_agent_window_close(a, why, next && why == IG_STOP_DURATION, end - start) ||
	    why == IG_STOP_ERROR)
		return 1;
	ig_debug("window %llu: %u processes followed", a->nwindows,
		 ig_discovery_nprocs(a->cap.disc));
	return 0;
}

/* Between windows: the set-up probes only (docs/design.md §7.10); GPU
 * processes are still looked for, found and given them, and the ring
 * buffer says which tracked processes end, so that they are forgotten,
 * and what they set up (agent_setup.c).  The next window starts at
 * @start, or once the last window's probes are all gone (their removal
 * runs in the background and may take longer than the pause): a probe
 * attached again while the old one is still there would fire twice.
 * @start is moved to the time the window can start. */
static int idle_until(struct agent *a, __u64 *start)
{
	__u64 now = ig_mono_ns(), next_prune = now + PRUNE_EVERY_NS, next_scan = now;
	bool late = false;
	int n;

	while (!stop_signal) {
		if (now >= *start) {
			if (ig_tracer_unlinked(a->unlink_mark))
				break;
			late = true;
		}
		/* the sys_enter hook finds a process at its libcuda mapping:
		 * the sweep, for the others, less often than in a window */
		if (now >= next_scan) {
			a->cap.next_host_scan = 0;
			ig_capture_scan_host(&a->cap, now, a->o->cgroup ? scan_found : NULL, a);
			next_scan = now + (a->track_at_mapping ? IDLE_SCAN_NS : PRUNE_EVERY_NS * 2);
		}
		n = ig_tracer_poll(a->cap.tracer, late ? LATE_POLL_MS : idle_ms(a, now));
		if (n < 0) {
			ig_err("reading the ring buffer: %s", strerror(-n));
			return 1;
		}
		advance(a);
		now = ig_mono_ns();
		ig_discovery_poll(a->cap.disc, now);
		if (now >= next_prune) {
			ig_tracer_prune(a->cap.tracer);
			next_prune = now + PRUNE_EVERY_NS;
		}
	}
	if (late) {
		ig_debug("window %llu: %.0f ms late, the last window's probes were "
			 "still being removed", a->nwindows + 1, (now - *start) / 1e6);
		*start = now;
	}
	return 0;
}

/* A duty cycle's window that ended inside a gap keeps its probes until
 * the gap ends, one more window at most (docs/design.md §7.10). */
static int extend(struct agent *a)
{
	__u64 next_prune = ig_mono_ns() + PRUNE_EVERY_NS, now;
	int n;

	while (a->held.engine) {
		n = ig_tracer_poll(a->cap.tracer, 50);
		if (n < 0) {
			ig_err("reading the ring buffer: %s", strerror(-n));
			return 1;
		}
		advance(a);
		now = ig_mono_ns();
		if (now >= next_prune) {
			ig_tracer_prune(a->cap.tracer);
			next_prune = now + PRUNE_EVERY_NS;
		}
		if (a->oom) {
			ig_err("out of memory");
			return 1;
		}
		if (ig_agent_held_poll(a, stop_signal != 0))
			return 1;
	}
	return 0;
}

static int cycle(struct agent *a)
{
	const __u64 window = (__u64)(a->o->window_s * NS), every = (__u64)(a->o->every_s * NS);
	__u64 start = ig_mono_ns();

	const bool continuous = window == every;
	bool handover = false;

	while (!stop_signal) {
		if (run_window(a, start, start + window, handover, continuous))
			return 1;
		if (continuous && !stop_signal) {
			/* the next window starts where this one ended */
			start = a->closed_at;
			handover = true;
			continue;
		}
		if (extend(a))
			return 1;
		start += every;
		if (start < ig_mono_ns())	/* a slow report: no catching up */
			start = ig_mono_ns();
		if (idle_until(a, &start))
			return 1;
	}
	return 0;
}

/* The server's thread takes no signal: they wake the main loop. */
static int start_httpd(struct agent *a)
{
	const struct ig_agent_opts *o = a->o;
	struct ig_metrics_opts mo = {
		.sz = sizeof(mo), .labels = o->labels, .nlabels = o->nlabels,
		.version = strchr(argp_program_version, ' ') ?
			   strchr(argp_program_version, ' ') + 1 : argp_program_version,
	};
	sigset_t set, old;

	a->metrics = ig_metrics_new(&mo);
	if (!a->metrics) {
		ig_err("cannot start the metrics: %s", strerror(errno));
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	a->httpd = ig_httpd_start(o->listen, render, a->metrics);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!a->httpd) {
		ig_err("--listen %s: %s", o->listen, errno == EINVAL ?
		       "not ADDR:PORT (e.g. 127.0.0.1:10437, [::1]:10437)" : strerror(errno));
		return 1;
	}
	return 0;
}

static int check_inputs(const struct ig_agent_opts *o)
{
	int err;

	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		ig_err("this kernel has no BTF (/sys/kernel/btf/vmlinux): idlegap needs CONFIG_DEBUG_INFO_BTF=y");
		return 1;
	}
	if (o->libcuda_path && access(o->libcuda_path, R_OK)) {
		ig_err("--libcuda %s: %s", o->libcuda_path, strerror(errno));
		return 1;
	}
	if (o->reports_dir && (err = ig_agent_reports_open(o->reports_dir))) {
		ig_err("--reports %s: %s", o->reports_dir, ig_outfile_strerror(err));
		return 1;
	}
	return 0;
}

int ig_agent_run(const struct ig_agent_opts *o)
{
	struct agent a = { .o = o };
	int rc = 1;

	if (check_privileges() || check_inputs(o))
		return 1;
	limit_privileges();
	/* Each window's engine is freed at its report, and the trim after
	 * it gives back what smaller blocks leave (as attach and run do) */
	ig_cli_days_heap();
	ig_on_stop_signals(on_signal);
	if (start_httpd(&a) || open_tracing(&a))
		goto out;
	ig_info("agent: metrics on port %d (%s); tracing %g s every %g s%s",
		ig_httpd_port(a.httpd), o->listen, o->window_s, o->every_s,
		o->window_s == o->every_s ? " (continuous)" : "");
	rc = cycle(&a);
	if (!rc)
		ig_info("agent: stopped by signal %d after %llu windows", (int)stop_signal,
			a.nwindows);
out:
	ig_agent_window_free(&a);
	ig_capture_close(&a.cap);
	ig_httpd_stop(a.httpd);
	ig_metrics_free(a.metrics);
	free(a.ids);
	free(a.prev_ids);
	free(a.changed);
	free(a.gpus);
	free(a.gpulib);
	ig_agent_setup_free(&a);
	return rc;
}
