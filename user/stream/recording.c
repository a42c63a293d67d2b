// SPDX-License-Identifier: GPL-2.0
/* The recording file's writer (docs/design.md §6.4, §6.5): the header,
 * records framed into checksummed blocks, a recording in pieces; its
 * reader is recording_read.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "stream/crc32.h"
#include "util/outfile.h"
#include "stream/recording.h"

_Static_assert(sizeof(struct ig_file_header) == 24, "file header layout");
_Static_assert(sizeof(struct ig_block_hdr) == 16, "block header layout");

struct ig_rec_writer {
	int fd;
	int err;
	__u32 len, nrec;
	unsigned char *buf;	/* the block being filled */
	/* pieces (ig_rec_writer_open_pieces): none of this is used else */
	char *base;		/* PATH; the pieces are PATH.000001, ... */
	char path[4096];	/* the piece being written */
	__u64 max;		/* bytes a piece holds at most */
	unsigned int nfiles;	/* pieces kept (0: all) */
	unsigned int piece;	/* the one being written, from 1 */
	__u64 size;		/* its bytes, as if none had been lost */
	__u64 data_blocks;	/* blocks written past its start */
	__u64 run_id;
	bool due;		/* the next piece: blocks wait in held */
	bool starting;		/* records go to start, not to blocks */
	bool bypass;		/* the tail and the start pass the cap */
	unsigned char *held, *start;	/* formatted blocks; records */
	size_t nheld, capheld, nstart, capstart;
	struct { dev_t dev; ino_t ino; } *kept;	/* the last nfiles pieces */
	unsigned int lost;	/* pieces lost, in all */
	char lost_path[4096];	/* the last one lost, and why */
	int lost_err;
	bool lost_new;
};

static int grow_buf(unsigned char **b, size_t *cap, size_t need)
{
	size_t c = *cap ? *cap : 1 << 16;
	unsigned char *nb;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	nb = realloc(*b, c);
	if (!nb)
		return -ENOMEM;
	*b = nb;
	*cap = c;
	return 0;
}

__u32 ig_rec_block_crc(const struct ig_block_hdr *bh, const void *payload)
{
	__u32 c = ig_crc32(0, bh, offsetof(struct ig_block_hdr, crc));

	return ig_crc32(c, payload, bh->len);
}

static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		p = (const char *)p + k;
		n -= k;
	}
	return 0;
}

/* The tail a piece keeps room for: its STATS and END in one block. */
#define TAIL_RESERVE	(sizeof(struct ig_block_hdr) + sizeof(struct ig_stats) + \
			 sizeof(struct ig_end) + 16)

/* A piece cannot be written (a full disk; @err: the errno): it is
 * removed, said once by ig_rec_writer_lost(), and its records are
 * dropped until the next piece is due, at the size it would have had. */
static void lose_piece(struct ig_rec_writer *w, int err)
{
	if (w->fd >= 0) {
		ig_outfile_discard(w->path, w->fd);
		close(w->fd);
		w->fd = -1;
	}
	snprintf(w->lost_path, sizeof(w->lost_path), "%s", w->path);
	w->lost_err = err;
	w->lost_new = true;
	w->lost++;
}

/* One formatted block of @n bytes to the piece, or held for the next
 * one when it would take this one past its size (not before the first
 * block past its start, so a piece always holds one). */
static int put_block(struct ig_rec_writer *w, const void *b, size_t n)
{
	int err;

	if (!w->base)
		return write_all(w->fd, b, n);
	if (!w->bypass && (w->due || (w->data_blocks && w->size + n + TAIL_RESERVE > w->max))) {
		if (grow_buf(&w->held, &w->capheld, w->nheld + n))
			return -ENOMEM;
		memcpy(w->held + w->nheld, b, n);
		w->nheld += n;
		w->due = true;
		return 0;
	}
	if (w->fd >= 0 && (err = write_all(w->fd, b, n)))
		lose_piece(w, -err);
	w->size += n;
	w->data_blocks += !w->bypass;
	return 0;
}

/* Header, records and padding in one write: a killed tracer leaves whole
 * blocks, or a truncated last one. */
static int write_block(struct ig_rec_writer *w)
{
	struct ig_block_hdr *bh = (void *)w->buf;
	__u32 pad = (8 - w->len % 8) % 8;

	if (w->err || !w->nrec)
		return w->err;
	bh->magic = IG_BLOCK_MAGIC;
	bh->len = w->len;
	bh->nrec = w->nrec;
	bh->crc = ig_rec_block_crc(bh, bh + 1);
	memset(w->buf + sizeof(*bh) + w->len, 0, pad);
	w->err = put_block(w, w->buf, sizeof(*bh) + w->len + pad);
	w->len = w->nrec = 0;
	return w->err;
}

