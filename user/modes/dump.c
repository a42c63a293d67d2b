// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <string.h>
#include "modes/dump.h"
#include "util/escape.h"
#include "stream/cuda_api.h"
#include "stream/nccl_api.h"
#include "stacks/pycode.h"

typedef unsigned long long ull;

/* The target's strings, escaped: at most 256 bytes each, two at a time. */
#define ESC(i, field) ig_esc(esc[i], sizeof(esc[i]), (field), sizeof(field))
#define ESC_BUF char esc[2][IG_ESC_SIZE(256)]

static void dump_offcpu(FILE *f, const struct ig_offcpu *o)
{
	ESC_BUF;

	fprintf(f, " off=%llu wake=%llu reason=%s syscall=%d arg=%#llx flags=%#x waker=%u/%u/%s prev=%u/%s",
		(ull)o->t_off, (ull)o->t_wake, ig_rec_reason_name(o->reason), o->syscall,
		(ull)o->arg, o->flags, o->waker_tid, o->waker_tgid,
		ESC(0, o->waker_comm), o->prev_tid, ESC(1, o->prev_comm));
	if (o->flags & IG_F_IN_UNSEEN)
		fprintf(f, " in=%llu", (ull)ig_offcpu_on(o));
	if (o->flags & IG_F_DETAIL_NAME) {
		fprintf(f, " name=%s", ESC(0, o->detail.name));
	} else if (o->reason == IG_R_SOCKET) {
		char a[IG_PEER_STRLEN];

		ig_rec_fmt_peer(&o->detail.peer, a, sizeof(a));
		fprintf(f, " peer=%s", a);
	}
}

/* Python stacks name code objects of earlier records: kept for the dump. */
static struct ig_pynames *pynames;

static void dump_pystack(FILE *f, const struct ig_pystack *s)
{
	char fr[IG_ESC_SIZE(300)], esc[IG_ESC_SIZE(300)];
	int i, n;

	fprintf(f, " id=%#llx flags=%s%s%s", (ull)s->id,
		s->flags & IG_PYS_REF ? "ref" : "frames",
		s->flags & IG_PYS_TRUNC ? ",trunc" : "",
		s->flags & IG_PYS_NONE ? ",none" : "");
	if (!pynames)
		pynames = ig_pynames_new();
	if (!pynames)
		return;
	n = ig_pynames_frame(pynames, s, -1, fr, sizeof(fr));
	if (n < 0) {
		fprintf(f, " frames=?");
		return;
	}
	fprintf(f, " n=%d", n);
	for (i = 0; i < n; i++) {
		ig_pynames_frame(pynames, s, i, fr, 300);
		fprintf(f, "%s%s", i ? " <- " : " stack=", ig_esc(esc, sizeof(esc), fr, 300));
	}
}

static void dump_pycode(FILE *f, const struct ig_pycode *c)
{
	ESC_BUF;

	fprintf(f, " code=%#llx version=%#x name=%s file=%s firstline=%u ltlen=%u%s%s",
		(ull)c->code, c->version, ESC(0, c->name), ESC(1, c->file),
		c->firstline, c->ltlen, c->flags & IG_PYC_UNREAD ? " unread" : "",
		c->flags & IG_PYC_TRUNC ? " trunc" : "");
}

static void dump_cuda(FILE *f, const struct ig_cuda *c)
{
	const char *api = ig_api_name(c->api), *kind = ig_rec_cuda_kind_name(c->kind);

	fprintf(f, " kind=%s api=%s stream=%#llx handle=%#llx begin=%llu wake=%llu last_submit=%llu arg=%llu ret=%d nsub=%u flags=%#x",
		kind ? kind : "?", api ? api : "?", (ull)c->stream, (ull)c->handle,
		(ull)c->t_begin, (ull)c->t_wake, (ull)c->last_submit, (ull)c->arg,
		c->ret, c->nsub, c->flags);
}

static void dump_ustack(FILE *f, const struct ig_ustack *s)
{
	unsigned int i, n = s->nips;

	fprintf(f, " id=%#llx depth=%u flags=%s%s%s%s%s", (ull)s->id, s->depth,
		s->flags & IG_USF_SAMPLE ? "sample" : "switch",
		s->flags & IG_USF_REF ? ",ref" : "",
		s->flags & IG_USF_FULL ? ",full" : "",
		s->flags & IG_USF_LEAF ? ",leaf" : "",
		s->flags & IG_USF_END ? ",end" : "");
	if (n > IG_USTACK_DEPTH ||
	    s->h.size < offsetof(struct ig_ustack, ips) + 8 * (size_t)n)
		n = 0;
	for (i = 0; i < n; i++)
		fprintf(f, "%s%#llx", i ? "," : " ips=", (ull)s->ips[i]);
}

