/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Records shared by the BPF programs and the aggregator.
 *
 * Every record starts with struct ig_hdr.  The kernel emits the IG_REC_*
 * types below IG_REC_USER_BASE through the ring buffer; the aggregator adds
 * its own annotation records (process table, interpreter symbols, counters)
 * to the same stream, so a recording is just this stream written to a file.
 *
 * No includes: the BPF side gets __u32/__u64 from vmlinux.h, user space from
 * <linux/types.h>.  Layout is pinned by _Static_assert in user/stream/records.c.
 */
#ifndef IG_RECORD_ABI_H
#define IG_RECORD_ABI_H

#define IG_COMM_LEN	16
#define IG_NAME_LEN	64

/* The types, their names and sizes are listed once, in bpf/records.def. */
enum ig_rec_type {
#define IG_REC(type, value, name, min) IG_REC_##type = value,
#include "records.def"
#undef IG_REC
	IG_REC_USER_BASE = 0x100,
};

struct ig_hdr {
	__u16 type;
	__u16 size;		/* whole record, header included */
	__u32 cpu;		/* IG_HDR_CPU(), plus IG_HDR_LOST_BEFORE */
	__u32 tid;
	__u32 tgid;
	__u64 ts;		/* CLOCK_MONOTONIC ns (bpf_ktime_get_ns) */
};

/* The CPU that emitted a record, and a flag set on the first record a CPU
 * emits after it failed to reserve ring-buffer space: evidence on that CPU
 * between its previous record and this one is incomplete. */
#define IG_HDR_CPU(c)		((c) & 0xffffu)
#define IG_HDR_LOST_BEFORE	(1u << 31)

/* ---- IG_REC_PROC ---- */
enum ig_proc_kind {
	IG_PROC_FORK = 1,	/* new process (tid == tgid) */
	IG_PROC_THREAD = 2,	/* new thread in a tracked process */
	IG_PROC_EXEC = 3,
	IG_PROC_EXIT = 4,	/* thread exit */
	IG_PROC_GROUP_EXIT = 5,	/* last thread of a process exited */
};

struct ig_proc {
	struct ig_hdr h;	/* tid/tgid: the task the record is about */
	__u32 kind;
	__u32 ppid;		/* parent tgid (fork), exit code (exit) */
	char comm[IG_COMM_LEN];
	char name[IG_NAME_LEN];	/* exec: file name (tail) */
};

/* ---- IG_REC_OFFCPU ---- */

/* Why a tracked thread was off CPU, decided in the kernel at switch-out:
 * the reasons, their names and how attribution treats them are listed
 * once, in bpf/offcpu_reasons.def. */
enum ig_reason {
#define IG_REASON(reason, value, name, kind) IG_R_##reason = value,
#include "offcpu_reasons.def"
#undef IG_REASON
	IG_R__MAX,
};

/* flags of struct ig_offcpu */
#define IG_F_IOWAIT		(1u << 0)	/* task->in_iowait was set */
#define IG_F_UNINTERRUPTIBLE	(1u << 1)	/* TASK_UNINTERRUPTIBLE sleep */
#define IG_F_WAKER_IRQ		(1u << 2)	/* woken in interrupt context, or by
						 * the idle task: no waker named */
#define IG_F_FUTEX_PLAIN	(1u << 3)	/* FUTEX_WAIT / LOCK_PI: a mutex */
#define IG_F_FUTEX_BITSET	(1u << 4)	/* WAIT_BITSET / waitv: cond/sem */
#define IG_F_IN_CUDA_SYNC	(1u << 5)	/* inside a probed CUDA sync call */
#define IG_F_NET_INET6		(1u << 6)	/* detail holds an IPv6 peer */
#define IG_F_DETAIL_NAME	(1u << 7)	/* detail holds a file name */
#define IG_F_PYLOCK		(1u << 8)	/* a free-threaded CPython's wait
						 * for a per-object lock (a critical
						 * section): arg is its PyMutex; on
						 * a preemption, the CPU it yielded
						 * while spinning for it */
#define IG_F_WAKER_KERNEL	(1u << 9)	/* woken by a kernel thread (kworker,
						 * ksoftirqd): a completion */
