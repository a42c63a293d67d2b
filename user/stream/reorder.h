/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Puts records in timestamp order.  Each CPU's records reach the ring
 * buffer in order, but CPUs interleave with small skews; a record is
 * released once one newer by @window_ns has been seen (or at flush).
 * Records with equal timestamps keep their arrival order.
 */
#ifndef IG_REORDER_H
#define IG_REORDER_H

#include "stream/records.h"

struct ig_reorder;
typedef void (*ig_reorder_out)(const struct ig_hdr *rec, void *ctx);

/* A record user space wrote (IG_REC_USER_BASE and up) counts as seen
 * @user_lag_ns before its time: it is stamped when written, while the ring
 * buffer may still hold older kernel records, as long as its reader is
 * behind (docs/design.md §3.4).  IG_REORDER_NO_LAG: it moves nothing, and
 * ig_reorder_advance() says how far the kernel's records are whole. */
#define IG_REORDER_NO_LAG	(~0ULL)
struct ig_reorder *ig_reorder_new(__u64 window_ns, __u64 user_lag_ns,
				  ig_reorder_out out, void *ctx);
/* Every kernel record stamped before @ts has been pushed (the ring buffer
 * was found empty then): what is older by the window leaves. */
void ig_reorder_advance(struct ig_reorder *r, __u64 ts);
/* Copies @rec.  -ENOMEM on failure. */
int ig_reorder_push(struct ig_reorder *r, const struct ig_hdr *rec);
void ig_reorder_flush(struct ig_reorder *r);
/* Records seen older than what was already released (ordering lost). */
unsigned long ig_reorder_late(const struct ig_reorder *r);
void ig_reorder_free(struct ig_reorder *r);

#endif
