// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "probes/cuda_attach.h"
#include "host/elfsym.h"
#include "stream/cuda_api.h"
#include "probes/log.h"
#include "host/procfs.h"
#include "util/util.h"

static bool is_libcuda_name(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libcuda.so", 10);
}

struct maps_ctx {
	pid_t pid;
	struct ig_cuda_lib *lib;
	int err;
};

static int maps_cb(const struct ig_map_entry *m, void *ctx)
{
	struct maps_ctx *c = ctx;

	if (m->path[0] != '/' || !is_libcuda_name(m->path))
		return 0;
	snprintf(c->lib->name, sizeof(c->lib->name), "%s", m->path);
	c->err = ig_proc_map_path(c->pid, m, c->lib->path, sizeof(c->lib->path));
	return 1;
}

int ig_cuda_find_in_maps(pid_t pid, struct ig_cuda_lib *lib)
{
	struct maps_ctx c = { .pid = pid, .lib = lib, .err = -ENOENT };
	int err;

	lib->name[0] = lib->path[0] = 0;
	err = ig_proc_for_each_map(pid, maps_cb, &c);
	return err ? err : c.err;
}

static bool try_dir(const char *dir, size_t len, char *path, size_t n)
{
	if (!len)
		return false;
	snprintf(path, n, "%.*s/libcuda.so.1", (int)len, dir);
	return access(path, R_OK) == 0;
}

/* This build's architecture as ldconfig -p names it, and its Debian
 * multiarch directory. */
#if defined(__aarch64__)
#define IG_LDCONFIG_ARCH	"AArch64"
#define IG_MULTIARCH		"aarch64-linux-gnu"
#else
#define IG_LDCONFIG_ARCH	"x86-64"
#define IG_MULTIARCH		"x86_64-linux-gnu"
#endif

/* The loader cache: ask ldconfig, which knows its format. */
static bool from_ld_cache(char *path, size_t n)
{
	FILE *p = popen("/sbin/ldconfig -p 2>/dev/null", "r");
	char line[1024];
	bool found = false;

	if (!p)
		return false;
	while (!found && fgets(line, sizeof(line), p)) {
		char *arrow = strstr(line, "=> ");

		if (!strstr(line, "libcuda.so.1 ") || !strstr(line, IG_LDCONFIG_ARCH) || !arrow)
			continue;
		arrow[strcspn(arrow, "\n")] = 0;
		snprintf(path, n, "%s", arrow + 3);
		found = access(path, R_OK) == 0;
	}
	pclose(p);
	return found;
}

int ig_cuda_find_for_exec(char *const envp[], char *path, size_t n)
{
	static const char *const defaults[] = {
		"/lib/" IG_MULTIARCH, "/usr/lib/" IG_MULTIARCH,
		"/lib64", "/usr/lib64", "/lib", "/usr/lib",
	};
	const char *llp = NULL;
	size_t i;

	for (i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], "LD_LIBRARY_PATH=", 16))
			llp = envp[i] + 16;
	while (llp && *llp) {
		size_t len = strcspn(llp, ":;");

		if (try_dir(llp, len, path, n))
			return 0;
		llp += len + (llp[len] != 0);
	}
	if (from_ld_cache(path, n))
		return 0;
	for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		if (try_dir(defaults[i], strlen(defaults[i]), path, n))
			return 0;
	return -ENOENT;
}

void ig_cuda_version(const char *path, char *buf, size_t n)
{
	char *real = realpath(path, NULL);
	const char *s = real ? real : path;
	const char *v = strstr(s, "libcuda.so.");

	snprintf(buf, n, "%s", v ? v + 11 : "");
	free(real);
}

struct sym {
	unsigned int api;
	size_t off;
};

struct scan_ctx {
	struct sym *v;
	size_t n, cap;
};

static int scan_cb(const struct ig_elf_sym *s, void *ctx)
{
	struct scan_ctx *c = ctx;
	int api;

	if (!s->func || s->name[0] != 'c' || s->name[1] != 'u')
		return 0;
	api = ig_api_by_name(s->name);
	if (api <= 0)
		return 0;
	if (!ig_grow_from((void **)&c->v, &c->cap, c->n, sizeof(*c->v), 128))
		return -ENOMEM;
	c->v[c->n].api = api;
	c->v[c->n++].off = s->file_off;
	return 0;
}

