/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A record's times, processes, CPUs, file keys and devices, moved into
 * another frame: another clock, another host's numbering.  Which fields
 * hold what is listed once per record type, in bpf/record_fields.def.
 */
#ifndef IG_STREAM_REMAP_H
#define IG_STREAM_REMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "stream/records.h"

enum ig_field_kind {
	IG_FK_NONE = 0,		/* a type with no field but the header's */
	IG_FK_TIME,		/* u64 ns; 0 and ~0 (none) are left as they are */
	IG_FK_PID,		/* u32 tid or tgid; 0 (none) is left as it is */
	IG_FK_CPU,		/* u32 */
	IG_FK_FILE_KEY,		/* u64 IG_FILE_KEY() */
	IG_FK_DEVICE,		/* u32 NVML's index */
};

enum ig_field_when {
	IG_FW_ALWAYS = 0,
	IG_FW_EQ,		/* member test == value */
	IG_FW_FLAG,		/* member test & value */
};

/* One line of bpf/record_fields.def.  Offsets and sizes in bytes. */
struct ig_field {
	uint16_t type;		/* IG_REC_* */
	uint8_t kind;		/* enum ig_field_kind */
	uint8_t size;		/* of the field */
	uint16_t off;		/* in the record; an array's: in its entries */
	uint8_t when;		/* enum ig_field_when */
	uint8_t test_size;
	uint16_t test_off;
	uint32_t value;
	uint16_t stride;	/* an array's entry (0: not an array) */
	uint16_t max;		/* entries the array holds */
	uint16_t base;		/* the array's first entry */
	uint16_t count_off;	/* entries used */
	uint8_t count_size;
};

/* The new value of @v, a value of @kind; the header's CPU is given its
 * low 16 bits (IG_HDR_CPU()) and keeps its flags. */
typedef uint64_t (*ig_remap_fn)(void *ctx, enum ig_field_kind kind, uint64_t v);

/* Every field of @h that bpf/record_fields.def lists for its type, and
 * its header's, through @fn; fields past h->size are left alone, a type
 * not listed has only its header's changed. */
void ig_remap_record(struct ig_hdr *h, ig_remap_fn fn, void *ctx);

/* The table, for its tests: @n lines. */
const struct ig_field *ig_remap_table(size_t *n);
/* Does the table list @type (IG_FIELDS_NONE included)? */
bool ig_remap_listed(unsigned int type);

#endif
