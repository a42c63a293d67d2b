// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated machine's shared state (machine.h): compiled into both the
 * simulated driver, which writes it, and the simulated NVML, which reads it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "machine.h"

#define LD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define LDR(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STR(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define STREL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Letters, digits, '-', '_' and '.', not starting with '.': a file name
 * under /dev/shm that cannot leave it. */
static bool name_ok(const char *s)
{
	size_t i;

	if (!s || !*s || *s == '.' || strlen(s) > 64)
		return false;
	for (i = 0; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		      s[i] == '_' || s[i] == '.'))
			return false;
	return true;
}

const char *simm_name(void)
{
	const char *s = getenv("SIMGPU_MACHINE");

	return name_ok(s) ? s : "default";
}

static uint64_t fnv(const char *s, uint64_t h)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* splitmix64's finaliser: every input bit moves every output bit */
static uint64_t mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void simm_uuid_bytes(unsigned int dev, unsigned char out[16])
{
	char key[96];
	uint64_t a, b;
	int i;

	snprintf(key, sizeof(key), "simgpu:%s:%u", simm_name(), dev);
	a = mix(fnv(key, 0xcbf29ce484222325ull));
	b = mix(a ^ 0x9e3779b97f4a7c15ull);
	for (i = 0; i < 8; i++) {
		out[i] = (unsigned char)(a >> (8 * i));
		out[8 + i] = (unsigned char)(b >> (8 * i));
	}
}

