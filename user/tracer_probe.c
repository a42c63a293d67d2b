// SPDX-License-Identifier: GPL-2.0
/* What the kernel takes, probed once per process: `check` reports the
 * answers that `run` acts on. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "idlegap.skel.h"
#include "log.h"
#include "tracer_int.h"

static bool probe_uprobe_multi(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = IG_BPF_TRACE_UPROBE_MULTI);
	unsigned long off = 0;
	struct ig_uprobe_multi_attr a = {
		.attach_type = IG_BPF_TRACE_UPROBE_MULTI,
		.path = (__u64)(unsigned long)"/",
		.offsets = (__u64)(unsigned long)&off,
		.cnt = 1,
	};
	int fd, lfd, err;

	ig_debug("probing multi-uprobe links");
	fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "ig_probe", "GPL", insns, 2, &o);
	if (fd < 0)
		return false;
	/* A kernel before them loads the program all the same (it ignores
	 * the attach type of a kprobe program) but refuses the link with
	 * EINVAL; one with them refuses "/", no regular file, with EBADF. */
	a.prog_fd = (__u32)fd;
	lfd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	err = lfd < 0 ? errno : 0;
	if (lfd >= 0)
		close(lfd);
	close(fd);
	return err == EBADF;
}

bool ig_probe_uprobe_multi(void)
{
	static int have = -1;

	if (have < 0)
		have = probe_uprobe_multi();
	return have;
}

bool ig_use_uprobe_multi(void)
{
	return !getenv("IDLEGAP_NO_UPROBE_MULTI") && ig_probe_uprobe_multi();
}

static struct btf *vmlinux_btf(void)
{
	static struct btf *btf;
	static bool tried;

	if (!tried) {
		tried = true;
		btf = btf__load_vmlinux_btf();
		if (!btf)
			ig_debug("no kernel BTF: %s", strerror(errno));
	}
	return btf;
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
	"block_rq_issue", "block_rq_complete",
};
const size_t ig_nhooks = sizeof(ig_hooks) / sizeof(ig_hooks[0]);
_Static_assert(sizeof(ig_hooks) / sizeof(ig_hooks[0]) == IG_NHOOKS,
	       "tracer.c pairs programs with each hook");

bool ig_hook_optional(size_t i)
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
const char *ig_attach_hint(int err)
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
