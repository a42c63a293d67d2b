// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "stream/cuda_api.h"
#include "idlegap.skel.h"
#include "idlegap_compat.skel.h"
#include "probes/log.h"
#include "host/procfs.h"
#include "probes/tracer_int.h"
#include "util/util.h"


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
		{ s->progs.ig_rq_insert_btf, s->progs.ig_rq_insert_raw },
		{ s->progs.ig_rq_issue_btf, s->progs.ig_rq_issue_raw },
		{ s->progs.ig_rq_complete_btf, s->progs.ig_rq_complete_raw },
	};

	_Static_assert(sizeof(p) / sizeof(p[0]) == IG_NHOOKS,
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
		if (ig_tracer_hook_optional(i) && !ig_probe_raw_tp_exists(ig_hooks[i])) {
			/* a kernel without it (arm64): left out */
			bpf_program__set_autoload(btf, false);
			bpf_program__set_autoload(raw, false);
			continue;
		}
		use = ig_probe_tp_btf(ig_hooks[i]);
		t->btf &= use;
		bpf_program__set_autoload(btf, use);
		bpf_program__set_autoload(raw, !use);
	}
}

static void uprobe_multi_progs(struct ig_tracer *t)
{
	struct bpf_program *up[] = {
		t->skel->progs.ig_cu_submit, t->skel->progs.ig_cu_enter,
		t->skel->progs.ig_cu_exit, t->skel->progs.ig_cu_event_record,
		t->skel->progs.ig_ld_debug, t->skel->progs.ig_nc_enter,
		t->skel->progs.ig_nc_exit, t->skel->progs.ig_py_cs_enter,
		t->skel->progs.ig_py_cs2_enter, t->skel->progs.ig_py_cs_exit,
	};
	size_t i;

	for (i = 0; i < sizeof(up) / sizeof(up[0]); i++)
		bpf_program__set_expected_attach_type(up[i],
			(enum bpf_attach_type)IG_BPF_TRACE_UPROBE_MULTI);
}

/* The compat object, opened as the main one: the build checks that
 * their programs, maps and global data are laid out alike. */
static struct idlegap_bpf *open_compat(void)
{
	struct idlegap_bpf *s = calloc(1, sizeof(*s));
	int err;

	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	err = idlegap_bpf__create_skeleton(s);
	if (!err) {
		s->skeleton->data = (void *)idlegap_compat_bpf__elf_bytes(&s->skeleton->data_sz);
		err = bpf_object__open_skeleton(s->skeleton, NULL);
	}
	if (err) {
		idlegap_bpf__destroy(s);
		errno = -err;
		return NULL;
	}
	return s;
}

/* The compat object has one program per CUDA entry point instead of
 * those that read the attach cookie. */
static void compat_progs(struct ig_tracer *t)
{
	bpf_program__set_autoload(t->skel->progs.ig_cu_submit, false);
	bpf_program__set_autoload(t->skel->progs.ig_cu_enter, false);
	bpf_program__set_autoload(t->skel->progs.ig_cu_event_record, false);
	bpf_program__set_autoload(t->skel->progs.ig_nc_enter, false);
}

/* How much each program cost the verifier, for `-v`. */
static void log_verified(struct ig_tracer *t)
{
	struct bpf_program *p;

	if (!ig_verbose)
		return;
	bpf_object__for_each_program(p, t->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (bpf_program__fd(p) < 0 ||
		    bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
			continue;
		if (info.verified_insns)
			ig_debug("program %s: %u instructions, %u verified", bpf_program__name(p),
				 info.xlated_prog_len / 8, info.verified_insns);
		else	/* before 5.16 the kernel does not say */
			ig_debug("program %s: %u instructions", bpf_program__name(p),
				 info.xlated_prog_len / 8);
	}
}

/* Whether block tracepoint @tp passes the request queue before the
 * request, as before Linux 5.11: from the kernel's BTF, else from its
 * release. */
static bool rq_has_queue(const char *tp)
{
	int n = ig_probe_tp_nargs(tp), major = 0, minor = 0;
	struct utsname u;

	if (n > 0)
		return n >= 2;
	if (!uname(&u))
		sscanf(u.release, "%d.%d", &major, &minor);
	return major && (major < 5 || (major == 5 && minor < 11));
}

/*
 * A fresh page costs a fault, and a fault is dear on a VM.  While the
 * object opens and its programs load, large buffers (the kernel's BTF,
 * parsed twice: for the flavours, then by libbpf for its relocations)
 * come from the heap and the second reuses the first's pages, where by
 * default each is mapped anew and unmapped when freed.  After the load
 * the heap's free pages go back, and buffers of 4 MiB and more are
 * mapped again (docs/design.md §7.1).
 */
static void load_heap(bool loading)
{
	if (loading) {
		mallopt(M_MMAP_THRESHOLD, 32 << 20);
		mallopt(M_TRIM_THRESHOLD, 64 << 20);
		return;
	}
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 8 << 20);
	malloc_trim(0);
}

