// SPDX-License-Identifier: GPL-2.0
/*
 * A known futex wait for the tracer tests: the main thread holds a
 * pthread mutex for 50 ms while a second thread blocks on it, then
 * releases it (waking the second thread).  Prints
 *   mutex=ADDR holder=TID waiter=TID
 * once both threads exist, after waiting for a line on stdin if asked
 * (so a tracer can attach first).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile pid_t waiter_tid;

static void *waiter(void *arg)
{
	(void)arg;
	waiter_tid = syscall(SYS_gettid);
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int i;

	if (argc > 1 && !strcmp(argv[1], "--wait")) {
		char buf[8];

		if (!fgets(buf, sizeof(buf), stdin))
			return 1;
	}
	for (i = 0; i < 3; i++) {
		pthread_mutex_lock(&lock);
		pthread_create(&t, NULL, waiter, NULL);
		usleep(50000);
		pthread_mutex_unlock(&lock);
		pthread_join(t, NULL);
	}
	printf("mutex=%p holder=%ld waiter=%d\n", (void *)&lock,
	       (long)syscall(SYS_gettid), waiter_tid);
	return 0;
}
