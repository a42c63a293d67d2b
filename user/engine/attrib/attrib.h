/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Attribution's parts, for one another only:
 *   attrib.c   the walk over a thread's states, following wakers
 *   causes.c   the cause rules that need no other thread
 *   detail.c   per-cause time and its bounded detail tables
 * The walk calls the rules, the rules call the accounting; nothing calls
 * back up.
 */
#ifndef IG_ENGINE_ATTRIB_H
#define IG_ENGINE_ATTRIB_H

#include "engine/attrib/walk.h"
#include "engine/attrib/atattach.h"

/* ---- detail.c ---- */
/* The detail entry (kind, tid, pid, k, name) of @c, @ns added to it. */
struct ig_detail *ig_detail_add(struct ig_cause_acc *c, uint8_t kind,
				uint32_t tid, uint32_t pid, uint64_t k,
				const char *name, uint64_t ns);
/* Give @ns to cause @c of the walk's set. */
struct ig_cause_acc *ig_detail_cause_add(struct walk *w, enum ig_cause c,
					 uint64_t ns);
void ig_detail_unknown(struct walk *w, uint64_t ns, const char *why);

/* ---- causes.c ---- */
void ig_causes_oncpu(struct walk *w, const struct ig_thread *th,
		     uint64_t x, uint64_t y);
void ig_causes_runnable(struct walk *w, const struct ig_ival *iv, uint64_t ns);
void ig_causes_storage(struct walk *w, const struct ig_thread *th,
		       const struct ig_ival *iv, uint64_t ns);
void ig_causes_fault(struct walk *w, const struct ig_thread *th,
		     const struct ig_ival *iv, uint64_t ns);
void ig_causes_network(struct walk *w, const struct ig_ival *iv, uint64_t ns);
/* Woken by an interrupt, the kernel or a timer, not by a thread. */
bool ig_causes_woken_by_kernel(const struct ig_ival *iv);
void ig_causes_kernel_woken(struct walk *w, const struct ig_thread *th,
			    const struct ig_ival *iv, uint64_t ns);
void ig_causes_untracked(struct walk *w, const struct ig_ival *iv, uint64_t ns);

#endif
