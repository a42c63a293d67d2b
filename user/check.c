// SPDX-License-Identifier: GPL-2.0
/* `idlegap check`: can this machine (and this process) be traced, in
 * plain words.  Exit 0 when tracing will work, 1 when it will not. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "check.h"
#include "cuda_attach.h"
#include "cuda_api.h"
#include "log.h"
#include "nvml.h"
#include "procfs.h"
#include "pyrt.h"
#include "session.h"
#include "tracer.h"

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

static void check_kernel(void)
{
	static const char *const tps[] = {
		"sched_switch", "sched_waking", "sched_process_fork",
		"sched_process_exec", "sched_process_exit", "sys_enter",
		"sys_exit", "page_fault_user", "block_rq_issue",
		"block_rq_complete", "irq_handler_entry", "softirq_entry",
		"hrtimer_expire_entry",
	};
	struct utsname u;
	bool btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0, tpbtf;
	size_t i;

	uname(&u);
	printf("kernel %s\n", u.release);
	line(btf, true, "BTF", "%s", btf ? "/sys/kernel/btf/vmlinux" :
	     "missing: the kernel needs CONFIG_DEBUG_INFO_BTF=y");
	tpbtf = ig_probe_tp_btf("sched_switch");
	line(tpbtf, false, "BTF tracepoints (tp_btf)", "%s", tpbtf ?
	     "used for scheduler and block hooks" : "not available: raw_tp used instead");
	line(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL) > 0,
	     true, "raw tracepoints", "syscalls, interrupts%s", tpbtf ? "" : ", scheduler, block");
	line(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACEPOINT, NULL) > 0,
	     true, "tracepoints", "page faults");
	line(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_KPROBE, NULL) > 0 &&
	     access("/sys/bus/event_source/devices/uprobe/type", R_OK) == 0,
	     true, "uprobes", "libcuda entry points (kprobes themselves are not used)");
	line(ig_probe_uprobe_multi(), false, "multi-uprobe links",
	     "%s", ig_probe_uprobe_multi() ? "one link per library: fast attach and detach" :
	     "not available: one link per entry point (slow to detach)");
	line(libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) > 0, true,
	     "ring buffer", "event transport");
	line(libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie,
				     NULL) > 0, true, "attach cookies", "one program for all entry points");
	line(libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_find_vma,
				     NULL) > 0, false, "bpf_find_vma", "names the file behind a page fault");
	for (i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
		bool ok = ig_probe_raw_tp_exists(tps[i]);
		bool essential = strncmp(tps[i], "irq", 3) && strncmp(tps[i], "soft", 4) &&
				 strncmp(tps[i], "hrtimer", 7);

		line(ok, essential, tps[i], "%s", ok ? "present" : "missing");
	}
}

static void on_record(const struct ig_hdr *rec, void *ctx)
{
	(void)rec;
	(void)ctx;
}

/* The real thing: the verifier must accept every program. */
static void check_load(void)
{
	struct ig_tracer_opts o = { .sz = sizeof(o) };
	struct ig_tracer *t;
	int err;

	t = ig_tracer_open(&o, on_record, NULL);
	if (!t) {
		line(false, true, "BPF programs load", "%s", strerror(errno));
		return;
	}
	err = ig_tracer_attach_host(t);
	line(!err, true, "BPF programs load+attach", "%s",
	     err ? strerror(-err) : ig_tracer_uses_btf(t) ? "all (tp_btf flavour)" :
	     "all (raw_tp flavour)");
	ig_tracer_close(t);
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

static void check_libcuda(const char *path, const char *where)
{
	struct sym_ctx c = {};
	char version[32], missing[1024] = "";
	size_t off = 0;
	unsigned int api;
	int err;

	err = ig_cuda_scan(path, sym_cb, &c);
	ig_cuda_version(path, version, sizeof(version));
	printf("libcuda %s (%s), driver version %s\n", path, where,
	       version[0] ? version : "unknown");
	if (err) {
		line(false, false, "entry points", "cannot read: %s", strerror(-err));
		return;
	}
	line(c.n > 0, false, "entry points", "%u of the %u idlegap probes", c.n,
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
}

static void check_target(pid_t pid, const char *libcuda)
{
	char comm[64] = "", lib[PATH_MAX];
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
	if (libcuda)
		check_libcuda(libcuda, "--libcuda");
	else if (!ig_cuda_find_in_maps(pid, lib, sizeof(lib)))
		check_libcuda(lib, "mapped by the process");
	else
		line(false, false, "libcuda", "not mapped: the process has not loaded the CUDA driver (yet)");
	err = ig_pyrt_find(pid, &py);
	if (!err)
		line(true, false, "CPython", "_PyRuntime at %#llx-%#llx in %s (GIL waits recognised)",
		     (unsigned long long)py.start, (unsigned long long)py.end, py.path);
	else
		line(false, false, "CPython", "%s", err == -ENOENT ? "not a Python process" :
		     strerror(-err));
}

int ig_check(pid_t pid, const char *libcuda)
{
	extern char **environ;
	const char *why = NULL;
	struct ig_nvml *n;
	char lib[PATH_MAX];
	bool priv = ig_require_privileges() == 0;

	nfail = 0;
	printf("idlegap check\n");
	line(priv, true, "privileges", "%s", priv ? "may load BPF programs" :
	     "not root: run with sudo");
	check_kernel();
	if (priv)
		check_load();
	if (pid > 0)
		check_target(pid, libcuda);
	else if (libcuda)
		check_libcuda(libcuda, "--libcuda");
	else if (!ig_cuda_find_for_exec(environ, lib, sizeof(lib)))
		check_libcuda(lib, "what `idlegap run` would load");
	else
		printf("libcuda: not found on the loader path (use --libcuda PATH, or -p PID of a GPU process)\n");
	n = ig_nvml_open(&why);
	printf("dashboard utilization: %s\n", n ? "NVML present, sampled during runs" : why);
	ig_nvml_close(n);
	printf("%s\n", nfail ? "NOT READY: see the FAIL lines above" : "ready");
	return nfail ? 1 : 0;
}
