// SPDX-License-Identifier: GPL-2.0
/* What goes into the agent's window: its records (into the window's
 * reorder stage, or a held window's), the processes it follows, each
 * one's identity read once and the host's GPUs its ordinals are
 * (docs/design.md §7.10).  The window's own opening and closing
 * (agent_win.c) call this file, never the other way. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "host/gpudev.h"
#include "modes/agent_int.h"
#include "probes/discovery.h"
#include "stream/reorder.h"
#include "host/identity.h"
#include "probes/log.h"
#include "host/procfs.h"
#include "util/util.h"

void ig_agent_emit(struct agent *a, const struct ig_hdr *rec)
{
	/* a held window takes what follows its END, to end its gap */
	if (a->held.reorder && rec->ts >= a->held.at &&
	    ig_reorder_push(a->held.reorder, rec))
		a->oom = true;
	if (!a->in_window)
		return;
	a->nrecords++;
	if (ig_reorder_push(a->reorder, rec))
		a->oom = true;
}

struct track_ctx {
	struct agent *a;
	__u64 ts;
};

static bool seen(const struct agent *a, pid_t pid)
{
	return ig_agent_seen_in(a->ids, a->nids, pid);
}

void ig_agent_on_gpulib(struct agent *a, const struct ig_hdr *rec)
{
	const struct ig_gpulib *g = (const struct ig_gpulib *)rec;
	pid_t pid = (pid_t)rec->tgid;
	__u64 now = ig_mono_ns();
	size_t i;

	if (!ig_agent_in_scope(a, pid))
		return;
	if (a->track_at_mapping)	/* the kernel tracks it already */
		ig_agent_pending_add(a, pid, rec->ts);
	ig_discovery_add(a->cap.disc, pid, now);
	/* the mapping may still be under way: another look soon */
	ig_discovery_watch(a->cap.disc, pid, now);
	if (!a->in_window || rec->ts < a->opened_at)
		return;
	for (i = 0; i < a->ngpulib; i++)
		if (a->gpulib[i].pid == pid)
			return;
	if (a->ngpulib >= 65536 ||
	    !ig_grow((void **)&a->gpulib, &a->capgpulib, a->ngpulib, sizeof(*a->gpulib)))
		return;
	a->gpulib[a->ngpulib].pid = pid;
	ig_strcpy(a->gpulib[a->ngpulib].comm, sizeof(a->gpulib[0].comm), g->comm);
	a->ngpulib++;
}

int ig_agent_gpu_id(struct agent *a, const char *tok)
{
	size_t i;
	int idx;

	if (tok[0] == '#')
		return atoi(tok + 1);
	if (!strncmp(tok, "GPU-", 4) && (idx = ig_gpudev_index_of(tok)) >= 0)
		return idx;
	for (i = 0; i < a->ngpus; i++)
		if (!strcmp(a->gpus[i], tok))
			return IG_GPU_NAMED + (int)i;
	if (!a->gpus)
		a->gpus = calloc(IG_GPU_MAX_NAMED, sizeof(*a->gpus));
	if (!a->gpus || a->ngpus == IG_GPU_MAX_NAMED)
		return -1;
	snprintf(a->gpus[a->ngpus], sizeof(a->gpus[0]), "%s", tok);
	return IG_GPU_NAMED + (int)a->ngpus++;
}

/* Which of the host's GPUs the process's ordinals are, for the engine:
 * two containers that each call their GPU 0 are two devices. */
static void emit_gpumap(struct agent *a, pid_t pid, const struct ig_identity *id,
			__u64 ts)
{
	struct ig_gpumap g = {
		.h = { .type = IG_REC_GPUMAP, .size = sizeof(g), .tid = pid,
		       .tgid = pid, .ts = ts },
	};
	char tok[80];
	int d;

	for (; g.n < IG_GPUMAP_MAX; g.n++) {
		ig_identity_gpu_token(id, g.n, tok, sizeof(tok));
		if (!tok[0] || (d = ig_agent_gpu_id(a, tok)) < 0)
			break;
		g.dev[g.n] = d;
	}
	ig_agent_emit(a, &g.h);
}

static bool prev_identity(const struct agent *a, pid_t pid, struct ig_identity *out)
{
	size_t i;

	for (i = 0; i < a->nprev; i++)
		if (a->prev_ids[i].pid == pid) {
			*out = a->prev_ids[i].id;
			return true;
		}
	return false;
}

void ig_agent_forget_identity(struct agent *a, pid_t pid, bool exec)
{
	size_t i;

	/* read before the exec, or during it (its environment empty): the
	 * program it became is the one that uses the GPU (an entrypoint
	 * script that execs the trainer), so this window names that one */
	for (i = 0; exec && a->in_window && i < a->nids; i++)
		if (a->ids[i].pid == pid) {
			struct ig_identity t;

			if (!ig_identity_read(NULL, pid, &t))
				a->ids[i].id = t;
			break;
		}
	for (i = 0; i < a->nprev; i++)
		if (a->prev_ids[i].pid == pid) {
			a->prev_ids[i] = a->prev_ids[--a->nprev];
			break;
		}
	/* nor the one this window read before */
	if (a->in_window && seen(a, pid) && a->nchanged < IG_AGENT_MAX_IDS &&
	    ig_grow((void **)&a->changed, &a->capchanged, a->nchanged, sizeof(*a->changed)))
		a->changed[a->nchanged++] = pid;
}

static int track_one(pid_t pid, void *ctx)
{
	struct track_ctx *t = ctx;
	struct agent *a = t->a;
	struct ig_pid_identity *id;
	int err = ig_capture_track(&a->cap, pid);

	if (err && err != -ESRCH)
		ig_debug("cannot track pid %d: %s", pid, strerror(-err));
	if (!err)
		ig_agent_followed(a, pid, ig_mono_ns());
	if (!a->in_window || seen(a, pid))
		return 0;
	ig_capture_emit_tasks(&a->cap, pid, t->ts);
	if (a->nids == IG_AGENT_MAX_IDS)
		return 0;
	id = &a->ids[a->nids];
	memset(id, 0, sizeof(*id));
	id->pid = pid;
	/* read now: the process may be gone when the window ends; one
	 * handed over keeps what was read when it was first followed */
	if (!prev_identity(a, pid, &id->id))
		ig_identity_read(NULL, pid, &id->id);
	a->nids++;
	emit_gpumap(a, pid, &id->id, t->ts);
	return 0;
}

/* The process and its descendants (a data loader's workers, started
 * before the agent found the job), as `attach -p` follows them. */
void ig_agent_track(struct agent *a, pid_t pid, __u64 ts)
{
	struct track_ctx c = { a, ts };

	track_one(pid, &c);
	ig_proc_for_each_descendant(pid, track_one, &c);
}
