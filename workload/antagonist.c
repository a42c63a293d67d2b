// SPDX-License-Identifier: GPL-2.0
/*
 * What starves the GPU in the scenarios that are not about the loader's own
 * reads:
 *   network  a loopback TCP sample server (child process) that sleeps
 *            before each reply, so workers wait in recv();
 *   cpu      CPU hog processes pinned to the CPU the workers and the
 *            feeder are pinned to, so they preempt them;
 *   lock     a thread of the feeder process that holds the feeder's
 *            per-step pthread mutex while computing, so the feeder waits
 *            in FUTEX_WAIT.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trainsim.h"

static pid_t fork_child(const char *name)
{
	pid_t parent = getpid(), pid = fork();

	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	prctl(PR_SET_NAME, name);
	return 0;
}

/* ---- network ------------------------------------------------------------- */

struct conn {
	int fd;
	const unsigned char *sample;
	size_t bytes;
	uint64_t delay_ns;
};

static void *serve_conn(void *p)
{
	struct conn *c = p;
	uint32_t idx;
	size_t off;
	ssize_t n;

	while (recv(c->fd, &idx, sizeof(idx), MSG_WAITALL) == sizeof(idx)) {
		sleep_ns(c->delay_ns);
		for (off = 0; off < c->bytes; off += (size_t)n) {
			n = send(c->fd, c->sample + off, c->bytes - off,
				 MSG_NOSIGNAL);
			if (n <= 0)
				goto out;
		}
	}
out:
	close(c->fd);
	free(c);
	return NULL;
}

static void serve(int lfd, size_t bytes, uint64_t delay_ns)
{
	unsigned char *sample = malloc(bytes);
	pthread_t t;
	size_t i;

	if (!sample)
		_exit(1);
	for (i = 0; i < bytes; i++)
		sample[i] = (unsigned char)(i * 131);
	for (;;) {
		struct conn *c = malloc(sizeof(*c));
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0 || !c) {
			free(c);
			if (fd >= 0)
				close(fd);
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		*c = (struct conn){ fd, sample, bytes, delay_ns };
		if (pthread_create(&t, NULL, serve_conn, c))
			_exit(1);
		pthread_detach(t);
	}
}

int server_start(struct run *r)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t len = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(lfd, 64) || getsockname(lfd, (struct sockaddr *)&a, &len))
		return -1;
	r->server_port = ntohs(a.sin_port);
	r->server = fork_child("ts-server");
	if (r->server < 0)
		return -1;
	if (!r->server)
		serve(lfd, r->ds.sample_bytes,
		      (uint64_t)r->o->net_delay_us * 1000);
	close(lfd);
	return 0;
}

/* ---- CPU hogs ------------------------------------------------------------ */

int hogs_start(struct run *r)
{
	volatile uint64_t spin = 0;
	char name[16];
	int i;

	for (i = 0; i < r->o->hogs && i < MAX_HOGS; i++) {
		snprintf(name, sizeof(name), "ts-hog%d", i);
		r->hog_pid[i] = fork_child(name);
		if (r->hog_pid[i] < 0)
			return -1;
		if (!r->hog_pid[i]) {
			pin_self(r->pin_cpu);
			for (;;)
				spin++;
		}
		r->nhogs++;
	}
	return 0;
}

/* ---- lock holder --------------------------------------------------------- */

static void *holder_main(void *p)
{
	struct run *r = p;
	uint64_t hold = (uint64_t)r->o->hold_ms * 1000000, end;
	unsigned char buf[4096] = { 0 };

	prctl(PR_SET_NAME, "ts-holder");
	r->holder_tid = gettid();
	while (!r->stop) {
		pthread_mutex_lock(&r->step_lock);
		for (end = mono_ns() + hold; mono_ns() < end;)
			buf[0] ^= (unsigned char)decode(buf, sizeof(buf), 1000);
		pthread_mutex_unlock(&r->step_lock);
		/* glibc mutexes are not fair: leave the waiter a window. */
		sleep_ns(1000000);
	}
	return NULL;
}

int holder_start(struct run *r)
{
	if (pthread_create(&r->holder, NULL, holder_main, r))
		return -1;
	r->holder_running = true;
	return 0;
}

void antagonists_stop(struct run *r)
{
	int i;

	r->stop = 1;
	for (i = 0; i < r->nhogs; i++) {
		kill(r->hog_pid[i], SIGKILL);
		waitpid(r->hog_pid[i], NULL, 0);
	}
	if (r->server > 0) {
		kill(r->server, SIGKILL);
		waitpid(r->server, NULL, 0);
	}
	if (r->holder_running)
		pthread_join(r->holder, NULL);
	r->holder_running = false;
}
