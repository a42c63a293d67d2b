// SPDX-License-Identifier: GPL-2.0
/* Records moved into another frame (user/stream/remap.c): every record
 * type of bpf/records.def has its line in bpf/record_fields.def, each
 * field listed there moves (and nothing else does), only when its
 * condition holds, for each used entry of an array; the merged report's
 * fields (docs/design.md §4.9) are among them; tools/recshift.py moves
 * the same times as the table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "stream/recording.h"
#include "stream/remap.h"

#define T_SHIFT		1000000ULL
#define PID_HOST	(3u << 24)
#define CPU_BASE	10u
#define KEY_HOST	(3ULL << 56)
#define DEV_BASE	300u

static const char *const kinds[] = {
	[IG_FK_NONE] = "none", [IG_FK_TIME] = "time", [IG_FK_PID] = "pid",
	[IG_FK_CPU] = "cpu", [IG_FK_FILE_KEY] = "file key", [IG_FK_DEVICE] = "device",
};

/* As the merge of a 4th recording would, with other numbers. */
static uint64_t to(void *ctx, enum ig_field_kind kind, uint64_t v)
{
	unsigned int *calls = ctx;

	calls[kind]++;
	switch (kind) {
	case IG_FK_TIME: return v + T_SHIFT;
	case IG_FK_PID: return v | PID_HOST;
	case IG_FK_CPU: return v + CPU_BASE;
	case IG_FK_FILE_KEY: return v ^ KEY_HOST;
	case IG_FK_DEVICE: return v + DEV_BASE;
	case IG_FK_NONE: break;
	}
	return v;
}

static uint64_t get(const void *r, size_t off, size_t size)
{
	uint64_t v = 0;

	memcpy(&v, (const char *)r + off, size);	/* little-endian */
	return v;
}

static void put(void *r, size_t off, size_t size, uint64_t v)
{
	memcpy((char *)r + off, &v, size);
}

static void remap(void *r)
{
	unsigned int calls[8] = {};

	ig_remap_record(r, to, calls);
}

static void test_every_type_listed(void **state)
{
	static const struct { unsigned int type; const char *name; } types[] = {
#define IG_REC(type, value, name, min) { IG_REC_##type, #type },
#include "../../bpf/records.def"
#undef IG_REC
	};
	char missing[512] = "";
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!ig_remap_listed(types[i].type))
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
				 " %s", types[i].name);
	if (missing[0])
		fail_msg("bpf/record_fields.def has no line for%s (IG_FIELDS_NONE when "
			 "the header's are its only times and pids)", missing);
	assert_false(ig_remap_listed(0));
	assert_false(ig_remap_listed(0x7fff));
}

/* The value a field of @kind starts with in these tests: not 0 nor ~0. */
static uint64_t start(unsigned int kind, unsigned int k)
{
	return (kind == IG_FK_TIME ? 5000000 : kind == IG_FK_FILE_KEY ? 0x1234567 : 7) + k;
}

static uint64_t moved(unsigned int kind, uint64_t v)
{
	unsigned int calls[8] = {};

	return to(calls, kind, v);
}

/* Bytes of a @type record that some line of the table may change. */
static void listed_bytes(unsigned int type, char *mask, size_t len)
{
	const struct ig_field *t;
	size_t n, i, k;

	memset(mask, 0, len);
	memset(mask, 1, sizeof(struct ig_hdr));
	t = ig_remap_table(&n);
	for (i = 0; i < n; i++) {
		if (t[i].type != type || t[i].kind == IG_FK_NONE)
			continue;
		for (k = 0; k < (t[i].stride ? t[i].max : 1u); k++)
			memset(mask + t[i].base + k * t[i].stride + t[i].off, 1, t[i].size);
	}
}

/* A record for line @f: all zeros but its header, its field (each entry's
 * with an array of @count used), and the condition as @met says. */
