// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "host/elfsym.h"

static Elf *elf_open_path(const char *path, int *fd)
{
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(*fd);
		errno = ENOEXEC;
		return NULL;
	}
	return e;
}

/* File offset of virtual address @va, through the PT_LOAD holding it. */
static bool va_to_off(Elf *e, uint64_t va, uint64_t *off)
{
	size_t n, i;

	if (elf_getphdrnum(e, &n))
		return false;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (va >= ph.p_vaddr && va < ph.p_vaddr + ph.p_memsz) {
			*off = va - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

static int walk_section(Elf *e, Elf_Scn *scn, GElf_Shdr *sh, ig_elf_sym_cb cb,
			void *ctx)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n;

	if (!data || !sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		struct ig_elf_sym s = {};
		GElf_Sym sym;
		int type, err;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT)
			continue;
		s.name = elf_strptr(e, sh->sh_link, sym.st_name);
		if (!s.name || !*s.name)
			continue;
		s.vaddr = sym.st_value;
		s.size = sym.st_size;
		s.func = type != STT_OBJECT;
		if (!va_to_off(e, s.vaddr, &s.file_off))
			continue;
		err = cb(&s, ctx);
		if (err)
			return err;
	}
	return 0;
}

int ig_elf_for_each_sym(const char *path, bool dynamic_only, ig_elf_sym_cb cb,
			void *ctx)
{
	Elf_Scn *scn = NULL;
	int fd, err = 0;
	Elf *e = elf_open_path(path, &fd);

	if (!e)
		return -errno;
	while (!err && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM ||
		    (!dynamic_only && sh.sh_type == SHT_SYMTAB))
			err = walk_section(e, scn, &sh, cb, ctx);
	}
	elf_end(e);
	close(fd);
	return err > 0 ? 0 : err;
}

struct find_ctx {
	const char *name;
	struct ig_elf_sym *out;
	char *keep;
	bool found;
};

static int find_cb(const struct ig_elf_sym *s, void *ctx)
{
	struct find_ctx *f = ctx;

	if (strcmp(s->name, f->name))
		return 0;
	*f->out = *s;
	f->out->name = f->name;
	f->found = true;
	return 1;
}

int ig_elf_find_sym(const char *path, const char *name, struct ig_elf_sym *out)
{
	struct find_ctx f = { .name = name, .out = out };
	int err = ig_elf_for_each_sym(path, false, find_cb, &f);

	if (err)
		return err;
	return f.found ? 0 : -ENOENT;
}

int ig_elf_load_base(const char *path, uint64_t *vaddr_minus_off, bool *dyn)
{
	size_t n, i;
	GElf_Ehdr eh;
	int fd, err = -ENOEXEC;
	Elf *e = elf_open_path(path, &fd);

	if (!e)
		return -errno;
	if (!gelf_getehdr(e, &eh) || elf_getphdrnum(e, &n))
		goto out;
	*dyn = eh.e_type == ET_DYN;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		*vaddr_minus_off = ph.p_vaddr - ph.p_offset;
		err = 0;
		break;
	}
out:
	elf_end(e);
	close(fd);
	return err;
}
