/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The engine's state, shared by its parts:
 *   intake.c     ig_engine_feed and the per-record handlers, thread history
 *   tasks.c      process/thread tables, comm cache, mappings, fork/exec/exit
 *                (its API: tasks.h)
 *   lifecycle.c  creation, the history window (gc), finish, memory, teardown
 *   gpu.c, drain.c, sweep.c  the GPU evidence model (gpu.h)
 *   attrib.c, causes.c, detail.c  attribution of each ns of a gap (attrib.h)
 *   report_*.c   text and JSON output
 * Not a public header: only the engine and its tests include it.
 */
#ifndef IG_ENGINE_MODEL_H
#define IG_ENGINE_MODEL_H

#include <stdint.h>
#include <stdbool.h>
#include "engine/engine.h"
#include "engine/engine_obs.h"
#include "engine/gaplist.h"
#include "engine/names.h"
#include "util/hist.h"
#include "util/htab.h"
#include "util/ring.h"
#include "util/util.h"
#include "util/vec.h"

#define IG_NS_INF		UINT64_MAX
#define IG_NSEC			1000000000ULL

static inline uint64_t ig_min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint64_t ig_max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

#define IG_DEPTH_CAP		16	/* opts.max_depth is clamped here */
#define IG_DET_CAP		48	/* detail entries kept per cause */
#define IG_DET_SHOW		8	/* ... of which the report lists */
#define IG_BIO_RECENT		8	/* per thread: names a storage wait */
#define IG_MAX_DEVICES		64
#define IG_MAX_CPUS		1024	/* per-CPU record order, for losses */
#define IG_MAX_BIODEVS		32
#define IG_MAX_LIBCUDA		64
#define IG_MAX_MAPS		8192	/* file mappings kept per process */
#define IG_DEV_CLOSED_CAP	4096	/* unfinalised stream intervals */
#define IG_DEFER_CAP		4096	/* unresolved spans awaiting feeder */
#define IG_EXITED_PROCS_KEEP	1024
#define IG_COMM_CACHE		4096	/* direct-mapped tid -> comm */

/*
 * A sync or query that returns within this long of its entry (time spent
 * preempted aside) found the GPU already drained: the unresolved time it
 * ends was host-bound.  Measured: on an H100 (driver 580) cuStreamSynchronize
 * on a drained GPU took p50 10 us, p99 22 us including two uprobe hits; on a
 * loaded 2-CPU VM with the simulated driver, p50 18 us, p99 111 us, max
 * 150 us; syncs that waited for work took milliseconds.  A sync that waits
 * less than this for the GPU leaves it nearly idle anyway.
 */
#define IG_AT_ONCE_NS		200000ULL

/* How an unresolved span ended (docs/design.md §4.7). */
enum ig_bound {
	IG_B_OPEN,	/* submission, end of tracing, lost records, exit,
			 * a synchronous copy (its own staging and transfer) */
	IG_B_HOST,	/* a sync or query that returned at once */
	IG_B_GPU,	/* a sync that waited, or busy evidence */
};

/* One off-CPU interval of a thread: struct ig_ival, in engine_obs.h (an
 * observer's step holds one). */

/* A span inside a CUDA driver call. */
struct ig_span {
	uint64_t t1;		/* key */
	uint64_t t0;
	uint32_t api;
	uint32_t pad;
};

/* A CPU-clock sample of a thread: was it running CUDA driver code? */
struct ig_sample_ref {
	uint64_t t;		/* key */
	uint32_t cuda;
	uint32_t fault;		/* in the kernel, in a page fault */
};

struct ig_bio_ref {
	uint64_t t_issue, t_done;
	uint32_t dev;
	uint32_t pad;
};

struct ig_process;
struct ig_stacks;
struct ig_est;

