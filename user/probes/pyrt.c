// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include "host/elfsym.h"
#include "host/procfs.h"
#include "probes/pyrt.h"

struct find_ctx {
	pid_t pid;
	struct ig_pyrt_info *out;
	char tried[4][PATH_MAX];
	int ntried;
	bool found;
};

static bool python_file(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "python", 6) || !strncmp(base, "libpython", 9);
}

static int map_cb(const struct ig_map_entry *m, void *ctx)
{
	struct find_ctx *c = ctx;
	char file[PATH_MAX];
	struct ig_elf_sym sym;
	uint64_t base;
	bool dyn;
	int i;

	/* The mapping of file offset 0 gives the load address. */
	if (m->offset || m->path[0] != '/' || !python_file(m->path))
		return 0;
	for (i = 0; i < c->ntried; i++)
		if (!strcmp(c->tried[i], m->path))
			return 0;
	if (c->ntried < 4)
		snprintf(c->tried[c->ntried++], PATH_MAX, "%s", m->path);
	/* it may live in a container: in the process's mount namespace */
	if (ig_proc_map_path(c->pid, m, file, sizeof(file)))
		return 0;
	if (ig_elf_find_sym(file, "_PyRuntime", &sym) || !sym.size)
		return 0;
	if (ig_elf_load_base(file, &base, &dyn))
		return 0;
	/* ET_DYN (PIE, .so): loaded at m->start for the segment whose
	 * p_vaddr - p_offset is base; ET_EXEC: at its link address. */
	c->out->start = dyn ? m->start - base + sym.vaddr : sym.vaddr;
	c->out->end = c->out->start + sym.size;
	snprintf(c->out->path, sizeof(c->out->path), "%s", m->path);
	snprintf(c->out->file, sizeof(c->out->file), "%s", file);
	c->found = true;
	return 1;
}

/* 3.13 and later publish their layout at the start of _PyRuntime
 * (_Py_DebugOffsets): "xdebugpy", PY_VERSION_HEX, then whether the build
 * is free-threaded (user/probes/pylayout.c reads the rest).  Before 3.13,
 * or unreadable: not free-threaded. */
static bool free_threaded(pid_t pid, uint64_t runtime)
{
	unsigned char b[24];
	struct iovec l = { b, sizeof(b) }, r = { (void *)(uintptr_t)runtime, sizeof(b) };
	uint64_t ft;

	if (process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)sizeof(b) ||
	    memcmp(b, "xdebugpy", 8))
		return false;
	memcpy(&ft, b + 16, sizeof(ft));
	return ft != 0;
}

int ig_pyrt_find(pid_t pid, struct ig_pyrt_info *out)
{
	struct find_ctx c = { .pid = pid, .out = out };
	int err;

	memset(out, 0, sizeof(*out));
	err = ig_proc_for_each_map(pid, map_cb, &c);
	if (err)
		return err;
	if (!c.found)
		return -ENOENT;
	out->free_threaded = free_threaded(pid, out->start);
	return 0;
}
