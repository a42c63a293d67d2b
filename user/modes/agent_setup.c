// SPDX-License-Identifier: GPL-2.0
/*
 * The set-up facts the agent keeps across its windows (docs/design.md
 * §7.10): which device a thread's context is on (IG_CU_CTX), how a stream
 * was created (IG_CU_STREAM_NEW), a communicator's id, rank and size
 * (IG_NC_COMM, IG_NC_COMM_INFO), kept in modes/facts.c.  The set-up
 * probes that send them stay attached between windows, but each window's engine starts empty: they
 * are kept from whenever they were seen, in a window or between two, and
 * announced to each window's engine at its start, as
 * ig_discovery_reannounce() announces the processes.
 *
 * And the processes the kernel tracks from their first libcuda mapping
 * (ig_tracer_gpulib_track) until the agent follows them: their records
 * before that, or all of them when one ends first, are no window's (such
 * a process is counted in gpu_processes.missed), but for its set-up
 * facts.
 */
#include <stdlib.h>
#include <string.h>
#include "modes/agent_int.h"
#include "util/util.h"

void ig_agent_setup_seen(struct agent *a, const struct ig_hdr *rec)
{
	ig_facts_seen(&a->facts, rec);
}

void ig_agent_setup_forget(struct agent *a, pid_t tgid)
{
	ig_facts_forget(&a->facts, tgid);
}

int ig_agent_setup_announce(struct agent *a, __u64 ts,
			    void (*emit)(const struct ig_hdr *rec, void *ctx))
{
	return ig_facts_announce(&a->facts, ts, emit, a);
}

bool ig_agent_pending(const struct agent *a, pid_t tgid)
{
	return a->npending && ig_htab_get(&a->pending, (__u64)tgid);
}

void ig_agent_pending_add(struct agent *a, pid_t tgid, __u64 mapped)
{
	void *since = a->followed.cap ? ig_htab_get(&a->followed, (__u64)tgid) : NULL;

	/* followed after it mapped the library: the kernel sends no mapping
	 * of a process it tracks, so this one was sent before and read late */
	if (since && (__u64)(uintptr_t)since > mapped)
		return;
	if (!a->pending.cap && ig_htab_init(&a->pending, 64))
		return;
	if (!ig_htab_get(&a->pending, (__u64)tgid) &&
	    !ig_htab_put(&a->pending, (__u64)tgid, (void *)1))
		a->npending++;
}

static void pending_done(struct agent *a, pid_t tgid)
{
	if (a->npending && ig_htab_del(&a->pending, (__u64)tgid))
		a->npending--;
}

/* At most this many followed processes remembered: past it, the oldest
 * knowledge goes (a mapping read late then makes its process pending until
 * the next window follows it again, as before). */
#define FOLLOWED_MAX	65536

void ig_agent_followed(struct agent *a, pid_t tgid, __u64 ts)
{
	pending_done(a, tgid);
	if (!a->followed.cap && ig_htab_init(&a->followed, 64))
		return;
	if (a->followed.n >= FOLLOWED_MAX && !ig_htab_get(&a->followed, (__u64)tgid))
		ig_htab_clear(&a->followed);
	ig_htab_put(&a->followed, (__u64)tgid, (void *)(uintptr_t)(ts + 1));
}

void ig_agent_gone(struct agent *a, pid_t tgid)
{
	pending_done(a, tgid);
	if (a->followed.cap)
		ig_htab_del(&a->followed, (__u64)tgid);
}

void ig_agent_setup_free(struct agent *a)
{
	if (a->pending.cap)
		ig_htab_free(&a->pending);
	if (a->followed.cap)
		ig_htab_free(&a->followed);
	ig_facts_free(&a->facts);
}
