/* SPDX-License-Identifier: GPL-2.0 */
/*
 * simgpu: a simulated CUDA driver (libcuda.so.1) for machines without a GPU.
 *
 * Internal interfaces shared by the simulator's source files.  Exported entry
 * points live in api_*.c and are thin wrappers around the functions declared
 * here; nothing in the library ever calls an exported cu* symbol, so a uprobe
 * on one entry point fires exactly once per application call.
 */
#ifndef SIMGPU_H
#define SIMGPU_H

/* Declares every versioned, _ptds and _ptsz name, and the legacy (v1)
 * prototypes, exactly as the real driver defines them. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "machine.h"

#define SIM_EXPORT __attribute__((visibility("default"), noinline, used))
/* The shared implementation behind a family of entry points; kept out of
 * line so every exported wrapper stays a few instructions long. */
#define SIM_IMPL static __attribute__((noinline)) CUresult

#define SIM_DRIVER_VERSION 13000
#define SIM_DEVICE_NAME "idlegap simgpu"

enum op_kind { OP_KERNEL, OP_COPY, OP_MEMSET, OP_MARKER };
enum stream_kind { STREAM_LEGACY, STREAM_PTDS, STREAM_USER };
enum obj_type { OBJ_CTX = 1, OBJ_STREAM, OBJ_EVENT, OBJ_MODULE, OBJ_FUNC,
		OBJ_GRAPH, OBJ_GRAPH_EXEC };

/* "Stream s has completed its op number seq." */
struct dep {
	struct stream *s;
	uint64_t seq;
};

struct event;

/* A kernel named simgpu_hook: another library's device work, run on the
 * device thread when the stream reaches it (see hook.c). */
typedef unsigned long long (*sim_hook_fn)(void *arg, unsigned long long start);

struct op {
	struct op *next;
	enum op_kind kind;
	uint64_t seq;
	uint64_t dur_ns;
	uint64_t enq_ns;	/* the op can never start before this */
	struct event *ev;	/* OP_MARKER of an event record */
	uint64_t ev_gen;
	sim_hook_fn hook;	/* its end time comes from hook(), not dur_ns */
	void *hook_arg;
	int ndeps;
	struct dep deps[];
};

/* One blocked thread (host or device); lives in thread-local storage so a
 * wake-up can never land on freed memory. */
struct waiter {
	uint32_t word;		/* futex word: 1 once every target is reached */
	int remaining;
	uint64_t ready_ns;	/* latest end time among the awaited ops */
};

struct wnode {
	struct wnode *next;
	struct waiter *w;
	uint64_t target;
};

#define DONE_RING 64

struct stream {
	struct ctx *ctx;
	enum stream_kind kind;
	unsigned int flags;
	int priority;
	int id;
	char name[48];		/* the <stream> field of trace lines */
	struct op *head, *tail;
	uint64_t submitted, completed;
	uint64_t last_end;	/* end of the last completed op */
	uint64_t ideal_end;	/* end of the newest op, when ideal_ok */
	bool ideal_ok;		/* no queued op waits on another stream */
	uint64_t ring_seq[DONE_RING], ring_end[DONE_RING];
	struct wnode *waiters;
	pthread_t thread;
	bool has_thread, dead;
	bool lingering;		/* idle, polling the queue */
	bool sleeping;		/* idle until kicked */
	uint32_t work_word;	/* futex word the idle device thread waits on */
	uint64_t busy_start, busy_end;	/* executed, not yet published */
	struct stream *next;	/* in ctx->streams */
};

struct ctx {
	int id;
	CUdevice dev;
	unsigned int flags;
	bool primary;
	int refs;
	struct stream *legacy;
	struct stream *streams;
	struct ctx *next;
};

struct event {
	unsigned int flags;
	int refs;		/* the handle plus every pending marker */
	bool destroyed;
	uint64_t gen;
	struct stream *s;	/* last record: stream and marker seq */
	uint64_t seq;
	bool recorded, done;
	uint64_t ts;		/* completion time of the last record */
};

struct module {
	struct ctx *ctx;
	char *ptx;		/* NULL for binary images: any name resolves */
	struct func *funcs;
};

struct func {
	struct func *next;
	struct module *mod;
	bool spin;		/* idlegap_spin: duration is the first param */
	bool hook;		/* simgpu_hook: see hook.c */
	char name[];
};

