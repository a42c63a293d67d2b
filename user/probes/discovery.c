// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "probes/cuda_attach.h"
#include "probes/discovery.h"
#include "probes/discovery_int.h"
#include "probes/nccl_attach.h"
#include "host/procfs.h"
#include "probes/pyrt.h"
#include "util/htab.h"
#include "util/util.h"

/* libcuda may be loaded at any time: look again this often, and this soon
 * after the loader says a library was loaded */
#define RESCAN_EVERY_NS		(2000ULL * 1000 * 1000)
#define RESCAN_SOON_NS		(20ULL * 1000 * 1000)

static struct dproc *proc_get(struct ig_discovery *d, pid_t tgid)
{
	struct dproc *p = ig_htab_get(&d->by_tgid, (__u64)tgid);

	if (p)
		return p;
	if (!ig_grow((void **)&d->procs, &d->capprocs, d->nprocs, sizeof(*d->procs)))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (ig_htab_put(&d->by_tgid, (__u64)tgid, p)) {
		free(p);
		return NULL;
	}
	p->tgid = tgid;
	p->slot = d->nprocs;
	d->procs[d->nprocs++] = p;
	return p;
}

static void proc_drop(struct ig_discovery *d, struct dproc *p)
{
	struct dproc *last = d->procs[--d->nprocs];

	d->procs[p->slot] = last;
	last->slot = p->slot;
	ig_htab_del(&d->by_tgid, (__u64)p->tgid);
	free(p->info);
	free(p);
}

struct ig_discovery *ig_discovery_new(const struct ig_discovery_opts *o)
{
	struct ig_discovery *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	memcpy(&d->o, o, o->sz < sizeof(d->o) ? o->sz : sizeof(d->o));
	d->nccl_all.by_file = d->o.windows;
	if (ig_htab_init(&d->by_tgid, 64)) {
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	return d;
}

void ig_discovery_free(struct ig_discovery *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nprocs; i++) {
		free(d->procs[i]->info);
		free(d->procs[i]);
	}
	free(d->procs);
	ig_htab_free(&d->by_tgid);
	free(d->lds);
	free(d->pylocks);
	free(d->setup_files);
	free(d);
}

/* A free-threaded interpreter has no GIL: its waits for a per-object
 * lock are told by probing its critical sections' slow path, once per
 * file for every process (bpf/pylock.bpf.h). */
static void pylock_probe(struct ig_discovery *d, pid_t pid,
			 const struct ig_pyrt_info *info)
{
	struct ig_disc_event ev = { .kind = IG_DISC_PYLOCK, .pid = pid,
				    .name = info->path, .path = info->file };
	struct stat st;
	size_t i;

	if (!d->o.tracer || stat(info->file, &st))
		return;
	for (i = 0; i < d->npylock; i++)
		if (d->pylocks[i].dev == st.st_dev && d->pylocks[i].ino == st.st_ino)
			return;
	if (!ig_grow((void **)&d->pylocks, &d->cappylock, d->npylock,
		     sizeof(*d->pylocks)))
		return;
	d->pylocks[d->npylock++] = (struct loader){ st.st_dev, st.st_ino };
	ev.err = ig_tracer_attach_pylock(d->o.tracer, info->file);
	ig_discovery_event(d, &ev);
}

/* Looks up the interpreter's _PyRuntime once per process image. */
static void pyrt_check(struct ig_discovery *d, struct dproc *p, __u64 ts)
{
	struct ig_pyrt r = {
		.h = { .type = IG_REC_PYRT, .size = sizeof(r), .tid = p->tgid,
		       .tgid = p->tgid, .ts = ts },
	};
	struct ig_pyrt_info info;

	if (p->pychecked)
		return;
	p->pychecked = true;
	p->python = false;
	if (ig_pyrt_find(p->tgid, &info))
		return;
	p->python = true;
	if (info.free_threaded)
		pylock_probe(d, p->tgid, &info);
	r.start = info.start;
	r.end = info.end;
	ig_strcpy(r.path, sizeof(r.path), info.path);
	p->pyrt = r;
	ig_discovery_record(d, &r.h);
}

