/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The record stream: kernel records (bpf/record_abi.h) plus the annotation
 * records the aggregator adds.  Live tracing and `idlegap report` both feed
 * this stream, in timestamp order, to the analysis engine.
 */
#ifndef IG_RECORDS_H
#define IG_RECORDS_H

#include <linux/types.h>
#include <stddef.h>
#include <stdbool.h>
#include "../../bpf/record_abi.h"

#define IG_FORMAT_VERSION 3	/* 2: records in checksummed blocks,
				 * 3: native and Python stacks (USTACK, USYM,
				 *    PYSTACK, PYCODE); LIBOPEN is the
				 *    header alone */
#define IG_FORMAT_VERSION_MIN 2	/* 3 only adds record types: 2 reads */

/* First record of every stream: what was traced, where, with which clock. */
struct ig_meta {
	struct ig_hdr h;	/* ts: tracing start (probes attached) */
	__u32 version;		/* IG_FORMAT_VERSION */
	__u32 ncpus;
	__u64 realtime_ns;	/* CLOCK_REALTIME at ts, for wall-clock output */
	char host[64];
	char kernel[64];
	char command[256];	/* the idlegap command line */
	/* a recording cut into pieces (-o with --output-max-mb, docs/design.md
	 * §6.4); all 0 in one that is not */
	__u32 piece;		/* 1, 2, ...: this file's place in the run */
	__u32 start_nrec;	/* records after this one that restate what the
				 * earlier pieces set up (processes, mappings,
				 * contexts), stamped at ts */
	__u64 run_id;		/* the same in every piece of one run */
};

/* A task known at attach time or named later (comm, exe). */
struct ig_task {
	struct ig_hdr h;	/* tid/tgid */
	__u32 ppid;
	__u32 is_thread;	/* tid != tgid */
	char comm[IG_COMM_LEN];
	char exe[128];
};

/* The interpreter's _PyRuntime object in a process: futex words inside it
 * belong to the GIL (docs/design.md §5.6).  start == end == 0: not Python. */
struct ig_pyrt {
	struct ig_hdr h;	/* tgid */
	__u64 start;
	__u64 end;
	char path[128];		/* python3.X or libpython3.X.so */
};

/* Which of the host's GPUs a process's device ordinals are (the agent
 * reads it from the process's CUDA_VISIBLE_DEVICES and
 * NVIDIA_VISIBLE_DEVICES): ordinal i is the engine's device dev[i], for
 * i < n; other ordinals are their own number (docs/design.md §7.10). */
#define IG_GPUMAP_MAX	16
struct ig_gpumap {
	struct ig_hdr h;	/* tgid */
	__u32 n;
	__s32 dev[IG_GPUMAP_MAX];
};

/* A Python code object a stack named, read from the process when first
 * seen (user/stacks/pycode.c), with its line table as the interpreter keeps it so
 * that replay finds the same lines.  Variable size: IG_PYCODE_SIZE(ltlen). */
#define IG_PYCODE_TABLE	2048
#define IG_PYC_UNREAD	(1u << 0)	/* not readable or not a code object */
#define IG_PYC_TRUNC	(1u << 1)	/* line table cut at IG_PYCODE_TABLE */
struct ig_pycode {
	struct ig_hdr h;	/* tgid */
	__u64 code;		/* PyCodeObject address */
	__u16 version;		/* 0x030b: 3.11, picks the table format */
	__u16 flags;		/* IG_PYC_* */
	__u32 firstline;
	__u32 adaptive;		/* 3.11+: bytes from code object to code */
	__u16 ltlen;		/* bytes of table[] */
	__u16 pad;
	char name[96];		/* qualified name where the version has one */
	char file[160];		/* tail kept when longer */
	__u8 table[IG_PYCODE_TABLE];
};
#define IG_PYCODE_SIZE(n)	(offsetof(struct ig_pycode, table) + (((n) + 7) & ~7u))

/* Kernel-side counters, sampled at the end of a run. */
struct ig_stats {
	struct ig_hdr h;
	__u64 stat[IG_STAT__MAX];
	__u64 api_hits[IG_API__MAX];
	__u64 user_lost;	/* records the aggregator could not keep */
};

/* A libcuda whose probes were attached for a process. */
struct ig_libcuda {
	struct ig_hdr h;	/* tgid (0: attached by path for all) */
	__u32 nsyms;		/* entry points found */
	__u32 nattached;	/* probes attached */
	char version[32];	/* driver version from the file name, if any */
	char path[192];
};

/* A process maps libnccl: how many of its entry points idlegap probes, or
 * (nattached 0, static 1) NCCL linked into another library, unprobed. */
