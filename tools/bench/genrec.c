// SPDX-License-Identifier: GPL-2.0
/*
 * genrec FILE N: writes a recording of about N records shaped like a
 * training job's (a feeder, two loader workers, steps with submissions,
 * syncs, pipe hand-offs, storage waits, preemptions), for measuring the
 * aggregator's replay throughput.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stream/recording.h"

static struct ig_rec_writer *w;
static unsigned long long n;

static void put(struct ig_hdr *h)
{
	if (ig_rec_writer_put(w, h)) {
		perror("genrec: write");
		exit(1);
	}
	n++;
}

static void offcpu(__u32 tid, __u64 t_off, __u64 t_wake, __u64 t_on,
		   __u16 reason, __u32 waker, __u64 arg)
{
	struct ig_offcpu o = {
		.h = { IG_REC_OFFCPU, sizeof(o), 0, tid, tid < 200 ? 100 : tid, t_on },
		.t_off = t_off, .t_wake = t_wake, .arg = arg, .waker_tid = waker,
		.waker_tgid = waker < 200 ? 100 : waker, .prev_tid = 0,
		.syscall = reason == IG_R_PREEMPT ? -1 : 0, .reason = reason,
	};

	if (reason == IG_R_STORAGE) {
		o.flags = IG_F_IOWAIT | IG_F_UNINTERRUPTIBLE | IG_F_DETAIL_NAME;
		strcpy(o.detail.name, "shard-0001.bin");
	}
	memcpy(o.waker_comm, "worker", 7);
	memcpy(o.prev_comm, "swapper/0", 10);
	put(&o.h);
}

static void cuda(__u32 kind, __u32 api, __u64 ts, __u64 begin, __u64 wake,
		 __u64 last)
{
	struct ig_cuda c = {
		.h = { IG_REC_CUDA, sizeof(c), 0, 100, 100, ts },
		.stream = IG_STREAM_LEGACY, .t_begin = begin, .t_wake = wake,
		.last_submit = last, .kind = kind, .api = api, .nsub = 8,
		.flags = wake ? IG_CF_BLOCKED : 0,
	};

	put(&c.h);
}

int main(int argc, char **argv)
{
	struct ig_meta m = { .h = { IG_REC_META, sizeof(m), 0, 0, 0, 1000 },
			     .version = IG_FORMAT_VERSION, .ncpus = 2 };
	struct ig_end e = { .h = { IG_REC_END, sizeof(e), 0, 0, 0, 0 } };
	struct ig_task t = { .h = { IG_REC_TASK, sizeof(t), 0, 100, 100, 1000 } };
	unsigned long long want;
	__u64 ts = 1000000;
	__u32 k;

	if (argc != 3 || !(want = strtoull(argv[2], NULL, 10))) {
		fprintf(stderr, "usage: genrec FILE N\n");
		return 2;
	}
	w = ig_rec_writer_open(argv[1]);
	if (!w) {
		perror(argv[1]);
		return 1;
	}
	put(&m.h);
	strcpy(t.comm, "python3");
	put(&t.h);
	for (k = 201; k <= 202; k++) {
		t.h.tid = t.h.tgid = k;
		t.ppid = 100;
		strcpy(t.comm, "pt_data_worker");
		put(&t.h);
	}
	while (n < want) {
		/* one 1 ms step: workers read and hand over, the feeder
		 * submits and syncs, everyone gets preempted a little */
		for (k = 201; k <= 202; k++) {
			offcpu(k, ts + 10000, ts + 90000, ts + 95000, IG_R_STORAGE, 0, 3);
			offcpu(k, ts + 150000, 0, ts + 160000, IG_R_PREEMPT, 0, 0);
		}
		offcpu(100, ts + 5000, ts + 200000, ts + 205000, IG_R_PIPE, 201, 5);
		cuda(IG_CU_SUBMIT, IG_API_cuLaunchKernel, ts + 210000, 0, 0, ts);
		offcpu(100, ts + 300000, 0, ts + 320000, IG_R_PREEMPT, 0, 0);
		cuda(IG_CU_SYNC_END, IG_API_cuStreamSynchronize, ts + 900000,
		     ts + 400000, ts + 880000, ts + 390000);
		offcpu(100, ts + 400000, ts + 880000, ts + 890000, IG_R_FUTEX, 150, 0x7000);
		ts += 1000000;
	}
	e.h.ts = ts;
	e.nrecords = n;
	put(&e.h);
	if (ig_rec_writer_close(w)) {
		perror("genrec: close");
		return 1;
	}
	printf("%llu\n", n);
	return 0;
}