/* A process forked from a Python one runs the same interpreter at the same
 * addresses until it execs: it is Python from its first record on, with
 * nothing to look up (a DataLoader's workers). */
static void pyrt_inherit(struct ig_discovery *d, const struct ig_proc *f)
{
	struct dproc *parent = ig_htab_get(&d->by_tgid, (__u64)f->ppid), *p;

	if (!parent || !parent->python || f->ppid == f->h.tgid ||
	    !(p = proc_get(d, f->h.tgid)))
		return;
	p->pychecked = p->python = true;
	p->pyrt = parent->pyrt;
	p->pyrt.h.tid = p->pyrt.h.tgid = f->h.tgid;
	p->pyrt.h.ts = f->h.ts;
	ig_discovery_record(d, &p->pyrt.h);
}

static int unprobed(struct ig_discovery *d, pid_t pid, const char *name, int err)
{
	struct ig_disc_event ev = {
		.kind = IG_DISC_UNPROBED, .pid = pid, .name = name, .err = err,
	};

	ig_discovery_event(d, &ev);
	return err;
}

/* The set-up probes of the libcuda file @dev/@ino (@lib) for every
 * process, once per file: the agent's windows (docs/design.md §7.10). */
static int setup_file(struct ig_discovery *d, const struct ig_cuda_lib *lib, dev_t dev,
		      ino_t ino, struct ig_libcuda_info *info)
{
	struct setup_file *f;
	size_t i;
	int err;

	for (i = 0; i < d->nsetup_files; i++)
		if (d->setup_files[i].dev == dev && d->setup_files[i].ino == ino) {
			*info = d->setup_files[i].info;
			return 0;
		}
	if (!ig_grow((void **)&d->setup_files, &d->capsetup_files, d->nsetup_files,
		     sizeof(*d->setup_files)))
		return -ENOMEM;
	err = ig_cuda_attach(d->o.tracer, lib, -1, IG_CUDA_SETUP, info);
	if (err)
		return err;
	f = &d->setup_files[d->nsetup_files++];
	f->dev = dev;
	f->ino = ino;
	f->info = *info;
	return 0;
}

int ig_discovery_setup_file(struct ig_discovery *d, const char *path)
{
	struct ig_libcuda_info info;
	struct ig_cuda_lib lib;
	struct stat st;

	if (!d->o.tracer || !d->o.windows)
		return 0;
	if (stat(path, &st))
		return -errno;
	ig_strcpy(lib.name, sizeof(lib.name), path);
	ig_strcpy(lib.path, sizeof(lib.path), path);
	return setup_file(d, &lib, st.st_dev, st.st_ino, &info);
}

/* The probes @want asks for (IG_CUDA_*) of @lib for @p: from those
 * attached for every process when it is that file; in the agent's
 * windows the set-up ones for every process of the file (they stay
 * between windows), the hot path for @p. */
static int probe(struct ig_discovery *d, struct dproc *p, const struct ig_cuda_lib *lib,
		 unsigned int want, struct ig_libcuda_info *info)
{
	int err;

	if (d->cuda_all.probed && d->cuda_all.dev == p->lib_dev &&
	    d->cuda_all.ino == p->lib_ino) {
		*info = d->cuda_all.info;
		p->setup = p->probed = true;
		return 0;
	}
	if (d->o.windows && (want & IG_CUDA_SETUP)) {
		err = setup_file(d, lib, p->lib_dev, p->lib_ino, info);
		if (err)
			return err;
		p->setup = true;
		p->nsetup = info->nattached;
		if (!(want &= ~IG_CUDA_SETUP))
			return 0;
	}
	err = ig_cuda_attach(d->o.tracer, lib, p->tgid, d->o.windows ? want : IG_CUDA_ALL,
			     info);
	if (err)
		return err;
	info->nattached += d->o.windows ? p->nsetup : 0;
	p->probed = true;
	p->setup = true;
	return 0;
}

