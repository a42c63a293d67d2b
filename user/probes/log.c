// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "probes/log.h"

bool ig_verbose;

void ig_log(enum ig_log_level level, const char *fmt, ...)
{
	static const char *const prefix[] = {
		[IG_LOG_ERR] = "error: ", [IG_LOG_WARN] = "warning: ",
		[IG_LOG_INFO] = "", [IG_LOG_DEBUG] = "debug: ",
	};
	va_list ap;

	if (level == IG_LOG_DEBUG && !ig_verbose)
		return;
	fprintf(stderr, "idlegap: %s", prefix[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static struct ig_bpf_refusal *refusal;

void ig_log_catch_refusal(struct ig_bpf_refusal *r)
{
	if (r)
		memset(r, 0, sizeof(*r));
	refusal = r;
}

/* The last lines of a verifier log that say why: not its statistics, nor
 * the source lines it quotes. */
static void log_tail(const char *log, char *out, size_t n)
{
	const char *lines[3] = {}, *p = log, *e;
	size_t len[3] = {}, k = 0, i, off = 0;

	for (; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, '\n');
		if (e == p || *p == ';' || !strncmp(p, "processed ", 10) ||
		    !strncmp(p, "verification time", 17) ||
		    !strncmp(p, "stack depth", 11) || !strncmp(p, "-- END", 6))
			continue;
		lines[k % 3] = p;
		len[k++ % 3] = e - p;
	}
	for (i = k > 2 ? k - 2 : 0; i < k && off + 4 < n; i++)
		off += snprintf(out + off, n - off, "%s%.*s", off ? "; " : "",
				(int)len[i % 3], lines[i % 3]);
}

/* libbpf reports a refused program as "prog 'NAME': BPF program load
 * failed: ..." and then its verifier log between BEGIN/END markers. */
static void catch_refusal(const char *msg)
{
	const char *p = strstr(msg, "prog '"), *q, *log;

	if (!p || !(q = strchr(p + 6, '\'')))
		return;
	if (strstr(msg, "BPF program load failed")) {
		snprintf(refusal->prog, sizeof(refusal->prog), "%.*s", (int)(q - p - 6), p + 6);
		refusal->reason[0] = 0;
	} else if ((log = strstr(msg, "-- BEGIN PROG LOAD LOG --\n")) && refusal->prog[0]) {
		log_tail(log + 26, refusal->reason, sizeof(refusal->reason));
	}
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	char *msg = NULL;
	va_list aq;
	int n = 0;

	(void)level;
	if (refusal) {
		va_copy(aq, ap);
		if (vasprintf(&msg, fmt, aq) >= 0)
			catch_refusal(msg);
		va_end(aq);
	}
	if (ig_verbose)
		n = msg ? fputs(msg, stderr) : vfprintf(stderr, fmt, ap);
	free(msg);
	return n;
}

void ig_log_setup_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
