/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the text and JSON reports share: totals over devices, causes in
 * report order, detail lines in report order.
 */
#ifndef IG_ENGINE_REPORT_H
#define IG_ENGINE_REPORT_H

#include <stdio.h>
#include "engine/model.h"

struct ig_gpu_totals {
	uint64_t busy_ns, idle_ns, unres_ns, span_ns;
	uint64_t idle_open_ns;	/* idle, a gap still open at the window's end */
	uint64_t peer_wait_ns;	/* taken out of busy and unresolved */
	uint64_t unres_host_ns, unres_gpu_ns, unres_open_ns;
	uint64_t span_start, span_end;
	uint64_t gaps;
	uint32_t ndevs;		/* devices with a submission */
};

void ig_report_gpu_totals(const struct ig_engine *e, struct ig_gpu_totals *t);
/* Unresolved time of a device that no drain has classified yet, or that
 * ended by a submission, the end of tracing or lost records. */
uint64_t ig_report_unres_open_ns(const struct ig_device *d);
/* report_head.c: the time before each device's first work seen
 * (docs/design.md §4.12): one device's object (NULL: no head), all of
 * them, and the text's lines. */
struct json_object;
struct json_object *ig_report_head_json(const struct ig_engine *e, int device);
struct json_object *ig_report_heads_json(const struct ig_engine *e);
struct json_object *ig_report_tails_json(const struct ig_engine *e);
void ig_report_head_text(FILE *out, const struct ig_engine *e);
/* Causes with time, most time first; returns how many. */
size_t ig_report_causes_sorted(const struct ig_causeset *s, unsigned int *out);
/* Details of one cause, most time first, of one kind (0: any). */
size_t ig_report_details_sorted(const struct ig_cause_acc *c, uint8_t kind,
				const struct ig_detail **out, size_t max);
/* Time a detail is known to have had (its count minus eviction error). */
uint64_t ig_report_detail_ns(const struct ig_detail *d);
double ig_report_share(uint64_t part, uint64_t whole);
uint64_t ig_report_duration_ns(const struct ig_engine *e);
/* Read statistics of a block device, NULL if none were seen. */
const struct ig_biodev *ig_report_biodev_find(const struct ig_engine *e, uint32_t dev);
/* "8:0" */
void ig_report_fmt_dev(uint32_t dev, char *buf, size_t n);
/* Processes for the report, by pid; caller frees. */
size_t ig_report_procs_sorted(const struct ig_engine *e, const struct ig_process ***out);
const char *ig_report_dkind_name(uint8_t kind);
/* The detail kinds a cause is best explained by, most telling first. */
size_t ig_report_cause_kinds(unsigned int cause, uint8_t *out, size_t max);

/* Takes a device's peer wait (engine/peers/peers.h) out of its busy time, then
 * out of its unresolved time (and unresolved GPU-bound); @wait gets it. */
void ig_report_peer_carve(const struct ig_engine *e, int ordinal, uint64_t *busy,
			  uint64_t *unres, uint64_t *unres_gpu, uint64_t *wait);

/* The steps (report_steps.c): the object of device @dev, or with @job
 * of the job (the device with the most whole steps). */
struct json_object *ig_report_steps_json(const struct ig_engine *e, int dev,
					 bool job);
/* Those of process @pid (on the device it has most whole steps on). */
struct json_object *ig_report_steps_json_pid(const struct ig_engine *e,
					     uint32_t pid);
void ig_report_steps_text(const struct ig_engine *e, FILE *out);

#endif
