/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Native stacks from the record stream alone: the addresses of each stack
 * (IG_REC_USTACK) and the names resolved while the process lived
 * (IG_REC_USYM), so that live tracing and `report` give the same frames.
 */
#ifndef IG_USTACKS_H
#define IG_USTACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "stream/records.h"
#include "stacks/proctab.h"

/* Frames after which the stack is cut. */
#define IG_TRUNC_NOFP	"[truncated: no frame pointers]"
#define IG_TRUNC_DEPTH	"[truncated: deeper than 32 frames]"

struct ig_ustacks;

struct ig_ustacks *ig_ustacks_new(void);
void ig_ustacks_free(struct ig_ustacks *t);
/* Keeps what a USTACK (with addresses) or USYM record says; ignores other
 * records and malformed ones.  0 or -ENOMEM. */
int ig_ustacks_on_record(struct ig_ustacks *t, const struct ig_hdr *rec);
/*
 * The frames of stack @id of process @tgid, innermost first, into
 * @frames[0..max): names that live as long as @t (that of an address never
 * named, until the next call); an address where functions were inlined
 * gives a frame for each (IG_USYMF_INLINED).  The frame-pointer walk
 * is cut at the first address in no executable mapping, and a stack that
 * neither ends at a null frame pointer (IG_USF_END) nor in a start
 * routine (_start, start_thread, clone) ends with
 * IG_TRUNC_NOFP (IG_TRUNC_DEPTH when the walk filled every slot): code
 * built without frame pointers ends the walk or sends it astray.  An
 * address never named is "[0x...]".  Returns the count, or -ENOENT.
 */
int ig_ustacks_frames(struct ig_ustacks *t, __u32 tgid, __u64 id,
		      const char **frames, int max);
/* Stacks held; with @nsyms, the names held. */
size_t ig_ustacks_count(const struct ig_ustacks *t, size_t *nsyms);

/* Which processes are gone (@gone, ascending; with @all every process
 * is), and which of their stacks are still wanted (shown in a report):
 * the (process, stack id) pairs of @keep, sorted by
 * ig_proctab_pair_cmp()'s order.  The rest of theirs can go.  The caller
 * hands both lists whole, so a table decides each stack on its own. */
struct ig_stk_forget {
	const __u32 *gone;
	size_t ngone;
	bool all;
	const struct ig_proctab_pair *keep;
	size_t nkeep;
};

static inline bool ig_stk_forget_gone(const struct ig_stk_forget *f,
				      __u32 tgid)
{
	size_t lo = 0, hi = f->ngone;

	if (f->all)
		return true;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->gone[mid] == tgid)
			return true;
		if (f->gone[mid] < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static inline bool ig_stk_forget_keeps(const struct ig_stk_forget *f,
				       __u32 tgid, __u64 id)
{
	size_t lo = 0, hi = f->nkeep;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ig_proctab_pair *k = &f->keep[mid];

		if (k->tgid == tgid && k->key == id)
			return true;
		if (k->tgid < tgid || (k->tgid == tgid && k->key < id))
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Frees the stacks of gone processes that @f does not keep, and the names
 * that no stack kept uses.  0, or -ENOMEM with nothing freed of the
 * table it was at (a later call frees it). */
int ig_ustacks_forget(struct ig_ustacks *t, const struct ig_stk_forget *f);

/*
 * Bounds for a tracer left running: the stacks, as many as the kernel side
 * remembers having sent (bpf/ustack.bpf.h ustacks_sent), and the names of
 * their addresses.  Once full, ig_ustacks_trim evicts the stacks seen
 * longest ago down to three quarters, but for those @f->keep holds
 * (@f->all set), and past IG_USYMS_MAX names the names no
 * stack left uses.  A charge to an evicted stack shows no native frames.
 */
#define IG_USTACKS_MAX	16384
#define IG_USYMS_MAX	32768
bool ig_ustacks_full(const struct ig_ustacks *t);
int ig_ustacks_trim(struct ig_ustacks *t, const struct ig_stk_forget *f);
void ig_ustacks_evicted(const struct ig_ustacks *t, uint64_t *stacks, uint64_t *syms);

#endif
