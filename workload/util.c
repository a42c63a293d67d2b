// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trainsim.h"

uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000ull),
		.tv_nsec = (long)(ns % 1000000000ull),
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Pins the calling thread only (sched_setaffinity on tid 0). */
void pin_self(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("trainsim: sched_setaffinity");
}

void die(const char *fmt, ...)
{
	va_list ap;

	fputs("trainsim: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/*
 * "Decoding" is a fixed amount of CPU work per sample, not a fixed time:
 * a worker that is preempted takes longer, as a real decoder would.
 */
uint64_t decode(const unsigned char *buf, size_t n, uint64_t loops)
{
	uint64_t h = 1469598103934665603ull;
	uint64_t i;

	for (i = 0; i < loops; i++)
		h = (h ^ buf[(i * 64) % n]) * 1099511628211ull;
	return h;
}

uint64_t decode_calibrate(void)
{
	static unsigned char buf[4096];
	volatile uint64_t sink;
	uint64_t loops = 1 << 16, t;

	for (;;) {
		t = mono_ns();
		sink = decode(buf, sizeof(buf), loops);
		t = mono_ns() - t;
		if (t > 20000000 || loops > (1ull << 40))
			break;
		loops *= 2;
	}
	(void)sink;
	return loops * 1000 / (t ? t : 1) + 1;
}

/* The calling thread's time on a CPU and waiting for one so far (ns),
 * from the kernel's own accounting (schedstat); 0 where it has none. */
struct thread_sched thread_sched(void)
{
	unsigned long long on, wait;
	struct thread_sched t = { 0, 0 };
	char buf[96];
	ssize_t n;
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return t;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return t;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &on, &wait) == 2) {
		t.cpu = on;
		t.run_delay = wait;
	}
	return t;
}

/* The calling thread's time on a CPU and waiting for one since @d0, a
 * thread_sched() of its own. */
struct thread_sched thread_sched_since(struct thread_sched d0)
{
	struct thread_sched t = thread_sched();

	t.cpu -= d0.cpu;
	t.run_delay -= d0.run_delay;
	return t;
}

/* A batch carries, in its first bytes, its worker's run delay and time
 * on a CPU while it made it, for the truth (the samples' bytes are not
 * checked). */
void batch_delay_put(void *batch, size_t n, struct thread_sched d)
{
	uint64_t v[2] = { d.run_delay, d.cpu };

	if (n >= sizeof(v))
		memcpy(batch, v, sizeof(v));
}

void batch_delay_take(const void *batch, size_t n, struct thread_sched *d)
{
	uint64_t v[2] = { 0, 0 };

	if (n >= sizeof(v))
		memcpy(v, batch, sizeof(v));
	d->run_delay = v[0];
	d->cpu = v[1];
}
