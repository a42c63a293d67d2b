// SPDX-License-Identifier: GPL-2.0
/*
 * The device side of a launch, run by the simulated driver's device thread
 * of the rank's stream when the stream reaches the simgpu_hook kernel.
 *
 * All the launch's sends and receives are posted first (so that pairs in
 * one group never wait for each other), then its tasks run in order.  A
 * collective posts its arrival when reached and waits until every rank has
 * posted the same sequence; a send or receive waits for its peer's
 * matching receive or send.  A task's transfer starts at the latest of the
 * end of the previous task and the last arrival among its ranks, and lasts
 * SIMNCCL_LAT_US + wire bytes / SIMNCCL_BW_GBPS.  Times are on the ideal
 * timeline: arrivals are the driver's start times, not when a device
 * thread got round to it.  One truth line per task (SIMNCCL_TRACE).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simnccl.h"
#include "../pathfmt.h"

#define POLL_NS 20000000ull
#define LIVENESS_NS 200000000ull

static const char *const kind_names[SN_NKINDS] = {
	[SN_ALLREDUCE] = "allreduce", [SN_BROADCAST] = "broadcast",
	[SN_REDUCE] = "reduce", [SN_ALLGATHER] = "allgather",
	[SN_REDUCESCATTER] = "reducescatter", [SN_SEND] = "send",
	[SN_RECV] = "recv",
};

const char *sn_kind_name(enum sn_kind k)
{
	return kind_names[k];
}

static double env_pos(const char *name, double def)
{
	const char *v = getenv(name);
	char *end;
	double d;

	if (!v || !*v)
		return def;
	d = strtod(v, &end);
	if (*end || !(d >= 0) || d > 1e9) {
		fprintf(stderr, "simnccl: ignoring %s=%s\n", name, v);
		return def;
	}
	return d;
}

/* Bytes per second and latency in ns. */
void sn_config(double *bw, uint64_t *lat)
{
	static double cbw;
	static uint64_t clat;
	static int done;

	if (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
		cbw = env_pos("SIMNCCL_BW_GBPS", 100) * 1e9;
		if (cbw < 1e3)
			cbw = 1e3;
		clat = (uint64_t)(env_pos("SIMNCCL_LAT_US", 10) * 1000);
		__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	}
	*bw = cbw;
	*lat = clat;
}

/*
 * Bytes each rank moves, as nccl-tests' bus bandwidth counts them: a ring
 * all-reduce moves 2(n-1)/n of the buffer, all-gather and reduce-scatter
 * (n-1) chunks of count elements, the rest the buffer once.
 */
uint64_t sn_xfer_ns(enum sn_kind k, uint64_t bytes, int n)
{
	double bw, wire = (double)bytes;
	uint64_t lat;

	sn_config(&bw, &lat);
	if (k == SN_ALLREDUCE)
		wire = 2.0 * (n - 1) / n * (double)bytes;
	else if (k == SN_ALLGATHER || k == SN_REDUCESCATTER)
		wire = (double)(n - 1) * (double)bytes;
	return lat + (uint64_t)(wire * 1e9 / bw);
}

/* ---- truth ---- */

static int trace_fd = -1;
static pid_t trace_pid;
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;

/* SIMNCCL_TRACE, "%p" expanded to the pid (and the file truncated), as
 * the driver does with SIMGPU_TRACE; reopened in a forked child. */
static int trace_open(void)
{
	const char *t = getenv("SIMNCCL_TRACE");
	char path[4096];
	bool per_pid;

	pthread_mutex_lock(&trace_lock);
	if (trace_pid == getpid())
		goto out;
	if (trace_fd >= 0)
		close(trace_fd);
	trace_fd = -1;
	trace_pid = getpid();
	per_pid = sim_path_expand(t, path, sizeof(path));
	if (path[0]) {
		trace_fd = open(path, O_WRONLY | O_CREAT | O_APPEND |
				O_CLOEXEC | (per_pid ? O_TRUNC : 0), 0644);
		if (trace_fd < 0)
			fprintf(stderr, "simnccl: cannot open trace %s: %s\n",
				path, strerror(errno));
	}
out:
	pthread_mutex_unlock(&trace_lock);
	return trace_fd;
}

static void stream_name(CUstream s, char *out, size_t n)
{
	if (!s || s == CU_STREAM_LEGACY)
		snprintf(out, n, "legacy");
	else if (s == CU_STREAM_PER_THREAD)
		snprintf(out, n, "ptds");
	else
		snprintf(out, n, "%p", (void *)s);
}

static void truth(const struct sn_launch *l, const struct sn_task *t,
		  uint64_t arrive, uint64_t last, uint64_t start, uint64_t end,
		  bool ok)
{
	const struct ncclComm *c = l->comm;
	char line[320], sname[32];
	int fd = trace_open(), len;

	if (fd < 0)
		return;
	stream_name(l->stream, sname, sizeof(sname));
	len = snprintf(line, sizeof(line),
		       "%s %016llx %d %d %llu %d %llu %llu %llu %llu %llu "
		       "%s %s %d\n", kind_names[t->kind],
		       (unsigned long long)c->id, c->rank, c->nranks,
		       (unsigned long long)t->seq, t->peer,
		       (unsigned long long)t->bytes,
		       (unsigned long long)arrive, (unsigned long long)last,
		       (unsigned long long)start, (unsigned long long)end,
		       sname, ok ? "ok" : "aborted", (int)trace_pid);
	if (write(fd, line, (size_t)len) != len)
		return;
}

/* ---- waiting ---- */

/* Blocks until cond(c, peer, arg) holds; false when the communicator was
 * aborted or the awaited peer's process is gone. */
