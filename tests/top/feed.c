// SPDX-License-Identifier: GPL-2.0
/*
 * Feeds `top`'s view with synthetic snapshots, for tests/top.t: a storage
 * job that idles most (rank 2 of a multi-GPU job, waiting for peers 20%),
 * an inference job that is busy most, and a process whose name holds a
 * terminal escape; their GPUs' last estimated blocks: an estimate, a
 * lower bound alone, a refusal; with -S, the job's steps (183.2 a
 * second, the last slow one step 196, storage, 10.9 ms), else none found.
 * records/s counts frames, so a paused screen is seen to stop.
 * Usage: top_feed [-i INTERVAL_MS] [-n FRAMES] [-P PIDFILE] [-r ROWS] [-S]
 * Exit 0 on q or after FRAMES, 1 on error.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "views/top_view.h"

static struct ig_top_row rows[64] = {
	{ 4242, "trainsim", 0, 0.35, 0.55, 0.10, {
		{ "storage", 0.45, "file /data/shard-00007.bin read 12 MiB" },
		{ "gil", 0.10, "holder loader (4250)" } }, 2, true, 2, 0.20,
	  { .shown = true, .have = true, .idle = 0.92, .low = 0.85, .high = 1.0,
	    .unres_s = 1.0, .age_s = 6 } },
	{ 777, "infer", 1, 0.90, 0.06, 0.04, {
		{ "lock", 0.06, "lock 0x7f00dead0000 holder worker (780) peer 10.0.0.2:5000" } }, 1,
	  false, -1, 0, { .shown = true, .bounded = true, .at_least = 0.40,
			  .unres_s = 0.4, .age_s = 7 } },
	{ 31337, "evil\033]0;pwned\a", 0, 0.50, 0.20, 0.30, {
		{ "network", 0.20, "peer 10.0.0.9:443" } }, 1, false, -1, 0,
	  { .shown = true, .refused = "too few syncs waited for the GPU to check the model" } },
};

static const struct ig_top_steps steps = {
	.found = true, .device = 0, .pid = 4242, .per_s = 183.2, .slow = true, .slow_index = 196,
	.slow_cause = "storage", .slow_ms = 10.9,
};

static int feed(struct ig_top *t, unsigned long frames, int interval, unsigned int n,
		bool with_steps)
{
	struct ig_top_snapshot s = { .window_s = 10, .rows = rows, .n_rows = n };
	struct timespec ts;
	unsigned long i;
	int r = 0;

	if (with_steps)
		s.steps = steps;
	for (i = 0; i < frames && r == 0; i++) {
		clock_gettime(CLOCK_REALTIME, &ts);
		s.now_ns = ts.tv_sec * 1000000000ull + ts.tv_nsec;
		s.records_per_s = 1000 + i;
		s.lost_records = i / 10;
		r = ig_top_draw(t, &s);
		if (!r)
			r = ig_top_wait(t, interval);
	}
	return r < 0 ? r : 0;
}

static void more_rows(unsigned int n)
{
	unsigned int i;

	for (i = 3; i < n; i++) {
		rows[i] = rows[1];
		rows[i].pid = 2000 + i;
		rows[i].comm = "filler";
		rows[i].idle = 0.01;
	}
	if (n > 3)	/* a process nothing placed on a GPU (design §4.2) */
		rows[3].device = -1, rows[3].est.shown = false;
}

int main(int argc, char **argv)
{
	unsigned long frames = 1000000;
	unsigned int n = 3;
	const char *pidfile = NULL;
	int interval = 200, c, err;
	bool with_steps = false;
	struct ig_top *t;
	FILE *f;

	while ((c = getopt(argc, argv, "i:n:P:r:S")) != -1) {
		switch (c) {
		case 'i': interval = atoi(optarg); break;
		case 'n': frames = strtoul(optarg, NULL, 10); break;
		case 'P': pidfile = optarg; break;
		case 'r': n = atoi(optarg) < 64 ? atoi(optarg) : 64; break;
		case 'S': with_steps = true; break;
		default: return 2;
		}
	}
	more_rows(n);
	if (pidfile && (f = fopen(pidfile, "w"))) {
		fprintf(f, "%d\n", getpid());
		fclose(f);
	}
	err = ig_top_open(&t, STDOUT_FILENO);
	if (err) {
		fprintf(stderr, "top_feed: %s\n", strerror(-err));
		return 1;
	}
	err = feed(t, frames, interval, n, with_steps);
	ig_top_close(t);
	if (err) {
		fprintf(stderr, "top_feed: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
