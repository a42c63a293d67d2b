// SPDX-License-Identifier: GPL-2.0
/* Recording format round trip, truncated and corrupt files, reordering. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "stream/recording.h"
#include "stream/reorder.h"

static char path[64];

static void make_path(void)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/ig-rec-test.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
}

struct collected {
	size_t n;
	__u16 types[64];
	__u64 ts[64];
};

static int collect(const struct ig_hdr *rec, void *ctx)
{
	struct collected *c = ctx;

	if (c->n < 64) {
		c->types[c->n] = rec->type;
		c->ts[c->n] = rec->ts;
	}
	c->n++;
	return 0;
}

/* META, 3 OFFCPU, a record of a type from the future, END. */
static void write_sample(const char *p)
{
	struct ig_rec_writer *w = ig_rec_writer_open(p);
	struct ig_meta m = { .h = { IG_REC_META, sizeof(m), 0, 0, 0, 100 },
			     .version = IG_FORMAT_VERSION };
	struct ig_offcpu o = { .h = { IG_REC_OFFCPU, sizeof(o), 0, 7, 7, 0 } };
	struct { struct ig_hdr h; __u64 x; } future = { { 0x1ff, sizeof(future), 0, 0, 0, 150 }, 1 };
	struct ig_end e = { .h = { IG_REC_END, sizeof(e), 0, 0, 0, 400 } };
	int i;

	assert_non_null(w);
	assert_int_equal(ig_rec_writer_put(w, &m.h), 0);
	assert_int_equal(ig_rec_writer_flush(w), 0);	/* a block of its own */
	for (i = 0; i < 3; i++) {
		o.h.ts = 200 + i;
		o.t_off = 190 + i;
		assert_int_equal(ig_rec_writer_put(w, &o.h), 0);
		assert_int_equal(ig_rec_writer_flush(w), 0);
	}
	assert_int_equal(ig_rec_writer_put(w, &future.h), 0);
	assert_int_equal(ig_rec_writer_put(w, &e.h), 0);
	assert_int_equal(ig_rec_writer_close(w), 0);
}

static long file_size(const char *p)
{
	FILE *f = fopen(p, "rb");
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fclose(f);
	return n;
}

static void round_trip(void **state)
{
	struct ig_read_result res;
	struct collected c = {};

	(void)state;
	make_path();
	write_sample(path);
	assert_int_equal(ig_recording_read(path, false, collect, &c, &res), 0);
	assert_true(res.complete);
	assert_int_equal(res.records, 6);	/* the future record counted... */
	assert_int_equal(c.n, 5);		/* ...but not delivered */
	assert_int_equal(c.types[0], IG_REC_META);
	assert_int_equal(c.types[1], IG_REC_OFFCPU);
	assert_int_equal(c.ts[3], 202);
	assert_int_equal(c.types[4], IG_REC_END);
	unlink(path);
}

static void truncated_rejected(void **state)
{
	struct ig_read_result res;
	long full, cut;

	(void)state;
	make_path();
	write_sample(path);
	full = file_size(path);
	/* every cut point: inside a header, inside a record, before END */
	for (cut = full - 1; cut > (long)sizeof(struct ig_file_header); cut -= 13) {
		struct collected c = {};

		assert_int_equal(truncate(path, cut), 0);
		assert_true(ig_recording_read(path, false, collect, &c, &res) < 0);
		assert_false(res.complete);
		assert_non_null(strstr(res.error, "truncated"));
		/* --partial: what was there is delivered, nothing more */
		memset(&c, 0, sizeof(c));
		if (cut < (long)(sizeof(struct ig_file_header) + sizeof(struct ig_block_hdr) +
				 sizeof(struct ig_meta))) {
			/* not even the run metadata: nothing to analyse */
			assert_true(ig_recording_read(path, true, collect, &c, &res) < 0);
		} else {
			assert_int_equal(ig_recording_read(path, true, collect, &c, &res), 0);
			assert_true(c.n >= 1 && c.n <= 5);
		}
		assert_false(res.complete);
		write_sample(path);
	}
	unlink(path);
}

static void write_raw(const char *p, const void *buf, size_t n)
{
	FILE *f = fopen(p, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, n, f), n);
	fclose(f);
}

