// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "pyframes.h"
#include "tracer.h"
#include "util.h"

#define N IG_PYO_NONE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Per minor version, from CPython's Include/cpython/pystate.h,
 * Include/internal/pycore_{runtime,interp,frame}.h and code.h at
 * v3.9.18, v3.10.13, v3.11.7, v3.12.1, v3.13.0 (x86-64, release builds). */
struct layout {
	struct ig_py_offsets o;
	struct ig_py_codelayout l;
};

static const struct layout layouts[] = {
	{ { 0, 0x0309, 32, 8, 8, 176, 0, 24, N, 24, 32, 104, 0, N, N },
	  { 0x0309, 40, 112, 0, 104, 120, 0, 48, 72 } },
	{ { 0, 0x030a, 32, 8, 8, 176, 0, 24, N, 24, 32, 96, 0, N, N },
	  { 0x030a, 40, 112, 0, 104, 120, 0, 48, 72 } },
	{ { 0, 0x030b, 40, 16, 8, 160, 1, 56, 8, 48, 32, 56, 1, 69, N },
	  { 0x030b, 72, 120, 128, 112, 136, 184, 48, 72 } },
	{ { 0, 0x030c, 40, 72, 8, 144, 1, 56, 0, 8, 0, 56, 1, 70, 3 },
	  { 0x030c, 68, 120, 128, 112, 136, 192, 40, 56 } },
	{ { 0, 0x030d, 632, 7344, 8, 160, 1, 72, N, 8, 0, 56, 1, 70, 3 },
	  { 0x030d, 68, 120, 128, 112, 136, 200, 40, 56 } },
};

int ig_py_read_mem(void *pidp, __u64 addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(*(pid_t *)pidp, &l, 1, &r, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* "python3.11", "libpython3.11.so.1.0", "libpython3.9d.so": 0x030b. */
static unsigned int version_of_path(const char *path)
{
	const char *b = strrchr(path, '/'), *p;
	unsigned int minor;

	b = b ? b + 1 : path;
	p = strstr(b, "python3.");
	if (!p || sscanf(p + 8, "%u", &minor) != 1)
		return 0;
	return 0x0300 | minor;
}

/* 3.13+: _PyRuntime begins with _Py_DebugOffsets ("xdebugpy", then
 * PY_VERSION_HEX); the fields the walker needs are read from it. */
static int debug_offsets(pid_t pid, __u64 rt, struct layout *d)
{
	__u64 v[67];

	if (ig_py_read_mem(&pid, rt, v, sizeof(v)) || memcmp(v, "xdebugpy", 8))
		return -ENOENT;
	if ((v[1] >> 16) != 0x030d)
		return -ENOTSUP;	/* the struct changes with the version */
	if (v[2])
		return -ENOTSUP;	/* free-threaded build */
	d->o.rt_interp_head = v[40 / 8];
	d->o.is_threads_head = v[72 / 8];
	d->o.ts_next = v[168 / 8];
	d->o.ts_frame = v[184 / 8];
	d->o.ts_match = v[200 / 8];
	d->o.fr_back = v[232 / 8];
	d->o.fr_code = v[240 / 8];
	d->o.fr_instr = v[248 / 8];
	d->o.fr_owner = v[264 / 8];
	d->l.filename = v[280 / 8];
	d->l.name = v[288 / 8];
	d->l.qualname = v[296 / 8];
	d->l.linetable = v[304 / 8];
	d->l.firstlineno = v[312 / 8];
	d->l.adaptive = v[344 / 8];
	return 0;
}

int ig_pyframes_layout(pid_t pid, const struct ig_pyrt_info *rt,
		       struct ig_py_offsets *o, struct ig_py_codelayout *l)
{
	unsigned int ver = version_of_path(rt->path);
	struct layout d;
	size_t i;
	int err;

	err = debug_offsets(pid, rt->start, &(struct layout){ 0 });
	if (!err || err == -ENOTSUP)
		ver = err ? 0 : 0x030d;
	for (i = 0; i < ARRAY_SIZE(layouts); i++)
		if (layouts[i].o.version == ver)
			break;
	if (i == ARRAY_SIZE(layouts))
		return -ENOTSUP;
	d = layouts[i];
	if (ver == 0x030d && debug_offsets(pid, rt->start, &d))
		return -ENOTSUP;
	d.o.runtime = rt->start;
	*o = d.o;
	*l = d.l;
	return 0;
}

struct seen;

struct pyproc {
	pid_t tgid;
	struct ig_py_codelayout l;
	struct seen *seen;	/* code objects sent, open addressing */
	size_t nseen, capseen;	/* capseen: a power of two */
};

struct ig_pyframes {
	struct ig_tracer *t;
	struct pyproc *p;
	size_t n, cap;
};

struct ig_pyframes *ig_pyframes_new(struct ig_tracer *t)
{
	struct ig_pyframes *p = calloc(1, sizeof(*p));

	if (p)
		p->t = t;
	return p;
}

void ig_pyframes_free(struct ig_pyframes *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++)
		free(p->p[i].seen);
	free(p->p);
	free(p);
}

static struct pyproc *proc_of(struct ig_pyframes *p, pid_t tgid)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->p[i].tgid == tgid)
			return &p->p[i];
	return NULL;
}

