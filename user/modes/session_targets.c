// SPDX-License-Identifier: GPL-2.0
/*
 * Who is traced, and with what rights (docs/design.md §7.7): the targets
 * checked before anything is attached (a thread names its process; a
 * kernel thread, a zombie or a kernel without BTF is refused in one
 * line), the privileges checked before and given up after the probes
 * are attached.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "host/procfs.h"
#include "modes/session_int.h"
#include "probes/log.h"
#include "probes/privs.h"
#include "probes/spawn.h"

/* Checks a target; returns its process id or -1 after saying why. */
static pid_t check_target(pid_t pid)
{
	bool kthread = false;
	pid_t tgid;

	if (pid <= 0 || ig_proc_ppid(pid, &kthread) < 0) {
		ig_err("no such process: %d", pid);
		return -1;
	}
	if (kthread) {
		ig_err("pid %d is a kernel thread; idlegap traces user processes", pid);
		return -1;
	}
	tgid = ig_proc_tgid(pid);
	if (ig_proc_exited(tgid > 0 ? tgid : pid)) {
		ig_err("pid %d has exited: a zombie its parent (pid %d) has not reaped; nothing to trace",
		       pid, ig_proc_ppid(pid, NULL));
		return -1;
	}
	if (tgid > 0 && tgid != pid) {
		ig_info("pid %d is a thread of process %d: tracing the process", pid, tgid);
		return tgid;
	}
	return pid;
}

/* Who runs the command, and whether idlegap holds what tracing needs:
 * one line naming what is missing. */
int ig_session_check_privileges(struct session *s)
{
	const struct ig_session_opts *o = s->o;
	struct ig_privs_target t = { .pids = o->pids, .npids = o->npids };
	char why[256];

	if (o->argv && ig_spawn_resolve_user(o->run_user, o->as_root, &s->run_as,
					  why, sizeof(why))) {
		ig_err("%s", why);
		return 1;
	}
	t.switch_user = s->run_as.switch_user;
	if (ig_privs_check(&t, why, sizeof(why))) {
		ig_err("%s (see CAPABILITIES in idlegap(8))", why);
		return 1;
	}
	return 0;
}

/* The probes are attached: keep only what the rest of the session needs
 * (privs.h says what and why).  Before NVML may start threads: capability
 * sets are per thread. */
void ig_session_drop_privileges(const struct session *s)
{
	/* the recording is open already; the JSON report is opened at the end */
	bool files = s->o->out.json_path && strcmp(s->o->out.json_path, "-");
	uint64_t keep = ig_privs_after_attach(files);
	int err = ig_privs_limit(keep);
	char names[256];

	ig_privs_cap_names(keep, names, sizeof(names));
	if (err)
		ig_warn("cannot give up capabilities: %s", strerror(-err));
	else
		ig_debug("capabilities kept after attach: %s (probing processes that load libcuda later%s)",
			 keep ? names : "none", files ? "; the --json file, not yet written" : "");
}

/* The targets as checked (a thread names its process) into @local; 1
 * after one line when one cannot be traced. */
int ig_session_check_targets(const struct ig_session_opts *o,
			     struct ig_session_opts *local, pid_t **pids)
{
	int i;

	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		ig_err("this kernel has no BTF (/sys/kernel/btf/vmlinux): idlegap needs CONFIG_DEBUG_INFO_BTF=y");
		return 1;
	}
	if (o->npids) {
		*pids = calloc(o->npids, sizeof(**pids));
		if (!*pids)
			return 1;
		for (i = 0; i < o->npids; i++)
			if (((*pids)[i] = check_target(o->pids[i])) < 0)
				return 1;
		local->pids = *pids;
	}
	if (o->libcuda_path && access(o->libcuda_path, R_OK)) {
		ig_err("--libcuda %s: %s", o->libcuda_path, strerror(errno));
		return 1;
	}
	return 0;
}
