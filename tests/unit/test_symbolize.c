// SPDX-License-Identifier: GPL-2.0
/*
 * Native frame names: a PIE executable (build/trainsim), a shared library
 * (build/tests/fakecuda/libcuda.so.1), stripped copies of both, and
 * addresses of this live process; and the IG_REC_USYM records made for a
 * stack record.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "host/elfsym.h"
#include "stacks/symbolize.h"

static char trainsim[PATH_MAX], libcuda[PATH_MAX], tmpdir[64];

static int setup(void **state)
{
	const char *top = getenv("IG_TOP");

	(void)state;
	snprintf(trainsim, sizeof(trainsim), "%s/build/trainsim", top ? top : ".");
	snprintf(libcuda, sizeof(libcuda), "%s/build/tests/fakecuda/libcuda.so.1",
		 top ? top : ".");
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ig-sym.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[96];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) ? -1 : 0;
}

static void need(const char *path)
{
	if (access(path, R_OK)) {
		fprintf(stderr, "SKIP: %s not built (make all test-progs)\n", path);
		skip();
	}
}

/* A stripped copy of @path in the temporary directory. */
static const char *stripped(const char *path, const char *name, char *out,
			    size_t n)
{
	char cmd[3 * PATH_MAX];

	snprintf(out, n, "%s/%s", tmpdir, name);
	snprintf(cmd, sizeof(cmd), "strip -o '%s' '%s'", out, path);
	if (system(cmd)) {
		fprintf(stderr, "SKIP: strip(1) failed\n");
		skip();
	}
	return out;
}

/* The file offset of @sym's code in @path, plus @plus. */
static uint64_t sym_off(const char *path, const char *sym, uint64_t plus)
{
	struct ig_elf_sym s;

	assert_int_equal(ig_elf_find_sym(path, sym, &s), 0);
	assert_true(s.size > plus);
	return s.file_off + plus;
}

static void pie_executable(void **state)
{
	struct ig_symbolizer *s = ig_sym_new();
	struct ig_sym_frame f;

	(void)state;
	need(trainsim);
	assert_int_equal(ig_sym_file(s, trainsim, sym_off(trainsim, "worker_loop", 4), &f), 0);
	assert_true(f.flags & IG_USYMF_LINE);
	assert_false(f.flags & (IG_USYMF_NOSYM | IG_USYMF_UNMAPPED));
	assert_non_null(strstr(f.name, "(loader.c:"));
	assert_int_equal(strncmp(f.name, "worker_loop ", 12), 0);
	assert_int_equal(ig_sym_file(s, trainsim, sym_off(trainsim, "dataset_prepare", 1), &f), 0);
	assert_int_equal(strncmp(f.name, "dataset_prepare (loader.c:", 26), 0);
	ig_sym_free(s);
}

static void shared_library(void **state)
{
	struct ig_symbolizer *s = ig_sym_new();
	struct ig_sym_frame f;

	(void)state;
	need(libcuda);
	assert_int_equal(ig_sym_file(s, libcuda, sym_off(libcuda, "cuEventQuery", 1), &f), 0);
	assert_int_equal(strncmp(f.name, "cuEventQuery (libcuda.c:", 24), 0);
	ig_sym_free(s);
}

/* Without .symtab and DWARF: exported functions keep their names with an
 * offset, static ones get none rather than a neighbour's. */
static void stripped_copies(void **state)
{
	struct ig_symbolizer *s = ig_sym_new();
	char path[PATH_MAX], want[64];
	struct ig_sym_frame f;
	struct ig_elf_sym ws;
	uint64_t off;

	(void)state;
	need(libcuda);
	need(trainsim);
	off = sym_off(libcuda, "cuEventQuery", 3);
	stripped(libcuda, "libcuda.so.1", path, sizeof(path));
	assert_int_equal(ig_sym_file(s, path, off, &f), 0);
	assert_string_equal(f.name, "cuEventQuery+0x3 (libcuda.so.1)");
	assert_int_equal(f.flags & (IG_USYMF_LINE | IG_USYMF_NOSYM), 0);

	assert_int_equal(ig_elf_find_sym(trainsim, "worker_loop", &ws), 0);
	stripped(trainsim, "trainsim", path, sizeof(path));
	assert_int_equal(ig_sym_file(s, path, ws.file_off + 4, &f), 0);
	snprintf(want, sizeof(want), "[trainsim+%#llx]",
		 (unsigned long long)ws.vaddr + 4);
	assert_string_equal(f.name, want);
	assert_true(f.flags & IG_USYMF_NOSYM);
	ig_sym_free(s);
}

