// SPDX-License-Identifier: GPL-2.0
/*
 * trainsim: command line, scenarios, and the order in which the pieces
 * start and stop.
 */
#include <argp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trainsim.h"

/*
 * Each scenario's defaults make its cause dominate the GPU's idle time on
 * a small machine (2 CPUs, virtual disk) and finish in a few seconds.
 */
static const struct scenario scenarios[] = {
	{ .name = "healthy", .cause = NULL, .reader = RD_CACHED,
	  .doc = "GPU-bound; the prefetching loader keeps up",
	  .kernels = 8, .kernel_us = 2000, .steps = 300, .batch_samples = 4,
	  .sample_kb = 128, .read_kb = 128, .decode_us = 50 },
	{ .name = "storage", .cause = "storage", .reader = RD_COLD,
	  .doc = "workers read() samples cold from disk",
	  .kernels = 2, .kernel_us = 250, .steps = 600, .batch_samples = 4,
	  .sample_kb = 1024, .read_kb = 1024, .decode_us = 0, .out_kb = 16 },
	{ .name = "pagefault", .cause = "page_fault", .reader = RD_MMAP,
	  .doc = "a worker faults in cold mmap'd samples", .workers = 1,
	  .kernels = 2, .kernel_us = 500, .steps = 700, .batch_samples = 4,
	  .sample_kb = 128, .read_kb = 128, .decode_us = 0, .out_kb = 16 },
	{ .name = "cpu", .cause = "cpu_starvation", .reader = RD_CACHED,
	  .doc = "CPU hogs pinned with the workers and the feeder",
	  .kernels = 4, .kernel_us = 500, .steps = 300, .batch_samples = 8,
	  .sample_kb = 128, .read_kb = 128, .decode_us = 300, .hogs = 3 },
	{ .name = "lock", .cause = "lock", .reader = RD_CACHED,
	  .doc = "a feeder thread holds the per-step mutex while computing",
	  .kernels = 4, .kernel_us = 2000, .steps = 150, .batch_samples = 8,
	  .sample_kb = 128, .read_kb = 128, .decode_us = 100, .hold_ms = 25 },
	{ .name = "network", .cause = "network", .reader = RD_NET,
	  .doc = "workers fetch samples from a paced loopback TCP server",
	  .kernels = 2, .kernel_us = 1000, .steps = 400, .batch_samples = 8,
	  .sample_kb = 64, .read_kb = 64, .decode_us = 50,
	  .net_delay_us = 1500 },
	{ .name = "launch", .cause = "cuda_api", .reader = RD_CACHED,
	  .doc = "thousands of tiny kernels per step",
	  .kernels = 2000, .kernel_us = 2, .steps = 300, .batch_samples = 8,
	  .sample_kb = 128, .read_kb = 128, .decode_us = 50 },
	{ .name = "sync_copy", .cause = "cuda_api", .reader = RD_CACHED,
	  .doc = "large synchronous copies from new pageable memory",
	  .kernels = 2, .kernel_us = 2000, .steps = 150, .batch_samples = 8,
	  .sample_kb = 128, .read_kb = 128, .decode_us = 50, .copy_mb = 64 },
	{ .name = "eager", .cause = "host_compute", .reader = RD_CACHED,
	  .doc = "eager ops: host work after each small launch, loss.item() per step",
	  .kernels = 200, .kernel_us = 10, .steps = 1000, .batch_samples = 4,
	  .sample_kb = 128, .read_kb = 128, .decode_us = 50, .op_host_us = 100 },
	{ .name = "gpubound", .cause = NULL, .reader = RD_CACHED,
	  .doc = "long kernels, a sync every 4 steps, the host far ahead",
	  .kernels = 4, .kernel_us = 5000, .steps = 400, .batch_samples = 4,
	  .sample_kb = 128, .read_kb = 128, .decode_us = 50, .sync_every = 4 },
	{ .name = "twokern", .cause = "host_compute", .reader = RD_CACHED,
	  .doc = "two kernels, long and short, host work after each launch",
	  .kernels = 6, .kernel_us = 400, .steps = 2000, .batch_samples = 4,
	  .sample_kb = 128, .read_kb = 128, .decode_us = 50, .op_host_us = 150,
	  .kmix = KM_TWO },
	{ .name = "drift", .cause = "host_compute", .reader = RD_CACHED,
	  .doc = "kernels that grow to twice their duration over the run",
	  .kernels = 4, .kernel_us = 300, .steps = 2000, .batch_samples = 4,
	  .sample_kb = 128, .read_kb = 128, .decode_us = 50, .op_host_us = 200,
	  .kmix = KM_DRIFT },
	{ .name = "graphs", .cause = "host_compute", .reader = RD_CACHED,
	  .doc = "each step's kernels as one CUDA graph, host work after it",
	  .kernels = 4, .kernel_us = 250, .steps = 2000, .batch_samples = 4,
	  .sample_kb = 128, .read_kb = 128, .decode_us = 50, .op_host_us = 100,
	  .kmix = KM_GRAPH },
	/* Only some steps slowed (--slow-every, default every 10th): the
	 * others are GPU-bound, one sync each, 4 x 2.5 ms of kernels.
	 * coldshard's samples are the storage scenario's 1 MiB: a cold read
	 * of one waits milliseconds for the disk, where the CPU time of
	 * more, smaller reads would be a good part of the stall */
	{ .name = "coldshard", .cause = "storage", .reader = RD_CACHED,
	  .doc = "cached batches; every Nth batch's loader also reads a shard "
		 "cold (O_DIRECT, --slow-ms 100 of reads)",
	  .kernels = 4, .kernel_us = 2500, .steps = 300, .batch_samples = 4,
	  .sample_kb = 1024, .read_kb = 1024, .decode_us = 50, .out_kb = 128,
	  .slow = SLOW_COLD, .slow_ms = 100 },
	{ .name = "evalstep", .cause = "host_compute", .reader = RD_CACHED,
	  .doc = "every Nth step the feeder computes on the host "
		 "(--slow-ms 30) before launching",
	  .kernels = 4, .kernel_us = 2500, .steps = 400, .batch_samples = 4,
	  .sample_kb = 128, .read_kb = 128, .decode_us = 50,
	  .slow = SLOW_EVAL, .slow_ms = 30 },
	/* -k and -d are the most kernels a request launches and their
	 * longest duration */
	{ .name = "irregular", .cause = NULL, .reader = RD_CACHED,
	  .doc = "inference-like requests (--seed): 1-40 kernels of random "
		 "length, a random copy, random pauses; no step structure",
	  .kernels = 40, .kernel_us = 400, .steps = 300, .batch_samples = 1,
	  .sample_kb = 128, .read_kb = 128, .decode_us = 20,
	  .irregular = true },
};

