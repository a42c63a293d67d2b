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

/* CPUs hand their records to the ring buffer with skews of microseconds;
 * annotation records may be placed a little in the past. */
#define IG_FEED_WINDOW_NS	(50ULL * 1000 * 1000)
/* User space stamps its records when it writes them; on a busy host the
 * ring buffer's reader was seen 0.2 s behind the kernel's records. */
#define IG_FEED_USER_LAG_NS	(2000ULL * 1000 * 1000)

/* A reorder stage of that window handing records to @out. */
struct ig_reorder *ig_feed_new(ig_reorder_out out, void *ctx);
/* One handing them to @e (ig_engine_feed()). */
struct ig_reorder *ig_feed_engine(struct ig_engine *e);

#endif
