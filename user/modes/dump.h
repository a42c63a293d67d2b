/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IG_DUMP_H
#define IG_DUMP_H

#include <stdio.h>
#include "stream/records.h"

/* One line per record, "TS TYPE key=value...": for bug reports and tests. */
void ig_dump_record(FILE *f, const struct ig_hdr *rec);

#endif
