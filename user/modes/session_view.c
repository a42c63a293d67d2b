// SPDX-License-Identifier: GPL-2.0
/* What a live view (`idlegap top`) adds to a tracing session: every GPU
 * process on the host, found as they come, and a turn each loop. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "probes/discovery.h"
#include "probes/log.h"
#include "host/procfs.h"
#include "stream/reorder.h"
#include "modes/session_int.h"
#include "probes/tracer.h"
#include "util/util.h"

#define HOST_SCAN_EVERY_NS	(1000ULL * 1000 * 1000)

static int host_one(const struct ig_gpu_proc *g, void *ctx)
{
	struct track_ctx *c = ctx;
	struct session *s = c->s;
	size_t i;

	if (g->pid == getpid())
		return 0;
	for (i = 0; i < s->nhost; i++)
		if (s->host_pids[i].pid == g->pid) {
			s->host_pids[i].gen = s->host_gen;
			return 0;
		}
	if (!ig_grow_from((void **)&s->host_pids, &s->caphost, s->nhost,
			  sizeof(*s->host_pids), 64))
		return -ENOMEM;
	s->host_pids[s->nhost++] = (struct host_pid){ g->pid, s->host_gen };
	c->named = false;
	ig_sess_track_one(g->pid, c);	/* one gone meanwhile, or unprobed: said */
	ig_proc_for_each_descendant(g->pid, ig_sess_track_one, c);
	return 0;
}

/* Forget the processes this look did not see: they ended (their records
 * are the tracer's to finish), and the list stays as long as the host's
 * GPU processes, not as every one a long run saw. */
static void host_sweep(struct session *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->nhost; i++)
		if (s->host_pids[i].gen == s->host_gen)
			s->host_pids[n++] = s->host_pids[i];
	s->nhost = n;
}

/* Host-wide (top): every process mapping a libcuda, new ones each
 * second. */
void ig_sess_host_scan(struct session *s, __u64 now)
{
	struct track_ctx c = { .s = s, .ts = now };
	int err;

	if (!s->o->host_wide || now < s->next_host_scan)
		return;
	s->next_host_scan = now + HOST_SCAN_EVERY_NS;
	s->host_gen++;
	err = ig_gpu_procs(host_one, &c);
	if (err < 0)
		ig_warn("cannot list the GPU processes: %s", strerror(-err));
	else
		host_sweep(s);
}

/* A view's turn: the records and losses so far, read once a second. */
int ig_sess_tick(struct session *s, __u64 now)
{
	struct ig_session_tick t = { .now = now, .nrecords = s->nrecords };
	struct ig_stats st;

	if (now >= s->next_lost_read) {
		s->next_lost_read = now + HOST_SCAN_EVERY_NS;
		if (!ig_tracer_stats(s->tracer, &st))
			s->lost = st.stat[IG_STAT_DROPS] + ig_reorder_late(s->reorder);
	}
	t.lost = s->lost;
	return s->o->tick(s->o->tick_ctx, &t);
}
