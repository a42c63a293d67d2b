/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Paths of the files tracked threads waited on (IG_REC_FILE), by the key
 * their off-CPU records carry, and the mounts they lie under, so that
 * storage time can be told per file and summed per mount.
 */
#ifndef IG_ENGINE_FILES_H
#define IG_ENGINE_FILES_H

#include <stdbool.h>
#include <stdint.h>

struct ig_engine;
struct ig_hdr;

#define IG_MAX_FILES	65536	/* paths kept; later files are not named */
#define IG_MAX_MOUNTS	64

struct ig_mount {
	char *path;		/* mount point as the process names it */
	char fstype[16];
};

struct ig_fileinfo {
	uint64_t key;
	uint32_t mount;		/* 1 + index into the mounts; 0: not known */
	uint8_t counted;	/* IG_FILE_IN_* sets it was counted in */
	char *path;
};

#define IG_FILE_IN_IDLE		(1u << 0)
#define IG_FILE_IN_UNRES	(1u << 1)

/* 0, or -ENOMEM / -EINVAL (a malformed record is skipped). */
int ig_files_on_rec(struct ig_engine *e, const struct ig_hdr *rec);
struct ig_fileinfo *ig_files_find(const struct ig_engine *e, uint64_t key);
const struct ig_mount *ig_files_mount_at(const struct ig_engine *e, uint32_t id);
void ig_files_free(struct ig_engine *e);

#endif
