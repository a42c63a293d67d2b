/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `--html FILE`: one self-contained page of a run (docs/design.md §7.8, the HTML page):
 * per GPU a strip of its states over time, which zooms; the causes with
 * their details; a flame graph of the idle time with the cause as root;
 * the step-time chart.  Style and script are inline, the data embedded
 * as JSON: the page opens from a file, offline, with no request.  Its
 * size is bounded whatever the run's length (html_strip.h, html_data.h).
 *
 * Usage: ig_html_new(), give the engine its observer before the first
 * record, and after ig_engine_finish() write the page with
 * ig_html_write().
 */
#ifndef IG_HTML_H
#define IG_HTML_H

#include <stdint.h>
#include <stdio.h>
#include "engine/engine_obs.h"

struct ig_html;
struct ig_engine;

struct ig_html_stats {
	uint64_t bytes;		/* of the page */
	uint64_t data_bytes;	/* of its embedded JSON */
	unsigned int devices, devices_left_out;
};

/* NULL and errno set without memory. */
struct ig_html *ig_html_new(void);
void ig_html_observer(struct ig_html *h, struct ig_engine_obs *o);
/* Writes the page to @f; 0 or -errno (-ENOMEM; a write error is left
 * on @f, for its close to tell). */
int ig_html_write(struct ig_html *h, struct ig_engine *e, FILE *f,
		  struct ig_html_stats *st);
void ig_html_free(struct ig_html *h);

#endif
