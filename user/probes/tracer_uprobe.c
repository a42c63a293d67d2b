// SPDX-License-Identifier: GPL-2.0
/* uprobes by file and offset: libcuda's entry points, the loaders'
 * _dl_debug_state() and a free-threaded CPython's critical sections, as
 * multi-uprobe links or one perf-event link each. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "stream/cuda_api.h"
#include "stream/nccl_api.h"
#include "host/elfsym.h"
#include "idlegap.skel.h"
#include "probes/tracer_int.h"


/* One multi-uprobe link: @n offsets of @path, each with its cookie. */
static int link_multi(struct ig_tracer *t, struct bpf_program *p,
		      const char *path, pid_t pid, const unsigned long *offs,
		      const __u64 *cookies, __u32 n, bool ret, bool stays)
{
	bool nccl = p == t->skel->progs.ig_nc_enter || p == t->skel->progs.ig_nc_exit;
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
	return stays || nccl ? ig_tracer_keep_staying(t, NULL, fd, pid > 0 ? pid : -1) :
		      ig_tracer_keep(t, NULL, fd, pid > 0 ? pid : -1, true);
}

static struct bpf_program *entry_prog(struct ig_tracer *t, enum ig_uprobe_kind k,
				      __u64 cookie)
{
	if (t->compat) {	/* its program, without a cookie */
		char name[96];

		snprintf(name, sizeof(name), "ig_cc_%s", k == IG_UP_NCCL || k == IG_UP_NCCL_TIMED ?
			 ig_nccl_api_name(IG_COOKIE_API(cookie)) :
			 ig_api_name(IG_COOKIE_API(cookie)));
		return bpf_object__find_program_by_name(t->skel->obj, name);
	}
	if (k == IG_UP_NCCL || k == IG_UP_NCCL_TIMED)
		return t->skel->progs.ig_nc_enter;
	return k == IG_UP_SUBMIT ? t->skel->progs.ig_cu_submit :
	       k == IG_UP_EVENT_RECORD ? t->skel->progs.ig_cu_event_record :
	       t->skel->progs.ig_cu_enter;
}

static int attach_multi(struct ig_tracer *t, const char *path, pid_t pid,
			const struct ig_uprobe_spec *specs, size_t n, bool stays)
{
	/* submit, timed entry, timed return, record, nccl entry, nccl return */
	enum { GROUPS = 6 };
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
		enum ig_uprobe_kind k = specs[i].kind;
		int r = k == IG_UP_TIMED ? 2 : k == IG_UP_NCCL_TIMED ? 5 : -1;

		g = k == IG_UP_SUBMIT ? 0 : k == IG_UP_EVENT_RECORD ? 3 :
		    k == IG_UP_NCCL || k == IG_UP_NCCL_TIMED ? 4 : 1;
		offs[g * n + cnt[g]] = specs[i].offset;
		cookies[g * n + cnt[g]++] = specs[i].cookie;
		if (r >= 0) {
			offs[r * n + cnt[r]] = specs[i].offset;
			cookies[r * n + cnt[r]++] = specs[i].cookie;
		}
	}
	/* return probes first: an entry without its return would leave a
	 * call marked in progress */
	err = link_multi(t, t->skel->progs.ig_cu_exit, path, pid, offs + 2 * n,
			 cookies + 2 * n, cnt[2], true, stays);
	if (!err)
		err = link_multi(t, t->skel->progs.ig_cu_enter, path, pid,
				 offs + n, cookies + n, cnt[1], false, stays);
	if (!err)
		err = link_multi(t, t->skel->progs.ig_cu_submit, path, pid, offs,
				 cookies, cnt[0], false, stays);
	if (!err)
		err = link_multi(t, t->skel->progs.ig_cu_event_record, path, pid,
				 offs + 3 * n, cookies + 3 * n, cnt[3], false, stays);
	if (!err)
		err = link_multi(t, t->skel->progs.ig_nc_exit, path, pid,
				 offs + 5 * n, cookies + 5 * n, cnt[5], true, stays);
	if (!err)
		err = link_multi(t, t->skel->progs.ig_nc_enter, path, pid,
				 offs + 4 * n, cookies + 4 * n, cnt[4], false, stays);
out:
	free(offs);
	free(cookies);
	return err ? err : (int)n;
}

