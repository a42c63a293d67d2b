// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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
