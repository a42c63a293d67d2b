// SPDX-License-Identifier: GPL-2.0
/*
 * trainsim ranks: a data-parallel job, one process per rank, as torchrun
 * starts them.  Each rank is an ordinary trainsim (loader, feeder, GPU)
 * whose step reads its loss (a sync), then all-reduces its gradients over
 * NCCL before the step's sync (ranks_allreduce).  One rank (--straggler,
 * default 2) may be starved by its host or have more GPU work; the
 * others' GPUs then wait for it inside the all-reduce.
 *
 * Roles: with RANK and WORLD_SIZE in the environment, this process is that
 * rank; otherwise `trainsim ranks --world N` is the launcher, which starts
 * N copies of itself with RANK, LOCAL_RANK and WORLD_SIZE set and waits for
 * them.  Rank 0 writes the NCCL unique id (128 bytes) to TRAINSIM_NCCL_ID
 * (the launcher sets a file in a private directory of its own; default
 * $TMPDIR/trainsim-ncclid-$MASTER_PORT); the others poll for it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nccl.h>

#include "trainsim.h"
#include "../simgpu/pathfmt.h"

#define ID_WAIT_NS (120ull * 1000000000ull)
/* The storage straggler reads this many of the single-GPU storage
 * scenario's batches per step (8 MiB, O_DIRECT, one worker), through a
 * cgroup that holds its reads from the dataset's disk to STORAGE_BPS
 * (throttle.c, as root): about 60 ms a step, several times the others'
 * (8 ms of kernels), so that its lateness is storage, above the host's
 * own noise, even on a virtual disk served from its host's cache. */
#define STORAGE_BATCHES 2
#define STORAGE_BPS (128ull << 20)

enum straggler_kind { SK_NONE, SK_STORAGE, SK_CPU, SK_COMPUTE };

struct ranks_scenario {
	const char *name;
	const char *doc;
	const char *cause;	/* the straggler's own GPU idle cause */
	enum straggler_kind kind;
	int grad_mb;
};

static const struct ranks_scenario ranks_scenarios[] = {
	{ "storage", "rank R reads 2 storage batches a step, throttled",
	  "storage", SK_STORAGE, 64 },
	{ "cpu", "rank R's loader and feeder share a CPU with hogs",
	  "cpu_starvation", SK_CPU, 64 },
	{ "compute", "rank R runs 4 times the kernels of the others",
	  NULL, SK_COMPUTE, 64 },
	/* 64 ms of transfer a step: the host's jitter in reaching it (a few
	 * ms on a loaded host) stays a small part */
	{ "balanced", "no straggler; 4 GiB all-reduces, communication-bound",
	  NULL, SK_NONE, 4096 },
};

/* Every rank: 4 x 2 ms kernels on a prefetched, cached batch. */
static struct scenario peer_sc = {
	.name = "ranks", .reader = RD_CACHED, .kernels = 4,
	.kernel_us = 2000, .steps = 200, .batch_samples = 4,
	.sample_kb = 128, .read_kb = 128, .decode_us = 50,
};

struct nccl_api {
	void *lib;
	ncclResult_t (*get_unique_id)(ncclUniqueId *);
	ncclResult_t (*init_rank)(ncclComm_t *, int, ncclUniqueId, int);
	ncclResult_t (*all_reduce)(const void *, void *, size_t,
				   ncclDataType_t, ncclRedOp_t, ncclComm_t,
				   cudaStream_t);
	ncclResult_t (*destroy)(ncclComm_t);
	const char *(*error_string)(ncclResult_t);
};

static struct {
	const struct ranks_scenario *rs;
	int rank, local_rank, world, straggler;
	struct nccl_api api;
	ncclComm_t comm;
	CUdeviceptr grad;
	CUstream stream;	/* the feeder's stream, as NCCL must name it */
	size_t grad_count;
	uint64_t collectives;
	char nccl_trace[4200];
	bool set_nccl_trace;
	bool loss_sync;		/* loss.item() before the all-reduce */
	bool straggling;	/* a straggler is slowed (not --no-slow) */
	int every;		/* --straggle-every; 0: every step */
} rk = { .straggler = -1 };

const char *ranks_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(ranks_scenarios) / sizeof(ranks_scenarios[0]);
	     i++)
		if (!strcmp(ranks_scenarios[i].name, name)) {
			rk.rs = &ranks_scenarios[i];
			return name;
		}
	return NULL;
}

