// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "elfsym.h"
#include "cuda_api.h"
#include "idlegap.skel.h"
#include "log.h"
#include "procfs.h"
#include "tracer.h"
#include "util.h"

struct ig_tracer {
	struct idlegap_bpf *skel;
	struct ring_buffer *rb;
	ig_record_fn fn;
	void *ctx;
	bool btf;		/* every hook with a BTF flavour loaded as tp_btf */
	bool multi;		/* uprobes attached through multi-uprobe links */
	struct bpf_link **links;
	size_t nlinks, caplinks;
	int *fds;		/* multi-uprobe link fds */
	size_t nfds, capfds;
};

/*
 * BPF_LINK_CREATE of BPF_TRACE_UPROBE_MULTI (Linux 6.6), as the kernel's
 * union bpf_attr lays it out: the installed UAPI headers predate it.  One
 * such link carries all of a library's probes, and removing it waits for
 * one RCU grace period, where one perf-event link per probe waits for one
 * each (seconds for a driver's hundred entry points).
 */
#define IG_BPF_TRACE_UPROBE_MULTI	48
#define IG_BPF_F_UPROBE_MULTI_RETURN	1

struct ig_uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__aligned_u64 path;
	__aligned_u64 offsets;
	__aligned_u64 ref_ctr_offsets;
	__aligned_u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
	__u32 pad;
};

static bool probe_uprobe_multi(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = IG_BPF_TRACE_UPROBE_MULTI);
	int fd;

	ig_debug("probing multi-uprobe links");
	fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "ig_probe", "GPL", insns, 2, &o);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Probed once per process: `check` reports the answer `run` acts on. */
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

static int on_record(void *ctx, void *data, size_t size)
{
	struct ig_tracer *t = ctx;
	struct ig_hdr *h = data;

	if (size < sizeof(*h) || h->size > size)
		return 0;
	t->fn(h, t->ctx);
	return 0;
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

/* The two flavours of ig_hooks[i]. */
static void hook_progs(struct idlegap_bpf *s, size_t i, struct bpf_program **btf,
		       struct bpf_program **raw)
{
	struct bpf_program *const p[][2] = {
		{ s->progs.ig_fork_btf, s->progs.ig_fork_raw },
		{ s->progs.ig_exit_btf, s->progs.ig_exit_raw },
		{ s->progs.ig_exec_btf, s->progs.ig_exec_raw },
		{ s->progs.ig_switch_btf, s->progs.ig_switch_raw },
		{ s->progs.ig_waking_btf, s->progs.ig_waking_raw },
		{ s->progs.ig_fault_btf, s->progs.ig_fault_raw },
		{ s->progs.ig_rq_issue_btf, s->progs.ig_rq_issue_raw },
		{ s->progs.ig_rq_complete_btf, s->progs.ig_rq_complete_raw },
	};

	_Static_assert(sizeof(p) / sizeof(p[0]) == sizeof(ig_hooks) / sizeof(ig_hooks[0]),
		       "one pair of programs per hook");
	*btf = p[i][0];
	*raw = p[i][1];
}

/* Exactly one flavour of each hook is loaded, chosen hook by hook. */
static void pick_flavours(struct ig_tracer *t)
{
	struct bpf_program *btf, *raw;
	bool use;
	size_t i;

	t->btf = true;
	for (i = 0; i < ig_nhooks; i++) {
		hook_progs(t->skel, i, &btf, &raw);
		use = ig_probe_tp_btf(ig_hooks[i]);
		t->btf &= use;
		bpf_program__set_autoload(btf, use);
		bpf_program__set_autoload(raw, !use);
	}
}

struct ig_tracer *ig_tracer_open(const struct ig_tracer_opts *opts,
				 ig_record_fn fn, void *ctx)
{
	struct ig_tracer *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return NULL;
	t->fn = fn;
	t->ctx = ctx;
	t->skel = idlegap_bpf__open();
	if (!t->skel) {
		err = -errno;
		ig_err("cannot open the BPF object: %s", strerror(errno));
		goto fail;
	}
	pick_flavours(t);
	t->multi = ig_use_uprobe_multi();
	if (t->multi) {
		struct bpf_program *up[] = {
			t->skel->progs.ig_cu_submit, t->skel->progs.ig_cu_enter,
			t->skel->progs.ig_cu_exit, t->skel->progs.ig_cu_event_record,
			t->skel->progs.ig_ld_debug,
		};
		size_t i;

		for (i = 0; i < sizeof(up) / sizeof(up[0]); i++)
			bpf_program__set_expected_attach_type(up[i],
				(enum bpf_attach_type)IG_BPF_TRACE_UPROBE_MULTI);
	}
	t->skel->rodata->min_offcpu_ns = opts->min_offcpu_ns;
	t->skel->rodata->have_find_vma =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT,
					BPF_FUNC_find_vma, NULL) > 0;
	if (opts->ringbuf_mb)
		bpf_map__set_max_entries(t->skel->maps.rb,
					 opts->ringbuf_mb << 20);
	err = idlegap_bpf__load(t->skel);
	if (err) {
		ig_err("the kernel refused idlegap's BPF programs: %s (run with -v for the verifier log)",
		       strerror(-err));
		goto fail;
	}
	ig_debug("loaded %s hooks", t->btf ? "tp_btf" : "tp_btf and raw_tp");
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.rb), on_record, t, NULL);
	if (!t->rb) {
		err = -errno;
		ig_err("cannot map the ring buffer: %s", strerror(errno));
		goto fail;
	}
	return t;
