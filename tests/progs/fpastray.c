// SPDX-License-Identifier: GPL-2.0
/*
 * fpastray N: sleeps N times 10 ms in nap_astray(), which holds in its
 * frame-pointer register not a frame but the address of a record on the
 * stack that looks like a chain of two frames: { next, decoy_a } then
 * { 0, decoy_b }.  Code built without frame pointers uses that register
 * for anything, a pointer into the stack included.  decoy_a and decoy_b
 * are code addresses, but no call instruction comes before either: they
 * are no return addresses, so a walk that takes them for frames has gone
 * astray.  Prints "decoys A B" (the addresses, hex) first.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void nap_astray(const uint64_t *fake, const struct timespec *ts);
void decoy_a(void);
void decoy_b(void);

#if defined(__aarch64__)
__asm__(".text\n"
	".globl nap_astray\n"
	".type nap_astray, %function\n"
	"nap_astray:\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"	mov x29, x0\n"
	"	mov x0, x1\n"
	"	mov x1, #0\n"
	"	mov x8, #101\n"		/* nanosleep */
	"	svc #0\n"
	"	ldp x29, x30, [sp], #16\n"
	"	ret\n"
	".size nap_astray, .-nap_astray\n"
	".word 0xd4200000, 0xd4200000\n"	/* brk: no call before */
	".globl decoy_a\n"
	".type decoy_a, %function\n"
	"decoy_a:\n"
	"	ret\n"
	".size decoy_a, .-decoy_a\n"
	".word 0xd4200000, 0xd4200000\n"
	".globl decoy_b\n"
	".type decoy_b, %function\n"
	"decoy_b:\n"
	"	ret\n"
	".size decoy_b, .-decoy_b\n");
#else
__asm__(".text\n"
	".globl nap_astray\n"
	".type nap_astray, @function\n"
	"nap_astray:\n"
	"	push %rbp\n"
	"	mov %rdi, %rbp\n"
	"	mov %rsi, %rdi\n"
	"	xor %esi, %esi\n"
	"	mov $35, %eax\n"		/* nanosleep */
	"	syscall\n"
	"	pop %rbp\n"
	"	ret\n"
	".size nap_astray, .-nap_astray\n"
	".fill 8, 1, 0xcc\n"			/* int3: no call before */
	".globl decoy_a\n"
	".type decoy_a, @function\n"
	"decoy_a:\n"
	"	ret\n"
	".size decoy_a, .-decoy_a\n"
	".fill 8, 1, 0xcc\n"
	".globl decoy_b\n"
	".type decoy_b, @function\n"
	"decoy_b:\n"
	"	ret\n"
	".size decoy_b, .-decoy_b\n");
#endif

int main(int argc, char **argv)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int n = argc > 1 ? atoi(argv[1]) : 50, i;
	/* aligned as a frame record is */
	uint64_t fake[4] __attribute__((aligned(16)));

	fake[0] = (uint64_t)(uintptr_t)&fake[2];
	fake[1] = (uint64_t)(uintptr_t)decoy_a;
	fake[2] = 0;
	fake[3] = (uint64_t)(uintptr_t)decoy_b;
	printf("decoys %llx %llx\n", (unsigned long long)fake[1],
	       (unsigned long long)fake[3]);
	fflush(stdout);
	for (i = 0; i < n; i++)
		nap_astray(fake, &ts);
	return 0;
}
