// SPDX-License-Identifier: GPL-2.0
/* Discovery host-wide (discovery.h): every process of the host that maps a
 * libcuda, and the agent's windows (probes off between them, on again,
 * announced again). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include "probes/discovery_int.h"
#include "host/procfs.h"
#include "util/util.h"

void ig_discovery_detach_all(struct ig_discovery *d)
{
	size_t i;

	/* libnccl's probes stay: a communicator's sequence must count every
	 * call, or two ranks would number one collective apart; while
	 * paused they send nothing; the loaders' and libcuda's set-up entry
	 * points stay, so that a job set up between windows is seen doing
	 * it (docs/design.md §7.10) */
	if (d->o.tracer)
		ig_tracer_detach_window_uprobes(d->o.tracer);
	for (i = 0; i < d->nprocs; i++)
		d->procs[i]->probed = d->procs[i]->mapped = false;
	d->detached = true;
}

int ig_discovery_attach_all(struct ig_discovery *d, __u64 now)
{
	size_t i;
	int n = 0;

	d->detached = false;
	for (i = 0; i < d->nprocs; i++) {
		struct dproc *p = d->procs[i];

		p->due = 0;
		ig_discovery_emit_libnccl(d, p, now);
		/* a window's engine names the GIL of a process found before */
		ig_discovery_emit_pyrt(d, p, now);
		if (ig_discovery_add(d, p->tgid, now) == 0 && p->probed)
			n++;
	}
	return n;
}

int ig_discovery_reannounce(struct ig_discovery *d, __u64 ts)
{
	size_t i;
	int n = 0;

	for (i = 0; i < d->nprocs; i++) {
		struct dproc *p = d->procs[i];
		struct ig_disc_event ev = { .kind = IG_DISC_LIBCUDA, .pid = p->tgid,
					    .ts = ts };

		ig_discovery_emit_libnccl(d, p, ts);
		if (!p->probed || !p->info)
			continue;
		ev.name = ev.path = p->info->path;
		ev.nsyms = p->info->nsyms;
		ev.nattached = p->info->nattached;
		ig_discovery_event(d, &ev);
		ig_discovery_emit_libcuda(d, p->tgid, p->info, ts);
		p->mapped = false;
		ig_discovery_emit_maps(d, p, ts);
		ig_discovery_emit_pyrt(d, p, ts);
		n++;
	}
	return n;
}

struct scan_ctx {
	struct ig_discovery *d;
	__u64 now;
	int (*found)(pid_t pid, __u64 now, void *ctx);
	void *ctx;
	int added;
};

static int scan_one(const struct ig_gpu_proc *g, void *ctx)
{
	struct scan_ctx *c = ctx;

	/* idlegap's own mapping of a libcuda is its ELF reader's */
	if (g->pid == getpid() || ig_htab_get(&c->d->by_tgid, (__u64)g->pid))
		return 0;
	c->added++;
	if (c->found)
		c->found(g->pid, c->now, c->ctx);
	else
		ig_discovery_add(c->d, g->pid, c->now);
	return 0;
}

int ig_discovery_scan(struct ig_discovery *d, __u64 now,
		      int (*found)(pid_t pid, __u64 now, void *ctx), void *ctx)
{
	struct scan_ctx c = { d, now, found, ctx, 0 };
	int err = ig_discovery_gpu_procs(scan_one, &c);

	return err < 0 ? err : c.added;
}

static pid_t pid_of(const char *name)
{
	char *end;
	long v = strtol(name, &end, 10);

	return *name && !*end && v > 0 && v <= 0x7fffffff ? (pid_t)v : 0;
}

int ig_discovery_gpu_procs(ig_gpu_proc_fn fn, void *ctx)
{
	DIR *dir = opendir("/proc");
	struct ig_cuda_lib lib;
	struct dirent *e;
	int r = 0, err;

	if (!dir)
		return -errno;
	while (!r && (e = readdir(dir))) {
		struct ig_gpu_proc g = { .pid = pid_of(e->d_name) };

		if (!g.pid)
			continue;
		err = ig_cuda_find_in_maps(g.pid, &lib);
		if (!lib.name[0])
			continue;	/* none mapped, gone, or kernel thread */
		g.name = lib.name;
		g.path = err ? "" : lib.path;
		g.err = err;
		r = fn(&g, ctx);
	}
	closedir(dir);
	return r;
}
