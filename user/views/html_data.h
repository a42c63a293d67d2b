/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The parts of the `--html` page built from the engine at the report
 * (docs/design.md §7.8, the HTML page): each GPU's steps for the step-time chart, and
 * the flame graph's tree from the folded stacks of the idle time.  Both
 * are bounded, so that the page is however long the run.
 */
#ifndef IG_HTML_DATA_H
#define IG_HTML_DATA_H

#include <json-c/json.h>

#define IG_HTML_STEP_POINTS	2000	/* per GPU; more steps are grouped */
#define IG_HTML_STEP_POINTS_ALL	8000	/* all GPUs together (100 a GPU at least) */
#define IG_HTML_FLAME_NODES	2048	/* frames of the tree, in all */
#define IG_HTML_NAME_MAX	256	/* bytes of a frame's name */

struct ig_engine;

/* Device @dev's steps: the figures of the report's steps object and
 * "points": [first index, last index, the longest wall ms, mean wall ms,
 * its cause or null, slow (0/1), partial (0/1)], one a step, or one a
 * group of consecutive steps where there are more than @points
 * ("grouped": steps a point).  NULL without memory. */
struct json_object *ig_html_steps_json(const struct ig_engine *e, int dev,
				       unsigned int points);
/* The folded stacks @text ("cause;outer;...;inner ns" lines) as a tree:
 * {"n": name, "v": ns, "c": [children]}, the root nameless, the causes
 * under it; past IG_HTML_FLAME_NODES a stack's time stays with the
 * deepest frame it shares with the tree ("truncated" counts such). */
struct json_object *ig_html_flame_json(const char *text);

#endif