struct sim_config {
	double bw;		/* copy/memset bytes per second */
	uint64_t kernel_ns;
	uint64_t launch_ns;
	int ndev;		/* visible to the process */
	int nphys;		/* SIMGPU_DEVICES: GPUs of the machine */
	int phys[SIMM_MAXDEV];	/* ordinal -> physical GPU */
	size_t stage_bytes;
	uint64_t mem_bytes;	/* device memory per device */
	char trace[4096];
	char late[4096];	/* SIMGPU_LATE: where late device wakes go */
};

struct range {
	uintptr_t base;
	size_t size;
};

struct range_set {
	struct range *v;
	size_t n, cap;
};

struct sim {
	pthread_mutex_t lock;
	bool initialized;
	uint64_t epoch;		/* bumped in a forked child */
	struct sim_config cfg;
	int trace_fd;
	int late_fd;
	struct ctx *ctxs;
	int next_ctx_id, next_stream_id;
	struct ctx **primary;	/* per device, created on first retain */
	struct simm *machine;	/* shared with the machine's processes */
	cpu_set_t cpus;		/* affinity device threads run with */
	struct range_set dev_mem;	/* sorted by base */
	struct range_set pinned;
	uintptr_t va_base, va32_base;	/* reserved device address space */
	size_t va_size, va32_size;
};

extern struct sim sim;

/* core.c */
uint64_t now_ns(void);
void burn_ns(uint64_t ns);
void sim_lock(void);
void sim_unlock(void);
CUresult sim_init(unsigned int flags);
bool sim_ready(void);
uint64_t copy_ns(size_t bytes);

/* registry.c: handle validation without dereferencing */
void reg_add(const void *p, enum obj_type t);
void reg_del(const void *p);
bool reg_has(const void *p, enum obj_type t);
void reg_reset(void);

/* stream.c */
struct ctx *ctx_current(void);
CUresult ctx_need(struct ctx **out);
void ctx_set_current(struct ctx *c);
struct ctx *ctx_new(CUdevice dev, unsigned int flags, bool primary);
struct stream *stream_new(struct ctx *c, enum stream_kind kind,
			  unsigned int flags, int priority);
CUresult stream_resolve(CUstream h, bool ptds, struct stream **out);
CUresult submit_locked(struct stream *s, enum op_kind kind, uint64_t dur,
		       const struct dep *extra, struct event *ev,
		       uint64_t *seq_out, bool *kick);
void stream_kick(struct stream *s);
CUresult stream_submit(struct stream *s, enum op_kind kind, uint64_t dur,
		       const struct dep *extra, struct event *ev,
		       uint64_t *seq_out);
void stream_wait(struct stream *s, uint64_t seq);
void stream_sync(struct stream *s);
void stream_drain_for_op(struct stream *s);
bool stream_idle(struct stream *s);
bool stream_reached(struct stream *s, uint64_t seq, uint64_t *end);
uint64_t deps_wait(const struct dep *d, int n);
void ctx_wait_all(struct ctx *c);
void stream_retire(struct stream *s);
void event_unref(struct event *e);
void trace_open(void);

/* hook.c */
bool hook_params(void **params, sim_hook_fn *fn, void **arg);
CUresult hook_submit(struct stream *s, sim_hook_fn fn, void *arg);

/* memory.c */
CUresult dev_alloc(CUdeviceptr *out, size_t size, bool low32);
CUresult dev_free(CUdeviceptr p);
bool dev_contains(CUdeviceptr p, size_t n);
CUresult host_alloc(void **out, size_t size);
CUresult host_free(void *p);
bool host_pinned(const void *p, size_t n);

/* copy.c */
enum copy_dir { HTOD, DTOH, DTOD, HTOH };
CUresult copy_run(enum copy_dir dir, CUstream h, bool ptds, bool async,
		  void *dst, const void *src, size_t n);
CUresult memset_run(CUstream h, bool ptds, CUdeviceptr dst, size_t n);
CUresult copy_unified(CUstream h, bool ptds, bool async, CUdeviceptr dst,
		      CUdeviceptr src, size_t n);

/* errors.c */
CUresult error_string(CUresult e, const char **out, bool name);

#endif /* SIMGPU_H */
