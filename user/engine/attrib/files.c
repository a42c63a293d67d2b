// SPDX-License-Identifier: GPL-2.0
/* Paths of waited-on files and their mounts (files.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/attrib/files.h"
#include "engine/model.h"
#include "util/htab.h"

struct ig_files {
	struct ig_htab byk;	/* key -> ig_fileinfo */
	struct ig_mount mounts[IG_MAX_MOUNTS];
	uint32_t nmounts;
};

static struct ig_files *files_of(struct ig_engine *e)
{
	if (!e->files) {
		e->files = calloc(1, sizeof(*e->files));
		if (e->files && ig_htab_init(&e->files->byk, 256)) {
			free(e->files);
			e->files = NULL;
		}
	}
	return e->files;
}

/* "/" + comp[hi-1] + "/" + ... + comp[lo]; "/" when empty. */
static char *join(const struct ig_file *r, unsigned int lo, unsigned int hi,
		  bool trunc)
{
	size_t n = 4, at = 0;
	unsigned int i;
	char *s;

	for (i = lo; i < hi; i++)
		n += strnlen(r->comp[i], IG_NAME_LEN) + 1;
	s = malloc(n);
	if (!s)
		return NULL;
	if (trunc)
		at += (size_t)sprintf(s, "...");
	for (i = hi; i-- > lo;)
		at += (size_t)sprintf(s + at, "/%.*s", IG_NAME_LEN,
				      r->comp[i]);
	if (!at)
		strcpy(s, "/");
	return s;
}

static uint32_t mount_id(struct ig_files *fs, const struct ig_file *r)
{
	bool trunc = r->flags & IG_FILEF_TRUNC;
	char *path;
	uint32_t i;

	/* truncated below any mount point: the mount is not known */
	if (trunc && r->nmount >= r->ncomp)
		return 0;
	path = join(r, r->nmount, r->ncomp, trunc);
	if (!path)
		return 0;
	for (i = 0; i < fs->nmounts; i++) {
		if (!strcmp(fs->mounts[i].path, path) &&
		    !strncmp(fs->mounts[i].fstype, r->fstype,
			     sizeof(r->fstype))) {
			free(path);
			return i + 1;
		}
	}
	if (fs->nmounts == IG_MAX_MOUNTS) {
		free(path);
		return 0;
	}
	fs->mounts[i].path = path;
	memcpy(fs->mounts[i].fstype, r->fstype, sizeof(r->fstype));
	fs->mounts[i].fstype[sizeof(r->fstype) - 1] = '\0';
	fs->nmounts++;
	return i + 1;
}

int ig_files_on_rec(struct ig_engine *e, const struct ig_hdr *rec)
{
	struct ig_files *fs = files_of(e);
	struct ig_fileinfo *fi;
	struct ig_file r;

	if (!fs)
		return -ENOMEM;
	if (rec->size < sizeof(r))
		return -EINVAL;
	memcpy(&r, rec, sizeof(r));
	if (r.ncomp > IG_PATH_DEPTH || r.nmount > r.ncomp)
		return -EINVAL;
	fi = ig_htab_get(&fs->byk, r.key);
	if (fi) {
		/* sent again (the kernel forgot it): the path may be new */
		free(fi->path);
	} else {
		if (fs->byk.n >= IG_MAX_FILES)
			return 0;
		fi = calloc(1, sizeof(*fi));
		if (!fi || ig_htab_put(&fs->byk, r.key, fi)) {
			free(fi);
			return -ENOMEM;
		}
		fi->key = r.key;
	}
	fi->path = join(&r, 0, r.ncomp, r.flags & IG_FILEF_TRUNC);
	fi->mount = mount_id(fs, &r);
	return fi->path ? 0 : -ENOMEM;
}

struct ig_fileinfo *ig_files_find(const struct ig_engine *e, uint64_t key)
{
	return e->files ? ig_htab_get(&e->files->byk, key) : NULL;
}

const struct ig_mount *ig_files_mount_at(const struct ig_engine *e, uint32_t id)
{
	if (!e->files || !id || id > e->files->nmounts)
		return NULL;
	return &e->files->mounts[id - 1];
}

void ig_files_free(struct ig_engine *e)
{
	struct ig_files *fs = e->files;
	struct ig_fileinfo *fi;
	uint32_t i, it = 0;

	if (!fs)
		return;
	while ((fi = ig_htab_next(&fs->byk, &it))) {
		free(fi->path);
		free(fi);
	}
	ig_htab_free(&fs->byk);
	for (i = 0; i < fs->nmounts; i++)
		free(fs->mounts[i].path);
	free(fs);
	e->files = NULL;
}
