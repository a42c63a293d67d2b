// SPDX-License-Identifier: GPL-2.0
/*
 * The views of collectives across ranks (docs/design.md §4.9, §7.4): the
 * peer-wait state of each GPU, and the stragglers with the causes of their
 * lateness.
 */
#include <stdlib.h>
#include "engine/peers/peers.h"
#include "engine/report/report.h"
#include "engine/jsonval.h"
#include "engine/merge.h"
#include "engine/idents.h"

static double sec(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* The pod of the ranks on GPU @ordinal, where they share one. */
static void dev_ident(const struct ig_engine *e, jo *o, int ordinal)
{
	uint32_t pids[64], i;
	size_t n = 0;

	for (i = 0; e->peers && i < e->peers->nranks && n < 64; i++)
		if (e->peers->ranks[i].device == ordinal)
			pids[n++] = e->peers->ranks[i].pid;
	ig_engine_ident_json_common(e, o, pids, n);
}

/* The RANK the environments of the processes on GPU @ordinal agree on
 * (self-reported), or -1. */
static int32_t env_rank(const struct ig_engine *e, int ordinal)
{
	const struct ig_process **v;
	size_t n = ig_report_procs_sorted(e, &v), i;
	int32_t r = -1;

	for (i = 0; i < n; i++) {
		const struct ig_process *p = v[i];

		if (!p->on_gpu || ig_gpu_proc_device(p) != ordinal ||
		    !p->gd_seen || p->env_rank < 0)
			continue;
		if (r >= 0 && r != p->env_rank) {
			r = -1;
			break;
		}
		r = p->env_rank;
	}
	free(v);
	return r;
}

void ig_peers_json_dev(const struct ig_engine *e, jo *o, int ordinal)
{
	uint64_t w, coll;
	int32_t rank;
	const char *src = "communicator";

	ig_peers_dev(e, ordinal, &w, &coll, &rank);
	/* a communicator created before the probes came: the rank its
	 * process's environment gives, labelled (§4.9) */
	if (rank < 0 && (rank = env_rank(e, ordinal)) >= 0)
		src = "environment";
	json_object_object_add(o, "rank", rank >= 0 ? json_object_new_int(rank) : NULL);
	json_object_object_add(o, "rank_source", rank >= 0 ? jstr(src) : NULL);
	dev_ident(e, o, ordinal);
	json_object_object_add(o, "collective_s", jsec(coll));
	json_object_object_add(o, "peer_wait_s", jsec(w));
}

static jo *causes_json(const struct peers_rank *R)
{
	unsigned int order[IG_C__MAX];
	size_t n = ig_names_by_ns(R->cause_ns, order), i;
	uint64_t tot = 0;
	jo *a = json_object_new_array();

	for (i = 0; i < n; i++)
		tot += R->cause_ns[order[i]];
	for (i = 0; i < n; i++) {
		jo *c = json_object_new_object();
		uint64_t ns = R->cause_ns[order[i]];

		json_object_object_add(c, "cause", jstr(ig_names_cause(order[i])));
		/* the walk gives each ns of lateness one cause: scaled to the
		 * wait it caused */
		json_object_object_add(c, "seconds", jsec(ns));
		json_object_object_add(c, "share", jnum(ig_report_share(ns, tot), 3));
		json_object_array_add(a, c);
	}
	return a;
}

jo *ig_peers_json_stragglers(const struct ig_engine *e)
{
	const struct peers_rank **v;
	size_t n = ig_peers_stragglers(e, &v), i;
	jo *a = json_object_new_array();

	for (i = 0; i < n; i++) {
		jo *o = json_object_new_object();

		json_object_object_add(o, "rank", v[i]->rank >= 0 ?
				       json_object_new_int(v[i]->rank) : NULL);
		json_object_object_add(o, "pid", ju64(ig_merge_host_pid(e, v[i]->pid)));
		json_object_object_add(o, "host", jstr(ig_merge_host_of(e, v[i]->pid)));
		ig_engine_ident_json(e, o, v[i]->pid);
		json_object_object_add(o, "late_s", jsec(v[i]->late_ns));
		json_object_object_add(o, "collectives", ju64(v[i]->collectives));
		json_object_object_add(o, "causes", causes_json(v[i]));
		json_object_array_add(a, o);
	}
	free(v);
	return a;
}

/* Each rank's own share: ranks of one job may share a device entry
 * (their contexts created before the probes, or one GPU for several). */
static jo *ranks_json(const struct ig_engine *e)
{
	jo *a = json_object_new_array();
	uint32_t i;

	for (i = 0; e->peers && i < e->peers->nranks; i++) {
		const struct peers_rank *R = &e->peers->ranks[i];
		jo *o = json_object_new_object();

		json_object_object_add(o, "rank", R->rank >= 0 ? json_object_new_int(R->rank) : NULL);
		json_object_object_add(o, "pid", ju64(ig_merge_host_pid(e, R->pid)));
		if (e->merge)
			json_object_object_add(o, "host", jstr(ig_merge_host_of(e, R->pid)));
		ig_engine_ident_json(e, o, R->pid);
		json_object_object_add(o, "device", R->device >= 0 && !ig_gpu_dev_unknown(R->device) ?
				       json_object_new_int(R->device) : NULL);
		json_object_object_add(o, "collective_s", jsec(R->coll_ns));
		json_object_object_add(o, "peer_wait_s", jsec(R->wait_ns));
		json_object_object_add(o, "late_s", jsec(R->late_ns));
		json_object_array_add(a, o);
	}
	return a;
}

jo *ig_peers_json_summary(const struct ig_engine *e)
{
	const struct ig_peers *ps = e->peers;
	jo *o = json_object_new_object();

	json_object_object_add(o, "calls", ju64(ps ? ps->calls : 0));
	json_object_object_add(o, "matched", ju64(ps ? ps->matched : 0));
	json_object_object_add(o, "unmatched_calls", ju64(ps ? ps->unmatched : 0));
	json_object_object_add(o, "collectives_dropped", ju64(ps ? ps->dropped : 0));
	json_object_object_add(o, "calls_without_communicator", ju64(ps ? ps->no_id : 0));
	json_object_object_add(o, "inferred_communicators",
			       ju64(ps ? ps->inferred_comms : 0));
	json_object_object_add(o, "inferred_calls", ju64(ps ? ps->inferred_calls : 0));
	json_object_object_add(o, "peer_wait_s", jsec(ps ? ps->wait_ns : 0));
	json_object_object_add(o, "peer_wait_unproven_s",
			       jsec(ps ? ps->unproven_wait_ns : 0));
	json_object_object_add(o, "libnccl_probed", ju64(ps ? ps->libs : 0));
	json_object_object_add(o, "nccl_linked_statically",
			       ps && ps->static_libs ? jstr(ps->static_path) : NULL);
	json_object_object_add(o, "ranks", ranks_json(e));
	json_object_object_add(o, "by_communicator", ig_peers_local_json(e));
	return o;
}

uint64_t ig_peers_wait_ns(const struct ig_engine *e)
{
	return e->peers ? e->peers->wait_ns : 0;
}

void ig_peers_text(FILE *out, const struct ig_engine *e)
{
	const struct ig_peers *ps = e->peers;
	const struct peers_rank **v;
	size_t n, i, k, m;
	uint64_t coll = 0;
	unsigned int order[IG_C__MAX];

	if (!ps || !ps->calls)
		return;
	for (i = 0; i < ps->nranks; i++)
		coll += ps->ranks[i].coll_ns;
	fprintf(out, "Waiting for peers: %.3f s of %.3f s in %llu matched collectives\n",
		sec(ps->wait_ns), sec(coll), (unsigned long long)ps->matched);
	for (i = 0; i < ps->nranks; i++) {
		const struct peers_rank *R = &ps->ranks[i];

		char rk[16], pod[160];

		if (R->rank >= 0)
			snprintf(rk, sizeof(rk), "%d", R->rank);
		else
			snprintf(rk, sizeof(rk), "?");
		ig_engine_ident_text(e, R->pid, pod, sizeof(pod));
		fprintf(out, "  rank %-4s pid %-7u GPU %-3d waited %.3f s, made others wait %.3f s%s%s%s\n",
			rk, ig_merge_host_pid(e, R->pid), R->device, sec(R->wait_ns),
			sec(R->late_ns), e->merge ? " on " : "",
			e->merge ? ig_merge_host_of(e, R->pid) : "", pod);
	}
	n = ig_peers_stragglers(e, &v);
	if (!n)
		fprintf(out, "  no straggler: no rank kept the others waiting\n");
	for (i = 0; i < n; i++) {
		char pod[160];

		ig_engine_ident_text(e, v[i]->pid, pod, sizeof(pod));
		fprintf(out, "  straggler: rank %d (pid %u on %s%s), late %.3f s in %llu collectives:\n",
			v[i]->rank, ig_merge_host_pid(e, v[i]->pid),
			ig_merge_host_of(e, v[i]->pid), pod, sec(v[i]->late_ns),
			(unsigned long long)v[i]->collectives);
		m = ig_names_by_ns(v[i]->cause_ns, order);
		for (k = 0; k < m && k < 5; k++)
			fprintf(out, "    %-18s %10.3f %8.1f%%\n", ig_names_cause(order[k]),
				sec(v[i]->cause_ns[order[k]]),
				100.0 * ig_report_share(v[i]->cause_ns[order[k]], v[i]->late_ns));
	}
	free(v);
	if (ps->inferred_comms)
		fprintf(out, "  %u communicator(s) created before tracing, inferred from "
			"their calls' pattern and ends (%llu calls): ranks unknown, "
			"only this host's ranks matched, waits a lower bound\n",
			ps->inferred_comms, (unsigned long long)ps->inferred_calls);
	if (ps->unmatched || ps->no_id)
		fprintf(out, "  %llu calls not matched across ranks (a rank not traced, "
			"or its communicator created before tracing)\n",
			(unsigned long long)(ps->unmatched + ps->no_id));
	if (ps->dropped)
		fprintf(out, "  %llu collectives dropped unmatched: their other ranks did not "
			"come within the history window\n", (unsigned long long)ps->dropped);
	fprintf(out, "\n");
}
