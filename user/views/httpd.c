// SPDX-License-Identifier: GPL-2.0
/*
 * /metrics over libmicrohttpd (httpd.h).  The socket is bound here, not by
 * the library, so a port in use comes back as EADDRINUSE for the caller's
 * one-line message instead of a NULL daemon without a reason.
 *
 * Slow clients (docs/design.md §7.5): one client address holds at most
 * IG_HTTPD_PER_CLIENT connections, all of them together at most
 * IG_HTTPD_MAX_CONN, and every connection is answered with "Connection:
 * close" and shut down IG_HTTPD_DEADLINE_S seconds after it was accepted
 * however busily it trickles bytes (the library's own timeout counts idle
 * time only, so a header line every few seconds would hold it forever).
 * A sweeper thread shuts such sockets down; the library then sees the end
 * of the stream and closes them itself.
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "views/httpd.h"
#include "views/metrics.h"

/* One accepted connection, until the library reports it closed. */
struct conn {
	struct conn *prev, *next;
	int fd;
	struct timespec accepted;	/* CLOCK_MONOTONIC */
	int cut;			/* shut down past its deadline */
};

struct ig_httpd {
	struct MHD_Daemon *d;
	int port;
	ig_httpd_render_fn render;
	void *ctx;
	unsigned int deadline_ms;
	pthread_mutex_t lock;		/* conns, stop */
	pthread_cond_t wake;
	struct conn *conns;
	int stop;
	pthread_t sweeper;
	int have_sweeper;
};

static void note_conn(void *cls, struct MHD_Connection *c, void **sctx,
		      enum MHD_ConnectionNotificationCode code)
{
	struct ig_httpd *h = cls;
	struct conn *k;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
			c, MHD_CONNECTION_INFO_CONNECTION_FD);

		*sctx = NULL;
		k = calloc(1, sizeof(*k));
		if (!k || !ci) {
			/* untracked, it would escape the deadline: refuse it */
			free(k);
			if (ci)
				shutdown(ci->connect_fd, SHUT_RDWR);
			return;
		}
		k->fd = ci->connect_fd;
		clock_gettime(CLOCK_MONOTONIC, &k->accepted);
		pthread_mutex_lock(&h->lock);
		k->next = h->conns;
		if (h->conns)
			h->conns->prev = k;
		h->conns = k;
		pthread_mutex_unlock(&h->lock);
		*sctx = k;
		return;
	}
	/* closed: the library closes the socket after this returns */
	k = *sctx;
	if (!k)
		return;
	pthread_mutex_lock(&h->lock);
	if (k->prev)
		k->prev->next = k->next;
	else
		h->conns = k->next;
	if (k->next)
		k->next->prev = k->prev;
	pthread_mutex_unlock(&h->lock);
	free(k);
	*sctx = NULL;
}

static long long ms_since(const struct timespec *a, const struct timespec *now)
{
	return (now->tv_sec - a->tv_sec) * 1000LL +
	       (now->tv_nsec - a->tv_nsec) / 1000000;
}

/* Shuts down every connection older than the deadline, ten times a
 * deadline (at least every 100 ms). */
static void *sweep(void *arg)
{
	struct ig_httpd *h = arg;
	long tick_ms = h->deadline_ms / 10 > 100 ? 100 : (long)h->deadline_ms / 10 + 1;
	struct timespec now, until;
	struct conn *k;

	pthread_mutex_lock(&h->lock);
	while (!h->stop) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		for (k = h->conns; k; k = k->next)
			if (!k->cut && ms_since(&k->accepted, &now) >= h->deadline_ms) {
				/* the fd stays open until the library's close,
				 * which waits for this lock in note_conn */
				shutdown(k->fd, SHUT_RDWR);
				k->cut = 1;
			}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += tick_ms * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&h->wake, &h->lock, &until);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code,
			     const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	MHD_add_response_header(r, "Connection", "close");
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, "Allow", "GET, HEAD");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result metrics(struct ig_httpd *h, struct MHD_Connection *c)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char *buf = NULL;
	size_t len = 0;

	if (h->render(h->ctx, &buf, &len))
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	r = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", IG_METRICS_CONTENT_TYPE);
	MHD_add_response_header(r, "Connection", "close");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_size, void **state)
{
	struct ig_httpd *h = cls;

	(void)version;
	(void)upload;
	/* the first call for a request only announces it */
	if (!*state) {
		*state = h;
		return MHD_YES;
	}
	/* a body, if any, is read and ignored before the answer */
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n");
	return metrics(h, c);
}

