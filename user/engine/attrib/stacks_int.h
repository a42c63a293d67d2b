/* SPDX-License-Identifier: GPL-2.0 */
/* The stack tables, shared by stacks.c (recording and accounting) and
 * stacks_out.c (naming them, the folded output). */
#ifndef IG_ENGINE_STACKS_INT_H
#define IG_ENGINE_STACKS_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include "engine/attrib/stacks.h"
#include "engine/names.h"

/* A table entry of a gone process: its stack stays named. */
struct pin {
	uint32_t tgid;
	uint64_t py, nat;
};

struct ig_stacks {
	struct ig_pynames *py;
	struct ig_ustacks *nat;
	struct ig_stk_tab tab[2][IG_C__MAX][IG_SR__MAX];
	/* gone processes whose stacks are to go, or went but for those an
	 * entry above holds (pinned); sorted */
	uint32_t *gone;
	size_t ngone, capgone;
	bool sweep;		/* some are to go */
	uint64_t next_sweep;	/* trace time */
	struct pin *pins;	/* by tgid, during a sweep */
	size_t npins;
};

#endif