struct ig_thread {
	uint32_t tid, tgid;
	char comm[IG_COMM_LEN];
	uint64_t first_seen;
	uint64_t exit_ts;	/* IG_NS_INF: alive */
	uint64_t known_until;	/* its state is known up to here */
	uint64_t hist_from;	/* older history was dropped */
	uint64_t last_on;	/* t_on of the newest interval */
	uint64_t open_begin;	/* entry of a sync call not yet returned */
	uint32_t open_api;
	uint32_t nbio;
	struct ig_bio_ref bio[IG_BIO_RECENT];
	struct ig_ring ivals;	/* struct ig_ival by t_on */
	struct ig_ring spans;	/* struct ig_span by t1 */
	struct ig_ring samples;	/* struct ig_sample_ref by t */
	struct ig_ring stks;	/* struct ig_stk_ref by t (stacks.c) */
	struct ig_process *proc;
	struct ig_thread *proc_next;
	struct ig_thread *prev, *next;	/* engine-wide list */
};

struct ig_map {
	uint64_t start, end;
	char path[128];
};

struct ig_device;

struct ig_stream {
	uint64_t key;		/* normalised stream value */
	struct ig_process *proc;
	struct ig_device *dev;
	bool pending;		/* work not yet proven complete */
	bool blocking;		/* syncs with the legacy stream */
	bool drained_once;
	uint64_t p_start;	/* pending since */
	uint64_t pending_until;	/* known pending at least until */
	uint64_t drained_at;
	uint64_t coll_at;	/* a collective's launch (peers_local.c) */
	uint64_t coll_end;	/* the first drain after it (0: none yet) */
	bool coll_end_exact;	/* ... seen by a sync that waited for it */
	uint32_t feeder_tid, feeder_tgid;
	uint32_t open_idx;	/* slot in dev->open while pending */
	/* the last sync that waited for it (IG_B_GPU): its queue was
	 * non-empty over [waited_from, waited_to), its work pending since
	 * waited_pend, and thread waited_tid waited on it (a late rank's
	 * peer_compute, §4.9) */
	uint64_t waited_pend, waited_from, waited_to;	/* and pending since */
	uint32_t waited_tid;
};

struct ig_process {
	uint32_t pid, ppid;
	char comm[IG_COMM_LEN];
	char exe[128];
	uint64_t first_seen;
	uint64_t exit_ts;
	uint64_t pyrt_start, pyrt_end;
	struct ig_map *maps;	/* sorted by start */
	uint32_t nmaps;
	size_t capmaps;
	int device;		/* the ordinal of its current context */
	bool device_set;
	int32_t gpumap[IG_GPUMAP_MAX];	/* the device of each ordinal */
	uint32_t ngpumap;
	/* its host GPU from evidence that outlives its set-up, the newest
	 * IG_REC_GPUDEV (§4.2): valid when gd_seen */
	bool gd_seen;
	int32_t gd_dev;		/* the host's index, -1: unknown */
	uint32_t gd_src;	/* enum ig_gpudev_src */
	int32_t env_rank;	/* RANK of its environment, -1: unset */
	char gd_uuid[48];
	bool on_gpu;		/* has submitted work */
	uint32_t nthreads_seen;
	struct ig_thread *threads;
	struct ig_htab streams;
	uint64_t submissions, launches;
	struct ig_process *exit_next;	/* queue of exited processes */
};

/* A closed pending interval of a stream (or lost evidence: tid 0). */
struct ig_pend {
	uint64_t t0, t1;
	uint32_t tid, tgid;
	uint32_t how;		/* enum ig_bound: what closed it */
	uint32_t pad;
};

/* The device was proven busy over [t0, t1]. */
struct ig_busy {
	uint64_t t0, t1;
};

/* Records may be missing over [t0, t1]: no idle time is proven there. */
struct ig_lost {
	uint64_t t0, t1;
};

