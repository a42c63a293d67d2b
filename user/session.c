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
#include "cuda_attach.h"
#include "dump.h"
#include "log.h"
#include "nvml.h"
#include "procfs.h"
#include "pyrt.h"
#include "outfile.h"
#include "recording.h"
#include "reorder.h"
#include "privs.h"
#include "session.h"
#include "spawn.h"
#include "symbolize.h"
#include "tracer.h"
#include "util.h"

/* CPUs hand their records to the ring buffer with skews of microseconds;
 * annotation records may be placed a little in the past. */
#define REORDER_WINDOW_NS	(50ULL * 1000 * 1000)
#define PRUNE_EVERY_NS		(500ULL * 1000 * 1000)
#define NVML_EVERY_NS		(1000ULL * 1000 * 1000)
/* libcuda may be loaded at any time: look again this often, and this soon
 * after the loader says a library was loaded */
#define RESCAN_EVERY_NS		(2000ULL * 1000 * 1000)
#define RESCAN_SOON_NS		(20ULL * 1000 * 1000)

extern char **environ;
static volatile sig_atomic_t stop_signal;

struct attached {
	pid_t pid;
	dev_t dev;
	ino_t ino;
	bool mapped;		/* its code ranges were recorded */
};

/* A tracked process whose libcuda is not probed yet. */
struct watch {
	pid_t tgid;
	__u64 due;
};

struct session {
	const struct ig_session_opts *o;
	struct ig_tracer *tracer;
	struct ig_engine *engine;
	struct ig_reorder *reorder;
	struct ig_rec_writer *writer;
	FILE *json;		/* --json, opened up front */
	int write_err;
	bool oom;
	__u64 nrecords;
	struct attached *att;
	size_t natt, capatt;
	pid_t *pychecked;
	size_t npy, cappy;
	struct watch *watch;
	size_t nwatch, capwatch;
	struct attached *lds;		/* dynamic loaders hooked */
	size_t nld, capld;
	unsigned int nunprobed;	/* processes using a libcuda not probed */
	struct ig_run_as run_as;
	pid_t child;
	int child_status;
	bool child_reaped;
	struct ig_nvml *nvml;
	struct ig_symbolizer *sym;	/* names of native stack frames */
};

static __u64 now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void emit(struct session *s, const struct ig_hdr *rec)
{
	s->nrecords++;
	if (s->writer && !s->write_err)
		s->write_err = ig_rec_writer_put(s->writer, rec);
	if (ig_reorder_push(s->reorder, rec))
		s->oom = true;
}

static void emit_task(struct session *s, pid_t tid, pid_t tgid, __u64 ts)
{
	struct ig_task t = {
		.h = { .type = IG_REC_TASK, .size = sizeof(t), .tid = tid,
		       .tgid = tgid, .ts = ts },
		.is_thread = tid != tgid,
	};

	t.ppid = ig_proc_ppid(tgid, NULL);
	ig_proc_comm(tid, t.comm, sizeof(t.comm));
	ig_proc_exe(tgid, t.exe, sizeof(t.exe));
	emit(s, &t.h);
}

static bool pyrt_checked(struct session *s, pid_t tgid)
{
	size_t i;

	for (i = 0; i < s->npy; i++)
		if (s->pychecked[i] == tgid)
			return true;
	return false;
}

static void pyrt_forget(struct session *s, pid_t tgid)
{
	size_t i;

	for (i = 0; i < s->npy; i++)
		if (s->pychecked[i] == tgid)
			s->pychecked[i] = s->pychecked[--s->npy];
}

/* Looks up the interpreter's _PyRuntime once per process image. */
static void pyrt_check(struct session *s, pid_t tgid, __u64 ts)
{
	struct ig_pyrt r = {
		.h = { .type = IG_REC_PYRT, .size = sizeof(r), .tid = tgid,
		       .tgid = tgid, .ts = ts },
	};
	struct ig_pyrt_info info;

	if (pyrt_checked(s, tgid))
		return;
	if (!ig_grow((void **)&s->pychecked, &s->cappy, s->npy, sizeof(*s->pychecked)))
		return;
	s->pychecked[s->npy++] = tgid;
	if (ig_pyrt_find(tgid, &info))
		return;
	r.start = info.start;
	r.end = info.end;
	ig_strcpy(r.path, sizeof(r.path), info.path);
	ig_debug("pid %d: _PyRuntime [%#llx, %#llx) in %s", tgid,
		 (unsigned long long)r.start, (unsigned long long)r.end, info.path);
	emit(s, &r.h);
}

