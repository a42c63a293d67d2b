// SPDX-License-Identifier: GPL-2.0
/*
 * /metrics over libmicrohttpd (httpd.h).  The socket is bound here, not by
 * the library, so a port in use comes back as EADDRINUSE for the caller's
 * one-line message instead of a NULL daemon without a reason.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "httpd.h"
#include "metrics.h"

struct ig_httpd {
	struct MHD_Daemon *d;
	int port;
	ig_httpd_render_fn render;
	void *ctx;
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code,
			     const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
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
	struct ig_httpd *h = calloc(1, sizeof(*h));
	int fd;

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
	h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
				handle, h, MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)64,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
				MHD_OPTION_END);
	if (!h->d) {
		close(fd);
		free(h);
		errno = EIO;
		return NULL;
	}
	return h;
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
	free(h);
}
