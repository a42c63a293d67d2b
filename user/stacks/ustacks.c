// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stacks/proctab.h"
#include "stacks/symbolize.h"
#include "stacks/ustacks.h"
#include "util/util.h"

/* as many addresses as the stack has: a window keeps every stack it saw */
struct stack {
	__u16 nips, flags;
	__u64 ips[];
};

struct sym {
	__u32 flags;
	__u32 nframes;		/* names in @name, each NUL-terminated */
	char name[];
};

/* The name of every address in no mapping (a walk astray reads data as
 * return addresses, each one new): one shared value, not one each. */
static struct sym unmapped = { .flags = IG_USYMF_UNMAPPED, .nframes = 0 };

static void val_free(void *v)
{
	if (v != &unmapped)
		free(v);
}

struct ig_ustacks {
	/* (tgid, id) -> struct stack, used: the clock when last seen;
	 * (tgid, address) -> struct sym */
	struct ig_proctab stacks, syms;
	__u32 clock;		/* counts the stack records seen */
	__u64 evicted, evicted_syms;
	char hex[IG_USTACK_DEPTH][24];	/* names of unnamed addresses */
};

struct ig_ustacks *ig_ustacks_new(void)
{
	return calloc(1, sizeof(struct ig_ustacks));
}

void ig_ustacks_free(struct ig_ustacks *t)
{
	if (t) {
		ig_proctab_free(&t->stacks, val_free);
		ig_proctab_free(&t->syms, val_free);
	}
	free(t);
}

/* The clock of the stack records: 0 stays "free" (it wraps after 2^32
 * records; eviction then takes some recent ones early, no more). */
static __u32 tick(struct ig_ustacks *t)
{
	if (!++t->clock)
		t->clock = 1;
	return t->clock;
}

static int on_ustack(struct ig_ustacks *t, const struct ig_ustack *r)
{
	struct ig_proctab_ent *e;
	struct stack *s;
	__u32 now;

	if (r->flags & IG_USF_REF) {
		e = ig_proctab_get(&t->stacks, r->h.tgid, r->id);
		if (e)
			e->used = tick(t);
		return 0;
	}
	if (!r->nips || r->nips > IG_USTACK_DEPTH ||
	    r->h.size < offsetof(struct ig_ustack, ips) + 8 * (size_t)r->nips)
		return 0;
	e = ig_proctab_get(&t->stacks, r->h.tgid, r->id);
	if (e) {
		e->used = tick(t);
		return 0;
	}
	s = malloc(sizeof(*s) + 8 * (size_t)r->nips);
	if (!s)
		return -ENOMEM;
	s->nips = r->nips;
	s->flags = r->flags;
	memcpy(s->ips, r->ips, 8 * (size_t)r->nips);
	now = tick(t);
	e = ig_proctab_add(&t->stacks, r->h.tgid, r->id);
	if (!e) {
		free(s);
		return -ENOMEM;
	}
	e->val = s;
	e->used = now;
	return 0;
}

/* Keeps @s as the name of @r's address. */
static int sym_set(struct ig_ustacks *t, const struct ig_usym *r, struct sym *s)
{
	if (!ig_proctab_set(&t->syms, r->h.tgid, r->ip, s, val_free))
		return -ENOMEM;
	return 0;
}

static int on_usym(struct ig_ustacks *t, const struct ig_usym *r)
{
	size_t len = r->h.size - sizeof(*r);
	struct sym *s;

	if (r->len < len)
		len = r->len;
	if (!len)
		return 0;
	if (r->flags & IG_USYMF_UNMAPPED)
		return sym_set(t, r, &unmapped);
	s = malloc(sizeof(*s) + len);
	if (!s)
		return -ENOMEM;
	s->flags = r->flags;
	s->nframes = 1;
	memcpy(s->name, r->name, len);
	s->name[len - 1] = 0;
	if (r->flags & IG_USYMF_INLINED) {
		char *p;

		for (p = s->name; (p = strchr(p, '\n')); s->nframes++)
			*p++ = 0;
	}
	return sym_set(t, r, s);
}

