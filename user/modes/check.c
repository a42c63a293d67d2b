// SPDX-License-Identifier: GPL-2.0
/* `idlegap check`: can this machine (and this process) be traced, in
 * plain words.  Exit 0 when tracing will work, 1 when it will not. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "modes/check.h"
#include "probes/cuda_attach.h"
#include "stream/cuda_api.h"
#include "probes/log.h"
#include "host/nvml.h"
#include "probes/privs.h"
#include "host/procfs.h"
#include "probes/pyframes.h"
#include "probes/pyrt.h"
#include "probes/tracer.h"

static int nfail;

static void line(bool ok, bool essential, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void line(bool ok, bool essential, const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("  %-4s %-28s ", ok ? "ok" : essential ? "FAIL" : "--", what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!ok && essential)
		nfail++;
}

static bool tracefs_mounted(void)
{
	return access("/sys/kernel/tracing/events", F_OK) == 0 ||
	       access("/sys/kernel/debug/tracing/events", F_OK) == 0;
}

static size_t nmissing(void)
{
	size_t i, n = 0;

	for (i = 0; i < ig_nkfeatures; i++)
		n += !ig_probe_kfeature(i);
	return n;
}

/* Kernel features, each probed by loading a program: that needs the
 * privileges, so without them they are not checked at all (a refusal for
 * want of privileges says nothing about the kernel). */
static void check_features(bool btf)
{
	bool multi = ig_probe_uprobe_multi(), use = ig_tracer_use_uprobe_multi(), compat;
	size_t i, nbtf = 0, n = ig_nhooks;

	/* the same (cached) probes pick run's flavours */
	for (i = 0; i < ig_nhooks; i++)
		nbtf += ig_probe_tp_btf(ig_hooks[i]);
	if (btf)
		line(nbtf == n, false, "BTF tracepoints (tp_btf)", "%zu of %zu hooks%s", nbtf, n,
		     nbtf == n ? "" : ": raw_tp used for the others");
	line(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL) > 0,
	     nbtf < n, "raw tracepoints", "%s", nbtf == n ? "the fallback (not needed here)" :
	     "used for the hooks without tp_btf");
	line(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_KPROBE, NULL) > 0 &&
	     access("/sys/bus/event_source/devices/uprobe/type", R_OK) == 0,
	     false, "uprobes", "libcuda entry points (kprobes themselves are not used)");
	line(use, false, "multi-uprobe links", "%s", use ?
	     "one link per library: fast attach and detach" : multi && ig_tracer_use_compat() ?
	     "not with the compat object: one link per entry point" : multi ?
	     "off (IDLEGAP_NO_UPROBE_MULTI): one link per entry point" :
	     "not in this kernel (Linux 6.6 brings them): one link per entry point (slower to attach and detach)");
	line(libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) > 0, false,
	     "ring buffer", "event transport");
	for (i = 0; i < ig_nkfeatures; i++) {
		const struct ig_kfeature *f = &ig_kfeatures[i];
		bool have = ig_probe_kfeature(i);

		line(have, false, f->name, "%s%s%s", have ? f->with : "not in this kernel (Linux ",
		     have ? "" : f->since, have ? "" : " brings it)");
		if (!have)
			printf("       %-28s without it: %s\n", "", f->without);
	}
	compat = ig_tracer_use_compat();
	printf("  %-4s %-28s %s\n", "", "BPF object", !compat ? "main (every feature above)" :
	       getenv("IDLEGAP_COMPAT") && !nmissing() ? "compat (forced by IDLEGAP_COMPAT)" :
	       "compat: the features marked -- above are lost or done another way");
}

