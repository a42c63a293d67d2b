/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The dynamic loader's uprobe: _dl_debug_state() runs around every
 * library load, so a late dlopen of libcuda is seen (IG_REC_LIBOPEN).
 */
#ifndef IG_LDSO_BPF_H
#define IG_LDSO_BPF_H

#include "maps.bpf.h"

/* A tracked process's dynamic loader changed its link map: ld.so calls
 * _dl_debug_state() (the debuggers' rendezvous) around every load. */
static __always_inline int handle_ld_debug(void)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	struct ig_libopen *r;

	if (!proc_tracked(tgid))
		return 0;
	stat_add(IG_STAT_LIBLOADS, 1);
	r = rec_reserve(sizeof(*r), IG_REC_LIBOPEN, (__u32)pid_tgid, tgid,
			bpf_ktime_get_ns());
	if (!r)
		return 0;
	rec_submit(r);
	return 0;
}

#endif