fail:
	ig_tracer_close(t);
	errno = -err;
	return NULL;
}

static int keep_link(struct ig_tracer *t, struct bpf_link *l)
{
	if (!ig_grow((void **)&t->links, &t->caplinks, t->nlinks, sizeof(*t->links))) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	t->links[t->nlinks++] = l;
	return 0;
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

static int attach_prog(struct ig_tracer *t, struct bpf_program *p)
{
	struct bpf_link *l;
	const char *hint;
	int err;

	if (!bpf_program__autoload(p))
		return 0;
	l = bpf_program__attach(p);
	if (l)
		return keep_link(t, l);
	err = -errno;
	hint = ig_attach_hint(err);
	ig_err("cannot attach %s: %s%s%s", bpf_program__section_name(p),
	       strerror(-err), hint ? ": " : "", hint ? hint : "");
	return err;
}

/* Forks first: a thread or child created while the initial set is
 * enumerated is then caught by the tracepoint. */
int ig_tracer_attach_host(struct ig_tracer *t)
{
	struct bpf_program *btf, *raw;
	size_t i;
	int err;

	for (i = 0; i < ig_nhooks; i++) {
		hook_progs(t->skel, i, &btf, &raw);
		err = attach_prog(t, btf);
		if (!err)
			err = attach_prog(t, raw);
		if (err)
			return err;
	}
	return 0;
}

static int track_thread(pid_t tid, void *ctx)
{
	struct ig_tracer *t = ((void **)ctx)[0];
	pid_t tgid = *(pid_t *)((void **)ctx)[1];
	struct ig_thread_state ts = { .tgid = tgid, .sc_nr = -1 };
	__u32 key = tid;

	/* BPF_NOEXIST: the fork hook may already have a fresher entry. */
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.threads), &key, &ts,
				BPF_NOEXIST) && errno != EEXIST)
		return -errno;
	return 0;
}

int ig_tracer_py_offsets(struct ig_tracer *t, pid_t tgid,
			 const struct ig_py_offsets *o)
{
	int fd = bpf_map__fd(t->skel->maps.py_procs);
	__u32 key = tgid;

	if (!o)
		return bpf_map_delete_elem(fd, &key) ? -errno : 0;
	return bpf_map_update_elem(fd, &key, o, BPF_ANY) ? -errno : 0;
}

int ig_tracer_track(struct ig_tracer *t, pid_t tgid)
{
	struct ig_proc_state ps = {};
	__u32 key = tgid;
	void *ctx[2] = { t, &tgid };
	int err;

	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.procs), &key, &ps,
				BPF_NOEXIST) && errno != EEXIST)
		return -errno;
	err = ig_proc_for_each_thread(tgid, track_thread, ctx);
	if (err == -ENOENT)
		err = -ESRCH;
	return err;
}