int ig_ustacks_on_record(struct ig_ustacks *t, const struct ig_hdr *rec)
{
	if (rec->type == IG_REC_USTACK &&
	    rec->size >= offsetof(struct ig_ustack, ips))
		return on_ustack(t, (const struct ig_ustack *)rec);
	if (rec->type == IG_REC_USYM && rec->size > sizeof(struct ig_usym))
		return on_usym(t, (const struct ig_usym *)rec);
	return 0;
}

/* The function a symbol's address is in: its outermost frame (the others
 * are inlined into it), up to " (file:line)" or "+0xOFFSET (library)". */
static const char *outer_frame(const struct sym *sy, size_t *len)
{
	const char *p = sy->name, *paren, *plus;
	__u32 k;

	for (k = 1; k < sy->nframes; k++)
		p += strlen(p) + 1;
	paren = strstr(p, " (");
	*len = paren ? (size_t)(paren - p) : strlen(p);
	plus = strstr(p, "+0x");
	if (plus && (size_t)(plus - p) < *len)
		*len = (size_t)(plus - p);
	return p;
}

/*
 * Whether the leaf's return address (@sy, the stack's second address) is
 * in the innermost frame's own function.  A return address found for a
 * frameless leaf is in its caller, never in itself; one in the function
 * itself is arm64's link register left from a call that function made and
 * that returned (bpf/ustack.bpf.h, ustack_leaf_arch()).
 */
static bool same_function(struct ig_ustacks *t, __u32 tgid, __u64 ip0,
			  const struct sym *sy)
{
	__u64 ip = ig_ustack_lookup_ip(ip0, 0);
	const struct ig_proctab_ent *y = ig_proctab_get(&t->syms, tgid, ip);
	const struct sym *s0 = y ? y->val : NULL;
	const char *a, *b;
	size_t la, lb;

	if (!s0)
		return false;
	a = outer_frame(s0, &la);
	b = outer_frame(sy, &lb);
	return la == lb && la && !memcmp(a, b, la) && a[0] != '[';
}

int ig_ustacks_frames(struct ig_ustacks *t, __u32 tgid, __u64 id,
		      const char **frames, int max)
{
	const struct ig_proctab_ent *e = ig_proctab_get(&t->stacks, tgid, id);
	const struct stack *s = e ? e->val : NULL;
	__u32 last = 0;
	int i, n = 0;

	if (!s)
		return -ENOENT;
	for (i = 0; i < s->nips && n < max; i++) {
		__u64 ip = ig_ustack_lookup_ip(s->ips[i], i);
		const struct ig_proctab_ent *y = ig_proctab_get(&t->syms, tgid, ip);
		const struct sym *sy = y ? y->val : NULL;

		if (sy && (sy->flags & IG_USYMF_UNMAPPED))
			break;
		if (i == 1 && (s->flags & IG_USF_LEAF) && sy &&
		    same_function(t, tgid, s->ips[0], sy))
			continue;	/* a stale link register, no caller */
		last = sy ? sy->flags : 0;
		if (sy) {
			const char *p = sy->name;
			__u32 k;

			for (k = 0; k < sy->nframes && n < max; k++) {
				frames[n++] = p;
				p += strlen(p) + 1;
			}
			continue;
		}
		snprintf(t->hex[i], sizeof(t->hex[i]), "[%#llx]",
			 (unsigned long long)ip);
		frames[n++] = t->hex[i];
	}
	if (n < max && !(last & IG_USYMF_ROOT) &&
	    !(i == s->nips && (s->flags & IG_USF_END)))
		frames[n++] = i == s->nips && (s->flags & IG_USF_FULL) ?
			      IG_TRUNC_DEPTH : IG_TRUNC_NOFP;
	return n;
}

size_t ig_ustacks_count(const struct ig_ustacks *t, size_t *nsyms)
{
	if (nsyms)
		*nsyms = t->syms.n;
	return t->stacks.n;
}

