/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IG_LOG_H
#define IG_LOG_H

#include <stdbool.h>

extern bool ig_verbose;

enum ig_log_level {
	IG_LOG_ERR,
	IG_LOG_WARN,
	IG_LOG_INFO,
	IG_LOG_DEBUG,	/* only with -v */
};

/*
 * Who prints: main, the session (session*.c) and check alone.  Library
 * layers (tracer*, cuda_attach, elfsym, procfs, discovery, ...) return a
 * negative errno, with a line for the caller where one helps (a `why`
 * buffer, or an event); their only output is ig_debug's trace under -v.
 *
 * One line on stderr, prefixed "idlegap: " and the level's word: "error: "
 * for what failed (the exit status is then 1 or 2), "warning: " for what
 * was left out, none for progress (ig_info).
 */
void ig_log(enum ig_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define ig_err(...)	ig_log(IG_LOG_ERR, __VA_ARGS__)
#define ig_warn(...)	ig_log(IG_LOG_WARN, __VA_ARGS__)
#define ig_info(...)	ig_log(IG_LOG_INFO, __VA_ARGS__)
#define ig_debug(...)	ig_log(IG_LOG_DEBUG, __VA_ARGS__)
/* Routes libbpf's messages through ig_debug (quiet unless -v). */
void ig_log_setup_libbpf(void);

/* A program the kernel's verifier refused: its name and the last lines
 * of the verifier's log (what it refused), as libbpf reported them. */
struct ig_bpf_refusal {
	char prog[64];
	char reason[400];
};
/* While @r is set, libbpf's reports of a refused program fill it in;
 * NULL stops. */
void ig_log_catch_refusal(struct ig_bpf_refusal *r);

#endif