#define IG_F_FILE_KEY		(1u << 10)	/* arg: the file's IG_REC_FILE key */
#define IG_F_AT_ATTACH		(1u << 11)	/* off CPU since before tracing
						 * began: its reason is what /proc
						 * said at the start (IG_REC_TSTATE,
						 * docs/design.md §5.14) */
#define IG_F_IN_UNSEEN		(1u << 12)	/* the kernel reported no switch-in:
						 * sent at the next switch-out or driver
						 * call, back on CPU at t_in, taken from
						 * the CPU time the kernel accounted
						 * since it was picked (docs/design.md
						 * §5.15) */

struct ig_net_peer {
	__u16 family;		/* AF_INET / AF_INET6 */
	__u16 dport;		/* host order */
	__u16 sport;
	__u16 proto;		/* IPPROTO_TCP / IPPROTO_UDP */
	__u8 daddr[16];
};

struct ig_offcpu {
	struct ig_hdr h;	/* ts == t_on: switched back in */
	__u64 t_off;		/* switched out */
	__u64 t_wake;		/* woken (0: never slept, i.e. preempted) */
	__u64 arg;		/* futex / fault address, fd */
	__u32 waker_tid;
	__u32 waker_tgid;
	__u32 prev_tid;		/* ran on this CPU just before switch-in */
	__u32 prev_tgid;
	__s32 syscall;		/* syscall nr at switch-out, -1: none */
	__u16 reason;		/* enum ig_reason */
	__u16 flags;		/* IG_F_* */
	__u32 off_cpu;		/* CPU it left */
	__u32 pre_ns;		/* on CPU just before t_off but already part of
				 * this wait (page fault: since the fault) */
	char waker_comm[IG_COMM_LEN];
	char prev_comm[IG_COMM_LEN];
	union {
		char name[IG_NAME_LEN];	/* file name (storage, fault) */
		struct ig_net_peer peer;	/* IG_R_SOCKET */
	} detail;
	__u64 t_in;		/* IG_F_IN_UNSEEN: back on CPU (ts: when sent);
				 * absent from records written before it */
};

/* When the thread was back on CPU: the record's time, or where the kernel
 * reported no switch-in, the one taken from the thread's CPU time.  t_in is
 * read only under its flag and where the record holds it: one written
 * before it (176 bytes) has no such field, and a file may say anything. */
static inline __u64 ig_offcpu_on(const struct ig_offcpu *r)
{
	if (!(r->flags & IG_F_IN_UNSEEN) ||
	    r->h.size < __builtin_offsetof(struct ig_offcpu, t_in) + sizeof(r->t_in))
		return r->h.ts;
	return r->t_in ? r->t_in : r->h.ts;
}

/* A device number as the kernel holds it inside (MKDEV, MINORBITS 20),
 * not the user-space dev_t of stat(2). */
#define IG_MINORBITS		20
#define IG_MKDEV(ma, mi)	(((ma) << IG_MINORBITS) | (mi))
#define IG_DEV_MAJOR(d)		((unsigned int)((d) >> IG_MINORBITS))
#define IG_DEV_MINOR(d)		((unsigned int)((d) & ((1U << IG_MINORBITS) - 1)))

/* ---- IG_REC_BIO ---- */
struct ig_bio {
	struct ig_hdr h;	/* ts: completion; tid/tgid: issuer */
	__u64 t_issue;
	__u64 sector;
	__u32 dev;		/* IG_MKDEV(major, minor) */
	__u32 bytes;
	__s32 error;
	__u32 op;		/* REQ_OP_* (read 0, write 1, ...) */
};

/* ---- IG_REC_CUDA ---- */

/* What a CUDA record proves (docs/design.md §4.1, §4.3). */
enum ig_cuda_kind {
	IG_CU_SUBMIT = 1,	/* first submission on a stream since the
				 * process's last drain evidence */
	IG_CU_SYNC_BEGIN,	/* a blocking sync (or sync copy) started */
	IG_CU_SYNC_END,		/* it returned: drained per api semantics */
	IG_CU_QUERY_BUSY,	/* query returned CUDA_ERROR_NOT_READY */
	IG_CU_QUERY_DONE,	/* query returned CUDA_SUCCESS */
	IG_CU_API,		/* a non-submitting API call, [t_begin, ts] */
	IG_CU_STREAM_NEW,	/* cuStreamCreate: arg = flags */
	IG_CU_CTX,		/* context made current/created: arg = device */
	IG_CU__MAX,
};

