// SPDX-License-Identifier: GPL-2.0
/*
 * yieldstorm SECONDS [CPU]: two threads pinned to one CPU hand it to each
 * other with sched_yield(), making a context switch (an off-CPU record of
 * a traced thread) per yield.  Prints switches per second.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile int stop;
static long counts[2];

static void *spin(void *arg)
{
	long *c = arg;

	while (!stop) {
		sched_yield();
		(*c)++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	int cpu = argc > 2 ? atoi(argv[2]) : 1;
	struct timespec ts = { (time_t)secs, (long)((secs - (long)secs) * 1e9) };
	pthread_t t[2];
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);	/* inherited by the threads */
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, spin, &counts[i]);
	nanosleep(&ts, NULL);
	stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%.0f\n", (counts[0] + counts[1]) / secs);
	return 0;
}
