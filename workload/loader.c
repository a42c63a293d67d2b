// SPDX-License-Identifier: GPL-2.0
/*
 * The dataset and the loader workers.
 *
 * How a worker gets a sample decides where it blocks:
 *   cached  read() from the page cache (the healthy case);
 *   cold    O_DIRECT (or --buffered: POSIX_FADV_DONTNEED drops the
 *           file's pages first and FADV_RANDOM turns off readahead), so
 *           every read() waits for block IO;
 *   mmap    the same drop, then the file is mapped with MADV_RANDOM and
 *           copied out: one major page fault per page;
 *   net     a request to the loopback sample server, then recv().
 *
 * coldshard: every --slow-every'th batch's worker also reads a shard of
 * the dataset cold (cold_shard), the rest come from the page cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trainsim.h"

#define META_FMT "trainsim dataset 1 %d %zu\n"

static void sample_path(const struct dataset *ds, int idx, char *out,
			size_t len)
{
	snprintf(out, len, "%s/sample-%05d.bin", ds->dir, idx);
}

static bool dataset_present(const struct dataset *ds)
{
	char path[4200], want[64], got[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/trainsim.meta", ds->dir);
	snprintf(want, sizeof(want), META_FMT, ds->nfiles, ds->sample_bytes);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(got, sizeof(got), f))
		got[0] = '\0';
	fclose(f);
	return !strcmp(got, want);
}

static int write_sample(const struct dataset *ds, int idx, unsigned char *buf)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(idx + 1);
	char path[4200];
	size_t i;
	int fd, err;

	for (i = 0; i < ds->sample_bytes; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (unsigned char)x;
	}
	sample_path(ds, idx, path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	err = write(fd, buf, ds->sample_bytes) != (ssize_t)ds->sample_bytes;
	return close(fd) || err ? -1 : 0;
}

/* Reuses DIR when it already holds a dataset of this shape. */
int dataset_prepare(struct dataset *ds, const char *dir, int nfiles,
		    size_t sample_bytes, bool quiet)
{
	char path[4200];
	unsigned char *buf;
	FILE *f;
	int i, fd;

	snprintf(ds->dir, sizeof(ds->dir), "%s", dir);
	ds->nfiles = nfiles;
	ds->sample_bytes = sample_bytes;
	if (dataset_present(ds))
		return 0;
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -1;
	if (!quiet)
		fprintf(stderr, "trainsim: writing dataset %s (%d x %zu KiB)\n",
			dir, nfiles, sample_bytes >> 10);
	buf = malloc(sample_bytes);
	if (!buf)
		return -1;
	for (i = 0; i < nfiles; i++)
		if (write_sample(ds, i, buf)) {
			free(buf);
			return -1;
		}
	free(buf);
	/* Cold reads can only drop clean pages: write everything back. */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		syncfs(fd);
		close(fd);
	}
	snprintf(path, sizeof(path), "%s/trainsim.meta", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, META_FMT, nfiles, sample_bytes);
	return fclose(f) ? -1 : 0;
}

/* Pulls the dataset into the page cache, so that "cached" reads are; the
 * cold scenarios drop it again file by file. */
