// SPDX-License-Identifier: GPL-2.0
/*
 * Copies and memsets.
 *
 * What blocks the calling thread follows the real driver:
 * - pinned <-> device, async: one op, returns at once;
 * - pinned <-> device, sync: one op, returns when it has completed;
 * - pageable <-> device (sync, and async too, which the driver may make
 *   synchronous when it must stage): waits for the stream to drain, then
 *   stages through two pinned bounce buffers on the calling thread, a real
 *   memcpy per chunk pipelined with the chunk DMAs (one op each), and
 *   returns when the last chunk has landed;
 * - device -> device and memset: enqueue only, even in the "sync" forms.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "simgpu.h"

struct bounce {
	void *buf[2];
	size_t size;
};

static pthread_key_t bounce_key;
static pthread_once_t bounce_once = PTHREAD_ONCE_INIT;

static void bounce_free(void *arg)
{
	struct bounce *b = arg;

	munmap(b->buf[0], b->size * 2);
	free(b);
}

static void bounce_key_init(void)
{
	pthread_key_create(&bounce_key, bounce_free);
}

static struct bounce *bounce_get(void)
{
	size_t size = sim.cfg.stage_bytes;
	struct bounce *b;
	char *p;

	pthread_once(&bounce_once, bounce_key_init);
	b = pthread_getspecific(bounce_key);
	if (b && b->size == size)
		return b;
	if (b)
		bounce_free(b);
	pthread_setspecific(bounce_key, NULL);
	p = mmap(NULL, size * 2, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, size * 2, MADV_DONTFORK);
	b = malloc(sizeof(*b));
	if (!b) {
		munmap(p, size * 2);
		return NULL;
	}
	b->buf[0] = p;
	b->buf[1] = p + size;
	b->size = size;
	pthread_setspecific(bounce_key, b);
	return b;
}

static CUresult submit_wait(struct stream *s, enum op_kind k, uint64_t dur)
{
	uint64_t seq;
	CUresult r = stream_submit(s, k, dur, NULL, NULL, &seq);

	if (!r)
		stream_wait(s, seq);
	return r;
}

static CUresult stage_htod(struct stream *s, const char *src, size_t n)
{
	struct bounce *b = bounce_get();
	uint64_t seq[2] = { 0, 0 };
	size_t off, len;
	unsigned int i;
	CUresult r;

	if (!b)
		return CUDA_ERROR_OUT_OF_MEMORY;
	stream_drain_for_op(s);
	for (off = 0, i = 0; off < n; off += len, i ^= 1) {
		len = n - off < b->size ? n - off : b->size;
		if (seq[i])
			stream_wait(s, seq[i]);
		memcpy(b->buf[i], src + off, len);
		r = stream_submit(s, OP_COPY, copy_ns(len), NULL, NULL,
				  &seq[i]);
		if (r)
			return r;
	}
	stream_wait(s, seq[i ^ 1]);
	return CUDA_SUCCESS;
}

static CUresult stage_dtoh(struct stream *s, char *dst, size_t n)
{
	struct bounce *b = bounce_get();
	uint64_t seq[2] = { 0, 0 };
	size_t next = 0, off, len;
	unsigned int i;
	CUresult r;

	if (!b)
		return CUDA_ERROR_OUT_OF_MEMORY;
	stream_drain_for_op(s);
	/* Keep both buffers in flight: the DMA of chunk k+2 runs while the
	 * host copies chunk k out. */
	for (i = 0; i < 2 && next < n; i++) {
		len = n - next < b->size ? n - next : b->size;
		r = stream_submit(s, OP_COPY, copy_ns(len), NULL, NULL,
				  &seq[i]);
		if (r)
			return r;
		next += len;
	}
	for (off = 0, i = 0; off < n; off += len, i ^= 1) {
		len = n - off < b->size ? n - off : b->size;
		stream_wait(s, seq[i]);
		memcpy(dst + off, b->buf[i], len);
		if (next < n) {
			size_t l2 = n - next < b->size ? n - next : b->size;

			r = stream_submit(s, OP_COPY, copy_ns(l2), NULL, NULL,
					  &seq[i]);
			if (r)
				return r;
			next += l2;
		}
	}
	return CUDA_SUCCESS;
}

static CUresult check_args(enum copy_dir dir, void *dst, const void *src,
			   size_t n)
{
	if (dir != HTOD && dir != DTOD && !dst)
		return CUDA_ERROR_INVALID_VALUE;
	if (dir != DTOH && dir != DTOD && !src)
		return CUDA_ERROR_INVALID_VALUE;
	if ((dir == HTOD || dir == DTOD) && !dev_contains((CUdeviceptr)dst, n))
		return CUDA_ERROR_INVALID_VALUE;
	if ((dir == DTOH || dir == DTOD) && !dev_contains((CUdeviceptr)src, n))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

CUresult copy_run(enum copy_dir dir, CUstream h, bool ptds, bool async,
		  void *dst, const void *src, size_t n)
{
	struct stream *s;
	CUresult r;
	bool pinned;

	if ((r = stream_resolve(h, ptds, &s)))
		return r;
	if (!n)
		return CUDA_SUCCESS;
	if (dir == HTOH) {
		memcpy(dst, src, n);
		return CUDA_SUCCESS;
	}
	if ((r = check_args(dir, dst, src, n)))
		return r;
	burn_ns(sim.cfg.launch_ns);
	if (dir == DTOD)
		return stream_submit(s, OP_COPY, copy_ns(n), NULL, NULL, NULL);
	pinned = host_pinned(dir == HTOD ? src : dst, n);
	if (pinned && async)
		return stream_submit(s, OP_COPY, copy_ns(n), NULL, NULL, NULL);
	if (pinned)
		return submit_wait(s, OP_COPY, copy_ns(n));
	return dir == HTOD ? stage_htod(s, src, n) : stage_dtoh(s, dst, n);
}

CUresult memset_run(CUstream h, bool ptds, CUdeviceptr dst, size_t n)
{
	struct stream *s;
	CUresult r;

	if ((r = stream_resolve(h, ptds, &s)))
		return r;
	if (!n)
		return CUDA_SUCCESS;
	if (!dev_contains(dst, n))
		return CUDA_ERROR_INVALID_VALUE;
	burn_ns(sim.cfg.launch_ns);
	return stream_submit(s, OP_MEMSET, copy_ns(n), NULL, NULL, NULL);
}

/* cuMemcpy/cuMemcpyAsync: unified addressing tells the direction. */
CUresult copy_unified(CUstream h, bool ptds, bool async, CUdeviceptr dst,
		      CUdeviceptr src, size_t n)
{
	bool dd = dev_contains(dst, 1), sd = dev_contains(src, 1);
	enum copy_dir dir = dd ? (sd ? DTOD : HTOD) : (sd ? DTOH : HTOH);

	if (!sim_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!dst || !src)
		return CUDA_ERROR_INVALID_VALUE;
	return copy_run(dir, h, ptds, async, (void *)dst, (const void *)src,
			n);
}
