// SPDX-License-Identifier: GPL-2.0
/*
 * The cause rules (docs/design.md §5) for one stretch of a thread's
 * timeline that needs no other thread: on CPU (in CUDA, page faults,
 * sampled), runnable, storage, network, woken by the kernel or an untracked
 * thread.  Following a waker is the walk's (attrib.c).
 */
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include "engine/attrib/attrib.h"
#include "engine/attrib/files.h"
#include "engine/tasks.h"

static void emit_host(struct walk *w, const struct ig_thread *th, uint64_t ns)
{
	ig_detail_add(ig_detail_cause_add(w, IG_C_HOST_COMPUTE, ns), IG_D_THREAD, th->tid,
		th->tgid, 0, th->comm, ns);
}

static void emit_api(struct walk *w, uint32_t api, uint64_t ns)
{
	const char *name = ig_api_name(api);

	ig_detail_add(ig_detail_cause_add(w, IG_C_CUDA_API, ns), IG_D_API, 0, 0, api,
		name ? name : "?", ns);
}

/* On CPU in the kernel handling page faults (sampled): part of the fault
 * the thread is about to wait on, or of the one it just waited on. */
static void emit_fault_cpu(struct walk *w, const struct ig_thread *th,
			   uint64_t x, uint64_t ns)
{
	uint32_t i = ig_ring_upper(&th->ivals, offsetof(struct ig_ival, t_on),
				   x);

	if (i < th->ivals.len && ig_tasks_thread_ival(th, i)->reason == IG_R_PAGEFAULT)
		ig_causes_fault(w, th, ig_tasks_thread_ival(th, i), ns);
	else if (i > 0 && ig_tasks_thread_ival(th, i - 1)->reason == IG_R_PAGEFAULT)
		ig_causes_fault(w, th, ig_tasks_thread_ival(th, i - 1), ns);
	else
		ig_detail_add(ig_detail_cause_add(w, IG_C_PAGE_FAULT, ns), IG_D_FILE, 0, th->tgid,
			0, "fault handling (sampled)", ns);
}

struct sampled {
	uint64_t n, cuda, fault;
};

static void count_samples(const struct ig_thread *th, uint64_t x, uint64_t y,
			  struct sampled *c)
{
	uint32_t i = ig_ring_upper(&th->samples, offsetof(struct ig_sample_ref, t),
				   x ? x - 1 : 0);

	memset(c, 0, sizeof(*c));
	for (; i < th->samples.len; i++) {
		const struct ig_sample_ref *r = ig_ring_at(&th->samples, i);

		if (r->t >= y)
			break;
		c->n++;
		c->cuda += r->cuda;
		c->fault += r->fault;
	}
}

/* How far around an on-CPU stretch too short to hold a sample the
 * thread's samples still tell what it was running. */
#define SAMPLE_REACH_NS 10000000ULL

/*
 * On CPU outside any timed driver call: the thread's own code, or driver
 * code that has no return probe (launches: timing them would double their
 * probe cost).  The CPU-clock samples give the proportion: those inside
 * [x, y), or for a stretch shorter than the sampling period, those of the
 * thread nearby.  With none, the time is the thread's own.
 */
static void emit_sampled(struct walk *w, const struct ig_thread *th,
			 uint64_t x, uint64_t y)
{
	uint64_t cu, pf;
	struct sampled c;

	count_samples(th, x, y, &c);
	if (!c.n)
		count_samples(th, x > SAMPLE_REACH_NS ? x - SAMPLE_REACH_NS : 0,
			      y + SAMPLE_REACH_NS, &c);
	if (!c.cuda && !c.fault) {
		emit_host(w, th, y - x);
		return;
	}
	cu = (y - x) * c.cuda / c.n;
	pf = (y - x) * c.fault / c.n;
	if (cu)
		ig_detail_add(ig_detail_cause_add(w, IG_C_CUDA_API, cu), IG_D_API, 0, 0, 0,
			"driver code (sampled)", cu);
	if (pf)
		emit_fault_cpu(w, th, x, pf);
	if (y - x > cu + pf)
		emit_host(w, th, y - x - cu - pf);
}

/* On CPU over [x, y): inside a timed driver call or not. */
void ig_causes_oncpu(struct walk *w, const struct ig_thread *th,
		       uint64_t x, uint64_t y)
{
	uint32_t i = ig_ring_upper(&th->spans, offsetof(struct ig_span, t1), x);
	uint64_t t = x;

	while (t < y) {
		const struct ig_span *s = i < th->spans.len ?
					  ig_ring_at(&th->spans, i) : NULL;
		uint64_t s0 = s ? s->t0 : IG_NS_INF, s1 = s ? s->t1 : 0;
		uint32_t api = s ? s->api : 0;

		if (!s && th->open_begin && th->open_begin < y) {
			/* a sync call still in progress */
			s0 = th->open_begin;
			s1 = IG_NS_INF;
			api = th->open_api;
		}
		if (s0 >= y || s1 <= t) {
			emit_sampled(w, th, t, y);
			return;
		}
		if (s0 > t) {
			emit_sampled(w, th, t, s0);
			t = s0;
		}
		emit_api(w, api, ig_min64(s1, y) - t);
		t = ig_min64(s1, y);
		i++;
	}
}

