// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "probes/privs.h"
#include "probes/tracer.h"

#define TRACING		(IG_CAP(CAP_BPF) | IG_CAP(CAP_PERFMON))
#define TRACEFS		IG_CAP(CAP_DAC_READ_SEARCH)
#define OTHER_USER	IG_CAP(CAP_SYS_PTRACE)
#define SWITCH_USER	(IG_CAP(CAP_SETUID) | IG_CAP(CAP_SETGID))

static int caps_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	return syscall(SYS_capget, &h, d) ? -errno : 0;
}

static uint64_t join(__u32 lo, __u32 hi)
{
	return lo | (uint64_t)hi << 32;
}

uint64_t ig_privs_effective(void)
{
	struct __user_cap_data_struct d[2] = {};

	if (caps_get(d))
		return 0;
	return join(d[0].effective, d[1].effective);
}

/* Whether @pid sees the mounts this process sees (its mount namespace and
 * root): /proc/PID/mountinfo is anyone's to read. */
static bool same_mounts(pid_t pid)
{
	char p[64];
	FILE *a, *b;
	int ca, cb;

	snprintf(p, sizeof(p), "/proc/%d/mountinfo", pid);
	a = fopen(p, "re");
	b = fopen("/proc/self/mountinfo", "re");
	do {
		ca = a ? getc(a) : -2;
		cb = b ? getc(b) : -3;
	} while (ca == cb && ca != EOF);
	if (a)
		fclose(a);
	if (b)
		fclose(b);
	return ca == EOF && cb == EOF;
}

/* Can this process open the files @pid maps?  Through /proc/PID/root when
 * the kernel says yes to the ptrace question (same user and no more
 * capabilities, or CAP_SYS_PTRACE); otherwise under the same names here,
 * which are the same files only in the same mount namespace. */
static bool reachable(pid_t pid)
{
	char p[64];
	struct stat st;

	snprintf(p, sizeof(p), "/proc/%d/root/", pid);
	if (!stat(p, &st) || (errno != EACCES && errno != EPERM))
		return true;
	return same_mounts(pid);
}

/* One perf-event link per uprobe (no multi-uprobe links: before Linux
 * 6.6, IDLEGAP_NO_UPROBE_MULTI or the compat object) is refused without
 * CAP_SYS_ADMIN. */
static bool per_probe_links(void)
{
	return !ig_tracer_use_uprobe_multi();
}

/* tp/ programs read their tracepoint's id from tracefs, which is root's
 * alone (mode 0700): another user needs CAP_DAC_READ_SEARCH there. */
static bool tracefs_denied(void)
{
	static int needs = -1;

	if (faccessat(AT_FDCWD, "/sys/kernel/tracing/events", R_OK | X_OK, AT_EACCESS) == 0 ||
	    (errno != EACCES && errno != EPERM))
		return false;
	if (needs < 0)
		needs = ig_tracer_needs_tracefs();
	return needs;
}

static uint64_t have_caps(void)
{
	uint64_t have = ig_privs_effective();

	return have & IG_CAP(CAP_SYS_ADMIN) ? have | TRACING : have;
}

uint64_t ig_privs_missing(const struct ig_privs_target *t)
{
	uint64_t have = have_caps(), need = TRACING;
	int i;

	/* the probe for multi-uprobe links needs the first two */
	if ((have & TRACING) == TRACING && per_probe_links())
		need = IG_CAP(CAP_SYS_ADMIN);
	if (tracefs_denied())
		need |= TRACEFS;
	for (i = 0; t && i < t->npids; i++)
		if (!reachable(t->pids[i]))
			need |= OTHER_USER;
	if (t && t->switch_user)
		need |= SWITCH_USER;
	return need & ~have;
}

static const char *cap_name(int cap)
{
	switch (cap) {
	case CAP_BPF: return "CAP_BPF";
	case CAP_PERFMON: return "CAP_PERFMON";
	case CAP_SYS_PTRACE: return "CAP_SYS_PTRACE";
	case CAP_SETUID: return "CAP_SETUID";
	case CAP_SETGID: return "CAP_SETGID";
	case CAP_SYS_ADMIN: return "CAP_SYS_ADMIN";
	case CAP_DAC_OVERRIDE: return "CAP_DAC_OVERRIDE";
	case CAP_DAC_READ_SEARCH: return "CAP_DAC_READ_SEARCH";
	}
	return NULL;
}

void ig_privs_cap_names(uint64_t caps, char *buf, size_t n)
{
	size_t off = 0;
	int c;

	buf[0] = 0;
	for (c = 0; c < 64 && off < n; c++) {
		const char *name = cap_name(c);

		if (!(caps & IG_CAP(c)))
			continue;
		if (name)
			off += snprintf(buf + off, n - off, "%s%s", off ? ", " : "", name);
		else
			off += snprintf(buf + off, n - off, "%scapability %d", off ? ", " : "", c);
	}
}

int ig_privs_check(const struct ig_privs_target *t, char *why, size_t n)
{
	uint64_t missing = ig_privs_missing(t);
	char names[256];

	if (!missing)
		return 0;
	ig_privs_cap_names(missing, names, sizeof(names));
	snprintf(why, n, "missing %s%s: %s", names,
		 missing & OTHER_USER ?
		 " (a target is another user's process in another mount namespace)" : "",
		 geteuid() ? "run as root (sudo), or grant them" :
		 "root here lacks them (a container, or a reduced capability set): grant them");
	return 1;
}

/* Before Linux 6.5 every bpf() command (map updates for new processes,
 * link creation) asks for CAP_BPF; since then only loading does. */
static bool bpf_cmds_need_cap(void)
{
	struct utsname u;
	unsigned int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return true;
	return major < 6 || (major == 6 && minor < 5);
}

uint64_t ig_privs_after_attach(bool output_files)
{
	uint64_t have = ig_privs_effective();
	/* CAP_PERFMON reads maps where CAP_SYS_PTRACE is not there to */
	uint64_t keep = have & IG_CAP(CAP_SYS_PTRACE) ? IG_CAP(CAP_SYS_PTRACE) :
			IG_CAP(CAP_PERFMON);

	if (bpf_cmds_need_cap())
		keep |= IG_CAP(CAP_BPF);
	/* CAP_SYS_ADMIN where it stands in for the others */
	if (per_probe_links() || (have & TRACING) != TRACING)
		keep |= IG_CAP(CAP_SYS_ADMIN);
	if (output_files)
		keep |= IG_CAP(CAP_DAC_OVERRIDE);
	return keep & have;
}

int ig_privs_limit(uint64_t keep)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};
	int c, err = caps_get(d);

	if (err)
		return err;
	/* the bounding set first: dropping from it needs CAP_SETPCAP */
	for (c = 0; c <= CAP_LAST_CAP; c++)
		if (!(keep & IG_CAP(c)) && prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1)
			prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
	d[0].effective &= (__u32)keep;
	d[1].effective &= (__u32)(keep >> 32);
	d[0].permitted &= (__u32)keep;
	d[1].permitted &= (__u32)(keep >> 32);
	d[0].inheritable = d[1].inheritable = 0;
	if (syscall(SYS_capset, &h, d))
		return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	return 0;
}

int ig_privs_no_inherit(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -1;
	if (caps_get(d))
		return -1;
	d[0].inheritable = d[1].inheritable = 0;
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}