/* Per-probe perf-event links: kernels without multi-uprobe links. */
static int attach_each(struct ig_tracer *t, const char *path, pid_t pid,
		       const struct ig_uprobe_spec *specs, size_t n, bool stays)
{
	size_t i;
	int ok = 0, err = 0;

	for (i = 0; i < n; i++) {
		/* before 5.15 the kernel refuses any cookie */
		LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = t->compat ? 0 : specs[i].cookie);
		struct bpf_program *p = entry_prog(t, specs[i].kind, specs[i].cookie);
		bool stay = stays || specs[i].kind == IG_UP_NCCL ||
			    specs[i].kind == IG_UP_NCCL_TIMED;
		struct bpf_link *l;

		if (!p) {
			err = -ENOENT;
			continue;
		}

		if (specs[i].kind == IG_UP_TIMED || specs[i].kind == IG_UP_NCCL_TIMED) {
			o.retprobe = true;
			l = bpf_program__attach_uprobe_opts(specs[i].kind == IG_UP_TIMED ?
							    t->skel->progs.ig_cu_exit :
							    t->skel->progs.ig_nc_exit,
							    pid, path, specs[i].offset, &o);
			if (!l || (stay ? ig_tracer_keep_staying(t, l, -1, pid > 0 ? pid : -1) :
				   ig_tracer_keep(t, l, -1, pid > 0 ? pid : -1, true))) {
				err = -errno;
				continue;
			}
			o.retprobe = false;
		}
		l = bpf_program__attach_uprobe_opts(p, pid,
						    path, specs[i].offset, &o);
		if (!l || (stay ? ig_tracer_keep_staying(t, l, -1, pid > 0 ? pid : -1) :
			   ig_tracer_keep(t, l, -1, pid > 0 ? pid : -1, true))) {
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
	return t->multi ? attach_multi(t, path, pid, specs, n, false) :
			  attach_each(t, path, pid, specs, n, false);
}

int ig_tracer_attach_staying_uprobes(struct ig_tracer *t, const char *path, pid_t pid,
				     const struct ig_uprobe_spec *specs, size_t n)
{
	return t->multi ? attach_multi(t, path, pid, specs, n, true) :
			  attach_each(t, path, pid, specs, n, true);
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
				  &cookie, 1, false, true);
	}
	l = bpf_program__attach_uprobe(t->skel->progs.ig_ld_debug, false, -1,
				       path, sym.file_off);
	if (!l)
		return -errno;
	return ig_tracer_keep_staying(t, l, -1, -1);
}

int ig_tracer_attach_pylock(struct ig_tracer *t, const char *path)
{
	static const char *const names[2] = {
		"_PyCriticalSection_BeginSlow", "_PyCriticalSection2_BeginSlow",
	};
	struct bpf_program *entry[2] = {
		t->skel->progs.ig_py_cs_enter, t->skel->progs.ig_py_cs2_enter,
	};
	struct bpf_program *ret = t->skel->progs.ig_py_cs_exit;
	unsigned long off[2];
	__u64 cookie[2] = { 0, 0 };
	struct ig_elf_sym sym;
	struct bpf_link *l;
	int i, err;

	for (i = 0; i < 2; i++) {
		err = ig_elf_find_sym(path, names[i], &sym);
		if (err)
			return err;
		off[i] = sym.file_off;
	}
	/* the return probes first: an entry without its return would leave
	 * the thread marked (py_lock_wait() bounds what such a mark names) */
	if (t->multi) {
		err = link_multi(t, ret, path, -1, off, cookie, 2, true, true);
		for (i = 0; i < 2 && !err; i++)
			err = link_multi(t, entry[i], path, -1, &off[i], cookie, 1,
					 false, true);
		return err;
	}
	for (i = 0; i < 4; i++) {
		l = bpf_program__attach_uprobe(i < 2 ? ret : entry[i - 2], i < 2, -1,
					       path, off[i % 2]);
		if (!l)
			return -errno;
		err = ig_tracer_keep_staying(t, l, -1, -1);
		if (err)
			return err;
	}
	return 0;
}

void ig_tracer_detach_uprobes(struct ig_tracer *t, pid_t pid)
{
	size_t i, j;

	for (i = j = 0; i < t->nlinks; i++) {
		struct ig_link *k = &t->links[i];

		if (k->uprobe && (pid < 0 || k->owner == pid))
			ig_tracer_unlink_later(k);
		else
			t->links[j++] = *k;
	}
	t->nlinks = j;
}

void ig_tracer_detach_window_uprobes(struct ig_tracer *t)
{
	size_t i, j;

	for (i = j = 0; i < t->nlinks; i++) {
		struct ig_link *k = &t->links[i];

		if (k->uprobe && !k->stays)
			ig_tracer_unlink_later(k);
		else
			t->links[j++] = *k;
	}
	t->nlinks = j;
}

size_t ig_tracer_nuprobe_links(const struct ig_tracer *t, pid_t pid)
{
	size_t i, n = 0;

	for (i = 0; i < t->nlinks; i++)
		n += t->links[i].uprobe && (pid < 0 || t->links[i].owner == pid);
	return n;
}
