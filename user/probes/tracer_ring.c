// SPDX-License-Identifier: GPL-2.0
/* Reading the ring buffer (docs/design.md §3.5, §7.10): a poll hands over
 * a slice of records at most, and a stop keeps back what was sent after
 * it, so that a reader slower than the records still keeps its clock. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>
#include "probes/log.h"
#include "probes/tracer_int.h"
#include "util/clock.h"

/* libbpf's consume loop stops at a callback's error, the record taken */
#define SLICE_OVER	(-ECANCELED)
#define SLICE_CHECK	256	/* records between two looks at the clock */

/* Hands @h over, the newest record's time kept. */
static void hand_over(struct ig_tracer *t, struct ig_hdr *h)
{
	if (h->ts > t->last_ts)
		t->last_ts = h->ts;
	t->fn(h, t->ctx);
}

int ig_tracer_on_record(void *ctx, void *data, size_t size)
{
	struct ig_tracer *t = ctx;
	struct ig_hdr *h = data;

	if (size < sizeof(*h) || h->size > size)
		return 0;
	if (t->stop_at && h->ts > t->stop_at && !t->held) {
		/* taken from the ring already: a copy waits for the stop's
		 * lifting; none kept (out of memory) is one record lost */
		t->held = malloc(h->size);
		if (t->held)
			memcpy(t->held, h, h->size);
		t->sliced = true;
		return SLICE_OVER;
	}
	hand_over(t, h);
	if (++t->nread % SLICE_CHECK == 0 &&
	    ig_mono_ns() >= t->slice_end) {
		t->sliced = true;
		return SLICE_OVER;
	}
	return 0;
}

void ig_tracer_stop_at(struct ig_tracer *t, __u64 ts)
{
	t->stop_at = ts;
}

bool ig_tracer_reached(const struct ig_tracer *t)
{
	return t->held != NULL;
}

__u64 ig_tracer_whole_to(const struct ig_tracer *t)
{
	/* a stop keeps back what was sent after it */
	return t->stop_at && t->stop_at < t->whole_to ? t->stop_at : t->whole_to;
}

int ig_tracer_poll(struct ig_tracer *t, int timeout_ms)
{
	int n, m, held = 0;
	__u64 at;

	t->nread = 0;
	t->sliced = false;
	if (t->held) {
		struct ig_hdr *h = t->held;

		if (t->stop_at && h->ts > t->stop_at)
			return 0;	/* still stopped: nothing handed over */
		t->held = NULL;
		hand_over(t, h);
		free(h);
		t->nread++;
		held = 1;
	}
	t->slice_end = ig_mono_ns() + (timeout_ms > 0 ? timeout_ms * 1000000ULL : 0) +
		       IG_POLL_SLICE_NS;
	/* Woken early only when the ring fills (see rec_submit()); what
	 * came meanwhile is consumed after the wait either way. */
	n = ring_buffer__poll(t->rb, timeout_ms);
	if (t->sliced)
		return (int)t->nread;
	if (n < 0 && n != -EINTR)
		return n;
	/* what was sent before this instant is read by the consume below,
	 * unless it stops at a slice's end */
	at = ig_mono_ns();
	m = ring_buffer__consume(t->rb);
	if (t->sliced)
		return (int)t->nread;
	if (m < 0)
		return m;
	if (at > t->whole_to)
		t->whole_to = at;
	/* the record kept back, handed over first, counts too */
	return (n > 0 ? n : 0) + m + held;
}

__u64 ig_tracer_drain(struct ig_tracer *t, __u64 max_ns, int *err)
{
	__u64 t0 = ig_mono_ns(), at;
	int n;

	*err = 0;
	do {
		n = ig_tracer_poll(t, 0);
		at = ig_mono_ns();
	} while (n > 0 && at - t0 < max_ns);
	if (n < 0) {	/* whole up to what was read: now, said so */
		ig_err("reading the ring buffer: %s", strerror(-n));
		*err = n;
		return at;
	}
	if (t->held)
		return t->stop_at;
	if (n > 0 && t->last_ts && t->last_ts < at) {
		ig_debug("the ring buffer still held records after %.0f ms: the stream ends at the newest one read, %.0f ms ago",
			 (at - t0) / 1e6, (at - t->last_ts) / 1e6);
		return t->last_ts;
	}
	/* emptied: nothing after the stop was sent, or it would be held */
	return t->stop_at && t->stop_at < at ? t->stop_at : at;
}
