// SPDX-License-Identifier: GPL-2.0
/* CPython layouts by version (user/probes/pyframes.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include "probes/pyframes.h"

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

/* 3.13+: _PyRuntime begins with _Py_DebugOffsets ("xdebugpy", then
 * PY_VERSION_HEX); the fields the walker needs are read from it. */
static int debug_offsets(ig_py_read_fn rd, void *ctx, __u64 rt,
			 struct layout *d)
{
	__u64 v[67];

	if (rd(ctx, rt, v, sizeof(v)) || memcmp(v, "xdebugpy", 8))
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

int ig_pylayout_find(ig_py_read_fn rd, void *ctx, const struct ig_pyrt_info *rt,
		     struct ig_py_offsets *o, struct ig_py_codelayout *l)
{
	unsigned int ver = version_of_path(rt->path);
	struct layout d;
	size_t i;
	int err;

	err = debug_offsets(rd, ctx, rt->start, &(struct layout){ 0 });
	if (!err || err == -ENOTSUP)
		ver = err ? 0 : 0x030d;
	for (i = 0; i < ARRAY_SIZE(layouts); i++)
		if (layouts[i].o.version == ver)
			break;
	if (i == ARRAY_SIZE(layouts))
		return -ENOTSUP;
	d = layouts[i];
	if (ver == 0x030d && debug_offsets(rd, ctx, rt->start, &d))
		return -ENOTSUP;
	d.o.runtime = rt->start;
	*o = d.o;
	*l = d.l;
	return 0;
}