void ranks_list(void)
{
	size_t i;

	for (i = 0; i < sizeof(ranks_scenarios) / sizeof(ranks_scenarios[0]);
	     i++)
		printf("ranks %-9s %-15s %s\n", ranks_scenarios[i].name,
		       ranks_scenarios[i].cause ? ranks_scenarios[i].cause
						: "-",
		       ranks_scenarios[i].doc);
}

bool ranks_is_straggler(void)
{
	return rk.rs && rk.rs->kind != SK_NONE && rk.rank == rk.straggler;
}

int ranks_rank(void)
{
	return rk.comm ? rk.rank : 0;
}

bool ranks_step_cause(long n, const char **cause, int *late)
{
	*cause = NULL;
	*late = -1;
	if (!rk.straggling || (rk.every > 0 && (n + 1) % rk.every))
		return false;
	if (rk.rank == rk.straggler) {
		*cause = rk.rs->cause;
	} else {
		*cause = "peer_wait";
		*late = rk.straggler;
	}
	return true;
}

/* Bad usage: one line, exit 2. */
static void __attribute__((noreturn, format(printf, 1, 2)))
usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "trainsim: ranks: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return def;
	n = strtol(v, &end, 10);
	if (*end || n < 0 || n > 4096) {
		fprintf(stderr, "trainsim: ranks: bad %s=%s\n", name, v);
		exit(2);
	}
	return (int)n;
}

/*
 * Picks the role and this rank's scenario.  Returns true in a rank (the
 * options are then this rank's), false in the launcher.
 */
bool ranks_setup(struct opts *o, int world, int straggler, int grad_mb)
{
	static struct scenario mine;
	static char truth[4200], data[4200];
	const char *why;

	if (!rk.rs)
		rk.rs = &ranks_scenarios[0];
	rk.rank = env_int("RANK", -1);
	rk.world = env_int("WORLD_SIZE", world > 0 ? world : -1);
	rk.local_rank = env_int("LOCAL_RANK", rk.rank);
	rk.straggler = straggler >= 0 ? straggler : 2;
	rk.loss_sync = !o->no_loss_sync;
	rk.grad_count = ((size_t)(grad_mb > 0 ? grad_mb : rk.rs->grad_mb)
			 << 20) / 4;
	if (rk.world < 1 || rk.world > 64)
		usage("give --world N (1..64), or RANK and WORLD_SIZE");
	if (rk.rs->kind != SK_NONE && rk.straggler >= rk.world)
		usage("straggler %d is not a rank of %d", rk.straggler,
		      rk.world);
	rk.straggling = rk.rs->kind != SK_NONE && !o->no_slow;
	rk.every = o->slow_every > 0 ? o->slow_every : 0;
	if (rk.every && rk.rs->kind != SK_STORAGE &&
	    rk.rs->kind != SK_COMPUTE)
		usage("%s: no straggler slowed every Nth step "
		      "(--straggle-every: storage, compute)", rk.rs->name);
	/* A run is so many steps on every rank: a deadline would leave some
	 * ranks waiting in an all-reduce the others never reach. */
	o->seconds = 0;
	peer_sc.name = rk.rs->name;
	o->sc = &peer_sc;
	if (rk.rank < 0)
		return false;
	if (rk.rank >= rk.world)
		usage("RANK %d with WORLD_SIZE %d", rk.rank, rk.world);
	mine = peer_sc;
	mine.name = rk.rs->name;
	if (ranks_is_straggler() && rk.straggling && rk.every) {
		/* slowed every Nth step only: the coldshard scenario's cold
		 * shard (of its samples, in DATA/cold as below), or 4 times
		 * the kernels, in that step */
		const struct scenario *cs = scenario_find("coldshard");

		mine.cause = rk.rs->cause;
		mine.slow = rk.rs->kind == SK_STORAGE ? SLOW_COLD : SLOW_KERNELS;
		mine.slow_ms = cs->slow_ms;
		if (mine.slow == SLOW_COLD) {
			mine.sample_kb = cs->sample_kb;
			mine.read_kb = cs->read_kb;
			mine.out_kb = cs->out_kb;
			if (o->data_dir) {
				mkdir(o->data_dir, 0755);
				snprintf(data, sizeof(data), "%s/cold",
					 o->data_dir);
				o->data_dir = data;
			}
		}
	} else if (ranks_is_straggler() && rk.straggling) {
		mine.cause = rk.rs->cause;
		if (rk.rs->kind == SK_STORAGE) {
			/* the storage scenario's cold samples (O_DIRECT), by
			 * one worker, STORAGE_BATCHES of its batches per
			 * step: reads far longer than the others' step */
			const struct scenario *st = scenario_find("storage");

			mine.reader = st->reader;
			mine.workers = 1;
			mine.sample_kb = st->sample_kb;
			mine.read_kb = st->read_kb;
			mine.out_kb = st->out_kb;
			mine.batch_samples = st->batch_samples * STORAGE_BATCHES;
			/* its worker reads through a slow disk */
			o->io_cgroup = throttle_create(o->data_dir ? o->data_dir : "/tmp",
						       STORAGE_BPS, &why);
			if (!o->io_cgroup)
				fprintf(stderr, "trainsim: rank %d: reads not "
					"throttled (%s)\n", rk.rank, why);
			/* its samples have another shape: not in the
			 * others' dataset directory */
			if (o->data_dir) {
				mkdir(o->data_dir, 0755);
				snprintf(data, sizeof(data), "%s/cold",
					 o->data_dir);
				o->data_dir = data;
			}
			mine.decode_us = st->decode_us;
		} else if (rk.rs->kind == SK_CPU) {
			mine.batch_samples = 8;
			mine.decode_us = 300;
			mine.hogs = 3;
		} else {
			mine.kernels *= 4;
			if (o->kernels >= 0)	/* -k K: 4K for this rank */
				o->kernels *= 4;
		}
	}
	o->sc = &mine;
	if (o->truth && strcmp(o->truth, "-")) {
		snprintf(truth, sizeof(truth), "%s.rank%d", o->truth, rk.rank);
		o->truth = truth;
	}
	return true;
}

