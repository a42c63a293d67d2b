// SPDX-License-Identifier: GPL-2.0
/*
 * leafspin MS: spins for about MS milliseconds of CPU in leaf_spin(), a
 * leaf that keeps no frame and pushes nothing (as memset does), called
 * from spin_here(); a 1 ms sleep through nap() after each 10 ms.  A CPU
 * sample inside leaf_spin() finds spin_here() only from the return
 * address at sp: rbp still holds spin_here()'s frame, whose return
 * address leads to main().
 */
#pragma GCC optimize("no-omit-frame-pointer")
#include <stdlib.h>
#include <time.h>

void leaf_spin(unsigned long n);

#if defined(__aarch64__)
/* arm64: the return address stays in lr, x29 is spin_here()'s */
__asm__(".text\n"
	".globl leaf_spin\n"
	".type leaf_spin, %function\n"
	"leaf_spin:\n"
	"1:	subs x0, x0, #1\n"
	"	b.ne 1b\n"
	"	ret\n"
	".size leaf_spin, .-leaf_spin\n");
#else
__asm__(".text\n"
	".globl leaf_spin\n"
	".type leaf_spin, @function\n"
	"leaf_spin:\n"
	"1:	dec %rdi\n"
	"	jnz 1b\n"
	"	ret\n"
	".size leaf_spin, .-leaf_spin\n");
#endif

static volatile int sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void spin_here(double ms)
{
	double end = now_ms() + ms;

	while (now_ms() < end)
		leaf_spin(200000);
	sink++;
}

__attribute__((noinline)) void nap(void)
{
	struct timespec ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
	sink++;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 1000;
	int i;

	for (i = 0; i < ms / 10; i++) {
		spin_here(10);
		nap();
	}
	return 0;
}
