// SPDX-License-Identifier: GPL-2.0
/* CPython layouts by version (user/probes/pyframes.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include "probes/pyframes.h"

#define N IG_PYO_NONE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Per minor version before 3.13 (which publish no offsets), from CPython's
 * Include/cpython/pystate.h, Include/internal/pycore_{runtime,interp,frame}.h
 * and code.h at v3.9.18, v3.10.13, v3.11.7, v3.12.1 (x86-64, release
 * builds). */
struct layout {
	struct ig_py_offsets o;
	struct ig_py_codelayout l;
};

static const struct layout layouts[] = {
	{ { 0, 0x0309, 32, 8, 8, 176, 0, 24, N, 24, 32, 104, 0, N, N, 0, 0, 0, 0 },
	  { 0x0309, 40, 112, 0, 104, 120, 0, 48, 72, 0, 0, 0, 0, 0, 0, 0 } },
	{ { 0, 0x030a, 32, 8, 8, 176, 0, 24, N, 24, 32, 96, 0, N, N, 0, 0, 0, 0 },
	  { 0x030a, 40, 112, 0, 104, 120, 0, 48, 72, 0, 0, 0, 0, 0, 0, 0 } },
	{ { 0, 0x030b, 40, 16, 8, 160, 1, 56, 8, 48, 32, 56, 1, 69, N, 0, 0, 0, 0 },
	  { 0x030b, 72, 120, 128, 112, 136, 184, 48, 72, 0, 0, 0, 0, 0, 0, 0 } },
	{ { 0, 0x030c, 40, 72, 8, 144, 1, 56, 0, 8, 0, 56, 1, 70, 3, 0, 0, 0, 0 },
	  { 0x030c, 68, 120, 128, 112, 136, 192, 40, 56, 0, 0, 0, 0, 0, 0, 0 } },
};

int ig_pylayout_read_mem(void *pidp, __u64 addr, void *buf, size_t len)
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

/* 3.13+: _PyRuntime begins with _Py_DebugOffsets ("xdebugpy", PY_VERSION_HEX,
 * the free-threaded flag, then the offsets of the runtime's, interpreter's,
 * thread's, frame's and code object's fields, each group after its struct's
 * size).  The struct itself grows with the versions: where each field the
 * walker needs sits in it, per layout of the struct (CPython's
 * Include/internal/pycore_debug_offsets.h at v3.13.0 and v3.14.0; 3.15's as
 * Debian's 3.15.2 publishes it, each field found by its value against
 * 3.14's and the live thread state).  A later version is read as the last
 * one known, and checked against its live interpreter (live_sane) before
 * it is used; every version against its own sizes (offsets_sane). */
struct dbg_at {
	__u16 minor;		/* first minor version with this layout */
	__u16 interp_head, is_size, threads_head, ts_size, ts_next, ts_interp,
	      ts_frame, ts_ntid, fr_size, fr_back, fr_exec, fr_instr, fr_owner,
	      co_size, co_file, co_name, co_qual, co_table, co_first, co_adaptive,
	      uni_ascii;
	__u16 len;		/* bytes of the struct read */
	/* What a free-threaded build needs besides (its object headers are
	 * not a GIL build's; 3.14 adds thread-local bytecode); 0: where it
	 * sits in this version's struct is not known, and a free-threaded
	 * build of it is not walked. */
	__u16 ob_size, ob_type, ty_size, tp_name, by_size, by_len, by_sval,
	      uni_size, uni_state, uni_len;
	__u16 uni_kind;		/* the state's first bit of the kind: 2 after a
				 * 2-bit interned, 8 after 3.14t's byte */
	__u16 gil_rs, gil_on;	/* the interpreter's _gil, its enabled flag in
				 * it (3.14); 0: not read */
	__u16 fr_tlbc, co_tlbc;	/* 0 too where the version has none (3.13) */
};

