/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The NCCL entry points idlegap probes (enum ig_nccl_api), by id or name,
 * and what a record's numbers mean: bytes of a datatype, names of
 * reduction ops and record kinds.  One list, bpf/nccl_api.def.
 */
#ifndef IG_NCCL_API_H
#define IG_NCCL_API_H

#include <stdbool.h>
#include <stdio.h>
#include "stream/records.h"

/* "ncclAllReduce"; NULL for an unknown id. */
const char *ig_nccl_api_name(unsigned int api);
/* The short name of a collective: "all_reduce", "send"; NULL if none. */
const char *ig_nccl_op_name(unsigned int api);
/* enum ig_nccl_api of a symbol name, -1 if not probed. */
int ig_nccl_api_by_name(const char *name);
enum ig_nccl_class ig_nccl_class_of(unsigned int api);
/* Bytes of one element of ncclDataType_t @dt, 0 if unknown. */
unsigned int ig_nccl_dtype_size(unsigned int dt);
/* "sum", "prod", "max", "min", "avg", "premulsum" (op >= 5 is user made). */
const char *ig_nccl_redop_name(unsigned int op);
const char *ig_nccl_kind_name(unsigned int kind);
/* Bytes of the call's own buffer: count × datatype size. */
unsigned long long ig_nccl_bytes(const struct ig_nccl *r);
/* The fields of @r after its header, as `dump` prints them. */
void ig_nccl_dump(FILE *f, const struct ig_nccl *r);

#endif