int ig_tracer_prune(struct ig_tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.procs);
	__u32 key, next, *prev = NULL;
	__u32 gone[256];
	int n = 0, ngone = 0, i;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!ig_proc_exited((pid_t)key))	/* zombies too are done */
			n++;
		else if (ngone < 256)
			gone[ngone++] = key;
	}
	for (i = 0; i < ngone; i++)
		bpf_map_delete_elem(fd, &gone[i]);
	return n;
}

static int keep_fd(struct ig_tracer *t, int fd)
{
	if (!ig_grow((void **)&t->fds, &t->capfds, t->nfds, sizeof(*t->fds))) {
		close(fd);
		return -ENOMEM;
	}
	t->fds[t->nfds++] = fd;
	return 0;
}

/* One multi-uprobe link: @n offsets of @path, each with its cookie. */
static int link_multi(struct ig_tracer *t, struct bpf_program *p,
		      const char *path, pid_t pid, const unsigned long *offs,
		      const __u64 *cookies, __u32 n, bool ret)
{
	struct ig_uprobe_multi_attr a = {
		.prog_fd = bpf_program__fd(p),
		.attach_type = IG_BPF_TRACE_UPROBE_MULTI,
		.path = (__u64)(unsigned long)path,
		.offsets = (__u64)(unsigned long)offs,
		.cookies = (__u64)(unsigned long)cookies,
		.cnt = n,
		.multi_flags = ret ? IG_BPF_F_UPROBE_MULTI_RETURN : 0,
		.pid = pid > 0 ? (__u32)pid : 0,
	};
	int fd;

	if (!n)
		return 0;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	if (fd < 0)
		return -errno;
	return keep_fd(t, fd);
}

static struct bpf_program *entry_prog(struct ig_tracer *t, enum ig_uprobe_kind k)
{
	return k == IG_UP_SUBMIT ? t->skel->progs.ig_cu_submit :
	       k == IG_UP_EVENT_RECORD ? t->skel->progs.ig_cu_event_record :
	       t->skel->progs.ig_cu_enter;
}

static int attach_multi(struct ig_tracer *t, const char *path, pid_t pid,
			const struct ig_uprobe_spec *specs, size_t n)
{
	enum { GROUPS = 4 };	/* submit, timed entry, timed return, record */
	unsigned long *offs = calloc(n * GROUPS, sizeof(*offs));
	__u64 *cookies = calloc(n * GROUPS, sizeof(*cookies));
	__u32 cnt[GROUPS] = {};
	size_t i;
	int g, err = 0;

	if (!offs || !cookies) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		g = specs[i].kind == IG_UP_SUBMIT ? 0 :
		    specs[i].kind == IG_UP_EVENT_RECORD ? 3 : 1;
		offs[g * n + cnt[g]] = specs[i].offset;
		cookies[g * n + cnt[g]++] = specs[i].cookie;
		if (g == 1) {
			offs[2 * n + cnt[2]] = specs[i].offset;
			cookies[2 * n + cnt[2]++] = specs[i].cookie;
		}
	}
	/* return probes first: an entry without its return would leave a
	 * call marked in progress */
	err = link_multi(t, t->skel->progs.ig_cu_exit, path, pid, offs + 2 * n,
			 cookies + 2 * n, cnt[2], true);
	if (!err)
		err = link_multi(t, t->skel->progs.ig_cu_enter, path, pid,
				 offs + n, cookies + n, cnt[1], false);
	if (!err)
		err = link_multi(t, t->skel->progs.ig_cu_submit, path, pid, offs,
				 cookies, cnt[0], false);
	if (!err)
		err = link_multi(t, t->skel->progs.ig_cu_event_record, path, pid,
				 offs + 3 * n, cookies + 3 * n, cnt[3], false);
out:
	free(offs);
	free(cookies);
	return err ? err : (int)n;
}

/* Per-probe perf-event links: kernels without multi-uprobe links. */
static int attach_each(struct ig_tracer *t, const char *path, pid_t pid,
		       const struct ig_uprobe_spec *specs, size_t n)
{
	size_t i;
	int ok = 0, err = 0;

	for (i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = specs[i].cookie);
		struct bpf_link *l;

		if (specs[i].kind == IG_UP_TIMED) {
			o.retprobe = true;
			l = bpf_program__attach_uprobe_opts(t->skel->progs.ig_cu_exit,
							    pid, path, specs[i].offset, &o);
			if (!l || keep_link(t, l)) {
				err = -errno;
				continue;
			}
			o.retprobe = false;
		}
		l = bpf_program__attach_uprobe_opts(entry_prog(t, specs[i].kind), pid,
						    path, specs[i].offset, &o);
		if (!l || keep_link(t, l)) {
			err = -errno;
			continue;
		}
		ok++;
	}
	return ok ? ok : err;
}

