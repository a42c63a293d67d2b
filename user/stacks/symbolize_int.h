/* SPDX-License-Identifier: GPL-2.0 */
/* The symbolizer's tables, shared by symbolize.c (files and processes)
 * and usym.c (names for the record stream). */
#ifndef IG_SYMBOLIZE_INT_H
#define IG_SYMBOLIZE_INT_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include "stacks/symbolize.h"

/* An ELF file opened with libdwfl, by device and inode. */
struct symfile {
	dev_t dev;
	ino_t ino;
	Dwfl *dwfl;		/* NULL: not ELF (a negative cache entry) */
	Dwfl_Module *mod;
	char base[64];		/* file name without directory */
	struct symidx *idx;	/* big symbol tables: sorted (symbolize.c) */
	size_t nidx;
	bool idx_tried;
};

struct xmap {
	uint64_t start, end, offset;
	char path[256];		/* openable here (ig_proc_map_path) */
	int err;		/* ig_proc_map_path() failed */
	bool opened;		/* its file was looked up: dev, ino */
	dev_t dev;
	ino_t ino;
};

/* The executable mappings of a process, and the addresses already named. */
struct symproc {
	pid_t pid;
	struct xmap *maps;
	size_t nmaps;
	uint64_t *seen;		/* sorted */
	size_t nseen, capseen;
	uint64_t loaded_ns;	/* when the maps were last read */
	uint64_t *pending;	/* named unmapped for now (usym.c) */
	size_t npending, cappending;
};

struct ig_symbolizer {
	struct symfile *files;
	size_t nfiles;
	struct symproc *procs;
	size_t nprocs;
	time_t trimmed;		/* the second of the last malloc_trim */
	size_t npending;	/* the procs' pending addresses, in all */
};

/* @pid's table, made (its maps read) when new; NULL when out of memory. */
struct symproc *ig_sym_proc_get(struct ig_symbolizer *s, pid_t pid);
/* @pid's table if there is one. */
struct symproc *ig_sym_proc_find(struct ig_symbolizer *s, pid_t pid);
/* ig_sym_proc() for the record stream: an address in none of @p's maps
 * reads them again at most every 250 ms (-EAGAIN meanwhile, named
 * unmapped). */
int ig_sym_proc_stream(struct ig_symbolizer *s, struct symproc *p,
		       uint64_t ip, struct ig_sym_frame *out);
/* Reads @p's maps again if the last read is 250 ms old (-EAGAIN if not). */
int ig_sym_proc_reread(struct symproc *p);

#endif