/* Stream keys are normalised in the kernel. */
#define IG_STREAM_LEGACY	0x1ULL	/* NULL / CU_STREAM_LEGACY */
#define IG_STREAM_PTD_BIT	(1ULL << 63) /* | tid: per-thread default */

/*
 * The one stream drain rule, for the kernel side and the engine
 * (docs/design.md §4.2): does work or a wait on stream @w also wait for the
 * work queued earlier on stream @s of the same process?  A stream waits for
 * itself; the legacy stream waits for every blocking stream, and a
 * blocking stream for the legacy stream.  The per-thread default streams
 * are blocking but never wait for each other, nor for created streams.
 * @w_blocking, @s_blocking: created without CU_STREAM_NON_BLOCKING (the
 * per-thread default streams are blocking whatever these say).
 */
static inline int ig_stream_syncs_with(__u64 w, int w_blocking, __u64 s,
				       int s_blocking)
{
	if (w == s)
		return 1;
	if (w == IG_STREAM_LEGACY)
		return s_blocking || (s & IG_STREAM_PTD_BIT);
	return s == IG_STREAM_LEGACY &&
	       (w_blocking || (w & IG_STREAM_PTD_BIT));
}

/* flags of struct ig_cuda */
#define IG_CF_BLOCKED		(1u << 0)	/* the syncing thread slept */
#define IG_CF_EVENT_ALL		(1u << 1)	/* event proves its stream drained */
#define IG_CF_EVENT_PARTIAL	(1u << 2)	/* event older than last submit */
#define IG_CF_PTSZ		(1u << 3)	/* _ptsz/_ptds entry point */
#define IG_CF_PARTIAL		(1u << 4)	/* work was submitted while the sync
						 * ran: it proves nothing drained */

struct ig_cuda {
	struct ig_hdr h;	/* ts: return (end kinds) or entry */
	__u64 stream;		/* normalised stream key (0: whole ctx) */
	__u64 handle;		/* event / ctx handle where relevant */
	__u64 t_begin;		/* entry time of the call (END, API) */
	__u64 t_wake;		/* last wakeup inside the sync, 0 if none */
	__u64 last_submit;	/* last submission on the stream before ts */
	__u64 arg;		/* bytes (copies), flags, device */
	__u32 kind;		/* enum ig_cuda_kind */
	__u32 api;		/* enum ig_api */
	__s32 ret;		/* CUresult for END/QUERY/API kinds */
	__u32 nsub;		/* submissions on the stream since the
				 * previous record about that stream */
	__u32 flags;		/* IG_CF_* */
	__u32 pad;
};

/* ---- IG_REC_LAUNCHES ---- */
/*
 * Per-launch evidence for the duration model (docs/design.md §4.10): the
 * kernel keeps each submission's time and signature in its stream's map
 * entry, IG_LBUF at most, and sends them together with the stream's next
 * sync or query return, or when the buffer is full.  One record per
 * IG_LBUF launches, never one per launch.
 */
#define IG_LBUF			16
#define IG_LB_NOTKERNEL		0xffffffffu	/* grid: a copy or memset;
						 * func holds its enum ig_api */

struct ig_launch {
	__u64 ts;		/* the submission's entry */
	__u64 func;		/* CUfunction, CUgraphExec, or the api */
	__u32 grid;		/* gridDimX * gridDimY * gridDimZ; 0: graph */
	__u32 block;		/* blockDimX * blockDimY */
};

struct ig_launches {
	struct ig_hdr h;	/* ts: when the buffer was sent */
	__u64 stream;		/* normalised stream key */
	__u32 n;		/* entries used, <= IG_LBUF */
	__u32 pad;
	struct ig_launch e[IG_LBUF];
};

/* ---- IG_REC_NCCL ---- */
/*
 * A call into libnccl (docs/design.md §4.9).  Communicator calls are sent
 * at their return, the rest at their entry.  A communicator's id is the same
 * in every rank: a hash of its ncclUniqueId, or for a split one of its
 * parent's id, the color and the parent's count of splits.  seq numbers a
 * communicator's collective and point-to-point calls in the order the rank
 * made them, from 1 at its creation (0: created before the probes were
 * attached, the calls cannot be matched across ranks).
 */