static size_t make(char *r, size_t cap, const struct ig_field *f, bool met,
		   uint64_t count)
{
	size_t len = ig_rec_min_size(f->type), k;

	if (len < sizeof(struct ig_hdr))
		len = sizeof(struct ig_hdr);
	if (f->stride && len < f->base + (size_t)f->max * f->stride)
		len = f->base + (size_t)f->max * f->stride;
	if (len < (size_t)f->off + f->size)
		len = (size_t)f->off + f->size;
	assert_true(len <= cap);
	memset(r, 0, cap);
	*(struct ig_hdr *)r = (struct ig_hdr){ .type = f->type, .size = len, .tid = 5,
					       .tgid = 4, .cpu = 2 | IG_HDR_LOST_BEFORE,
					       .ts = 1000 };
	if (f->when != IG_FW_ALWAYS)
		put(r, f->test_off, f->test_size, met ? f->value : 0);
	if (f->stride)
		put(r, f->count_off, f->count_size, count);
	for (k = 0; k < (f->stride ? f->max : 1u); k++)
		put(r, f->base + k * f->stride + f->off, f->size, start(f->kind, k));
	return len;
}

static void check_header(const char *r)
{
	const struct ig_hdr *h = (const void *)r;

	assert_int_equal(h->ts, 1000 + T_SHIFT);
	assert_int_equal(h->tid, 5 | PID_HOST);
	assert_int_equal(h->tgid, 4 | PID_HOST);
	assert_int_equal(h->cpu, (2 + CPU_BASE) | IG_HDR_LOST_BEFORE);
}

/* Each line: its field moves when its condition holds, for each used
 * entry, and no byte outside the header and the type's fields changes. */
static void test_every_field_moves(void **state)
{
	static _Alignas(8) char r[8192], was[8192], mask[8192];
	const struct ig_field *t;
	size_t n, i, k, b, len;
	int met;

	(void)state;
	t = ig_remap_table(&n);
	for (i = 0; i < n; i++) {
		const struct ig_field *f = &t[i];
		uint64_t used = f->stride ? f->max - 1u : 1;

		if (f->kind == IG_FK_NONE)
			continue;
		for (met = f->when == IG_FW_ALWAYS; met <= 1; met++) {
			len = make(r, sizeof(r), f, met, used);
			memcpy(was, r, len);
			remap(r);
			check_header(r);
			for (k = 0; k < (f->stride ? f->max : 1u); k++) {
				uint64_t v = get(r, f->base + k * f->stride + f->off, f->size);
				uint64_t want = met && k < used ? moved(f->kind, start(f->kind, k))
								: start(f->kind, k);

				if (v != want)
					fail_msg("%s line %zu (%s at %u, entry %zu, condition %s): %#llx, "
						 "want %#llx", ig_rec_type_name(f->type), i,
						 kinds[f->kind], f->off, k, met ? "met" : "unmet",
						 (unsigned long long)v, (unsigned long long)want);
			}
			listed_bytes(f->type, mask, len);
			for (b = 0; b < len; b++)
				if (!mask[b] && r[b] != was[b])
					fail_msg("%s: byte %zu changed, no line lists it",
						 ig_rec_type_name(f->type), b);
		}
	}
}

/* An array's entries past the record's size stay as they are. */
static void test_array_stops_at_size(void **state)
{
	static _Alignas(8) char r[8192];
	const struct ig_field *t;
	size_t n, i;
	int arrays = 0;

	(void)state;
	t = ig_remap_table(&n);
	for (i = 0; i < n; i++) {
		const struct ig_field *f = &t[i];

		if (!f->stride)
			continue;
		arrays++;
		make(r, sizeof(r), f, true, f->max);
		((struct ig_hdr *)r)->size = f->base + 2 * f->stride;
		remap(r);
		assert_int_equal(get(r, f->base + f->off, f->size), moved(f->kind, start(f->kind, 0)));
		assert_int_equal(get(r, f->base + f->stride + f->off, f->size),
				 moved(f->kind, start(f->kind, 1)));
		assert_int_equal(get(r, f->base + 2 * f->stride + f->off, f->size),
				 start(f->kind, 2));
	}
	assert_true(arrays >= 1);
}