static struct run run = { .step_lock = PTHREAD_MUTEX_INITIALIZER,
			  .pin_cpu = -1 };

enum {
	OPT_THREADS = 256, OPT_QUEUE, OPT_PREFETCH, OPT_DATA, OPT_DATA_MB,
	OPT_BATCH, OPT_SAMPLE_KB, OPT_READ_KB, OPT_DECODE_US, OPT_NO_SYNC,
	OPT_STREAM, OPT_TRUTH, OPT_HOGS, OPT_HOLD_MS, OPT_NET_DELAY,
	OPT_COPY_MB, OPT_LIST, OPT_OUT_KB, OPT_DIRECT, OPT_BUFFERED,
	OPT_NEIGHBOUR, OPT_OP_HOST_US, OPT_SYNC_EVERY, OPT_WORLD,
	OPT_STRAGGLER, OPT_GRAD_MB, OPT_NO_LOSS_SYNC, OPT_SLOW_EVERY,
	OPT_STRAGGLE_EVERY, OPT_NO_SLOW, OPT_SLOW_MS, OPT_SEED,
};

static const char doc[] =
"Simulate a data-parallel training process that starves its GPU.\n"
"\n"
"USAGE: trainsim [--scenario NAME] [OPTIONS]\n"
"       trainsim ranks [--world N] [--scenario NAME] [OPTIONS]\n"
"\n"
"Runs on the simulated driver with LD_LIBRARY_PATH=build/simgpu, or on a\n"
"real GPU.  Prints a summary; --truth writes the ground truth as JSON.\n"
"\n"
"EXAMPLES:\n"
"    trainsim --list                       # scenarios and their causes\n"
"    trainsim -s storage --truth t.json    # cold reads starve the GPU\n"
"    trainsim -s cpu --threads --queue shm # loader threads, shm ring\n"
"    trainsim -s healthy -n 50 -k 4 -d 500 # 50 steps of 4 x 500 us\n"
"    trainsim -s coldshard --truth t.json  # every 10th step waits on storage\n"
"    trainsim -s coldshard --no-slow       # the same job without the stall\n"
"    trainsim --neighbour &                # an untraced job beside one\n"
"    trainsim ranks --world 4 -s storage   # rank 2 starved, 3 ranks wait\n";

