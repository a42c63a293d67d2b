/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trainsim: a workload shaped like one data-parallel training process, with
 * a scenario knob that decides what on the host starves the GPU.
 *
 *   loader workers --(pipe | shm ring)--> feeder --(driver API)--> GPU
 *
 * Workers read samples (page cache, cold storage, cold mmap, or a paced
 * loopback TCP server), "decode" them on the CPU and hand whole batches to
 * the feeder, which copies each batch to the device, launches the step's
 * kernels and synchronizes like loss.item().
 */
#ifndef TRAINSIM_H
#define TRAINSIM_H

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpu.h"

#define MAX_WORKERS 64
#define MAX_HOGS 64

enum reader { RD_CACHED, RD_COLD, RD_MMAP, RD_NET };
enum queue_kind { Q_PIPE, Q_SHM };

/* How a step's kernels are made (kmix.c). */
enum kmix {
	KM_SAME,	/* every kernel the same */
	KM_TWO,		/* two signatures of different durations */
	KM_DRIFT,	/* durations drift to twice their start */
	KM_GRAPH,	/* the step's kernels as one CUDA graph */
};

/* What slows every --slow-every'th step on purpose, the others not. */
enum slow_kind {
	SLOW_NONE,
	SLOW_COLD,	/* that batch's loader reads a shard cold (loader.c) */
	SLOW_EVAL,	/* the feeder computes on the host before launching */
	SLOW_KERNELS,	/* 4 times the kernels (a ranks straggler) */
};

/* Steps slowed on purpose: every SLOW_EVERY'th by default. */
#define SLOW_EVERY 10

struct scenario {
	const char *name;
	const char *cause;	/* expected idlegap cause; NULL: none */
	const char *doc;
	enum reader reader;
	int workers;		/* 0: 2 */
	int kernels;
	double kernel_us;
	long steps;
	int batch_samples, sample_kb, read_kb, decode_us;
	int out_kb;		/* decoded sample handed on; 0: sample_kb */
	int hogs, hold_ms, net_delay_us, copy_mb;
	int op_host_us;		/* host work after each launch */
	int sync_every;		/* steps per sync; 0: 1 */
	enum kmix kmix;
	enum slow_kind slow;	/* SLOW_NONE: every step alike */
	int slow_ms;		/* the stall of a slowed step (cold, eval) */
	bool irregular;		/* requests, no step structure (feeder.c) */
};

/* The kernel's accounting of one thread (acct.c). */
#define ACCT_MAX 96
struct acct_thread {
	pid_t pid, tid;
	char comm[20];
	const char *role;	/* feeder, worker, holder, hog, other */
	unsigned long long cpu_ns, run_ns, blkio_ns, vol, invol;
};

struct acct {
	bool sampled, delayacct;
	unsigned long long host_busy_ns;	/* the host's CPU time not idle */
	uint64_t mono_ns;
	int n;
	struct acct_thread t[ACCT_MAX];
};

/* Command line, merged over the scenario's defaults (-1: not given). */
struct opts {
	const struct scenario *sc;
	int workers;
	bool threads;
	enum queue_kind queue;
	int prefetch;
	const char *data_dir;
	int data_mb;
	int batch_samples, sample_kb, read_kb, decode_us, out_kb;
	int kernels;
	double kernel_us;
	long steps;
	double seconds;
	bool no_sync;
	bool direct;		/* cold reads with O_DIRECT */
	bool buffered;		/* cold reads through the page cache */
	enum stream_mode stream;
	const char *truth;
	int hogs, hold_ms, net_delay_us, copy_mb;
	int op_host_us, sync_every;
	bool quiet;
	bool neighbour;		/* be the untraced neighbour instead */
	bool ranks;		/* trainsim ranks: see ranks.c */
	int world, straggler, grad_mb;
	bool no_loss_sync;	/* ranks: all-reduce without reading the loss */
	const char *io_cgroup;	/* worker processes join it (throttle.c) */
	const char *sc_name;
	bool seconds_given;
	int slow_every;		/* period of the slowed steps; ranks: of the
				 * straggling (-1: every step) */
	int slow_ms;
	bool no_slow;		/* the same job without its slowed steps */
	bool straggle_every;	/* --straggle-every given */
	unsigned long seed;	/* irregular: its requests */
};

struct dataset {
	char dir[4096];
	int nfiles;
	size_t sample_bytes;
};

struct queue;

struct run {
	const struct opts *o;
	struct dataset ds;
	size_t out_bytes;	/* per sample in a batch */
	size_t batch_bytes;
	struct queue *q;
	uint64_t decode_loops_per_us;
	int pin_cpu;		/* -1: no pinning */
	int server_port;
	pid_t server;
	int nworkers;
	pid_t worker_pid[MAX_WORKERS];
	pthread_t worker_thread[MAX_WORKERS];
	pid_t worker_tid[MAX_WORKERS];
	int nhogs;
	pid_t hog_pid[MAX_HOGS];
	pthread_t holder;
	pid_t holder_tid;
	bool holder_running;
	pthread_mutex_t step_lock;	/* the lock scenario's contended lock */
	volatile sig_atomic_t stop;
	struct acct acct0, acct;	/* the feeding threads, as the loop starts and ends */
};