struct ig_device {
	int ordinal;
	bool active;		/* first submission seen */
	bool idle_open;		/* an idle gap open since final_until */
	uint64_t span_start;
	uint64_t final_until;	/* timeline final before this */
	uint64_t last_ev;	/* newest evidence */
	struct ig_stream **open;
	uint32_t nopen;
	size_t capopen;
	struct ig_vec closed;	/* struct ig_pend */
	struct ig_vec busy;	/* struct ig_busy */
	uint64_t busy_ns, idle_ns, unres_ns;
	uint64_t unres_host_ns, unres_gpu_ns;	/* the rest is open */
	uint64_t ur_ns;		/* unresolved run not yet ended */
	uint64_t ur_t0, ur_t1;	/* ... its bounds and feeder, for an observer */
	uint32_t ur_tid, ur_tgid;
	uint32_t end_how;	/* enum ig_bound of the newest drain */
	uint64_t gaps, unres_spans;
	struct ig_hist gap_hist;	/* this GPU's gaps (the engine's: all) */
	uint32_t nstreams;
	/* unresolved span being merged for the list */
	uint64_t merging_t0, merging_t1;
	uint32_t merging_tid, merging_tgid;
	bool merging_open;
	/* a window's end inside a gap (carry.c, docs/design.md §7.10) */
	bool held;		/* open at the hold: ended by what follows */
	bool frozen;		/* counted no further after the hold */
	uint8_t held_how;	/* enum ig_held_how */
	uint64_t held_from;	/* the gap's start, in this window */
	uint64_t held_end;	/* when it ended (0: not yet) */
	uint64_t held_ns;	/* what this window counted of it */
	uint64_t idle_open_ns;	/* idle, the gap still open (no cause) */
	/* a gap carried in from the last window: open since carry_from
	 * here, since carry_start in truth, its processes carry_pids */
	uint64_t carry_from, carry_start, carry_ns;
	uint8_t carry_how;	/* enum ig_held_how, once it ended */
	uint32_t ncarry;
	uint32_t carry_pids[IG_CARRY_PIDS];
};

/* How a gap open at a window's end ended (carry.c). */
enum ig_held_how {
	IG_HELD_OPEN,		/* not yet */
	IG_HELD_LAUNCH,		/* a submission: idle, attributed */
	IG_HELD_WORK,		/* work never seen submitted: unresolved */
	IG_HELD_EXIT,		/* its processes ended: dropped, as at a trace's end */
	IG_HELD_BOUND,		/* still open at the bound: idle_open */
};

enum ig_dkind {
	IG_D_FILE = 1,
	IG_D_DEVICE,
	IG_D_PROCESS,
	IG_D_CPU,
	IG_D_LOCK,
	IG_D_WAKER,
	IG_D_HOLDER,
	IG_D_PEER,
	IG_D_API,
	IG_D_THREAD,
	IG_D_WHY,
	IG_D_MOUNT,	/* k: ig_files_mount_at() id; aux[0]: files */
};

/* One line of detail under a cause; the key is (kind, tid, pid, k, name). */
struct ig_detail {
	uint8_t kind;
	uint32_t tid, pid;
	uint64_t k;
	char name[IG_NAME_LEN];
	uint64_t ns;
	uint64_t err;		/* ns inherited on eviction (upper error) */
	uint64_t count;
	uint64_t aux[3];
};

struct ig_cause_acc {
	uint64_t ns;
	uint64_t evicted;	/* detail keys that replaced others */
	uint32_t ndet;
	struct ig_detail det[IG_DET_CAP];
};

struct ig_causeset {
	uint64_t total_ns;
	struct ig_cause_acc c[IG_C__MAX];
};

struct ig_biodev {
	uint32_t dev;
	uint64_t reads, bytes;
	struct ig_hist lat;
};

struct ig_nvdev {
	uint32_t device;
	uint64_t n, util_sum, mem_sum;
};

/* An unresolved span whose feeder's timeline may not be complete yet. */
struct ig_piece {
	uint64_t t0, t1;
	uint32_t tid, tgid;
	int32_t device;		/* the GPU's ordinal */
	uint32_t pad;
};

/*
 * Where the GPU model hands what it finds: each closed idle gap the moment
 * the timeline proves it, and each unresolved piece with its feeder.
 * Attribution implements it (ig_attrib_sink); the model never calls
 * attribution directly.
 */
struct ig_gap_sink {
	void (*idle_gap)(void *ctx, const struct ig_gap *g);
	void (*unresolved)(void *ctx, const struct ig_piece *p);
	void *ctx;
};

struct ig_comm_ent {
	uint32_t tid;
	char comm[IG_COMM_LEN];
};

