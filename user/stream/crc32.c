// SPDX-License-Identifier: GPL-2.0
/*
 * CRC-32 (the IEEE polynomial, bit-reflected) as zlib computes it.  zlib's
 * tables run at about 1 GB/s, which made the checksum the largest cost of
 * reading a recording.  Where the CPU multiplies without carries (x86-64's
 * PCLMULQDQ), the data is folded 64 bytes at a time instead (Intel, "Fast
 * CRC Computation for Generic Polynomials Using PCLMULQDQ", 2009); the
 * constants are powers of x modulo the polynomial, from that paper.  The
 * tail shorter than 16 bytes, short buffers and other CPUs go to zlib.
 */
#include <stdbool.h>
#include <zlib.h>
#include "stream/crc32.h"

#ifdef __x86_64__
#include <immintrin.h>

#define CLMUL __attribute__((target("pclmul,sse4.1")))

/* @x moved 128 (k = x^160, x^96) or 512 bits on (k = x^544, x^480), plus @d. */
CLMUL static inline __m128i fold(__m128i x, __m128i k, __m128i d)
{
	__m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(x, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(lo, hi), d);
}

CLMUL static inline __m128i at(const unsigned char *p)
{
	return _mm_loadu_si128((const __m128i *)p);
}

/* @n >= 64, a multiple of 16; @crc and the result not inverted. */
CLMUL static uint32_t crc_clmul(uint32_t crc, const unsigned char *p, size_t n)
{
	const __m128i k512 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4);
	const __m128i k128 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);
	const __m128i k64 = _mm_set_epi64x(0, 0x163cd6124);
	const __m128i mu_p = _mm_set_epi64x(0x1f7011641, 0x1db710641);
	const __m128i low32 = _mm_setr_epi32(~0, 0, ~0, 0);
	__m128i a = _mm_xor_si128(at(p), _mm_cvtsi32_si128(crc));
	__m128i b = at(p + 16), c = at(p + 32), d = at(p + 48), t;

	for (p += 64, n -= 64; n >= 64; p += 64, n -= 64) {
		a = fold(a, k512, at(p));
		b = fold(b, k512, at(p + 16));
		c = fold(c, k512, at(p + 32));
		d = fold(d, k512, at(p + 48));
	}
	a = fold(fold(fold(a, k128, b), k128, c), k128, d);
	for (; n >= 16; p += 16, n -= 16)
		a = fold(a, k128, at(p));
	/* 128 bits to 64, to 32 (with the 32 zero bits the CRC appends) */
	t = _mm_clmulepi64_si128(a, k128, 0x10);
	a = _mm_xor_si128(_mm_srli_si128(a, 8), t);
	t = _mm_srli_si128(a, 4);
	a = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(a, low32), k64, 0x00), t);
	/* Barrett reduction by the polynomial */
	t = _mm_clmulepi64_si128(_mm_and_si128(a, low32), mu_p, 0x10);
	t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), mu_p, 0x00);
	return (uint32_t)_mm_extract_epi32(_mm_xor_si128(a, t), 1);
}

static bool have_clmul(void)
{
	static int have = -1;

	if (have < 0) {
		__builtin_cpu_init();
		have = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
	}
	return have;
}
#endif

uint32_t ig_crc32(uint32_t crc, const void *p, size_t n)
{
	const unsigned char *b = p;

#ifdef __x86_64__
	if (n >= 64 && have_clmul()) {
		size_t m = n & ~(size_t)15;

		crc = ~crc_clmul(~crc, b, m);
		b += m;
		n -= m;
	}
#endif
	return n ? (uint32_t)crc32_z(crc, b, n) : crc;
}