/* Returns whether the kernel has BTF: without it nothing loads. */
static bool check_kernel(bool priv)
{
	struct utsname u;
	bool btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	size_t i;

	uname(&u);
	printf("kernel %s\n", u.release);
	line(btf, true, "BTF", "%s", btf ? "/sys/kernel/btf/vmlinux" :
	     "kernel lacks BTF (no /sys/kernel/btf/vmlinux): boot a kernel built with CONFIG_DEBUG_INFO_BTF=y");
	line(true, false, "tracefs", "%s", tracefs_mounted() ?
	     "mounted (not needed)" : "not mounted (not needed: hooks attach without it)");
	for (i = 0; btf && i < ig_nhooks; i++) {
		bool ok = ig_probe_raw_tp_exists(ig_hooks[i]);

		if (!ok && ig_tracer_hook_optional(i))
			line(false, false, ig_hooks[i], "%s",
			     "absent (x86 has it alone): page-fault waits are not told from other waits");
		else
			line(ok, true, ig_hooks[i], "%s", ok ? "present" : "missing");
	}
	if (priv)
		check_features(btf);
	else
		line(false, false, "kernel features", "not checked: probing them loads BPF programs, which needs privileges");
	return btf;
}

static void on_record(const struct ig_hdr *rec, void *ctx)
{
	(void)rec;
	(void)ctx;
}

static const char *fix(int err)
{
	const char *h = ig_tracer_attach_hint(err);

	return h ? h : "";
}

/* The real thing, as `run` does it: every program loads, the host hooks
 * attach, CPU-clock sampling starts.  The tracer stays open for the
 * uprobe attach checks. */
static struct ig_tracer *check_load(void)
{
	struct ig_tracer_opts o = { .sz = sizeof(o) };
	struct ig_tracer *t;
	char why[512];
	int err;

	t = ig_tracer_open(&o, on_record, NULL, why, sizeof(why));
	if (!t) {
		line(false, true, "BPF programs load", "%s", why);
		return NULL;
	}
	err = ig_tracer_attach_host(t, why, sizeof(why));
	if (err)
		ig_err("%s", why);
	line(!err, true, "BPF programs load+attach", "%s%s%s",
	     err ? strerror(-err) : ig_tracer_uses_btf(t) ? "all (tp_btf flavour)" :
	     "all (tp_btf where the kernel has it, else raw_tp)",
	     err && ig_tracer_attach_hint(err) ? ": " : "", err ? fix(err) : "");
	if (err) {
		ig_tracer_close(t);
		return NULL;
	}
	err = ig_tracer_attach_sampling(t, 997);
	line(!err, false, "CPU-clock sampling", "%s", err ? strerror(-err) :
	     "time inside launches is told apart from host compute");
	return t;
}

struct ld_ctx {
	char path[PATH_MAX];
};

static int find_ld(const struct ig_map_entry *m, void *ctx)
{
	struct ld_ctx *c = ctx;
	const char *base = strrchr(m->path, '/');

	if (!base || strncmp(base + 1, "ld-linux", 8) || m->offset)
		return 0;
	snprintf(c->path, sizeof(c->path), "%s", m->path);	/* our own mounts */
	return 1;
}

/* uprobes by file and offset, as `run` hooks the loader of what it starts. */
static void check_uprobes(struct ig_tracer *t)
{
	struct ld_ctx c = { "" };
	int err;

	ig_proc_for_each_map(getpid(), find_ld, &c);
	if (!c.path[0]) {
		line(false, false, "uprobes attach", "no dynamic loader mapped here to try them on");
		return;
	}
	err = ig_tracer_attach_ld(t, c.path);
	line(!err, true, "uprobes attach", "%s%s%s%s", err ? strerror(-err) : c.path,
	     err ? "" : ig_tracer_uses_multi(t) ? " (multi-uprobe link)" : " (perf-event links)",
	     err && ig_tracer_attach_hint(err) ? ": " : "", err ? fix(err) : "");
}

struct sym_ctx {
	unsigned int n, byclass[32];
	bool have[IG_API__MAX];
};

static void sym_cb(unsigned int api, const char *name, size_t off, void *ctx)
{
	struct sym_ctx *c = ctx;

	(void)name;
	(void)off;
	c->n++;
	c->have[api] = true;
	c->byclass[ig_api_class_of(api) & 31]++;
}

