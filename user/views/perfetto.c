// SPDX-License-Identifier: GPL-2.0
/*
 * Perfetto's native trace format, written by hand with pbwire
 * (docs/design.md §7.8 says why not with protobuf-c).
 * Field numbers follow Perfetto's protos; tests/perfetto/perfetto-subset.proto
 * lists the ones used here and the tests decode every trace against it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "util/escape.h"
#include "util/outfile.h"
#include "views/pbwire.h"
#include "views/perfetto.h"

/* Trace, TracePacket */
enum { F_TRACE_PACKET = 1 };
enum {
	F_PKT_CLOCK_SNAPSHOT = 6, F_PKT_TIMESTAMP = 8, F_PKT_SEQ_ID = 10,
	F_PKT_TRACK_EVENT = 11, F_PKT_INTERNED = 12, F_PKT_SEQ_FLAGS = 13,
	F_PKT_DEFAULTS = 59, F_PKT_TRACK_DESC = 60, F_PKT_FIRST_ON_SEQ = 87,
};
enum { SEQ_CLEARED = 1, SEQ_NEEDS_STATE = 2 };
enum { F_CLOCK = 1, F_CLOCK_ID = 1, F_CLOCK_TS = 2 };
enum { F_DEFAULTS_CLOCK_ID = 58 };
enum { CLOCK_BOOTTIME_ID = 6, CLOCK_MONOTONIC_ID = 3 };
/* TrackEvent */
enum {
	F_TE_ANNOT = 4, F_TE_TYPE = 9, F_TE_NAME_IID = 10, F_TE_TRACK = 11,
	F_TE_NAME = 23, F_TE_FLOW = 47, F_TE_FLOW_END = 48,
};
enum { TYPE_BEGIN = 1, TYPE_END = 2, TYPE_INSTANT = 3 };
/* DebugAnnotation */
enum {
	F_DA_NAME_IID = 1, F_DA_BOOL = 2, F_DA_UINT = 3, F_DA_INT = 4,
	F_DA_DOUBLE = 5, F_DA_STRING = 6,
	F_DA_PTR = 7, F_DA_NAME = 10, F_DA_STRING_IID = 17,
};
/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor */
enum { F_TD_UUID = 1, F_TD_NAME = 2, F_TD_PROCESS = 3, F_TD_THREAD = 4, F_TD_PARENT = 5 };
enum { F_PD_PID = 1, F_PD_NAME = 6 };
enum { F_THD_PID = 1, F_THD_TID = 2, F_THD_NAME = 5 };
/* InternedData: one table per field; each entry is { iid = 1, name/str = 2 } */
enum { T_EVENT_NAME, T_ANNOT_NAME, T_STRING, T_COUNT };
static const uint32_t intern_field[T_COUNT] = { 2, 3, 29 };

#define SEQ_ID		1
#define TRACK_DEVICE	(1ull << 40)
#define TRACK_PROCESS	(2ull << 40)
#define TRACK_THREAD	(3ull << 40)
#define MAX_ANNOTS	32
#define INTERN_LEN	256	/* longer strings go inline */
#define SLOTS		(2 * IG_PERFETTO_INTERN_MAX)
/* what one slice can add to the tables, at most */
#define SLICE_ENTRIES	(1 + 2 * MAX_ANNOTS)
#define SLICE_BYTES	(SLICE_ENTRIES * (INTERN_LEN + 1))
#define OUT_FLUSH	(1u << 20)	/* packets go to the file in writes this large */
#define SEEN		64	/* strings remembered by address */

struct intern {
	uint32_t slot[SLOTS];		/* entry index + 1, 0 free */
	uint32_t off[IG_PERFETTO_INTERN_MAX], len[IG_PERFETTO_INTERN_MAX];
	uint32_t n;
	/* the entry last found for a string at this address, 0: none */
	struct { const char *s; uint32_t e; } seen[SEEN];
};

struct ig_perfetto {
	FILE *f;
	char *path;	/* the file ig_perfetto_open() made, removed on failure */
	int err;
	bool need_clear, first;
	struct ig_pb out;	/* whole packets not yet written, then the one being made */
	size_t pkt_at, pkt_mark;	/* the packet being made: its start, its body's */
	struct ig_pb ev, idata;
	struct intern tab[T_COUNT];
	char *arena;
	size_t arena_len;
	struct ig_perfetto_stats st;
};