/* What the merged report moved before the table (report_merge.c's own
 * remap): these must stay listed. */
static void test_merge_fields(void **state)
{
	static union { struct ig_hdr h; union ig_rec u; struct ig_launches l; } r;
	unsigned int k;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.h = (struct ig_hdr){ .type = IG_REC_OFFCPU, .size = sizeof(struct ig_offcpu),
			       .ts = 9000, .tid = 11, .tgid = 10, .cpu = 1 };
	r.u.o.t_off = 100;
	r.u.o.t_wake = 0;	/* none: stays */
	r.u.o.waker_tid = 21;
	r.u.o.waker_tgid = 20;
	r.u.o.prev_tid = 0;	/* none: stays */
	r.u.o.prev_tgid = 30;
	r.u.o.off_cpu = 3;
	r.u.o.arg = 0x77;	/* a futex address: not a file key */
	r.u.o.syscall = 202;
	remap(&r);
	assert_int_equal(r.h.ts, 9000 + T_SHIFT);
	assert_int_equal(r.u.o.t_off, 100 + T_SHIFT);
	assert_int_equal(r.u.o.t_wake, 0);
	assert_int_equal(r.u.o.waker_tid, 21 | PID_HOST);
	assert_int_equal(r.u.o.waker_tgid, 20 | PID_HOST);
	assert_int_equal(r.u.o.prev_tid, 0);
	assert_int_equal(r.u.o.prev_tgid, 30 | PID_HOST);
	assert_int_equal(r.u.o.off_cpu, 3 + CPU_BASE);
	assert_int_equal(r.u.o.arg, 0x77);
	assert_int_equal(r.u.o.syscall, 202);
	r.u.o.flags = IG_F_FILE_KEY;
	remap(&r);
	assert_int_equal(r.u.o.arg, 0x77 ^ KEY_HOST);

	memset(&r, 0, sizeof(r));
	r.h = (struct ig_hdr){ .type = IG_REC_PROC, .size = sizeof(struct ig_proc) };
	r.u.p.kind = IG_PROC_EXIT;
	r.u.p.ppid = 9;		/* the exit code */
	remap(&r);
	assert_int_equal(r.u.p.ppid, 9);
	r.u.p.kind = IG_PROC_FORK;
	remap(&r);
	assert_int_equal(r.u.p.ppid, 9 | PID_HOST);

	memset(&r, 0, sizeof(r));
	r.h = (struct ig_hdr){ .type = IG_REC_LAUNCHES, .size = sizeof(struct ig_launches) };
	r.l.n = 3;
	for (k = 0; k < IG_LBUF; k++)
		r.l.e[k].ts = 50 + k;
	r.l.e[1].ts = UINT64_MAX;	/* never: stays */
	remap(&r);
	assert_int_equal(r.l.e[0].ts, 50 + T_SHIFT);
	assert_int_equal(r.l.e[1].ts, UINT64_MAX);
	assert_int_equal(r.l.e[2].ts, 52 + T_SHIFT);
	assert_int_equal(r.l.e[3].ts, 53);

	memset(&r, 0, sizeof(r));
	r.h = (struct ig_hdr){ .type = IG_REC_NVWIN, .size = sizeof(struct ig_nvwin) };
	r.u.nw.device = 1;
	r.u.nw.t0 = 10;
	r.u.nw.t1 = 20;
	remap(&r);
	assert_int_equal(r.u.nw.device, 1 + DEV_BASE);
	assert_int_equal(r.u.nw.t0, 10 + T_SHIFT);
	assert_int_equal(r.u.nw.t1, 20 + T_SHIFT);

	r.h = (struct ig_hdr){ .type = IG_REC_NVML, .size = sizeof(struct ig_nvml) };
	r.u.n.device = 2;
	remap(&r);
	assert_int_equal(r.u.n.device, 2 + DEV_BASE);

	memset(&r, 0, sizeof(r));
	r.h = (struct ig_hdr){ .type = IG_REC_CUDA, .size = sizeof(struct ig_cuda) };
	r.u.c.t_begin = 1;
	r.u.c.t_wake = 2;
	r.u.c.last_submit = 3;
	r.u.c.stream = IG_STREAM_PTD_BIT | 11;	/* a per-process key */
	remap(&r);
	assert_int_equal(r.u.c.t_begin, 1 + T_SHIFT);
	assert_int_equal(r.u.c.t_wake, 2 + T_SHIFT);
	assert_int_equal(r.u.c.last_submit, 3 + T_SHIFT);
	assert_int_equal(r.u.c.stream, IG_STREAM_PTD_BIT | 11);

	r.h = (struct ig_hdr){ .type = IG_REC_BIO, .size = sizeof(struct ig_bio) };
	r.u.b.t_issue = 4;
	remap(&r);
	assert_int_equal(r.u.b.t_issue, 4 + T_SHIFT);

	r.h = (struct ig_hdr){ .type = IG_REC_NCCL, .size = sizeof(struct ig_nccl) };
	r.u.nc.t_begin = 5;
	remap(&r);
	assert_int_equal(r.u.nc.t_begin, 5 + T_SHIFT);

	r.h = (struct ig_hdr){ .type = IG_REC_TASK, .size = sizeof(struct ig_task) };
	r.u.t.ppid = 6;
	remap(&r);
	assert_int_equal(r.u.t.ppid, 6 | PID_HOST);

	r.h = (struct ig_hdr){ .type = IG_REC_FILE, .size = sizeof(struct ig_file) };
	r.u.f.key = 0x55;
	remap(&r);
	assert_int_equal(r.u.f.key, 0x55 ^ KEY_HOST);
}