/* Probes @lib for @p, once per library file and window; a negative errno
 * after an event saying why. */
static int attach_lib(struct ig_discovery *d, struct dproc *p,
		      const struct ig_cuda_lib *lib, __u64 ts)
{
	struct ig_disc_event ev = { .kind = IG_DISC_LIBCUDA, .pid = p->tgid,
				    .name = lib->name, .path = lib->path, .ts = ts };
	struct ig_libcuda_info info;
	unsigned int want;
	struct stat st;
	int err;

	if (stat(lib->path, &st))
		return unprobed(d, p->tgid, lib->name, -errno);
	if (!p->has_lib || p->lib_dev != st.st_dev || p->lib_ino != st.st_ino) {
		p->has_lib = true;
		p->probed = p->setup = p->mapped = false;
		p->lib_dev = st.st_dev;
		p->lib_ino = st.st_ino;
		if (!d->o.tracer) {	/* finding only */
			ig_discovery_event(d, &ev);
			return 0;
		}
	}
	want = (p->setup ? 0 : IG_CUDA_SETUP) | (d->detached || p->probed ? 0 : IG_CUDA_HOT);
	if (!d->o.tracer || !want) {
		ig_discovery_emit_maps(d, p, ts);
		return 0;
	}
	err = probe(d, p, lib, want, &info);
	if (err)
		return unprobed(d, p->tgid, lib->name, err);
	free(p->info);
	p->info = malloc(sizeof(info));
	if (p->info)
		*p->info = info;
	ev.nsyms = info.nsyms;
	ev.nattached = info.nattached;
	ig_discovery_event(d, &ev);
	ig_discovery_emit_libcuda(d, p->tgid, &info, ts);
	ig_discovery_emit_maps(d, p, ts);
	return 0;
}

static int attach_path(struct ig_discovery *d, struct dproc *p, const char *path,
		       __u64 ts)
{
	struct ig_cuda_lib lib;

	ig_strcpy(lib.name, sizeof(lib.name), path);
	ig_strcpy(lib.path, sizeof(lib.path), path);
	return attach_lib(d, p, &lib, ts);
}

/* libnccl, where @p maps one: probed, or said why not. */
static void nccl_look(struct ig_discovery *d, struct dproc *p, __u64 ts)
{
	struct ig_libnccl rec;
	int r = ig_nccl_look(d->o.tracer, p->tgid, &p->nccl, &d->nccl_all, &rec);

	if (r < 0)
		unprobed(d, p->tgid, rec.path, r);
	rec.h.ts = ts;
	if (r > 0 && p->nccl.probed)
		p->nccl_rec = rec;
	if (r != 0)
		ig_discovery_record(d, &rec.h);
}

int ig_discovery_add_nccl(struct ig_discovery *d, const char *path, __u64 ts)
{
	struct ig_libnccl rec;
	int err;

	if (!d->o.tracer || d->nccl_all.probed)
		return 0;
	err = ig_nccl_attach_all(d->o.tracer, path, &d->nccl_all, &rec);
	rec.h.ts = ts;
	if (!err)
		ig_discovery_record(d, &rec.h);
	return err;
}

/* libcuda as @p maps it: 0 probed, 1 not mapped (yet), negative errno
 * when it is mapped and cannot be probed. */
static int attach_mapped(struct ig_discovery *d, struct dproc *p, __u64 ts)
{
	struct ig_cuda_lib lib;
	int err = ig_cuda_find_in_maps(p->tgid, &lib);

	if ((err == -ENOENT && !lib.name[0]) || (err && ig_proc_exited(p->tgid)))
		return 1;	/* not mapped, or gone meanwhile */
	if (err)
		return unprobed(d, p->tgid, lib.name[0] ? lib.name :
				"(its maps are unreadable)", err);
	return attach_lib(d, p, &lib, ts);
}

