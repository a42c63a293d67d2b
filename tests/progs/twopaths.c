// SPDX-License-Identifier: GPL-2.0
/*
 * twopaths N: sleeps N times, alternately through path_a() and path_b(),
 * which both call nap(), so that every sleep starts with the same sp, rbp
 * and words above sp: only the frames above nap() tell the two apart.
 */
#pragma GCC optimize("no-omit-frame-pointer")
#include <stdlib.h>
#include <time.h>

static volatile int sink;

__attribute__((noinline)) static void nap(void)
{
	struct timespec ts = { 0, 2000000 };

	nanosleep(&ts, NULL);
	sink++;
}

__attribute__((noinline)) void path_a(void)
{
	nap();
	sink++;
}

__attribute__((noinline)) void path_b(void)
{
	nap();
	sink += 2;
}

int main(int argc, char **argv)
{
	int i, n = argc > 1 ? atoi(argv[1]) : 100;

	for (i = 0; i < n; i++)
		(i & 1 ? path_b : path_a)();
	return 0;
}