/* Runnable but not running; who ran instead is the task switched out
 * for it, never the idle task: a thread moved off a busy CPU onto an idle
 * one names no one. */
void ig_causes_runnable(struct walk *w, const struct ig_ival *iv,
			  uint64_t ns)
{
	struct ig_cause_acc *c = ig_detail_cause_add(w, IG_C_CPU_STARVATION, ns);

	if (iv->prev_tid)
		ig_detail_add(c, IG_D_PROCESS, 0, iv->prev_tgid, 0,
			ig_tasks_comm_of(w->e, iv->prev_tid), ns);
	ig_detail_add(c, IG_D_CPU, 0, 0, iv->cpu, "", ns);
}

static const char *ival_name(const struct ig_ival *iv)
{
	return iv->detail.name[0] ? iv->detail.name : NULL;
}

/* The file's mount takes the time too, exactly: many files each get
 * little, and fewer than they earned once the table evicts. */
static void emit_mount(struct walk *w, struct ig_cause_acc *c,
		       struct ig_fileinfo *fi, uint64_t ns)
{
	uint8_t bit = w->set == &w->e->attr.idle ? IG_FILE_IN_IDLE
					     : IG_FILE_IN_UNRES;
	struct ig_detail *d;

	if (!fi->mount)
		return;
	d = ig_detail_add(c, IG_D_MOUNT, 0, 0, fi->mount, "", ns);
	if (!(fi->counted & bit)) {
		fi->counted |= bit;
		d->aux[0]++;
	}
}

void ig_causes_storage(struct walk *w, const struct ig_thread *th,
			 const struct ig_ival *iv, uint64_t ns)
{
	struct ig_cause_acc *c = ig_detail_cause_add(w, IG_C_STORAGE, ns);
	const char *name = ival_name(iv);
	struct ig_fileinfo *fi = iv->flags & IG_F_FILE_KEY ?
				 ig_files_find(w->e, iv->arg) : NULL;

	ig_detail_add(c, IG_D_FILE, 0, th->tgid, fi ? fi->key : 0,
		name ? name : "?", ns);
	if (fi)
		emit_mount(w, c, fi, ns);
	if (iv->dev)
		ig_detail_add(c, IG_D_DEVICE, 0, 0, iv->dev, "", ns);
}

void ig_causes_fault(struct walk *w, const struct ig_thread *th,
		       const struct ig_ival *iv, uint64_t ns)
{
	struct ig_cause_acc *c = ig_detail_cause_add(w, IG_C_PAGE_FAULT, ns);
	const char *name = ival_name(iv);

	if (!name)
		name = ig_tasks_map_lookup(th->proc, iv->arg);
	ig_detail_add(c, IG_D_FILE, 0, th->tgid, 0, name ? name : "[anon]", ns);
	if (iv->dev)
		ig_detail_add(c, IG_D_DEVICE, 0, 0, iv->dev, "", ns);
}

void ig_causes_network(struct walk *w, const struct ig_ival *iv,
			 uint64_t ns)
{
	char peer[IG_NAME_LEN];

	ig_rec_fmt_peer(&iv->detail.peer, peer, sizeof(peer));
	ig_detail_add(ig_detail_cause_add(w, IG_C_NETWORK, ns), IG_D_PEER, 0, 0,
		iv->detail.peer.proto, peer, ns);
}

/* Woken from an interrupt or by the idle task (IG_F_WAKER_IRQ), or by a
 * kernel thread completing something (kworker, ksoftirqd): no user task
 * woke the thread. */
bool ig_causes_woken_by_kernel(const struct ig_ival *iv)
{
	return iv->flags & (IG_F_WAKER_IRQ | IG_F_WAKER_KERNEL) ||
	       !iv->waker_tid;
}

/*
 * Woken by no task: an interrupt ended a timed wait (its timeout ran out,
 * or a signal came), or a kernel thread completed something (a kworker,
 * ksoftirqd).  Neither is a process outside the tracked set, and neither
 * is the task the interrupt landed on.
 */
void ig_causes_kernel_woken(struct walk *w, const struct ig_thread *th,
			      const struct ig_ival *iv, uint64_t ns)
{
	char why[IG_NAME_LEN];

	if (iv->flags & IG_F_WAKER_IRQ) {
		ig_detail_add(ig_detail_cause_add(w, IG_C_SLEEP, ns), IG_D_THREAD, th->tid,
			th->tgid, 0, th->comm, ns);
		return;
	}
	snprintf(why, sizeof(why), "woken by kernel thread %s",
		 ig_tasks_comm_of(w->e, iv->waker_tid));
	ig_detail_unknown(w, ns, why);
}

void ig_causes_untracked(struct walk *w, const struct ig_ival *iv,
			   uint64_t ns)
{
	ig_detail_add(ig_detail_cause_add(w, IG_C_WAIT_UNTRACKED, ns), IG_D_WAKER,
		iv->waker_tid, iv->waker_tgid, 0,
		ig_tasks_comm_of(w->e, iv->waker_tid), ns);
}

