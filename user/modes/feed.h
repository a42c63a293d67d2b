/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reorder stage every mode puts in front of its engine (docs/design.md
 * §3.4): run and attach, the agent's windows, a recording's replay and
 * each recording of a multi-host report, all with one window.
 */
#ifndef IG_FEED_H
#define IG_FEED_H

#include "engine/engine.h"
#include "stream/reorder.h"
#include "probes/tracer.h"

/* CPUs hand their records to the ring buffer with skews of microseconds;
 * annotation records may be placed a little in the past. */
#define IG_FEED_WINDOW_NS	(50ULL * 1000 * 1000)
/* User space stamps its records when it writes them, while the ring
 * buffer's reader may be behind the kernel's records (0.2 s on a busy
 * host; as long as it was stopped): live, they wait for the ring to be
 * read past them (ig_feed_advance()); a recording's replay has no such
 * word and takes them as written this much ahead. */
#define IG_FEED_USER_LAG_NS	(10ULL * 1000 * 1000 * 1000)

/* A reorder stage of that window handing records to @out: of a live
 * stream (@live: records read from the ring buffer now, and user space's
 * own) or of a recording. */
struct ig_reorder *ig_feed_new(bool live, ig_reorder_out out, void *ctx);
/* One handing them to @e (ig_engine_feed()). */
struct ig_reorder *ig_feed_engine(bool live, struct ig_engine *e);
/* Live: the ring buffer read whole up to @t (ig_tracer_whole_to()); 0 is
 * nothing known. */
void ig_feed_advance(struct ig_reorder *r, const struct ig_tracer *t);

#endif
