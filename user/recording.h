/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Recording files: a fixed header, then the record stream exactly as the
 * engine receives it (META first, END last).  Versioned and
 * self-describing, so a recording made on one machine is analysed on
 * another, and analysis is tested without root.
 */
#ifndef IG_RECORDING_H
#define IG_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include "records.h"

#define IG_FILE_MAGIC "IDLEGAP"	/* 8 bytes with the NUL */
#define IG_BYTE_ORDER 0x01020304u

struct ig_file_header {
	char magic[8];
	__u32 version;		/* IG_FORMAT_VERSION */
	__u32 header_size;	/* sizeof(struct ig_file_header) */
	__u32 byte_order;	/* IG_BYTE_ORDER as written */
	__u32 clock;		/* CLOCK_MONOTONIC: timestamps' clock */
};

struct ig_rec_writer;

/* NULL and errno set on failure. */
struct ig_rec_writer *ig_rec_writer_open(const char *path);
/* 0, or -errno: the first write error sticks. */
int ig_rec_writer_put(struct ig_rec_writer *w, const struct ig_hdr *rec);
/* Pushes buffered records to the file (a killed tracer loses only what
 * came after the last flush). */
int ig_rec_writer_flush(struct ig_rec_writer *w);
/* Flushes and closes; returns the first error of the writer's life. */
int ig_rec_writer_close(struct ig_rec_writer *w);

typedef int (*ig_rec_cb)(const struct ig_hdr *rec, void *ctx);

struct ig_read_result {
	size_t records;
	bool complete;		/* END record seen */
	char error[256];	/* why reading failed */
};

/*
 * Calls @cb for every record of the file, in file order.  Fails (-errno,
 * with res->error set) on a file that is not a recording, of another
 * version, corrupt, or truncated; with @partial, a truncated or corrupt
 * tail ends the stream instead (res->complete tells which).
 */
int ig_recording_read(const char *path, bool partial, ig_rec_cb cb, void *ctx,
		      struct ig_read_result *res);

#endif