void ig_dump_record(FILE *f, const struct ig_hdr *r)
{
	ESC_BUF;

	fprintf(f, "%llu %s tid=%u pid=%u cpu=%u%s", (ull)r->ts,
		ig_rec_type_name(r->type), r->tid, r->tgid, IG_HDR_CPU(r->cpu),
		r->cpu & IG_HDR_LOST_BEFORE ? " lost_before" : "");
	switch (r->type) {
	case IG_REC_PROC: {
		const struct ig_proc *p = (const void *)r;
		const char *kind = ig_rec_proc_kind_name(p->kind);

		if (kind)
			fprintf(f, " kind=%s", kind);
		else
			fprintf(f, " kind=%u", p->kind);
		fprintf(f, " ppid=%u comm=%s name=%s", p->ppid, ESC(0, p->comm),
			ESC(1, p->name));
		break;
	}
	case IG_REC_OFFCPU:
		dump_offcpu(f, (const void *)r);
		break;
	case IG_REC_BIO: {
		const struct ig_bio *b = (const void *)r;

		fprintf(f, " issue=%llu dev=%u:%u sector=%llu bytes=%u op=%u error=%d",
			(ull)b->t_issue, IG_DEV_MAJOR(b->dev), IG_DEV_MINOR(b->dev),
			(ull)b->sector, b->bytes, b->op, b->error);
		break;
	}
	case IG_REC_CUDA:
		dump_cuda(f, (const void *)r);
		break;
	case IG_REC_SAMPLE: {
		const struct ig_sample *x = (const void *)r;

		fprintf(f, " ip=%#llx%s%s%s", (ull)x->ip, x->flags & IG_SF_KERNEL ? " kernel" : "",
			x->flags & IG_SF_UPROBE ? " uprobe" : "",
			x->flags & IG_SF_FAULT ? " fault" : "");
		break;
	}
	case IG_REC_LIBOPEN:
		break;
	case IG_REC_META: {
		const struct ig_meta *m = (const void *)r;

		fprintf(f, " version=%u host=%s kernel=%s ncpus=%u", m->version,
			ESC(0, m->host), ESC(1, m->kernel), m->ncpus);
		fprintf(f, " command=%s", ESC(0, m->command));
		if (r->size >= sizeof(*m) && m->piece)
			fprintf(f, " piece=%u start_nrec=%u run_id=%llu", m->piece,
				m->start_nrec, (unsigned long long)m->run_id);
		break;
	}
	case IG_REC_TASK: {
		const struct ig_task *t = (const void *)r;

		fprintf(f, " ppid=%u comm=%s exe=%s", t->ppid, ESC(0, t->comm),
			ESC(1, t->exe));
		break;
	}
	case IG_REC_PYRT: {
		const struct ig_pyrt *p = (const void *)r;

		fprintf(f, " start=%#llx end=%#llx path=%s", (ull)p->start,
			(ull)p->end, ESC(0, p->path));
		break;
	}
	case IG_REC_STATS: {
		const struct ig_stats *s = (const void *)r;
		int i;

		fprintf(f, " events=%llu drops=%llu map_full=%llu cuda_hits=%llu launches=%llu user_lost=%llu",
			(ull)s->stat[IG_STAT_EVENTS], (ull)s->stat[IG_STAT_DROPS],
			(ull)s->stat[IG_STAT_MAP_FULL], (ull)s->stat[IG_STAT_CUDA_HITS],
			(ull)s->stat[IG_STAT_LAUNCHES], (ull)s->user_lost);
		for (i = 1; i < IG_API__MAX; i++)
			if (s->api_hits[i])
				fprintf(f, " %s=%llu", ig_api_name(i), (ull)s->api_hits[i]);
		break;
	}
	case IG_REC_END: {
		const struct ig_end *e = (const void *)r;
		const char *why = ig_rec_stop_reason_name(e->reason);

		fprintf(f, " records=%llu reason=%s", (ull)e->nrecords, why ? why : "?");
		break;
	}
	case IG_REC_LIBCUDA: {
		const struct ig_libcuda *l = (const void *)r;

		fprintf(f, " attached=%u symbols=%u version=%s path=%s",
			l->nattached, l->nsyms, ESC(0, l->version), ESC(1, l->path));
		break;
	}
	case IG_REC_NCCL:
		ig_nccl_dump(f, (const struct ig_nccl *)r);
		break;
	case IG_REC_LIBNCCL: {
		const struct ig_libnccl *l = (const void *)r;

		fprintf(f, " attached=%u symbols=%u static=%u path=%s",
			l->nattached, l->nsyms, l->is_static, ESC(0, l->path));
		break;
	}
	case IG_REC_IDENT: {
		const struct ig_ident *d = (const void *)r;

		fprintf(f, " pod_uid=%s pod=%s", ESC(0, d->pod_uid), ESC(1, d->pod));
		fprintf(f, " namespace=%s container=%s", ESC(0, d->namespace),
			ESC(1, d->container));
		fprintf(f, " runtime=%s", ESC(0, d->runtime));
		break;
	}
	case IG_REC_MAPPING: {
		const struct ig_mapping *m = (const void *)r;

		fprintf(f, " start=%#llx end=%#llx offset=%#llx path=%s",
			(ull)m->start, (ull)m->end, (ull)m->offset, ESC(0, m->path));
		break;
	}
	case IG_REC_PYSTACK:
	case IG_REC_PYCODE:
		if (!pynames)
			pynames = ig_pynames_new();
		if (pynames)
			ig_pynames_feed(pynames, r);
		if (r->type == IG_REC_PYSTACK)
			dump_pystack(f, (const void *)r);
		else
			dump_pycode(f, (const void *)r);
		break;
	case IG_REC_USTACK:
		dump_ustack(f, (const struct ig_ustack *)r);
		break;
	case IG_REC_USYM: {
		const struct ig_usym *u = (const void *)r;
		size_t len = r->size - sizeof(*u);

		if (u->len < len)
			len = u->len;
		fprintf(f, " ip=%#llx flags=%#x name=%s", (ull)u->ip, u->flags,
			ig_esc(esc[0], sizeof(esc[0]), u->name, len));
		break;
	}
	case IG_REC_NVML: {
		const struct ig_nvml *n = (const void *)r;

		fprintf(f, " device=%u util=%u mem=%u", n->device, n->util_pct, n->mem_pct);
		break;
	}
	case IG_REC_NVWIN: {
		const struct ig_nvwin *n = (const void *)r;

		fprintf(f, " device=%u kind=%u nproc=%u t0=%llu t1=%llu busy_ppm=%u quant_ppm=%u",
			n->device, n->kind, n->nproc, (ull)n->t0, (ull)n->t1,
			n->busy_ppm, n->quant_ppm);
		break;
	}
	case IG_REC_TSTATE: {
		const struct ig_tstate *s = (const void *)r;
		char wchan[2 * sizeof(s->wchan)], name[2 * IG_NAME_LEN];

		fprintf(f, " read=%llu state=%c syscall=%d reason=%s arg=0x%llx flags=0x%x wchan=%s name=%s",
			(ull)s->read_ns, s->state ? s->state : '?', s->syscall,
			ig_rec_reason_name(s->reason), (ull)s->arg, s->oflags,
			ig_esc(wchan, sizeof(wchan), s->wchan, sizeof(s->wchan)),
			ig_esc(name, sizeof(name), (s->oflags & IG_F_DETAIL_NAME) ?
			       s->detail.name : "", IG_NAME_LEN));
		break;
	}
	case IG_REC_LAUNCHES: {
		const struct ig_launches *l = (const void *)r;
		__u32 i, n = (r->size - offsetof(struct ig_launches, e)) /
			     sizeof(struct ig_launch);

		fprintf(f, " stream=%#llx n=%u", (ull)l->stream, l->n);
		for (i = 0; i < l->n && i < n && i < IG_LBUF; i++)
			fprintf(f, " %llu:%#llx:%u:%u", (ull)l->e[i].ts,
				(ull)l->e[i].func, l->e[i].grid, l->e[i].block);
		break;
	}
	case IG_REC_GPUMAP: {
		const struct ig_gpumap *g = (const void *)r;
		__u32 i;

		for (i = 0; i < g->n && i < IG_GPUMAP_MAX; i++)
			fprintf(f, "%s%d", i ? "," : " devices=", g->dev[i]);
		break;
	}
	case IG_REC_GPUDEV: {
		const struct ig_gpudev *g = (const void *)r;

		fprintf(f, " device=%d source=%s gpus=%u rank=%d uuid=%s", g->dev,
			ig_rec_gpudev_src_name(g->src), g->ngpus, g->rank,
			ig_esc(esc[0], sizeof(esc[0]), g->uuid,
			       strnlen(g->uuid, sizeof(g->uuid))));
		break;
	}
	}
	fputc('\n', f);
}