static void corrupt_rejected(void **state)
{
	struct ig_file_header fh = { .magic = IG_FILE_MAGIC, .version = IG_FORMAT_VERSION,
				     .header_size = sizeof(fh), .byte_order = IG_BYTE_ORDER };
	unsigned char buf[sizeof(fh) + sizeof(struct ig_meta)] = {};
	struct ig_hdr bad = { .type = IG_REC_META, .size = 8 };
	struct ig_read_result res;
	struct collected c = {};

	(void)state;
	make_path();
	write_raw(path, "hello, world, this is not a recording", 37);
	assert_true(ig_recording_read(path, false, collect, &c, &res) < 0);
	assert_non_null(strstr(res.error, "not an idlegap recording"));

	write_raw(path, "", 0);
	assert_true(ig_recording_read(path, false, collect, &c, &res) < 0);

	fh.version = IG_FORMAT_VERSION + 1;
	memcpy(buf, &fh, sizeof(fh));
	write_raw(path, buf, sizeof(buf));
	assert_true(ig_recording_read(path, false, collect, &c, &res) < 0);
	assert_non_null(strstr(res.error, "version"));
	fh.version = IG_FORMAT_VERSION_MIN - 1;
	memcpy(buf, &fh, sizeof(fh));
	write_raw(path, buf, sizeof(buf));
	assert_true(ig_recording_read(path, false, collect, &c, &res) < 0);
	assert_non_null(strstr(res.error, "version"));

	fh.version = IG_FORMAT_VERSION;
	memcpy(buf, &fh, sizeof(fh));
	memcpy(buf + sizeof(fh), &bad, sizeof(bad));	/* records outside blocks */
	write_raw(path, buf, sizeof(buf));
	assert_true(ig_recording_read(path, false, collect, &c, &res) < 0);
	assert_non_null(strstr(res.error, "corrupt"));

	/* a known type shorter than its struct */
	bad.size = sizeof(struct ig_hdr) + 8;
	memcpy(buf + sizeof(fh), &bad, sizeof(bad));
	write_raw(path, buf, sizeof(buf));
	assert_true(ig_recording_read(path, false, collect, &c, &res) < 0);
	assert_non_null(strstr(res.error, "corrupt"));

	assert_true(ig_recording_read("/nonexistent/x", false, collect, &c, &res) < 0);
	assert_non_null(strstr(res.error, "No such file"));
	unlink(path);
}

static unsigned char *slurp(const char *p, size_t *n)
{
	unsigned char *b;
	FILE *f = fopen(p, "rb");

	assert_non_null(f);
	*n = file_size(p);
	b = malloc(*n);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, *n, f), *n);
	fclose(f);
	return b;
}

/* Every single-bit flip after the file header is caught: refused, and
 * with --partial the flipped block is left out and said so. */
static void bit_flips_refused(void **state)
{
	struct ig_read_result res;
	size_t n, bit;
	unsigned char *b;

	(void)state;
	make_path();
	write_sample(path);
	b = slurp(path, &n);
	for (bit = sizeof(struct ig_file_header) * 8; bit < n * 8; bit++) {
		struct collected c = {};
		int rc;

		b[bit / 8] ^= 1u << (bit % 8);
		rc = ig_recording_read_mem("x", b, n, false, collect, &c, &res);
		if (rc == 0)	/* only the zero padding after a record */
			assert_int_equal(c.n, 5);
		else
			assert_true(strstr(res.error, "corrupt") || strstr(res.error, "truncated"));
		memset(&c, 0, sizeof(c));
		rc = ig_recording_read_mem("x", b, n, true, collect, &c, &res);
		if (rc == 0 && c.n < 5)
			assert_true(res.skipped_blocks > 0 || !res.complete);
		b[bit / 8] ^= 1u << (bit % 8);
	}
	free(b);
	unlink(path);
}

/* Block 3 (the second OFFCPU) corrupt: left out with --partial, the
 * rest read. */