static bool await(struct ncclComm *c, int peer,
		  bool (*cond)(struct ncclComm *, int, uint64_t),
		  uint64_t arg)
{
	struct sn_shm *m = c->shm;
	uint64_t next_check = sn_now() + LIVENESS_NS;
	uint32_t w;
	int i;

	for (;;) {
		w = __atomic_load_n(&m->word, __ATOMIC_ACQUIRE);
		if (cond(c, peer, arg))
			return true;
		if (__atomic_load_n(&m->aborted, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&c->aborted, __ATOMIC_ACQUIRE))
			return false;
		if (sn_now() > next_check) {
			for (i = 0; i < c->nranks; i++)
				if ((peer < 0 || i == peer) &&
				    sn_peer_gone(c, i))
					return false;
			next_check = sn_now() + LIVENESS_NS;
		}
		sn_futex_wait(&m->word, w, POLL_NS);
	}
}

static void bump(struct ncclComm *c)
{
	__atomic_fetch_add(&c->shm->word, 1, __ATOMIC_RELEASE);
	sn_futex_wake(&c->shm->word);
}

static bool all_posted(struct ncclComm *c, int peer, uint64_t seq)
{
	int i;

	(void)peer;
	for (i = 0; i < c->nranks; i++)
		if (__atomic_load_n(&c->shm->rank[i].coll_posted,
				    __ATOMIC_ACQUIRE) < seq)
			return false;
	return true;
}

/* The peer's matching post: its receive for our send, its send for our
 * receive.  arg is the message number, high bit set for a receive. */
static struct sn_p2p *match_of(struct ncclComm *c, int peer, uint64_t arg)
{
	return arg >> 63 ? &c->shm->send[peer][c->rank]
			 : &c->shm->recv[peer][c->rank];
}

static bool p2p_posted(struct ncclComm *c, int peer, uint64_t arg)
{
	return __atomic_load_n(&match_of(c, peer, arg)->posted,
			       __ATOMIC_ACQUIRE) >= (arg & ~(1ull << 63));
}

static struct sn_p2p *own_of(struct ncclComm *c, const struct sn_task *t)
{
	return t->kind == SN_SEND ? &c->shm->send[c->rank][t->peer]
				  : &c->shm->recv[c->rank][t->peer];
}

static bool post_p2p(struct ncclComm *c, const struct sn_task *t,
		     uint64_t start)
{
	struct sn_p2p *p = own_of(c, t);

	/* The slot of message seq - ring must have been read. */
	while (t->seq > SN_P2P_RING &&
	       __atomic_load_n(&p->consumed, __ATOMIC_ACQUIRE) <
	       t->seq - SN_P2P_RING) {
		uint32_t w = __atomic_load_n(&c->shm->word, __ATOMIC_ACQUIRE);

		if (__atomic_load_n(&p->consumed, __ATOMIC_ACQUIRE) >=
		    t->seq - SN_P2P_RING)
			break;
		if (__atomic_load_n(&c->shm->aborted, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&c->aborted, __ATOMIC_ACQUIRE) ||
		    sn_peer_gone(c, t->peer))
			return false;
		sn_futex_wait(&c->shm->word, w, POLL_NS);
	}
	p->ts[t->seq % SN_P2P_RING] = start;
	__atomic_store_n(&p->posted, t->seq, __ATOMIC_RELEASE);
	return true;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Waits for the task's peers; *last is the latest arrival among them. */
static bool task_wait(struct ncclComm *c, const struct sn_task *t,
		      uint64_t start, uint64_t *last)
{
	struct sn_rank *me = &c->shm->rank[c->rank];
	struct sn_p2p *p;
	uint64_t arg;
	int i;

	*last = start;
	if (t->kind != SN_SEND && t->kind != SN_RECV) {
		me->coll_ts[t->seq % SN_COLL_RING] = start;
		__atomic_store_n(&me->coll_posted, t->seq, __ATOMIC_RELEASE);
		bump(c);
		if (!await(c, -1, all_posted, t->seq))
			return false;
		for (i = 0; i < c->nranks; i++)
			*last = max64(*last, c->shm->rank[i].coll_ts
				      [t->seq % SN_COLL_RING]);
		return true;
	}
	arg = t->seq | (t->kind == SN_RECV ? 1ull << 63 : 0);
	if (!await(c, t->peer, p2p_posted, arg))
		return false;
	p = match_of(c, t->peer, arg);
	*last = max64(start, p->ts[t->seq % SN_P2P_RING]);
	__atomic_store_n(&p->consumed, t->seq, __ATOMIC_RELEASE);
	bump(c);
	return true;
}

/* The simgpu_hook function: returns the launch's end time. */
unsigned long long sn_run(void *arg, unsigned long long start)
{
	struct sn_launch *l = arg;
	struct ncclComm *c = l->comm;
	uint64_t t = start, last, begin, end;
	bool ok = true;
	int i;

	for (i = 0; i < l->n && ok; i++)
		if (l->t[i].kind == SN_SEND || l->t[i].kind == SN_RECV)
			ok = post_p2p(c, &l->t[i], start);
	if (ok)
		bump(c);
	for (i = 0; i < l->n; i++) {
		if (ok)
			ok = task_wait(c, &l->t[i], start, &last);
		if (ok) {
			begin = max64(t, last);
			end = begin + l->t[i].xfer_ns;
		} else {
			last = begin = end = max64(t, sn_now());
		}
		truth(l, &l->t[i], start, last, begin, end, ok);
		t = end;
	}
	if (!ok) {
		__atomic_store_n(&c->async_err, ncclRemoteError,
				 __ATOMIC_RELEASE);
		bump(c);
	}
	free(l->t);
	free(l);
	/* the last touch of the communicator: ncclCommDestroy waits for it */
	__atomic_fetch_sub(&c->pending, 1, __ATOMIC_RELEASE);
	return t;
}
