// SPDX-License-Identifier: GPL-2.0
/*
 * The hooks of tools/walkcount.py, linked into an idlegap built with
 * -finstrument-functions: each call of ig_engine_feed() (through
 * -Wl,--wrap=ig_engine_feed) is followed from its entry to its return, and
 * each entry and return of an instrumented function is placed in its
 * source file.  See tools/walkcount.py for what is counted.
 *
 *   IG_WALK_MAP  the function map: "nfiles", then a line per file
 *                "FILE_ID FOLDER_ID PATH", then a line per function
 *                "ADDRESS FILE_ID" (hexadecimal link-time address)
 *   IG_WALK_OUT  where the counts go at exit (appended)
 *
 * Built without -finstrument-functions; calls no instrumented code.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOI __attribute__((no_instrument_function))
#define MAXFILES 1024
#define MAXDEPTH 4096
#define NTYPES 512

struct fn {
	uintptr_t addr;
	int file;
};

/* per record type, summed over its ig_engine_feed calls */
struct tstat {
	uint64_t n;		/* ig_engine_feed calls */
	uint64_t calls;		/* instrumented calls inside them */
	uint64_t xret;		/* returns into another file */
	uint64_t xcall;		/* calls into another file */
	uint64_t fmoves;	/* calls and returns into another folder */
	uint64_t fret;		/* returns into another folder */
	uint64_t reenter;	/* calls into a file already on the stack */
	uint64_t files, folders;	/* distinct, summed over calls */
	uint64_t max_xret, max_files, max_folders;
};

static struct fn *fns;
static size_t nfns;
static int nfiles, folder_of[MAXFILES], unknown_file;
static char *path_of[MAXFILES];
static uintptr_t bias;
static int ready;

static int stack[MAXDEPTH];
static int depth;
static __thread int active, nest;	/* only the feeding thread counts */
static uint32_t cur_type;
static uint64_t c_calls, c_xret, c_xcall, c_fmoves, c_fret, c_reenter;
static uint64_t unknown_fns, too_deep;
static unsigned char seen_file[MAXFILES], seen_folder[MAXFILES];
static int seen_files[MAXFILES], nseen_files, nseen_folders;
static int on_stack[MAXFILES];
static struct tstat tstats[NTYPES];
static uint64_t pair_ret[MAXFILES][MAXFILES];	/* from, to */
static uint64_t pair_reenter[MAXFILES][MAXFILES];	/* caller, callee */

NOI static int cmp_fn(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

NOI static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uintptr_t *)data = info->dlpi_addr;
	return 1;	/* the executable comes first */
}

NOI static void load_map(void)
{
	const char *path = getenv("IG_WALK_MAP");
	char line[4096];
	size_t cap = 0;
	FILE *f;
	int i;

	if (!path || !(f = fopen(path, "r"))) {
		fprintf(stderr, "walkhook: no map (IG_WALK_MAP)\n");
		exit(2);
	}
	if (!fgets(line, sizeof(line), f) || sscanf(line, "%d", &nfiles) != 1 ||
	    nfiles < 1 || nfiles >= MAXFILES) {
		fprintf(stderr, "walkhook: bad map %s\n", path);
		exit(2);
	}
	for (i = 0; i < nfiles; i++) {
		int id, folder, off = 0;

		if (!fgets(line, sizeof(line), f) ||
		    sscanf(line, "%d %d %n", &id, &folder, &off) < 2 || id != i ||
		    folder < 0 || folder >= MAXFILES) {
			fprintf(stderr, "walkhook: bad file line in %s\n", path);
			exit(2);
		}
		folder_of[i] = folder;
		line[strcspn(line, "\n")] = 0;
		path_of[i] = strdup(line + off);
	}
	unknown_file = nfiles - 1;	/* the map's last file: not in user/ */
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		int file;

		if (sscanf(line, "%llx %d", &a, &file) != 2)
			continue;
		if (nfns == cap) {
			cap = cap ? cap * 2 : 4096;
			fns = realloc(fns, cap * sizeof(*fns));
			if (!fns)
				exit(2);
		}
		fns[nfns].addr = (uintptr_t)a;
		fns[nfns].file = file;
		nfns++;
	}
	fclose(f);
	qsort(fns, nfns, sizeof(*fns), cmp_fn);
	dl_iterate_phdr(first_object, &bias);
	ready = 1;
}

NOI static int file_of(void *fn)
{
	uintptr_t a = (uintptr_t)fn - bias;
	size_t lo = 0, hi = nfns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fns[mid].addr < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < nfns && fns[lo].addr == a)
		return fns[lo].file;
	unknown_fns++;
	return unknown_file;
}