static void bad_files(void **state)
{
	struct ig_symbolizer *s = ig_sym_new();
	struct ig_sym_frame f;

	(void)state;
	assert_int_equal(ig_sym_file(s, "/nonexistent/lib.so", 0, &f), -ENOENT);
	assert_int_equal(ig_sym_file(s, "/etc/passwd", 0, &f), -ENOEXEC);
	need(trainsim);
	/* an offset outside the executable segments */
	assert_int_equal(ig_sym_file(s, trainsim, 1ULL << 40, &f), -ERANGE);
	ig_sym_free(s);
}

__attribute__((noinline)) int ig_test_marker(int x)
{
	return x * 3 + 1;
}

/* This process: a PIE whose code is at a random address, and a library
 * loaded at run time. */
static void live_process(void **state)
{
	struct ig_symbolizer *s = ig_sym_new();
	struct ig_sym_frame f;
	void *h, *fn;

	(void)state;
	assert_int_equal(ig_sym_proc(s, getpid(), (uintptr_t)ig_test_marker + 1, &f), 0);
	assert_int_equal(strncmp(f.name, "ig_test_marker (test_symbolize.c:", 33), 0);
	assert_int_equal(ig_sym_proc(s, getpid(), 16, &f), 0);
	assert_true(f.flags & IG_USYMF_UNMAPPED);
	need(libcuda);
	h = dlopen(libcuda, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	fn = dlsym(h, "cuEventQuery");
	assert_non_null(fn);
	/* mapped after the maps were first read */
	assert_int_equal(ig_sym_proc(s, getpid(), (uintptr_t)fn, &f), 0);
	assert_int_equal(strncmp(f.name, "cuEventQuery (libcuda.c:", 24), 0);
	assert_int_equal(ig_sym_proc(s, 0x7ffffff0, 0x1000, &f), -ESRCH);
	dlclose(h);
	ig_sym_free(s);
}

static pid_t child(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		pause();
		_exit(0);
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* A file stays open while a process known to the symbolizer maps it, is
 * closed when the last one is forgotten, and is named again when a new
 * process maps it. */
static void files_evicted(void **state)
{
	struct ig_symbolizer *s = ig_sym_new();
	uintptr_t ip = (uintptr_t)ig_test_marker + 1;
	struct ig_sym_frame f;
	pid_t a = child(), b = child();

	(void)state;
	assert_int_equal(ig_sym_proc(s, a, ip, &f), 0);
	assert_int_equal(strncmp(f.name, "ig_test_marker (test_symbolize.c:", 33), 0);
	assert_int_equal(ig_sym_proc(s, b, ip, &f), 0);
	assert_int_equal(ig_sym_nfiles(s), 1);
	reap(a);
	ig_sym_forget(s, a);
	assert_int_equal(ig_sym_nfiles(s), 1);	/* b maps it still */
	reap(b);
	ig_sym_forget(s, b);
	assert_int_equal(ig_sym_nfiles(s), 0);
	a = child();
	assert_int_equal(ig_sym_proc(s, a, ip, &f), 0);
	assert_int_equal(strncmp(f.name, "ig_test_marker (test_symbolize.c:", 33), 0);
	assert_int_equal(ig_sym_nfiles(s), 1);
	reap(a);
	ig_sym_free(s);
}

struct got {
	int n;
	char names[8][IG_USYM_NAME_MAX];
	uint64_t ips[8];
};

static void collect(const struct ig_hdr *rec, void *ctx)
{
	const struct ig_usym *u = (const void *)rec;
	struct got *g = ctx;

	assert_int_equal(rec->type, IG_REC_USYM);
	assert_int_equal(rec->size % 8, 0);
	assert_true(rec->size >= sizeof(*u) + u->len);
	assert_int_equal(u->name[u->len - 1], 0);
	if (g->n < 8) {
		g->ips[g->n] = u->ip;
		strcpy(g->names[g->n], u->name);
	}
	g->n++;
}

/* Each address of a new stack is named once; references name nothing. */
static void stream_records(void **state)
{
	struct ig_symbolizer *s = NULL;
	struct ig_ustack st = {
		.h = { .type = IG_REC_USTACK, .tid = getpid(), .tgid = getpid(),
		       .size = offsetof(struct ig_ustack, ips) + 16 },
		.id = 42, .nips = 2, .depth = 2,
	};
	struct got g = { 0 };

	(void)state;
	st.ips[0] = (uintptr_t)ig_test_marker + 2;
	st.ips[1] = (uintptr_t)stream_records + 9;	/* a return address */
	ig_usym_on_record(&s, &st.h, collect, &g);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.ips[0], st.ips[0]);
	assert_int_equal(g.ips[1], st.ips[1] - 1);
	assert_int_equal(strncmp(g.names[0], "ig_test_marker (", 16), 0);
	assert_int_equal(strncmp(g.names[1], "stream_records (", 16), 0);
	ig_usym_on_record(&s, &st.h, collect, &g);
	assert_int_equal(g.n, 2);
	st.flags = IG_USF_REF;
	st.id = 43;
	st.ips[0] += 1;
	ig_usym_on_record(&s, &st.h, collect, &g);
	assert_int_equal(g.n, 2);
	ig_sym_free(s);
}

/* One stack record of this process: a whole one (@ref false) carrying @ip
 * as its innermost address, or a reference to it. */
static void send_stack(struct ig_symbolizer **s, __u64 id, uint64_t ip,
		       bool ref, struct got *g)
{
	struct ig_ustack st = {
		.h = { .type = IG_REC_USTACK, .tid = getpid(), .tgid = getpid(),
		       .size = offsetof(struct ig_ustack, ips) + 8 },
		.id = id, .nips = 1, .depth = 1, .flags = ref ? IG_USF_REF : 0,
	};

	st.ips[0] = ip;
	ig_usym_on_record(s, &st.h, collect, g);
}

/*
 * An address mapped after the process's maps were read, in a stack sent
 * whole while they are too fresh to read again: named unmapped, then by
 * its mapping at a later reference to that stack once they may be read
 * (a loop's stack is sent whole once), and only once.
 */
static void stream_mapped_late(void **state)
{
	struct ig_symbolizer *s = NULL;
	struct got g = { 0 };
	int fd, tries;
	void *m;

	(void)state;
	need(trainsim);
	fd = open(trainsim, O_RDONLY);
	assert_true(fd >= 0);
	/* the maps must still be fresh at the second record (250 ms) */
	for (tries = 0; tries < 5; tries++) {
		ig_sym_free(s);
		s = NULL;
		memset(&g, 0, sizeof(g));
		send_stack(&s, 1, (uintptr_t)ig_test_marker + 2, false, &g);
		m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		assert_true(m != MAP_FAILED);
		send_stack(&s, 2, (uintptr_t)m + 0x10, false, &g);
		if (g.n == 2 && !strncmp(g.names[1], "[unmapped ", 10))
			break;
		munmap(m, 4096);
	}
	assert_true(tries < 5);
	assert_int_equal(g.ips[1], (uintptr_t)m + 0x10);
	send_stack(&s, 2, 0, true, &g);
	assert_int_equal(g.n, 2);		/* too soon: nothing yet */
	usleep(300 * 1000);
	send_stack(&s, 2, 0, true, &g);
	assert_int_equal(g.n, 3);
	assert_int_equal(g.ips[2], (uintptr_t)m + 0x10);
	assert_int_not_equal(strncmp(g.names[2], "[unmapped ", 10), 0);
	assert_non_null(strstr(g.names[2], "trainsim"));
	send_stack(&s, 2, 0, true, &g);
	send_stack(&s, 3, (uintptr_t)m + 0x10, false, &g);
	assert_int_equal(g.n, 3);		/* named once */
	munmap(m, 4096);
	close(fd);
	ig_sym_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pie_executable),
		cmocka_unit_test(shared_library),
		cmocka_unit_test(stripped_copies),
		cmocka_unit_test(bad_files),
		cmocka_unit_test(live_process),
		cmocka_unit_test(files_evicted),
		cmocka_unit_test(stream_records),
		cmocka_unit_test(stream_mapped_late),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
