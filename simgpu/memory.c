// SPDX-License-Identifier: GPL-2.0
/*
 * Device and pinned host memory.
 *
 * Device memory is address space only: allocations are carved out of a
 * PROT_NONE reservation, like a unified-addressing driver reserves the
 * device's virtual range, so a device pointer never collides with a host
 * pointer and cuMemcpy can tell them apart.  Nothing is stored there; the
 * simulator models time, not data.  Legacy 32-bit entry points allocate from
 * a second, small reservation below 4 GiB.
 *
 * Pinned memory is real, pre-faulted host memory marked MADV_DONTFORK, as
 * the real driver does for page-locked allocations.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "simgpu.h"

#define DEV_ALIGN 512
#define VA32_SIZE (1ull << 30)

static size_t round_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

static bool set_add(struct range_set *s, size_t at, struct range r)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct range *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return false;
		s->v = v;
		s->cap = cap;
	}
	memmove(&s->v[at + 1], &s->v[at], (s->n - at) * sizeof(*s->v));
	s->v[at] = r;
	s->n++;
	return true;
}

static void set_del(struct range_set *s, size_t at)
{
	memmove(&s->v[at], &s->v[at + 1], (s->n - at - 1) * sizeof(*s->v));
	s->n--;
}

/* Index of the last range with base <= p, or -1. */
static long set_floor(const struct range_set *s, uintptr_t p)
{
	long lo = 0, hi = (long)s->n - 1, best = -1;

	while (lo <= hi) {
		long mid = (lo + hi) / 2;

		if (s->v[mid].base <= p) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return best;
}

static bool reserve(void)
{
	void *p;

	if (sim.va_base)
		return true;
	sim.va_size = (size_t)sim.cfg.mem_bytes * (size_t)sim.cfg.ndev;
	p = mmap(NULL, sim.va_size, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return false;
	madvise(p, sim.va_size, MADV_DONTFORK);
	sim.va_base = (uintptr_t)p;
	return true;
}

static bool reserve32(void)
{
	void *p;

	if (sim.va32_base)
		return true;
#ifdef MAP_32BIT
	p = mmap(NULL, VA32_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_NORESERVE | MAP_32BIT, -1, 0);
#else
	/* no MAP_32BIT (arm64): ask for an address below 4 GiB, keep it only
	 * if the kernel gave one */
	p = mmap((void *)0x40000000UL, VA32_SIZE, PROT_NONE, MAP_PRIVATE |
		 MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p != MAP_FAILED && (uintptr_t)p + VA32_SIZE > 0x100000000ULL) {
		munmap(p, VA32_SIZE);
		p = MAP_FAILED;
	}
#endif
	if (p == MAP_FAILED)
		return false;
	madvise(p, VA32_SIZE, MADV_DONTFORK);
	sim.va32_base = (uintptr_t)p;
	sim.va32_size = VA32_SIZE;
	return true;
}

/* First fit inside [lo, hi). */
static CUresult fit(uintptr_t lo, uintptr_t hi, size_t size, CUdeviceptr *out)
{
	struct range_set *s = &sim.dev_mem;
	uintptr_t at = lo;
	long i = set_floor(s, lo);
	size_t idx = (size_t)(i + 1);

	if (i >= 0 && s->v[i].base + s->v[i].size > at)
		at = round_up(s->v[i].base + s->v[i].size, DEV_ALIGN);
	for (; idx < s->n && s->v[idx].base < hi; idx++) {
		if (s->v[idx].base - at >= size)
			break;
		at = round_up(s->v[idx].base + s->v[idx].size, DEV_ALIGN);
	}
	if (at + size > hi || at + size < at)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!set_add(s, idx, (struct range){ at, size }))
		return CUDA_ERROR_OUT_OF_MEMORY;
	*out = (CUdeviceptr)at;
	return CUDA_SUCCESS;
}

CUresult dev_alloc(CUdeviceptr *out, size_t size, bool low32)
{
	CUresult r;

	if (!size)
		return CUDA_ERROR_INVALID_VALUE;
	size = round_up(size, DEV_ALIGN);
	sim_lock();
	if (low32)
		r = reserve32() ? fit(sim.va32_base, sim.va32_base +
				      sim.va32_size, size, out)
				: CUDA_ERROR_OUT_OF_MEMORY;
	else
		r = reserve() ? fit(sim.va_base, sim.va_base + sim.va_size,
				    size, out)
			      : CUDA_ERROR_OUT_OF_MEMORY;
	sim_unlock();
	return r;
}

CUresult dev_free(CUdeviceptr p)
{
	long i;
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	sim_lock();
	i = set_floor(&sim.dev_mem, (uintptr_t)p);
	if (i >= 0 && sim.dev_mem.v[i].base == (uintptr_t)p) {
		set_del(&sim.dev_mem, (size_t)i);
		r = CUDA_SUCCESS;
	}
	sim_unlock();
	return r;
}

bool dev_contains(CUdeviceptr p, size_t n)
{
	long i;
	bool ok;

	sim_lock();
	i = set_floor(&sim.dev_mem, (uintptr_t)p);
	ok = i >= 0 && (uintptr_t)p + n <= sim.dev_mem.v[i].base +
					    sim.dev_mem.v[i].size;
	sim_unlock();
	return ok;
}

CUresult host_alloc(void **out, size_t size)
{
	void *p;
	bool ok;

	if (!size)
		return CUDA_ERROR_INVALID_VALUE;
	size = round_up(size, (size_t)sysconf(_SC_PAGESIZE));
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	madvise(p, size, MADV_DONTFORK);
	sim_lock();
	ok = set_add(&sim.pinned, sim.pinned.n,
		     (struct range){ (uintptr_t)p, size });
	sim_unlock();
	if (!ok) {
		munmap(p, size);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*out = p;
	return CUDA_SUCCESS;
}

CUresult host_free(void *p)
{
	struct range r = { 0, 0 };
	size_t i;

	sim_lock();
	for (i = 0; i < sim.pinned.n; i++)
		if (sim.pinned.v[i].base == (uintptr_t)p) {
			r = sim.pinned.v[i];
			set_del(&sim.pinned, i);
			break;
		}
	sim_unlock();
	if (!r.size)
		return CUDA_ERROR_INVALID_VALUE;
	munmap(p, r.size);
	return CUDA_SUCCESS;
}

bool host_pinned(const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p;
	bool found = false;
	size_t i;

	sim_lock();
	for (i = 0; i < sim.pinned.n && !found; i++)
		found = a >= sim.pinned.v[i].base &&
			a + n <= sim.pinned.v[i].base + sim.pinned.v[i].size;
	sim_unlock();
	return found;
}

/* In a forked child: the reservations and pinned pages were not inherited
 * (MADV_DONTFORK), so forget them.  Its own fork handler, beside core.c's
 * (which resets the rest of the global state): core.c calls nothing here. */
static void mem_reset(void)
{
	memset(&sim.dev_mem, 0, sizeof(sim.dev_mem));
	memset(&sim.pinned, 0, sizeof(sim.pinned));
	sim.va_base = sim.va32_base = 0;
	sim.va_size = sim.va32_size = 0;
}

__attribute__((constructor)) static void mem_load(void)
{
	pthread_atfork(NULL, NULL, mem_reset);
}
