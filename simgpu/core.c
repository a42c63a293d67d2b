// SPDX-License-Identifier: GPL-2.0
/*
 * Global state, configuration from the environment, fork handling and the
 * ground-truth trace file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "simgpu.h"
#include "pathfmt.h"

struct sim sim = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.trace_fd = -1,
	.late_fd = -1,
};

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A real driver spends this on the calling thread formatting and pushing a
 * command; spinning (not sleeping) keeps the thread on CPU, as it would be. */
/* Spins in the driver's own code, reading the clock only now and then:
 * a real submission path runs driver code, not clock_gettime(), and a
 * sampling profiler should see it there. */
void burn_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;
	int i;

	while (now_ns() < end) {
		for (i = 0; i < 16; i++) {
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#else
			__asm__ __volatile__("" ::: "memory");
#endif
		}
	}
}

void sim_lock(void)
{
	pthread_mutex_lock(&sim.lock);
}

void sim_unlock(void)
{
	pthread_mutex_unlock(&sim.lock);
}

bool sim_ready(void)
{
	return __atomic_load_n(&sim.initialized, __ATOMIC_ACQUIRE);
}

uint64_t copy_ns(size_t bytes)
{
	return (uint64_t)((double)bytes * 1e9 / sim.cfg.bw);
}

static double env_num(const char *name, double def, double min, double max)
{
	const char *v = getenv(name);
	char *end;
	double d;

	if (!v || !*v)
		return def;
	d = strtod(v, &end);
	if (*end || d < min || d > max) {
		fprintf(stderr, "simgpu: ignoring %s=%s\n", name, v);
		return def;
	}
	return d;
}

/* Physical GPU i answers to its index or to a prefix of its UUID. */
static int phys_of(const char *tok, size_t len, int nphys)
{
	char uuid[64], *end;
	long v;
	int i;

	if (len >= 4 && !strncmp(tok, "GPU-", 4)) {
		for (i = 0; i < nphys; i++) {
			simm_uuid((unsigned int)i, uuid, sizeof(uuid));
			if (len <= strlen(uuid) && !strncmp(uuid, tok, len))
				return i;
		}
		return -1;
	}
	v = strtol(tok, &end, 10);
	if (end == tok || (size_t)(end - tok) != len || v < 0 || v >= nphys)
		return -1;
	return (int)v;
}

/*
 * CUDA_VISIBLE_DEVICES as the real driver reads it: a comma-separated list
 * of indices or UUID prefixes; ordinal i is the i-th entry; the list ends
 * at the first entry that names no GPU or repeats one.  Unset: every GPU.
 */
static void visible_devices(struct sim_config *c)
{
	const char *v = getenv("CUDA_VISIBLE_DEVICES"), *t = v, *comma;
	int p, i;

	c->ndev = 0;
	if (!v) {
		for (i = 0; i < c->nphys; i++)
			c->phys[c->ndev++] = i;
		return;
	}
	while (*t && c->ndev < SIMM_MAXDEV) {
		while (*t == ' ')
			t++;
		comma = strchrnul(t, ',');
		p = phys_of(t, (size_t)(comma - t), c->nphys);
		for (i = 0; i < c->ndev && p >= 0; i++)
			if (c->phys[i] == p)
				p = -1;
		if (p < 0)
			break;
		c->phys[c->ndev++] = p;
		t = *comma ? comma + 1 : comma;
	}
}

static void read_config(struct sim_config *c)
{
	const char *t = getenv("SIMGPU_TRACE"), *l = getenv("SIMGPU_LATE");

	c->bw = env_num("SIMGPU_BW", 12e9, 1e3, 1e15);
	c->kernel_ns = (uint64_t)env_num("SIMGPU_KERNEL_NS", 100000, 0, 1e12);
	c->launch_ns = (uint64_t)env_num("SIMGPU_LAUNCH_NS", 4000, 0, 1e9);
	c->nphys = (int)env_num("SIMGPU_DEVICES", 1, 1, SIMM_MAXDEV);
	visible_devices(c);
	c->stage_bytes = (size_t)env_num("SIMGPU_STAGE_BYTES", 256 << 10,
					 4096, 1 << 30);
	c->mem_bytes = (uint64_t)env_num("SIMGPU_MEM", 80e9, 1 << 20, 1e13);
	snprintf(c->trace, sizeof(c->trace), "%s", t ? t : "");
	snprintf(c->late, sizeof(c->late), "%s", l ? l : "");
}

/* SIMGPU_TRACE with "%p" names one file per process (truncated when
 * opened); without it every process appends to the same file, which is
 * safe because each line goes out in a single write(). */
static int open_log(const char *t, const char *what)
{
	char path[sizeof(sim.cfg.trace) + 32];
	bool per_pid;
	int fd;

	if (!*t)
		return -1;
	per_pid = sim_path_expand(t, path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
		  (per_pid ? O_TRUNC : 0), 0644);
	if (fd < 0)
		fprintf(stderr, "simgpu: cannot open %s %s: %s\n", what, path,
			strerror(errno));
	return fd;
}

void trace_open(void)
{
	sim.trace_fd = open_log(sim.cfg.trace, "trace");
	sim.late_fd = open_log(sim.cfg.late, "late log");
}

CUresult sim_init(unsigned int flags)
{
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (!sim.initialized) {
		read_config(&sim.cfg);
		if (!sim.cfg.ndev) {
			sim_unlock();
			return CUDA_ERROR_NO_DEVICE;
		}
		if (!sim.machine)
			sim.machine = simm_open((unsigned int)sim.cfg.nphys);
		sim.primary = calloc((size_t)sim.cfg.ndev,
				     sizeof(*sim.primary));
		if (!sim.primary) {
			sim_unlock();
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		trace_open();
		__atomic_store_n(&sim.initialized, true, __ATOMIC_RELEASE);
	}
	sim_unlock();
	return CUDA_SUCCESS;
}

static void fork_prepare(void)
{
	sim_lock();
}

static void fork_parent(void)
{
	sim_unlock();
}

/*
 * The child has only the forking thread: no device threads, and handles
 * that belong to the parent's contexts.  Forget everything (the memory is
 * leaked, which is harmless) so the child starts like a fresh process: it
 * must call cuInit again, and then traces to its own file.
 */
static void fork_child(void)
{
	pthread_mutex_init(&sim.lock, NULL);
	if (sim.trace_fd >= 0)
		close(sim.trace_fd);
	if (sim.late_fd >= 0)
		close(sim.late_fd);
	sim.trace_fd = sim.late_fd = -1;
	sim.initialized = false;
	sim.epoch++;
	sim.ctxs = NULL;
	sim.primary = NULL;
	sim.next_ctx_id = sim.next_stream_id = 0;
	reg_reset();
	/* memory.c forgets its reservations in its own handler */
}

/* The machine's process lists hold only processes that are alive, but a
 * process that exits says so at once. */
__attribute__((destructor)) static void sim_unload(void)
{
	simm_unregister_all(sim.machine);
}

__attribute__((constructor)) static void sim_load(void)
{
	/* Device threads are the GPU: they must not inherit a CPU pinning
	 * that the application later gives its own threads. */
	if (sched_getaffinity(0, sizeof(sim.cpus), &sim.cpus))
		CPU_ZERO(&sim.cpus);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}
