// SPDX-License-Identifier: GPL-2.0
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "host/procfs.h"
#include "stacks/symbolize.h"
#include "stacks/symbolize_int.h"
#include "stacks/ustacks.h"
#include "util/util.h"

/* DWARF from the file itself only: separate debuginfo (libc6-dbg's is tens
 * of megabytes, and seconds to load) would cost the tracer memory and stall
 * its ring-buffer consumer.  Such files get symbol+offset names. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *name,
			Dwarf_Addr base, const char *file, const char *debuglink,
			GElf_Word crc, char **path)
{
	(void)mod; (void)userdata; (void)name; (void)base; (void)file;
	(void)debuglink; (void)crc; (void)path;
	return -1;
}

static const Dwfl_Callbacks offline_cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = no_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct ig_symbolizer *ig_sym_new(void)
{
	return calloc(1, sizeof(struct ig_symbolizer));
}

static void proc_clear(struct symproc *p)
{
	free(p->maps);
	free(p->seen);
	free(p->pending);
}

void ig_sym_free(struct ig_symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nfiles; i++) {
		if (s->files[i].dwfl)
			dwfl_end(s->files[i].dwfl);
		free(s->files[i].idx);
	}
	for (i = 0; i < s->nprocs; i++)
		proc_clear(&s->procs[i]);
	free(s->files);
	free(s->procs);
	free(s);
}

static int file_open(struct symfile *f, const char *path)
{
	const char *b = strrchr(path, '/');

	ig_strcpy(f->base, sizeof(f->base), b ? b + 1 : path);
	f->dwfl = dwfl_begin(&offline_cb);
	if (!f->dwfl)
		return -ENOMEM;
	dwfl_report_begin(f->dwfl);
	f->mod = dwfl_report_offline(f->dwfl, f->base, path, -1);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->mod) {
		dwfl_end(f->dwfl);
		f->dwfl = NULL;
		return -ENOEXEC;
	}
	return 0;
}

static struct symfile *file_get(struct ig_symbolizer *s, const char *path,
				int *err)
{
	struct symfile *f, *v;
	struct stat st;
	size_t i;

	if (stat(path, &st)) {
		*err = -errno;
		return NULL;
	}
	for (i = 0; i < s->nfiles; i++)
		if (s->files[i].dev == st.st_dev && s->files[i].ino == st.st_ino)
			goto found;
	v = realloc(s->files, (s->nfiles + 1) * sizeof(*v));
	if (!v) {
		*err = -ENOMEM;
		return NULL;
	}
	s->files = v;
	f = &s->files[s->nfiles];
	memset(f, 0, sizeof(*f));
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	file_open(f, path);
	i = s->nfiles++;
found:
	f = &s->files[i];
	*err = f->dwfl ? 0 : -ENOEXEC;
	return f->dwfl ? f : NULL;
}

/* The module address of file offset @off: its loadable segment's vaddr
 * plus the module's bias. */
static int off_to_addr(struct symfile *f, uint64_t off, Dwarf_Addr *addr)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(f->mod, &bias);
	size_t n, i;

	if (!elf || elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X))
			continue;
		if (off >= ph.p_offset && off < ph.p_offset + ph.p_filesz) {
			*addr = off - ph.p_offset + ph.p_vaddr + bias;
			return 0;
		}
	}
	return -ERANGE;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static const char *die_name(Dwarf_Die *d)
{
	Dwarf_Attribute at;
	const char *n = NULL;

	if (dwarf_attr_integrate(d, DW_AT_name, &at))
		n = dwarf_formstring(&at);
	return n ? n : "??";
}

/* Where the inlined subroutine @d was called from: the caller's line. */
static void call_site(Dwarf_Die *d, Dwarf_Files *files, const char **src,
		      int *line)
{
	Dwarf_Attribute at;
	Dwarf_Word w;
	const char *f;

	if (dwarf_attr(d, DW_AT_call_line, &at) && !dwarf_formudata(&at, &w))
		*line = (int)w;
	if (files && dwarf_attr(d, DW_AT_call_file, &at) &&
	    !dwarf_formudata(&at, &w) && (f = dwarf_filesrc(files, w, NULL, NULL)))
		*src = f;
}

