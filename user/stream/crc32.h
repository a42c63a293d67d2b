/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IG_CRC32_H
#define IG_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* zlib's crc32(): the same values, chained the same way (start with 0). */
uint32_t ig_crc32(uint32_t crc, const void *p, size_t n);

#endif
