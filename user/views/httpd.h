/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's /metrics endpoint over libmicrohttpd: GET and HEAD of
 * /metrics answer the exposition @render gives (rendered per request, so
 * a scrape is one snapshot of the registry taken under its mutex); other
 * paths 404, other methods 405.  One internal thread serves.
 */
#ifndef IG_HTTPD_H
#define IG_HTTPD_H

#include <stddef.h>

/* The default address: loopback only, and not DCGM-exporter's 9400. */
#define IG_HTTPD_PORT		10437
#define IG_HTTPD_LISTEN		"127.0.0.1:10437"

/*
 * Against slow clients: connections from one client address at most, all
 * connections at most, and the time from accepting a connection to closing
 * it, request read and answer sent (a scrape answers in milliseconds).
 */
#define IG_HTTPD_PER_CLIENT	16
#define IG_HTTPD_MAX_CONN	512
#define IG_HTTPD_DEADLINE_S	10

struct ig_httpd_limits {
	unsigned int per_client;
	unsigned int max_conn;
	unsigned int deadline_ms;
};

/* A new buffer of *@len bytes (freed by the server), or -errno. */
typedef int (*ig_httpd_render_fn)(void *ctx, char **buf, size_t *len);

struct ig_httpd;

/*
 * Listens on @listen ("ADDR:PORT", "[ADDR6]:PORT"; port 0 picks one) and
 * serves.  NULL with errno set: EINVAL for a bad address, EADDRINUSE,
 * EACCES... from bind.
 */
struct ig_httpd *ig_httpd_start(const char *listen, ig_httpd_render_fn render,
				void *ctx);
/* The same with other @lim (NULL: the defaults above); EINVAL for a zero
 * limit or max_conn under per_client. */
struct ig_httpd *ig_httpd_start_limits(const char *listen,
				       ig_httpd_render_fn render, void *ctx,
				       const struct ig_httpd_limits *lim);
/* The port it listens on (the one picked, for port 0). */
int ig_httpd_port(const struct ig_httpd *h);
void ig_httpd_stop(struct ig_httpd *h);

#endif