enum ig_nccl_kind {
	IG_NC_COMM = 1,		/* a communicator was created: comm, id,
				 * rank, nranks; arg: parent handle (split) */
	IG_NC_COMM_FREE,	/* ncclCommDestroy / ncclCommAbort */
	IG_NC_COLL,		/* a collective or point-to-point call */
	IG_NC_GROUP_END,	/* the outermost ncclGroupEnd: the grouped
				 * calls launch now */
	IG_NC_COMM_INFO,	/* ncclCommCount / ncclCommUserRank said
				 * nranks or rank */
	IG_NC__MAX,
};

#define IG_NCF_GROUPED	(1u << 0)	/* inside ncclGroupStart/End */
#define IG_NCF_NO_ID	(1u << 1)	/* communicator not seen created */

struct ig_nccl {
	struct ig_hdr h;	/* ts: entry (COLL, GROUP_END) or return */
	__u64 comm;		/* ncclComm_t handle */
	__u64 id;		/* communicator id (0: unknown) */
	__u64 stream;		/* normalised stream key (COLL) */
	__u64 count;		/* elements (COLL) */
	__u64 seq;		/* per communicator, from 1 (COLL) */
	__u64 t_begin;		/* entry (COMM) */
	__u64 arg;		/* parent handle (split), color */
	__s32 rank;		/* in the communicator, -1: unknown */
	__s32 nranks;		/* 0: unknown */
	__s32 peer;		/* root or peer, -1: none */
	__u32 op;		/* ncclRedOp_t */
	__u32 dtype;		/* ncclDataType_t */
	__u32 api;		/* enum ig_nccl_api */
	__s32 ret;		/* ncclResult_t (COMM) */
	__u32 flags;		/* IG_NCF_* */
	__u32 group;		/* group depth at the call */
	__u32 kind;		/* enum ig_nccl_kind */
};

/* NCCL entry points idlegap probes, generated from bpf/nccl_api.def; the
 * list is append only (recordings store the id). */
enum ig_nccl_api {
	IG_NA_NONE = 0,
#define IG_NCCL(name, cls) IG_NA_##name,
#include "nccl_api.def"
#undef IG_NCCL
	IG_NA__MAX,
};

/* How the BPF side reads an NCCL call's arguments (cookie bits 16..23,
 * with IG_NCCL_COOKIE_BIT set). */
enum ig_nccl_class {
	IG_NCC_INIT_RANK = 1,	/* (comm *, nranks, ncclUniqueId, rank, ...) */
	IG_NCC_INIT_ALL,	/* (comm *, ndev, devlist) */
	IG_NCC_SPLIT,		/* (comm, color, key, newcomm *, config) */
	IG_NCC_FREE,		/* (comm) */
	IG_NCC_COUNT,		/* (comm, int *count) */
	IG_NCC_USER_RANK,	/* (comm, int *rank) */
	IG_NCC_COLL7,		/* (send, recv, count, dtype, op|root, comm, stream) */
	IG_NCC_COLL8,		/* (send, recv, count, dtype, op, root, comm, stream) */
	IG_NCC_COLL6,		/* (send, recv, count, dtype, comm, stream) */
	IG_NCC_P2P,		/* (buf, count, dtype, peer|root, comm, stream) */
	IG_NCC_GROUP_START,
	IG_NCC_GROUP_END,
};
#define IG_NCC_TIMED(c)		((c) >= IG_NCC_INIT_RANK && (c) <= IG_NCC_USER_RANK && \
				 (c) != IG_NCC_FREE)
#define IG_NCCL_COOKIE(api, cls) \
	((unsigned long long)(api) | ((unsigned long long)(cls) << 16))

/* ---- IG_REC_LIBOPEN ---- */
/* The dynamic loader of a tracked process changed its link map (dlopen,
 * dlclose, start-up): user space looks for a new libcuda in its maps. */
/* A tracked process loaded a library (the loader's hook): which one is
 * read from its maps.  Format 2 carried 256 unused path bytes after the
 * header; readers take the header only. */
struct ig_libopen {
	struct ig_hdr h;
};

/* ---- IG_REC_GPULIB ---- */
/* A process not tracked yet asked to map a file named libcuda.so*
 * executable (mmap entry, the agent's hook only): discovery looks at it
 * at once instead of at its next sweep of /proc, and the agent counts
 * the ones that were gone before it could follow them. */