/* The task tables; tasks.c owns them (lifecycle.c creates and frees). */
struct ig_tasks {
	struct ig_htab threads;	/* tid -> ig_thread */
	struct ig_htab procs;	/* tgid -> ig_process */
	struct ig_thread *thr_head;	/* every thread, newest first */
	uint32_t nthreads, nprocs;
	uint64_t threads_freed, procs_freed;
	struct ig_process *exit_head, *exit_tail;	/* exited, oldest first */
	uint32_t nexited;
	struct ig_comm_ent *comms;
};

/* The run's clock: what has been seen, up to when, and the window of
 * history kept (intake.c, lifecycle.c). */
struct ig_engine_win {
	uint64_t cpu_last[IG_MAX_CPUS];	/* newest record per CPU */
	uint64_t now;
	uint64_t first_ts, meta_ts, end_ts;
	bool have_meta, have_end, finished;
	uint32_t stop_reason;
	struct ig_meta meta;
	uint64_t cutoff;	/* history older than this is dropped */
	uint64_t next_gc;
	uint64_t gc_count;
	uint64_t cap_cutoff;	/* the history budget's own cutoff: what a
				 * head keeps (head.c) is cut there too */
	uint64_t hist_trims;	/* the history budget moved the cutoff */
	uint64_t hist_kept_min;	/* the least history it left, ns */
};

/* The GPU model's devices (gpu.c, drain.c, sweep.c). */
struct ig_engine_gpu {
	struct ig_device *devs[IG_MAX_DEVICES];
	uint32_t ndevs;
	struct ig_gap_sink sink;	/* closed gaps go there */
	/* every unresolved piece, also, for the estimate (set by
	 * lifecycle.c: the sweep calls no layer above it) */
	void (*unres_tap)(struct ig_engine *e, const struct ig_piece *p);
	/* and every proven idle gap, for the device counters' windows */
	void (*idle_tap)(struct ig_engine *e, int ordinal, uint64_t t0, uint64_t t1);
	/* and every sync or query that ended, for the estimate's marks
	 * (drain.c; the arguments are ig_est_on_sync()'s) */
	void (*sync_tap)(struct ig_engine *e, struct ig_process *p, uint64_t t_in,
			 uint64_t t_end, uint64_t t_wake, bool waited);
	void *scratch;		/* sweep event buffer (sweep.c) */
	uint64_t held_at;	/* the window's end (ig_engine_hold), 0: none */
	bool held_clip;		/* count a held gap up to held_at only */
	size_t scratch_cap;
};

/* One GPU's share of the cause time: [0] idle, [1] unresolved. */
struct ig_dev_causes {
	int ordinal;
	uint64_t ns[2][IG_C__MAX];
};

/* What attribution made of the gaps (attrib.c, causes.c, detail.c). */
struct ig_engine_attr {
	/* each feeder stretch of an unresolved piece with its time per
	 * cause, for the causes of estimated idle (set by lifecycle.c:
	 * attribution calls no layer above it) */
	void (*seg_tap)(struct ig_engine *e, uint64_t *ns, uint64_t x, uint64_t y);
	int max_depth;
	long max_gaps;
	struct ig_causeset idle, unres;
	struct ig_dev_causes bydev[IG_MAX_DEVICES];	/* the same, per GPU */
	uint32_t nbydev;
	struct ig_gaplist gaps, unres_list;
	struct ig_hist gap_hist;
	struct ig_ring defer;	/* struct ig_piece, oldest first */
};

/* Counts for the report, none of them evidence (intake.c). */
struct ig_engine_acct {
	uint64_t nsamples, nsamples_cuda;
	struct ig_biodev biodev[IG_MAX_BIODEVS];
	uint32_t nbiodev;
	uint64_t nrec;
	uint64_t by_type[IG_REC_SLOTS];	/* by ig_rec_slot() */
	uint64_t cuda_by_kind[IG_CU__MAX];
	bool have_stats;
	struct ig_stats stats;
	struct ig_libcuda libcuda[IG_MAX_LIBCUDA];
	uint32_t nlibcuda;
	struct ig_nvdev nvml[IG_MAX_DEVICES];
	uint32_t nnvml;
	uint64_t offcpu_ns[IG_R__MAX];
	uint64_t runnable_ns;
	/* waits whose switch-in the kernel did not report (IG_F_IN_UNSEEN,
	 * docs/design.md §5.15) */
	uint64_t in_unseen;
	uint64_t submissions, launches;
	uint64_t sub_by_api[IG_API__MAX];
	uint64_t launch_by_api[IG_API__MAX];
};

