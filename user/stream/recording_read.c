// SPDX-License-Identifier: GPL-2.0
/* The recording file's reader (docs/design.md §6.4, §6.5): its header
 * checked, its blocks read in order, a corrupt block skipped to the next
 * one that checks, each record handed on; its writer is recording.c. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "stream/crc32.h"
#include "stream/recording.h"

static int fail(struct ig_read_result *res, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct ig_read_result *res, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->error, sizeof(res->error), fmt, ap);
	va_end(ap);
	return err;
}

static int check_header(const char *path, const unsigned char *p, size_t len,
			struct ig_read_result *res)
{
	struct ig_file_header fh;

	if (len < sizeof(fh))
		return fail(res, -EINVAL, "%s: not an idlegap recording (%zu bytes)",
			    path, len);
	memcpy(&fh, p, sizeof(fh));
	if (memcmp(fh.magic, IG_FILE_MAGIC, sizeof(fh.magic)))
		return fail(res, -EINVAL, "%s: not an idlegap recording", path);
	if (fh.byte_order != IG_BYTE_ORDER)
		return fail(res, -EINVAL, "%s: recorded on a machine of the other byte order",
			    path);
	if (fh.version < IG_FORMAT_VERSION_MIN || fh.version > IG_FORMAT_VERSION)
		return fail(res, -EINVAL, "%s: recording format version %u, this idlegap reads versions %u to %u",
			    path, fh.version, IG_FORMAT_VERSION_MIN, IG_FORMAT_VERSION);
	if (fh.header_size < sizeof(fh) || fh.header_size > len || fh.header_size % 8)
		return fail(res, -EINVAL, "%s: corrupt file header", path);
	return (int)fh.header_size;
}

struct reader {
	const char *path;
	const unsigned char *p;
	size_t len;
	ig_rec_cb cb;
	void *ctx;
	struct ig_read_result *res;
	/* aligned copy for records that are not 8-byte aligned in the file */
	union { struct ig_hdr h; unsigned char b[65536]; } *tmp;
	__u64 t_lo, t_hi;	/* a record outside is corrupt */
	bool have_meta, ended;
	char why[96];		/* what is wrong with the last block */
};

enum { BLK_OK, BLK_CORRUPT, BLK_TRUNCATED };

/* The block header at @off, all but its checksum. */
static int block_head(struct reader *r, size_t off, struct ig_block_hdr *bh)
{
	if (r->len - off < sizeof(*bh))
		return BLK_TRUNCATED;
	memcpy(bh, r->p + off, sizeof(*bh));
	if (bh->magic != IG_BLOCK_MAGIC || bh->len > IG_BLOCK_MAX || !bh->nrec)
		return snprintf(r->why, sizeof(r->why), "not a block header"), BLK_CORRUPT;
	if (bh->len > r->len - off - sizeof(*bh))
		return BLK_TRUNCATED;
	return BLK_OK;
}

static int block_at(struct reader *r, size_t off, struct ig_block_hdr *bh)
{
	int st = block_head(r, off, bh);

	if (st != BLK_OK)
		return st;
	if (ig_rec_block_crc(bh, r->p + off + sizeof(*bh)) != bh->crc)
		return snprintf(r->why, sizeof(r->why), "checksum mismatch"), BLK_CORRUPT;
	return BLK_OK;
}

static size_t block_next(const struct reader *r, size_t off,
			 const struct ig_block_hdr *bh)
{
	size_t end = off + sizeof(*bh) + bh->len + (8 - bh->len % 8) % 8;

	return end < r->len ? end : r->len;
}

/* The end time, when the last block ends with the END record: it bounds
 * every record's time.  Only the last block's checksum is checked here;
 * the others are when they are read. */
static __u64 find_end(struct reader *r, size_t off)
{
	struct ig_block_hdr bh;
	size_t last = 0, o;
	struct ig_hdr h = {};

	while (off < r->len && block_head(r, off, &bh) != BLK_TRUNCATED &&
	       bh.magic == IG_BLOCK_MAGIC && bh.len <= IG_BLOCK_MAX) {
		last = off;
		off = block_next(r, off, &bh);
	}
	if (!last || block_at(r, last, &bh) != BLK_OK)
		return ~0ULL;
	for (o = 0; o < bh.len; o += h.size) {
		if (bh.len - o < sizeof(h))
			return ~0ULL;
		memcpy(&h, r->p + last + sizeof(bh) + o, sizeof(h));
		if (h.size < sizeof(h) || h.size > bh.len - o)
			return ~0ULL;
	}
	if (h.type != IG_REC_END || h.ts > ~0ULL - IG_REC_SLACK_AFTER_NS)
		return ~0ULL;
	return h.ts + IG_REC_SLACK_AFTER_NS;
}

/* Every record of the block whole, of its size, and inside the
 * recording's time; the first one of the stream the run metadata. */