static int cmp_api(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return (x->api > y->api) - (x->api < y->api);
}

/* The known entry points of @path, sorted by api id, each once. */
static int scan(const char *path, struct scan_ctx *c)
{
	size_t i, j;
	int err = ig_elf_for_each_sym(path, true, scan_cb, c);

	if (err)
		return err;
	qsort(c->v, c->n, sizeof(*c->v), cmp_api);
	for (i = j = 0; i < c->n; i++)	/* .dynsym has versioned twins */
		if (!j || c->v[j - 1].api != c->v[i].api)
			c->v[j++] = c->v[i];
	c->n = j;
	return 0;
}

int ig_cuda_scan(const char *path, ig_cuda_sym_cb cb, void *ctx)
{
	struct scan_ctx c = {};
	size_t i;
	int err = scan(path, &c);

	for (i = 0; !err && i < c.n; i++)
		cb(c.v[i].api, ig_api_name(c.v[i].api), c.v[i].off, ctx);
	free(c.v);
	return err;
}

/* A synchronous copy submits and waits: its timed probe sees both ends. */
static enum ig_uprobe_kind kind_of(unsigned int api)
{
	unsigned int cls = ig_api_class_of(api);

	if (ig_api_submits(api) && cls != IG_AC_SYNC_COPY)
		return IG_UP_SUBMIT;
	if (cls == IG_AC_EVENT_RECORD)
		return IG_UP_EVENT_RECORD;
	return IG_UP_TIMED;
}

static bool is_ptsz(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && (!strcmp(name + n - 5, "_ptsz") || !strcmp(name + n - 5, "_ptds"));
}

bool ig_cuda_is_setup(unsigned int api)
{
	unsigned int cls = ig_api_class_of(api);

	return cls == IG_AC_CTX_DEVICE || cls == IG_AC_STREAM_CREATE ||
	       api == IG_API_cuInit || api == IG_API_cuCtxSetCurrent ||
	       api == IG_API_cuModuleLoadData || api == IG_API_cuModuleLoadDataEx ||
	       api == IG_API_cuModuleGetFunction;
}

int ig_cuda_attach(struct ig_tracer *t, const struct ig_cuda_lib *lib, pid_t pid,
		   unsigned int which, struct ig_libcuda_info *info)
{
	const char *path = lib->path;
	struct ig_uprobe_spec *specs = NULL;
	struct scan_ctx c = {};
	size_t i, k, n = 0;
	int err;

	memset(info, 0, sizeof(*info));
	snprintf(info->path, sizeof(info->path), "%s", lib->name);
	ig_cuda_version(lib->name, info->version, sizeof(info->version));
	err = scan(path, &c);
	if (!err && c.n && !(specs = calloc(c.n, sizeof(*specs))))
		err = -ENOMEM;
	if (err)
		goto out;
	info->nsyms = c.n;
	for (i = 0; i < c.n; i++) {
		unsigned int api = c.v[i].api, cls = ig_api_class_of(api);
		const char *name = ig_api_name(api);
		bool alias = false;

		/* Two names at one address (an alias): one probe fires for
		 * both, so attach it once, under the first name. */
		for (k = 0; k < i && !alias; k++)
			alias = c.v[k].off == c.v[i].off;
		if (alias) {
			ig_debug("%s: %s is an alias, not attached twice", path, name);
			continue;
		}
		if (!(which & (ig_cuda_is_setup(api) ? IG_CUDA_SETUP : IG_CUDA_HOT)))
			continue;
		specs[n].offset = c.v[i].off;
		specs[n].cookie = IG_COOKIE(api, cls, is_ptsz(name), ig_api_dev_arg(api));
		specs[n++].kind = kind_of(api);
	}
	if (!n && which != IG_CUDA_ALL)
		goto out;	/* none of that kind: nothing to attach */
	err = which == IG_CUDA_SETUP ?
	      ig_tracer_attach_staying_uprobes(t, path, pid, specs, n) :
	      ig_tracer_attach_uprobes(t, path, pid, specs, n);
	if (err > 0) {
		info->nattached = err;
		err = 0;
	} else if (!err) {
		err = -ENOENT;
	}
out:
	free(specs);
	free(c.v);
	return err;
}