bool ig_ustacks_full(const struct ig_ustacks *t)
{
	return t->stacks.n >= IG_USTACKS_MAX;
}

void ig_ustacks_evicted(const struct ig_ustacks *t, uint64_t *stacks, uint64_t *syms)
{
	*stacks = t->evicted;
	*syms = t->evicted_syms;
}

/* ---- forgetting the processes that are gone ---- */

struct forget {
	const struct ig_stk_forget *f;
	const struct ig_ustacks *t;
	struct ig_proctab_pair *ips;	/* of the stacks that stay, sorted */
	size_t nips;
	__u32 young;		/* trimming: stacks this old or younger stay */
	bool trim;
};

/* Stack records seen since @used: the oldest first, across a wrap too. */
static __u32 age(const struct ig_ustacks *t, __u32 used)
{
	return t->clock - used;
}

static bool stack_goes(void *ctx, const struct ig_proctab_ent *e)
{
	const struct forget *g = ctx;

	if (g->trim && age(g->t, e->used) <= g->young)
		return false;
	return ig_stk_forget_gone(g->f, e->tgid) &&
	       !ig_stk_forget_keeps(g->f, e->tgid, e->key);
}

static bool sym_goes(void *ctx, const struct ig_proctab_ent *e)
{
	const struct forget *g = ctx;
	struct ig_proctab_pair k = { e->tgid, e->key };

	return ig_stk_forget_gone(g->f, e->tgid) &&
	       !(g->nips && bsearch(&k, g->ips, g->nips, sizeof(k),
				    ig_proctab_pair_cmp));
}

/* The addresses of the stacks of gone processes that stay, sorted. */
static int kept_ips(const struct ig_ustacks *t, struct forget *g)
{
	struct ig_proctab_it it = { 0 };
	const struct ig_proctab_ent *e;
	size_t n = 0, cap = 0;
	unsigned int k;

	while ((e = ig_proctab_next(&t->stacks, &it))) {
		const struct stack *s = e->val;

		if (!ig_stk_forget_gone(g->f, e->tgid))
			continue;
		for (k = 0; k < s->nips; k++) {
			if (!ig_grow_from((void **)&g->ips, &cap, n, sizeof(*g->ips), 256))
				return -ENOMEM;
			g->ips[n++] = (struct ig_proctab_pair){
				e->tgid, ig_ustack_lookup_ip(s->ips[k], k) };
		}
	}
	g->nips = n;
	if (n)
		qsort(g->ips, n, sizeof(*g->ips), ig_proctab_pair_cmp);
	return 0;
}

int ig_ustacks_forget(struct ig_ustacks *t, const struct ig_stk_forget *f)
{
	struct forget g = { .f = f, .t = t };
	int err;

	ig_proctab_drop_where(&t->stacks, stack_goes, &g, val_free);
	/* names only once the stacks that use them are known */
	err = kept_ips(t, &g);
	if (!err)
		ig_proctab_drop_where(&t->syms, sym_goes, &g, val_free);
	free(g.ips);
	return err;
}

int ig_ustacks_trim(struct ig_ustacks *t, const struct ig_stk_forget *f)
{
	struct forget g = { .f = f, .t = t, .trim = true };
	size_t n = t->stacks.n, stay = IG_USTACKS_MAX / 4 * 3;
	int err = 0;

	if (n > stay) {
		if (ig_proctab_age_at(&t->stacks, t->clock, stay - 1, &g.young))
			return -ENOMEM;
		ig_proctab_drop_where(&t->stacks, stack_goes, &g, val_free);
		t->evicted += n - t->stacks.n;
	}
	/* names only past their own bound, and only those no stack kept
	 * uses: the symbolizer names an address once */
	n = t->syms.n;
	if (n > IG_USYMS_MAX)
		err = kept_ips(t, &g);
	if (!err && n > IG_USYMS_MAX) {
		ig_proctab_drop_where(&t->syms, sym_goes, &g, val_free);
		t->evicted_syms += n - t->syms.n;
	}
	free(g.ips);
	return err;
}
