// SPDX-License-Identifier: GPL-2.0
/*
 * The steps of the job's loop in the timeline (docs/design.md §4.11,
 * §7.8), known at the report: each GPU's on a track of its own, "GPU N
 * steps", one slice a step named by its index and the cause of most of
 * its waiting, "step 12: storage" ("step 12" when it waited for nothing,
 * "step 0 (partial): ..." when the trace's start or end cut it), its
 * figures in ms as annotations.
 */
#include <stdio.h>
#include "engine/steps/steps.h"
#include "views/timeline_build.h"
#include "views/timeline_int.h"

#define STEPS_TRACK	0x4000u
#define STEP_CAUSES	3	/* causes named in a step's "causes" */

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* "storage 6.07 ms, cpu_starvation 0.85 ms": the step's largest causes. */
static void causes_text(const struct ig_step *st, char *buf, size_t n)
{
	unsigned int order[IG_C__MAX];
	size_t k, m = ig_names_by_ns(st->cause_ns, order), off = 0;

	buf[0] = 0;
	for (k = 0; k < m && k < STEP_CAUSES && off < n; k++)
		off += snprintf(buf + off, n - off, "%s%s %.3f ms", k ? ", " : "",
				ig_names_cause(order[k]), ms(st->cause_ns[order[k]]));
}

static int step_slice(struct ig_tlb *b, int dev, const struct ig_step *st)
{
	const char *cause = ig_steps_cause_name(st->cause);
	const char *late = ig_steps_cause_name(st->late_cause);
	char name[96], causes[160];
	struct ig_tl_annot a[10];
	unsigned int n = 0;
	struct ig_tl_slice s = {
		.kind = IG_TL_STEP, .device = STEPS_TRACK + (uint32_t)dev,
		.ts = st->t0, .dur = st->t1 - st->t0, .name = name, .annots = a,
	};

	snprintf(name, sizeof(name), "step %u%s%s%s", st->index,
		 st->partial ? " (partial)" : "", cause ? ": " : "", cause ? cause : "");
	causes_text(st, causes, sizeof(causes));
	a[n++] = (struct ig_tl_annot){ .name = "wall_ms", .type = IG_TL_DOUBLE,
				       .d = ms(st->t1 - st->t0) };
	a[n++] = (struct ig_tl_annot){ .name = "busy_ms", .type = IG_TL_DOUBLE,
				       .d = ms(st->ns[IG_SS_BUSY]) };
	a[n++] = (struct ig_tl_annot){ .name = "idle_ms", .type = IG_TL_DOUBLE,
				       .d = ms(st->ns[IG_SS_IDLE]) };
	a[n++] = (struct ig_tl_annot){ .name = "peer_wait_ms", .type = IG_TL_DOUBLE,
				       .d = ms(st->ns[IG_SS_PEER]) };
	a[n++] = (struct ig_tl_annot){ .name = "unresolved_ms", .type = IG_TL_DOUBLE,
				       .d = ms(st->ns[IG_SS_UNRES]) };
	a[n++] = (struct ig_tl_annot){ .name = "slow", .type = IG_TL_BOOL, .u = st->slow };
	if (causes[0])
		a[n++] = (struct ig_tl_annot){ .name = "causes", .type = IG_TL_STR,
					       .s = causes };
	if (st->late_rank >= 0) {
		a[n++] = (struct ig_tl_annot){ .name = "late_rank", .type = IG_TL_INT,
					       .i = st->late_rank };
		if (late)
			a[n++] = (struct ig_tl_annot){ .name = "late_cause",
						       .type = IG_TL_STR, .s = late };
	}
	s.n_annots = n;
	return ig_perfetto_slice(b->w, &s);
}

/* Device @dev's steps, on their track declared before the first. */
static int dev_steps(struct ig_tlb *b, const struct ig_engine *e, int dev)
{
	struct ig_steps_out o;
	char tname[48];
	struct ig_tl_device d = { .id = STEPS_TRACK + (uint32_t)dev, .name = tname };
	uint32_t i;
	int err = 0;

	ig_steps_find(e, dev, &o);
	if (o.found && o.n && !(b->steps_declared & (1ull << dev))) {
		snprintf(tname, sizeof(tname), "GPU %d steps", dev);
		b->steps_declared |= 1ull << dev;
		err = ig_perfetto_device(b->w, &d);
	}
	for (i = 0; o.found && i < o.n && !err; i++)
		err = step_slice(b, dev, &o.v[i]);
	ig_steps_out_free(&o);
	return err;
}

void ig_timeline_steps(struct ig_tlb *b, const struct ig_engine *e)
{
	int dev;

	if (!b || !e)
		return;
	/* the GPUs the trace draws (busy time still held too): the steps
	 * are charged from the same stretches of their timelines */
	for (dev = 0; dev < IG_TL_MAX_DEVS && !b->err; dev++)
		if (b->dev_declared & (1ull << dev) || b->busy_t1[dev])
			b->err = dev_steps(b, e, dev);
}
