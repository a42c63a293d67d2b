/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Python frames of traced processes: which CPython layout a process runs
 * (3.9 to 3.12 by version; 3.13 and later read from its _Py_DebugOffsets), handed to the kernel
 * walker (bpf/pystack.bpf.h), and the code objects its stacks name, read
 * once per process and code object into IG_REC_PYCODE records.
 */
#ifndef IG_PYFRAMES_H
#define IG_PYFRAMES_H

#include <stdbool.h>
#include <sys/types.h>
#include "stacks/pycode.h"
#include "probes/pyrt.h"
#include "stream/records.h"

struct ig_tracer;
struct ig_pyframes;

/* Reads @pid's memory (process_vm_readv).  0 or -errno. */
int ig_pylayout_read_mem(void *pidp, __u64 addr, void *buf, size_t len);

/* What an interpreter says of itself. */
struct ig_pybuild {
	__u32 hexversion;	/* PY_VERSION_HEX (3.9-3.12: 0x030X0000) */
	bool published;		/* it publishes _Py_DebugOffsets (3.13+) */
	bool free_threaded;	/* a free-threaded build (3.13t+) */
	int gil_on;		/* its GIL is on now (1 in builds with one); a
				 * free-threaded build's is off unless turned
				 * on; -1: cannot tell */
	char why[128];		/* -ENOTSUP: why its frames are not read */
};

/* The layout of the interpreter @rt, whose memory @rd reads: 0, -ENOTSUP
 * for one it cannot walk (native frames only; @info->why says why), other
 * -errno.  3.9-3.12 by the version in the file name, 3.13 and later by the
 * _Py_DebugOffsets it publishes (user/probes/pylayout.c).  @info may be
 * NULL. */
int ig_pylayout_find(ig_py_read_fn rd, void *ctx, const struct ig_pyrt_info *rt,
		     struct ig_py_offsets *o, struct ig_py_codelayout *l,
		     struct ig_pybuild *info);

typedef void (*ig_pyemit_fn)(const struct ig_hdr *rec, void *ctx);

/* NULL (no Python stacks; every call below accepts it) when out of memory
 * or when IDLEGAP_NO_PYSTACKS is set in the environment. */
struct ig_pyframes *ig_pyframes_new(struct ig_tracer *t);
void ig_pyframes_free(struct ig_pyframes *p);
/* Starts walking @tgid's Python stacks.  0, -ENOTSUP (an interpreter
 * it cannot walk: @info->why says why), other -errno; @info (may be NULL)
 * says which build it is. */
int ig_pyframes_track(struct ig_pyframes *p, pid_t tgid,
		      const struct ig_pyrt_info *rt, struct ig_pybuild *info);
bool ig_pyframes_tracked(struct ig_pyframes *p, pid_t tgid);
/* Forgets which code objects were sent: the next stacks name them again,
 * for a new window's engine (with ig_tracer_forget_stacks()). */
void ig_pyframes_forget_sent(struct ig_pyframes *p);
/* The process exited or exec'd. */
void ig_pyframes_forget(struct ig_pyframes *p, pid_t tgid);
/* Before an IG_REC_PYSTACK record goes on: emits an IG_REC_PYCODE for each
 * code object it names that its process has not had yet. */
void ig_pyframes_on_stack(struct ig_pyframes *p, const struct ig_hdr *rec,
			  ig_pyemit_fn emit, void *ctx);

#endif