struct ig_rec_writer *ig_rec_writer_open(const char *path)
{
	struct ig_file_header fh = {
		.magic = IG_FILE_MAGIC,
		.version = IG_FORMAT_VERSION,
		.header_size = sizeof(fh),
		.byte_order = IG_BYTE_ORDER,
		.clock = CLOCK_MONOTONIC,
	};
	struct ig_rec_writer *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return NULL;
	w->buf = malloc(sizeof(struct ig_block_hdr) + IG_BLOCK_MAX + 8);
	w->fd = w->buf ? ig_outfile_open(path) : -ENOMEM;
	err = w->fd < 0 ? w->fd : write_all(w->fd, &fh, sizeof(fh));
	if (err) {
		if (w->fd >= 0) {
			ig_outfile_discard(path, w->fd);
			close(w->fd);
		}
		free(w->buf);
		free(w);
		errno = -err;
		return NULL;
	}
	return w;
}

int ig_rec_writer_put(struct ig_rec_writer *w, const struct ig_hdr *rec)
{
	unsigned char *p;

	if (w->err)
		return w->err;
	if (rec->size < sizeof(*rec))
		return -EINVAL;
	if (w->starting) {
		if (grow_buf(&w->start, &w->capstart, w->nstart + rec->size))
			return w->err = -ENOMEM;
		memcpy(w->start + w->nstart, rec, rec->size);
		w->nstart += rec->size;
		return 0;
	}
	if (w->len + rec->size > IG_BLOCK_MAX && write_block(w))
		return w->err;
	p = w->buf + sizeof(struct ig_block_hdr) + w->len;
	memcpy(p, rec, rec->size);
	/* the first piece's run metadata says it is one */
	if (w->base && rec->type == IG_REC_META && rec->size >= sizeof(struct ig_meta) &&
	    w->piece == 1 && !w->run_id) {
		struct ig_meta *m = (struct ig_meta *)p;

		w->run_id = m->realtime_ns ? m->realtime_ns : rec->ts;
		m->piece = 1;
		m->start_nrec = 0;
		m->run_id = w->run_id;
	}
	w->len += rec->size;
	w->nrec++;
	return 0;
}

int ig_rec_writer_flush(struct ig_rec_writer *w)
{
	return write_block(w);
}

static void writer_free(struct ig_rec_writer *w);

void ig_rec_writer_abandon(struct ig_rec_writer *w, const char *path)
{
	if (!w)
		return;
	if (w->fd >= 0) {
		ig_outfile_discard(w->base ? w->path : path, w->fd);
		close(w->fd);
	}
	writer_free(w);
}

static void writer_free(struct ig_rec_writer *w)
{
	free(w->buf);
	free(w->base);
	free(w->held);
	free(w->start);
	free(w->kept);
	free(w);
}

int ig_rec_writer_close(struct ig_rec_writer *w)
{
	unsigned int lost = w ? w->lost : 0;
	int err;

	if (!w)
		return 0;
	/* the last piece takes what waited for the next one */
	if (w->base && w->nheld) {
		w->bypass = true;
		if (!w->err && w->fd >= 0 && (err = write_all(w->fd, w->held, w->nheld)))
			lose_piece(w, -err);
		w->nheld = 0;
	}
	w->bypass = true;
	err = write_block(w);
	if (w->fd >= 0) {
		if (fsync(w->fd) && !err && errno != EINVAL)
			err = -errno;
		if (err && w->base)
			lose_piece(w, -err);
		else if (close(w->fd) && !err)
			err = -errno;
	}
	/* a piece lost before was said when it was lost */
	if (w->base)
		err = w->err ? w->err : w->lost != lost ? -w->lost_err : 0;
	writer_free(w);
	return err;
}

/* PATH.NNNNNN: the names sort as the pieces follow one another. */
static void piece_path(const struct ig_rec_writer *w, unsigned int k, char *out, size_t n)
{
	snprintf(out, n, "%s.%06u", w->base, k);
}

/* The piece nfiles before the one about to start goes, if it is still
 * the file this writer made. */
static void remove_old(struct ig_rec_writer *w)
{
	char old[sizeof(w->path)];
	unsigned int k;
	struct stat st;

	if (!w->nfiles || w->piece < w->nfiles)
		return;
	k = w->piece + 1 - w->nfiles;
	piece_path(w, k, old, sizeof(old));
	if (!lstat(old, &st) && S_ISREG(st.st_mode) &&
	    st.st_dev == w->kept[k % w->nfiles].dev && st.st_ino == w->kept[k % w->nfiles].ino)
		unlink(old);
}

/* Opens the next piece and writes its file header; a piece that cannot
 * be made is lost as one cut short. */