static uint64_t load64(const char *s)
{
	uint64_t x;

	memcpy(&x, s, 8);
	return x;
}

static uint64_t load32(const char *s)
{
	uint32_t x;

	memcpy(&x, s, 4);
	return x;
}

/* Eight bytes a step, the last eight (or the first and last four) for the
 * tail: names are short, and each slice looks up several. */
static uint32_t hash_str(const char *s, size_t n)
{
	const uint64_t k = 0x9e3779b97f4a7c15ull;
	uint64_t h = n * k, x;
	size_t i;

	for (i = 0; i + 8 < n; i += 8)
		h = ((h ^ load64(s + i)) * k) ^ (h >> 29);
	if (n >= 8)
		x = load64(s + n - 8);
	else if (n >= 4)
		x = load32(s) | load32(s + n - 4) << 32;
	else
		x = n ? (uint8_t)s[0] | (uint8_t)s[n / 2] << 8 | (uint8_t)s[n - 1] << 16 : 0;
	h = (h ^ x) * k;
	return (uint32_t)(h >> 32);
}

/* @s is the @n bytes at @a and ends there (@a holds no NUL). */
static bool same_str(const char *s, const char *a, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] != a[i])
			return false;
	return !s[n];
}

static void intern_reset(struct ig_perfetto *w)
{
	int t;

	for (t = 0; t < T_COUNT; t++) {
		memset(w->tab[t].slot, 0, sizeof(w->tab[t].slot));
		memset(w->tab[t].seen, 0, sizeof(w->tab[t].seen));
		w->tab[t].n = 0;
	}
	w->arena_len = 0;
	w->need_clear = true;
}

/* A string field: protobuf strings are UTF-8, and a trace with other bytes
 * in one does not load, so those are replaced (escape.h). */
static void pb_text(struct ig_pb *b, uint32_t field, const char *s, size_t n)
{
	char buf[IG_UTF8_FIX_SIZE(256)], *t;

	if (ig_utf8_valid(s, n)) {
		ig_pb_bytes(b, field, s, n);
		return;
	}
	t = n <= 256 ? buf : malloc(IG_UTF8_FIX_SIZE(n));
	if (t)
		ig_pb_bytes(b, field, t, ig_utf8_fix(t, s, n));
	else
		ig_pb_bytes(b, field, "", 0);
	if (t != buf)
		free(t);
}

/* Returns the iid of @s in table @t, adding it to the packet's InternedData when new. */
static uint64_t intern(struct ig_perfetto *w, int t, const char *s, size_t n)
{
	struct intern *tab = &w->tab[t];
	uint32_t i = hash_str(s, n) & (SLOTS - 1), e;
	size_t m;

	for (; (e = tab->slot[i]); i = (i + 1) & (SLOTS - 1))
		if (tab->len[e - 1] == n && !memcmp(w->arena + tab->off[e - 1], s, n))
			return e;
	/* room was made before the slice began (make_room) */
	e = tab->n++;
	tab->off[e] = w->arena_len;
	tab->len[e] = n;
	memcpy(w->arena + w->arena_len, s, n);
	w->arena_len += n;
	tab->slot[i] = e + 1;
	m = ig_pb_begin(&w->idata, intern_field[t]);
	ig_pb_varint(&w->idata, 1, e + 1);
	pb_text(&w->idata, 2, s, n);
	ig_pb_end(&w->idata, m);
	w->st.interned++;
	return e + 1;
}

static void make_room(struct ig_perfetto *w)
{
	int t;

	for (t = 0; t < T_COUNT; t++)
		if (w->tab[t].n + SLICE_ENTRIES > IG_PERFETTO_INTERN_MAX)
			break;
	if (t < T_COUNT || w->arena_len + SLICE_BYTES > IG_PERFETTO_INTERN_BYTES) {
		intern_reset(w);
		w->st.resets++;
	}
}

/* Hands the packets made so far to the file. */
static int flush_out(struct ig_perfetto *w)
{
	size_t n = w->out.len;

	ig_pb_reset(&w->out);
	if (!w->err && n && fwrite(w->out.p, 1, n, w->f) != n)
		w->err = errno ? -errno : -EIO;
	return w->err;
}

