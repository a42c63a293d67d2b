/* SPDX-License-Identifier: GPL-2.0 */
/* Symbols of ELF files (libelf), for uprobe offsets and _PyRuntime. */
#ifndef IG_ELFSYM_H
#define IG_ELFSYM_H

#include <stdbool.h>
#include <stdint.h>

struct ig_elf_sym {
	const char *name;
	uint64_t vaddr;		/* st_value */
	uint64_t size;
	uint64_t file_off;	/* where the bytes are in the file */
	bool func;		/* STT_FUNC / STT_GNU_IFUNC */
};

typedef int (*ig_elf_sym_cb)(const struct ig_elf_sym *s, void *ctx);

/* Defined symbols of .dynsym (and .symtab unless @dynamic_only).  A
 * callback returning non-zero stops the walk.  Negative errno on failure. */
int ig_elf_for_each_sym(const char *path, bool dynamic_only, ig_elf_sym_cb cb,
			void *ctx);
/* One symbol by name; -ENOENT if absent. */
int ig_elf_find_sym(const char *path, const char *name, struct ig_elf_sym *out);
/* Lowest PT_LOAD p_vaddr minus its p_offset (the load bias is the
 * mapping address of file offset 0 minus this), and whether ET_DYN. */
int ig_elf_load_base(const char *path, uint64_t *vaddr_minus_off, bool *dyn);

#endif
