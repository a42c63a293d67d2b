/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The threads' states at the start (docs/design.md §5.14): what /proc
 * said a followed thread was waiting for when tracing began
 * (IG_REC_TSTATE), given to the off-CPU interval the kernel saw end
 * without its start (IG_F_AT_ATTACH); the time attribution gave through
 * such an interval is counted per cause and per gap, "recovered at
 * attach".
 */
#ifndef IG_ENGINE_ATATTACH_H
#define IG_ENGINE_ATATTACH_H

#include <stdbool.h>
#include <stdint.h>
#include "engine/model.h"

/* An interval whose reason /proc gave (engine only, never in a record). */
#define IG_F_STATE_READ		(1u << 15)

struct ig_tstate;
struct ig_offcpu;
struct walk;

void ig_atattach_on_rec(struct ig_engine *e, const struct ig_tstate *r);
/* @o (a copy of the record) began before tracing: its reason, arguments
 * and file from the thread's state at the start, where one was read
 * while it still waited. */
void ig_atattach_apply(struct ig_engine *e, struct ig_offcpu *o);
/* The walk gave @ns to cause @c through an interval recovered at attach. */
void ig_atattach_charge(struct walk *w, int c, uint64_t ns);
/* The idle gap of @device starting at @t0 had @ns recovered at attach. */
void ig_atattach_gap(struct ig_engine *e, int device, uint64_t t0, uint64_t ns);
/* Seconds of cause @c of the idle causes recovered at attach. */
uint64_t ig_atattach_cause_ns(const struct ig_engine *e, int c);
/* Nanoseconds of the idle gap of @device at @t0 recovered at attach. */
uint64_t ig_atattach_gap_ns(const struct ig_engine *e, int device, uint64_t t0);
/* The state read of thread @tid, or NULL.  Its pad[0] is set once it
 * explained a wait. */
const struct ig_tstate *ig_atattach_state(const struct ig_engine *e, uint32_t tid);
/* The states read, one by one (@it from 0); NULL after the last. */
const struct ig_tstate *ig_atattach_next(const struct ig_engine *e, uint32_t *it);
void ig_atattach_free(struct ig_engine *e);

#endif