struct cuda_maps {
	struct session *s;
	pid_t pid;
	__u64 ts;
	dev_t dev;
	ino_t ino;
	bool found;
};

static int emit_cuda_map(const struct ig_map_entry *m, void *ctx)
{
	struct cuda_maps *c = ctx;
	struct ig_mapping r = {
		.h = { .type = IG_REC_MAPPING, .size = sizeof(r), .tid = c->pid,
		       .tgid = c->pid, .ts = c->ts },
		.start = m->start, .end = m->end, .offset = m->offset,
	};

	if (m->inode != c->ino || m->perms[2] != 'x')
		return 0;
	ig_strcpy(r.path, sizeof(r.path), m->path);
	emit(c->s, &r.h);
	c->found = true;
	return 0;
}

/* The driver's code in the process, so samples there count as driver
 * time; once it is mapped (a launched command maps it after exec). */
static void emit_cuda_maps(struct session *s, struct attached *a, __u64 ts)
{
	struct cuda_maps c = { s, a->pid, ts, a->dev, a->ino, false };

	if (a->mapped || a->pid <= 0)
		return;
	ig_proc_for_each_map(a->pid, emit_cuda_map, &c);
	a->mapped = c.found;
}

/* A process whose driver cannot be probed would look idle: say so now,
 * and make the run fail at the end (see ig_session_trace). */
static void unprobed(struct session *s, pid_t pid, const char *name, int err)
{
	s->nunprobed++;
	ig_warn("pid %d uses libcuda %s but idlegap cannot probe it: %s%s; its GPU work is missing from this trace",
		pid, name, strerror(-err), err == -EACCES ?
		" (another user's process in another mount namespace: idlegap needs CAP_SYS_PTRACE)" : "");
}

/* Probes @lib for @pid; a negative errno after saying why. */
static int attach_libcuda(struct session *s, const struct ig_cuda_lib *lib,
			  pid_t pid, __u64 ts)
{
	struct ig_libcuda rec = {
		.h = { .type = IG_REC_LIBCUDA, .size = sizeof(rec),
		       .tid = pid > 0 ? pid : 0, .tgid = pid > 0 ? pid : 0, .ts = ts },
	};
	struct ig_libcuda_info info;
	struct stat st;
	size_t i;
	int err;

	if (stat(lib->path, &st)) {
		err = -errno;
		unprobed(s, pid, lib->name, err);
		return err;
	}
	for (i = 0; i < s->natt; i++)
		if (s->att[i].pid == pid && s->att[i].dev == st.st_dev &&
		    s->att[i].ino == st.st_ino) {
			emit_cuda_maps(s, &s->att[i], ts);
			return 0;
		}
	if (!ig_grow((void **)&s->att, &s->capatt, s->natt, sizeof(*s->att)))
		return -ENOMEM;
	s->att[s->natt++] = (struct attached){ pid, st.st_dev, st.st_ino, false };
	err = ig_cuda_attach(s->tracer, lib, pid, &info);
	if (err) {
		unprobed(s, pid, lib->name, err);
		return err;
	}
	ig_debug("pid %d: %u of %u libcuda entry points probed in %s", pid,
		 info.nattached, info.nsyms, lib->path);
	rec.nsyms = info.nsyms;
	rec.nattached = info.nattached;
	ig_strcpy(rec.version, sizeof(rec.version), info.version);
	ig_strcpy(rec.path, sizeof(rec.path), info.path);
	emit(s, &rec.h);
	emit_cuda_maps(s, &s->att[s->natt - 1], ts);
	return 0;
}

/* A file named in idlegap's own namespace (--libcuda, or where `run`'s
 * loader will look). */
static int attach_libcuda_path(struct session *s, const char *path, pid_t pid,
			       __u64 ts)
{
	struct ig_cuda_lib lib;

	ig_strcpy(lib.name, sizeof(lib.name), path);
	ig_strcpy(lib.path, sizeof(lib.path), path);
	return attach_libcuda(s, &lib, pid, ts);
}

/* libcuda as @pid maps it: 0 probed, 1 not mapped (yet), negative errno
 * when it is mapped and cannot be probed. */
