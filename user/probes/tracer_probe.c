// SPDX-License-Identifier: GPL-2.0
/* What the kernel takes, probed once per process: `check` reports the
 * answers that `run` acts on. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "idlegap.skel.h"
#include "host/elfsym.h"
#include "probes/log.h"
#include "host/procfs.h"
#include "probes/tracer_int.h"

static int find_loader(const struct ig_map_entry *m, void *ctx)
{
	const char *base = strrchr(m->path, '/');

	if (!base || strncmp(base + 1, "ld-linux", 8) || m->offset)
		return 0;
	snprintf(ctx, PATH_MAX, "%s", m->path);
	return 1;
}

/* The probe's link: dropping a uprobe waits for the kernel's grace
 * periods (44 ms on the project's VM, against 13 ms to make it), which
 * need not come before the probes are attached. */
static int probe_link = -1;

/*
 * Multi-uprobe links came in 6.6, but 6.1 loads a program with their attach
 * type without checking it and refuses only the link: so the probe creates
 * a real link, on this process's own loader (the program does nothing),
 * kept until ig_probe_drop_link().
 */
static bool probe_uprobe_multi(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = IG_BPF_TRACE_UPROBE_MULTI);
	struct ig_uprobe_multi_attr a = { .attach_type = IG_BPF_TRACE_UPROBE_MULTI, .cnt = 1 };
	char ld[PATH_MAX] = "";
	struct ig_elf_sym sym;
	unsigned long off;
	int fd, lfd;

	ig_debug("probing multi-uprobe links");
	ig_proc_for_each_map(getpid(), find_loader, ld);
	if (!ld[0] || ig_elf_find_sym(ld, "_dl_debug_state", &sym)) {
		ig_debug("multi-uprobe links: no loader here to try them on");
		return false;
	}
	fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "ig_probe", "GPL", insns, 2, &o);
	if (fd < 0)
		return false;
	off = sym.file_off;
	a.prog_fd = fd;
	a.path = (__u64)(unsigned long)ld;
	a.offsets = (__u64)(unsigned long)&off;
	a.pid = getpid();
	lfd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	if (lfd < 0)
		ig_debug("multi-uprobe link on %s: %s", ld, strerror(errno));
	else
		probe_link = lfd;
	close(fd);	/* the link holds the program */
	return lfd >= 0;
}

void ig_probe_drop_link(void)
{
	if (probe_link >= 0)
		close(probe_link);
	probe_link = -1;
}

bool ig_probe_uprobe_multi(void)
{
	static int have = -1;

	if (have < 0)
		have = probe_uprobe_multi();
	return have;
}

bool ig_tracer_use_uprobe_multi(void)
{
	return !getenv("IDLEGAP_NO_UPROBE_MULTI") && !ig_tracer_use_compat() &&
	       ig_probe_uprobe_multi();
}

const struct ig_kfeature ig_kfeatures[] = {
	{ "bpf_get_current_task_btf", "5.11", "typed task pointer",
	  "the task read through probe reads (compat object)",
	  BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_current_task_btf },
	{ "bpf_for_each_map_elem", "5.13", "context-wide syncs prove every stream drained",
	  "a context-wide sync or synchronous copy proves no stream drained (compat object)",
	  BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_for_each_map_elem },
	{ "attach cookies", "5.15", "one program for all entry points",
	  "one program per CUDA entry point (compat object)",
	  BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie },
	{ "bpf_task_pt_regs", "5.15", "user registers of a blocked thread",
	  "user registers read from the top of the kernel stack (compat object)",
	  BPF_PROG_TYPE_KPROBE, BPF_FUNC_task_pt_regs },
	{ "bpf_loop", "5.17", "file paths walked in the kernel",
	  "file paths walked by a bounded loop (compat object)",
	  BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_loop },
	{ "bpf_find_vma", "5.17", "names the file behind a page fault; leaf scan of user stacks",
	  "page faults not named by file; user stacks by frame pointers alone (compat object)",
	  BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_find_vma },
};
const size_t ig_nkfeatures = sizeof(ig_kfeatures) / sizeof(ig_kfeatures[0]);

bool ig_probe_kfeature(size_t i)
{
	static signed char known[sizeof(ig_kfeatures) / sizeof(ig_kfeatures[0])];

	if (i >= ig_nkfeatures)
		return false;
	if (!known[i]) {
		ig_debug("probing %s", ig_kfeatures[i].name);
		known[i] = libbpf_probe_bpf_helper(ig_kfeatures[i].prog_type,
						   ig_kfeatures[i].helper, NULL) > 0 ? 1 : -1;
	}
	return known[i] > 0;
}

