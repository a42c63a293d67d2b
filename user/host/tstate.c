// SPDX-License-Identifier: GPL-2.0
/*
 * A followed thread's state when tracing began, from /proc
 * (docs/design.md §5.14).  A thread already asleep when the probes came
 * is first seen by the kernel at its switch-in, with no switch-out to say
 * why it slept; /proc says it instead: the state letter
 * (/proc/PID/task/TID/stat), the system call and its arguments
 * (.../syscall), the kernel function it waits in (.../wchan), the file
 * behind the descriptor it waits on (.../fd/N, read with readlink and
 * stat only: the name is the job's, never a path written to).  The reason
 * is decided by the same rules the kernel applies at a switch-out
 * (bpf/offcpu.bpf.h, classify_block), so that attribution treats the
 * interval as any other.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "host/tstate.h"
#include "stream/records.h"

#define FUTEX_CMD_MASK		0x7f
#define FUTEX_WAIT		0
#define FUTEX_LOCK_PI		6
#define FUTEX_LOCK_PI2		13

static int read_small(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = read(fd, buf, n - 1);
	close(fd);
	if (r < 0)
		return -errno;
	buf[r] = '\0';
	return 0;
}

/* The letter after the comm's closing parenthesis (the comm may hold
 * anything, a ')' too). */
static char stat_letter(const char *stat)
{
	const char *p = strrchr(stat, ')');

	return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

/* "nr a0 a1 ... sp pc", "-1 sp pc" (asleep outside a system call) or
 * "running"; the number or -1. */
static long parse_syscall(const char *s, __u64 args[3])
{
	char *end;
	long nr;
	int i;

	if (!strncmp(s, "running", 7))
		return -1;
	nr = strtol(s, &end, 10);
	if (end == s)
		return -1;
	for (i = 0; i < 3 && nr >= 0; i++) {
		s = end;
		args[i] = strtoull(s, &end, 16);
		if (end == s)
			break;
	}
	return nr;
}

/* Is socket inode @ino a unix socket of @tgid's network namespace? */
static bool unix_socket(pid_t tgid, unsigned long ino)
{
	char path[64], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/net/unix", (int)tgid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long v[7];

		/* Num RefCount Protocol Flags Type St Inode Path */
		if (sscanf(line, "%lx: %lx %lx %lx %lx %lx %lu", &v[0], &v[1], &v[2],
			   &v[3], &v[4], &v[5], &v[6]) == 7 && v[6] == ino)
			found = true;
	}
	fclose(f);
	return found;
}

/* The name behind descriptor @fd (its last component, as the kernel's
 * detail holds it) and what it is: classify_fd() from /proc. */
static uint16_t classify_fd(struct ig_tstate *r, struct ig_file *file,
			    bool *have_file, long fd, bool io)
{
	char link[64], target[4096];
	const char *base;
	struct stat st;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%u/task/%u/fd/%ld", r->h.tgid, r->h.tid, fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (fd < 0 || n <= 0 || stat(link, &st))
		return io ? IG_R_STORAGE : IG_R_OTHER;
	target[n] = '\0';
	if (S_ISFIFO(st.st_mode))
		return IG_R_PIPE;
	if (S_ISSOCK(st.st_mode))
		return unix_socket((pid_t)r->h.tgid, st.st_ino) ? IG_R_UNIX : IG_R_SOCKET;
	base = strrchr(target, '/');
	base = base && base[1] ? base + 1 : target;
	snprintf(r->detail.name, sizeof(r->detail.name), "%.*s",
		 (int)sizeof(r->detail.name) - 1, base);
	r->oflags |= IG_F_DETAIL_NAME;
	if (S_ISREG(st.st_mode) && io && target[0] == '/') {
		r->arg = IG_FILE_KEY(IG_MKDEV((uint64_t)major(st.st_dev),
					      (uint64_t)minor(st.st_dev)), st.st_ino);
		r->oflags |= IG_F_FILE_KEY;
		*have_file = ig_tstate_file(file, (pid_t)r->h.tgid, fd, target, r->arg,
					    (uint32_t)IG_MKDEV(major(st.st_dev),
							       minor(st.st_dev))) == 0;
	}
	if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		return io ? IG_R_STORAGE : IG_R_OTHER;
	if (!strcmp(target, "anon_inode:[eventfd]"))
		return IG_R_EVENTFD;
	return io ? IG_R_STORAGE : IG_R_OTHER;
}

static uint16_t classify_futex(struct ig_tstate *r)
{
	unsigned int cmd = r->args[1] & FUTEX_CMD_MASK;

	r->oflags |= cmd == FUTEX_WAIT || cmd == FUTEX_LOCK_PI || cmd == FUTEX_LOCK_PI2 ?
		     IG_F_FUTEX_PLAIN : IG_F_FUTEX_BITSET;
	return IG_R_FUTEX;
}

static bool fd_call(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_pread64: case SYS_readv: case SYS_preadv:
	case SYS_preadv2: case SYS_recvfrom: case SYS_recvmsg: case SYS_recvmmsg:
	case SYS_write: case SYS_pwrite64: case SYS_writev: case SYS_sendto:
	case SYS_sendmsg: case SYS_fstat: case SYS_fsync: case SYS_fdatasync:
	case SYS_getdents64: case SYS_accept: case SYS_accept4: case SYS_connect:
		return true;
	default:
		return false;
	}
}