struct ig_gpulib {
	struct ig_hdr h;
	char comm[16];
};

/* ---- IG_REC_FILE ---- */
/* The first wait on a file (per inode, while the kernel remembers it):
 * its path from the process's own root (its mount namespace, its chroot),
 * one component per slot, the file's own name first. */
#define IG_PATH_DEPTH	16
#define IG_FILEF_TRUNC	(1u << 0)	/* deeper than IG_PATH_DEPTH */
#define IG_FILE_KEY(dev, ino)	(((__u64)(dev) << 32) ^ (__u64)(ino))

struct ig_file {
	struct ig_hdr h;
	__u64 key;		/* IG_FILE_KEY(s_dev, i_ino): ig_offcpu.arg */
	__u32 s_dev;		/* the file system's device, as stat() says */
	__u16 ncomp;		/* slots filled */
	__u16 nmount;		/* of them, below the file's mount point */
	__u32 flags;		/* IG_FILEF_* */
	__u32 pad;
	char fstype[16];	/* "ext4", "nfs4", "overlay", "fuse.sshfs" ... */
	char comp[IG_PATH_DEPTH][IG_NAME_LEN];
};

/* ---- IG_REC_SAMPLE ---- */
#define IG_SF_KERNEL	(1u << 0)	/* in the kernel: ip is the user
					 * address it entered from */
#define IG_SF_UPROBE	(1u << 1)	/* in the uprobe out-of-line page:
					 * running a probed (libcuda)
					 * instruction */
#define IG_SF_FAULT	(1u << 2)	/* in the kernel, handling a page
					 * fault of ip */
struct ig_sample {
	struct ig_hdr h;
	__u64 ip;		/* user instruction pointer */
	__u32 flags;		/* IG_SF_* */
	__u32 pad;
};

/* ---- IG_REC_PYSTACK ---- */
/*
 * Python frames of a tracked thread, innermost first, read at its
 * switch-out and at its CPU samples.  A thread's stack is sent only when
 * it differs from the last one sent for that thread, so a reader knows a
 * thread's stack at any capture: the last record before it.  The first
 * time a process shows a stack (by id, a hash of its frames) the frames
 * come with it; later records of the same stack carry only the id
 * (IG_PYS_REF, nframes 0).  Variable size: 40 + 16 * nframes.
 */
#define IG_PY_DEPTH	24
#define IG_PYS_REF	(1u << 0)	/* frames: those of the earlier
					 * record with this id */
#define IG_PYS_TRUNC	(1u << 1)	/* deeper than IG_PY_DEPTH */
#define IG_PYS_NONE	(1u << 2)	/* no Python frame running */

struct ig_pyframe {
	__u64 code;		/* PyCodeObject address */
	__u32 lasti;		/* 3.9: byte offset, 3.10: instruction
				 * index, 3.11+: bytes from the code
				 * object to the instruction */
	__u32 pad;
};

struct ig_pystack {
	struct ig_hdr h;
	__u64 id;		/* hash of the frames, per process */
	__u16 nframes;
	__u16 flags;		/* IG_PYS_* */
	__u32 pad;
	struct ig_pyframe f[IG_PY_DEPTH];
};
#define IG_PYSTACK_SIZE(n)	(40 + 16 * (n))

/* Where to find a thread's frames in a process: filled by user space when
 * it finds the interpreter (user/probes/pyframes.c), read by bpf/pystack.bpf.h.
 * Offsets in bytes; IG_PYO_NONE: the version has no such field. */
#define IG_PYO_NONE	0xffffffffu
/* Bytes of a frame the kernel walker copies: every fr_ offset (and 8 bytes
 * from it) falls inside. */