/* Configures and loads the programs; a negative errno with @why set. */
static int load(struct ig_tracer *t, const struct ig_tracer_opts *opts,
		char *why, size_t n)
{
	struct ig_bpf_refusal r;
	struct ig_premade pm;
	int err;

	if (opts->ringbuf_mb)
		bpf_map__set_max_entries(t->skel->maps.rb,
					 opts->ringbuf_mb << 20);
	ig_tracer_maps_start(&pm, t->skel->obj);
	pick_flavours(t);
	{
		bool want = opts->sz > offsetof(struct ig_tracer_opts, gpulib_watch) &&
			    opts->gpulib_watch;
		bool btf = want && ig_probe_tp_btf("sys_enter");

		bpf_program__set_autoload(t->skel->progs.ig_sys_enter_btf, btf);
		bpf_program__set_autoload(t->skel->progs.ig_sys_enter_raw, want && !btf);
	}
	t->multi = ig_tracer_use_uprobe_multi();
	if (t->multi)
		uprobe_multi_progs(t);
	if (t->compat)
		compat_progs(t);
	t->skel->rodata->min_offcpu_ns = opts->min_offcpu_ns;
	t->skel->rodata->have_find_vma = !t->compat &&
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT,
					BPF_FUNC_find_vma, NULL) > 0;
	t->skel->rodata->ustacks_on = !getenv("IDLEGAP_NO_USTACKS");
	t->skel->rodata->rq_insert_has_queue = rq_has_queue("block_rq_insert");
	t->skel->rodata->rq_issue_has_queue = rq_has_queue("block_rq_issue");
	/* the flavours are picked: the kernel's BTF goes before libbpf
	 * parses its own copy */
	ig_probe_release_btf();
	ig_tracer_maps_finish(&pm);
	ig_log_catch_refusal(&r);
	err = idlegap_bpf__load(t->skel);
	ig_log_catch_refusal(NULL);
	/* before the ring buffer is mapped, which adds its size */
	load_heap(false);
	if (err && r.prog[0]) {
		/* the verifier's refusal, not a want of privileges */
		snprintf(why, n, "the kernel's verifier refused BPF program %s%s: %s (idlegap check -v shows its whole log)",
			 r.prog, t->compat ? " (compat object)" : "",
			 r.reason[0] ? r.reason : strerror(-err));
		return -ENOEXEC;
	}
	if (err) {
		snprintf(why, n, "the kernel refused idlegap's BPF programs: %s%s", strerror(-err),
			 err == -EPERM || err == -EACCES ? ": run as root (sudo)" :
			 " (idlegap check -v says more)");
		return err;
	}
	ig_debug("loaded the %s object, %s hooks", t->compat ? "compat" : "main",
		 t->btf ? "tp_btf" : "tp_btf and raw_tp");
	log_verified(t);
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.rb), ig_tracer_on_record, t, NULL);
	if (!t->rb) {
		err = -errno;
		snprintf(why, n, "cannot map the ring buffer: %s", strerror(-err));
	}
	return err;
}

struct ig_tracer *ig_tracer_open(const struct ig_tracer_opts *opts,
				 ig_record_fn fn, void *ctx, char *why, size_t n)
{
	struct ig_tracer *t = calloc(1, sizeof(*t));
	char dummy[1];
	int err;

	if (!why || !n) {
		why = dummy;
		n = sizeof(dummy);
	}
	if (!t) {
		snprintf(why, n, "out of memory");
		return NULL;
	}
	t->fn = fn;
	t->ctx = ctx;
	load_heap(true);
	t->compat = ig_tracer_use_compat();
	t->skel = t->compat ? open_compat() : idlegap_bpf__open();
	if (!t->skel) {
		err = -errno;
		load_heap(false);	/* load() does it after the load */
		snprintf(why, n, "cannot open the BPF object: %s", strerror(-err));
		goto fail;
	}
	err = load(t, opts, why, n);
	if (!err)
		return t;
fail:
	ig_tracer_close(t);
	errno = -err;
	return NULL;
}

int ig_tracer_keep(struct ig_tracer *t, struct bpf_link *l, int fd, pid_t owner,
		   bool uprobe)
{
	struct ig_link k = { l, l ? -1 : fd, owner, uprobe, false };

	if (!ig_grow((void **)&t->links, &t->caplinks, t->nlinks, sizeof(*t->links))) {
		ig_tracer_unlink(&k);
		return -ENOMEM;
	}
	t->links[t->nlinks++] = k;
	return 0;
}

int ig_tracer_keep_staying(struct ig_tracer *t, struct bpf_link *l, int fd, pid_t owner)
{
	int err = ig_tracer_keep(t, l, fd, owner, true);

	if (!err)
		t->links[t->nlinks - 1].stays = true;
	return err;
}

static int attach_prog(struct ig_tracer *t, struct bpf_program *p, char *why,
		       size_t n)
{
	struct bpf_link *l;
	const char *hint;
	int err;

	if (!bpf_program__autoload(p))
		return 0;
	l = bpf_program__attach(p);
	if (l)
		return ig_tracer_keep(t, l, -1, -1, false);
	err = -errno;
	hint = ig_tracer_attach_hint(err);
	snprintf(why, n, "cannot attach %s: %s%s%s", bpf_program__section_name(p),
		 strerror(-err), hint ? ": " : "", hint ? hint : "");
	return err;
}