/* The functions inlined at @a, innermost first, and the function they are
 * inlined into, each "name (file:line)", one a line.  False when nothing
 * is inlined there (or the names do not fit). */
static bool name_inlined(struct symfile *f, Dwarf_Addr a, const char *src,
			 int line, struct ig_sym_frame *out)
{
	Dwarf_Addr cubias;
	Dwarf_Die *cu = dwfl_module_addrdie(f->mod, a, &cubias), *sc = NULL;
	Dwarf_Die *chain = NULL;
	Dwarf_Files *files = NULL;
	size_t nfiles, len = 0;
	int n, i, inl = 0;

	if (!cu || (n = dwarf_getscopes(cu, a - cubias, &sc)) <= 0)
		return false;
	for (i = 0; i < n; i++)
		if (dwarf_tag(&sc[i]) == DW_TAG_inlined_subroutine)
			break;
	/* from the innermost inlined call out, through the function it is in */
	n = i < n ? dwarf_getscopes_die(&sc[i], &chain) : 0;
	free(sc);
	if (n <= 0 || dwarf_getsrcfiles(cu, &files, &nfiles))
		files = NULL;
	for (i = 0; i < n && len < sizeof(out->name); i++) {
		int tag = dwarf_tag(&chain[i]);

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		len += snprintf(out->name + len, sizeof(out->name) - len,
				"%s%.120s (%.60s:%d)", len ? "\n" : "",
				die_name(&chain[i]), base_name(src), line);
		if (tag == DW_TAG_subprogram)
			break;
		inl++;
		call_site(&chain[i], files, &src, &line);
	}
	free(chain);
	return inl && i < n && len < sizeof(out->name);
}

/* libdwfl looks an address up by a scan of the whole symbol table: with
 * C++ libraries of 100k symbols and more (torch's), naming a stack's
 * addresses stalls the loop for seconds.  Those tables are sorted once. */
#define SYMIDX_MIN	20000

struct symidx {
	GElf_Addr start, end;	/* end == start: size unknown */
	int i;			/* its index for dwfl_module_getsym */
};