/* A type the table does not know: its header only. */
static void test_unknown_type(void **state)
{
	static union { struct ig_hdr h; char b[64]; } r;
	unsigned int calls[8] = {};

	(void)state;
	memset(r.b, 0x11, sizeof(r.b));
	r.h = (struct ig_hdr){ .type = 0x7ff, .size = sizeof(r.b), .ts = 1, .tid = 2,
			       .tgid = 0, .cpu = 3 };
	ig_remap_record(&r.h, to, calls);
	assert_int_equal(r.h.ts, 1 + T_SHIFT);
	assert_int_equal(r.h.tid, 2 | PID_HOST);
	assert_int_equal(r.h.tgid, 0);		/* none: stays */
	assert_int_equal(r.h.cpu, 3 + CPU_BASE);
	assert_int_equal(calls[IG_FK_TIME] + calls[IG_FK_PID] + calls[IG_FK_CPU], 3);
	assert_int_equal(calls[IG_FK_FILE_KEY] + calls[IG_FK_DEVICE], 0);
	for (unsigned int b = sizeof(r.h); b < sizeof(r.b); b++)
		assert_int_equal(r.b[b], 0x11);
}

/* Only the times move, as tools/recshift.py moves them. */
static uint64_t times_only(void *ctx, enum ig_field_kind kind, uint64_t v)
{
	(void)ctx;
	return kind == IG_FK_TIME ? v + T_SHIFT : v;
}

/* The records of a recording, one after another into @buf: its blocks
 * taken apart as they lie.  The count, or -1. */
static int read_raw(const char *path, char *buf, size_t cap, size_t *len)
{
	static char file[1 << 20];
	struct ig_file_header fh;
	size_t n, pos;
	FILE *f = fopen(path, "rb");
	int nrec = 0;

	if (!f)
		return -1;
	n = fread(file, 1, sizeof(file), f);
	fclose(f);
	if (n < sizeof(fh))
		return -1;
	memcpy(&fh, file, sizeof(fh));
	*len = 0;
	for (pos = fh.header_size; pos + sizeof(struct ig_block_hdr) <= n;) {
		struct ig_block_hdr bh;

		memcpy(&bh, file + pos, sizeof(bh));
		pos += sizeof(bh);
		if (bh.magic != IG_BLOCK_MAGIC || pos + bh.len > n || *len + bh.len > cap)
			return -1;
		memcpy(buf + *len, file + pos, bh.len);
		*len += bh.len;
		nrec += bh.nrec;
		pos += (bh.len + 7) & ~7u;
	}
	return nrec;
}