/* @path as idlegap opens it, @name as the process names it. */
static void check_libcuda(struct ig_tracer *t, const char *path, const char *name,
			  const char *where)
{
	struct ig_libcuda_info info;
	struct ig_cuda_lib lib;
	struct sym_ctx c = {};
	char version[32], missing[1024] = "";
	size_t off = 0;
	unsigned int api;
	int err;

	err = ig_cuda_scan(path, sym_cb, &c);
	ig_cuda_version(name, version, sizeof(version));
	printf("libcuda %s (%s), driver version %s\n", name, where,
	       version[0] ? version : "unknown");
	if (err) {
		line(false, true, "entry points", "cannot read %s: %s", path, strerror(-err));
		return;
	}
	line(c.n > 0, true, "entry points", "%u of the %u idlegap probes", c.n,
	     IG_API__MAX - 1);
	line(c.byclass[IG_AC_LAUNCH_STACK9] + c.byclass[IG_AC_LAUNCH_EX] > 0, false,
	     "launch probes", "%u", c.byclass[IG_AC_LAUNCH_STACK9] + c.byclass[IG_AC_LAUNCH_EX]);
	line(c.byclass[IG_AC_STREAM_SYNC] + c.byclass[IG_AC_CTX_SYNC] > 0, false,
	     "sync probes", "%u (drained evidence)",
	     c.byclass[IG_AC_STREAM_SYNC] + c.byclass[IG_AC_CTX_SYNC] +
	     c.byclass[IG_AC_EVENT_SYNC]);
	for (api = 1; api < IG_API__MAX; api++)
		if (!c.have[api] && off < sizeof(missing) - 64)
			off += snprintf(missing + off, sizeof(missing) - off, "%s%s",
					off ? " " : "", ig_api_name(api));
	if (off)
		printf("       skipped (not in this driver): %s\n", missing);
	if (!t || !c.n)
		return;
	snprintf(lib.name, sizeof(lib.name), "%s", name);
	snprintf(lib.path, sizeof(lib.path), "%s", path);
	err = ig_cuda_attach(t, &lib, getpid(), IG_CUDA_ALL, &info);
	if (!err && info.nattached)
		line(true, true, "probes attach", "%u of %u entry points", info.nattached,
		     info.nsyms);
	else
		line(false, true, "probes attach", "%s%s%s", err ? strerror(-err) : "none attached",
		     err && ig_tracer_attach_hint(err) ? ": " : "", err ? fix(err) : "");
}

/* Which build the interpreter is, as it says itself (3.13+: its
 * _Py_DebugOffsets), and whether its frames are read. */
static void check_pybuild(pid_t pid, const struct ig_pyrt_info *py)
{
	struct ig_py_offsets o;
	struct ig_py_codelayout l;
	struct ig_pybuild b;
	char v[32];
	int err = ig_pylayout_find(ig_pylayout_read_mem, &pid, py, &o, &l, &b);
	unsigned int rel = b.hexversion >> 4 & 0xf;

	snprintf(v, sizeof(v), "%u.%u", b.hexversion >> 24, b.hexversion >> 16 & 0xff);
	if (b.published)
		snprintf(v + strlen(v), sizeof(v) - strlen(v), ".%u%s", b.hexversion >> 8 & 0xff,
			 rel == 0xa ? "a" : rel == 0xb ? "b" : rel == 0xc ? "rc" : "");
	if (b.published && rel != 0xf)
		snprintf(v + strlen(v), sizeof(v) - strlen(v), "%u", b.hexversion & 0xf);
	line(!err, false, "Python build", "%s%s, %s%s%s", v,
	     !b.free_threaded ? " with the GIL (its waits are gil)" :
	     b.gil_on == 0 ? " free-threaded, its GIL off (lock waits are lock, not gil)" :
	     b.gil_on == 1 ? " free-threaded, its GIL turned on (an extension without free-threading, or PYTHON_GIL=1)" :
	     " free-threaded",
	     err ? "no Python frames: " : b.published ? "frames read by its published debug offsets" :
	     "frames read by the layout of its version",
	     err == -ENOTSUP ? b.why : err ? strerror(-err) : "", "");
}

