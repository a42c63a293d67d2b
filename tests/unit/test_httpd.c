// SPDX-License-Identifier: GPL-2.0
/*
 * /metrics over libmicrohttpd (httpd.c), spoken to over a real loopback
 * socket: GET and HEAD answer the exposition with its content type, other
 * paths 404, other methods 405; a port in use and a bad address fail
 * with their errno.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "views/httpd.h"
#include "views/metrics.h"

static int render(void *ctx, char **buf, size_t *len)
{
	return ig_metrics_render(ctx, buf, len);
}

/* The whole answer to @req sent to 127.0.0.1:@port. */
static char *ask(int port, const char *req)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port) };
	static char buf[65536];
	size_t got = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	while (got < sizeof(buf) - 1 &&
	       (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	close(fd);
	return buf;
}

static void test_serve(void **state)
{
	struct ig_metrics *m = ig_metrics_new(NULL);
	struct ig_httpd *h = ig_httpd_start("127.0.0.1:0", render, m);
	struct ig_httpd *h2;
	char spec[32], *r;
	int port;

	(void)state;
	assert_non_null(h);
	port = ig_httpd_port(h);
	assert_true(port > 0);
	r = ask(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_non_null(strstr(r, "HTTP/1.1 200"));
	assert_non_null(strstr(r, "Content-Type: " IG_METRICS_CONTENT_TYPE "\r\n"));
	assert_non_null(strstr(r, "\r\n\r\n# HELP idlegap_gpu_seconds_total"));
	assert_non_null(strstr(r, "\nidlegap_windows_total 0\n"));
	r = ask(port, "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_non_null(strstr(r, "HTTP/1.1 200"));
	assert_null(strstr(r, "# HELP"));
	r = ask(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_non_null(strstr(r, "HTTP/1.1 404"));
	r = ask(port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
		"Connection: close\r\n\r\nabc");
	assert_non_null(strstr(r, "HTTP/1.1 405"));
	assert_non_null(strstr(r, "Allow: GET, HEAD\r\n"));
	r = ask(port, "DELETE /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_non_null(strstr(r, "HTTP/1.1 405"));
	/* the same port again */
	snprintf(spec, sizeof(spec), "127.0.0.1:%d", port);
	errno = 0;
	h2 = ig_httpd_start(spec, render, m);
	assert_null(h2);
	assert_int_equal(errno, EADDRINUSE);
	ig_httpd_stop(h);
	ig_metrics_free(m);
}

static void test_bad_address(void **state)
{
	static const char *const bad[] = { "127.0.0.1", "localhost:1", "1.2.3:x",
					   "127.0.0.1:", "[::1:80", "" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_null(ig_httpd_start(bad[i], render, NULL));
		assert_int_equal(errno, EINVAL);
	}
	errno = 0;
	assert_null(ig_httpd_start(NULL, render, NULL));
	assert_int_equal(errno, EINVAL);
}

static void test_ipv6(void **state)
{
	struct ig_httpd *h = ig_httpd_start("[::1]:0", render, NULL);

	(void)state;
	if (!h) {
		print_message("# no IPv6 loopback here (%s)\n", strerror(errno));
		skip();
	}
	assert_true(ig_httpd_port(h) > 0);
	ig_httpd_stop(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_serve),
		cmocka_unit_test(test_bad_address),
		cmocka_unit_test(test_ipv6),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