void dataset_warm(const struct dataset *ds)
{
	char path[4200], buf[65536];
	int i, fd;

	for (i = 0; i < ds->nfiles; i++) {
		sample_path(ds, i, path, sizeof(path));
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
}

/* ---- reading one sample -------------------------------------------------- */

struct sample_reader {
	const struct run *r;
	int sock;
};

/* O_DIRECT needs block-aligned buffers, offsets and sizes. */
static bool direct_ok(const void *dst, size_t n, size_t chunk)
{
	return !((uintptr_t)dst % 4096) && !(n % 4096) && !(chunk % 4096);
}

/*
 * Cold reads drop the file's cached pages first and turn readahead off, so
 * every read() waits for block IO in the page cache.  With --direct they
 * use O_DIRECT instead where the file system has it: no page cache at all.
 */
static int open_sample(const struct sample_reader *rd, int idx, bool direct)
{
	char path[4200];
	int fd;

	sample_path(&rd->r->ds, idx, path, sizeof(path));
	if (direct) {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
		if (fd >= 0 || errno != EINVAL)
			return fd;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && rd->r->o->sc->reader == RD_COLD) {
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	}
	return fd;
}

static int read_file(const struct sample_reader *rd, int idx,
		     unsigned char *dst)
{
	size_t n = rd->r->ds.sample_bytes, off;
	size_t chunk = (size_t)rd->r->o->read_kb << 10;
	ssize_t got;
	int fd;

	fd = open_sample(rd, idx, rd->r->o->sc->reader == RD_COLD &&
			 rd->r->o->direct && direct_ok(dst, n, chunk));
	if (fd < 0)
		return -1;
	for (off = 0; off < n; off += (size_t)got) {
		got = pread(fd, dst + off, n - off < chunk ? n - off : chunk,
			    (off_t)off);
		if (got <= 0)
			break;
	}
	close(fd);
	return off == n ? 0 : -1;
}

static int read_mapped(const struct sample_reader *rd, int idx,
		       unsigned char *dst)
{
	size_t n = rd->r->ds.sample_bytes;
	char path[4200];
	void *m;
	int fd;

	sample_path(&rd->r->ds, idx, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	m = mmap(NULL, n, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	madvise(m, n, MADV_RANDOM);
	memcpy(dst, m, n);
	munmap(m, n);
	return 0;
}

static int read_net(const struct sample_reader *rd, int idx, unsigned char *dst)
{
	uint32_t req = (uint32_t)idx;
	size_t n = rd->r->ds.sample_bytes, off = 0;

	if (send(rd->sock, &req, sizeof(req), 0) != sizeof(req))
		return -1;
	while (off < n) {
		ssize_t got = recv(rd->sock, dst + off, n - off, 0);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		off += (size_t)got;
	}
	return 0;
}

static int read_sample(const struct sample_reader *rd, int idx,
		       unsigned char *dst)
{
	switch (rd->r->o->sc->reader) {
	case RD_MMAP:
		return read_mapped(rd, idx, dst);
	case RD_NET:
		return read_net(rd, idx, dst);
	default:
		return read_file(rd, idx, dst);
	}
}

static int connect_server(int port)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * coldshard: a shard read past the page cache (O_DIRECT, else with each
 * file's pages dropped first), whole samples one after the other, for
 * --slow-ms: sized by time rather than bytes, so that the wait outlasts
 * the prefetched batches on a fast disk as on a slow one.
 */
static int cold_shard(const struct sample_reader *rd, uint64_t b,
		      unsigned char *sample)
{
	const struct run *r = rd->r;
	size_t n = r->ds.sample_bytes, off;
	uint64_t end = mono_ns() + (uint64_t)r->o->slow_ms * 1000000;
	unsigned int i;
	ssize_t got;
	int fd, idx;

	for (i = 0;; i++) {
		idx = (int)((b * 7919u + i) % (uint64_t)r->ds.nfiles);
		fd = open_sample(rd, idx, direct_ok(sample, n, n));
		if (fd < 0)
			return -1;
		if (!(fcntl(fd, F_GETFL) & O_DIRECT)) {
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
		}
		for (off = 0; off < n; off += (size_t)got) {
			got = pread(fd, sample + off, n - off, (off_t)off);
			if (got <= 0)
				break;
		}
		close(fd);
		if (off != n)
			return -1;
		if (mono_ns() >= end || r->stop)
			return 0;
	}
}

/* ---- workers ------------------------------------------------------------- */

static volatile uint64_t decode_sink;

/* Reads and decodes batch b into buf. */
static int make_batch(struct run *r, struct sample_reader *rd, uint64_t b,
		      unsigned char *sample, unsigned char *buf)
{
	const struct opts *o = r->o;
	size_t sb = r->ds.sample_bytes;
	uint64_t loops = r->decode_loops_per_us * (uint64_t)o->decode_us;
	int i, idx;

	if (o->sc->slow == SLOW_COLD && step_slowed(o, (long)b) &&
	    cold_shard(rd, b, sample))
		return -1;
	for (i = 0; i < o->batch_samples; i++) {
		idx = (int)((b * (uint64_t)o->batch_samples + (uint64_t)i) %
			    (uint64_t)r->ds.nfiles);
		if (read_sample(rd, idx, sample))
			return -1;
		decode_sink ^= decode(sample, sb, loops);
		memcpy(buf + (size_t)i * r->out_bytes, sample, r->out_bytes);
	}
	return 0;
}

static void worker_loop(struct run *r, int w)
{
	struct sample_reader rd = { r, -1 };
	unsigned char *buf = malloc(r->batch_bytes), *sample = NULL;
	uint64_t b;

	pin_self(r->pin_cpu);
	/* Aligned for O_DIRECT. */
	if (!buf || posix_memalign((void **)&sample, 4096, r->ds.sample_bytes))
		die("worker %d: out of memory", w);
	if (r->o->sc->reader == RD_NET &&
	    (rd.sock = connect_server(r->server_port)) < 0)
		die("worker %d: cannot reach the sample server", w);
	for (b = (uint64_t)w; !r->stop; b += (uint64_t)r->nworkers) {
		struct thread_sched d0 = thread_sched();

		if (make_batch(r, &rd, b, sample, buf)) {
			if (!r->stop)
				die("worker %d: cannot read batch %llu", w,
				    (unsigned long long)b);
			break;
		}
		/* the truth's: how long making it waited for a CPU, and
		 * ran on one */
		batch_delay_put(buf, r->batch_bytes, thread_sched_since(d0));
		if (queue_put(r->q, w, b, buf, r->batch_bytes))
			break;
	}
	free(buf);
	free(sample);
	if (rd.sock >= 0)
		close(rd.sock);
}

struct worker_arg {
	struct run *r;
	int w;
};

static void *worker_thread(void *p)
{
	struct worker_arg *a = p;
	char name[16];

	snprintf(name, sizeof(name), "ts-worker%d", a->w);
	prctl(PR_SET_NAME, name);
	a->r->worker_tid[a->w] = gettid();
	worker_loop(a->r, a->w);
	return NULL;
}

static pid_t worker_fork(struct run *r, int w)
{
	pid_t parent = getpid(), pid = fork();
	char name[16];

	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	snprintf(name, sizeof(name), "ts-worker%d", w);
	prctl(PR_SET_NAME, name);
	if (r->o->io_cgroup && throttle_join(r->o->io_cgroup))
		fprintf(stderr, "trainsim: worker %d: cannot join %s\n", w,
			r->o->io_cgroup);
	queue_worker_side(r->q, w);
	worker_loop(r, w);
	_exit(0);
}

int workers_start(struct run *r)
{
	static struct worker_arg args[MAX_WORKERS];
	int w;

	for (w = 0; w < r->nworkers; w++) {
		if (r->o->threads) {
			args[w] = (struct worker_arg){ r, w };
			if (pthread_create(&r->worker_thread[w], NULL,
					   worker_thread, &args[w]))
				return -1;
		} else if ((r->worker_pid[w] = worker_fork(r, w)) < 0) {
			return -1;
		}
	}
	if (!r->o->threads)
		queue_feeder_side(r->q);
	return 0;
}

void workers_stop(struct run *r)
{
	int w;

	r->stop = 1;
	for (w = 0; w < r->nworkers; w++) {
		if (r->o->threads) {
			pthread_cancel(r->worker_thread[w]);
			pthread_join(r->worker_thread[w], NULL);
		} else if (r->worker_pid[w] > 0) {
			kill(r->worker_pid[w], SIGKILL);
			waitpid(r->worker_pid[w], NULL, 0);
		}
	}
}