/* Evidence the tracer lost: no idle is proven across it (docs/design.md
 * §3.5; intake.c fills it, attribution reads it). */
struct ig_engine_lost {
	struct ig_vec ranges;	/* struct ig_lost */
	bool any;
	uint64_t marks;		/* records flagged IG_HDR_LOST_BEFORE */
};

struct ig_engine {
	struct ig_engine_opts o;
	uint64_t window_ns;
	struct ig_engine_win win;
	struct ig_tasks tasks;	/* tasks.c */
	struct ig_files *files;	/* waited-on files' paths (files.c) */
	struct ig_atattach *atattach;	/* threads' states at the start
					 * (attrib/atattach.c) */
	struct ig_head *head;	/* the time before a device's first work
				 * seen (head.c) */
	struct ig_engine_gpu gpu;
	struct ig_engine_attr attr;
	struct ig_engine_acct acct;
	struct ig_engine_lost lost;
	/* observe.c: a view's observer (span NULL: none), its note of a
	 * gap's walk, and where gaps go after it */
	struct ig_engine_obs obs;	/* what the engine calls: the steps'
					 * and the view's (obs_view) */
	struct ig_engine_obs obs_view;
	struct ig_obs_walk *obs_walk;
	struct ig_gap_sink obs_sink;
	struct ig_stacks *stk;	/* stacks per cause (stacks.c) */
	struct ig_est *est;	/* estimated idle (estimate.c) */
	struct ig_peers *peers;	/* collectives across ranks (peers.c);
				 * NULL until an NCCL record comes */
	struct ig_merge *merge;	/* several hosts' recordings (merge.c);
				 * NULL: one */
	struct ig_idents *idents;	/* pods of processes (idents.c);
					 * NULL until an IDENT record comes */
	struct ig_steps *steps;	/* a loop's steps (steps/steps.c) */
};

/* ---- gpu.c ---- */
/* Device keys from IG_DEV_UNKNOWN on are one process's GPU that nothing
 * placed (§4.2): IG_DEV_UNKNOWN | pid, an entry of its own. */
#define IG_DEV_UNKNOWN	0x40000000
static inline bool ig_gpu_dev_unknown(int key)
{
	return key >= IG_DEV_UNKNOWN;
}
/* The engine's device for @p (§4.2): its context's ordinal (as the host
 * GPU an IG_REC_GPUMAP or NVML says it is), else the host GPU an
 * IG_REC_GPUDEV names, else a device of its own, unknown. */
int ig_gpu_proc_device(const struct ig_process *p);
/* Where that device comes from: "context", "nvml", "device_node",
 * "cuda_visible_devices", "gpumap" or NULL (unknown). */
const char *ig_gpu_proc_device_source(const struct ig_process *p);
/* The host GPU the node's own evidence (NVML's one GPU, the one device
 * node it holds open) places @p on, whatever its context said; -1 when
 * neither does. */
int ig_gpu_proc_node_device(const struct ig_process *p);

/* ---- lifecycle.c ---- */
/* Slide the history window: free exited tasks, prune old history. */
void ig_engine_gc(struct ig_engine *e);
/* The cutoff, at or after @cutoff, that holds all threads' history under
 * its budget (histcap.c). */
uint64_t ig_histcap_cutoff(struct ig_engine *e, uint64_t cutoff);