#define IG_PY_FRAME_READ	112
struct ig_py_offsets {
	__u64 runtime;		/* _PyRuntime address */
	__u32 version;		/* 0x030b: 3.11 */
	__u32 rt_interp_head;	/* _PyRuntime.interpreters.head */
	__u32 is_threads_head;	/* PyInterpreterState: first thread */
	__u32 ts_next;		/* PyThreadState.next */
	__u32 ts_match;		/* native_thread_id, or thread_id */
	__u32 match_tid;	/* 1: ts_match holds the kernel tid,
				 * 0: pthread_self() (the fs base) */
	__u32 ts_frame;		/* frame, cframe, current_frame */
	__u32 cf_current;	/* _PyCFrame.current_frame, or NONE */
	__u32 fr_back;		/* f_back / previous */
	__u32 fr_code;		/* f_code / f_executable (3.14: a _PyStackRef,
				 * its low bits a tag) */
	__u32 fr_instr;		/* f_lasti (int) or an instruction pointer */
	__u32 instr_ptr;	/* 1: fr_instr is a pointer */
	__u32 fr_owner;		/* owner (char), or NONE */
	__u32 owner_cstack;	/* owner values from this one on are not
				 * Python frames (C shims), or NONE */
	/* Free-threaded 3.14+: a thread runs its own copy of the bytecode
	 * (thread-local bytecode), copy tlbc_index of the code object's
	 * co_tlbc array (Py_ssize_t size, then char *entries[]; entry 0 is
	 * the code object's own co_code_adaptive).  0: no such copies. */
	__u32 fr_tlbc;		/* frame: int32 tlbc_index, or 0 */
	__u32 co_tlbc;		/* code object: _PyCodeArray *co_tlbc */
	__u32 co_adaptive;	/* code object: co_code_adaptive */
	__u32 pad;
};

/* ---- IG_REC_USTACK ---- */
/* A tracked thread's user stack (frame-pointer walk), at switch-out and at
 * CPU samples.  The first time a process shows a stack, the record carries
 * its addresses; later records of the same stack carry only its id; and a
 * thread whose stack is unchanged since its last record sends none: its
 * stack at a switch-out or sample is its latest record at or before it. */
#define IG_USTACK_DEPTH	32
#define IG_USF_SAMPLE	(1u << 0)	/* at a CPU sample, else at switch-out */
#define IG_USF_REF	(1u << 1)	/* no ips: those of the first record
					 * with this id in this process */
#define IG_USF_FULL	(1u << 2)	/* the walk filled every slot: the stack
					 * may go deeper */
#define IG_USF_END	(1u << 4)	/* the walk ended at a null frame
					 * pointer: the stack is whole */
#define IG_USF_LEAF	(1u << 3)	/* the innermost function kept no frame:
					 * its caller was found on the stack */

struct ig_ustack {
	struct ig_hdr h;	/* ts: switch-out (== ig_offcpu.t_off) or sample */
	__u64 id;		/* hash of the addresses, never 0 */
	__u16 nips;		/* addresses sent (0 with IG_USF_REF) */
	__u16 flags;		/* IG_USF_* */
	__u32 depth;		/* addresses in the stack */
	__u64 ips[IG_USTACK_DEPTH];	/* innermost first; only nips sent:
					 * h.size == offsetof(ips) + 8 * nips */
};

/*
 * Driver entry points idlegap probes, generated from bpf/cuda_api.def.  The
 * id travels as the uprobe's attach cookie (low 16 bits) and as
 * ig_cuda.api; recordings store it, so the list is append only.
 */
enum ig_api {
	IG_API_NONE = 0,
#define IG_API(name, cls, devarg) IG_API_##name,
#include "cuda_api.def"
#undef IG_API
	IG_API__MAX,
};

/* How the BPF side handles an entry point: cookie bits 16..23. */
enum ig_api_class {
	IG_AC_LAUNCH_STACK9 = 1,	/* stream = 9th arg, on the stack */
	IG_AC_LAUNCH_EX,		/* stream in CUlaunchConfig (arg 1) */
	IG_AC_STREAM_ARG2,		/* stream = 2nd arg */
	IG_AC_STREAM_ARG4,
	IG_AC_STREAM_ARG6,
	IG_AC_SYNC_COPY,		/* legacy/ptds stream, waits for it */
	IG_AC_SUBMIT_NOSTREAM,		/* legacy/ptds stream, no wait */
	IG_AC_STREAM_SYNC,		/* arg1 stream */
	IG_AC_CTX_SYNC,
	IG_AC_EVENT_SYNC,		/* arg1 event */
	IG_AC_STREAM_QUERY,		/* arg1 stream */
	IG_AC_EVENT_QUERY,		/* arg1 event */
	IG_AC_EVENT_RECORD,		/* arg1 event, arg2 stream */
	IG_AC_API,			/* timed, not submitting */
	IG_AC_STREAM_CREATE,		/* arg1 CUstream *, arg2 flags */
	IG_AC_CTX_DEVICE,		/* ctx create/retain: device arg */
};

