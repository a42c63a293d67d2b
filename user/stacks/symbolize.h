/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names of native code addresses (libdw): in an ELF file by file offset,
 * and in a live process by address through its /proc/PID/maps (PIE
 * executables, shared libraries, files in other mount namespaces through
 * /proc/PID/root).  Files are opened once and cached by device and inode
 * while a live process known here maps them.
 * While tracing, ig_usym_on_record() turns the addresses of each new
 * stack (IG_REC_USTACK) into IG_REC_USYM records for the stream.
 */
#ifndef IG_SYMBOLIZE_H
#define IG_SYMBOLIZE_H

#include <stdint.h>
#include <sys/types.h>
#include "stream/records.h"

struct ig_symbolizer;

struct ig_sym_frame {
	char name[IG_USYM_NAME_MAX];	/* "func (file.c:12)", "func+0x1a (lib)",
					 * "[lib+0x1234]", "[unmapped 0x...]" */
	unsigned int flags;		/* IG_USYMF_* */
};

struct ig_symbolizer *ig_sym_new(void);
void ig_sym_free(struct ig_symbolizer *s);

/* @off: a file offset of code in @path (what a mapping maps at
 * start + (ip - start) + offset).  0 or -errno (-ENOENT: no such file,
 * -ENOEXEC: not ELF, -ERANGE: in no loadable segment). */
int ig_sym_file(struct ig_symbolizer *s, const char *path, uint64_t off,
		struct ig_sym_frame *out);
/* @ip in live process @pid.  0, or -errno when the process is gone;
 * an address in no executable mapping is a frame flagged UNMAPPED. */
int ig_sym_proc(struct ig_symbolizer *s, pid_t pid, uint64_t ip,
		struct ig_sym_frame *out);
/* Drops what is known of @pid's mappings (exec, exit), and closes the
 * files that no process still known here maps (named again when one
 * does). */
void ig_sym_forget(struct ig_symbolizer *s, pid_t pid);
/* Files open (cached), ELF or not. */
size_t ig_sym_nfiles(const struct ig_symbolizer *s);

/* The address looked up for the @i-th address of a stack: return
 * addresses point after their call. */
static inline uint64_t ig_ustack_lookup_ip(uint64_t ip, unsigned int i)
{
	return i && ip ? ip - 1 : ip;
}

typedef void (*ig_usym_emit_fn)(const struct ig_hdr *rec, void *ctx);
/* For a kernel record: names each address of a new stack of a live process
 * once, with an IG_REC_USYM record through @emit; forgets a process at exec
 * and exit.  Creates *@s on first use. */
void ig_usym_on_record(struct ig_symbolizer **s, const struct ig_hdr *rec,
		       ig_usym_emit_fn emit, void *ctx);

#endif
