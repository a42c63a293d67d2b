/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IG_LOG_H
#define IG_LOG_H

#include <stdbool.h>

extern bool ig_verbose;

/* One line on stderr, prefixed "idlegap: ". */
void ig_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ig_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ig_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Only with -v. */
void ig_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Routes libbpf's messages through ig_debug (quiet unless -v). */
void ig_log_setup_libbpf(void);

#endif
