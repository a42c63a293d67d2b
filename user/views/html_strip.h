/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The GPU strips of `--html` (docs/design.md §7.8, the HTML page): each device's time
 * from the engine's observer, kept in at most IG_HTML_BINS bins of equal
 * width per device, each holding the nanoseconds of every state (busy,
 * unresolved, peer wait, idle by cause) that fell in it.  When a stretch
 * ends past the last bin, neighbouring bins are merged two into one and
 * the width doubles, so memory and the page stay bounded however long the
 * run; the state shares over any run of bins stay exact.
 */
#ifndef IG_HTML_STRIP_H
#define IG_HTML_STRIP_H

#include <stdint.h>
#include <json-c/json.h>
#include "engine/engine_obs.h"
#include "engine/names.h"

#define IG_HTML_BINS		4096	/* per device */
#define IG_HTML_BINS_ALL	16384	/* all devices together, in the page */
#define IG_HTML_DEVS		64	/* devices drawn; more are counted */

/* A bin's states: idle time the observer gave no cause ("idle"), then
 * the idle time of each enum ig_cause ("idle:storage", ...). */
enum { IG_HS_BUSY, IG_HS_UNRES, IG_HS_PEER, IG_HS_IDLE_ANY, IG_HS_IDLE,
       IG_HS_N = IG_HS_IDLE + IG_C__MAX };

struct ig_html_strip;

struct ig_html_strip *ig_html_strip_new(void);
/* One final stretch of a device's timeline, as the observer gives it. */
void ig_html_strip_span(struct ig_html_strip *st, const struct ig_obs_span *s);
/* The devices' strips for the page, merged until all of them together
 * hold at most IG_HTML_BINS_ALL bins: [{"key", "t0_ns", "bin_ns",
 * "nbins", "states": {name: [per mille of each bin]}, "seconds": {name:
 * s}}], "busy", "unresolved", "peer_wait", "idle" and "idle:CAUSE" the
 * names;
 * NULL without memory. */
struct json_object *ig_html_strip_json(struct ig_html_strip *st);
/* Devices seen beyond IG_HTML_DEVS (256 at most are told apart). */
unsigned int ig_html_strip_dropped(const struct ig_html_strip *st);
void ig_html_strip_free(struct ig_html_strip *st);

#endif
