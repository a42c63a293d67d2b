// SPDX-License-Identifier: GPL-2.0
/* Output paths (user/util/outfile.c): walked one component at a time, never
 * through a link or a directory another user planted.  The cases that
 * make another user's links and directories need root. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/outfile.h"

#define NOBODY 65534

static char top[64];

static const char *at(const char *rel)
{
	static char buf[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", top, rel);
	return buf[i];
}

static bool exists(const char *rel)
{
	struct stat st;

	return !lstat(at(rel), &st);
}

static void nobody_link(const char *target, const char *rel)
{
	assert_int_equal(symlink(target, at(rel)), 0);
	assert_int_equal(lchown(at(rel), NOBODY, NOBODY), 0);
}

static void nobody_dir(const char *rel, mode_t mode)
{
	assert_int_equal(mkdir(at(rel), 0700), 0);
	assert_int_equal(chown(at(rel), NOBODY, NOBODY), 0);
	assert_int_equal(chmod(at(rel), mode), 0);
}

static int setup(void **state)
{
	(void)state;
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	snprintf(top, sizeof(top), "/tmp/ig-outfile.XXXXXX");
	if (!mkdtemp(top))
		return -1;
	chmod(top, 0711);
	mkdir(at("victim"), 0700);
	mkdir(at("pub"), 01777);
	chmod(at("pub"), 01777);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) ? -1 : 0;
}

static void need_root(void)
{
	if (geteuid())
		skip();
}

static void plain_file(void **state)
{
	struct stat st;
	int fd;

	(void)state;
	fd = ig_outfile_open(at("a.json"));
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	close(fd);
	/* again: replaced by a new file, not written through */
	fd = ig_outfile_open(at("a.json"));
	assert_true(fd >= 0);
	close(fd);
	fd = ig_outfile_open(at("pub/../b.json"));
	assert_true(fd >= 0);
	close(fd);
	assert_true(exists("b.json"));
	assert_int_equal(ig_outfile_open(at("victim")), -EISDIR);
	assert_int_equal(ig_outfile_open(at("victim/")), -EISDIR);
	assert_int_equal(ig_outfile_open(at("no/such/x")), -ENOENT);
	assert_int_equal(ig_outfile_open(at("a.json/x")), -ENOTDIR);
}

/* The case of the README's promise: a link on the way, not at the end. */
static void planted_dir_link(void **state)
{
	(void)state;
	need_root();
	nobody_link(at("victim"), "pub/dl");
	assert_int_equal(ig_outfile_open(at("pub/dl/important.conf")), -IG_OUT_ELINK);
	assert_false(exists("victim/important.conf"));
	/* deeper, and relative */
	nobody_link("../victim", "pub/rel");
	assert_int_equal(ig_outfile_open(at("pub/rel/x")), -IG_OUT_ELINK);
	/* the last component, as before */
	nobody_link(at("victim/last"), "pub/last.json");
	assert_int_equal(ig_outfile_open(at("pub/last.json")), -IG_OUT_ELINK);
	assert_false(exists("victim/last"));
	assert_string_equal(ig_outfile_strerror(-IG_OUT_ELINK),
			    "a symbolic link owned by another user is on the path (not followed)");
}

/* Root's links (as /var/run -> /run) are followed, relative or not, in
 * the middle and at the end. */
static void trusted_links(void **state)
{
	int fd;

	(void)state;
	assert_int_equal(symlink(at("victim"), at("pub/mine")), 0);
	fd = ig_outfile_open(at("pub/mine/x1"));
	assert_true(fd >= 0);
	close(fd);
	assert_true(exists("victim/x1"));
	assert_int_equal(symlink("../victim/x2", at("pub/mine2")), 0);
	fd = ig_outfile_open(at("pub/mine2"));
	assert_true(fd >= 0);
	close(fd);
	assert_true(exists("victim/x2"));
	/* a loop of links ends */
	assert_int_equal(symlink("loop", at("loop")), 0);
	assert_int_equal(ig_outfile_open(at("loop/x")), -ELOOP);
	assert_int_equal(ig_outfile_open(at("loop")), -ELOOP);
}