/* Hooks the dynamic loader a process uses (once per loader file), so that
 * its later library loads are seen. */
struct loader_ctx {
	struct ig_discovery *d;
	pid_t pid;
};

static int hook_loader(const struct ig_map_entry *m, void *ctx)
{
	struct ig_discovery *d = ((struct loader_ctx *)ctx)->d;
	pid_t pid = ((struct loader_ctx *)ctx)->pid;
	struct ig_disc_event ev = { .kind = IG_DISC_NO_LD_HOOK, .pid = pid };
	char path[PATH_MAX];
	const char *base = strrchr(m->path, '/');
	struct stat st;
	size_t i;

	if (!base || strncmp(base + 1, "ld-linux", 8) || m->offset)
		return 0;
	if (ig_proc_map_path(pid, m, path, sizeof(path)) || stat(path, &st))
		return 1;
	for (i = 0; i < d->nld; i++)
		if (d->lds[i].dev == st.st_dev && d->lds[i].ino == st.st_ino)
			return 1;
	if (!ig_grow((void **)&d->lds, &d->capld, d->nld, sizeof(*d->lds)))
		return 1;
	d->lds[d->nld++] = (struct loader){ st.st_dev, st.st_ino };
	ev.err = ig_tracer_attach_ld(d->o.tracer, path);
	ev.name = m->path;
	ev.path = path;
	if (ev.err)
		ig_discovery_event(d, &ev);
	return 1;
}

void ig_discovery_hook_loaders(struct ig_discovery *d, pid_t pid)
{
	struct loader_ctx c = { d, pid };

	if (d->o.tracer)
		ig_proc_for_each_map(pid, hook_loader, &c);
}

static void watch(struct ig_discovery *d, struct dproc *p, __u64 due)
{
	if (!p->due || due < p->due)
		p->due = due;
	if (!d->next_due || due < d->next_due)
		d->next_due = due;
}

void ig_discovery_watch(struct ig_discovery *d, pid_t pid, __u64 now)
{
	struct dproc *p = proc_get(d, pid);

	if (p)
		watch(d, p, now + RESCAN_SOON_NS);
}

int ig_discovery_add(struct ig_discovery *d, pid_t pid, __u64 now)
{
	struct dproc *p = proc_get(d, pid);
	int err;

	if (!p)
		return -ENOMEM;
	pyrt_check(d, p, now);
	ig_discovery_hook_loaders(d, pid);
	nccl_look(d, p, now);
	if (d->o.libcuda_path)
		return attach_path(d, p, d->o.libcuda_path, now);
	err = attach_mapped(d, p, now);
	if (err > 0)
		watch(d, p, now + RESCAN_EVERY_NS);
	return err < 0 ? err : 0;
}

int ig_discovery_add_lib(struct ig_discovery *d, pid_t pid, const char *path,
			 __u64 now)
{
	struct dproc *p = proc_get(d, pid);

	return p ? attach_path(d, p, path, now) : -ENOMEM;
}

int ig_discovery_add_cuda_all(struct ig_discovery *d, const char *path)
{
	struct ig_cuda_lib lib;
	struct stat st;
	int err;

	if (!d->o.tracer || d->cuda_all.probed)
		return 0;
	if (stat(path, &st))
		return -errno;
	ig_strcpy(lib.name, sizeof(lib.name), path);
	ig_strcpy(lib.path, sizeof(lib.path), path);
	err = ig_cuda_attach(d->o.tracer, &lib, -1, IG_CUDA_ALL, &d->cuda_all.info);
	if (err)
		return err;
	d->cuda_all.probed = true;
	d->cuda_all.dev = st.st_dev;
	d->cuda_all.ino = st.st_ino;
	return 0;
}