static void partial_skips_block(void **state)
{
	struct ig_read_result res;
	struct collected c = {};
	size_t n, off = sizeof(struct ig_file_header);
	struct ig_block_hdr bh;
	unsigned char *b;
	int i;

	(void)state;
	make_path();
	write_sample(path);
	b = slurp(path, &n);
	for (i = 0; i < 2; i++) {
		memcpy(&bh, b + off, sizeof(bh));
		off += sizeof(bh) + bh.len + (8 - bh.len % 8) % 8;
	}
	b[off + sizeof(bh) + offsetof(struct ig_hdr, ts) + 5] ^= 0x10;
	assert_true(ig_recording_read_mem("x", b, n, false, collect, &c, &res) < 0);
	assert_non_null(strstr(res.error, "corrupt block"));
	memset(&c, 0, sizeof(c));
	assert_int_equal(ig_recording_read_mem("x", b, n, true, collect, &c, &res), 0);
	assert_true(res.complete);
	assert_int_equal(res.skipped_blocks, 1);
	assert_int_equal(c.n, 4);
	assert_int_equal(c.ts[1], 200);
	assert_int_equal(c.ts[2], 202);
	free(b);
	unlink(path);
}

/* A record outside the recording's start and end, checksum right: the
 * recording is corrupt all the same. */
static void time_outside_refused(void **state)
{
	struct ig_meta m = { .h = { IG_REC_META, sizeof(m), 0, 0, 0, 100ULL << 30 } };
	struct ig_offcpu o = { .h = { IG_REC_OFFCPU, sizeof(o), 0, 7, 7, 0 } };
	struct ig_end e = { .h = { IG_REC_END, sizeof(e), 0, 0, 0, 101ULL << 30 } };
	__u64 bad[] = { 1ULL << 48, 1, (101ULL << 30) + IG_REC_SLACK_AFTER_NS + 1 };
	struct ig_read_result res;
	struct ig_rec_writer *w;
	struct collected c;
	size_t i;

	(void)state;
	make_path();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		w = ig_rec_writer_open(path);
		assert_non_null(w);
		o.h.ts = bad[i];
		assert_int_equal(ig_rec_writer_put(w, &m.h), 0);
		assert_int_equal(ig_rec_writer_put(w, &o.h), 0);
		assert_int_equal(ig_rec_writer_put(w, &e.h), 0);
		assert_int_equal(ig_rec_writer_close(w), 0);
		memset(&c, 0, sizeof(c));
		assert_true(ig_recording_read(path, false, collect, &c, &res) < 0);
		assert_non_null(strstr(res.error, "outside the recording"));
		assert_int_equal(c.n, 0);
	}
	unlink(path);
}

/* A FIFO is refused at once, not waited on. */
static void fifo_refused(void **state)
{
	struct ig_read_result res;
	struct collected c = {};

	(void)state;
	make_path();
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_true(ig_recording_read(path, false, collect, &c, &res) < 0);
	assert_non_null(strstr(res.error, "not a regular file"));
	unlink(path);
}

struct order {
	__u64 last;
	size_t n;
	bool sorted;
};

static void check_order(const struct ig_hdr *rec, void *ctx)
{
	struct order *o = ctx;

	if (rec->ts < o->last)
		o->sorted = false;
	o->last = rec->ts;
	o->n++;
}

static void reorder_sorts(void **state)
{
	struct order o = { .sorted = true };
	struct ig_reorder *r = ig_reorder_new(1000, 0, check_order, &o);
	struct ig_hdr h = { .type = IG_REC_OFFCPU, .size = sizeof(h) };
	int i;

	(void)state;
	assert_non_null(r);
	/* two CPUs interleaving with a skew below the window */
	for (i = 0; i < 100000; i++) {
		h.ts = 10000 + (__u64)i * 10 + (i % 2 ? 0 : 500);
		assert_int_equal(ig_reorder_push(r, &h), 0);
	}
	ig_reorder_flush(r);
	assert_int_equal(o.n, 100000);
	assert_true(o.sorted);
	assert_int_equal(ig_reorder_late(r), 0);
	/* older than what was released: counted, delivered in order */
	h.ts = 5;
	assert_int_equal(ig_reorder_push(r, &h), 0);
	ig_reorder_flush(r);
	assert_true(o.sorted);
	assert_int_equal(ig_reorder_late(r), 1);
	ig_reorder_free(r);
}