static int attach_mapped_libcuda(struct session *s, pid_t pid, __u64 ts)
{
	struct ig_cuda_lib lib;
	int err = ig_cuda_find_in_maps(pid, &lib);

	if ((err == -ENOENT && !lib.name[0]) || (err && ig_proc_exited(pid)))
		return 1;	/* not mapped, or gone meanwhile */
	if (err) {
		unprobed(s, pid, lib.name[0] ? lib.name : "(its maps are unreadable)", err);
		return err;
	}
	return attach_libcuda(s, &lib, pid, ts);
}

struct loader_ctx {
	struct session *s;
	pid_t pid;
};

/* Hooks the dynamic loader a process uses (once per loader file), so that
 * its later library loads are seen. */
static int hook_loader(const struct ig_map_entry *m, void *ctx)
{
	struct session *s = ((struct loader_ctx *)ctx)->s;
	pid_t pid = ((struct loader_ctx *)ctx)->pid;
	char path[PATH_MAX];
	const char *base = strrchr(m->path, '/');
	struct stat st;
	size_t i;
	int err;

	if (!base || strncmp(base + 1, "ld-linux", 8) || m->offset)
		return 0;
	if (ig_proc_map_path(pid, m, path, sizeof(path)) || stat(path, &st))
		return 1;
	for (i = 0; i < s->nld; i++)
		if (s->lds[i].dev == st.st_dev && s->lds[i].ino == st.st_ino)
			return 1;
	if (!ig_grow((void **)&s->lds, &s->capld, s->nld, sizeof(*s->lds)))
		return 1;
	s->lds[s->nld++] = (struct attached){ 0, st.st_dev, st.st_ino, false };
	err = ig_tracer_attach_ld(s->tracer, path);
	if (err)
		ig_warn("%s: cannot hook library loads: %s (libcuda loaded later is found within %llu s)",
			path, strerror(-err), RESCAN_EVERY_NS / 1000000000ULL);
	return 1;
}

static void hook_loaders(struct session *s, pid_t pid)
{
	struct loader_ctx c = { s, pid };

	ig_proc_for_each_map(pid, hook_loader, &c);
}

static void watch_set(struct session *s, pid_t tgid, __u64 due)
{
	size_t i;

	for (i = 0; i < s->nwatch; i++)
		if (s->watch[i].tgid == tgid) {
			if (due < s->watch[i].due)
				s->watch[i].due = due;
			return;
		}
	if (!ig_grow((void **)&s->watch, &s->capwatch, s->nwatch, sizeof(*s->watch)))
		return;
	s->watch[s->nwatch++] = (struct watch){ tgid, due };
}

static void watch_drop(struct session *s, pid_t tgid)
{
	size_t i;

	for (i = 0; i < s->nwatch; i++)
		if (s->watch[i].tgid == tgid)
			s->watch[i--] = s->watch[--s->nwatch];
}

/* Looks for libcuda in the processes that are due; attaches it. */
static void rescan(struct session *s, __u64 now)
{
	size_t i;

	for (i = 0; i < s->nwatch; i++) {
		struct watch *w = &s->watch[i];

		if (w->due > now)
			continue;
		hook_loaders(s, w->tgid);
		if (ig_proc_exited(w->tgid) || attach_mapped_libcuda(s, w->tgid, now) <= 0)
			s->watch[i--] = s->watch[--s->nwatch];
		else
			w->due = now + RESCAN_EVERY_NS;
	}
}

static void emit_usym(const struct ig_hdr *rec, void *ctx)
{
	emit(ctx, rec);
}

static void on_kernel_record(const struct ig_hdr *rec, void *ctx)
{
	struct session *s = ctx;

	ig_usym_on_record(&s->sym, rec, emit_usym, s);
	switch (rec->type) {
	case IG_REC_OFFCPU:
		/* the GIL test needs the interpreter before the first wait */
		if (((const struct ig_offcpu *)rec)->reason == IG_R_FUTEX)
			pyrt_check(s, rec->tgid, rec->ts - 1);
		break;
	case IG_REC_PROC:
		switch (((const struct ig_proc *)rec)->kind) {
		case IG_PROC_EXEC:
			pyrt_forget(s, rec->tgid);
			/* a new image may load libcuda */
			__attribute__((fallthrough));
		case IG_PROC_FORK:
			if (!s->o->libcuda_path)
				watch_set(s, rec->tgid, rec->ts + RESCAN_SOON_NS);
			break;
		case IG_PROC_GROUP_EXIT:
			watch_drop(s, rec->tgid);
			break;
		}
		break;
	case IG_REC_LIBOPEN:
		/* the interpreter may come in a library (embedding) too */
		pyrt_forget(s, rec->tgid);
		if (!s->o->libcuda_path)
			watch_set(s, rec->tgid, rec->ts + RESCAN_SOON_NS);
		break;
	}
	emit(s, rec);
}