/*
 * tools/recshift.py moves what the table lists as a time (each line's
 * record as test_every_field_moves makes it, its condition met and not),
 * the header's and META's wall clock, and nothing else: a time added to
 * bpf/record_fields.def that it left where it was fails here.  Needs
 * python3, the compiler and the tree ($IG_TOP, else the current folder).
 */
static void test_recshift_agrees(void **state)
{
	static _Alignas(8) char recs[1 << 20], got[1 << 20];
	const char *top = getenv("IG_TOP") ? getenv("IG_TOP") : ".";
	char dir[] = "/tmp/ig-recshift-XXXXXX", in[64], out[64], script[4096], cmd[8192];
	struct ig_rec_writer *w;
	const struct ig_field *t;
	size_t n, i, len = 0, glen, off, b;
	struct ig_meta meta;
	int met, nrec = 0;

	(void)state;
	snprintf(script, sizeof(script), "%s/tools/recshift.py", top);
	if (access(script, R_OK) || system("python3 -c '' 2>/dev/null"))
		skip();
	assert_non_null(mkdtemp(dir));
	snprintf(in, sizeof(in), "%s/in.igrec", dir);
	snprintf(out, sizeof(out), "%s/out.igrec", dir);
	memset(&meta, 0, sizeof(meta));
	meta.h = (struct ig_hdr){ .type = IG_REC_META, .size = sizeof(meta), .ts = 1000 };
	meta.version = IG_FORMAT_VERSION;
	meta.realtime_ns = 1700000000000000000ULL;
	memcpy(recs, &meta, sizeof(meta));
	len = sizeof(meta);
	nrec = 1;
	t = ig_remap_table(&n);
	for (i = 0; i < n; i++)
		for (met = t[i].when == IG_FW_ALWAYS; met <= 1; met++) {
			len += make(recs + len, sizeof(recs) - len, &t[i], met,
				    t[i].stride ? t[i].max - 1u : 1);
			nrec++;
		}
	w = ig_rec_writer_open(in);
	assert_non_null(w);
	for (off = 0; off < len; off += ((struct ig_hdr *)(recs + off))->size)
		assert_int_equal(ig_rec_writer_put(w, (struct ig_hdr *)(recs + off)), 0);
	assert_int_equal(ig_rec_writer_close(w), 0);
	snprintf(cmd, sizeof(cmd), "python3 '%s' '%s' '%s' %llu", script, in, out,
		 (unsigned long long)T_SHIFT);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(read_raw(out, got, sizeof(got), &glen), nrec);
	assert_int_equal(glen, len);
	/* what recshift.py should have made of each record */
	for (off = 0; off < len; off += ((struct ig_hdr *)(recs + off))->size) {
		struct ig_hdr *h = (struct ig_hdr *)(recs + off);

		ig_remap_record(h, times_only, NULL);
		if (h->type == IG_REC_META && ((struct ig_meta *)h)->realtime_ns)
			((struct ig_meta *)h)->realtime_ns += T_SHIFT;
		for (b = 0; b < h->size; b++)
			if (recs[off + b] != got[off + b])
				fail_msg("recshift.py: byte %zu of a %s record (%zu bytes) is "
					 "%#x, the table makes it %#x", b, ig_rec_type_name(h->type),
					 (size_t)h->size, (unsigned char)got[off + b],
					 (unsigned char)recs[off + b]);
	}
	unlink(in);
	unlink(out);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_type_listed),
		cmocka_unit_test(test_every_field_moves),
		cmocka_unit_test(test_array_stops_at_size),
		cmocka_unit_test(test_merge_fields),
		cmocka_unit_test(test_unknown_type),
		cmocka_unit_test(test_recshift_agrees),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
