/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Capabilities: what each mode needs, checked up front, and given up as
 * soon as they are no longer needed.  Measured on Linux 6.18 as a non-root
 * user holding only these (setpriv; tests/privs.t):
 *
 *   report                 none
 *   check, run, attach     CAP_BPF      load the programs, create links
 *                          CAP_PERFMON  tracing programs, uprobes, CPU-clock
 *                                       samples; it also lets /proc/PID/maps
 *                                       of any process be read
 *   attach -p PID          + CAP_SYS_PTRACE when PID is another user's (or
 *                          a more privileged) process in another mount
 *                          namespace: its files are reached only through
 *                          /proc/PID/root (a container's mounts).  In the
 *                          same mounts they are opened by name here.
 *   run -- CMD             + CAP_SETUID, CAP_SETGID when CMD runs as another
 *                          user (sudo's invoking user, --user)
 *   a tp/ program          + CAP_DAC_READ_SEARCH where tracefs is closed to
 *                          this process: the tracepoint's id is read there
 *
 * CAP_SYS_ADMIN stands in for CAP_BPF and CAP_PERFMON, as in the kernel.
 * Where there are no multi-uprobe links (before Linux 6.6, or with
 * IDLEGAP_NO_UPROBE_MULTI), a perf-event link per uprobe needs
 * CAP_SYS_ADMIN itself.
 *
 * After attach, a session keeps only (of what it has):
 *   CAP_BPF         before Linux 6.5 only, where every bpf() command (the
 *                   tracked set's map, new links) checks it
 *   CAP_SYS_PTRACE  processes that load libcuda later: their maps, and
 *                   their files through /proc/PID/root, to probe them
 *                   (multi-uprobe links need no capability of their own);
 *                   without it, CAP_PERFMON, which reads their maps
 *   CAP_SYS_ADMIN   where uprobes are perf-event links (above), or where
 *                   it stood in for CAP_BPF and CAP_PERFMON
 *   CAP_DAC_OVERRIDE  when the --json FILE is yet to be created: it may be
 *                   in the sudo user's directory (the recording is open)
 * It also empties its inheritable, ambient and bounding sets.
 * Nothing here prints: callers do.
 */
#ifndef IG_PRIVS_H
#define IG_PRIVS_H

#include <linux/capability.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define IG_CAP(c)	(1ULL << (c))

struct ig_privs_target {
	const pid_t *pids;	/* attach: the processes to trace */
	int npids;
	bool switch_user;	/* run: the command runs as another user */
};

/* The capabilities tracing @t needs that this process lacks (IG_CAP bits).
 * A pid that does not exist needs nothing (the caller says it is gone). */
uint64_t ig_privs_missing(const struct ig_privs_target *t);
/* 0 when nothing is missing; else 1, with @why saying what is, e.g.
 * "missing CAP_BPF, CAP_PERFMON".  For `check` and the tracing modes. */
int ig_privs_check(const struct ig_privs_target *t, char *why, size_t n);
/* What a tracing session keeps once its probes are attached, of what it
 * has; see "after attach" above. */
uint64_t ig_privs_after_attach(bool output_files);
/* "CAP_BPF, CAP_PERFMON" */
void ig_privs_cap_names(uint64_t caps, char *buf, size_t n);
/* This thread's effective set, as IG_CAP bits. */
uint64_t ig_privs_effective(void);
/* Keeps only @keep in the permitted and effective sets (and the bounding
 * set, where allowed); empties the inheritable and ambient sets, so that
 * nothing is passed on through exec.  Call it before any thread starts:
 * capabilities are per thread.  Negative errno. */
int ig_privs_limit(uint64_t keep);
/* Empties the ambient and inheritable sets: an exec'd program gets none of
 * this process's capabilities (a root one gets root's, as always).  For a
 * forked child; 0, or -1 with errno set. */
int ig_privs_no_inherit(void);

#endif