/* A record user space stamped when it wrote it, while the ring buffer's
 * reader was 200 ms behind: the kernel's records read after it, two CPUs'
 * with a skew of 3 ms, are not late; with no lag for it, they are
 * (docs/design.md §3.4). */
static size_t user_ahead(__u64 lag)
{
	const __u64 ms = 1000 * 1000;
	struct order o = { .sorted = true };
	struct ig_reorder *r = ig_reorder_new(50 * ms, lag, check_order, &o);
	struct ig_hdr k = { .type = IG_REC_OFFCPU, .size = sizeof(k) };
	struct ig_hdr u = { .type = IG_REC_NVML, .size = sizeof(u) };
	size_t late;
	int i;

	assert_non_null(r);
	for (i = 0; i < 1000; i++) {
		k.ts = 1000 * ms + (__u64)i * ms - (i % 2 ? 3 * ms : 0);
		if (i == 500) {	/* written at 1.7 s, the ring read to 1.5 s */
			u.ts = 1700 * ms;
			assert_int_equal(ig_reorder_push(r, &u), 0);
		}
		assert_int_equal(ig_reorder_push(r, &k), 0);
	}
	ig_reorder_flush(r);
	assert_int_equal(o.n, 1001);
	assert_true(o.sorted);
	late = ig_reorder_late(r);
	ig_reorder_free(r);
	return late;
}

static void reorder_user_ahead(void **state)
{
	const __u64 ms = 1000 * 1000;
	struct order o = { .sorted = true };
	struct ig_reorder *r;
	struct ig_hdr u = { .type = IG_REC_NVML, .size = sizeof(u) };
	int i;

	(void)state;
	assert_int_equal(user_ahead(2000 * ms), 0);
	assert_true(user_ahead(0) > 0);
	/* user space's records alone still leave, their lag after */
	r = ig_reorder_new(50 * ms, 2000 * ms, check_order, &o);
	assert_non_null(r);
	for (i = 1; i <= 10; i++) {
		u.ts = (__u64)i * 1000 * ms;
		assert_int_equal(ig_reorder_push(r, &u), 0);
	}
	assert_int_equal(o.n, 7);	/* up to 7 s: older than 10 s - 2 s - 50 ms */
	ig_reorder_flush(r);
	assert_int_equal(o.n, 10);
	assert_int_equal(ig_reorder_late(r), 0);
	ig_reorder_free(r);
	/* live: they move nothing; the ring read whole to 5 s does */
	o = (struct order){ .sorted = true };
	r = ig_reorder_new(50 * ms, IG_REORDER_NO_LAG, check_order, &o);
	assert_non_null(r);
	for (i = 1; i <= 10; i++) {
		u.ts = (__u64)i * 1000 * ms;
		assert_int_equal(ig_reorder_push(r, &u), 0);
	}
	assert_int_equal(o.n, 0);
	ig_reorder_advance(r, 5000 * ms);
	assert_int_equal(o.n, 4);	/* older than 5 s - 50 ms */
	ig_reorder_flush(r);
	assert_int_equal(o.n, 10);
	assert_true(o.sorted);
	ig_reorder_free(r);
}

/* Pieces (docs/design.md §6.4): each at most its size, each a
 * recording of its own that starts with its META (piece, run id, the
 * records restating the state) and ends with END; the last @nfiles kept;
 * no record lost or repeated across them. */
struct piece_count {
	size_t offcpu, meta, start_nrec;
	__u32 piece;
	__u64 run_id, last_ts;
	bool sorted;
};

static int count_piece(const struct ig_hdr *rec, void *ctx)
{
	struct piece_count *c = ctx;

	if (rec->type == IG_REC_META) {
		const struct ig_meta *m = (const void *)rec;

		c->meta++;
		c->piece = m->piece;
		c->run_id = m->run_id;
		c->start_nrec = m->start_nrec;
	}
	if (rec->type == IG_REC_OFFCPU) {
		c->offcpu++;
		if (rec->ts < c->last_ts)
			c->sorted = false;
		c->last_ts = rec->ts;
	}
	return 0;
}