int ig_tracer_attach_uprobes(struct ig_tracer *t, const char *path, pid_t pid,
			     const struct ig_uprobe_spec *specs, size_t n)
{
	return t->multi ? attach_multi(t, path, pid, specs, n) :
			  attach_each(t, path, pid, specs, n);
}

int ig_tracer_attach_ld(struct ig_tracer *t, const char *path)
{
	struct ig_elf_sym sym;
	struct bpf_link *l;
	int err = ig_elf_find_sym(path, "_dl_debug_state", &sym);

	if (err)
		return err;
	if (t->multi) {
		unsigned long off = sym.file_off;
		__u64 cookie = 0;

		return link_multi(t, t->skel->progs.ig_ld_debug, path, -1, &off,
				  &cookie, 1, false);
	}
	l = bpf_program__attach_uprobe(t->skel->progs.ig_ld_debug, false, -1,
				       path, sym.file_off);
	if (!l)
		return -errno;
	return keep_link(t, l);
}

int ig_tracer_attach_sampling(struct ig_tracer *t, unsigned int hz)
{
	int ncpu = libbpf_num_possible_cpus(), cpu, fd, err, n = 0;
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(a),
		.sample_freq = hz,
		.freq = 1,
	};
	struct bpf_link *l;

	for (cpu = 0; cpu < ncpu; cpu++) {
		fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV)	/* possible but offline */
				continue;
			return -errno;
		}
		l = bpf_program__attach_perf_event(t->skel->progs.ig_sample, fd);
		if (!l) {
			err = -errno;
			close(fd);
			return err;
		}
		err = keep_link(t, l);	/* the link owns the fd */
		if (err)
			return err;
		n++;
	}
	return n ? 0 : -ENODEV;
}

int ig_tracer_poll(struct ig_tracer *t, int timeout_ms)
{
	/* Woken early only when the ring fills (see rec_submit()); what
	 * came meanwhile is consumed after the wait either way. */
	int n = ring_buffer__poll(t->rb, timeout_ms), m;

	if (n < 0 && n != -EINTR)
		return n;
	m = ring_buffer__consume(t->rb);
	if (m < 0)
		return m;
	return (n > 0 ? n : 0) + m;
}

static int sum_percpu(int fd, __u32 nkeys, __u64 *out)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *v;
	__u32 k;
	int c;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (k = 0; k < nkeys; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, v))
			continue;
		for (c = 0; c < ncpu; c++)
			out[k] += v[c];
	}
	free(v);
	return 0;
}

int ig_tracer_stats(struct ig_tracer *t, struct ig_stats *s)
{
	int err = sum_percpu(bpf_map__fd(t->skel->maps.stats), IG_STAT__MAX, s->stat);
	unsigned int api;

	if (!err)
		err = sum_percpu(bpf_map__fd(t->skel->maps.api_hits), IG_API__MAX,
				 s->api_hits);
	s->stat[IG_STAT_CUDA_HITS] = s->stat[IG_STAT_LAUNCHES] = 0;
	for (api = 1; !err && api < IG_API__MAX; api++) {
		s->stat[IG_STAT_CUDA_HITS] += s->api_hits[api];
		if (ig_api_submits(api))
			s->stat[IG_STAT_LAUNCHES] += s->api_hits[api];
	}
	return err;
}

bool ig_tracer_uses_btf(const struct ig_tracer *t)
{
	return t->btf;
}

bool ig_tracer_uses_multi(const struct ig_tracer *t)
{
	return t->multi;
}

void ig_tracer_close(struct ig_tracer *t)
{
	unsigned int i;

	if (!t)
		return;
	ring_buffer__free(t->rb);
	for (i = 0; i < t->nfds; i++)
		close(t->fds[i]);
	free(t->fds);
	for (i = 0; i < t->nlinks; i++)
		bpf_link__destroy(t->links[i]);
	free(t->links);
	idlegap_bpf__destroy(t->skel);
	free(t);
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