struct ig_libnccl {
	struct ig_hdr h;
	__u32 nsyms;
	__u32 nattached;
	__u32 is_static;	/* the symbols are in a library not named
				 * libnccl: not probed */
	__u32 pad;
	char path[256];
};

/* The workload identity of a process that the node vouches for (design
 * §7.7, user/host/identity.h): its pod from the outermost kubepods cgroup,
 * the pod's name and namespace from the container runtime's record of its
 * container; never what the process says of itself.  Each field a
 * NUL-terminated string, "" when unknown.  Written when a process is
 * followed or exec's, only when one field is known; a forked child has
 * its parent's until its own. */
struct ig_ident {
	struct ig_hdr h;	/* tgid */
	char pod_uid[40];
	char container[72];	/* hex id */
	char runtime[16];	/* "containerd", "cri-o", "docker", "podman" */
	char pod[64];
	char namespace[64];
};

/* The host GPU a process is on, from evidence that outlives its set-up
 * (docs/design.md §4.2): NVML's list of the processes on each GPU, else
 * the one /dev/nvidiaN it holds open, else the one GPU its
 * CUDA_VISIBLE_DEVICES names (self-reported).  Written when a process is
 * followed and again while its GPU is not known; with the RANK of its
 * environment (self-reported). */
enum ig_gpudev_src {
	IG_GD_NONE = 0,		/* nothing found: dev -1 */
	IG_GD_NVML = 1,		/* NVML lists it on dev alone */
	IG_GD_DEVNODE = 2,	/* it holds /dev/nvidia<dev> open, no other */
	IG_GD_LOCAL_RANK = 3,	/* LOCAL_RANK: no longer written (a rank, not
				 * a GPU); an older recording's places nothing */
	IG_GD_CVD = 4,		/* CUDA_VISIBLE_DEVICES names one GPU */
	IG_GD_NVML_MANY = 5,	/* NVML lists it on several GPUs: dev -1 */
};
struct ig_gpudev {
	struct ig_hdr h;	/* tgid */
	__s32 dev;		/* the host's index of its GPU, -1: unknown */
	__u32 src;		/* enum ig_gpudev_src */
	__s32 rank;		/* RANK of its environment, -1: unset */
	__u32 ngpus;		/* GPUs NVML lists it on */
	char uuid[48];		/* NVML's UUID of dev, "" when not known */
};

/* A file mapping, for naming the file behind a fault address. */
struct ig_mapping {
	struct ig_hdr h;	/* tgid */
	__u64 start;
	__u64 end;
	__u64 offset;
	char path[128];
};

/* Dashboard utilization (NVML) sample. */
struct ig_nvml {
	struct ig_hdr h;
	__u32 device;
	__u32 util_pct;		/* nvmlUtilization_t.gpu */
	__u32 mem_pct;
	__u32 pad;
};

/* The device's own busy share over a window, from NVML's counters
 * (docs/design.md §4.10, "Device counters"): device-wide, every process
 * on the GPU counted.  @device: NVML's index. */
enum { IG_NVW_SAMPLES = 1, IG_NVW_GPM = 2 };	/* ig_nvwin.kind */
struct ig_nvwin {
	struct ig_hdr h;
	__u32 device;
	__u16 kind;		/* IG_NVW_* (host/nvml.h's IG_NVML_*) */
	__u16 nproc;		/* processes on the GPU (0: not known) */
	__u64 t0, t1;		/* CLOCK_MONOTONIC */
	__u32 busy_ppm;		/* busy share, parts per million */
	__u32 quant_ppm;	/* the counter's step */
};

/* A followed thread's state as /proc said it when tracing began
 * (docs/design.md §5.14): the off-CPU interval that the kernel saw end
 * without its start (IG_F_AT_ATTACH) takes its reason from here, as the
 * kernel would have decided it at the switch-out (bpf/offcpu.bpf.h).
 * h.ts: the start, as the TASK records'; a state read after the thread
 * ran again describes nothing the engine uses. */
struct ig_tstate {
	struct ig_hdr h;
	__u64 read_ns;		/* when /proc was read (CLOCK_MONOTONIC) */
	__u64 arg;		/* as ig_offcpu.arg: futex address, fd, file key */
	__u64 args[3];		/* the system call's first arguments */
	__s32 syscall;		/* -1: not in a system call (or not known) */
	__u16 reason;		/* enum ig_reason */
	__u16 oflags;		/* IG_F_* for the interval */
	char state;		/* /proc/TID/stat's letter: S, D, R ... */
	char pad[7];
	char wchan[32];		/* the kernel function it sleeps in */
	union {
		char name[IG_NAME_LEN];	/* file name (storage), fd target */
		struct ig_net_peer peer;
	} detail;
};