NOI static void see(int file)
{
	if (!seen_file[file]) {
		seen_file[file] = 1;
		seen_files[nseen_files++] = file;
		if (!seen_folder[folder_of[file]]) {
			seen_folder[folder_of[file]] = 1;
			nseen_folders++;
		}
	}
}

NOI void __cyg_profile_func_enter(void *fn, void *site)
{
	int file, top;

	(void)site;
	if (!active)
		return;
	file = file_of(fn);
	if (depth >= MAXDEPTH) {
		too_deep++;
		depth++;
		return;
	}
	see(file);
	if (depth > 0) {
		top = stack[depth - 1];
		c_calls++;
		if (file != top) {
			c_xcall++;
			if (on_stack[file]) {
				c_reenter++;
				pair_reenter[top][file]++;
			}
		}
		if (folder_of[file] != folder_of[top])
			c_fmoves++;
	}
	stack[depth++] = file;
	on_stack[file]++;
}

NOI void __cyg_profile_func_exit(void *fn, void *site)
{
	int from, to;

	(void)fn;
	(void)site;
	if (!active || depth == 0)
		return;
	if (depth > MAXDEPTH) {
		depth--;
		return;
	}
	from = stack[--depth];
	on_stack[from]--;
	if (depth == 0)
		return;
	to = stack[depth - 1];
	if (from != to) {
		c_xret++;
		pair_ret[from][to]++;
	}
	if (folder_of[from] != folder_of[to]) {
		c_fmoves++;
		c_fret++;
	}
}

struct ig_engine;
struct walk_hdr {
	uint16_t type;
	uint16_t size;
};
void __real_ig_engine_feed(struct ig_engine *e, const struct walk_hdr *rec);

NOI static uint32_t type_slot(uint32_t type)
{
	return type < 0x100 ? type : 0x100 + ((type - 0x100) & 0xff);
}

NOI void __wrap_ig_engine_feed(struct ig_engine *e, const struct walk_hdr *rec)
{
	struct tstat *s;
	int i;

	if (!ready)
		load_map();
	if (nest++) {	/* fed from inside a feed: part of the outer walk */
		__real_ig_engine_feed(e, rec);
		nest--;
		return;
	}
	cur_type = rec ? rec->type : 0xffff;
	depth = 0;
	c_calls = c_xret = c_xcall = c_fmoves = c_fret = c_reenter = 0;
	nseen_files = nseen_folders = 0;
	active = 1;
	__real_ig_engine_feed(e, rec);
	active = 0;
	nest--;
	s = &tstats[type_slot(cur_type) % NTYPES];
	s->n++;
	s->calls += c_calls;
	s->xret += c_xret;
	s->xcall += c_xcall;
	s->fmoves += c_fmoves;
	s->fret += c_fret;
	s->reenter += c_reenter;
	s->files += nseen_files;
	s->folders += nseen_folders;
	if (c_xret > s->max_xret)
		s->max_xret = c_xret;
	if ((uint64_t)nseen_files > s->max_files)
		s->max_files = nseen_files;
	if ((uint64_t)nseen_folders > s->max_folders)
		s->max_folders = nseen_folders;
	for (i = 0; i < nseen_files; i++) {
		seen_folder[folder_of[seen_files[i]]] = 0;
		seen_file[seen_files[i]] = 0;
	}
	for (i = 0; i < nfiles; i++)
		on_stack[i] = 0;
}

NOI __attribute__((destructor)) static void walk_out(void)
{
	const char *path = getenv("IG_WALK_OUT");
	FILE *f;
	int i, j;

	if (!ready || !path || !(f = fopen(path, "a")))
		return;
	fprintf(f, "unknown %llu %llu\n", (unsigned long long)unknown_fns,
		(unsigned long long)too_deep);
	for (i = 0; i < NTYPES; i++) {
		const struct tstat *s = &tstats[i];

		if (!s->n)
			continue;
		fprintf(f, "type %d %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu\n",
			i < 0x100 ? i : 0x100 + (i - 0x100),
			(unsigned long long)s->n, (unsigned long long)s->calls,
			(unsigned long long)s->xret, (unsigned long long)s->xcall,
			(unsigned long long)s->fmoves, (unsigned long long)s->fret,
			(unsigned long long)s->reenter, (unsigned long long)s->files,
			(unsigned long long)s->folders, (unsigned long long)s->max_xret,
			(unsigned long long)s->max_files, (unsigned long long)s->max_folders);
	}
	for (i = 0; i < nfiles; i++)
		for (j = 0; j < nfiles; j++) {
			if (pair_ret[i][j])
				fprintf(f, "ret %s %s %llu\n", path_of[i], path_of[j],
					(unsigned long long)pair_ret[i][j]);
			if (pair_reenter[i][j])
				fprintf(f, "reenter %s %s %llu\n", path_of[i], path_of[j],
					(unsigned long long)pair_reenter[i][j]);
		}
	fclose(f);
}