static const struct dbg_at dbg_ats[] = {
	{ 13, 40, 48, 72, 152, 168, 176, 184, 200, 224, 232, 240, 248, 264,
	  272, 280, 288, 296, 304, 312, 344, 560, 584,
	  352, 360, 368, 376, 512, 520, 528, 536, 544, 552, 2, 0, 0, 0, 0 },
	{ 14, 40, 48, 72, 176, 192, 200, 208, 224, 248, 256, 264, 272, 288,
	  312, 320, 328, 336, 344, 352, 384, 640, 760,
	  400, 408, 416, 424, 592, 600, 608, 616, 624, 632, 8, 128, 136, 304, 392 },
	{ 15, 40, 48, 72, 176, 192, 200, 208, 248, 312, 320, 328, 336, 352,
	  376, 384, 392, 400, 408, 416, 448, 736, 744,
	  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
};

#define DBG_MAX	800

static __u64 at(const unsigned char *b, __u16 off)
{
	__u64 v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static const struct dbg_at *dbg_at_of(unsigned int minor)
{
	size_t i = ARRAY_SIZE(dbg_ats);

	while (i-- > 0)
		if (minor >= dbg_ats[i].minor)
			return &dbg_ats[i];
	return NULL;
}

/* Each field inside its struct, and the frame's inside what the kernel
 * walker copies of a frame (IG_PY_FRAME_READ). */
static const char *offsets_sane(const struct dbg_at *a, const unsigned char *b,
				__u64 rt_size)
{
	__u64 is = at(b, a->is_size), ts = at(b, a->ts_size), co = at(b, a->co_size);
	const __u16 tsf[] = { a->ts_next, a->ts_interp, a->ts_frame, a->ts_ntid };
	const __u16 frf[] = { a->fr_back, a->fr_exec, a->fr_instr };
	const __u16 cof[] = { a->co_file, a->co_name, a->co_qual, a->co_table,
			      a->co_first, a->co_adaptive };
	size_t i;

	if (at(b, a->interp_head) + 8 > rt_size || is > (1u << 20) ||
	    at(b, a->threads_head) + 8 > is)
		return "runtime or interpreter";
	for (i = 0; i < ARRAY_SIZE(tsf); i++)
		if (ts > (1u << 16) || at(b, tsf[i]) + 8 > ts)
			return "thread state";
	for (i = 0; i < ARRAY_SIZE(frf); i++)
		if (at(b, frf[i]) + 8 > IG_PY_FRAME_READ)
			return "frame";
	if (at(b, a->fr_owner) + 1 > IG_PY_FRAME_READ)
		return "frame";
	for (i = 0; i < ARRAY_SIZE(cof); i++)
		if (co > 4096 || at(b, cof[i]) + 8 > co)
			return "code object";
	if (at(b, a->uni_ascii) < 32 || at(b, a->uni_ascii) > 64)
		return "str object";
	return NULL;
}

/* A free-threaded build's object headers and bytecode copies, each field
 * inside its struct's published size. */
static const char *ft_sane(const struct dbg_at *a, const unsigned char *b)
{
	if (!a->ob_type)
		return "free-threaded";
	if (at(b, a->ob_size) < 16 || at(b, a->ob_size) > 64 ||
	    at(b, a->ob_type) + 8 > at(b, a->ob_size) ||
	    at(b, a->ty_size) > 4096 || at(b, a->tp_name) + 8 > at(b, a->ty_size))
		return "object header";
	if (at(b, a->by_size) > 256 || at(b, a->by_len) + 8 > at(b, a->by_size) ||
	    at(b, a->by_sval) > at(b, a->by_size) ||
	    at(b, a->uni_size) > 256 || at(b, a->uni_len) + 8 > at(b, a->uni_size) ||
	    at(b, a->uni_state) + 4 > at(b, a->uni_size))
		return "bytes or str object";
	if (a->fr_tlbc && (at(b, a->fr_tlbc) < 8 ||
			   at(b, a->fr_tlbc) + 4 > IG_PY_FRAME_READ ||
			   at(b, a->co_tlbc) < 8 ||
			   at(b, a->co_tlbc) + 8 > at(b, a->co_size)))
		return "thread-local bytecode";
	return NULL;
}

/* The interpreter's first thread points back at it and holds a kernel
 * thread id, and the first Python frame of its stack runs a code object:
 * the offsets are the ones the struct was read as.  Memory that cannot be
 * read, or a thread without frames, says nothing against them. */
static bool live_sane(ig_py_read_fn rd, void *ctx, const struct ig_py_offsets *o,
		      const struct ig_py_codelayout *l, __u64 ts_interp)
{
	__u64 is, ts, v, fr, code, type, tp_name;
	unsigned char owner;
	char name[8];
	int i;

	if (rd(ctx, o->runtime + o->rt_interp_head, &is, 8) || !is ||
	    rd(ctx, is + o->is_threads_head, &ts, 8) || !ts ||
	    rd(ctx, ts + ts_interp, &v, 8))
		return true;
	if (v != is)
		return false;
	if (!rd(ctx, ts + o->ts_match, &v, 8) && (!v || v > (1u << 22)))
		return false;	/* above PID_MAX_LIMIT */
	if (rd(ctx, ts + o->ts_frame, &fr, 8))
		return true;
	for (i = 0; i < 8 && fr; i++) {
		if (rd(ctx, fr + o->fr_owner, &owner, 1) ||
		    rd(ctx, fr + o->fr_code, &code, 8))
			return true;
		if (owner < o->owner_cstack)
			break;
		if (rd(ctx, fr + o->fr_back, &fr, 8))
			return true;
	}
	if (!fr || i == 8)
		return true;
	code &= ~7ULL;		/* a 3.14+ _PyStackRef's tag */
	if (rd(ctx, code + l->ob_type, &type, 8) || rd(ctx, type + l->tp_name, &tp_name, 8) ||
	    rd(ctx, tp_name, name, 5))
		return false;
	return !memcmp(name, "code", 5);
}

static void fill(const struct dbg_at *a, const unsigned char *b, struct layout *d,
		 unsigned int ver)
{
	d->o = (struct ig_py_offsets){
		.version = ver, .rt_interp_head = at(b, a->interp_head),
		.is_threads_head = at(b, a->threads_head), .ts_next = at(b, a->ts_next),
		.ts_match = at(b, a->ts_ntid), .match_tid = 1,
		.ts_frame = at(b, a->ts_frame), .cf_current = N,
		.fr_back = at(b, a->fr_back), .fr_code = at(b, a->fr_exec),
		.fr_instr = at(b, a->fr_instr), .instr_ptr = 1,
		.fr_owner = at(b, a->fr_owner),
		/* from 3.12 the owners from FRAME_OWNED_BY_CSTACK (3.12, 3.13)
		 * or FRAME_OWNED_BY_INTERPRETER (3.14) on are not Python's */
		.owner_cstack = 3,
	};
	d->l = (struct ig_py_codelayout){
		.version = ver, .firstlineno = at(b, a->co_first),
		.name = at(b, a->co_name), .qualname = at(b, a->co_qual),
		.filename = at(b, a->co_file), .linetable = at(b, a->co_table),
		.adaptive = at(b, a->co_adaptive), .ascii_size = at(b, a->uni_ascii),
		/* PyCompactUnicodeObject: utf8_length and utf8 after it */
		.compact_size = at(b, a->uni_ascii) + 16,
	};
	ig_pycode_gil_objects(&d->l);
	if (!at(b, 16))
		return;
	d->l.ob_type = at(b, a->ob_type);
	d->l.tp_name = at(b, a->tp_name);
	d->l.bytes_size = at(b, a->by_len);
	d->l.bytes_sval = at(b, a->by_sval);
	d->l.uni_length = at(b, a->uni_len);
	d->l.uni_state = at(b, a->uni_state);
	d->l.uni_kind = a->uni_kind;
	if (a->fr_tlbc) {
		d->o.fr_tlbc = at(b, a->fr_tlbc);
		d->o.co_tlbc = at(b, a->co_tlbc);
		d->o.co_adaptive = at(b, a->co_adaptive);
	}
}

/* A free-threaded interpreter may turn its GIL on while it runs (an
 * extension module that does not declare it runs without, or PYTHON_GIL=1):
 * whether the main interpreter's is on now; -1: cannot tell. */
static int gil_on(ig_py_read_fn rd, void *ctx, const struct dbg_at *a,
		  const unsigned char *b, __u64 runtime)
{
	__u64 is;
	int on;

	if (!a->gil_on || rd(ctx, runtime + at(b, a->interp_head), &is, 8) || !is ||
	    at(b, a->gil_rs) > (1u << 20) ||
	    rd(ctx, is + at(b, a->gil_rs) + at(b, a->gil_on), &on, sizeof(on)))
		return -1;
	return on != 0;
}

/* -ENOENT: no debug offsets (before 3.13); -ENOTSUP with @info->why;
 * -EFAULT: its memory cannot be read. */
static int debug_offsets(ig_py_read_fn rd, void *ctx, const struct ig_pyrt_info *rt,
			 struct layout *d, struct ig_pybuild *info)
{
	unsigned char b[DBG_MAX];
	const struct dbg_at *a;
	const char *bad;
	__u64 ver;

	if (rd(ctx, rt->start, b, 24))
		return -EFAULT;	/* gone, or not its memory */
	if (memcmp(b, "xdebugpy", 8))
		return -ENOENT;
	ver = at(b, 8);
	info->hexversion = ver;
	info->published = true;
	info->free_threaded = at(b, 16) != 0;
	a = (ver >> 24) == 3 ? dbg_at_of((ver >> 16) & 0xff) : NULL;
	if (!a) {
		snprintf(info->why, sizeof(info->why), "its debug offsets name no known version");
		return -ENOTSUP;
	}
	if (rd(ctx, rt->start, b, a->len)) {
		snprintf(info->why, sizeof(info->why), "its debug offsets cannot be read");
		return -ENOTSUP;
	}
	bad = offsets_sane(a, b, rt->end > rt->start ? rt->end - rt->start : 1u << 20);
	if (!bad && info->free_threaded)
		bad = ft_sane(a, b);
	if (bad && info->free_threaded && !a->ob_type) {
		snprintf(info->why, sizeof(info->why),
			 "a free-threaded build of 3.%u: where its debug offsets keep the object headers is not known",
			 (unsigned int)((ver >> 16) & 0xff));
		return -ENOTSUP;
	}
	if (bad) {
		snprintf(info->why, sizeof(info->why),
			 "its debug offsets, read as 3.%u's, give a %s layout idlegap cannot walk",
			 a->minor, bad);
		return -ENOTSUP;
	}
	fill(a, b, d, 0x0300 | ((ver >> 16) & 0xff));
	d->o.runtime = rt->start;
	info->gil_on = info->free_threaded ? gil_on(rd, ctx, a, b, rt->start) : 1;
	/* a version whose struct is known is not second-guessed by a live
	 * state in flux (a child just forked frees its parent's threads) */
	if (a->minor != ((ver >> 16) & 0xff) &&
	    !live_sane(rd, ctx, &d->o, &d->l, at(b, a->ts_interp))) {
		snprintf(info->why, sizeof(info->why),
			 "its debug offsets, read as 3.%u's, do not match its live thread states",
			 a->minor);
		return -ENOTSUP;
	}
	return 0;
}

int ig_pylayout_find(ig_py_read_fn rd, void *ctx, const struct ig_pyrt_info *rt,
		     struct ig_py_offsets *o, struct ig_py_codelayout *l,
		     struct ig_pybuild *info)
{
	struct ig_pybuild none;
	unsigned int ver;
	struct layout d;
	size_t i;
	int err;

	info = info ? info : &none;
	memset(info, 0, sizeof(*info));
	err = debug_offsets(rd, ctx, rt, &d, info);
	if (err != -ENOENT) {
		if (err)
			return err;
		d.o.runtime = rt->start;
		*o = d.o;
		*l = d.l;
		return 0;
	}
	ver = version_of_path(rt->path);
	info->hexversion = ver << 16;
	for (i = 0; i < ARRAY_SIZE(layouts); i++)
		if (layouts[i].o.version == ver && ver < 0x030d)
			break;
	if (i == ARRAY_SIZE(layouts)) {
		snprintf(info->why, sizeof(info->why), ver ? "no layout for 3.%u" :
			 "no version in its file name", ver & 0xff);
		return -ENOTSUP;
	}
	d = layouts[i];
	ig_pycode_gil_objects(&d.l);
	info->gil_on = 1;
	d.o.runtime = rt->start;
	*o = d.o;
	*l = d.l;
	return 0;
}
