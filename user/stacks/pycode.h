/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Python code objects: read from a live process into IG_REC_PYCODE records
 * (name, file, first line, the raw line table), and the line of an
 * instruction decoded from those records, for every layout 3.9 to 3.13,
 * so that live tracing and replay name frames alike.
 */
#ifndef IG_PYCODE_H
#define IG_PYCODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "stream/records.h"

/* Where a version keeps a code object's fields (user/probes/pyframes.c). */
struct ig_py_codelayout {
	__u16 version;		/* 0x0309 .. 0x030d */
	__u32 firstlineno, name, qualname, filename, linetable, adaptive;
	__u32 ascii_size;	/* sizeof(PyASCIIObject) */
	__u32 compact_size;	/* sizeof(PyCompactUnicodeObject) */
	/* The object headers' fields, which a free-threaded build moves (its
	 * PyObject is 32 bytes, not 16); ig_pycode_gil_objects() sets those
	 * of a build with the GIL. */
	__u32 ob_type;		/* PyObject.ob_type */
	__u32 tp_name;		/* PyTypeObject.tp_name */
	__u32 bytes_size;	/* PyBytesObject.ob_size */
	__u32 bytes_sval;	/* PyBytesObject.ob_sval */
	__u32 uni_length;	/* PyASCIIObject.length */
	__u32 uni_state;	/* PyASCIIObject.state */
	__u32 uni_kind;		/* its first bit of the kind (compact and
				 * ascii follow): 2, or 8 in 3.14t */
};

/* Sets @l's object header fields to those of a build with the GIL (the
 * same in 3.9 to 3.15). */
void ig_pycode_gil_objects(struct ig_py_codelayout *l);

/* Reads @len bytes at @addr of @pid.  0 or -errno. */
typedef int (*ig_py_read_fn)(void *ctx, __u64 addr, void *buf, size_t len);

/* Fills @out (header left to the caller) from the code object at @code.
 * A code object that cannot be read is marked IG_PYC_UNREAD, named "?". */
void ig_pycode_read(const struct ig_py_codelayout *l, ig_py_read_fn rd,
		    void *ctx, __u64 code, struct ig_pycode *out);

/* The source line of the frame at @lasti (as ig_pyframe.lasti), or -1. */
int ig_pycode_line(const struct ig_pycode *c, __u32 lasti);

/* Names seen in a stream: code objects by (tgid, address), stacks by
 * (tgid, id), so that IG_PYS_REF records can be shown too. */
struct ig_pynames;
struct ig_pynames *ig_pynames_new(void);
void ig_pynames_free(struct ig_pynames *n);
/* Feeds an IG_REC_PYCODE or IG_REC_PYSTACK record; others are ignored.
 * 0 or -ENOMEM. */
int ig_pynames_feed(struct ig_pynames *n, const struct ig_hdr *rec);
/* Frame @i of @rec (its own or those of the stack it refers to) as
 * "func (file:line)"; returns the number of frames, -ENOENT when the
 * stack it refers to was not seen. */
int ig_pynames_frame(struct ig_pynames *n, const struct ig_pystack *rec,
		     int i, char *buf, size_t len);
/* Stacks held; with @ncode, the code objects held. */
size_t ig_pynames_count(const struct ig_pynames *n, size_t *ncode);
/* Frees the stacks of gone processes that @f (ustacks.h) does not keep,
 * and their code objects that no stack kept names.  0, or -ENOMEM with
 * the code objects left (a later call frees them). */
struct ig_stk_forget;
int ig_pynames_forget(struct ig_pynames *n, const struct ig_stk_forget *f);

/* Bounds for a tracer left running, as user/stacks/ustacks.h's: past
 * IG_PYSTACKS_MAX stacks ig_pynames_trim evicts those seen longest ago
 * down to three quarters, but for those @f->keep holds; past IG_PYCODE_MAX
 * code objects, those no stack left names. */
#define IG_PYSTACKS_MAX	16384
#define IG_PYCODE_MAX	65536
bool ig_pynames_full(const struct ig_pynames *n);
int ig_pynames_trim(struct ig_pynames *n, const struct ig_stk_forget *f);
void ig_pynames_evicted(const struct ig_pynames *n, uint64_t *stacks, uint64_t *code);

#endif
