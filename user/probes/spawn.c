// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "probes/privs.h"
#include "probes/spawn.h"
#include "util/util.h"

static void from_passwd(struct ig_run_as *ra, const struct passwd *pw)
{
	ig_strcpy(ra->name, sizeof(ra->name), pw->pw_name);
	ig_strcpy(ra->home, sizeof(ra->home), pw->pw_dir);
}

static int by_user(const char *user, struct ig_run_as *ra, char *why, size_t n)
{
	struct passwd *pw = getpwnam(user);
	char *end;
	unsigned long id;

	if (!pw) {
		errno = 0;
		id = strtoul(user, &end, 10);
		if (errno || !*user || *end || id > 0x7fffffffUL) {
			snprintf(why, n, "--user %s: no such user", user);
			return -EINVAL;
		}
		pw = getpwuid((uid_t)id);
		ra->uid = (uid_t)id;
		ra->gid = pw ? pw->pw_gid : (gid_t)id;
	} else {
		ra->uid = pw->pw_uid;
		ra->gid = pw->pw_gid;
	}
	if (pw)
		from_passwd(ra, pw);
	return 0;
}

static bool parse_id(const char *s, unsigned int *id)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = s ? strtoul(s, &end, 10) : 0;
	if (!s || !*s || errno || *end || v > 0x7fffffffUL)
		return false;
	*id = (unsigned int)v;
	return true;
}

/* sudo's invoking user.  Trusted only when idlegap's real user is root:
 * anyone may set SUDO_UID. */
static int from_sudo(struct ig_run_as *ra, char *why, size_t n)
{
	struct passwd *pw;
	unsigned int uid, gid;

	if (!parse_id(getenv("SUDO_UID"), &uid)) {
		snprintf(why, n, "SUDO_UID=%s is not a user id (use --user or --as-root)",
			 getenv("SUDO_UID"));
		return -EINVAL;
	}
	pw = getpwuid(uid);
	if (!parse_id(getenv("SUDO_GID"), &gid))
		gid = pw ? pw->pw_gid : uid;
	ra->uid = uid;
	ra->gid = gid;
	if (pw)
		from_passwd(ra, pw);
	return 0;
}

int ig_spawn_resolve_user(const char *user, bool as_root, struct ig_run_as *ra,
			  char *why, size_t n)
{
	const char *sudo = getenv("SUDO_UID");
	int err = 0;

	memset(ra, 0, sizeof(*ra));
	ra->uid = geteuid();
	ra->gid = getegid();
	if (user && as_root) {
		snprintf(why, n, "--user and --as-root exclude each other");
		return -EINVAL;
	}
	if (as_root && geteuid() != 0) {
		snprintf(why, n, "--as-root: idlegap is not running as root");
		return -EINVAL;
	}
	if (user)
		err = by_user(user, ra, why, n);
	else if (!as_root && getuid() == 0 && sudo && *sudo)
		err = from_sudo(ra, why, n);
	ra->switch_user = !err && (ra->uid != geteuid() || ra->gid != getegid());
	return err;
}

/* In the child: who it runs as; 0 or an errno. */
static int become(const struct ig_run_as *ra)
{
	if (ig_privs_no_inherit())
		return errno;
	if (!ra->switch_user)
		return 0;
	if (ra->name[0] ? initgroups(ra->name, ra->gid) : setgroups(1, &ra->gid))
		return errno;
	/* setresuid away from root also empties the permitted and effective
	 * capability sets (no SECBIT_KEEP_CAPS here) */
	if (setresgid(ra->gid, ra->gid, ra->gid) || setresuid(ra->uid, ra->uid, ra->uid))
		return errno;
	if (ra->name[0]) {
		setenv("HOME", ra->home, 1);
		setenv("USER", ra->name, 1);
		setenv("LOGNAME", ra->name, 1);
	}
	return 0;
}

static void child(char **argv, const struct ig_run_as *ra, int go, int errfd)
{
	int e[2] = { 1, 0 };	/* stage (1: user switch, 2: exec), errno */
	char c;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (read(go, &c, 1) != 1)
		_exit(127);	/* the tracer died: never run untraced */
	e[1] = become(ra);
	if (!e[1]) {
		execvp(argv[0], argv);
		e[0] = 2;
		e[1] = errno;
	}
	if (write(errfd, e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int ig_spawn_paused(char **argv, const struct ig_run_as *ra, struct ig_child *c)
{
	int go[2], errp[2];

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(errp, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	c->pid = fork();
	if (c->pid == 0) {
		close(go[1]);
		close(errp[0]);
		child(argv, ra, go[0], errp[1]);
	}
	close(go[0]);
	close(errp[1]);
	if (c->pid < 0) {
		close(go[1]);
		close(errp[0]);
		return -errno;
	}
	c->go_fd = go[1];
	c->err_fd = errp[0];
	return 0;
}

int ig_spawn_start(struct ig_child *c, int *status)
{
	int e[2] = { 0, 0 }, err = 0;
	ssize_t n;

	if (write(c->go_fd, "g", 1) != 1)
		err = errno;
	close(c->go_fd);
	c->go_fd = -1;
	n = err ? 0 : read(c->err_fd, e, sizeof(e));	/* EOF: exec succeeded */
	close(c->err_fd);
	c->err_fd = -1;
	if (n == sizeof(e)) {
		waitpid(c->pid, status, 0);
		c->switch_failed = e[0] == 1;
		err = e[1];
	}
	return err;
}