/* The packet being made cannot be: the whole ones before it still go to
 * the file, and @err is what every later call returns. */
static int drop_packet(struct ig_perfetto *w, int err)
{
	w->out.len = w->pkt_at;
	w->out.err = 0;
	flush_out(w);
	if (!w->err)
		w->err = err;
	return w->err;
}

/* Ends the packet begun by pkt_start(): one Trace.packet. */
static int put_packet(struct ig_perfetto *w)
{
	if (w->err || w->out.err)
		return drop_packet(w, w->out.err);
	ig_pb_end(&w->out, w->pkt_mark);
	if (w->out.err)
		return drop_packet(w, w->out.err);
	w->st.bytes += w->out.len - w->pkt_at;
	w->st.packets++;
	return w->out.len >= OUT_FLUSH ? flush_out(w) : 0;
}

static void pkt_start(struct ig_perfetto *w)
{
	w->pkt_at = w->out.len;
	w->pkt_mark = ig_pb_begin(&w->out, F_TRACE_PACKET);
	ig_pb_varint(&w->out, F_PKT_SEQ_ID, SEQ_ID);
}

/* The packet's incremental state: cleared after a reset, needed always. */
static void put_seq_flags(struct ig_perfetto *w)
{
	uint32_t flags = SEQ_NEEDS_STATE;
	size_t m;

	if (w->need_clear) {
		flags |= SEQ_CLEARED;
		m = ig_pb_begin(&w->out, F_PKT_DEFAULTS);
		ig_pb_varint(&w->out, F_DEFAULTS_CLOCK_ID, CLOCK_MONOTONIC_ID);
		ig_pb_end(&w->out, m);
		if (w->first)
			ig_pb_varint(&w->out, F_PKT_FIRST_ON_SEQ, 1);
		w->need_clear = w->first = false;
	}
	ig_pb_varint(&w->out, F_PKT_SEQ_FLAGS, flags);
}

/*
 * Record times are CLOCK_MONOTONIC; Perfetto's trace clock is BOOTTIME.  A
 * snapshot of both lets it convert (they differ by time spent suspended).
 */
static int put_clock_snapshot(struct ig_perfetto *w)
{
	static const struct { uint32_t id; clockid_t c; } clk[] = {
		{ CLOCK_BOOTTIME_ID, CLOCK_BOOTTIME },
		{ CLOCK_MONOTONIC_ID, CLOCK_MONOTONIC },
	};
	struct timespec ts;
	size_t s, m;
	unsigned int i;

	pkt_start(w);
	s = ig_pb_begin(&w->out, F_PKT_CLOCK_SNAPSHOT);
	for (i = 0; i < sizeof(clk) / sizeof(clk[0]); i++) {
		if (clock_gettime(clk[i].c, &ts))
			return drop_packet(w, -errno);
		m = ig_pb_begin(&w->out, F_CLOCK);
		ig_pb_varint(&w->out, F_CLOCK_ID, clk[i].id);
		ig_pb_varint(&w->out, F_CLOCK_TS, ts.tv_sec * 1000000000ull + ts.tv_nsec);
		ig_pb_end(&w->out, m);
	}
	ig_pb_end(&w->out, s);
	put_seq_flags(w);	/* the sequence's first packet starts its state */
	return put_packet(w);
}

int ig_perfetto_fopen(struct ig_perfetto **out, FILE *f)
{
	struct ig_perfetto *w = calloc(1, sizeof(*w));

	/* the output buffer whole from the start, not regrown mid-trace */
	if (w && !ig_pb_reserve(&w->out, OUT_FLUSH + OUT_FLUSH / 4))
		w->arena = malloc(IG_PERFETTO_INTERN_BYTES);
	if (!w || !w->arena) {
		if (w)
			ig_pb_free(&w->out);
		free(w);
		fclose(f);
		return -ENOMEM;
	}
	w->f = f;
	w->first = true;
	intern_reset(w);
	*out = w;
	return put_clock_snapshot(w);
}

int ig_perfetto_open(struct ig_perfetto **out, const char *path)
{
	int fd = ig_outfile_open(path), err;
	FILE *f;

	if (fd < 0)
		return fd;
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	err = ig_perfetto_fopen(out, f);
	if (!err && !((*out)->path = strdup(path)))
		err = -ENOMEM;
	return err;
}