/* ---- gpu.c ---- */
void ig_gpu_cuda(struct ig_engine *e, const struct ig_cuda *c);
void ig_gpu_proc_exit(struct ig_engine *e, struct ig_process *p, uint64_t ts);
void ig_gpu_finish(struct ig_engine *e);
void ig_gpu_mark_lost(struct ig_engine *e, uint64_t t0, uint64_t t1);
uint64_t ig_gpu_keep_from(const struct ig_engine *e);
/* End of the device's counted span (after ig_gpu_finish). */
uint64_t ig_gpu_span_end(const struct ig_device *d);
void ig_gpu_free(struct ig_engine *e);
/* The device of @ordinal, made on first use; NULL when too many. */
struct ig_device *ig_gpu_dev_get(struct ig_engine *e, int ordinal);
/* A device's end of the trace (sweep.c): the last sweep, the last run. */
void ig_gpu_dev_end(struct ig_engine *e, struct ig_device *d);
/* Whether a process may still submit to @d: one with streams on it, or
 * one a gap carried in names (gpu.c). */
bool ig_gpu_dev_has_procs(const struct ig_device *d);

/* ---- carry.c ---- */
/* Whether a held engine still takes records of @type. */
bool ig_carry_wants(uint32_t type);
/* A CUDA record after the hold: may end a held gap. */
void ig_carry_cuda(struct ig_engine *e, const struct ig_cuda *c);
/* At finish of a held engine: the held gaps still open count as
 * idle_open. */
void ig_carry_finish(struct ig_engine *e);
/* Tracing stopped at @t while the job went on (no hold): an idle gap
 * still open on a device whose processes live counts as idle_open up to
 * @t (docs/design.md §4.5). */
void ig_carry_tail(struct ig_engine *e, uint64_t t);
struct json_object;
/* The gaps a window held at its end and carried in (docs/design.md
 * §7.10): NULL for a trace that is no window. */
struct json_object *ig_carry_json(const struct ig_engine *e);

/* ---- attrib.c ---- */
/* Blame [t0, t1) of an idle gap (idle=true) or unresolved span on the
 * feeder thread's timeline; every ns lands in exactly one cause. */
void ig_attrib_piece(struct ig_engine *e, bool idle, const struct ig_piece *p);
/* The same walk over [t0, t1) of thread p->tid, into @set alone (no GPU's
 * share, no stacks): a late rank's lateness (peers.c). */
void ig_attrib_into(struct ig_engine *e, struct ig_causeset *set,
		    const struct ig_piece *p);
/* A GPU's cause time (idle or unresolved), by enum ig_cause; NULL when
 * none was given to it. */
const uint64_t *ig_attrib_dev_causes(const struct ig_engine *e, int ordinal,
				     bool idle);
/* Point @s at attribution of @e. */
void ig_attrib_sink(struct ig_engine *e, struct ig_gap_sink *s);
/* Unresolved spans wait until their feeder's timeline covers them. */
void ig_attrib_defer_piece(struct ig_engine *e, const struct ig_piece *p);
void ig_attrib_defer_poll(struct ig_engine *e, bool force);
/* Where the device's first span still waiting starts (UINT64_MAX: none
 * waits): the walk has given causes to all its time before. */
uint64_t ig_attrib_deferred_from(const struct ig_engine *e, int device);

/* ---- observe.c: the observer (engine_obs.h), when one is set ---- */
struct ig_obs_walk {
	uint64_t ns[IG_C__MAX];		/* the gap's time per cause */
	bool stretches;			/* note them (a view wants them) */
	struct ig_obs_step steps[IG_OBS_STEPS];
	unsigned int n;
	uint64_t dropped;
};
void ig_observe_span(struct ig_engine *e, const struct ig_device *d, int kind,
		     uint64_t t0, uint64_t t1, uint32_t tid, uint32_t tgid, int bound);
void ig_observe_gap(struct ig_engine *e, const struct ig_gap *g);
/* Steps found (steps/steps.h), observed from the start; -ENOMEM. */
int ig_observe_steps(struct ig_engine *e, int marker_api);

/* ---- introspection, for tests and -v ---- */
struct ig_engine_mem {
	uint64_t threads, procs, streams;
	uint64_t intervals, spans;	/* retained thread history */
	uint64_t closed, busy;		/* unfinalised device evidence */
	uint64_t deferred;
	size_t bytes;			/* approximate heap held */
};
void ig_engine_mem(const struct ig_engine *e, struct ig_engine_mem *m);

#endif