bool ig_pyframes_tracked(struct ig_pyframes *p, pid_t tgid)
{
	return p && proc_of(p, tgid);
}

int ig_pyframes_track(struct ig_pyframes *p, pid_t tgid,
		      const struct ig_pyrt_info *rt)
{
	struct ig_py_offsets o;
	struct ig_py_codelayout l;
	struct pyproc *pp;
	int err;

	err = ig_pyframes_layout(tgid, rt, &o, &l);
	if (err)
		return err;
	pp = proc_of(p, tgid);
	if (!pp) {
		if (!ig_grow((void **)&p->p, &p->cap, p->n, sizeof(*p->p)))
			return -ENOMEM;
		pp = &p->p[p->n++];
		memset(pp, 0, sizeof(*pp));
		pp->tgid = tgid;
	}
	pp->l = l;
	return ig_tracer_py_offsets(p->t, tgid, &o);
}

void ig_pyframes_forget(struct ig_pyframes *p, pid_t tgid)
{
	struct pyproc *pp = p ? proc_of(p, tgid) : NULL;

	if (!pp)
		return;
	ig_tracer_py_offsets(p->t, tgid, NULL);
	free(pp->seen);
	*pp = p->p[--p->n];
}

struct seen {
	__u64 code, sig;
};

/* What tells one code object from a later one at the same address (the
 * first freed, its memory reused): its name, file and line table objects
 * and first line.  0: unreadable. */
static __u64 code_sig(const struct pyproc *pp, pid_t pid, __u64 code)
{
	const struct ig_py_codelayout *l = &pp->l;
	unsigned char b[256];
	__u32 f[5] = { l->name, l->qualname, l->filename, l->linetable,
		       l->firstlineno };
	__u64 h = 0xcbf29ce484222325ULL, v;
	size_t i;

	if (ig_py_read_mem(&pid, code, b, sizeof(b)))
		return 0;
	for (i = 0; i < 5; i++) {
		if (f[i] > sizeof(b) - 8)
			continue;
		memcpy(&v, b + f[i], sizeof(v));
		if (i == 4)
			v &= 0xffffffff;
		h = (h ^ v) * 0x100000001b3ULL;
	}
	return h ? h : 1;
}

static bool seen_grow(struct pyproc *pp)
{
	size_t cap = pp->capseen ? 2 * pp->capseen : 256, i, m;
	struct seen *old = pp->seen, *s = calloc(cap, sizeof(*s));

	if (!s)
		return false;
	for (i = 0; i < pp->capseen; i++)
		for (m = old[i].code * 0x9e3779b97f4a7c15ULL; old[i].code; m++)
			if (!s[m & (cap - 1)].code) {
				s[m & (cap - 1)] = old[i];
				break;
			}
	pp->seen = s;
	pp->capseen = cap;
	free(old);
	return true;
}

/* Whether @code with @sig is news: not sent yet, or sent for another
 * object that lived at the same address. */
static bool seen_add(struct pyproc *pp, __u64 code, __u64 sig)
{
	size_t m;

	if (2 * (pp->nseen + 1) > pp->capseen && !seen_grow(pp))
		return true;	/* sent again rather than lost */
	for (m = code * 0x9e3779b97f4a7c15ULL;; m++) {
		struct seen *e = &pp->seen[m & (pp->capseen - 1)];

		if (e->code == code) {
			if (e->sig == sig)
				return false;
			e->sig = sig;
			return true;
		}
		if (!e->code) {
			*e = (struct seen){ code, sig };
			pp->nseen++;
			return true;
		}
	}
}

void ig_pyframes_on_stack(struct ig_pyframes *p, const struct ig_hdr *rec,
			  ig_pyemit_fn emit, void *ctx)
{
	const struct ig_pystack *s = (const void *)rec;
	struct pyproc *pp = proc_of(p, rec->tgid);
	static struct ig_pycode c;
	pid_t pid = rec->tgid;
	int i;

	if (!pp || rec->size < IG_PYSTACK_SIZE(s->nframes))
		return;
	for (i = 0; i < s->nframes && i < IG_PY_DEPTH; i++) {
		if (!s->f[i].code ||
		    !seen_add(pp, s->f[i].code, code_sig(pp, pid, s->f[i].code)))
			continue;
		ig_pycode_read(&pp->l, ig_py_read_mem, &pid, s->f[i].code, &c);
		c.h = (struct ig_hdr){ .type = IG_REC_PYCODE,
				       .size = IG_PYCODE_SIZE(c.ltlen),
				       .cpu = rec->cpu & 0xffff, .tid = rec->tid,
				       .tgid = rec->tgid, .ts = rec->ts };
		emit(&c.h, ctx);
	}
}