static const struct argp_option options[] = {
	{ "scenario", 's', "NAME", 0, "What starves the GPU (default healthy)", 0 },
	{ "list", OPT_LIST, NULL, 0, "List scenarios and exit", 0 },
	{ "steps", 'n', "N", 0, "Training steps to run", 1 },
	{ "seconds", 't', "S", 0, "Stop after S seconds (default 15)", 1 },
	{ "kernels", 'k', "K", 0, "Kernels per step", 1 },
	{ "kernel-us", 'd', "D", 0, "Duration of each kernel, microseconds", 1 },
	{ "no-sync", OPT_NO_SYNC, NULL, 0, "Never synchronize with the GPU", 1 },
	{ "sync-every", OPT_SYNC_EVERY, "N", 0, "Synchronize every N steps (default 1)", 1 },
	{ "slow-every", OPT_SLOW_EVERY, "N", 0,
	  "coldshard, evalstep: slow every Nth step (default 10); "
	  "ranks: as --straggle-every", 1 },
	{ "slow-ms", OPT_SLOW_MS, "MS", 0,
	  "A slowed step's stall: evalstep's host work (default 30), "
	  "coldshard's cold reads (default 100)", 1 },
	{ "no-slow", OPT_NO_SLOW, NULL, 0,
	  "The same job with no step slowed: no cold shard, no evaluation, "
	  "no straggler", 1 },
	{ "seed", OPT_SEED, "N", 0, "irregular: the requests' seed (default 1)", 1 },
	{ "op-host-us", OPT_OP_HOST_US, "US", 0, "Host work after each launch, microseconds", 1 },
	{ "stream", OPT_STREAM, "MODE", 0,
	  "legacy (default), ptds, blocking or nonblocking", 1 },
	{ "copy-mb", OPT_COPY_MB, "MB", 0,
	  "Per step, a synchronous copy of MB from new pageable memory", 1 },
	{ "workers", 'w', "N", 0, "Loader workers (default 2; pagefault 1)", 2 },
	{ "threads", OPT_THREADS, NULL, 0, "Workers are threads, not processes", 2 },
	{ "queue", OPT_QUEUE, "KIND", 0, "pipe (default) or shm", 2 },
	{ "prefetch", OPT_PREFETCH, "N", 0, "Batches in flight per worker (default 2)", 2 },
	{ "data", OPT_DATA, "DIR", 0, "Dataset directory (default /tmp/idlegap-trainsim[-SHAPE])", 2 },
	{ "data-mb", OPT_DATA_MB, "MB", 0, "Dataset size (default 64)", 2 },
	{ "batch", OPT_BATCH, "N", 0, "Samples per batch", 2 },
	{ "sample-kb", OPT_SAMPLE_KB, "KB", 0, "Sample size", 2 },
	{ "read-kb", OPT_READ_KB, "KB", 0, "read() size", 2 },
	{ "decode-us", OPT_DECODE_US, "US", 0, "CPU work per sample, microseconds", 2 },
	{ "out-kb", OPT_OUT_KB, "KB", 0, "Decoded sample size handed to the feeder", 2 },
	{ "direct", OPT_DIRECT, NULL, 0, "storage: read with O_DIRECT (the default)", 2 },
	{ "buffered", OPT_BUFFERED, NULL, 0, "storage: read through the page cache, dropping each file first", 2 },
	{ "hogs", OPT_HOGS, "N", 0, "CPU hog processes pinned with the loader", 3 },
	{ "hold-ms", OPT_HOLD_MS, "MS", 0, "Hold the step lock MS at a time", 3 },
	{ "net-delay-us", OPT_NET_DELAY, "US", 0, "Sample server delay per reply", 3 },
	{ "truth", OPT_TRUTH, "FILE", 0, "Write ground truth JSON (- for stdout)", 4 },
	{ "quiet", 'q', NULL, 0, "No summary", 4 },
	{ "world", OPT_WORLD, "N", 0,
	  "ranks: start N ranks (else RANK and WORLD_SIZE say which)", 5 },
	{ "straggler", OPT_STRAGGLER, "R", 0, "ranks: the starved rank (default 2)", 5 },
	{ "grad-mb", OPT_GRAD_MB, "MB", 0, "ranks: gradients all-reduced per step", 5 },
	{ "straggle-every", OPT_STRAGGLE_EVERY, "N", 0,
	  "ranks: the straggler is slow every Nth step only (storage, "
	  "compute), not every step", 5 },
	{ "no-loss-sync", OPT_NO_LOSS_SYNC, NULL, 0,
	  "ranks: launch the all-reduce without reading the loss first "
	  "(no sync between the backward and the all-reduce)", 5 },
	{ "neighbour", OPT_NEIGHBOUR, NULL, 0,
	  "Be another job on the host instead, for idlegap not to trace: "
	  "cold disk reads, page faults and CPU bursts until stopped (or -t); "
	  "start it apart from the traced run", 5 },
	{ 0 },
};