/* The name of a code address of a process, resolved while it lived, so
 * that a recording names its stacks' frames without the files.  One per
 * (process, address) that a stack record sent; @ip is the address looked
 * up: a stack's innermost address, or a return address minus one. */
#define IG_USYMF_NOSYM		(1u << 0)	/* no symbol: "[file+0xvaddr]" */
#define IG_USYMF_UNMAPPED	(1u << 1)	/* in no executable mapping: the
						 * frame-pointer walk went astray */
#define IG_USYMF_ROOT		(1u << 2)	/* where stacks begin (_start,
						 * start_thread, clone) */
#define IG_USYMF_LINE		(1u << 3)	/* DWARF gave file:line */
#define IG_USYMF_INLINED	(1u << 4)	/* several frames, one a line: the
						 * functions inlined there, innermost
						 * first, and the one they are in */

struct ig_usym {
	struct ig_hdr h;	/* tgid */
	__u64 ip;
	__u32 flags;		/* IG_USYMF_* */
	__u16 len;		/* name bytes, NUL included */
	__u16 pad;
	char name[];		/* "func (file.c:12)", "func+0x1a (libc.so.6)";
				 * h.size == sizeof + len rounded up to 8 */
};
#define IG_USYM_NAME_MAX	256

/* Last record of a complete stream. */
struct ig_end {
	struct ig_hdr h;	/* ts: tracing stop */
	__u64 nrecords;		/* records before this one */
	__u32 reason;		/* enum ig_stop_reason */
	__u32 pad;
};

enum ig_stop_reason {
	IG_STOP_DURATION = 1,
	IG_STOP_SIGNAL,
	IG_STOP_TARGET_EXIT,
	IG_STOP_ERROR,
	IG_STOP_PIECE,		/* a piece's end: the run goes on in the next */
	IG_STOP_SO_FAR,		/* a report of a run still going (SIGUSR1) */
};

/* Room for any one record, by its type's struct. */
union ig_rec {
	struct ig_hdr h;
	struct ig_offcpu o;
	struct ig_sample sm;
	struct ig_cuda c;
	struct ig_proc p;
	struct ig_task t;
	struct ig_bio b;
	struct ig_pyrt y;
	struct ig_mapping m;
	struct ig_nvml n;
	struct ig_nvwin nw;
	struct ig_end x;
	struct ig_meta mt;
	struct ig_stats st;
	struct ig_libcuda l;
	struct ig_file f;
	struct ig_gpumap g;
	struct ig_nccl nc;
	struct ig_ident id;
	struct ig_gpudev gd;
};

/* Smallest valid size of a record of the given type, 0 if unknown. */
size_t ig_rec_min_size(unsigned int type);
const char *ig_rec_type_name(unsigned int type);
/* "1.2.3.4:80", "[::1]:80", "?" for another family; fits IG_PEER_STRLEN. */
#define IG_PEER_STRLEN 64
void ig_rec_fmt_peer(const struct ig_net_peer *p, char *buf, size_t n);
/* Dense index of a record type for counting (0: other), < IG_REC_SLOTS. */
#define IG_REC_SLOTS 32
static inline unsigned int ig_rec_slot(unsigned int type)
{
	if (type < IG_REC_USER_BASE)
		return type < 16 ? type : 0;
	type -= IG_REC_USER_BASE;
	return type < 16 ? 16 + type : 0;
}
/* "storage", "futex", ...; "unknown" outside enum ig_reason. */
const char *ig_rec_reason_name(unsigned int reason);
/* How attribution treats a wait for a reason (bpf/offcpu_reasons.def says
 * what each means). */
enum ig_reason_kind {
	IG_RK_FOLLOW = 0,	/* also a reason outside enum ig_reason */
	IG_RK_RUNNABLE,
	IG_RK_STORAGE,
	IG_RK_FAULT,
	IG_RK_FUTEX,
	IG_RK_NETWORK,
	IG_RK_SLEEP,
	IG_RK_IOWAIT,
};
enum ig_reason_kind ig_rec_reason_kind(unsigned int reason);
/* "fork", "thread", "exec", "exit", "group_exit"; NULL if unknown. */
const char *ig_rec_proc_kind_name(unsigned int kind);
/* "nvml", "device_node", "local_rank", ...: "none" when unknown. */
const char *ig_rec_gpudev_src_name(unsigned int src);
/* CUDA record kind name ("submit"); NULL if unknown. */
const char *ig_rec_cuda_kind_name(unsigned int kind);
/* "duration", "signal", ...; NULL if unknown. */
const char *ig_rec_stop_reason_name(unsigned int reason);

#endif