/* "1.2.3.4:9", "[::1]:9" into a bound, listening socket; -errno. */
static int listen_on(const char *spec, int *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[128], *colon;
	struct addrinfo *ai;
	int fd, one = 1, err;

	if (!spec || strlen(spec) >= sizeof(host))
		return -EINVAL;
	strcpy(host, spec);
	colon = strrchr(host, ':');
	if (!colon || !colon[1])
		return -EINVAL;
	*colon = '\0';
	if (host[0] == '[' && colon[-1] == ']') {
		colon[-1] = '\0';
		memmove(host, host + 1, strlen(host));
	}
	if (getaddrinfo(host, colon + 1, &hints, &ai))
		return -EINVAL;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	err = fd < 0 ? -errno : 0;
	if (!err)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (!err && (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64)))
		err = -errno;
	freeaddrinfo(ai);
	if (!err && getsockname(fd, (struct sockaddr *)&ss, &sl))
		err = -errno;
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	*port = ntohs(ss.ss_family == AF_INET6 ?
		      ((struct sockaddr_in6 *)&ss)->sin6_port :
		      ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

struct ig_httpd *ig_httpd_start(const char *listen, ig_httpd_render_fn render,
				void *ctx)
{
	return ig_httpd_start_limits(listen, render, ctx, NULL);
}

/* Stops the sweeper, if it runs, and frees @h. */
static void release(struct ig_httpd *h)
{
	if (h->have_sweeper) {
		pthread_mutex_lock(&h->lock);
		h->stop = 1;
		pthread_cond_signal(&h->wake);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->sweeper, NULL);
	}
	pthread_cond_destroy(&h->wake);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

struct ig_httpd *ig_httpd_start_limits(const char *listen,
				       ig_httpd_render_fn render, void *ctx,
				       const struct ig_httpd_limits *lim)
{
	struct ig_httpd_limits l = { IG_HTTPD_PER_CLIENT, IG_HTTPD_MAX_CONN,
				     IG_HTTPD_DEADLINE_S * 1000 };
	struct ig_httpd *h;
	int fd;

	if (lim)
		l = *lim;
	if (!l.per_client || l.max_conn < l.per_client || !l.deadline_ms) {
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	fd = listen_on(listen, &h->port);
	if (fd < 0) {
		free(h);
		errno = -fd;
		return NULL;
	}
	h->render = render;
	h->ctx = ctx;
	h->deadline_ms = l.deadline_ms;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->wake, NULL);
	if (pthread_create(&h->sweeper, NULL, sweep, h)) {
		close(fd);
		goto fail;
	}
	h->have_sweeper = 1;
	/* epoll, so that the connection limit is not FD_SETSIZE's */
	h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL,
				0, NULL, NULL, handle, h,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, l.max_conn,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, l.per_client,
				MHD_OPTION_CONNECTION_TIMEOUT,
				(unsigned int)((l.deadline_ms + 999) / 1000),
				MHD_OPTION_NOTIFY_CONNECTION, note_conn, h,
				MHD_OPTION_END);
	if (!h->d) {
		close(fd);
		goto fail;
	}
	return h;
fail:
	release(h);
	errno = EIO;
	return NULL;
}

int ig_httpd_port(const struct ig_httpd *h)
{
	return h->port;
}

void ig_httpd_stop(struct ig_httpd *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);	/* closes the listening socket too */
	release(h);
}