/* ---- the launcher ------------------------------------------------------- */

static pid_t children[4096];
static int nchildren;

static void forward(int sig)
{
	int i;

	for (i = 0; i < nchildren; i++)
		if (children[i] > 0)
			kill(children[i], sig);
}

/* Appends the ranks' truth files to one JSON document. */
static int merge_truth(const struct opts *o, const char *truth)
{
	char path[4200], buf[65536];
	FILE *out, *in;
	size_t n;
	int i;

	out = strcmp(truth, "-") ? fopen(truth, "w") : stdout;
	if (!out) {
		perror(truth);
		return -1;
	}
	fprintf(out, "{\n\"mode\": \"ranks\", \"scenario\": \"%s\", "
		"\"world\": %d, \"loss_sync\": %s, \"straggler\": %d, "
		"\"straggle_every\": %d, \"straggling\": %s, "
		"\"straggler_cause\": ", rk.rs->name, rk.world,
		rk.loss_sync ? "true" : "false",
		rk.rs->kind != SK_NONE ? rk.straggler : -1, rk.every,
		rk.straggling ? "true" : "false");
	if (rk.rs->cause)
		fprintf(out, "\"%s\",\n", rk.rs->cause);
	else
		fprintf(out, "null,\n");
	fprintf(out, "\"steps\": %ld,\n\"ranks\": [\n", o->steps);
	for (i = 0; i < rk.world; i++) {
		snprintf(path, sizeof(path), "%s.rank%d", truth, i);
		in = fopen(path, "r");
		if (!in) {
			fprintf(stderr, "trainsim: no truth from rank %d\n", i);
			fprintf(out, "%snull\n", i ? "," : "");
			continue;
		}
		fprintf(out, "%s", i ? "," : "");
		while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
			fwrite(buf, 1, n, out);
		fclose(in);
		unlink(path);
	}
	fprintf(out, "]\n}\n");
	return out == stdout ? fflush(out) : fclose(out);
}

int ranks_launch(char **argv, const struct opts *o)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4096], id[4200], num[16], self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct sigaction sa = { .sa_handler = forward };
	uint64_t t0 = mono_ns();
	int i, st, bad = 0;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/trainsim-ranks.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	/* the ranks run this program under its own name, not "exe" */
	if (len <= 0 || len >= (ssize_t)sizeof(self) - 1)
		die("cannot find this program: %s", strerror(errno));
	self[len] = '\0';
	if (!mkdtemp(dir))
		die("mkdtemp %s: %s", dir, strerror(errno));
	snprintf(id, sizeof(id), "%s/ncclid", dir);
	setenv("TRAINSIM_NCCL_ID", id, 1);
	snprintf(num, sizeof(num), "%d", rk.world);
	setenv("WORLD_SIZE", num, 1);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (i = 0; i < rk.world; i++) {
		pid = fork();
		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (!pid) {
			snprintf(num, sizeof(num), "%d", i);
			setenv("RANK", num, 1);
			setenv("LOCAL_RANK", num, 1);
			execv(self, argv);
			fprintf(stderr, "trainsim: exec: %s\n", strerror(errno));
			_exit(127);
		}
		children[nchildren++] = pid;
	}
	while (nchildren > 0) {
		pid = wait(&st);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < rk.world; i++)
			if (children[i] == pid)
				children[i] = 0;
		nchildren--;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	unlink(id);
	rmdir(dir);
	if (!o->quiet)
		printf("trainsim: ranks %s: %d ranks, %ld steps each, %.2f s; "
		       "%d failed\n", rk.rs->name, rk.world, o->steps,
		       (double)(mono_ns() - t0) / 1e9, bad);
	if (o->truth && merge_truth(o, o->truth))
		bad++;
	return bad ? 1 : 0;
}

