/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `run`'s command: started paused, so the tracer is ready before its first
 * instruction, as the invoking user (not root), with none of idlegap's
 * capabilities.
 */
#ifndef IG_SPAWN_H
#define IG_SPAWN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct ig_run_as {
	bool switch_user;	/* false: idlegap's own user */
	uid_t uid;
	gid_t gid;
	char name[64];		/* "" when the uid has no passwd entry */
	char home[PATH_MAX];
};

/* Who runs the command: @user (--user NAME or UID); else, under sudo, the
 * invoking user (SUDO_UID, SUDO_GID); else idlegap's own user.  @as_root
 * keeps root.  0, or -EINVAL with @why set. */
int ig_spawn_resolve_user(const char *user, bool as_root, struct ig_run_as *ra,
			  char *why, size_t n);

struct ig_child {
	pid_t pid;
	int go_fd;		/* write a byte: exec */
	int err_fd;		/* the child's errno if exec (or the user switch) failed */
	bool switch_failed;	/* set by ig_spawn_start: the user switch failed */
};

/* Forks the command; it waits for ig_spawn_start().  Closing go_fd without
 * a byte makes it exit: it never runs untraced.  Negative errno. */
int ig_spawn_paused(char **argv, const struct ig_run_as *ra, struct ig_child *c);
/* Lets it exec.  0, or the errno that kept it from running (it is reaped:
 * *status set). */
int ig_spawn_start(struct ig_child *c, int *status);

#endif
