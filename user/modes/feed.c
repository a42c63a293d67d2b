// SPDX-License-Identifier: GPL-2.0
/* The reorder stage in front of every mode's engine. */
#include "modes/feed.h"

static void to_engine(const struct ig_hdr *rec, void *ctx)
{
	ig_engine_feed(ctx, rec);
}

struct ig_reorder *ig_feed_new(bool live, ig_reorder_out out, void *ctx)
{
	return ig_reorder_new(IG_FEED_WINDOW_NS, live ? IG_REORDER_NO_LAG : IG_FEED_USER_LAG_NS,
			      out, ctx);
}

struct ig_reorder *ig_feed_engine(bool live, struct ig_engine *e)
{
	return ig_feed_new(live, to_engine, e);
}

void ig_feed_advance(struct ig_reorder *r, const struct ig_tracer *t)
{
	if (r)
		ig_reorder_advance(r, ig_tracer_whole_to(t));
}
