// SPDX-License-Identifier: GPL-2.0
/*
 * Writes a synthetic timeline as a Perfetto trace, for tests/perfetto.t and
 * for measuring the writer: one GPU, one process with a main thread, a
 * loader and an I/O thread; each round is busy time, a launch (call and
 * submission), and an idle gap blamed on storage through the walk
 * gap -> main (futex) -> loader (futex) -> io (read), every 5th round an
 * unresolved stretch instead.
 * Usage: pf_synth OUT ROUNDS [DISTINCT_FILES]; prints the writer's figures.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/outfile.h"
#include "views/perfetto.h"

enum { MAIN = 100, LOADER = 101, IO = 102 };

static const char *long_path(void)
{
	static char p[400];

	memset(p, 'd', sizeof(p) - 1);	/* longer than what is interned */
	memcpy(p, "/data/", 6);
	return p;
}

static int walk(struct ig_perfetto *w, uint64_t t, unsigned long r, unsigned long files)
{
	uint64_t f1 = 3 * r + 1, f2 = f1 + 1, f3 = f1 + 2;
	char file[64];
	struct ig_tl_annot gap_a[] = {
		{ .name = "file", .type = IG_TL_STR, .s = file },
		{ .name = "pid", .type = IG_TL_UINT, .u = MAIN },
		{ .name = "comm", .type = IG_TL_STR, .s = "python3" },
	};
	struct ig_tl_annot lock_a[] = {
		{ .name = "lock", .type = IG_TL_PTR, .u = 0x7f00dead0000ull },
		{ .name = "holder", .type = IG_TL_STR, .s = "loader (101)" },
		{ .name = "waker", .type = IG_TL_INT, .i = LOADER },
	};
	struct ig_tl_annot io_a[] = {
		{ .name = "file", .type = IG_TL_STR, .s = r % 7 ? file : long_path() },
	};
	struct ig_tl_slice s[] = {
		{ IG_TL_IDLE, 0, 0, t, 4000, "idle: storage", &f1, NULL, 1, 0, gap_a, 3 },
		{ IG_TL_OFFCPU, 0, MAIN, t - 500, 4400, "off-cpu: futex", &f2, &f1, 1, 1, lock_a, 3 },
		{ IG_TL_OFFCPU, 0, LOADER, t - 800, 4600, "off-cpu: futex", &f3, &f2, 1, 1, lock_a, 2 },
		{ IG_TL_OFFCPU, 0, IO, t - 900, 4700, "off-cpu: read", NULL, &f3, 0, 1, io_a, 1 },
	};
	unsigned int i;
	int err = 0;

	snprintf(file, sizeof(file), "/data/shard-%05lu.bin", r % files);
	for (i = 0; i < 4 && !err; i++)
		err = ig_perfetto_slice(w, &s[i]);
	return err;
}

static int round_(struct ig_perfetto *w, unsigned long r, unsigned long files)
{
	uint64_t t = 1000000000ull + r * 20000;
	struct ig_tl_annot sub_a[] = { { .name = "stream", .type = IG_TL_UINT, .u = 7 } };
	struct ig_tl_slice busy = { .kind = IG_TL_BUSY, .ts = t, .dur = 10000, .name = "busy" };
	struct ig_tl_slice call = { .kind = IG_TL_CALL, .tid = MAIN, .ts = t - 300, .dur = 200,
				    .name = "cuLaunchKernel" };
	struct ig_tl_slice sub = { .kind = IG_TL_SUBMIT, .tid = MAIN, .ts = t - 150,
				   .name = "submit", .annots = sub_a, .n_annots = 1 };
	struct ig_tl_slice unres = { .kind = IG_TL_UNRESOLVED, .ts = t + 10000, .dur = 4000,
				     .name = "unresolved: host-bound" };
	int err;

	err = ig_perfetto_slice(w, &call);
	if (!err)
		err = ig_perfetto_slice(w, &sub);
	if (!err)
		err = ig_perfetto_slice(w, &busy);
	if (err)
		return err;
	return r % 5 == 4 ? ig_perfetto_slice(w, &unres) : walk(w, t + 10000, r, files);
}

static int declare(struct ig_perfetto *w)
{
	struct ig_tl_device d = { .id = 0, .name = NULL };
	struct ig_tl_thread t[] = {
		{ MAIN, MAIN, "python3", "python3" },
		{ MAIN, LOADER, "loader", "python3" },
		{ MAIN, IO, "io-worker", "python3" },
	};
	int err = ig_perfetto_device(w, &d);
	unsigned int i;

	for (i = 0; i < 3 && !err; i++)
		err = ig_perfetto_thread(w, &t[i]);
	return err;
}

int main(int argc, char **argv)
{
	unsigned long rounds, files, r;
	struct ig_perfetto_stats st;
	struct ig_perfetto *w = NULL;
	int err, cerr;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: pf_synth OUT ROUNDS [DISTINCT_FILES]\n");
		return 2;
	}
	rounds = strtoul(argv[2], NULL, 10);
	files = argc > 3 ? strtoul(argv[3], NULL, 10) : 16;
	err = ig_perfetto_open(&w, argv[1]);
	if (err && !w) {
		fprintf(stderr, "pf_synth: %s: %s\n", argv[1], ig_outfile_strerror(err));
		return 1;
	}
	if (!err)
		err = declare(w);
	for (r = 0; r < rounds && !err; r++)
		err = round_(w, r, files ? files : 1);
	ig_perfetto_stats(w, &st);
	cerr = ig_perfetto_close(w);
	if (err || cerr) {
		fprintf(stderr, "pf_synth: %s: %s\n", argv[1], strerror(-(err ? err : cerr)));
		return 1;
	}
	printf("slices=%" PRIu64 " instants=%" PRIu64 " packets=%" PRIu64 " bytes=%" PRIu64
	       " interned=%" PRIu64 " resets=%" PRIu64 " bytes_per_slice=%.1f\n",
	       st.slices, st.instants, st.packets, st.bytes, st.interned, st.resets,
	       st.slices ? (double)st.bytes / (double)(st.slices + st.instants) : 0.0);
	return 0;
}