/* ---- a rank ------------------------------------------------------------- */

/* Serializes the ranks' dataset preparation: POSIX record locks, which
 * the loader's forked workers do not inherit. */
void ranks_data_lock(const char *dir, bool on)
{
	static int fd = -1;
	char path[4200];
	struct flock fl = { .l_whence = SEEK_SET };

	if (on) {
		snprintf(path, sizeof(path), "%s.lock", dir);
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		fl.l_type = F_WRLCK;
		while (fd >= 0 && fcntl(fd, F_SETLKW, &fl) && errno == EINTR)
			;
	} else if (fd >= 0) {
		fl.l_type = F_UNLCK;
		fcntl(fd, F_SETLK, &fl);
		close(fd);
		fd = -1;
	}
}

static void nccl_check(ncclResult_t r, const char *what)
{
	if (r == ncclSuccess)
		return;
	die("%s: %s", what, rk.api.error_string ? rk.api.error_string(r)
						  : "NCCL error");
}

void ranks_preload(void)
{
	struct nccl_api *a = &rk.api;

	a->lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
	if (!a->lib)
		die("cannot load libnccl.so.2: %s", dlerror());
#define SYM(field, name)                                                  \
	do {                                                              \
		*(void **)&a->field = dlsym(a->lib, name);                \
		if (!a->field)                                            \
			die("libnccl.so.2 lacks %s", name);               \
	} while (0)
	SYM(get_unique_id, "ncclGetUniqueId");
	SYM(init_rank, "ncclCommInitRank");
	SYM(all_reduce, "ncclAllReduce");
	SYM(destroy, "ncclCommDestroy");
	SYM(error_string, "ncclGetErrorString");
#undef SYM
}

static void id_path(char *out, size_t n)
{
	const char *p = getenv("TRAINSIM_NCCL_ID");
	const char *tmp = getenv("TMPDIR"), *port = getenv("MASTER_PORT");

	if (p && *p)
		snprintf(out, n, "%s", p);
	else
		snprintf(out, n, "%s/trainsim-ncclid-%s",
			 tmp && *tmp ? tmp : "/tmp",
			 port && *port ? port : "29500");
}

/* Rank 0 publishes the id with a rename, so nobody reads half of it. */
static void exchange_id(ncclUniqueId *id)
{
	char path[4200], tmp[4300];
	uint64_t deadline = mono_ns() + ID_WAIT_NS;
	ssize_t n = 0;
	int fd;

	id_path(path, sizeof(path));
	if (rk.rank == 0) {
		nccl_check(rk.api.get_unique_id(id), "ncclGetUniqueId");
		snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, id, sizeof(*id)) != sizeof(*id) ||
		    close(fd) || rename(tmp, path))
			die("cannot write the NCCL id to %s", path);
		return;
	}
	for (;;) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			n = read(fd, id, sizeof(*id));
			close(fd);
			if (n == sizeof(*id))
				return;
		}
		if (mono_ns() > deadline)
			die("no NCCL id in %s from rank 0", path);
		sleep_ns(10000000);
	}
}

/* Before the driver is initialized: each rank's collectives trace to a
 * file of its own, like the driver's. */
void ranks_env(void)
{
	const char *tmp = getenv("TMPDIR");
	char n[16];

	/* one simulated GPU per rank of the host, each rank on its own, as
	 * torchrun jobs use cuda:LOCAL_RANK */
	snprintf(n, sizeof(n), "%d", rk.world);
	setenv("SIMGPU_DEVICES", n, 0);
	if (getenv("SIMNCCL_TRACE"))
		return;
	snprintf(rk.nccl_trace, sizeof(rk.nccl_trace),
		 "%s/trainsim-nccl.%%p", tmp && *tmp ? tmp : "/tmp");
	setenv("SIMNCCL_TRACE", rk.nccl_trace, 1);
	rk.set_nccl_trace = true;
}

