// SPDX-License-Identifier: GPL-2.0
/*
 * Rendezvous of the ranks of one communicator: a file in /dev/shm named
 * from a hash of the unique id, mapped by every rank.  Each rank claims its
 * slot and counts itself in; once all have joined, rank 0 unlinks the file
 * (every rank has it mapped by then), so nothing is left behind.  Waits are
 * futex waits on a shared word that every post bumps.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "simnccl.h"

#define JOIN_TIMEOUT_NS (120ull * 1000000000ull)
#define POLL_NS 20000000ull

uint64_t sn_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* FNV-1a, 64 bits. */
uint64_t sn_hash(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Shared (not private) futexes: the word lives in a file mapped by other
 * processes. */
void sn_futex_wait(uint32_t *w, uint32_t val, uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000ull),
		.tv_nsec = (long)(ns % 1000000000ull),
	};

	syscall(SYS_futex, w, FUTEX_WAIT, val, &ts, NULL, 0);
}

void sn_futex_wake(uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Gone: no such process, or a zombie its parent has not reaped yet. */
bool sn_peer_gone(struct ncclComm *c, int peer)
{
	pid_t pid = __atomic_load_n(&c->shm->rank[peer].pid, __ATOMIC_ACQUIRE);
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return false;
	if (kill(pid, 0) && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "pid (comm) S ...": the state follows the last ')' */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

static int env_timeout_s(void)
{
	const char *v = getenv("SIMNCCL_TIMEOUT_S");
	long s = v && *v ? strtol(v, NULL, 10) : 0;

	return s > 0 && s < 86400 ? (int)s : 0;
}

/*
 * Maps the communicator's file and claims this rank's slot.  Does not wait
 * for the others: ncclCommInitAll joins every rank from one thread first.
 */
ncclResult_t sn_join(struct ncclComm *c)
{
	size_t size = sizeof(struct sn_shm);
	struct sn_shm *m;
	struct stat st;
	uint32_t zero = 0, n = (uint32_t)c->nranks;
	int32_t none = 0;
	int fd;

	snprintf(c->path, sizeof(c->path), "/dev/shm/simnccl-%016llx",
		 (unsigned long long)c->id);
	fd = open(c->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return sn_error(ncclSystemError, "open %s: %s", c->path,
				strerror(errno));
	if (fstat(fd, &st) || ((size_t)st.st_size < size &&
			       ftruncate(fd, (off_t)size))) {
		close(fd);
		return sn_error(ncclSystemError, "size %s: %s", c->path,
				strerror(errno));
	}
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return sn_error(ncclSystemError, "mmap %s: %s", c->path,
				strerror(errno));
	c->shm = m;
	if (!__atomic_compare_exchange_n(&m->nranks, &zero, n, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
	    zero != n) {
		sn_unmap(c);
		return sn_error(ncclInvalidUsage,
				"rank %d says %d ranks, another said %u",
				c->rank, c->nranks, zero);
	}
	m->rank[c->rank].dev = c->dev;
	if (!__atomic_compare_exchange_n(&m->rank[c->rank].pid, &none,
					 (int32_t)getpid(), false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		sn_unmap(c);
		return sn_error(ncclInvalidUsage, "rank %d joined twice",
				c->rank);
	}
	__atomic_fetch_add(&m->joined, 1, __ATOMIC_ACQ_REL);
	__atomic_fetch_add(&m->word, 1, __ATOMIC_RELEASE);
	sn_futex_wake(&m->word);
	return ncclSuccess;
}

/* Waits until every rank has joined (SIMNCCL_TIMEOUT_S, default 120 s). */
ncclResult_t sn_join_wait(struct ncclComm *c)
{
	struct sn_shm *m = c->shm;
	int tmo = env_timeout_s();
	uint64_t deadline = sn_now() + (tmo ? (uint64_t)tmo * 1000000000ull
					    : JOIN_TIMEOUT_NS);
	uint32_t w;

	for (;;) {
		w = __atomic_load_n(&m->word, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&m->joined, __ATOMIC_ACQUIRE) >=
		    (uint32_t)c->nranks)
			break;
		if (sn_now() > deadline) {
			unlink(c->path);
			return sn_error(ncclSystemError,
					"%u of %d ranks joined %s in time",
					__atomic_load_n(&m->joined,
							__ATOMIC_ACQUIRE),
					c->nranks, c->path);
		}
		sn_futex_wait(&m->word, w, POLL_NS * 5);
	}
	if (c->rank == 0)
		unlink(c->path);
	return ncclSuccess;
}

void sn_unmap(struct ncclComm *c)
{
	if (c->shm)
		munmap(c->shm, sizeof(*c->shm));
	c->shm = NULL;
}

static int by_key(const void *a, const void *b)
{
	const int *x = a, *y = b;	/* pairs: key, old rank */

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/*
 * ncclCommSplit's exchange over the parent: every rank posts its color and
 * key for split number g in slot g % 2 and waits for all; a rank can post
 * g + 1 only once all have posted g, so slot g % 2 is never overwritten
 * while someone still reads it.  The new communicator's id is a hash of
 * the parent's, g and the color.
 */
ncclResult_t sn_split_exchange(struct ncclComm *c, int color, int key,
			       int *newrank, int *newsize, ncclUniqueId *uid)
{
	struct sn_shm *m = c->shm;
	uint32_t g = ++c->split_gen, w;
	int pairs[SN_MAX_RANKS][2], n = 0, i;
	struct { uint64_t parent; uint32_t gen; int32_t color; } seed;

	m->rank[c->rank].split_color[g % 2] = color;
	m->rank[c->rank].split_key[g % 2] = key;
	__atomic_store_n(&m->rank[c->rank].split_gen, g, __ATOMIC_RELEASE);
	__atomic_fetch_add(&m->word, 1, __ATOMIC_RELEASE);
	sn_futex_wake(&m->word);
	for (i = 0; i < c->nranks; i++) {
		for (;;) {
			w = __atomic_load_n(&m->word, __ATOMIC_ACQUIRE);
			if (__atomic_load_n(&m->rank[i].split_gen,
					    __ATOMIC_ACQUIRE) >= g)
				break;
			if (sn_peer_gone(c, i) ||
			    __atomic_load_n(&m->aborted, __ATOMIC_ACQUIRE))
				return sn_error(ncclRemoteError,
						"rank %d left during split", i);
			sn_futex_wait(&m->word, w, POLL_NS);
		}
		if (m->rank[i].split_color[g % 2] != color)
			continue;
		pairs[n][0] = m->rank[i].split_key[g % 2];
		pairs[n][1] = i;
		n++;
	}
	qsort(pairs, (size_t)n, sizeof(pairs[0]), by_key);
	for (i = 0; i < n; i++)
		if (pairs[i][1] == c->rank)
			*newrank = i;
	*newsize = n;
	memset(&seed, 0, sizeof(seed));
	seed.parent = c->id;
	seed.gen = g;
	seed.color = color;
	memset(uid, 0, sizeof(*uid));
	memcpy(uid->internal, SN_UID_MAGIC, 8);
	memcpy(uid->internal + 8, &seed, sizeof(seed));
	return ncclSuccess;
}
