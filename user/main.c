// SPDX-License-Identifier: GPL-2.0
/* idlegap: when did the GPU sit idle, and what on the host made it wait. */
#include <string.h>
#include "agent.h"
#include "check.h"
#include "cli.h"
#include "log.h"
#include "session.h"
#include "top.h"

int main(int argc, char **argv)
{
	struct ig_cli c;
	int rc;

	ig_log_setup_libbpf();
	/* `agent` has its own options (user/agent_cli.c) */
	if (argc >= 2 && !strcmp(argv[1], "agent"))
		return ig_agent_main(argc - 1, argv + 1);
	rc = ig_cli_parse(argc, argv, &c);
	if (rc)
		return rc < 0 ? 0 : rc;
	switch (c.cmd) {
	case IG_CMD_CHECK:
		return ig_check(c.check_pid, c.s.libcuda_path);
	case IG_CMD_REPORT:
		return ig_session_report(c.recording, c.partial, &c.s.out);
	case IG_CMD_TOP:
		return ig_top_main(&c.s);
	default:
		return ig_session_trace(&c.s);
	}
}