static int put_track(struct ig_perfetto *w, uint64_t uuid, uint64_t parent,
		     const char *name, void (*body)(struct ig_pb *, const void *),
		     const void *arg)
{
	size_t m;

	if (w->err)
		return w->err;
	pkt_start(w);
	m = ig_pb_begin(&w->out, F_PKT_TRACK_DESC);
	ig_pb_varint(&w->out, F_TD_UUID, uuid);
	if (parent)
		ig_pb_varint(&w->out, F_TD_PARENT, parent);
	if (name)
		pb_text(&w->out, F_TD_NAME, name, strlen(name));
	if (body)
		body(&w->out, arg);
	ig_pb_end(&w->out, m);
	return put_packet(w);
}

int ig_perfetto_device(struct ig_perfetto *w, const struct ig_tl_device *d)
{
	char name[32];

	if (!d->name)
		snprintf(name, sizeof(name), "GPU %u", d->id);
	return put_track(w, TRACK_DEVICE | d->id, d->pid ? TRACK_PROCESS | d->pid : 0,
			 d->name ? d->name : name, NULL, NULL);
}

static void process_desc(struct ig_pb *b, const void *arg)
{
	const struct ig_tl_thread *t = arg;
	size_t m = ig_pb_begin(b, F_TD_PROCESS);

	ig_pb_varint(b, F_PD_PID, t->pid);
	if (t->pcomm)
		pb_text(b, F_PD_NAME, t->pcomm, strlen(t->pcomm));
	ig_pb_end(b, m);
}

static void thread_desc(struct ig_pb *b, const void *arg)
{
	const struct ig_tl_thread *t = arg;
	size_t m = ig_pb_begin(b, F_TD_THREAD);

	ig_pb_varint(b, F_THD_PID, t->pid);
	ig_pb_varint(b, F_THD_TID, t->tid);
	if (t->comm)
		pb_text(b, F_THD_NAME, t->comm, strlen(t->comm));
	ig_pb_end(b, m);
}

/* The process track is repeated with each of its threads: Perfetto merges
 * descriptors with one uuid, and the writer keeps no per-process state. */
int ig_perfetto_thread(struct ig_perfetto *w, const struct ig_tl_thread *t)
{
	int err = put_track(w, TRACK_PROCESS | t->pid, 0, NULL, process_desc, t);

	return err ? err : put_track(w, TRACK_THREAD | t->tid, TRACK_PROCESS | t->pid,
				     NULL, thread_desc, t);
}

/*
 * The iid of @s, 0 when too long to intern.  Most strings come from the
 * same few addresses (names in tables, a thread's comm): a string at an
 * address seen before is checked against the entry found for it then,
 * which costs less than its length and hash.
 */
static uint64_t lookup(struct ig_perfetto *w, int t, const char *s)
{
	struct intern *tab = &w->tab[t];
	unsigned int c = ((uintptr_t)s >> 3 ^ (uintptr_t)s >> 9) & (SEEN - 1);
	uint32_t e = tab->seen[c].s == s ? tab->seen[c].e : 0;
	size_t n;

	if (e) {
		n = tab->len[e - 1];
		if (same_str(s, w->arena + tab->off[e - 1], n))
			return e;
	}
	n = strlen(s);
	if (n > INTERN_LEN)
		return 0;
	e = intern(w, t, s, n);
	tab->seen[c].s = s;
	tab->seen[c].e = e;
	return e;
}

/* A string field: interned when short, inline otherwise. */
static void put_str(struct ig_perfetto *w, int t, uint32_t f_iid, uint32_t f_inline,
		    const char *s)
{
	uint64_t iid = lookup(w, t, s);

	if (iid)
		ig_pb_varint(&w->ev, f_iid, iid);
	else
		pb_text(&w->ev, f_inline, s, strlen(s));
}