static void open_piece(struct ig_rec_writer *w)
{
	struct ig_file_header fh = {
		.magic = IG_FILE_MAGIC,
		.version = IG_FORMAT_VERSION,
		.header_size = sizeof(fh),
		.byte_order = IG_BYTE_ORDER,
		.clock = CLOCK_MONOTONIC,
	};
	struct stat st;
	int err;

	remove_old(w);
	w->piece++;
	piece_path(w, w->piece, w->path, sizeof(w->path));
	w->size = sizeof(fh);
	w->data_blocks = 0;
	w->fd = ig_outfile_open(w->path);
	if (w->fd < 0) {
		err = w->fd;
		w->fd = -1;
		lose_piece(w, -err);
		return;
	}
	if (w->nfiles && !fstat(w->fd, &st)) {
		w->kept[w->piece % w->nfiles].dev = st.st_dev;
		w->kept[w->piece % w->nfiles].ino = st.st_ino;
	}
	if ((err = write_all(w->fd, &fh, sizeof(fh))))
		lose_piece(w, -err);
}

struct ig_rec_writer *ig_rec_writer_open_pieces(const char *path, __u64 max_bytes,
						unsigned int nfiles)
{
	struct ig_rec_writer *w = calloc(1, sizeof(*w));
	int err = -ENOMEM;

	if (!w)
		return NULL;
	w->fd = -1;
	w->max = max_bytes;
	w->nfiles = nfiles;
	w->buf = malloc(sizeof(struct ig_block_hdr) + IG_BLOCK_MAX + 8);
	w->base = strdup(path);
	w->kept = nfiles ? calloc(nfiles, sizeof(*w->kept)) : NULL;
	if (!w->buf || !w->base || (nfiles && !w->kept) ||
	    strlen(path) + 8 > sizeof(w->path))
		goto fail;
	open_piece(w);
	/* the first piece, unlike the later ones, is refused up front */
	if (w->lost) {
		err = -w->lost_err;
		goto fail;
	}
	return w;
fail:
	writer_free(w);
	errno = -err;
	return NULL;
}

const char *ig_rec_writer_path(const struct ig_rec_writer *w)
{
	return w && w->base ? w->path : NULL;
}

bool ig_rec_writer_due(const struct ig_rec_writer *w)
{
	return w && w->base && !w->starting && (w->due ||
	       (w->fd < 0 && w->size + TAIL_RESERVE > w->max));
}

int ig_rec_writer_next(struct ig_rec_writer *w, const struct ig_hdr *const *tail,
		       int ntail)
{
	int i;

	if (!w->base || w->err)
		return w->err;
	/* the records put since the piece was due wait for the next one */
	if (w->nrec && write_block(w))
		return w->err;
	/* the tail: whatever the cap, after the records of the piece */
	w->bypass = true;
	for (i = 0; i < ntail && w->fd >= 0; i++)
		if (ig_rec_writer_put(w, tail[i]))
			return w->err;
	if (w->nrec && write_block(w))
		return w->err;
	if (w->fd >= 0) {
		if (fsync(w->fd) && errno != EINVAL)
			lose_piece(w, errno);
		else if (close(w->fd))
			lose_piece(w, errno);
		w->fd = -1;
	}
	open_piece(w);
	w->starting = true;
	w->nstart = 0;
	return 0;
}

int ig_rec_writer_started(struct ig_rec_writer *w)
{
	size_t off, held = w->nheld;
	unsigned char *hb = w->held;
	struct ig_hdr *h = NULL;
	__u32 n = 0;

	if (!w->base || !w->starting)
		return w->err;
	w->starting = false;
	for (off = 0; off < w->nstart; off += h->size, n++)
		h = (struct ig_hdr *)(w->start + off);
	if (w->nstart && ((struct ig_hdr *)w->start)->type == IG_REC_META &&
	    ((struct ig_hdr *)w->start)->size >= sizeof(struct ig_meta)) {
		struct ig_meta *m = (struct ig_meta *)w->start;

		m->piece = w->piece;
		m->start_nrec = n - 1;
		m->run_id = w->run_id;
	}
	/* the start: whatever the cap */
	w->bypass = true;
	for (off = 0; off < w->nstart && !w->err; off += h->size) {
		h = (struct ig_hdr *)(w->start + off);
		ig_rec_writer_put(w, h);
	}
	if (!w->err)
		write_block(w);
	w->bypass = false;
	w->nstart = 0;
	/* then the blocks that waited, against this piece's size */
	w->due = false;
	w->held = NULL;
	w->nheld = w->capheld = 0;
	for (off = 0; off < held && !w->err; ) {
		const struct ig_block_hdr *bh = (const void *)(hb + off);
		size_t len = sizeof(*bh) + bh->len + (8 - bh->len % 8) % 8;

		w->err = put_block(w, hb + off, len);
		off += len;
	}
	free(hb);
	return w->err;
}

bool ig_rec_writer_lost(struct ig_rec_writer *w, char *path, size_t n, int *err,
			unsigned int *total)
{
	if (!w || !w->lost_new)
		return false;
	w->lost_new = false;
	snprintf(path, n, "%s", w->lost_path);
	*err = w->lost_err;
	*total = w->lost;
	return true;
}