static void to_engine(const struct ig_hdr *rec, void *ctx)
{
	ig_engine_feed(ctx, rec);
}

static void to_dump(const struct ig_hdr *rec, void *ctx)
{
	ig_dump_record(ctx, rec);
}

static void emit_meta(struct session *s, __u64 ts, int argc, char **argv)
{
	struct ig_meta m = {
		.h = { .type = IG_REC_META, .size = sizeof(m), .ts = ts },
		.version = IG_FORMAT_VERSION,
		.realtime_ns = now_ns(CLOCK_REALTIME),
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

struct track_ctx {
	struct session *s;
	__u64 ts;
	int err;
	bool named;		/* a target the user named, not a descendant */
};

static int emit_thread(pid_t tid, void *ctx)
{
	struct track_ctx *c = ctx;
	pid_t tgid = ig_proc_tgid(tid);

	if (tgid > 0 && tgid != tid)	/* the leader has its own record */
		emit_task(c->s, tid, tgid, c->ts);
	return 0;
}

static int track_one(pid_t pid, void *ctx)
{
	struct track_ctx *c = ctx;
	struct session *s = c->s;
	int err = ig_tracer_track(s->tracer, pid);

	if (!err && ig_proc_exited(pid))
		err = -ESRCH;	/* a zombie: nothing left to trace */
	if (err == -ESRCH && !c->named)
		return 0;	/* a descendant gone meanwhile */
	if (err == -ESRCH)
		ig_err("pid %d exited before tracing started", pid);
	else if (err)
		ig_err("cannot track pid %d: %s", pid, strerror(-err));
	if (err)
		return c->err = err;
	emit_task(s, pid, pid, c->ts);
	ig_proc_for_each_thread(pid, emit_thread, c);
	pyrt_check(s, pid, c->ts);
	hook_loaders(s, pid);
	/* one that cannot be probed fails the start: nothing is lost yet */
	if (s->o->libcuda_path)
		err = attach_libcuda_path(s, s->o->libcuda_path, pid, c->ts);
	else if ((err = attach_mapped_libcuda(s, pid, c->ts)) > 0)
		watch_set(s, pid, c->ts + RESCAN_EVERY_NS);
	return c->err = err < 0 ? err : 0;
}

/* Checks a target; returns its process id or -1 after saying why. */
static pid_t check_target(pid_t pid)
{
	bool kthread = false;
	pid_t tgid;

	if (pid <= 0 || ig_proc_ppid(pid, &kthread) < 0) {
		ig_err("no such process: %d", pid);
		return -1;
	}
	if (kthread) {
		ig_err("pid %d is a kernel thread; idlegap traces user processes", pid);
		return -1;
	}
	tgid = ig_proc_tgid(pid);
	if (ig_proc_exited(tgid > 0 ? tgid : pid)) {
		ig_err("pid %d has exited: a zombie its parent (pid %d) has not reaped; nothing to trace",
		       pid, ig_proc_ppid(pid, NULL));
		return -1;
	}
	if (tgid > 0 && tgid != pid) {
		ig_info("pid %d is a thread of process %d: tracing the process", pid, tgid);
		return tgid;
	}
	return pid;
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

static void sample_nvml(struct session *s, __u64 ts)
{
	unsigned int d, util, mem;

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
	__u64 now = now_ns(CLOCK_MONOTONIC), ms = 50;
	size_t i;

	for (i = 0; i < s->nwatch; i++) {
		__u64 due = s->watch[i].due;

		if (due <= now)
			return 0;
		if ((due - now) / 1000000 + 1 < ms)
			ms = (due - now) / 1000000 + 1;
	}
	return (int)ms;
}

static enum ig_stop_reason trace_loop(struct session *s, __u64 t0)
{
	__u64 deadline = s->o->duration_s > 0 ?
			 t0 + (__u64)(s->o->duration_s * 1e9) : 0;
	__u64 next_prune = t0 + PRUNE_EVERY_NS, next_nvml = t0;
	__u64 now, flushed = 0;
	int n;

	for (;;) {
		n = ig_tracer_poll(s->tracer, poll_timeout_ms(s));
		if (n < 0) {
			ig_err("reading the ring buffer: %s", strerror(-n));
			return IG_STOP_ERROR;
		}
		now = now_ns(CLOCK_MONOTONIC);
		/* a killed tracer loses at most the last poll's records */
		if (s->writer && s->nrecords != flushed) {
			ig_rec_writer_flush(s->writer);
			flushed = s->nrecords;
		}
		if (s->nvml && now >= next_nvml) {
			sample_nvml(s, now);
			next_nvml = now + NVML_EVERY_NS;
		}
		if (s->nwatch)
			rescan(s, now);
		if (stop_signal)
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
			if (ig_tracer_prune(s->tracer) == 0)
				return IG_STOP_TARGET_EXIT;
		}
		if (s->oom) {
			ig_err("out of memory");
			return IG_STOP_ERROR;
		}
	}
}

static void finish_stream(struct session *s, enum ig_stop_reason why)
{
	struct ig_stats st = {
		.h = { .type = IG_REC_STATS, .size = sizeof(st) },
	};
	struct ig_end end = {
		.h = { .type = IG_REC_END, .size = sizeof(end) },
		.reason = why,
	};

	/* what the kernel still holds */
	while (ig_tracer_poll(s->tracer, 0) > 0)
		;
	st.h.ts = end.h.ts = now_ns(CLOCK_MONOTONIC);
	if (ig_tracer_stats(s->tracer, &st))
		ig_warn("cannot read the kernel counters");
	st.user_lost = ig_reorder_late(s->reorder);
	emit(s, &st.h);
	end.nrecords = s->nrecords;
	emit(s, &end.h);
	ig_reorder_flush(s->reorder);
	ig_engine_finish(s->engine);
}

/* Flushes @f and closes it (stdout is only flushed): 1 and one line when
 * what was written did not all get there; @werr is the errno of a write
 * that failed before, when known. */
static int close_output(FILE *f, const char *what, int werr)
{
	int err = 0;

	if (fflush(f))
		err = errno;
	else if (ferror(f))
		err = werr > 0 ? werr : EIO;
	if (f != stdout && fclose(f) && !err)
		err = errno;
	if (!err)
		return 0;
	ig_err("cannot write %s: %s", what, strerror(err));
	return 1;
}

static int write_reports(struct session *s, const struct ig_output_opts *out)
{
	bool json_stdout = out->json_path && !strcmp(out->json_path, "-");
	int rc = 0, err;
	FILE *f = s->json;

	if (!out->quiet && !json_stdout) {
		err = ig_engine_report_text(s->engine, stdout);
		if (err && !ferror(stdout)) {
			ig_err("cannot make the report: %s", strerror(-err));
			rc = 1;
		}
		rc |= close_output(stdout, "the report to standard output", -err);
	}
	if (f) {
		s->json = NULL;
		err = ig_engine_report_json(s->engine, f);
		if (err && !ferror(f)) {
			ig_err("cannot make the JSON report: %s", strerror(-err));
			rc = 1;
		}
		rc |= close_output(f, json_stdout ? "the JSON report to standard output" :
				   out->json_path, -err);
	}
	return rc;
}

/* Up front, as the recording: a bad --json path fails before the run. */
static int open_json(struct session *s, const char *path)
{
	int fd;

	if (!strcmp(path, "-")) {
		s->json = stdout;
		return 0;
	}
	fd = ig_outfile_open(path);
	if (fd < 0) {
		ig_err("cannot write %s: %s", path, ig_outfile_strerror(fd));
		return 1;
	}
	s->json = fdopen(fd, "w");
	if (!s->json) {
		ig_err("cannot write %s: %s", path, strerror(errno));
		close(fd);
		return 1;
	}
	return 0;
}

static int setup_outputs(struct session *s, const struct ig_output_opts *out,
			 const char *record_path)
{
	s->engine = ig_engine_new(&out->engine);
	if (!s->engine) {
		ig_err("cannot start the analysis: %s", strerror(errno));
		return 1;
	}
	s->reorder = out->dump ? ig_reorder_new(REORDER_WINDOW_NS, to_dump, stdout) :
		     ig_reorder_new(REORDER_WINDOW_NS, to_engine, s->engine);
	if (!s->reorder) {
		ig_err("out of memory");
		return 1;
	}
	if (record_path) {
		s->writer = ig_rec_writer_open(record_path);
		if (!s->writer) {
			ig_err("cannot write recording %s: %s", record_path,
			       ig_outfile_strerror(-errno));
			return 1;
		}
	}
	if (out->json_path && !out->dump && open_json(s, out->json_path))
		return 1;
	return 0;
}

static void teardown(struct session *s)
{
	if (s->json && s->json != stdout)
		fclose(s->json);
	ig_tracer_close(s->tracer);
	ig_reorder_free(s->reorder);
	ig_engine_free(s->engine);
	ig_nvml_close(s->nvml);
	ig_sym_free(s->sym);
	free(s->att);
	free(s->pychecked);
	free(s->watch);
	free(s->lds);
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static int start_tracing(struct session *s, __u64 *t0)
{
	const struct ig_session_opts *o = s->o;
	struct ig_tracer_opts to = {
		.sz = sizeof(to),
		.min_offcpu_ns = o->min_offcpu_ns,
		.ringbuf_mb = o->ringbuf_mb,
	};
	struct track_ctx c = { .s = s, .named = true };
	int err, i;

	s->tracer = ig_tracer_open(&to, on_kernel_record, s);
	if (!s->tracer)
		return 1;
	err = ig_tracer_attach_host(s->tracer);
	if (err)
		return 1;
	if (o->sample_hz) {
		err = ig_tracer_attach_sampling(s->tracer, o->sample_hz);
		if (err)
			ig_warn("no CPU-clock sampling (%s): time inside launches counts as host compute",
				strerror(-err));
	}
	*t0 = c.ts = now_ns(CLOCK_MONOTONIC);
	emit_meta(s, c.ts, o->self_argc, o->self_argv);
	/* this machine's own loader: what a launched command uses */
	hook_loaders(s, getpid());
	if (o->argv) {
		char lib[PATH_MAX];

		if (track_one(s->child, &c))
			return 1;
		if (!o->libcuda_path &&
		    !ig_cuda_find_for_exec(environ, lib, sizeof(lib)) &&
		    attach_libcuda_path(s, lib, s->child, c.ts))
			return 1;
		/* until it maps libcuda, which names the driver's code */
		watch_set(s, s->child, c.ts + RESCAN_SOON_NS);
		return 0;
	}
	for (i = 0; i < o->npids; i++) {
		c.named = true;
		if (track_one(o->pids[i], &c))
			return 1;
		c.named = false;
		ig_proc_for_each_descendant(o->pids[i], track_one, &c);
	}
	return c.err ? 1 : 0;
}

/* Who runs the command, and whether idlegap holds what tracing needs:
 * one line naming what is missing. */
static int check_privileges(struct session *s)
{
	const struct ig_session_opts *o = s->o;
	struct ig_privs_target t = { .pids = o->pids, .npids = o->npids };
	char why[256];

	if (o->argv && ig_run_as_resolve(o->run_user, o->as_root, &s->run_as,
					  why, sizeof(why))) {
		ig_err("%s", why);
		return 1;
	}
	t.switch_user = s->run_as.switch_user;
	if (ig_privs_check(&t, why, sizeof(why))) {
		ig_err("%s (see CAPABILITIES in idlegap(8))", why);
		return 1;
	}
	return 0;
}

/* The probes are attached: keep only what the rest of the session needs
 * (privs.h says what and why).  Before NVML may start threads: capability
 * sets are per thread. */
static void drop_privileges(const struct session *s)
{
	/* the recording is open already; the JSON report is opened at the end */
	bool files = s->o->out.json_path && strcmp(s->o->out.json_path, "-");
	uint64_t keep = ig_privs_after_attach(files);
	int err = ig_caps_limit(keep);
	char names[256];

	ig_caps_names(keep, names, sizeof(names));
	if (err)
		ig_warn("cannot give up capabilities: %s", strerror(-err));
	else
		ig_debug("capabilities kept after attach: %s (probing processes that load libcuda later%s)",
			 keep ? names : "none", files ? "; the --json file, not yet written" : "");
}

int ig_session_trace(const struct ig_session_opts *o)
{
	struct session s = { .o = o, .child = -1 };
	struct ig_child child = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	pid_t *pids = NULL;
	int rc = 1, i, werr;
	enum ig_stop_reason why;
	const char *why_nvml = NULL;
	__u64 t_start = now_ns(CLOCK_MONOTONIC), t0 = 0;
	struct ig_session_opts local = *o;

	if (check_privileges(&s))
		return 1;
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		ig_err("this kernel has no BTF (/sys/kernel/btf/vmlinux): idlegap needs CONFIG_DEBUG_INFO_BTF=y");
		return 1;
	}
	if (o->npids) {
		pids = calloc(o->npids, sizeof(*pids));
		if (!pids)
			return 1;
		for (i = 0; i < o->npids; i++)
			if ((pids[i] = check_target(o->pids[i])) < 0)
				goto out;
		local.pids = pids;
	}
	s.o = &local;
	if (o->libcuda_path && access(o->libcuda_path, R_OK)) {
		ig_err("--libcuda %s: %s", o->libcuda_path, strerror(errno));
		goto out;
	}
	if (setup_outputs(&s, &o->out, o->record_path))
		goto out;
	install_signals();
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
	drop_privileges(&s);
	if (!o->no_nvml) {
		s.nvml = ig_nvml_open(&why_nvml);
		if (!s.nvml)
			ig_debug("%s", why_nvml);
	}
	if (o->argv && start_child(&s, &child))
		goto out;
	ig_info("tracing %s (probes attached in %.0f ms)%s",
		o->argv ? o->argv[0] : "the target processes",
		(t0 - t_start) / 1e6, o->duration_s > 0 ? "" : "; Ctrl-C to stop");
	why = trace_loop(&s, t0);
	finish_stream(&s, why);
	werr = ig_rec_writer_close(s.writer);
	s.writer = NULL;
	rc = write_reports(&s, &o->out);
	if (werr) {
		ig_err("recording %s is incomplete: %s", o->record_path, strerror(-werr));
		rc = 1;
	}
	if (why == IG_STOP_ERROR)
		rc = 1;
	if (s.nunprobed) {
		ig_err("%u process%s used a libcuda idlegap could not probe (see the warnings above): the report misses their GPU work",
		       s.nunprobed, s.nunprobed == 1 ? "" : "es");
		rc = 1;
	}
	if (s.child > 0 && !s.child_reaped)
		ig_info("stopped tracing; %s (pid %d) keeps running", o->argv[0], s.child);
	else if (s.child > 0 && WIFEXITED(s.child_status) && WEXITSTATUS(s.child_status))
		ig_info("%s exited with status %d", o->argv[0], WEXITSTATUS(s.child_status));
	else if (s.child > 0 && WIFSIGNALED(s.child_status))
		ig_info("%s was killed by signal %d", o->argv[0], WTERMSIG(s.child_status));
out:
	if (child.go_fd >= 0)
		close(child.go_fd);	/* the paused child sees EOF and exits */
	if (child.err_fd >= 0)
		close(child.err_fd);
	if (s.child > 0 && !s.child_reaped && rc && !t0)
		waitpid(s.child, NULL, 0);
	if (s.writer)
		ig_rec_writer_close(s.writer);
	teardown(&s);
	free(pids);
	return rc;
}

struct replay {
	struct ig_reorder *reorder;
	bool oom;
};

static int replay_cb(const struct ig_hdr *rec, void *ctx)
{
	struct replay *r = ctx;

	if (ig_reorder_push(r->reorder, rec)) {
		r->oom = true;
		return -ENOMEM;
	}
	return 0;
}

int ig_session_report(const char *path, bool partial,
		      const struct ig_output_opts *out)
{
	struct session s = {};
	struct ig_read_result res;
	struct replay r;
	int err, rc = 1;

	if (setup_outputs(&s, out, NULL))
		goto out;
	r.reorder = s.reorder;
	r.oom = false;
	err = ig_recording_read(path, partial, replay_cb, &r, &res);
	if (err) {
		ig_err("%s%s", res.error, partial || r.oom || !res.records ? "" :
		       err == -EBADMSG ? "; --partial leaves the corrupt part out" :
		       "; --partial analyses what is there");
		goto out;
	}
	if (res.skipped_blocks)
		ig_warn("%s: left out %zu corrupt block%s (%zu bytes)", path,
			res.skipped_blocks, res.skipped_blocks == 1 ? "" : "s",
			res.skipped_bytes);
	if (!res.complete)
		ig_warn("%s; analysing the %zu records before it", res.error, res.records);
	ig_reorder_flush(s.reorder);
	if (out->dump) {
		rc = close_output(stdout, "the records to standard output", 0);
		goto out;
	}
	ig_engine_finish(s.engine);
	rc = write_reports(&s, out);
out:
	teardown(&s);
	return rc;
}
