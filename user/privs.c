// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "privs.h"
#include "tracer.h"

#define TRACING		(IG_CAP(CAP_BPF) | IG_CAP(CAP_PERFMON))
#define OTHER_USER	IG_CAP(CAP_SYS_PTRACE)
#define SWITCH_USER	(IG_CAP(CAP_SETUID) | IG_CAP(CAP_SETGID) | IG_CAP(CAP_SYS_PTRACE))

static int caps_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	return syscall(SYS_capget, &h, d) ? -errno : 0;
}

static uint64_t join(__u32 lo, __u32 hi)
{
	return lo | (uint64_t)hi << 32;
}

uint64_t ig_caps_effective(void)
{
	struct __user_cap_data_struct d[2] = {};

	if (caps_get(d))
		return 0;
	return join(d[0].effective, d[1].effective);
}

/* Can this process see into @pid's mount namespace?  The kernel asks the
 * ptrace question (same user and no more privileges, or CAP_SYS_PTRACE). */
static bool reachable(pid_t pid)
{
	char p[64];
	struct stat st;

	snprintf(p, sizeof(p), "/proc/%d/root/", pid);
	return !stat(p, &st) || (errno != EACCES && errno != EPERM);
}

/* One perf-event link per uprobe (no multi-uprobe links: before Linux
 * 6.6, or IDLEGAP_NO_UPROBE_MULTI) is refused without CAP_SYS_ADMIN. */
static bool per_probe_links(void)
{
	return getenv("IDLEGAP_NO_UPROBE_MULTI") || !ig_probe_uprobe_multi();
}

static uint64_t have_caps(void)
{
	uint64_t have = ig_caps_effective();

	return have & IG_CAP(CAP_SYS_ADMIN) ? have | TRACING : have;
}

uint64_t ig_privs_missing(const struct ig_privs_target *t)
{
	uint64_t have = have_caps(), need = TRACING;
	int i;

	/* the probe for multi-uprobe links needs the first two */
	if ((have & TRACING) == TRACING && per_probe_links())
		need = IG_CAP(CAP_SYS_ADMIN);
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
	}
	return NULL;
}

void ig_caps_names(uint64_t caps, char *buf, size_t n)
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
	ig_caps_names(missing, names, sizeof(names));
	snprintf(why, n, "missing %s%s", names,
		 missing & OTHER_USER && !(t && t->switch_user) ?
		 " (a target is another user's process)" : "");
	return 1;
}

uint64_t ig_privs_after_attach(bool output_files)
{
	/* CAP_PERFMON reads maps where CAP_SYS_PTRACE is not there to */
	uint64_t keep = IG_CAP(CAP_BPF) | (ig_caps_effective() & IG_CAP(CAP_SYS_PTRACE) ?
		IG_CAP(CAP_SYS_PTRACE) : IG_CAP(CAP_PERFMON));

	if (per_probe_links())
		keep |= IG_CAP(CAP_SYS_ADMIN);
	if (output_files)
		keep |= IG_CAP(CAP_DAC_OVERRIDE);
	return keep;
}

int ig_caps_limit(uint64_t keep)
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

int ig_caps_no_inherit(void)
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