static void check_target(struct ig_tracer *t, pid_t pid, const char *libcuda)
{
	char comm[64] = "";
	struct ig_cuda_lib lib;
	struct ig_pyrt_info py;
	bool kthread = false;
	int err;

	if (ig_proc_ppid(pid, &kthread) < 0) {
		line(false, true, "process", "no such process: %d", pid);
		return;
	}
	ig_proc_comm(pid, comm, sizeof(comm));
	printf("process %d (%s)\n", pid, comm);
	if (kthread) {
		line(false, true, "user process", "a kernel thread cannot be traced");
		return;
	}
	if (ig_proc_exited(pid)) {
		line(false, true, "process", "exited: a zombie its parent (pid %d) has not reaped",
		     ig_proc_ppid(pid, NULL));
		return;
	}
	err = libcuda ? 0 : ig_cuda_find_in_maps(pid, &lib);
	if (libcuda)
		check_libcuda(t, libcuda, libcuda, "--libcuda");
	else if (!err)
		check_libcuda(t, lib.path, lib.name, "mapped by the process");
	else if (lib.name[0])
		line(false, true, "libcuda", "%s is mapped but cannot be reached: %s%s", lib.name,
		     strerror(-err), err == -EACCES ? " (needs CAP_SYS_PTRACE)" : "");
	else
		line(false, false, "libcuda", "not mapped: the process has not loaded the CUDA driver (yet)");
	err = ig_pyrt_find(pid, &py);
	if (!err) {
		line(true, false, "CPython", "_PyRuntime at %#llx-%#llx in %s",
		     (unsigned long long)py.start, (unsigned long long)py.end, py.path);
		check_pybuild(pid, &py);
	} else
		line(false, false, "CPython", "%s", err == -ENOENT ? "not a Python process" :
		     strerror(-err));
}

/* Which of NVML's counters answer on each GPU (docs/design.md §4.10,
 * "Device counters"): none is required. */
static void check_counters(struct ig_nvml *n)
{
	static const struct { unsigned int bit; const char *what; } c[] = {
		{ IG_NVML_HAVE_SAMPLES, "utilization samples (nvmlDeviceGetSamples): estimates" },
		{ IG_NVML_HAVE_GPM, "GPM graphics utilization (nvmlGpmMetricsGet): estimates" },
		{ IG_NVML_HAVE_PROCUTIL, "per-process utilization (nvmlDeviceGetProcessUtilization)" },
		{ IG_NVML_HAVE_RATES, "utilization rates (nvmlDeviceGetUtilizationRates): dashboard" },
		{ IG_NVML_HAVE_PROCS, "the GPU's processes (nvmlDeviceGetComputeRunningProcesses)" },
	};
	unsigned int d, i, have;

	for (d = 0; n && d < ig_nvml_ndevices(n); d++) {
		have = ig_nvml_counters(n, d);
		for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
			printf("NVML GPU %u: %s: %s\n", d, c[i].what,
			       have & c[i].bit ? "works" : "not supported");
	}
}

int ig_check(pid_t pid, const char *libcuda)
{
	extern char **environ;
	const char *why = NULL;
	struct ig_tracer *t = NULL;
	struct ig_nvml *n;
	char lib[PATH_MAX], missing[256];
	struct ig_privs_target pt = { .pids = &pid, .npids = pid > 0 };
	bool priv = ig_privs_check(&pt, missing, sizeof(missing)) == 0, btf;

	nfail = 0;
	printf("idlegap check\n");
	line(priv, true, "privileges", "%s", priv ? "may load BPF programs" : missing);
	btf = check_kernel(priv);
	if (priv && !btf)
		line(false, false, "BPF programs load", "not tried: they need the kernel's BTF (see above)");
	else if (priv && (t = check_load()))
		check_uprobes(t);
	if (pid > 0)
		check_target(t, pid, libcuda);
	else if (libcuda)
		check_libcuda(t, libcuda, libcuda, "--libcuda");
	else if (!ig_cuda_find_for_exec(environ, lib, sizeof(lib)))
		check_libcuda(t, lib, lib, "what `idlegap run` would load");
	else
		printf("libcuda: not found on the loader path (use --libcuda PATH, or -p PID of a GPU process)\n");
	n = ig_nvml_open(&why);
	if (!n)
		printf("device counters: %s\n", why);
	check_counters(n);
	ig_nvml_close(n);
	ig_tracer_close(t);
	printf("%s\n", nfail ? "NOT READY: see the FAIL lines above" : "ready");
	return nfail ? 1 : 0;
}
