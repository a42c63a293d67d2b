// SPDX-License-Identifier: GPL-2.0
/* idlegap: when did the GPU sit idle, and what on the host made it wait. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "modes/agent.h"
#include "modes/check.h"
#include "modes/cli.h"
#include "probes/log.h"
#include "modes/session.h"
#include "modes/top.h"

/*
 * Standard input, output and error closed by the caller: /dev/null takes
 * their numbers before any other file can (a report opened next would
 * become "standard output", a BPF map's fd would take the screen's
 * writes).  Opened the wrong way round (stdin write-only, stdout and
 * stderr read-only), so using them fails with EBADF as a closed fd would:
 * a report asked for on a closed stdout is an error, not lost in silence.
 */
static void hold_std_fds(void)
{
	int fd;

	for (fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		if (open("/dev/null", fd ? O_RDONLY : O_WRONLY) != fd)
			_exit(1);
	}
}

int main(int argc, char **argv)
{
	struct ig_cli c;
	int rc;

	hold_std_fds();
	ig_log_setup_libbpf();
	/* `agent` has its own options (user/modes/agent_cli.c) */
	if (argc >= 2 && !strcmp(argv[1], "agent"))
		return ig_agent_main(argc - 1, argv + 1);
	rc = ig_cli_parse(argc, argv, &c);
	if (rc)
		return rc < 0 ? 0 : rc;
	switch (c.cmd) {
	case IG_CMD_CHECK:
		return ig_check(c.check_pid, c.s.libcuda_path);
	case IG_CMD_REPORT:
		if (c.nrecordings > 1 &&
		    (rc = ig_session_report_pieces(c.recordings, c.nrecordings, c.partial,
						   &c.s.out)) >= 0)
			return rc;
		if (c.nrecordings > 1)
			return ig_merge_report(c.recordings, c.nrecordings, c.partial,
					       c.offsets, c.noffsets, &c.s.out);
		return ig_session_report(c.recording, c.partial, &c.s.out);
	case IG_CMD_TOP:
		return ig_top_main(&c.s);
	default:
		return ig_session_trace(&c.s);
	}
}
