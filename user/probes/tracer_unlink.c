// SPDX-License-Identifier: GPL-2.0
/* Links removed: one at once, or uprobe links in the background
 * (tracer_int.h), and how far that removal has got (tracer.h). */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include "probes/tracer_int.h"
#include "util/util.h"

void ig_tracer_unlink(struct ig_link *k)
{
	if (k->link)
		bpf_link__destroy(k->link);
	else if (k->fd >= 0)
		close(k->fd);
}

/* Links removed in the background.  Without multi-uprobe links each
 * uprobe is a perf event of its own, and the kernel waits for a grace
 * period to remove each, one at a time (about 100 ms here: 13 s for the
 * 128 probes of one process; docs/design.md §2.1).  A process's exit or a
 * window's end hands its links to one thread, so the records keep flowing
 * meanwhile; closing the tracer waits for them.  First in, first out:
 * the links queued before a mark are gone once as many are done. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* work queued, or the queue emptied */
	struct ig_link *q;		/* q[head] up to q[n] */
	size_t head, n, cap, busy;
	unsigned long long queued, done;
	bool started;
} later = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void *remover(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&later.mu);
	for (;;) {
		struct ig_link k;

		while (later.head == later.n)
			pthread_cond_wait(&later.cv, &later.mu);
		k = later.q[later.head++];
		if (later.head == later.n)
			later.head = later.n = 0;
		later.busy++;
		pthread_mutex_unlock(&later.mu);
		ig_tracer_unlink(&k);
		pthread_mutex_lock(&later.mu);
		later.busy--;
		later.done++;
		pthread_cond_broadcast(&later.cv);
	}
	return NULL;
}

void ig_tracer_unlink_later(struct ig_link *k)
{
	pthread_t th;
	bool queued = false;

	pthread_mutex_lock(&later.mu);
	if (!later.started) {
		sigset_t all, old;

		/* the remover takes no signal: they stay the main thread's */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		later.started = pthread_create(&th, NULL, remover, NULL) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (later.started)
			pthread_detach(th);
	}
	if (later.started && later.head && later.n == later.cap) {
		memmove(later.q, later.q + later.head,
			(later.n - later.head) * sizeof(*later.q));
		later.n -= later.head;
		later.head = 0;
	}
	if (later.started &&
	    ig_grow((void **)&later.q, &later.cap, later.n, sizeof(*later.q))) {
		later.q[later.n++] = *k;
		later.queued++;
		pthread_cond_broadcast(&later.cv);
		queued = true;
	}
	pthread_mutex_unlock(&later.mu);
	if (!queued)
		ig_tracer_unlink(k);
}

unsigned long long ig_tracer_unlink_mark(void)
{
	unsigned long long m;

	pthread_mutex_lock(&later.mu);
	m = later.queued;
	pthread_mutex_unlock(&later.mu);
	return m;
}

bool ig_tracer_unlinked(unsigned long long mark)
{
	bool gone;

	pthread_mutex_lock(&later.mu);
	gone = later.done >= mark;
	pthread_mutex_unlock(&later.mu);
	return gone;
}

void ig_tracer_unlink_wait(void)
{
	pthread_mutex_lock(&later.mu);
	while (later.n > later.head || later.busy)
		pthread_cond_wait(&later.cv, &later.mu);
	pthread_mutex_unlock(&later.mu);
}
