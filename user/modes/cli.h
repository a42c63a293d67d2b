/* SPDX-License-Identifier: GPL-2.0 */
/* Command line: `idlegap {check|attach|run|report|top} [OPTIONS]`. */
#ifndef IG_CLI_H
#define IG_CLI_H

#include <stdbool.h>
#include <sys/types.h>
#include "modes/cli_base.h"
#include "modes/session.h"
#include "modes/report_merge.h"
#include "engine/merge.h"

#define IG_MAX_PIDS 64
#define IG_MAX_DURATION_S (366 * 24 * 3600)	/* -d */

enum ig_cmd { IG_CMD_NONE, IG_CMD_CHECK, IG_CMD_ATTACH, IG_CMD_RUN, IG_CMD_REPORT,
	      IG_CMD_TOP };

struct ig_cli {
	enum ig_cmd cmd;
	struct ig_session_opts s;
	pid_t pids[IG_MAX_PIDS];
	pid_t check_pid;
	const char *recording;		/* the first */
	const char *recordings[IG_MERGE_MAX];
	int nrecordings;
	struct ig_clock_offset offsets[IG_MERGE_MAX];
	int noffsets;
	bool partial;
	bool est_block_s_given;	/* --estimate-block-s */
};

/*
 * Parses argv into @c (which keeps pointers into argv).  Returns 0 to go
 * on, 2 on bad usage (the message is printed), or -1 when help or the
 * version was printed and the program should exit 0.
 */
int ig_cli_parse(int argc, char **argv, struct ig_cli *c);

#endif