static void put_annot(struct ig_perfetto *w, const struct ig_tl_annot *a)
{
	size_t m = ig_pb_begin(&w->ev, F_TE_ANNOT);

	put_str(w, T_ANNOT_NAME, F_DA_NAME_IID, F_DA_NAME, a->name);
	switch (a->type) {
	case IG_TL_STR:
		put_str(w, T_STRING, F_DA_STRING_IID, F_DA_STRING, a->s ? a->s : "");
		break;
	case IG_TL_UINT:
		ig_pb_varint(&w->ev, F_DA_UINT, a->u);
		break;
	case IG_TL_INT:
		ig_pb_sint(&w->ev, F_DA_INT, a->i);
		break;
	case IG_TL_PTR:
		ig_pb_varint(&w->ev, F_DA_PTR, a->u);
		break;
	case IG_TL_DOUBLE: {
		uint64_t bits;

		memcpy(&bits, &a->d, sizeof(bits));
		ig_pb_fixed64(&w->ev, F_DA_DOUBLE, bits);
		break;
	}
	case IG_TL_BOOL:
		ig_pb_varint(&w->ev, F_DA_BOOL, !!a->u);
		break;
	}
	ig_pb_end(&w->ev, m);
}

static void put_detail(struct ig_perfetto *w, const struct ig_tl_slice *s)
{
	unsigned int i;

	put_str(w, T_EVENT_NAME, F_TE_NAME_IID, F_TE_NAME, s->name);
	for (i = 0; i < s->n_flow_out; i++)
		ig_pb_fixed64(&w->ev, F_TE_FLOW, s->flow_out[i]);
	w->st.flows += s->n_flow_out;
	for (i = 0; i < s->n_flow_in; i++)
		ig_pb_fixed64(&w->ev, F_TE_FLOW_END, s->flow_in[i]);
	for (i = 0; i < s->n_annots; i++)
		put_annot(w, &s->annots[i]);
}

static int put_event(struct ig_perfetto *w, uint64_t ts, int type, uint64_t track,
		     const struct ig_tl_slice *s)
{
	ig_pb_reset(&w->ev);
	ig_pb_reset(&w->idata);
	ig_pb_varint(&w->ev, F_TE_TYPE, type);
	ig_pb_varint(&w->ev, F_TE_TRACK, track);
	if (s)
		put_detail(w, s);
	pkt_start(w);
	ig_pb_varint(&w->out, F_PKT_TIMESTAMP, ts);
	put_seq_flags(w);
	ig_pb_bytes(&w->out, F_PKT_TRACK_EVENT, w->ev.p, w->ev.len);
	if (w->idata.len)
		ig_pb_bytes(&w->out, F_PKT_INTERNED, w->idata.p, w->idata.len);
	if (w->ev.err || w->idata.err)
		return drop_packet(w, w->ev.err ? w->ev.err : w->idata.err);
	return put_packet(w);
}

int ig_perfetto_slice(struct ig_perfetto *w, const struct ig_tl_slice *s)
{
	uint64_t track;
	int err;

	if (w->err)
		return w->err;
	if (!s->name || s->n_annots > MAX_ANNOTS || s->kind > IG_TL_SUBMIT)
		return -EINVAL;
	track = IG_TL_KIND_IS_DEVICE(s->kind) ? TRACK_DEVICE | s->device
					      : TRACK_THREAD | s->tid;
	make_room(w);
	if (s->kind == IG_TL_SUBMIT) {
		w->st.instants++;
		return put_event(w, s->ts, TYPE_INSTANT, track, s);
	}
	err = put_event(w, s->ts, TYPE_BEGIN, track, s);
	if (!err)
		err = put_event(w, s->ts + s->dur, TYPE_END, track, NULL);
	w->st.slices += !err;
	return err;
}

void ig_perfetto_stats(const struct ig_perfetto *w, struct ig_perfetto_stats *st)
{
	*st = w->st;
}

static int close_writer(struct ig_perfetto *w, bool keep)
{
	int err;

	if (!w)
		return 0;
	errno = 0;
	err = keep ? flush_out(w) : 0;
	if (fflush(w->f) && !err)
		err = errno ? -errno : -EIO;
	/* a cut trace is no trace: the file goes */
	if ((err || !keep) && w->path)
		ig_outfile_discard(w->path, fileno(w->f));
	free(w->path);
	if (fclose(w->f) && !err)
		err = errno ? -errno : -EIO;
	ig_pb_free(&w->out);
	ig_pb_free(&w->ev);
	ig_pb_free(&w->idata);
	free(w->arena);
	free(w);
	return err;
}

int ig_perfetto_close(struct ig_perfetto *w)
{
	return close_writer(w, true);
}

void ig_perfetto_abandon(struct ig_perfetto *w)
{
	close_writer(w, false);
}