/* A process that ended: forgotten, and its probes dropped if asked. */
static void gone(struct ig_discovery *d, pid_t tgid)
{
	struct dproc *p = ig_htab_get(&d->by_tgid, (__u64)tgid);
	struct ig_disc_event ev = { .kind = IG_DISC_GONE, .pid = tgid };

	if (!p)
		return;
	if (d->o.tracer && d->o.detach_on_exit && (p->probed || p->setup || p->nccl.probed))
		ig_tracer_detach_uprobes(d->o.tracer, tgid);
	proc_drop(d, p);
	ig_discovery_event(d, &ev);
}

/* A new image or a new library: the interpreter and libcuda may be in it. */
static void changed(struct ig_discovery *d, pid_t tgid, __u64 ts)
{
	struct dproc *p = proc_get(d, tgid);

	if (!p)
		return;
	p->pychecked = false;
	if (!d->o.libcuda_path)
		watch(d, p, ts + RESCAN_SOON_NS);
}

void ig_discovery_on_record(struct ig_discovery *d, const struct ig_hdr *rec)
{
	struct dproc *p;

	switch (rec->type) {
	case IG_REC_OFFCPU:
		/* the GIL test needs the interpreter before the first wait */
		if (((const struct ig_offcpu *)rec)->reason == IG_R_FUTEX &&
		    (p = proc_get(d, rec->tgid)))
			pyrt_check(d, p, rec->ts - 1);
		break;
	case IG_REC_PROC:
		switch (((const struct ig_proc *)rec)->kind) {
		case IG_PROC_EXEC:
			if ((p = ig_htab_get(&d->by_tgid, (__u64)rec->tgid)))
				p->python = false;	/* a new image */
			changed(d, rec->tgid, rec->ts);
			break;
		case IG_PROC_FORK:
			pyrt_inherit(d, (const struct ig_proc *)rec);
			if (!d->o.libcuda_path)
				ig_discovery_watch(d, rec->tgid, rec->ts);
			break;
		case IG_PROC_GROUP_EXIT:
			gone(d, rec->tgid);
			break;
		}
		break;
	case IG_REC_LIBOPEN:
		/* the interpreter may come in a library (embedding) too;
		 * looked up now, so that its stacks and the GIL are known
		 * before the first wait */
		changed(d, rec->tgid, rec->ts);
		if ((p = proc_get(d, rec->tgid)) && !p->python)
			pyrt_check(d, p, rec->ts - 1);
		if (p)
			nccl_look(d, p, rec->ts);
		break;
	}
}

/* Looks at @p's maps: hooks its loader, probes its libcuda; false when
 * there is nothing more to look for. */
static bool look(struct ig_discovery *d, struct dproc *p, __u64 now)
{
	ig_discovery_hook_loaders(d, p->tgid);
	if (ig_proc_exited(p->tgid) || attach_mapped(d, p, now) <= 0)
		return false;
	p->due = now + RESCAN_EVERY_NS;
	return true;
}

void ig_discovery_poll(struct ig_discovery *d, __u64 now)
{
	__u64 next = 0;
	size_t i;

	if (!d->next_due || d->next_due > now)
		return;
	for (i = 0; i < d->nprocs; i++) {
		struct dproc *p = d->procs[i];

		if (p->due && p->due <= now && !look(d, p, now))
			p->due = 0;
		if (p->due && (!next || p->due < next))
			next = p->due;
	}
	d->next_due = next;
}

__u64 ig_discovery_next_due(const struct ig_discovery *d)
{
	return d->next_due;
}

unsigned int ig_discovery_nprocs(const struct ig_discovery *d)
{
	return d->nprocs;
}

int ig_discovery_foreach_process(struct ig_discovery *d, ig_disc_proc_fn fn,
				 void *ctx)
{
	size_t i;
	int r;

	for (i = 0; i < d->nprocs; i++) {
		struct ig_disc_proc p = { d->procs[i]->tgid, d->procs[i]->probed,
					  d->procs[i]->python };

		if ((r = fn(&p, ctx)))
			return r;
	}
	return 0;
}