static bool block_sane(struct reader *r, const unsigned char *b,
		       const struct ig_block_hdr *bh)
{
	bool have_meta = r->have_meta;
	__u64 lo = r->t_lo;
	size_t off = 0, min;
	struct ig_hdr h;
	__u32 n = 0;

	for (; off < bh->len; off += h.size, n++) {
		if (bh->len - off < sizeof(h))
			return snprintf(r->why, sizeof(r->why), "record cut short"), false;
		memcpy(&h, b + off, sizeof(h));
		min = ig_rec_min_size(h.type);
		if (h.size < sizeof(h) || (min && h.size < min) || h.size > bh->len - off)
			return snprintf(r->why, sizeof(r->why), "record %u: type %u of %u bytes",
					n, h.type, h.size), false;
		if (!have_meta && h.type != IG_REC_META)
			return snprintf(r->why, sizeof(r->why), "first record is not the run metadata"), false;
		if (!have_meta) {
			have_meta = true;
			lo = h.ts > IG_REC_SLACK_BEFORE_NS ? h.ts - IG_REC_SLACK_BEFORE_NS : 0;
		}
		if (h.ts < lo || h.ts > r->t_hi)
			return snprintf(r->why, sizeof(r->why), "record %u: time %llu ns is outside the recording",
					n, (unsigned long long)h.ts), false;
	}
	if (n != bh->nrec)
		return snprintf(r->why, sizeof(r->why), "%u records, the header says %u",
				n, bh->nrec), false;
	r->have_meta = have_meta;
	r->t_lo = lo;
	return true;
}

static int deliver(struct reader *r, size_t boff, const struct ig_block_hdr *bh)
{
	const unsigned char *b = r->p + boff + sizeof(*bh);
	const struct ig_hdr *rec;
	size_t off;
	int err;

	for (off = 0; off < bh->len && !r->ended; off += rec->size) {
		rec = (const struct ig_hdr *)(b + off);
		if ((boff + sizeof(*bh) + off) % 8) {
			if (!r->tmp && !(r->tmp = malloc(sizeof(*r->tmp))))
				return fail(r->res, -ENOMEM, "out of memory");
			memcpy(r->tmp->b, b + off, sizeof(struct ig_hdr));
			memcpy(r->tmp->b, b + off, r->tmp->h.size);
			rec = &r->tmp->h;
		}
		r->res->records++;
		if (rec->type == IG_REC_END)
			r->ended = true;
		if (!ig_rec_min_size(rec->type))
			continue;	/* records of unknown types are skipped */
		err = r->cb(rec, r->ctx);
		if (err)
			return fail(r->res, err, "%s: stopped at record %zu", r->path,
				    r->res->records);
	}
	return 0;
}

/* --partial: the next block that is whole, past a corrupt one. */
static size_t resync(struct reader *r, size_t off)
{
	struct ig_block_hdr bh;

	for (off += 8; off < r->len; off += 8)
		if (block_at(r, off, &bh) == BLK_OK)
			return off;
	return r->len;
}

static int read_blocks(struct reader *r, size_t off, bool partial)
{
	struct ig_block_hdr bh;
	size_t next;
	int st, err;

	r->t_hi = find_end(r, off);
	while (off < r->len && !r->ended) {
		st = block_at(r, off, &bh);
		if (st == BLK_OK && !block_sane(r, r->p + off + sizeof(bh), &bh))
			st = BLK_CORRUPT;
		if (st == BLK_OK) {
			err = deliver(r, off, &bh);
			if (err)
				return err;
			off = block_next(r, off, &bh);
			continue;
		}
		if (st == BLK_TRUNCATED)
			return fail(r->res, -EINVAL, "%s: truncated at byte %zu (in a block of records)",
				    r->path, off);
		if (!partial || !r->have_meta)
			return fail(r->res, -EBADMSG, "%s: corrupt block at byte %zu: %s",
				    r->path, off, r->why);
		next = resync(r, off);
		r->res->skipped_blocks++;
		r->res->skipped_bytes += next - off;
		off = next;
	}
	return 0;
}

int ig_recording_read_mem(const char *name, const void *p, size_t len,
			  bool partial, ig_rec_cb cb, void *ctx,
			  struct ig_read_result *res)
{
	struct reader r = { .path = name, .p = p, .len = len, .cb = cb,
			    .ctx = ctx, .res = res };
	int err, hlen;

	memset(res, 0, sizeof(*res));
	hlen = check_header(name, p, len, res);
	if (hlen < 0)
		return hlen;
	err = read_blocks(&r, hlen, partial);
	free(r.tmp);
	res->complete = r.ended;
	if (!err && !r.ended)
		err = fail(res, -EINVAL, "%s: truncated: the recording has no end record (tracer killed?)",
			   name);
	/* keep what was read; the caller reports it as incomplete */
	if (err == -EINVAL && partial && r.have_meta)
		err = 0;
	return err;
}

int ig_recording_read(const char *path, bool partial, ig_rec_cb cb, void *ctx,
		      struct ig_read_result *res)
{
	const unsigned char *p = MAP_FAILED;
	struct stat st;
	int fd, err;

	memset(res, 0, sizeof(*res));
	/* O_NONBLOCK: a FIFO must not hang the open */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return fail(res, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st)) {
		err = fail(res, -errno, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = fail(res, -EINVAL, "%s: not a regular file", path);
		goto out;
	}
	if (st.st_size) {
		/* every page mapped at once: faulted in 64 KiB at a time, a
		 * recording's pages cost a sixth of report's time */
		p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
		if (p == MAP_FAILED) {
			err = fail(res, -errno, "%s: %s", path, strerror(errno));
			goto out;
		}
	}
	err = ig_recording_read_mem(path, p == MAP_FAILED ? NULL : p, st.st_size,
				    partial, cb, ctx, res);
	if (p != MAP_FAILED)
		munmap((void *)p, st.st_size);
out:
	close(fd);
	return err;
}