static int symidx_cmp(const void *a, const void *b)
{
	const struct symidx *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void symidx_build(struct symfile *f)
{
	int n = dwfl_module_getsymtab(f->mod), i;
	GElf_Sym sym;

	f->idx_tried = true;
	if (n < SYMIDX_MIN || !(f->idx = calloc(n, sizeof(*f->idx))))
		return;
	for (i = 1; i < n; i++) {
		if (!dwfl_module_getsym(f->mod, i, &sym, NULL) || !sym.st_value ||
		    sym.st_shndx == SHN_UNDEF ||
		    (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
		     GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC))
			continue;
		f->idx[f->nidx++] = (struct symidx){ sym.st_value,
						     sym.st_value + sym.st_size, i };
	}
	qsort(f->idx, f->nidx, sizeof(*f->idx), symidx_cmp);
}

/* The function symbol at @a, as dwfl_module_addrinfo() names it. */
static const char *sym_at(struct symfile *f, Dwarf_Addr a, GElf_Off *off)
{
	size_t lo = 0, hi, k;
	GElf_Sym sym;
	const char *fn;

	if (!f->idx_tried)
		symidx_build(f);
	if (!f->idx)
		return dwfl_module_addrinfo(f->mod, a, off, &sym, NULL, NULL, NULL);
	hi = f->nidx;
	while (lo < hi) {	/* the first entry starting after @a */
		k = lo + (hi - lo) / 2;
		if (f->idx[k].start <= a)
			lo = k + 1;
		else
			hi = k;
	}
	if (!lo || (f->idx[lo - 1].end > f->idx[lo - 1].start && a >= f->idx[lo - 1].end))
		return NULL;
	fn = dwfl_module_getsym(f->mod, f->idx[lo - 1].i, &sym, NULL);
	*off = a - f->idx[lo - 1].start;
	return fn;
}

static void name_addr(struct symfile *f, Dwarf_Addr a, Dwarf_Addr bias,
		      struct ig_sym_frame *out)
{
	GElf_Off symoff = 0;
	const char *fn = sym_at(f, a, &symoff);
	Dwfl_Line *l = fn ? dwfl_module_getsrc(f->mod, a) : NULL;
	const char *src = NULL;
	int line = 0;

	if (l)
		src = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	if (!fn) {
		out->flags |= IG_USYMF_NOSYM;
		snprintf(out->name, sizeof(out->name), "[%s+%#" PRIx64 "]",
			 f->base, (uint64_t)(a - bias));
	} else if (src && line > 0) {
		out->flags |= IG_USYMF_LINE;
		if (name_inlined(f, a, src, line, out))
			out->flags |= IG_USYMF_INLINED;
		else
			snprintf(out->name, sizeof(out->name), "%.160s (%.80s:%d)",
				 fn, base_name(src), line);
	} else {
		snprintf(out->name, sizeof(out->name), "%.160s+%#" PRIx64 " (%.64s)",
			 fn, (uint64_t)symoff, f->base);
	}
	if (fn && (!strcmp(fn, "_start") || !strcmp(fn, "start_thread") ||
		   !strncmp(fn, "__libc_start", 12) || strstr(fn, "clone")))
		out->flags |= IG_USYMF_ROOT;
}

int ig_sym_file(struct ig_symbolizer *s, const char *path, uint64_t off,
		struct ig_sym_frame *out)
{
	Dwarf_Addr a, bias;
	struct symfile *f;
	int err;

	memset(out, 0, sizeof(*out));
	f = file_get(s, path, &err);
	if (!f)
		return err;
	err = off_to_addr(f, off, &a);
	if (err)
		return err;
	dwfl_module_getelf(f->mod, &bias);
	name_addr(f, a, bias, out);
	return 0;
}

/* ---- processes ----------------------------------------------------------- */

struct maps_ctx {
	pid_t pid;
	struct xmap *v;
	size_t n, cap;
	int err;
};

static int add_xmap(const struct ig_map_entry *m, void *ctx)
{
	struct maps_ctx *c = ctx;
	struct xmap *x;

	if (m->perms[2] != 'x' || !m->path[0] || m->path[0] == '[')
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 32;

		x = realloc(c->v, cap * sizeof(*x));
		if (!x)
			return c->err = -ENOMEM;
		c->v = x;
		c->cap = cap;
	}
	x = &c->v[c->n++];
	x->start = m->start;
	x->end = m->end;
	x->offset = m->offset;
	x->opened = false;
	x->err = ig_proc_map_path(c->pid, m, x->path, sizeof(x->path));
	if (x->err)
		ig_strcpy(x->path, sizeof(x->path), m->path);
	return 0;
}

static uint64_t mono_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int proc_load_maps(struct symproc *p)
{
	struct maps_ctx c = { .pid = p->pid };
	int err = ig_proc_for_each_map(p->pid, add_xmap, &c);

	if (err || c.err) {
		free(c.v);
		return err ? err : c.err;
	}
	free(p->maps);
	p->maps = c.v;
	p->nmaps = c.n;
	p->loaded_ns = mono_coarse_ns();
	return 0;
}

static struct symproc *proc_find(struct ig_symbolizer *s, pid_t pid)
{
	size_t i;

	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	return NULL;
}

static struct symproc *proc_get(struct ig_symbolizer *s, pid_t pid)
{
	struct symproc *v = proc_find(s, pid);

	if (v)
		return v;
	v = realloc(s->procs, (s->nprocs + 1) * sizeof(*v));
	if (!v)
		return NULL;
	s->procs = v;
	memset(&v[s->nprocs], 0, sizeof(*v));
	v[s->nprocs].pid = pid;
	if (proc_load_maps(&v[s->nprocs]))
		return NULL;
	return &v[s->nprocs++];
}

static bool file_mapped(const struct ig_symbolizer *s, const struct symfile *f)
{
	size_t i, k;

	for (i = 0; i < s->nprocs; i++)
		for (k = 0; k < s->procs[i].nmaps; k++) {
			const struct xmap *x = &s->procs[i].maps[k];

			if (x->opened && x->dev == f->dev && x->ino == f->ino)
				return true;
		}
	return false;
}

/* Gives freed memory back to the system, at most once a second: a trim
 * walks the whole heap, and the caller is the ring-buffer consumer. */
static void trim(struct ig_symbolizer *s)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	if (s->trimmed && ts.tv_sec == s->trimmed)
		return;
	s->trimmed = ts.tv_sec;
	malloc_trim(0);
}

