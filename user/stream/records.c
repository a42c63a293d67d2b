// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include "stream/records.h"

/* The skeleton does not check record layouts: pin them here. */
_Static_assert(sizeof(struct ig_hdr) == 24, "ig_hdr layout");
_Static_assert(offsetof(struct ig_hdr, ts) == 16, "ig_hdr.ts");
_Static_assert(sizeof(struct ig_proc) == 24 + 8 + IG_COMM_LEN + IG_NAME_LEN,
	       "ig_proc layout");
_Static_assert(offsetof(struct ig_offcpu, t_off) == 24, "ig_offcpu.t_off");
_Static_assert(offsetof(struct ig_offcpu, waker_comm) == 80, "ig_offcpu comm");
/* t_in came last: a recording made before it holds 176-byte records */
_Static_assert(offsetof(struct ig_offcpu, t_in) == 176, "ig_offcpu.t_in");
_Static_assert(sizeof(struct ig_offcpu) == 184, "ig_offcpu layout");
_Static_assert(sizeof(struct ig_net_peer) == 24, "ig_net_peer layout");
_Static_assert(sizeof(struct ig_bio) == 56, "ig_bio layout");
_Static_assert(sizeof(struct ig_cuda) == 24 + 6 * 8 + 6 * 4, "ig_cuda layout");
_Static_assert(sizeof(struct ig_nccl) == 24 + 7 * 8 + 10 * 4, "ig_nccl layout");
_Static_assert(sizeof(struct ig_libnccl) % 8 == 0, "ig_libnccl alignment");
_Static_assert(sizeof(struct ig_libopen) == 24, "ig_libopen layout");
_Static_assert(sizeof(struct ig_sample) == 40, "ig_sample layout");
_Static_assert(sizeof(struct ig_file) == 24 + 40 + IG_PATH_DEPTH * IG_NAME_LEN,
	       "ig_file layout");
_Static_assert(sizeof(struct ig_pystack) == IG_PYSTACK_SIZE(IG_PY_DEPTH),
	       "ig_pystack layout");
_Static_assert(IG_PYCODE_SIZE(0) == 304, "ig_pycode layout");
_Static_assert(offsetof(struct ig_ustack, ips) == 40, "ig_ustack layout");
_Static_assert(sizeof(struct ig_ustack) == 40 + IG_USTACK_DEPTH * 8,
	       "ig_ustack size");
_Static_assert(sizeof(struct ig_usym) == 40, "ig_usym layout");
_Static_assert(sizeof(struct ig_launch) == 24, "ig_launch layout");
_Static_assert(offsetof(struct ig_launches, e) == 40, "ig_launches layout");
_Static_assert(sizeof(struct ig_meta) % 8 == 0, "ig_meta alignment");
_Static_assert(sizeof(struct ig_stats) % 8 == 0, "ig_stats alignment");

size_t ig_rec_min_size(unsigned int type)
{
	switch (type) {
#define IG_REC(type, value, name, min) case IG_REC_##type: return min;
#include "../../bpf/records.def"
#undef IG_REC
	}
	return 0;
}

const char *ig_rec_type_name(unsigned int type)
{
	switch (type) {
#define IG_REC(type, value, name, min) case IG_REC_##type: return name;
#include "../../bpf/records.def"
#undef IG_REC
	}
	return "unknown";
}

static const char *const reasons[IG_R__MAX] = {
#define IG_REASON(reason, value, name, kind) [IG_R_##reason] = name,
#include "../../bpf/offcpu_reasons.def"
#undef IG_REASON
};

const char *ig_rec_reason_name(unsigned int reason)
{
	return reason < IG_R__MAX && reasons[reason] ? reasons[reason]
						     : "unknown";
}

enum ig_reason_kind ig_rec_reason_kind(unsigned int reason)
{
	switch (reason) {
#define IG_REASON(reason, value, name, kind) case IG_R_##reason: return IG_RK_##kind;
#include "../../bpf/offcpu_reasons.def"
#undef IG_REASON
	}
	return IG_RK_FOLLOW;
}

const char *ig_rec_proc_kind_name(unsigned int kind)
{
	switch (kind) {
	case IG_PROC_FORK: return "fork";
	case IG_PROC_THREAD: return "thread";
	case IG_PROC_EXEC: return "exec";
	case IG_PROC_EXIT: return "exit";
	case IG_PROC_GROUP_EXIT: return "group_exit";
	}
	return NULL;
}

const char *ig_rec_gpudev_src_name(unsigned int src)
{
	switch (src) {
	case IG_GD_NVML: return "nvml";
	case IG_GD_DEVNODE: return "device_node";
	case IG_GD_LOCAL_RANK: return "local_rank";
	case IG_GD_CVD: return "cuda_visible_devices";
	case IG_GD_NVML_MANY: return "nvml_several";
	}
	return "none";
}

static const char *const cuda_kinds[IG_CU__MAX] = {
	[IG_CU_SUBMIT] = "submit",
	[IG_CU_SYNC_BEGIN] = "sync_begin",
	[IG_CU_SYNC_END] = "sync_end",
	[IG_CU_QUERY_BUSY] = "query_busy",
	[IG_CU_QUERY_DONE] = "query_done",
	[IG_CU_API] = "api",
	[IG_CU_STREAM_NEW] = "stream_new",
	[IG_CU_CTX] = "ctx",
};

const char *ig_rec_cuda_kind_name(unsigned int kind)
{
	return kind < IG_CU__MAX ? cuda_kinds[kind] : NULL;
}

const char *ig_rec_stop_reason_name(unsigned int reason)
{
	switch (reason) {
	case IG_STOP_DURATION: return "duration";
	case IG_STOP_SIGNAL: return "signal";
	case IG_STOP_TARGET_EXIT: return "target_exit";
	case IG_STOP_ERROR: return "error";
	case IG_STOP_PIECE: return "next_piece";
	case IG_STOP_SO_FAR: return "running";
	}
	return NULL;
}

void ig_rec_fmt_peer(const struct ig_net_peer *p, char *buf, size_t n)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (p->family == AF_INET6) {
		inet_ntop(AF_INET6, p->daddr, a, sizeof(a));
		snprintf(buf, n, "[%s]:%u", a, p->dport);
	} else if (p->family == AF_INET) {
		inet_ntop(AF_INET, p->daddr, a, sizeof(a));
		snprintf(buf, n, "%s:%u", a, p->dport);
	} else {
		snprintf(buf, n, "?");
	}
}