static unsigned int write_pieces(const char *base, __u64 max, unsigned int nfiles, int n)
{
	struct ig_rec_writer *w = ig_rec_writer_open_pieces(base, max, nfiles);
	struct ig_meta m = { .h = { IG_REC_META, sizeof(m), 0, 0, 0, 1000 },
			     .version = IG_FORMAT_VERSION, .realtime_ns = 5 };
	struct ig_task t = { .h = { IG_REC_TASK, sizeof(t), 0, 7, 7, 1000 } };
	struct ig_offcpu o = { .h = { IG_REC_OFFCPU, sizeof(o), 0, 7, 7, 0 } };
	struct ig_stats st = { .h = { IG_REC_STATS, sizeof(st), 0, 0, 0, 0 } };
	struct ig_end e = { .h = { IG_REC_END, sizeof(e), 0, 0, 0, 0 } };
	const struct ig_hdr *tail[] = { &st.h, &e.h };
	unsigned int pieces = 1;
	int i;

	assert_non_null(w);
	assert_int_equal(ig_rec_writer_put(w, &m.h), 0);
	assert_int_equal(ig_rec_writer_put(w, &t.h), 0);
	for (i = 0; i < n; i++) {
		o.h.ts = 2000 + i;
		o.t_off = 1990 + i;
		assert_int_equal(ig_rec_writer_put(w, &o.h), 0);
		if (i % 16 != 15)
			continue;
		assert_int_equal(ig_rec_writer_flush(w), 0);
		if (!ig_rec_writer_due(w))
			continue;
		st.h.ts = e.h.ts = o.h.ts;
		e.reason = IG_STOP_PIECE;
		assert_int_equal(ig_rec_writer_next(w, tail, 2), 0);
		m.h.ts = t.h.ts = o.h.ts;
		assert_int_equal(ig_rec_writer_put(w, &m.h), 0);
		assert_int_equal(ig_rec_writer_put(w, &t.h), 0);
		assert_int_equal(ig_rec_writer_started(w), 0);
		pieces++;
	}
	e.h.ts = o.h.ts;
	e.reason = IG_STOP_TARGET_EXIT;
	assert_int_equal(ig_rec_writer_put(w, &e.h), 0);
	assert_int_equal(ig_rec_writer_close(w), 0);
	return pieces;
}

static void pieces(void **state)
{
	char dir[] = "/tmp/ig-pieces.XXXXXX", base[128], p[160];
	struct ig_read_result res;
	const int n = 20000;
	unsigned int np, k, kept = 0;
	size_t total = 0;
	int round;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(base, sizeof(base), "%s/rec", dir);
	for (round = 0; round < 2; round++) {
		/* round 0: every piece kept; round 1: the last 3 */
		np = write_pieces(base, 100000, round ? 3 : 0, n);
		assert_true(np > 3);
		total = kept = 0;
		for (k = 1; k <= np; k++) {
			struct piece_count c = { .sorted = true };

			snprintf(p, sizeof(p), "%s.%06u", base, k);
			if (access(p, F_OK)) {
				assert_true(round && k <= np - 3);
				continue;
			}
			kept++;
			assert_true(file_size(p) <= 100000);
			assert_int_equal(ig_recording_read(p, false, count_piece, &c, &res), 0);
			assert_true(res.complete);
			assert_true(c.sorted);
			assert_int_equal(c.meta, 1);
			assert_int_equal(c.piece, k);
			assert_int_equal(c.run_id, 5);
			assert_int_equal(c.start_nrec, k == 1 ? 0 : 1);
			total += c.offcpu;
			unlink(p);
		}
		if (round)
			assert_int_equal(kept, 3);
		else
			assert_int_equal(total, n);	/* none lost, none twice */
	}
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(truncated_rejected),
		cmocka_unit_test(corrupt_rejected),
		cmocka_unit_test(bit_flips_refused),
		cmocka_unit_test(partial_skips_block),
		cmocka_unit_test(time_outside_refused),
		cmocka_unit_test(fifo_refused),
		cmocka_unit_test(reorder_sorts),
		cmocka_unit_test(reorder_user_ahead),
		cmocka_unit_test(pieces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