static uint16_t classify(struct ig_tstate *r, struct ig_file *file, bool *have_file)
{
	long nr = r->syscall;
	bool d = r->state == 'D';

	if (r->state == 'R')
		return IG_R_PREEMPT;
	if (d)
		r->oflags |= IG_F_UNINTERRUPTIBLE;
	if (nr < 0)	/* asleep outside a system call: a page fault */
		return r->state == 'T' || r->state == 't' ? IG_R_OTHER : IG_R_PAGEFAULT;
	if (fd_call(nr))
		return classify_fd(r, file, have_file, (long)r->args[0], d);
	switch (nr) {
	case SYS_futex:
		return classify_futex(r);
#ifdef SYS_futex_waitv
	case SYS_futex_waitv:
		r->oflags |= IG_F_FUTEX_BITSET;
		r->arg = 0;	/* the address is in the waiter array */
		return IG_R_FUTEX;
#endif
#ifdef SYS_poll
	case SYS_poll: case SYS_select: case SYS_epoll_wait:
#endif
	case SYS_ppoll: case SYS_pselect6: case SYS_epoll_pwait:
		return IG_R_POLL;
	case SYS_nanosleep: case SYS_clock_nanosleep:
		return IG_R_SLEEP;
	case SYS_wait4: case SYS_waitid:
		return IG_R_WAITCHILD;
	case SYS_io_uring_enter:
		return IG_R_IOURING;
	default:
		return d ? IG_R_STORAGE : IG_R_OTHER;
	}
}

int ig_tstate_read(struct ig_tstate *r, pid_t tgid, pid_t tid, uint64_t ts,
		   uint64_t now, struct ig_file *file, bool *have_file)
{
	char path[64], buf[512];
	int err;

	*have_file = false;
	memset(r, 0, sizeof(*r));
	r->h = (struct ig_hdr){ .type = IG_REC_TSTATE, .size = sizeof(*r),
				.tid = (uint32_t)tid, .tgid = (uint32_t)tgid, .ts = ts };
	r->read_ns = now;
	r->syscall = -1;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)tgid, (int)tid);
	if ((err = read_small(path, buf, sizeof(buf))))
		return err;
	r->state = stat_letter(buf);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", (int)tgid, (int)tid);
	if (!read_small(path, buf, sizeof(buf)) && strcmp(buf, "0"))
		snprintf(r->wchan, sizeof(r->wchan), "%.*s", (int)sizeof(r->wchan) - 1, buf);
	/* needs ptrace access: without it the reason stays "other" */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)tgid, (int)tid);
	if (read_small(path, buf, sizeof(buf))) {
		r->reason = r->state == 'R' ? IG_R_PREEMPT : IG_R_OTHER;
		return 0;
	}
	r->syscall = (int32_t)parse_syscall(buf, r->args);
	r->arg = r->args[0];
	r->reason = classify(r, file, have_file);
	return 0;
}

/* The mount point and type of the mount @id, from @tgid's mountinfo. */
static int mount_of(pid_t tgid, unsigned long id, char *mnt, size_t n,
		    char fstype[16])
{
	char path[64], line[4096];
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)tgid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		unsigned long mid;
		char point[4096], *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%lu %*u %*s %*s %4095s", &mid, point) != 2 ||
		    mid != id || sscanf(dash + 3, "%15s", fstype) != 1)
			continue;
		snprintf(mnt, n, "%s", point);
		err = 0;
	}
	fclose(f);
	return err;
}

static unsigned int comps(const char *p)
{
	unsigned int n = 0;

	for (; *p; p++)
		n += *p == '/' && p[1] && p[1] != '/';
	return n;
}

int ig_tstate_file(struct ig_file *r, pid_t tgid, long fd, const char *target,
		   uint64_t key, uint32_t s_dev)
{
	char path[64], buf[512], mnt[4096] = "/";
	const char *p = target, *mid;
	unsigned int n, k, below;
	size_t len;

	memset(r, 0, sizeof(*r));
	r->h = (struct ig_hdr){ .type = IG_REC_FILE, .size = sizeof(*r), .tgid = (uint32_t)tgid };
	r->key = key;
	r->s_dev = s_dev;
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%ld", (int)tgid, fd);
	if (!read_small(path, buf, sizeof(buf)) && (mid = strstr(buf, "mnt_id:")))
		mount_of(tgid, strtoul(mid + 7, NULL, 10), mnt, sizeof(mnt), r->fstype);
	n = comps(target);
	below = n - comps(mnt);
	if (below > n)
		below = n;
	if (n > IG_PATH_DEPTH) {
		r->flags |= IG_FILEF_TRUNC;
		n = IG_PATH_DEPTH;
	}
	/* comp[0] is the last component (the kernel walks up from it) */
	for (k = comps(target); *p; ) {
		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (!len)
			break;
		k--;
		if (k < n)
			snprintf(r->comp[k], IG_NAME_LEN, "%.*s", (int)len, p);
		p += len;
	}
	r->ncomp = (uint16_t)n;
	r->nmount = (uint16_t)(below < n ? below : n);
	return 0;
}