/* Closes the files no process known here maps any more (libdw keeps what
 * it read of a file, megabytes for one with DWARF), and gives the freed
 * memory back.  A file mapped again later is opened again. */
static void files_evict(struct ig_symbolizer *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->nfiles; i++) {
		if (file_mapped(s, &s->files[i])) {
			s->files[n++] = s->files[i];
			continue;
		}
		if (s->files[i].dwfl)
			dwfl_end(s->files[i].dwfl);
		free(s->files[i].idx);
	}
	if (n == s->nfiles)
		return;
	s->nfiles = n;
	trim(s);
}

size_t ig_sym_nfiles(const struct ig_symbolizer *s)
{
	return s ? s->nfiles : 0;
}

void ig_sym_forget(struct ig_symbolizer *s, pid_t pid)
{
	size_t i;

	for (i = 0; s && i < s->nprocs; i++)
		if (s->procs[i].pid == pid) {
			s->npending -= s->procs[i].npending;
			proc_clear(&s->procs[i]);
			s->procs[i] = s->procs[--s->nprocs];
			files_evict(s);
			return;
		}
}

static struct xmap *find_xmap(const struct symproc *p, uint64_t ip)
{
	size_t i;

	for (i = 0; i < p->nmaps; i++)
		if (ip >= p->maps[i].start && ip < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

/* Notes which file @x maps, so that the file stays cached while a process
 * maps it (files_evict). */
static void note_file(struct xmap *x)
{
	struct stat st;

	if (x->opened || stat(x->path, &st))
		return;
	x->opened = true;
	x->dev = st.st_dev;
	x->ino = st.st_ino;
}

static void name_in_map(struct ig_symbolizer *s, struct xmap *x,
			uint64_t ip, struct ig_sym_frame *out)
{
	uint64_t off = ip - x->start + x->offset;

	if (!x->err)
		note_file(x);
	if (!x->err && !ig_sym_file(s, x->path, off, out))
		return;
	memset(out, 0, sizeof(*out));
	out->flags = IG_USYMF_NOSYM;
	snprintf(out->name, sizeof(out->name), "[%.200s@%#" PRIx64 "]",
		 base_name(x->path), off);
}

/* A stream's addresses in no mapping read the maps again at most this
 * often: a walk astray (code without frame pointers) reads data as
 * return addresses, each a new one, and the maps of a big process take
 * tens of microseconds to read.  Meanwhile such an address is named
 * unmapped, and named again after the next read (usym.c). */
#define RELOAD_EVERY_NS	250000000ULL

/* Whether @p's maps were read too recently to read them again. */
static bool maps_fresh(const struct symproc *p)
{
	return mono_coarse_ns() - p->loaded_ns < RELOAD_EVERY_NS;
}

static int sym_proc(struct ig_symbolizer *s, struct symproc *p, uint64_t ip,
		    struct ig_sym_frame *out, bool stream)
{
	struct xmap *x;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!p)
		return -ESRCH;
	x = find_xmap(p, ip);
	if (!x && stream && maps_fresh(p))
		err = -EAGAIN;		/* in none for now */
	else if (!x && !proc_load_maps(p))	/* mapped since (dlopen) */
		x = find_xmap(p, ip);
	if (!x) {
		out->flags = IG_USYMF_UNMAPPED;
		snprintf(out->name, sizeof(out->name), "[unmapped %#" PRIx64 "]", ip);
		return err;
	}
	name_in_map(s, x, ip, out);
	return 0;
}

int ig_sym_proc(struct ig_symbolizer *s, pid_t pid, uint64_t ip,
		struct ig_sym_frame *out)
{
	return sym_proc(s, proc_get(s, pid), ip, out, false);
}

struct symproc *ig_sym_proc_get(struct ig_symbolizer *s, pid_t pid)
{
	return proc_get(s, pid);
}

struct symproc *ig_sym_proc_find(struct ig_symbolizer *s, pid_t pid)
{
	return proc_find(s, pid);
}

int ig_sym_proc_stream(struct ig_symbolizer *s, struct symproc *p,
		       uint64_t ip, struct ig_sym_frame *out)
{
	return sym_proc(s, p, ip, out, true);
}

int ig_sym_proc_reread(struct symproc *p)
{
	return maps_fresh(p) ? -EAGAIN : proc_load_maps(p);
}
