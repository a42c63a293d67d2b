// SPDX-License-Identifier: GPL-2.0
/*
 * What discovery says about a process, in the record stream, when it is
 * found and again at each of the agent's windows (ig_discovery_reannounce,
 * discovery_host.c): its libcuda and what was probed there, the driver's
 * code in its mappings, its libnccl, where its _PyRuntime lives.  Calls
 * nothing in discovery.c or discovery_host.c: both call here.
 */
#include "host/procfs.h"
#include "probes/discovery_int.h"
#include "util/util.h"

void ig_discovery_emit_pyrt(struct ig_discovery *d, struct dproc *p, __u64 ts)
{
	struct ig_pyrt r = p->pyrt;

	if (!p->pychecked || !p->python)
		return;
	r.h.ts = ts;
	ig_discovery_record(d, &r.h);
}

struct cuda_maps {
	struct ig_discovery *d;
	struct dproc *p;
	__u64 ts;
	bool found;
};

static int emit_cuda_map(const struct ig_map_entry *m, void *ctx)
{
	struct cuda_maps *c = ctx;
	pid_t pid = c->p->tgid;
	struct ig_mapping r = {
		.h = { .type = IG_REC_MAPPING, .size = sizeof(r), .tid = pid,
		       .tgid = pid, .ts = c->ts },
		.start = m->start, .end = m->end, .offset = m->offset,
	};

	if (m->inode != c->p->lib_ino || m->perms[2] != 'x')
		return 0;
	ig_strcpy(r.path, sizeof(r.path), m->path);
	ig_discovery_record(c->d, &r.h);
	c->found = true;
	return 0;
}

/* The driver's code in the process, so samples there count as driver
 * time; once it is mapped (a launched command maps it after exec). */
void ig_discovery_emit_maps(struct ig_discovery *d, struct dproc *p, __u64 ts)
{
	struct cuda_maps c = { d, p, ts, false };

	if (p->mapped)
		return;
	ig_proc_for_each_map(p->tgid, emit_cuda_map, &c);
	p->mapped = c.found;
}

void ig_discovery_emit_libcuda(struct ig_discovery *d, pid_t pid,
			 const struct ig_libcuda_info *info, __u64 ts)
{
	struct ig_libcuda rec = {
		.h = { .type = IG_REC_LIBCUDA, .size = sizeof(rec),
		       .tid = pid, .tgid = pid, .ts = ts },
		.nsyms = info->nsyms, .nattached = info->nattached,
	};

	ig_strcpy(rec.version, sizeof(rec.version), info->version);
	ig_strcpy(rec.path, sizeof(rec.path), info->path);
	ig_discovery_record(d, &rec.h);
}

void ig_discovery_emit_libnccl(struct ig_discovery *d, struct dproc *p, __u64 ts)
{
	struct ig_libnccl rec = p->nccl_rec;

	if (!p->nccl.probed || rec.h.type != IG_REC_LIBNCCL)
		return;
	rec.h.ts = ts;
	ig_discovery_record(d, &rec.h);
}
