// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness over the /metrics request path (httpd.c with
 * libmicrohttpd): each input is sent as raw bytes over a loopback
 * connection to one server started on the first input, the sending side
 * then shut, and what comes back within 50 ms is read (an incomplete
 * request waits for the server's deadline, here 300 ms, which the harness
 * does not wait for).  Every 256th input a well-formed scrape must still
 * get its 200 and the exposition.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include "views/httpd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char body[] = "# HELP idlegap_up 1\n# TYPE idlegap_up gauge\nidlegap_up 1\n";

static int render(void *ctx, char **buf, size_t *len)
{
	(void)ctx;
	*buf = strdup(body);
	if (!*buf)
		return -12;
	*len = strlen(body);
	return 0;
}

/* Sends @n bytes and reads the answer to its end or until @wait_ms pass
 * without a byte; the bytes read. */
static size_t exchange(int port, const void *d, size_t n, char *out, size_t cap,
		       int wait_ms)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval tv = { .tv_sec = wait_ms / 1000, .tv_usec = wait_ms % 1000 * 1000 };
	size_t got = 0;
	ssize_t r;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		abort();
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		abort();
	if (n)
		(void)!write(fd, d, n);
	shutdown(fd, SHUT_WR);
	while (got < cap - 1 && (r = read(fd, out + got, cap - 1 - got)) > 0)
		got += (size_t)r;
	out[got] = '\0';
	close(fd);
	return got;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ig_httpd *h;
	static unsigned long runs;
	static const char scrape[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
	static char out[65536];
	static const struct ig_httpd_limits lim = { 1024, 1024, 300 };

	if (!h) {
		h = ig_httpd_start_limits("127.0.0.1:0", render, NULL, &lim);
		if (!h) {
			perror("fuzz_http: cannot listen on loopback");
			abort();
		}
	}
	exchange(ig_httpd_port(h), data, size, out, sizeof(out), 50);
	if (++runs % 256 == 0) {
		exchange(ig_httpd_port(h), scrape, sizeof(scrape) - 1, out, sizeof(out), 5000);
		if (strncmp(out, "HTTP/1.1 200", 12) || !strstr(out, "\r\n\r\n# HELP idlegap_up"))
			abort();
	}
	return 0;
}