void ranks_open(struct gpu *g, enum stream_mode mode)
{
	ncclUniqueId id;
	char path[4200];

	exchange_id(&id);
	nccl_check(rk.api.init_rank(&rk.comm, rk.world, id, rk.rank),
		   "ncclCommInitRank");
	if (rk.rank == 0) {	/* every rank has read it by now */
		id_path(path, sizeof(path));
		unlink(path);
	}
	gpu_check(g, g->cuMemAlloc(&rk.grad, rk.grad_count * 4),
		  "cuMemAlloc(gradients)");
	/* The feeder's NULL means its thread's stream when it calls the
	 * _ptsz entry points; NCCL is told so explicitly. */
	rk.stream = !g->stream && mode == STREAM_PTDS ? CU_STREAM_PER_THREAD
						      : g->stream;
}

/*
 * After the step's backward kernels: the loss is read (loss.item(), a
 * stream synchronize), as loops that log it or check the gradients' norm
 * each step do, then the gradients are all-reduced in place.  A rank
 * whose GPU has more work waits longer in that sync and launches its
 * all-reduce late: the host sees which GPU held the others.  With
 * --no-loss-sync every rank launches its all-reduce right behind its
 * kernels, and which GPU was still busy is not seen from the host.
 */
void ranks_allreduce(struct gpu *g)
{
	if (rk.loss_sync)
		gpu_check(g, g->cuStreamSynchronize(g->stream),
			  "cuStreamSynchronize(loss)");
	nccl_check(rk.api.all_reduce((void *)rk.grad, (void *)rk.grad,
				     rk.grad_count, ncclFloat32, ncclSum,
				     rk.comm, (cudaStream_t)rk.stream),
		   "ncclAllReduce");
	rk.collectives++;
}

void ranks_close(struct gpu *g)
{
	gpu_check(g, g->cuCtxSynchronize(), "cuCtxSynchronize");
	nccl_check(rk.api.destroy(rk.comm), "ncclCommDestroy");
	g->cuMemFree(rk.grad);
}

int ranks_local_rank(void)
{
	return rk.local_rank;
}

bool ranks_active(void)
{
	return rk.comm != NULL;
}

/*
 * This rank's part of its truth JSON: its role, and from the collectives'
 * trace (SIMNCCL_TRACE; simulated NCCL only) the time its GPU waited in
 * them for the other ranks and the time they moved data.
 */
void ranks_json(FILE *f)
{
	char path[4200], line[512], op[32];
	unsigned long long a, last, s, e;
	double wait = 0, xfer = 0;
	long n = 0;
	FILE *in;

	sim_path_expand(getenv("SIMNCCL_TRACE"), path, sizeof(path));
	in = path[0] ? fopen(path, "r") : NULL;
	while (in && fgets(line, sizeof(line), in))
		if (sscanf(line, "%31s %*s %*d %*d %*u %*d %*u %llu %llu %llu "
			   "%llu", op, &a, &last, &s, &e) == 5) {
			wait += (double)(last - a) / 1e9;
			xfer += (double)(e - s) / 1e9;
			n++;
		}
	if (in)
		fclose(in);
	fprintf(f, "  \"rank\": %d, \"local_rank\": %d, \"world\": %d, "
		"\"role\": \"%s\",\n", rk.rank, rk.local_rank, rk.world,
		rk.rs->kind == SK_NONE ? "balanced" :
		ranks_is_straggler() ? "straggler" : "peer");
	fprintf(f, "  \"nccl\": {\"collectives\": %llu, \"traced\": %ld, "
		"\"wait_s\": %.6f, \"transfer_s\": %.6f, \"trace_file\": ",
		(unsigned long long)rk.collectives, n, wait, xfer);
	if (in) {
		const char *c;

		fputc('"', f);
		for (c = path; *c; c++)
			if (*c == '"' || *c == '\\')
				fprintf(f, "\\%c", *c);
			else if ((unsigned char)*c >= 0x20)
				fputc(*c, f);
		fputc('"', f);
	} else {
		fputs("null", f);
	}
	fprintf(f, "},\n");
}

/* The collectives' trace, when trainsim chose it and no truth needs it. */
void ranks_cleanup(bool keep)
{
	char path[4200];

	throttle_remove();	/* its workers are gone */
	if (!rk.set_nccl_trace || keep)
		return;
	sim_path_expand(rk.nccl_trace, path, sizeof(path));
	unlink(path);
}
