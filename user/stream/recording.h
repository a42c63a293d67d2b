/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Recording files: a fixed header, then the record stream exactly as the
 * engine receives it (META first, END last), in checksummed blocks.
 * Versioned and self-describing, so a recording made on one machine is
 * analysed on another, and analysis is tested without root.
 */
#ifndef IG_RECORDING_H
#define IG_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include "stream/records.h"

#define IG_FILE_MAGIC "IDLEGAP"	/* 8 bytes with the NUL */
#define IG_BYTE_ORDER 0x01020304u

struct ig_file_header {
	char magic[8];
	__u32 version;		/* IG_FORMAT_VERSION */
	__u32 header_size;	/* sizeof(struct ig_file_header) */
	__u32 byte_order;	/* IG_BYTE_ORDER as written */
	__u32 clock;		/* CLOCK_MONOTONIC: timestamps' clock */
};

/* Each block: this header, @len bytes of whole records, zeros up to the
 * next multiple of 8.  @crc is zlib's crc32 of the header's first 12
 * bytes and then the @len bytes. */
#define IG_BLOCK_MAGIC 0x4b424749u	/* "IGBK" */
#define IG_BLOCK_MAX (256u << 10)	/* largest @len */

struct ig_block_hdr {
	__u32 magic;
	__u32 len;
	__u32 nrec;
	__u32 crc;
};

__u32 ig_rec_block_crc(const struct ig_block_hdr *bh, const void *payload);

/* Records are no older than this before the start (kernel records from
 * before the run metadata) and no newer than this after the end. */
#define IG_REC_SLACK_BEFORE_NS (60ULL * 1000000000)
#define IG_REC_SLACK_AFTER_NS (1ULL * 1000000000)

struct ig_rec_writer;

/* NULL and errno set on failure (ELOOP: see ig_outfile_open()). */
struct ig_rec_writer *ig_rec_writer_open(const char *path);
/* 0, or -errno: the first write error sticks. */
int ig_rec_writer_put(struct ig_rec_writer *w, const struct ig_hdr *rec);
/* Pushes buffered records to the file (a killed tracer loses only what
 * came after the last flush). */
int ig_rec_writer_flush(struct ig_rec_writer *w);
/* Flushes and closes; returns the first error of the writer's life. */
int ig_rec_writer_close(struct ig_rec_writer *w);
/* Closes a recording that holds no trace (the run never began) and
 * removes its file at @path. */
void ig_rec_writer_abandon(struct ig_rec_writer *w, const char *path);

/*
 * A recording in pieces (-o with --output-max-mb, docs/design.md §6.4):
 * PATH.000001, PATH.000002, ..., each at most @max_bytes (one block more
 * when its start alone passes that), each a recording of its own; with
 * @nfiles, a piece is removed when the one @nfiles after it starts.  A
 * piece that cannot be written (a full disk) is removed and its records
 * dropped until the next piece is due; ig_rec_writer_lost() says so.
 * NULL and errno set when the first piece cannot be made.
 */
struct ig_rec_writer *ig_rec_writer_open_pieces(const char *path, __u64 max_bytes,
						unsigned int nfiles);
/* The piece being written (NULL: not in pieces). */
const char *ig_rec_writer_path(const struct ig_rec_writer *w);
/* The next record block would take the piece past its size: the blocks
 * wait in memory until ig_rec_writer_next() starts the next piece. */
bool ig_rec_writer_due(const struct ig_rec_writer *w);
/* Ends the piece with @tail (STATS, END) and opens the next: the records
 * put until ig_rec_writer_started() are its start, META first (the
 * writer sets its piece, run_id and start_nrec), then the blocks that
 * waited follow.  0, or -errno (out of memory). */
int ig_rec_writer_next(struct ig_rec_writer *w, const struct ig_hdr *const *tail,
		       int ntail);
int ig_rec_writer_started(struct ig_rec_writer *w);
/* A piece lost since the last call: its path, the errno, the count of
 * pieces lost in all; false when none. */
bool ig_rec_writer_lost(struct ig_rec_writer *w, char *path, size_t n, int *err,
			unsigned int *total);

typedef int (*ig_rec_cb)(const struct ig_hdr *rec, void *ctx);

struct ig_read_result {
	size_t records;
	bool complete;		/* END record seen */
	size_t skipped_bytes;	/* --partial: corrupt parts left out */
	size_t skipped_blocks;
	char error[256];	/* why reading failed, or what was skipped */
};

/*
 * Calls @cb for every record of the file, in file order.  Fails (-errno,
 * with res->error set) on a file that is not a recording, of another
 * version, corrupt (a block whose checksum does not match, a record
 * outside the recording's own start and end time), or truncated; with
 * @partial, a truncated tail ends the stream and corrupt blocks are left
 * out (res->complete and res->skipped_* tell).
 */
int ig_recording_read(const char *path, bool partial, ig_rec_cb cb, void *ctx,
		      struct ig_read_result *res);
/* The same over @len bytes in memory; @name names them in messages. */
int ig_recording_read_mem(const char *name, const void *p, size_t len,
			  bool partial, ig_rec_cb cb, void *ctx,
			  struct ig_read_result *res);

#endif