int ig_tracer_attach_gpulib(struct ig_tracer *t, char *why, size_t n)
{
	int err = attach_prog(t, t->skel->progs.ig_sys_enter_btf, why, n);

	return err ? err : attach_prog(t, t->skel->progs.ig_sys_enter_raw, why, n);
}

int ig_tracer_gpulib_track(struct ig_tracer *t, int cgroup_fd)
{
	__u32 zero = 0, one = 1, mode = cgroup_fd >= 0 ? 2 : 1, self = (__u32)getpid();

	if (cgroup_fd >= 0 &&
	    bpf_map__update_elem(t->skel->maps.gpulib_scope, &zero, sizeof(zero),
				 &cgroup_fd, sizeof(cgroup_fd), BPF_ANY))
		return -errno;
	if (bpf_map__update_elem(t->skel->maps.gpulib_track, &one, sizeof(one),
				 &self, sizeof(self), BPF_ANY) ||
	    bpf_map__update_elem(t->skel->maps.gpulib_track, &zero, sizeof(zero),
				 &mode, sizeof(mode), BPF_ANY))
		return -errno;
	return 0;
}

/* Forks first: a thread or child created while the initial set is
 * enumerated is then caught by the tracepoint. */
int ig_tracer_attach_host(struct ig_tracer *t, char *why, size_t n)
{
	struct bpf_program *btf, *raw;
	size_t i;
	int err;

	for (i = 0; i < ig_nhooks; i++) {
		hook_progs(t->skel, i, &btf, &raw);
		err = attach_prog(t, btf, why, n);
		if (!err)
			err = attach_prog(t, raw, why, n);
		if (err)
			return err;
	}
	return 0;
}

struct track_ctx {
	struct ig_tracer *t;
	pid_t tgid;
};

static int track_thread(pid_t tid, void *ctx)
{
	struct ig_tracer *t = ((struct track_ctx *)ctx)->t;
	struct timespec now;
	struct ig_thread_state ts = { .tgid = ((struct track_ctx *)ctx)->tgid,
				      .sc_nr = -1 };
	__u32 key = tid;

	/* off CPU since now, as far as the kernel knows: a thread already
	 * asleep is first seen at its switch-in, which then sends the wait
	 * from here with its waker; a running one's switch-out starts
	 * afresh.  Its reason is what /proc says (IG_REC_TSTATE,
	 * docs/design.md §5.14). */
	clock_gettime(CLOCK_MONOTONIC, &now);
	ts.off = 1;
	ts.t_off = (__u64)now.tv_sec * 1000000000ULL + (__u64)now.tv_nsec;
	ts.reason = IG_R_OTHER;
	ts.flags = IG_F_AT_ATTACH;

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
	struct track_ctx c = { t, tgid };
	int err;

	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.procs), &key, &ps,
				BPF_NOEXIST) && errno != EEXIST)
		return -errno;
	err = ig_proc_for_each_thread(tgid, track_thread, &c);
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

/* Empties a hash map: its keys first, then deleted in batches (one by
 * one where the kernel has no batch deletion). */
static int map_clear(const struct bpf_map *m)
{
	__u32 ksz = bpf_map__key_size(m), cap = bpf_map__max_entries(m), n = 0, i, cnt;
	int fd = bpf_map__fd(m), err = 0;
	char *keys = malloc((size_t)cap * ksz);

	if (!keys)
		return -ENOMEM;
	while (n < cap && !bpf_map_get_next_key(fd, n ? keys + (size_t)(n - 1) * ksz : NULL,
						  keys + (size_t)n * ksz))
		n++;
	cnt = n;
	if (n && bpf_map_delete_batch(fd, keys, &cnt, NULL) < 0)
		for (i = 0; i < n; i++)
			if (bpf_map_delete_elem(fd, keys + (size_t)i * ksz) < 0 && errno != ENOENT)
				err = -errno;
	free(keys);
	return err;
}

int ig_tracer_forget_stacks(struct ig_tracer *t)
{
	const struct bpf_map *m[] = { t->skel->maps.ustacks_sent, t->skel->maps.ustack_last,
				      t->skel->maps.py_sent, t->skel->maps.py_threads };
	size_t i;
	int err = 0, e;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if ((e = map_clear(m[i])) && !err)
			err = e;
	return err;
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
		err = ig_tracer_keep(t, l, -1, -1, false);	/* the link owns the fd */
		if (err)
			return err;
		n++;
	}
	return n ? 0 : -ENODEV;
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

bool ig_tracer_uses_compat(const struct ig_tracer *t)
{
	return t->compat;
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
	free(t->held);
	for (i = 0; i < t->nlinks; i++)
		ig_tracer_unlink(&t->links[i]);
	ig_tracer_unlink_wait();
	ig_probe_drop_link();
	free(t->links);
	idlegap_bpf__destroy(t->skel);
	free(t);
}

