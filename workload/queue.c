// SPDX-License-Identifier: GPL-2.0
/*
 * Batches from loader workers to the feeder, in batch order: batch b comes
 * from worker b % N.
 *
 * pipe: one pipe per worker, a small header then the payload; the feeder
 *       blocks in read() and is woken by the worker's write().
 * shm:  a shared-memory ring of workers * prefetch slots with two
 *       process-shared POSIX semaphores per slot; the feeder blocks in
 *       sem_wait() (a futex) and is woken by the worker's sem_post().
 */
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trainsim.h"

struct batch_hdr {
	uint64_t batch;
	uint64_t bytes;
};

struct slot {
	sem_t full, empty;
	uint64_t batch;
	uint64_t bytes;
} __attribute__((aligned(64)));

struct queue {
	volatile sig_atomic_t *stop;	/* set by a signal: give up waiting */
	enum queue_kind kind;
	int nworkers, nslots;
	size_t batch_bytes;
	int (*fd)[2];
	struct slot *slots;	/* shm: nslots headers, then the payloads */
	char *data;
	size_t map_bytes;
};

static int write_all(struct queue *q, int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR && !*q->stop)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(struct queue *q, int fd, void *p, size_t n)
{
	char *c = p;

	while (n) {
		ssize_t r = read(fd, c, n);

		if (r < 0 && errno == EINTR && !*q->stop)
			continue;
		if (r <= 0)
			return -1;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Without CAP_SYS_RESOURCE a pipe grows to fs.pipe-max-size at most. */
static void pipe_grow(int fd, size_t want)
{
	FILE *f;
	long max = 0;

	if (fcntl(fd, F_SETPIPE_SZ, (int)want) >= 0)
		return;
	f = fopen("/proc/sys/fs/pipe-max-size", "r");
	if (f) {
		if (fscanf(f, "%ld", &max) != 1)
			max = 0;
		fclose(f);
	}
	if (max > 0 && (size_t)max < want)
		fcntl(fd, F_SETPIPE_SZ, (int)max);
}

static int pipes_new(struct queue *q, int prefetch)
{
	int i;

	q->fd = malloc(sizeof(*q->fd) * (size_t)q->nworkers);
	if (!q->fd)
		return -1;
	for (i = 0; i < q->nworkers; i++)
		q->fd[i][0] = q->fd[i][1] = -1;
	for (i = 0; i < q->nworkers; i++) {
		if (pipe2(q->fd[i], O_CLOEXEC))
			return -1;
		/* Room for the prefetched batches; a smaller pipe only makes
		 * the worker wait in write() sooner. */
		pipe_grow(q->fd[i][1], (q->batch_bytes +
					sizeof(struct batch_hdr)) *
				       (size_t)prefetch);
	}
	return 0;
}

static int ring_new(struct queue *q, int prefetch)
{
	int i;

	q->nslots = q->nworkers * prefetch;
	q->map_bytes = sizeof(struct slot) * (size_t)q->nslots +
		       q->batch_bytes * (size_t)q->nslots;
	q->slots = mmap(NULL, q->map_bytes, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (q->slots == MAP_FAILED)
		return -1;
	q->data = (char *)(q->slots + q->nslots);
	for (i = 0; i < q->nslots; i++)
		if (sem_init(&q->slots[i].full, 1, 0) ||
		    sem_init(&q->slots[i].empty, 1, 1))
			return -1;
	return 0;
}

struct queue *queue_new(enum queue_kind kind, int workers, int prefetch,
			size_t batch_bytes, volatile sig_atomic_t *stop)
{
	struct queue *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->stop = stop;
	q->kind = kind;
	q->nworkers = workers;
	q->batch_bytes = batch_bytes;
	if ((kind == Q_PIPE ? pipes_new(q, prefetch) : ring_new(q, prefetch))) {
		queue_free(q);
		return NULL;
	}
	return q;
}

static int sem_wait_intr(struct queue *q, sem_t *s)
{
	int r;

	while ((r = sem_wait(s)) && errno == EINTR && !*q->stop)
		;
	return r;
}

int queue_put(struct queue *q, int worker, uint64_t batch, const void *data,
	      size_t n)
{
	struct batch_hdr h = { batch, n };
	struct slot *s;

	if (q->kind == Q_PIPE)
		return write_all(q, q->fd[worker][1], &h, sizeof(h)) ||
		       write_all(q, q->fd[worker][1], data, n) ? -1 : 0;
	s = &q->slots[batch % (uint64_t)q->nslots];
	if (sem_wait_intr(q, &s->empty))
		return -1;
	memcpy(q->data + (size_t)(s - q->slots) * q->batch_bytes, data, n);
	s->batch = batch;
	s->bytes = n;
	return sem_post(&s->full);
}

int queue_get(struct queue *q, uint64_t batch, void *dst, size_t n)
{
	struct batch_hdr h;
	struct slot *s;
	int fd;

	if (q->kind == Q_PIPE) {
		fd = q->fd[batch % (uint64_t)q->nworkers][0];
		if (read_all(q, fd, &h, sizeof(h)) || h.batch != batch ||
		    h.bytes != n)
			return -1;
		return read_all(q, fd, dst, n);
	}
	s = &q->slots[batch % (uint64_t)q->nslots];
	if (sem_wait_intr(q, &s->full) || s->batch != batch || s->bytes != n)
		return -1;
	memcpy(dst, q->data + (size_t)(s - q->slots) * q->batch_bytes, n);
	return sem_post(&s->empty);
}

/* In a forked worker: keep only this worker's write end. */
void queue_worker_side(struct queue *q, int worker)
{
	int i;

	if (q->kind != Q_PIPE)
		return;
	for (i = 0; i < q->nworkers; i++) {
		close(q->fd[i][0]);
		if (i != worker)
			close(q->fd[i][1]);
	}
}

/* In the feeder, with workers in other processes: without the write ends
 * a dead worker shows up as end of file instead of a hang. */
void queue_feeder_side(struct queue *q)
{
	int i;

	if (q->kind != Q_PIPE)
		return;
	for (i = 0; i < q->nworkers; i++) {
		close(q->fd[i][1]);
		q->fd[i][1] = -1;
	}
}

void queue_free(struct queue *q)
{
	int i;

	if (!q)
		return;
	if (q->fd)
		for (i = 0; i < q->nworkers; i++) {
			if (q->fd[i][0] >= 0)
				close(q->fd[i][0]);
			if (q->fd[i][1] >= 0)
				close(q->fd[i][1]);
		}
	free(q->fd);
	if (q->slots && q->slots != MAP_FAILED)
		munmap(q->slots, q->map_bytes);
	free(q);
}