/* A second name of root's link is another user's choice of place. */
static void hard_linked_link(void **state)
{
	(void)state;
	need_root();
	assert_int_equal(symlink(at("victim"), at("rootlink")), 0);
	assert_int_equal(linkat(AT_FDCWD, at("rootlink"), AT_FDCWD, at("pub/hl"), 0), 0);
	assert_int_equal(ig_outfile_open(at("pub/hl/x")), -IG_OUT_ELINK);
}

static void open_dirs(void **state)
{
	int fd;

	(void)state;
	need_root();
	nobody_dir("ww", 0777);
	assert_int_equal(ig_outfile_open(at("ww/x")), -IG_OUT_EDIR);
	assert_false(exists("ww/x"));
	assert_int_equal(mkdir(at("ww/sub"), 0755), 0);
	assert_int_equal(ig_outfile_open(at("ww/sub/x")), -IG_OUT_EDIR);
	assert_int_equal(ig_outfile_opendir(at("ww"), true), -IG_OUT_EDIR);
	/* another user's own directory, closed to others: a new file there */
	nobody_dir("closed", 0755);
	fd = ig_outfile_open(at("closed/x"));
	assert_true(fd >= 0);
	close(fd);
	/* sticky: a new file or ours, not another user's */
	nobody_dir("st", 01777);
	fd = ig_outfile_open(at("st/new"));
	assert_true(fd >= 0);
	close(fd);
	fd = open(at("st/theirs"), O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	assert_int_equal(fchown(fd, NOBODY, NOBODY), 0);
	close(fd);
	assert_int_equal(ig_outfile_open(at("st/theirs")), -IG_OUT_EFILE);
	/* root's /tmp-like directory: another user's file is replaced */
	fd = open(at("pub/theirs"), O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_int_equal(fchown(fd, NOBODY, NOBODY), 0);
	close(fd);
	fd = ig_outfile_open(at("pub/theirs"));
	assert_true(fd >= 0);
	close(fd);
}

static void fifo(void **state)
{
	int fd, rd;

	(void)state;
	assert_int_equal(mkfifo(at("fifo"), 0600), 0);
	assert_int_equal(ig_outfile_open(at("fifo")), -IG_OUT_ENOREADER);
	rd = open(at("fifo"), O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	fd = ig_outfile_open(at("fifo"));
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	close(rd);
	fd = ig_outfile_open("/dev/null");
	assert_true(fd >= 0);
	close(fd);
}

static void discard(void **state)
{
	int fd, other;

	(void)state;
	fd = ig_outfile_open(at("d.json"));
	assert_true(fd >= 0);
	ig_outfile_discard(at("d.json"), fd);
	assert_false(exists("d.json"));
	close(fd);
	/* a file that took the name since is not ours to remove */
	fd = ig_outfile_open(at("e.json"));
	assert_int_equal(unlink(at("e.json")), 0);
	other = open(at("e.json"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(other >= 0);
	ig_outfile_discard(at("e.json"), fd);
	assert_true(exists("e.json"));
	close(fd);
	close(other);
	/* devices stay */
	fd = ig_outfile_open("/dev/null");
	ig_outfile_discard("/dev/null", fd);
	close(fd);
	assert_int_equal(access("/dev/null", F_OK), 0);
}

static void dirs(void **state)
{
	char leaf[NAME_MAX + 1];
	int fd, d;

	(void)state;
	fd = ig_outfile_opendir(at("reports"), true);
	assert_true(fd >= 0);
	close(fd);
	assert_true(exists("reports"));
	d = ig_outfile_opendir(at("reports"), false);
	assert_true(d >= 0);
	fd = ig_outfile_openat(d, "w.json");
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(ig_outfile_openat(d, "../escape"), -EINVAL);
	close(d);
	assert_true(exists("reports/w.json"));
	assert_int_equal(ig_outfile_walk(at("reports/w.json"), &fd, leaf, sizeof(leaf)), 0);
	assert_string_equal(leaf, "w.json");
	close(fd);
	if (geteuid())
		return;
	nobody_link(at("victim"), "pub/rdir");
	assert_int_equal(ig_outfile_opendir(at("pub/rdir"), true), -IG_OUT_ELINK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plain_file),
		cmocka_unit_test(planted_dir_link),
		cmocka_unit_test(trusted_links),
		cmocka_unit_test(hard_linked_link),
		cmocka_unit_test(open_dirs),
		cmocka_unit_test(fifo),
		cmocka_unit_test(discard),
		cmocka_unit_test(dirs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