bool ig_tracer_use_compat(void)
{
	const char *e = getenv("IDLEGAP_COMPAT");
	size_t i;

	if (e && *e && strcmp(e, "0"))
		return true;
	for (i = 0; i < ig_nkfeatures; i++)
		if (!ig_probe_kfeature(i))
			return true;
	return false;
}

static struct btf *btf;		/* the kernel's, parsed: tens of MiB */
static bool tried;

static struct btf *vmlinux_btf(void)
{
	if (!tried) {
		tried = true;
		btf = btf__load_vmlinux_btf();
		if (!btf)
			ig_debug("no kernel BTF: %s", strerror(errno));
	}
	return btf;
}

/* Frees the kernel's BTF once the programs are loaded: a tracer left
 * running for days keeps none of it.  A later probe parses it again. */
void ig_probe_release_btf(void)
{
	btf__free(btf);
	btf = NULL;
	tried = false;
}

static int tp_btf_id(const char *tp)
{
	struct btf *btf = vmlinux_btf();
	char name[128];

	if (!btf)
		return -ENOENT;
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
}

bool ig_probe_raw_tp_exists(const char *tp)
{
	return tp_btf_id(tp) > 0;
}

int ig_probe_tp_nargs(const char *tp)
{
	const struct btf_type *t;
	int id = tp_btf_id(tp);

	if (id <= 0)
		return id ? id : -ENOENT;
	/* typedef -> pointer -> the probe's prototype, its context first */
	t = btf__type_by_id(btf, id);
	t = t ? btf__type_by_id(btf, t->type) : NULL;
	t = t && btf_is_ptr(t) ? btf__type_by_id(btf, t->type) : NULL;
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) < 1)
		return -EINVAL;
	return btf_vlen(t) - 1;
}

/* Loads "return 0" as a BTF-typed tracepoint program: the only reliable
 * way to know the kernel takes them (some kernels lack the tracing
 * program type that fentry needs yet accept tp_btf, others neither). */
static bool probe_tp_btf(const char *tp)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = BPF_TRACE_RAW_TP);
	int id = tp_btf_id(tp), fd;

	if (id <= 0)
		return false;
	ig_debug("probing tp_btf %s", tp);
	o.attach_btf_id = id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "ig_probe", "GPL", insns, 2, &o);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * The kernel hooks, in attach order: forks first, so that a thread or
 * child created while the initial set is enumerated is caught by the
 * tracepoint.  Those with a BTF flavour load as tp_btf where the kernel
 * takes it, else as raw_tp; none needs tracefs.
 */
const char *const ig_hooks[] = {
	"sched_process_fork", "sched_process_exit", "sched_process_exec",
	"sched_switch", "sched_waking", "page_fault_user",
	"block_rq_insert", "block_rq_issue", "block_rq_complete",
};
const size_t ig_nhooks = sizeof(ig_hooks) / sizeof(ig_hooks[0]);
_Static_assert(sizeof(ig_hooks) / sizeof(ig_hooks[0]) == IG_NHOOKS,
	       "tracer.c pairs programs with each hook");

bool ig_tracer_hook_optional(size_t i)
{
	return i < ig_nhooks && !strcmp(ig_hooks[i], "page_fault_user");
}

/* Probed once per hook and process: `check` reports the flavours that
 * `run` loads. */
bool ig_probe_tp_btf(const char *tp)
{
	static signed char known[sizeof(ig_hooks) / sizeof(ig_hooks[0])];
	size_t i;

	for (i = 0; i < ig_nhooks && strcmp(ig_hooks[i], tp); i++)
		;
	if (i == ig_nhooks)
		return probe_tp_btf(tp);
	if (!known[i])
		known[i] = probe_tp_btf(tp) ? 1 : -1;
	return known[i] > 0;
}

/* What to do about a hook that does not attach, in words. */
const char *ig_tracer_attach_hint(int err)
{
	switch (-err) {
	case EPERM:
	case EACCES:
		return "not permitted: run as root (sudo)";
	case ENOENT:
		return "this kernel lacks the tracepoint";
	case EINVAL:
	case EOPNOTSUPP:
	case 524:	/* the kernel's ENOTSUPP */
		return "this kernel cannot attach BPF programs there";
	default:
		return NULL;
	}
}

bool ig_tracer_needs_tracefs(void)
{
	struct idlegap_bpf *s = idlegap_bpf__open();
	struct bpf_program *p;
	bool tracefs = false;

	if (!s)
		return false;
	bpf_object__for_each_program(p, s->obj)
		tracefs |= bpf_program__autoload(p) &&
			   bpf_program__type(p) == BPF_PROG_TYPE_TRACEPOINT;
	idlegap_bpf__destroy(s);
	return tracefs;
}
