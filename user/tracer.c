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
#include "idlegap.skel.h"
#include "log.h"
#include "procfs.h"
#include "tracer.h"

struct ig_tracer {
	struct idlegap_bpf *skel;
	struct ring_buffer *rb;
	ig_record_fn fn;
	void *ctx;
	bool btf;		/* tp_btf programs loaded (else raw_tp) */
	struct bpf_link **links;
	unsigned int nlinks, cap;
};

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
bool ig_probe_tp_btf(const char *tp)
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

/* Exactly one flavour of each scheduler/block hook is loaded. */
static void pick_flavour(struct idlegap_bpf *s, bool btf)
{
	struct bpf_program *btfp[] = {
		s->progs.ig_switch_btf, s->progs.ig_waking_btf,
		s->progs.ig_fork_btf, s->progs.ig_exec_btf,
		s->progs.ig_exit_btf, s->progs.ig_rq_issue_btf,
		s->progs.ig_rq_complete_btf,
	};
	struct bpf_program *rawp[] = {
		s->progs.ig_switch_raw, s->progs.ig_waking_raw,
		s->progs.ig_fork_raw, s->progs.ig_exec_raw,
		s->progs.ig_exit_raw, s->progs.ig_rq_issue_raw,
		s->progs.ig_rq_complete_raw,
	};
	size_t i;

	for (i = 0; i < sizeof(btfp) / sizeof(btfp[0]); i++) {
		bpf_program__set_autoload(btfp[i], btf);
		bpf_program__set_autoload(rawp[i], !btf);
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
	t->btf = ig_probe_tp_btf("sched_switch");
	pick_flavour(t->skel, t->btf);
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
	ig_debug("loaded %s scheduler hooks", t->btf ? "tp_btf" : "raw_tp");
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
	if (t->nlinks == t->cap) {
		unsigned int cap = t->cap ? t->cap * 2 : 64;
		struct bpf_link **v = realloc(t->links, cap * sizeof(*v));

		if (!v) {
			bpf_link__destroy(l);
			return -ENOMEM;
		}
		t->links = v;
		t->cap = cap;
	}
	t->links[t->nlinks++] = l;
	return 0;
}

static int attach_prog(struct ig_tracer *t, struct bpf_program *p, bool required)
{
	struct bpf_link *l;

	if (!bpf_program__autoload(p))
		return 0;
	l = bpf_program__attach(p);
	if (!l) {
		int err = -errno;

		if (required) {
			ig_err("cannot attach %s: %s", bpf_program__section_name(p),
			       strerror(-err));
			return err;
		}
		ig_warn("%s unavailable (%s): %s", bpf_program__section_name(p),
			strerror(-err), "wakeups from interrupts are not told apart");
		return 0;
	}
	return keep_link(t, l);
}

int ig_tracer_attach_host(struct ig_tracer *t)
{
	struct idlegap_bpf *s = t->skel;
	/* Forks first: a thread or child created while the initial set is
	 * enumerated is then caught by the tracepoint. */
	struct bpf_program *required[] = {
		s->progs.ig_fork_btf, s->progs.ig_fork_raw,
		s->progs.ig_exit_btf, s->progs.ig_exit_raw,
		s->progs.ig_exec_btf, s->progs.ig_exec_raw,
		s->progs.ig_switch_btf, s->progs.ig_switch_raw,
		s->progs.ig_waking_btf, s->progs.ig_waking_raw,
		s->progs.ig_fault,
		s->progs.ig_rq_issue_btf, s->progs.ig_rq_issue_raw,
		s->progs.ig_rq_complete_btf, s->progs.ig_rq_complete_raw,
	};
	struct bpf_program *optional[] = {
		s->progs.ig_irq_entry, s->progs.ig_irq_exit,
		s->progs.ig_softirq_entry, s->progs.ig_softirq_exit,
		s->progs.ig_hrtimer_entry, s->progs.ig_hrtimer_exit,
	};
	size_t i;
	int err;

	for (i = 0; i < sizeof(optional) / sizeof(optional[0]); i++) {
		err = attach_prog(t, optional[i], false);
		if (err)
			return err;
	}
	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		err = attach_prog(t, required[i], true);
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
		if (ig_proc_exists((pid_t)key))
			n++;
		else if (ngone < 256)
			gone[ngone++] = key;
	}
	for (i = 0; i < ngone; i++)
		bpf_map_delete_elem(fd, &gone[i]);
	return n;
}

int ig_tracer_attach_uprobe(struct ig_tracer *t, const char *path,
			    size_t offset, pid_t pid, __u64 cookie,
			    enum ig_uprobe_kind kind)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = cookie);
	struct bpf_program *entry = kind == IG_UP_SUBMIT ? t->skel->progs.ig_cu_submit :
				    kind == IG_UP_EVENT_RECORD ? t->skel->progs.ig_cu_event_record :
				    t->skel->progs.ig_cu_enter;
	struct bpf_link *l;
	int err;

	/* Return probe first: an entry without its return would leave a
	 * call marked in progress. */
	if (kind == IG_UP_TIMED) {
		o.retprobe = true;
		l = bpf_program__attach_uprobe_opts(t->skel->progs.ig_cu_exit,
						    pid, path, offset, &o);
		if (!l)
			return -errno;
		err = keep_link(t, l);
		if (err)
			return err;
		o.retprobe = false;
	}
	l = bpf_program__attach_uprobe_opts(entry, pid, path, offset, &o);
	if (!l)
		return -errno;
	return keep_link(t, l);
}

int ig_tracer_attach_ld(struct ig_tracer *t, const char *path)
{
	struct ig_elf_sym sym;
	struct bpf_link *l;
	int err = ig_elf_find_sym(path, "_dl_debug_state", &sym);

	if (err)
		return err;
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

	if (!err)
		err = sum_percpu(bpf_map__fd(t->skel->maps.api_hits), IG_API__MAX,
				 s->api_hits);
	return err;
}

bool ig_tracer_uses_btf(const struct ig_tracer *t)
{
	return t->btf;
}

unsigned int ig_tracer_nlinks(const struct ig_tracer *t)
{
	return t->nlinks;
}

void ig_tracer_close(struct ig_tracer *t)
{
	unsigned int i;

	if (!t)
		return;
	ring_buffer__free(t->rb);
	for (i = 0; i < t->nlinks; i++)
		bpf_link__destroy(t->links[i]);
	free(t->links);
	idlegap_bpf__destroy(t->skel);
	free(t);
}