void simm_uuid(unsigned int dev, char *buf, size_t len)
{
	unsigned char u[16];

	simm_uuid_bytes(dev, u);
	snprintf(buf, len,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

static void raise_max32(uint32_t *p, uint32_t v)
{
	uint32_t cur = LD(p);

	while (cur < v && !__atomic_compare_exchange_n(p, &cur, v, false,
						       __ATOMIC_ACQ_REL,
						       __ATOMIC_ACQUIRE))
		;
}

static void raise_max64(uint64_t *p, uint64_t v)
{
	uint64_t cur = LD(p);

	while (cur < v && !__atomic_compare_exchange_n(p, &cur, v, false,
						       __ATOMIC_ACQ_REL,
						       __ATOMIC_ACQUIRE))
		;
}

/* Every process opens it the same way: created if missing, grown to the
 * layout's size (sparse), initialised by whoever gets there first. */
struct simm *simm_open(unsigned int ndev)
{
	char path[128];
	struct stat st;
	struct simm *m;
	uint32_t zero = 0, ver, magic;
	uint64_t zero64 = 0;
	bool again = true;
	int fd;

	snprintf(path, sizeof(path), "/dev/shm/simgpu-machine-%s", simm_name());
reopen:
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "simgpu: cannot open %s: %s\n", path,
			strerror(fd < 0 ? errno : EINVAL));
		goto fail;
	}
	/* Processes of other users share the machine, as they share GPUs. */
	if (st.st_uid == geteuid())
		(void)fchmod(fd, 0666);
	if ((size_t)st.st_size < sizeof(*m) && ftruncate(fd, sizeof(*m))) {
		fprintf(stderr, "simgpu: cannot size %s: %s\n", path,
			strerror(errno));
		goto fail;
	}
	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		fprintf(stderr, "simgpu: cannot map %s\n", path);
		return NULL;
	}
	__atomic_compare_exchange_n(&m->version, &zero, SIMM_VERSION, false,
				    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	zero = 0;
	__atomic_compare_exchange_n(&m->magic, &zero, SIMM_MAGIC, false,
				    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	ver = LD(&m->version);
	magic = LD(&m->magic);
	if (magic != SIMM_MAGIC || ver != SIMM_VERSION) {
		munmap(m, sizeof(*m));
		/* An older build's machine: its layout differs, and its
		 * processes keep the file they mapped; this one starts anew.
		 * A newer build's is left alone. */
		if (again && magic == SIMM_MAGIC && ver < SIMM_VERSION &&
		    (!unlink(path) || errno == ENOENT)) {
			again = false;
			zero = 0;
			goto reopen;
		}
		fprintf(stderr, "simgpu: %s is not a machine of this version\n",
			path);
		return NULL;
	}
	__atomic_compare_exchange_n(&m->created_ns, &zero64, mono_ns(), false,
				    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	raise_max32(&m->ndev, ndev > SIMM_MAXDEV ? SIMM_MAXDEV : ndev);
	return m;
fail:
	if (fd >= 0)
		close(fd);
	return NULL;
}

uint64_t simm_starttime(int32_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long st = 0;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* Fields after the command name, which may hold spaces. */
	p = strrchr(buf, ')');
	for (i = 2; p && i < 22; i++)
		p = strchr(p + 1, ' ');
	if (p)
		st = strtoull(p + 1, NULL, 10);
	return st;
}

bool simm_pid_alive(int32_t pid, uint64_t starttime)
{
	if (pid <= 0)
		return false;
	if (kill(pid, 0) && errno == ESRCH)
		return false;
	return simm_starttime(pid) == starttime;
}

/* This process's start time, read once per process (a forked child
 * reads its own). */
static uint64_t my_starttime(int32_t me)
{
	static int32_t pid;
	static uint64_t st;

	if (pid != me) {
		st = simm_starttime(me);
		pid = me;
	}
	return st;
}

void simm_register(struct simm *m, unsigned int dev)
{
	int32_t me = (int32_t)getpid(), cur;
	uint64_t st = my_starttime(me);
	struct simm_proc *p;
	int i, pass;

	if (!m || dev >= SIMM_MAXDEV)
		return;
	p = m->dev[dev].procs;
	for (i = 0; i < SIMM_MAXPROC; i++)
		if (LD(&p[i].pid) == me && LD(&p[i].starttime) == st)
			return;
	/* A free slot; else one of a process that is gone (negative: being
	 * claimed), which takes a look at /proc per slot. */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < SIMM_MAXPROC; i++) {
			cur = LD(&p[i].pid);
			if (pass == 0 && cur)
				continue;
			if (cur > 0 &&
			    simm_pid_alive(cur, LD(&p[i].starttime)))
				continue;
			if (cur < 0 && !(kill(-cur, 0) && errno == ESRCH))
				continue;
			if (!__atomic_compare_exchange_n(&p[i].pid, &cur, -me,
							 false, __ATOMIC_ACQ_REL,
							 __ATOMIC_ACQUIRE))
				continue;
			STREL(&p[i].starttime, st);
			STREL(&p[i].pid, me);
			return;
		}
	fprintf(stderr, "simgpu: more than %d processes on GPU %u\n",
		SIMM_MAXPROC, dev);
}

void simm_unregister_all(struct simm *m)
{
	int32_t me = (int32_t)getpid(), cur;
	unsigned int d, i;

	if (!m)
		return;
	for (d = 0; d < SIMM_MAXDEV; d++)
		for (i = 0; i < SIMM_MAXPROC; i++) {
			cur = me;
			__atomic_compare_exchange_n(&m->dev[d].procs[i].pid,
						    &cur, 0, false,
						    __ATOMIC_ACQ_REL,
						    __ATOMIC_ACQUIRE);
		}
}

unsigned int simm_procs(struct simm *m, unsigned int dev, int32_t *pids,
			unsigned int max)
{
	struct simm_proc *p;
	unsigned int n = 0, i, j;
	int32_t pid;

	if (!m || dev >= SIMM_MAXDEV)
		return 0;
	p = m->dev[dev].procs;
	for (i = 0; i < SIMM_MAXPROC; i++) {
		pid = LD(&p[i].pid);
		if (!pid)
			continue;
		if (!simm_pid_alive(pid, LD(&p[i].starttime))) {
			/* a killed process's slot: freed, looked at once */
			if (pid > 0)
				__atomic_compare_exchange_n(&p[i].pid, &pid, 0,
							    false,
							    __ATOMIC_ACQ_REL,
							    __ATOMIC_ACQUIRE);
			continue;
		}
		for (j = 0; j < n && j < max && pids[j] != pid; j++)
			;
		if (j < n && j < max)
			continue;	/* listed twice while a slot moved */
		if (n < max)
			pids[n] = pid;
		n++;
	}
	return n;
}

void simm_busy(struct simm *m, unsigned int dev, uint64_t start, uint64_t end)
{
	struct simm_dev *d;
	struct simm_busy *b;
	uint64_t idx;

	if (!m || dev >= SIMM_MAXDEV || end <= start)
		return;
	d = &m->dev[dev];
	idx = __atomic_fetch_add(&d->head, 1, __ATOMIC_ACQ_REL);
	b = &d->ring[idx % SIMM_RING];
	if (LDR(&b->seq))
		raise_max64(&d->lost_until, LDR(&b->end_ns));
	STR(&b->seq, 0);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	STR(&b->start_ns, start);
	STR(&b->end_ns, end);
	STR(&b->pid, (int32_t)getpid());
	STREL(&b->seq, idx + 1);
}

static int iv_cmp(const void *a, const void *b)
{
	const struct simm_iv *x = a, *y = b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

int simm_read(struct simm *m, unsigned int dev, uint64_t from, int32_t pid,
	      struct simm_iv **out, uint64_t *lost_until)
{
	struct simm_dev *d = &m->dev[dev];
	struct simm_busy *b;
	struct simm_iv *v, iv;
	uint64_t head, idx, s1;
	int n = 0;

	v = malloc(sizeof(*v) * SIMM_RING);
	if (!v)
		return -1;
	head = LD(&d->head);
	for (idx = head > SIMM_RING ? head - SIMM_RING : 0; idx < head; idx++) {
		b = &d->ring[idx % SIMM_RING];
		s1 = LD(&b->seq);
		iv.start_ns = LDR(&b->start_ns);
		iv.end_ns = LDR(&b->end_ns);
		iv.pid = LDR(&b->pid);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (s1 != idx + 1 || LDR(&b->seq) != s1)
			continue;	/* being written, or overwritten */
		if (iv.end_ns <= from || (pid && iv.pid != pid))
			continue;
		v[n++] = iv;
	}
	*lost_until = LD(&d->lost_until);
	qsort(v, (size_t)n, sizeof(*v), iv_cmp);
	*out = v;
	return n;
}

uint64_t simm_covered(const struct simm_iv *v, int n, uint64_t a, uint64_t b)
{
	uint64_t sum = 0, cs = 0, ce = 0, s, e;
	int i;

	for (i = 0; i <= n; i++) {
		if (i < n && v[i].start_ns <= ce && ce) {
			if (v[i].end_ns > ce)
				ce = v[i].end_ns;
			continue;
		}
		/* close the run [cs, ce) */
		s = cs > a ? cs : a;
		e = ce < b ? ce : b;
		if (ce && e > s)
			sum += e - s;
		if (i < n) {
			cs = v[i].start_ns;
			ce = v[i].end_ns;
		}
	}
	return sum;
}