/* One step as the loop ran it (the truth's step_list). */
struct step_rec {
	uint64_t start, end;	/* before its batch wait; after its last
				 * driver call returned */
	const char *cause;	/* injected on purpose; NULL: none */
	int late_rank;		/* peer_wait: the rank waited for; else -1 */
	uint64_t run_delay;	/* the feeder's time runnable, not running,
				 * in the step: the kernel's own accounting
				 * (schedstat), against which a cpu_starvation
				 * step is judged */
	uint64_t cpu;		/* and its time on a CPU, against which a
				 * host_compute step is judged */
	uint64_t loader_run_delay;	/* and its batch's worker's, making it */
	uint64_t loader_cpu;	/* that worker's time on a CPU making it,
				 * against which a host_compute step is
				 * judged */
	bool slowed;		/* slowed on purpose beyond the others */
};

struct step_stats {
	long steps;
	uint64_t t_start, t_end;	/* CLOCK_MONOTONIC ns */
	struct step_rec *rec;		/* steps, in order */
	size_t nrec, cap;
};

/* util.c */
uint64_t mono_ns(void);
void sleep_ns(uint64_t ns);
void pin_self(int cpu);
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
uint64_t decode_calibrate(void);
uint64_t decode(const unsigned char *buf, size_t n, uint64_t loops);
struct thread_sched {
	uint64_t cpu;		/* on a CPU */
	uint64_t run_delay;	/* runnable, waiting for one */
};
struct thread_sched thread_sched(void);
struct thread_sched thread_sched_since(struct thread_sched d0);
void batch_delay_put(void *batch, size_t n, struct thread_sched d);
void batch_delay_take(const void *batch, size_t n, struct thread_sched *d);

/* loader.c */
int dataset_prepare(struct dataset *ds, const char *dir, int nfiles,
		    size_t sample_bytes, bool quiet);
void dataset_warm(const struct dataset *ds);
int workers_start(struct run *r);
void workers_stop(struct run *r);

/* queue.c */
struct queue *queue_new(enum queue_kind kind, int workers, int prefetch,
			size_t batch_bytes, volatile sig_atomic_t *stop);
int queue_put(struct queue *q, int worker, uint64_t batch, const void *data,
	      size_t n);
int queue_get(struct queue *q, uint64_t batch, void *dst, size_t n);
void queue_worker_side(struct queue *q, int worker);
void queue_feeder_side(struct queue *q);
void queue_free(struct queue *q);

/* antagonist.c */
int server_start(struct run *r);
int hogs_start(struct run *r);
int holder_start(struct run *r);
void antagonists_stop(struct run *r);

/* neighbour.c */
int neighbour_run(const char *dir, double seconds, bool quiet);

/* feeder.c */
void feeder_run(struct run *r, struct gpu *g, struct step_stats *st);
/* Whether step (and batch) n is one the scenario slows on purpose. */
bool step_slowed(const struct opts *o, long n);

/* ranks.c */
/* throttle.c: a cgroup whose reads from one disk are slow (root) */
const char *throttle_create(const char *path, uint64_t bps, const char **why);
int throttle_join(const char *dir);
void throttle_remove(void);
/* main.c: a single-GPU scenario by name, or NULL */
const struct scenario *scenario_find(const char *name);
const char *ranks_find(const char *name);
void ranks_list(void);
bool ranks_setup(struct opts *o, int world, int straggler, int grad_mb);
int ranks_launch(char **argv, const struct opts *o);
void ranks_data_lock(const char *dir, bool on);
void ranks_env(void);
void ranks_preload(void);
int ranks_local_rank(void);
void ranks_open(struct gpu *g, enum stream_mode mode);
bool ranks_active(void);
bool ranks_is_straggler(void);
/* Step n's injected cause on this rank (NULL: none), *late the rank it
 * waited for (else -1); false when no rank straggles in step n. */
bool ranks_step_cause(long n, const char **cause, int *late);
int ranks_rank(void);
void ranks_allreduce(struct gpu *g);
void ranks_close(struct gpu *g);
void ranks_json(FILE *f);
void ranks_cleanup(bool keep);

/* acct.c */
void acct_sample(struct run *r, struct acct *a);
void acct_json(FILE *f, const struct acct *start, const struct acct *end);

/* truth.c */
void trace_path(char *out, size_t len);
int truth_report(const struct run *r, struct gpu *g,
		 const struct step_stats *st);

/* kmix.c: the @k-th kernel of step @step, @progress (0..1) into the run. */
void kmix_launch(struct gpu *g, enum kmix mix, uint64_t kernel_ns, long step,
		 int k, int nkern, double progress);

#endif /* TRAINSIM_H */
