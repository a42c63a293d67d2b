// SPDX-License-Identifier: GPL-2.0
/*
 * SIGUSR1: a report of the run so far, while the run goes on
 * (docs/design.md §7.10).  A child process forked with the run's engine
 * as it is (copy on write) flushes its reorder stage into it, ends its
 * stream there and writes the report; the run reaps it, and a second
 * SIGUSR1 waits for the first report to be done.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "modes/session_int.h"
#include "probes/log.h"
#include "probes/tracer.h"
#include "stream/reorder.h"
#include "util/clock.h"

static volatile sig_atomic_t usr1;

static void on_usr1(int sig)
{
	(void)sig;
	usr1 = 1;
}

void ig_session_usr1_signals(const struct session *s)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };

	(void)s;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}

void ig_session_usr1_wait(struct session *s)
{
	if (s->usr1_child > 0) {
		waitpid(s->usr1_child, NULL, 0);
		s->usr1_child = 0;
	}
}

static int so_far(struct session *s, unsigned int n)
{
	const struct ig_output_opts *out = &s->o->out;
	bool json_stdout = out->json_path && !strcmp(out->json_path, "-");
	struct ig_stats st = { .h = { .type = IG_REC_STATS, .size = sizeof(st) } };
	struct ig_end end = {
		.h = { .type = IG_REC_END, .size = sizeof(end) },
		.reason = IG_STOP_SO_FAR,
	};
	char path[4096], *text = NULL;
	size_t len = 0;
	int rc = 0, err;

	s->in_child = true;
	/* the timeline is the run's, written at its end */
	ig_engine_observe(s->engine, NULL);
	ig_reorder_flush(s->reorder);
	st.h.ts = end.h.ts = ig_mono_ns();
	if (!ig_tracer_stats(s->cap.tracer, &st)) {
		st.user_lost = ig_reorder_late(s->reorder);
		ig_engine_feed(s->engine, &st.h);
	}
	end.nrecords = s->nrecords;
	ig_engine_feed(s->engine, &end.h);
	ig_engine_finish(s->engine);
	if (!out->quiet && !json_stdout) {
		printf("=== the run so far (SIGUSR1 %u): %.1f s ===\n", n, (end.h.ts - s->t0) / 1e9);
		if (ig_engine_report_text(s->engine, stdout) || fflush(stdout))
			rc = 1;
	}
	if (out->json_path) {
		err = ig_engine_report_json_buf(s->engine, &text, &len);
		if (err) {
			ig_err("SIGUSR1 %u: cannot make the JSON report: %s", n, strerror(-err));
			return 1;
		}
		ig_session_days_path(path, sizeof(path), out->json_path, "usr1", n);
		rc |= ig_session_write_file(json_stdout ? "-" : path,
					    json_stdout ? "the JSON report" : path, text, len);
		free(text);
	}
	return rc;
}

static void usr1_report(struct session *s)
{
	pid_t pid;

	ig_session_usr1_wait(s);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		ig_warn("SIGUSR1: cannot make a report of the run so far: %s", strerror(errno));
		return;
	}
	s->nusr1++;
	if (!pid)
		_exit(so_far(s, s->nusr1));
	s->usr1_child = pid;
	ig_debug("SIGUSR1 %u: the report of the run so far is made by pid %d", s->nusr1, pid);
}

void ig_session_usr1_tick(struct session *s)
{
	int st;

	if (usr1) {
		usr1 = 0;
		usr1_report(s);
	}
	if (s->usr1_child > 0 && waitpid(s->usr1_child, &st, WNOHANG) == s->usr1_child)
		s->usr1_child = 0;
}