/* Classes whose calls submit work to a stream, the synchronous copies
 * included: the launches counted in IG_STAT_LAUNCHES. */
#define IG_AC_SUBMITS(cls) \
	((cls) >= IG_AC_LAUNCH_STACK9 && (cls) <= IG_AC_SUBMIT_NOSTREAM)

/* uprobe attach cookie: api id, class, _ptsz/_ptds flag, and for
 * IG_AC_CTX_DEVICE the 1-based position of the device argument. */
#define IG_COOKIE(api, cls, ptsz, devarg) \
	((unsigned long long)(api) | ((unsigned long long)(cls) << 16) | \
	 ((unsigned long long)(ptsz) << 24) | ((unsigned long long)(devarg) << 25))
#define IG_COOKIE_API(c)	((unsigned int)((c) & 0xffff))
#define IG_COOKIE_CLASS(c)	((unsigned int)(((c) >> 16) & 0xff))
#define IG_COOKIE_PTSZ(c)	((unsigned int)(((c) >> 24) & 1))
#define IG_COOKIE_DEVARG(c)	((unsigned int)(((c) >> 25) & 7))

/* Kernel-side counters (per-CPU array, summed by user space). */
enum ig_stat {
	IG_STAT_EVENTS = 0,	/* records submitted */
	IG_STAT_DROPS,		/* bpf_ringbuf_reserve failed */
	IG_STAT_MAP_FULL,	/* a map update failed */
	IG_STAT_CUDA_HITS,	/* libcuda probe hits, all APIs (user space
				 * sums them from the per-API counts) */
	IG_STAT_LAUNCHES,	/* submissions, likewise */
	IG_STAT_SWITCHES,	/* tracked context switches seen */
	IG_STAT_LIBLOADS,	/* library loads of tracked processes */
	IG_STAT_SAMPLES,	/* on-CPU samples of tracked threads */
	IG_STAT_DROPS_CUDA,	/* drops among CUDA records */
	IG_STAT__MAX,
};

/* Map values user space creates when it tracks a process.
 * A tracked process: every thread of it, and every descendant, is traced. */
struct ig_proc_state {
	__u32 flags;		/* none yet: membership is what matters */
	__u32 pad;
};

/* Per tracked thread.  The off-CPU fields describe the interval in
 * progress: filled at switch-out and by the wakeup, emitted at switch-in. */
struct ig_thread_state {
	__u32 tgid;
	__u32 pad2;
	__u64 fault_addr;	/* last user page fault */
	__u64 fault_ts;		/* when it began */
	__u64 t_on;		/* last switched in */

	__u8 off;		/* switched out, record pending */
	__u8 pad0;
	__u16 reason;
	__u16 flags;
	__u16 pad1;
	__u32 off_cpu;
	__s32 sc_nr;		/* syscall it blocked in, -1: none */
	__u32 pre_ns;
	__u64 t_off;
	__u64 t_wake;
	__u64 arg;
	__u32 waker_tid;
	__u32 waker_tgid;
	char waker_comm[IG_COMM_LEN];
	union {
		char name[IG_NAME_LEN];
		struct ig_net_peer peer;
	} detail;

	/* CUDA call in progress (one level: driver entry points do not
	 * call each other through their exported symbols). */
	__u64 cu_begin;		/* 0: none */
	__u64 cu_obj;		/* stream key or event handle */
	__u64 cu_arg;		/* pointer argument kept for the return */
	__u64 cu_wake;		/* last wakeup while blocked inside */
	__u32 cu_cookie_api;
	__u16 cu_class;
	__u8 cu_blocked;
	__u8 cu_emit;		/* END record wanted */

	/* A free-threaded CPython's critical section waiting for its lock
	 * (pylock.bpf.h): the PyMutex, and the stack pointer at the slow
	 * path's entry.  0: none. */
	__u64 pylock;
	__u64 pylock_sp;

	/* When the thread was last seen running by its own probes or samples
	 * (a driver call's entry or return, an on-CPU sample, a page fault):
	 * it was back on CPU by then, which bounds a switch-in the kernel did
	 * not report (docs/design.md §5.15). */
	__u64 t_run;
};

#endif /* IG_RECORD_ABI_H */
