/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Flame-graph folded stacks ("root;outer;...;inner N"), one line per
 * distinct stack, weighted by nanoseconds, for flamegraph.pl, speedscope
 * and inferno.  The root is the cause the time went to ("storage").
 */
#ifndef IG_FOLDED_H
#define IG_FOLDED_H

#include <stdint.h>
#include <stdio.h>

struct ig_folded;

struct ig_folded *ig_folded_new(void);
void ig_folded_free(struct ig_folded *f);
/* Adds @ns to the stack @frames[0..n) (innermost first, as stack records
 * and JSON hold them) under @root.  A ';' in a name becomes ':', control
 * characters become ' ', an empty name "[unknown]".  0 or -ENOMEM. */
int ig_folded_add(struct ig_folded *f, const char *root,
		  const char *const *frames, size_t n, uint64_t ns);
/* The stacks in byte order of their text, equal stacks summed, those of
 * no weight left out.  0, or -EIO when writing fails. */
int ig_folded_write(struct ig_folded *f, FILE *out);

#endif
