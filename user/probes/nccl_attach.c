// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "probes/nccl_attach.h"
#include "host/elfsym.h"
#include "host/procfs.h"
#include "probes/log.h"
#include "stream/nccl_api.h"
#include "util/util.h"

static const char *base_of(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

struct find {
	pid_t pid;
	char name[PATH_MAX];	/* libnccl as the process names it */
	char path[PATH_MAX];	/* as idlegap opens it */
	int err;
	bool found;
	struct ig_nccl_seen *s;
	char host[PATH_MAX];	/* a library with NCCL linked in */
};

/* Libraries known to carry NCCL inside when built statically. */
static bool may_hold_nccl(const char *base)
{
	return !strncmp(base, "libtorch_cuda", 13) || strstr(base, "nccl") ||
	       !strncmp(base, "libtensorflow", 13) || !strncmp(base, "libjax", 6);
}

static int find_cb(const struct ig_map_entry *m, void *ctx)
{
	struct find *f = ctx;
	const char *b = base_of(m->path);
	struct ig_elf_sym sym;
	char p[PATH_MAX];

	if (m->path[0] != '/' || m->perms[2] != 'x')
		return 0;
	if (!strncmp(b, "libnccl.so", 10)) {
		snprintf(f->name, sizeof(f->name), "%s", m->path);
		f->err = ig_proc_map_path(f->pid, m, f->path, sizeof(f->path));
		f->found = true;
		return 1;
	}
	/* each such file is read once per process */
	if (f->host[0] || !may_hold_nccl(b) || f->s->checked == m->inode)
		return 0;
	f->s->checked = m->inode;
	if (!ig_proc_map_path(f->pid, m, p, sizeof(p)) &&
	    !ig_elf_find_sym(p, "ncclAllReduce", &sym) && sym.file_off)
		snprintf(f->host, sizeof(f->host), "%s", m->path);
	return 0;
}

struct scan {
	struct ig_uprobe_spec *v;
	size_t n, cap;
};

static int scan_cb(const struct ig_elf_sym *s, void *ctx)
{
	struct scan *c = ctx;
	int api;
	unsigned int cls;
	size_t i;

	if (!s->func || strncmp(s->name, "nccl", 4))
		return 0;
	api = ig_nccl_api_by_name(s->name);
	if (api <= 0)
		return 0;
	for (i = 0; i < c->n; i++)	/* versioned twins, aliases */
		if ((c->v[i].cookie & 0xffff) == (unsigned)api || c->v[i].offset == s->file_off)
			return 0;
	if (!ig_grow_from((void **)&c->v, &c->cap, c->n, sizeof(*c->v), 32))
		return -ENOMEM;
	cls = ig_nccl_class_of(api);
	c->v[c->n].offset = s->file_off;
	c->v[c->n].cookie = IG_NCCL_COOKIE(api, cls);
	c->v[c->n++].kind = IG_NCC_TIMED(cls) ? IG_UP_NCCL_TIMED : IG_UP_NCCL;
	return 0;
}

int ig_nccl_attach(struct ig_tracer *t, const char *path, pid_t pid,
		   unsigned int *nsyms)
{
	struct scan c = {};
	int err = ig_elf_for_each_sym(path, true, scan_cb, &c);

	*nsyms = c.n;
	if (!err && !c.n)
		err = -ENOENT;
	if (!err && t)
		err = ig_tracer_attach_uprobes(t, path, pid, c.v, c.n);
	else if (!err)
		err = (int)c.n;
	free(c.v);
	return err;
}

static void rec_init(struct ig_libnccl *rec, pid_t pid, const char *path)
{
	memset(rec, 0, sizeof(*rec));
	rec->h.type = IG_REC_LIBNCCL;
	rec->h.size = sizeof(*rec);
	rec->h.tid = rec->h.tgid = pid;
	ig_strcpy(rec->path, sizeof(rec->path), path);
}

int ig_nccl_find_for_exec(char *const envp[], char *path, size_t n)
{
	const char *llp = NULL;
	size_t i, len;

	for (i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], "LD_LIBRARY_PATH=", 16))
			llp = envp[i] + 16;
	while (llp && *llp) {
		len = strcspn(llp, ":;");
		if (len) {
			snprintf(path, n, "%.*s/libnccl.so.2", (int)len, llp);
			if (!access(path, R_OK))
				return 0;
		}
		llp += len + (llp[len] != 0);
	}
	return -ENOENT;
}

int ig_nccl_attach_all(struct ig_tracer *t, const char *path, struct ig_nccl_seen *all,
		       struct ig_libnccl *rec)
{
	struct stat st;
	unsigned int nsyms = 0;
	int n;

	if (stat(path, &st))
		return -errno;
	rec_init(rec, 0, path);
	n = ig_nccl_attach(t, path, -1, &nsyms);
	rec->nsyms = nsyms;
	if (n < 0)
		return n;
	rec->nattached = n;
	all->probed = true;
	all->dev = st.st_dev;
	all->ino = st.st_ino;
	return 0;
}

int ig_nccl_look(struct ig_tracer *t, pid_t pid, struct ig_nccl_seen *s,
		 struct ig_nccl_seen *all, struct ig_libnccl *rec)
{
	struct find f = { .pid = pid, .err = -ENOENT, .s = s };
	struct stat st;
	unsigned int nsyms = 0;
	int n;

	if (ig_proc_for_each_map(pid, find_cb, &f) || (!f.found && !f.host[0]))
		return 0;
	if (!f.found) {
		if (s->said_static)
			return 0;
		s->said_static = true;
		rec_init(rec, pid, f.host);
		rec->is_static = 1;
		ig_warn("pid %d: NCCL is linked into %s, not loaded from a libnccl.so: "
			"its collectives are not probed (no peer wait, no stragglers)",
			(int)pid, f.host);
		return 1;
	}
	if (f.err || stat(f.path, &st)) {
		rec_init(rec, pid, f.name);
		return f.err ? f.err : -errno;
	}
	if ((s->probed && s->dev == st.st_dev && s->ino == st.st_ino) ||
	    (all && all->probed && all->dev == st.st_dev && all->ino == st.st_ino))
		return 0;	/* probed already, for it or for every process */
	rec_init(rec, pid, f.name);
	/* the agent: for every process of that file, whose communicators
	 * may be created before idlegap has looked at them */
	n = ig_nccl_attach(t, f.path, all && all->by_file && !all->probed ? -1 : pid, &nsyms);
	rec->nsyms = nsyms;
	if (n < 0)
		return n;
	if (all && all->by_file && !all->probed) {
		all->probed = true;
		all->dev = st.st_dev;
		all->ino = st.st_ino;
	}
	s->probed = true;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	rec->nattached = n;
	return 1;
}
