/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulated machine: what every process using the simulated GPUs of
 * one host shares, so that the simulated NVML can answer device-wide
 * questions (which processes hold a context on a GPU, how busy it was)
 * from what the simulated drivers of all processes did.
 *
 * One file, /dev/shm/simgpu-machine-<SIMGPU_MACHINE> (default "default"),
 * mapped by every process: per physical GPU, a table of the processes
 * that created a context on it and a ring of the busy intervals their
 * device threads executed.  Lock-free: slots are claimed by
 * compare-and-swap, ring entries are seqlocked.  docs/simgpu.md describes
 * it.
 */
#ifndef SIMGPU_MACHINE_H
#define SIMGPU_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SIMM_MAGIC 0x53494d4d	/* "SIMM" */
#define SIMM_VERSION 2
#define SIMM_MAXDEV 64
#define SIMM_MAXPROC 128
/* Busy intervals kept per GPU: several seconds of a job launching 10 us
 * kernels 100 us apart, so that a counter read once a second (GPM)
 * finds its whole window (version 1 kept 8192, under one second). */
#define SIMM_RING 65536

struct simm_proc {
	int32_t pid;		/* 0: free */
	uint32_t pad;
	uint64_t starttime;	/* /proc/PID/stat field 22: tells reuse */
};

struct simm_busy {
	uint64_t seq;		/* index + 1 once written; 0 while writing */
	uint64_t start_ns, end_ns;	/* CLOCK_MONOTONIC */
	int32_t pid;
	uint32_t pad;
};

struct simm_dev {
	struct simm_proc procs[SIMM_MAXPROC];
	uint64_t head;		/* next ring index */
	uint64_t lost_until;	/* busy before this may have been overwritten */
	struct simm_busy ring[SIMM_RING];
};

struct simm {
	uint32_t magic, version;
	uint32_t ndev;		/* the most any process of the machine was given */
	uint32_t pad;
	uint64_t created_ns;	/* CLOCK_MONOTONIC */
	struct simm_dev dev[SIMM_MAXDEV];
};

/* One busy interval, as read back. */
struct simm_iv {
	uint64_t start_ns, end_ns;
	int32_t pid;
};

/* Maps the machine named by SIMGPU_MACHINE; ndev raises its GPU count.
 * NULL (and a line on stderr) when it cannot. */
struct simm *simm_open(unsigned int ndev);
/* The machine's name (for UUIDs): SIMGPU_MACHINE when valid. */
const char *simm_name(void);
/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" of physical GPU dev. */
void simm_uuid(unsigned int dev, char *buf, size_t len);
void simm_uuid_bytes(unsigned int dev, unsigned char out[16]);

/* This process holds a context on physical GPU dev / holds none anywhere. */
void simm_register(struct simm *m, unsigned int dev);
void simm_unregister_all(struct simm *m);
/* Live processes on dev, at most max: their count (may exceed max). */
unsigned int simm_procs(struct simm *m, unsigned int dev, int32_t *pids,
			unsigned int max);
bool simm_pid_alive(int32_t pid, uint64_t starttime);
uint64_t simm_starttime(int32_t pid);

void simm_busy(struct simm *m, unsigned int dev, uint64_t start,
	       uint64_t end);
/* Busy intervals of dev ending after from (pid 0: every process), sorted
 * by start; *lost_until says how far back they are complete.  The count,
 * or -1 without memory.  *out is malloc'ed. */
int simm_read(struct simm *m, unsigned int dev, uint64_t from, int32_t pid,
	      struct simm_iv **out, uint64_t *lost_until);
/* Nanoseconds of [a, b) covered by the union of sorted intervals. */
uint64_t simm_covered(const struct simm_iv *v, int n, uint64_t a, uint64_t b);

#endif /* SIMGPU_MACHINE_H */
