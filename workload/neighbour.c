// SPDX-License-Identifier: GPL-2.0
/*
 * trainsim --neighbour: another job on the same host, for idlegap to NOT
 * trace.  A shared node is the normal case: its disk completions and its
 * timers interrupt the traced job's threads, its processes take their CPUs.
 * The harness starts it beside a traced scenario as a separate process
 * (idlegap traces every descendant of what it runs, so it must not be a
 * child of the traced job).
 *
 *   reader    reads its own dataset cold (O_DIRECT, or dropped from the
 *             page cache first), file after file;
 *   faulter   maps the same files after dropping them and touches every
 *             page, so its reads come from page faults (with readahead,
 *             as most readers of mapped files have), pausing 4 ms after
 *             each file: a disk user, where without a pause the kernel's
 *             fault and page-cache work alone took 60% of a CPU;
 *   burner    computes 2 ms, sleeps 3 ms, over and over: a CPU taken
 *             40% of the time, as a busy neighbour's share of a
 *             2-CPU machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trainsim.h"

#define NB_CHUNK	(128 << 10)

static volatile sig_atomic_t nb_stop;

static void nb_on_signal(int sig)
{
	(void)sig;
	nb_stop = 1;
}

static void nb_path(const struct dataset *ds, int idx, char *out, size_t n)
{
	snprintf(out, n, "%s/sample-%05d.bin", ds->dir, idx);
}

static void read_cold(const struct dataset *ds, int idx, void *buf)
{
	char path[4200];
	int fd;

	nb_path(ds, idx, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
	if (fd < 0) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return;
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	}
	while (!nb_stop && read(fd, buf, NB_CHUNK) > 0)
		;
	close(fd);
}

static void fault_cold(const struct dataset *ds, int idx)
{
	volatile const unsigned char *m;
	char path[4200];
	unsigned long sum = 0;
	size_t off;
	int fd;

	nb_path(ds, idx, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	m = mmap(NULL, ds->sample_bytes, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return;
	for (off = 0; off < ds->sample_bytes && !nb_stop; off += 4096)
		sum += m[off];
	munmap((void *)m, ds->sample_bytes);
	(void)sum;
}

static void burn(void)
{
	volatile uint64_t x = 1;
	uint64_t end;

	while (!nb_stop) {
		end = mono_ns() + 2000000;
		while (mono_ns() < end)
			x = x * 6364136223846793005ull + 1;
		sleep_ns(3000000);
	}
}

static void nb_child(int role, const struct dataset *ds)
{
	void *buf = NULL;
	int i;

	if (role == 0 && posix_memalign(&buf, 4096, NB_CHUNK))
		_exit(1);
	for (i = 0; !nb_stop; i = (i + 1) % ds->nfiles) {
		if (role == 0)
			read_cold(ds, i, buf);
		else if (role == 1) {
			fault_cold(ds, i);
			sleep_ns(4000000);
		}
		else
			burn();
	}
	_exit(0);
}

/* Runs until SIGINT/SIGTERM or @seconds; the roles are child processes. */
int neighbour_run(const char *dir, double seconds, bool quiet)
{
	static const char *const names[] = { "nb-reader", "nb-faulter",
					     "nb-burner" };
	struct sigaction sa = { .sa_handler = nb_on_signal };
	struct dataset ds;
	pid_t pid[3], parent = getpid();
	uint64_t end;
	int i;

	if (dataset_prepare(&ds, dir, 512, 128 << 10, quiet))
		die("cannot prepare the neighbour's dataset in %s", dir);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (i = 0; i < 3; i++) {
		pid[i] = fork();
		if (pid[i] < 0)
			die("fork: %s", strerror(errno));
		if (!pid[i]) {
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			if (getppid() != parent)
				_exit(0);
			prctl(PR_SET_NAME, names[i]);
			nb_child(i, &ds);
		}
	}
	end = seconds > 0 ? mono_ns() + (uint64_t)(seconds * 1e9) : 0;
	while (!nb_stop && (!end || mono_ns() < end))
		sleep_ns(50000000);
	for (i = 0; i < 3; i++)
		kill(pid[i], SIGTERM);
	for (i = 0; i < 3; i++)
		waitpid(pid[i], NULL, 0);
	return 0;
}
