// SPDX-License-Identifier: GPL-2.0
/*
 * Host-wide discovery: ig_discovery_gpu_procs() finds a process that maps a libcuda,
 * in this mount namespace and (as root) in a private one whose library
 * exists only there; a process that ended is not listed; a discovery
 * object forgets the processes that end, through thousands of them; a
 * process forked from a Python one is Python from its fork record on.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "probes/discovery.h"

#define FAKECUDA	"build/tests/fakecuda/libcuda.so.1"

struct child {
	pid_t pid;
	int hold;		/* closing it ends the child */
	char lib[PATH_MAX];	/* the library as the child names it */
};

static char top[PATH_MAX - 64];

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	size_t n;

	if (!in || !out)
		_exit(3);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			_exit(3);
	fclose(in);
	if (fclose(out))
		_exit(3);
}

/* In the child: @dir non-NULL makes a private mount namespace where a
 * tmpfs on @dir holds a copy of the library. */
static void child_main(const char *lib, const char *dir, int ready, int hold)
{
	char c;

	if (dir) {
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("none", dir, "tmpfs", 0, NULL))
			_exit(2);
		copy_file(FAKECUDA, lib);
	}
	if (!dlopen(lib, RTLD_NOW))
		_exit(4);
	if (write(ready, "x", 1) != 1)
		_exit(5);
	while (read(hold, &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

static int start_child(struct child *ch, const char *dir)
{
	int ready[2], hold[2];
	char c;

	if (dir)
		snprintf(ch->lib, sizeof(ch->lib), "%s/libcuda.so.1", dir);
	else
		snprintf(ch->lib, sizeof(ch->lib), "%s/" FAKECUDA, top);
	if (pipe(ready) || pipe(hold))
		return -1;
	ch->pid = fork();
	if (ch->pid == 0) {
		close(ready[0]);
		close(hold[1]);
		child_main(ch->lib, dir, ready[1], hold[0]);
	}
	close(ready[1]);
	close(hold[0]);
	ch->hold = hold[1];
	if (ch->pid < 0 || read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		return -1;
	}
	close(ready[0]);
	return 0;
}

static int stop_child(struct child *ch)
{
	int status = -1;

	close(ch->hold);
	waitpid(ch->pid, &status, 0);
	return status;
}

struct found {
	pid_t pid;
	bool seen;
	char name[PATH_MAX];
	char path[PATH_MAX];
	int err;
	int total;
};

static int on_proc(const struct ig_gpu_proc *p, void *ctx)
{
	struct found *f = ctx;

	f->total++;
	if (p->pid != f->pid)
		return 0;
	f->seen = true;
	snprintf(f->name, sizeof(f->name), "%s", p->name);
	snprintf(f->path, sizeof(f->path), "%s", p->path);
	f->err = p->err;
	return 0;
}

static bool same_file(const char *a, const char *b)
{
	struct stat x, y;

	return !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static void test_finds_process_here(void **state)
{
	struct child ch;
	struct found f = {};

	(void)state;
	assert_int_equal(start_child(&ch, NULL), 0);
	f.pid = ch.pid;
	assert_int_equal(ig_discovery_gpu_procs(on_proc, &f), 0);
	assert_true(f.seen);
	assert_int_equal(f.err, 0);
	assert_true(same_file(f.name, FAKECUDA));
	assert_true(same_file(f.path, FAKECUDA));
	assert_int_equal(stop_child(&ch), 0);
	/* ended and reaped: no longer listed */
	memset(&f, 0, sizeof(f));
	f.pid = ch.pid;
	assert_int_equal(ig_discovery_gpu_procs(on_proc, &f), 0);
	assert_false(f.seen);
}

static void test_finds_process_in_other_mounts(void **state)
{
	char dir[] = "/tmp/ig-disc-XXXXXX";
	struct child ch;
	struct found f = {};
	char want[PATH_MAX + 32];

	(void)state;
	if (geteuid())
		skip();	/* a private mount namespace needs root */
	assert_non_null(mkdtemp(dir));
	assert_int_equal(start_child(&ch, dir), 0);
	f.pid = ch.pid;
	assert_int_equal(ig_discovery_gpu_procs(on_proc, &f), 0);
	assert_true(f.seen);
	assert_int_equal(f.err, 0);
	/* named as the process names it, reached through its root */
	assert_string_equal(f.name, ch.lib);
	assert_int_equal(access(ch.lib, F_OK), -1);
	snprintf(want, sizeof(want), "/proc/%d/root%s", ch.pid, ch.lib);
	assert_string_equal(f.path, want);
	assert_int_equal(access(f.path, R_OK), 0);
	assert_int_equal(stop_child(&ch), 0);
	rmdir(dir);
}

struct events {
	int libcuda, gone, unprobed;
	pid_t last_pid;
	pid_t child;
	int child_libcuda;	/* libcuda events for @child */
};

static void on_event(const struct ig_disc_event *ev, void *ctx)
{
	struct events *e = ctx;

	e->last_pid = ev->pid;
	e->libcuda += ev->kind == IG_DISC_LIBCUDA;
	e->child_libcuda += ev->kind == IG_DISC_LIBCUDA && ev->pid == e->child;
	e->gone += ev->kind == IG_DISC_GONE;
	e->unprobed += ev->kind == IG_DISC_UNPROBED;
}

static void group_exit(struct ig_discovery *d, pid_t pid)
{
	struct ig_proc r = {
		.h = { .type = IG_REC_PROC, .size = sizeof(r), .tid = pid, .tgid = pid },
		.kind = IG_PROC_GROUP_EXIT,
	};

	ig_discovery_on_record(d, &r.h);
}

static int count_proc(const struct ig_disc_proc *p, void *ctx)
{
	(void)p;
	++*(int *)ctx;
	return 0;
}

/* Without a tracer it finds and lists, probes nothing; processes that end
 * are forgotten. */
static void test_scan_and_forget(void **state)
{
	struct events e = {};
	struct ig_discovery_opts o = { .sz = sizeof(o), .event = on_event, .ctx = &e };
	struct ig_discovery *d = ig_discovery_new(&o);
	struct child ch;
	int i, n = 0;

	(void)state;
	assert_non_null(d);
	assert_int_equal(start_child(&ch, NULL), 0);
	e.child = ch.pid;
	assert_true(ig_discovery_scan(d, 1, NULL, NULL) >= 1);
	assert_int_equal(e.child_libcuda, 1);
	/* a second scan does not add it again */
	assert_true(ig_discovery_scan(d, 2, NULL, NULL) >= 0);
	assert_int_equal(e.child_libcuda, 1);
	assert_int_equal(ig_discovery_foreach_process(d, count_proc, &n), 0);
	assert_int_equal(n, (int)ig_discovery_nprocs(d));
	assert_int_equal(stop_child(&ch), 0);
	group_exit(d, ch.pid);
	assert_int_equal(e.gone, 1);
	assert_int_equal(e.last_pid, ch.pid);
	assert_int_equal(ig_discovery_nprocs(d), (unsigned int)n - 1);
	/* thousands of lifecycles leave nothing behind */
	n = ig_discovery_nprocs(d);
	for (i = 0; i < 5000; i++) {
		pid_t pid = 0x7ffff000 - i;	/* no such process */

		ig_discovery_watch(d, pid, 3);
		group_exit(d, pid);
	}
	assert_int_equal(e.gone, 5001);
	assert_int_equal(ig_discovery_nprocs(d), (unsigned int)n);
	ig_discovery_free(d);
}

static void on_record(const struct ig_hdr *rec, void *ctx)
{
	(void)rec;
	(void)ctx;
}

static void count_libcuda(const struct ig_hdr *rec, void *ctx)
{
	((struct events *)ctx)->child_libcuda += rec->type == IG_REC_LIBCUDA;
}

static int probed_of(const struct ig_disc_proc *p, void *ctx)
{
	return p->pid == *(pid_t *)ctx ? 1 + p->probed : 0;
}

/* The duty cycle: a process's hot-path uprobes go between windows and
 * come back at the next; the set-up ones (for every process of its libcuda
 * file) and the loaders' stay; a process that ends takes its own probes
 * along. */
static void test_detach_attach(void **state)
{
	struct ig_tracer_opts to = { .sz = sizeof(to) };
	struct ig_tracer *t;
	struct events e = {};
	struct ig_discovery_opts o = { .sz = sizeof(o), .detach_on_exit = true,
				       .windows = true, .record = count_libcuda,
				       .event = on_event, .ctx = &e };
	struct ig_discovery *d;
	struct child ch;
	char why[256];
	size_t staying;

	(void)state;
	if (geteuid())
		skip();	/* probes need root */
	t = ig_tracer_open(&to, on_record, NULL, why, sizeof(why));
	assert_non_null(t);
	o.tracer = t;
	d = ig_discovery_new(&o);
	assert_non_null(d);
	assert_int_equal(start_child(&ch, NULL), 0);
	assert_int_equal(ig_discovery_add(d, ch.pid, 1), 0);
	assert_int_equal(e.child_libcuda, 1);
	assert_int_equal(ig_discovery_foreach_process(d, probed_of, &ch.pid), 2);
	assert_true(ig_tracer_nuprobe_links(t, ch.pid) > 0);
	staying = ig_tracer_nuprobe_links(t, -1) - ig_tracer_nuprobe_links(t, ch.pid);
	assert_true(staying > 0);
	ig_discovery_detach_all(d);
	assert_int_equal(ig_tracer_nuprobe_links(t, ch.pid), 0);
	assert_int_equal(ig_tracer_nuprobe_links(t, -1), staying);
	assert_int_equal(ig_discovery_foreach_process(d, probed_of, &ch.pid), 1);
	assert_int_equal(ig_discovery_attach_all(d, 2), 1);
	assert_int_equal(e.child_libcuda, 2);
	assert_true(ig_tracer_nuprobe_links(t, ch.pid) > 0);
	assert_int_equal(stop_child(&ch), 0);
	group_exit(d, ch.pid);
	assert_int_equal(ig_tracer_nuprobe_links(t, ch.pid), 0);
	assert_int_equal(ig_discovery_foreach_process(d, probed_of, &ch.pid), 0);
	ig_discovery_free(d);
	ig_tracer_close(t);
}

/* A Python interpreter that says when it runs and ends when @hold closes. */
static pid_t start_python(int *hold)
{
	int ready[2], in[2];
	pid_t pid;
	char c;

	if (pipe(ready) || pipe(in))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(ready[1], 1);
		close(in[1]);	/* else its own stdin never ends */
		close(ready[0]);
		execl("/usr/bin/python3", "python3", "-c",
		      "import os; os.write(1, b'x'); os.read(0, 1)", (char *)NULL);
		_exit(127);
	}
	close(ready[1]);
	close(in[0]);
	*hold = in[1];
	if (pid < 0 || read(ready[0], &c, 1) != 1)
		pid = -1;
	close(ready[0]);
	return pid;
}

struct pyrts {
	int n;
	struct ig_pyrt last;
};

static void on_pyrt(const struct ig_hdr *rec, void *ctx)
{
	struct pyrts *r = ctx;

	if (rec->type != IG_REC_PYRT)
		return;
	r->n++;
	memcpy(&r->last, rec, sizeof(r->last));
}

static void proc_rec(struct ig_discovery *d, unsigned int kind, pid_t pid,
		     pid_t ppid, __u64 ts)
{
	struct ig_proc r = {
		.h = { .type = IG_REC_PROC, .size = sizeof(r), .tid = pid,
		       .tgid = pid, .ts = ts },
		.kind = kind, .ppid = ppid,
	};

	ig_discovery_on_record(d, &r.h);
}

/* A child forked from a Python process gets its parent's _PyRuntime at its
 * fork record, with nothing looked up (the children here do not exist);
 * not from an unknown parent, nor after the parent exec'd. */
static void test_fork_inherits_python(void **state)
{
	struct pyrts r = {};
	struct ig_discovery_opts o = { .sz = sizeof(o), .record = on_pyrt,
				       .ctx = &r };
	struct ig_discovery *d;
	const pid_t kid = 0x7ffff100;
	struct ig_pyrt parent;
	int hold = -1;
	pid_t py;

	(void)state;
	if (access("/usr/bin/python3", X_OK))
		skip();
	py = start_python(&hold);
	assert_true(py > 0);
	d = ig_discovery_new(&o);
	assert_non_null(d);
	assert_int_equal(ig_discovery_add(d, py, 1), 0);
	assert_int_equal(r.n, 1);
	parent = r.last;
	assert_int_equal(parent.h.tgid, py);
	assert_true(parent.start && parent.end > parent.start);
	proc_rec(d, IG_PROC_FORK, kid, py, 5);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.last.h.tgid, kid);
	assert_int_equal(r.last.h.tid, kid);
	assert_int_equal(r.last.h.ts, 5);
	assert_int_equal(r.last.start, parent.start);
	assert_int_equal(r.last.end, parent.end);
	assert_string_equal(r.last.path, parent.path);
	/* a grandchild too; an unknown parent gives nothing */
	proc_rec(d, IG_PROC_FORK, kid + 1, kid, 6);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.last.start, parent.start);
	proc_rec(d, IG_PROC_FORK, kid + 2, kid + 3, 7);
	assert_int_equal(r.n, 3);
	/* after an exec the image is another: no inheritance until looked up */
	proc_rec(d, IG_PROC_EXEC, kid, kid, 8);
	proc_rec(d, IG_PROC_FORK, kid + 4, kid, 9);
	assert_int_equal(r.n, 3);
	close(hold);
	waitpid(py, NULL, 0);
	group_exit(d, py);
	for (pid_t p = kid; p <= kid + 4; p++)
		group_exit(d, p);
	assert_int_equal(ig_discovery_nprocs(d), 0);
	ig_discovery_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_finds_process_here),
		cmocka_unit_test(test_finds_process_in_other_mounts),
		cmocka_unit_test(test_scan_and_forget),
		cmocka_unit_test(test_detach_attach),
		cmocka_unit_test(test_fork_inherits_python),
	};
	const char *t = getenv("IG_TOP");

	snprintf(top, sizeof(top), "%s", t ? t : ".");
	if (chdir(top) || access(FAKECUDA, R_OK)) {
		printf("1..0 # SKIP %s missing (make test-progs)\n", FAKECUDA);
		return 0;
	}
	if (!getcwd(top, sizeof(top)))
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