const struct scenario *scenario_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (!strcmp(scenarios[i].name, name))
			return &scenarios[i];
	return NULL;
}

static void list_scenarios(void)
{
	size_t i;

	for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		printf("%-10s %-15s %s\n", scenarios[i].name,
		       scenarios[i].cause ? scenarios[i].cause : "-",
		       scenarios[i].doc);
	ranks_list();
	exit(0);
}

static long num(struct argp_state *st, const char *arg, double lo, double hi)
{
	char *end;
	double v = strtod(arg, &end);

	if (*end || v < lo || v > hi)
		argp_error(st, "bad number: %s", arg);
	return (long)v;
}

static error_t parse_opt(int key, char *arg, struct argp_state *st)
{
	struct opts *o = st->input;

	switch (key) {
	case 's': o->sc_name = arg; break;
	case OPT_LIST: list_scenarios(); break;
	case 'n': o->steps = num(st, arg, 1, 1e12); break;
	case 't':
		o->seconds = strtod(arg, NULL);
		o->seconds_given = true;
		break;
	case 'k': o->kernels = (int)num(st, arg, 0, 1e7); break;
	case 'd':
		num(st, arg, 0, 1e9);
		o->kernel_us = strtod(arg, NULL);
		break;
	case OPT_NO_SYNC: o->no_sync = true; break;
	case OPT_SYNC_EVERY: o->sync_every = (int)num(st, arg, 1, 1e6); break;
	case OPT_OP_HOST_US: o->op_host_us = (int)num(st, arg, 0, 1e9); break;
	case OPT_COPY_MB: o->copy_mb = (int)num(st, arg, 0, 1 << 16); break;
	case 'w': o->workers = (int)num(st, arg, 1, MAX_WORKERS); break;
	case OPT_THREADS: o->threads = true; break;
	case OPT_PREFETCH: o->prefetch = (int)num(st, arg, 1, 64); break;
	case OPT_DATA: o->data_dir = arg; break;
	case OPT_DATA_MB: o->data_mb = (int)num(st, arg, 1, 1 << 20); break;
	case OPT_BATCH: o->batch_samples = (int)num(st, arg, 1, 4096); break;
	case OPT_SAMPLE_KB: o->sample_kb = (int)num(st, arg, 4, 1 << 20); break;
	case OPT_READ_KB: o->read_kb = (int)num(st, arg, 4, 1 << 20); break;
	case OPT_DECODE_US: o->decode_us = (int)num(st, arg, 0, 1e9); break;
	case OPT_OUT_KB: o->out_kb = (int)num(st, arg, 1, 1 << 20); break;
	case OPT_DIRECT: o->direct = true; break;
	case OPT_BUFFERED: o->buffered = true; break;
	case OPT_HOGS: o->hogs = (int)num(st, arg, 0, MAX_HOGS); break;
	case OPT_HOLD_MS: o->hold_ms = (int)num(st, arg, 0, 1e6); break;
	case OPT_NET_DELAY: o->net_delay_us = (int)num(st, arg, 0, 1e9); break;
	case OPT_TRUTH: o->truth = arg; break;
	case 'q': o->quiet = true; break;
	case OPT_NEIGHBOUR: o->neighbour = true; break;
	case OPT_WORLD: o->world = (int)num(st, arg, 1, 64); break;
	case OPT_STRAGGLER: o->straggler = (int)num(st, arg, 0, 63); break;
	case OPT_GRAD_MB: o->grad_mb = (int)num(st, arg, 1, 1 << 16); break;
	case OPT_NO_LOSS_SYNC: o->no_loss_sync = true; break;
	case OPT_SLOW_EVERY: o->slow_every = (int)num(st, arg, 1, 1e9); break;
	case OPT_STRAGGLE_EVERY:
		o->slow_every = (int)num(st, arg, 1, 1e9);
		o->straggle_every = true;
		break;
	case OPT_SLOW_MS: o->slow_ms = (int)num(st, arg, 0, 1e7); break;
	case OPT_NO_SLOW: o->no_slow = true; break;
	case OPT_SEED: o->seed = (unsigned long)num(st, arg, 0, 1e15); break;
	case OPT_QUEUE:
		if (!strcmp(arg, "pipe"))
			o->queue = Q_PIPE;
		else if (!strcmp(arg, "shm"))
			o->queue = Q_SHM;
		else
			argp_error(st, "--queue is pipe or shm");
		break;
	case OPT_STREAM: {
		static const char *const modes[] = {
			"legacy", "ptds", "blocking", "nonblocking",
		};
		int i;

		for (i = 0; i < 4 && strcmp(arg, modes[i]); i++)
			;
		if (i == 4)
			argp_error(st, "unknown --stream %s", arg);
		o->stream = (enum stream_mode)i;
		break;
	}
	case ARGP_KEY_ARG:
		if (st->arg_num == 0 && !strcmp(arg, "ranks"))
			o->ranks = true;
		else
			argp_error(st, "unexpected argument %s", arg);
		break;
	case ARGP_KEY_END:
		if (o->ranks ? o->sc_name && !ranks_find(o->sc_name)
			     : o->sc_name && !(o->sc = scenario_find(o->sc_name)))
			argp_error(st, "unknown %sscenario %s (see --list)",
				   o->ranks ? "ranks " : "", o->sc_name);
		if (o->straggle_every && !o->ranks)
			argp_error(st, "--straggle-every is for trainsim ranks");
		if (!o->ranks && o->slow_every >= 0 &&
		    o->sc->slow == SLOW_NONE)
			argp_error(st, "scenario %s slows no steps "
				   "(--slow-every: coldshard, evalstep, ranks)",
				   o->sc->name);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

#define DEFAULT(field) do { if (o->field < 0) o->field = sc->field; } while (0)

static void merge_defaults(struct opts *o)
{
	const struct scenario *sc = o->sc;

	if (o->workers < 0)
		o->workers = sc->workers ? sc->workers : 2;
	DEFAULT(kernels);
	DEFAULT(kernel_us);
	DEFAULT(steps);
	DEFAULT(batch_samples);
	DEFAULT(sample_kb);
	DEFAULT(read_kb);
	DEFAULT(decode_us);
	DEFAULT(out_kb);
	if (!o->out_kb || o->out_kb > o->sample_kb)
		o->out_kb = o->sample_kb;
	DEFAULT(hogs);
	DEFAULT(hold_ms);
	DEFAULT(net_delay_us);
	DEFAULT(copy_mb);
	DEFAULT(op_host_us);
	if (o->sync_every < 0)
		o->sync_every = sc->sync_every ? sc->sync_every : 1;
	if (o->slow_every < 0 && sc->slow != SLOW_NONE)
		o->slow_every = SLOW_EVERY;
	DEFAULT(slow_ms);
	/* cold reads bypass the page cache unless asked not to: dropping
	 * each file from the cache costs CPU time a cold read does not */
	if (sc->reader == RD_COLD && !o->buffered)
		o->direct = true;
	if ((size_t)o->copy_mb << 20 &&
	    ((size_t)o->copy_mb << 20) < (size_t)o->batch_samples *
					 ((size_t)o->out_kb << 10))
		o->copy_mb = (int)(((size_t)o->batch_samples *
				    (size_t)o->out_kb + 1023) >> 10);
}

static void on_signal(int sig)
{
	(void)sig;
	run.stop = 1;
}

static const struct sigaction stop_action = { .sa_handler = on_signal };

static int first_cpu(void)
{
	cpu_set_t set;
	int i;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			return i;
	return 0;
}

/* Loader side first, then the antagonists, then the driver: children are
 * forked before the driver has threads. */
static void start_host_side(struct run *r)
{
	const struct opts *o = r->o;
	size_t sb = (size_t)o->sample_kb << 10;
	int nfiles = (int)(((size_t)o->data_mb << 20) / sb);

	if (nfiles < o->batch_samples * o->workers)
		nfiles = o->batch_samples * o->workers;
	r->out_bytes = (size_t)o->out_kb << 10;
	r->batch_bytes = (size_t)o->batch_samples * r->out_bytes;
	r->nworkers = o->workers;
	if (o->sc->reader == RD_NET) {
		r->ds.nfiles = nfiles;
		r->ds.sample_bytes = sb;
		if (server_start(r))
			die("cannot start the sample server");
	} else if (dataset_prepare(&r->ds, o->data_dir, nfiles, sb,
				   o->quiet)) {
		die("cannot prepare dataset in %s", o->data_dir);
	} else if (o->sc->reader == RD_CACHED) {
		dataset_warm(&r->ds);
	}
	r->decode_loops_per_us = decode_calibrate();
	if (o->hogs > 0)
		r->pin_cpu = first_cpu();
	r->q = queue_new(o->queue, o->workers, o->prefetch, r->batch_bytes,
			 &r->stop);
	if (!r->q)
		die("cannot create the batch queue");
	if (workers_start(r))
		die("cannot start loader workers");
	if (hogs_start(r))
		die("cannot start CPU hogs");
}

/* One directory per dataset shape: runs of scenarios with other sample
 * sizes, at the same time or one after the other, never rewrite it. */
static const char *default_data_dir(const struct opts *o)
{
	static char dir[64];

	if (o->sample_kb == 128 && o->data_mb == 64)
		return "/tmp/idlegap-trainsim";
	snprintf(dir, sizeof(dir), "/tmp/idlegap-trainsim-%dMx%dk",
		 o->data_mb, o->sample_kb);
	return dir;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.sc = &scenarios[0], .workers = -1, .prefetch = 2,
		.data_mb = 64,
		.seconds = 15, .kernels = -1, .kernel_us = -1, .steps = -1,
		.batch_samples = -1, .sample_kb = -1, .read_kb = -1,
		.decode_us = -1, .out_kb = -1, .hogs = -1, .hold_ms = -1,
		.net_delay_us = -1, .copy_mb = -1, .op_host_us = -1,
		.sync_every = -1, .straggler = -1, .slow_every = -1,
		.slow_ms = -1, .seed = 1,
	};
	struct argp argp = { options, parse_opt, NULL, doc, NULL, NULL, NULL };
	struct step_stats st = { 0 };
	struct gpu g;
	char trace[4200];
	int err;

	argp_err_exit_status = 2;
	if (argp_parse(&argp, argc, argv, 0, NULL, &o))
		return 2;
	if (o.neighbour)
		return neighbour_run(o.data_dir ? o.data_dir :
				     "/tmp/idlegap-neighbour",
				     o.seconds_given ? o.seconds : 0, o.quiet);
	if (o.ranks && !ranks_setup(&o, o.world, o.straggler, o.grad_mb)) {
		merge_defaults(&o);
		return ranks_launch(argv, &o);
	}
	merge_defaults(&o);
	if (!o.data_dir)
		o.data_dir = default_data_dir(&o);
	run.o = &o;
	/* No SA_RESTART: a blocked read() or sem_wait() returns, and the run
	 * ends cleanly with its summary and truth. */
	sigaction(SIGINT, &stop_action, NULL);
	sigaction(SIGTERM, &stop_action, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (o.ranks) {
		/* A framework loads its GPU libraries at import, well before
		 * its first call into them. */
		ranks_env();
		if (gpu_load(&g))
			return 1;
		ranks_preload();
		ranks_data_lock(o.data_dir, true);
	}
	start_host_side(&run);
	if (o.ranks)
		ranks_data_lock(o.data_dir, false);
	else if (gpu_load(&g))
		return 1;
	if (o.ranks)
		g.ordinal = ranks_local_rank();
	if (gpu_open(&g, o.stream))
		return 1;
	if (o.ranks)
		ranks_open(&g, o.stream);
	if (!g.sim)
		gpu_calibrate(&g);
	if (o.hold_ms > 0 && holder_start(&run))
		die("cannot start the lock holder");
	acct_sample(&run, &run.acct0);
	feeder_run(&run, &g, &st);
	if (o.ranks)
		ranks_close(&g);
	acct_sample(&run, &run.acct);
	workers_stop(&run);
	antagonists_stop(&run);
	err = truth_report(&run, &g, &st);
	gpu_close(&g);
	/* A trace nobody asked for and no truth file points to. */
	if (g.set_trace && !o.truth) {
		trace_path(trace, sizeof(trace));
		unlink(trace);
	}
	if (o.ranks)
		ranks_cleanup(o.truth != NULL);
	queue_free(run.q);
	free(st.rec);
	return err ? 1 : 0;
}
