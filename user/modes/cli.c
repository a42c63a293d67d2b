// SPDX-License-Identifier: GPL-2.0
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "modes/cli.h"
#include "stream/cuda_api.h"
#include "probes/log.h"

#ifndef IG_VERSION		/* the Makefile gives the VERSION file's */
#define IG_VERSION "0.1"
#endif

enum {
	OPT_LIBCUDA = 0x100, OPT_PARTIAL, OPT_MIN_OFFCPU, OPT_RINGBUF,
	OPT_NO_NVML, OPT_DEPTH, OPT_GAPS, OPT_DUMP, OPT_SAMPLE_HZ,
	OPT_USER, OPT_AS_ROOT,
	OPT_PERFETTO, OPT_CLOCK_OFFSET, OPT_NODE_ROOT, OPT_EST_BLOCK,
	OPT_STEP, OPT_EVERY, OPT_OUTPUT_MAX_MB, OPT_OUTPUT_FILES, OPT_HTML,
	OPT_EST_BLOCK_S,
	OPT_FOLDED = 0x180,	/* stacks */
};

const char *argp_program_version = "idlegap " IG_VERSION;

static const char doc[] =
"idlegap: when did the GPU sit idle, and what on the host made it wait?\n"
"\n"
"USAGE:\n"
"  idlegap check [-p PID] [--libcuda PATH]\n"
"  idlegap attach -p PID[,PID...] [-d SECONDS] [--json FILE] [-o RECORDING]\n"
"                 [--every SECONDS] [--output-max-mb N [--output-files K]]\n"
"  idlegap run [OPTIONS] -- COMMAND [ARGS...]\n"
"  idlegap report [--json FILE] RECORDING [RECORDING...]\n"
"  idlegap top [-p PID[,PID...]] [-d SECONDS]\n"
"  idlegap agent [--listen ADDR:PORT] [--window S] [--every S] [--reports DIR]\n"
"\n"
"EXAMPLES:\n"
"  sudo idlegap check -p 4242          # can this process be traced?\n"
"  sudo idlegap attach -p 4242 -d 30   # trace a running job for 30 s\n"
"  sudo idlegap run --json out.json -- python3 train.py\n"
"  sudo idlegap attach -p 4242 -o job.igrec; idlegap report job.igrec\n"
"  sudo idlegap attach -p 4242 --every 3600 --json job.json \\\n"
"       -o job.igrec --output-max-mb 1024 --output-files 24  # for days\n"
"  idlegap report node1.igrec node2.igrec  # two hosts' ranks, clocks aligned\n"
"  sudo idlegap run --perfetto job.pftrace -- python3 train.py  # ui.perfetto.dev\n"
"  sudo idlegap top                    # every GPU process on the host, live\n"
"\n"
"OPTIONS:";

static const struct argp_option options[] = {
	{ "pid", 'p', "PID[,PID...]", 0, "Processes to trace (with their threads and descendants)", 0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after this long (default: Ctrl-C or the targets' exit)", 0 },
	{ "json", 'j', "FILE", 0, "Write the JSON report to FILE ('-': stdout)", 0 },
	{ "output", 'o', "RECORDING", 0, "Also write a recording for `idlegap report`", 0 },
	{ "output-max-mb", OPT_OUTPUT_MAX_MB, "N", 0, "Write the recording in pieces of at most N MB each (RECORDING.000001, ...)", 0 },
	{ "output-files", OPT_OUTPUT_FILES, "K", 0, "Keep the last K pieces of the recording (default: all)", 0 },
	{ "every", OPT_EVERY, "SECONDS", 0, "attach, run: a report of each period of this length as the job goes (--json FILE: FILE.period-N)", 0 },
	{ "libcuda", OPT_LIBCUDA, "PATH", 0, "Probe this libcuda instead of the one found", 0 },
	{ "quiet", 'q', NULL, 0, "No text report", 0 },
	{ "partial", OPT_PARTIAL, NULL, 0, "report: analyse a truncated recording anyway", 0 },
	{ "clock-offset", OPT_CLOCK_OFFSET, "NAME=SECONDS", 0, "report: add SECONDS to the clock of the recording of host (or file) NAME instead of aligning it on collectives", 0 },
	{ "dump", OPT_DUMP, NULL, 0, "report: print the records as text, in time order", 0 },
	{ "min-offcpu-us", OPT_MIN_OFFCPU, "US", 0, "Ignore off-CPU intervals shorter than this (default 1)", 0 },
	{ "ringbuf-mb", OPT_RINGBUF, "MB", 0, "Ring buffer size, a power of two (default 16)", 0 },
	{ "no-nvml", OPT_NO_NVML, NULL, 0, "Do not sample dashboard utilization", 0 },
	{ "sample-hz", OPT_SAMPLE_HZ, "HZ", 0, "On-CPU samples per second and CPU (default 997, 0: off)", 0 },
	{ "max-depth", OPT_DEPTH, "N", 0, "Waker chain depth followed (default 4)", 0 },
	{ "gaps", OPT_GAPS, "N", 0, "Idle gaps listed in the JSON report (default 1000, 0: none, -1: all)", 0 },
	{ "estimate-block", OPT_EST_BLOCK, "LAUNCHES", 0, "Estimate idle a block of this many launches per GPU at a time (attach, run: default 32768; report: 131072)", 0 },
	{ "estimate-block-s", OPT_EST_BLOCK_S, "SECONDS", 0, "and of at most this many seconds of the trace (attach, run: default 300, so that a long run's evidence is folded as it ages; report: 0, by launches alone)", 0 },
	{ "step", OPT_STEP, "cuda:CALL", 0, "A step ends at each return of this driver call (a sync, a synchronous copy), instead of being found from the loop's period", 0 },
	{ "verbose", 'v', NULL, 0, "Debug output, libbpf and verifier messages", 0 },
	{ "user", OPT_USER, "USER", 0, "run: the command runs as USER (default: sudo's invoking user)", 0 },
	{ "as-root", OPT_AS_ROOT, NULL, 0, "run: the command runs as root (not the invoking user)", 0 },
	{ "perfetto", OPT_PERFETTO, "FILE", 0, "Write a Perfetto trace (open it in ui.perfetto.dev)", 0 },
	{ "html", OPT_HTML, "FILE", 0, "Write one self-contained HTML page: GPU timeline, causes, flame graph, steps", 0 },
	{ "node-root", OPT_NODE_ROOT, "DIR", 0, "Read the container runtimes' records (pod names) under DIR/run (default /)", 0 },
	/* stacks */
	{ "folded", OPT_FOLDED, "FILE", 0, "Write folded stacks of the idle time (flame graph input), the cause as root", 0 },
	{},
};

static const char *const cmd_names[] = {
	[IG_CMD_CHECK] = "check", [IG_CMD_ATTACH] = "attach",
	[IG_CMD_RUN] = "run", [IG_CMD_REPORT] = "report",
	[IG_CMD_TOP] = "top",
};

/* --step cuda:CALL: a call whose return proves a step over; a Python
 * function is not a marker this build can see at its return. */
static void parse_step(struct argp_state *st, struct ig_cli *c, const char *arg)
{
	int api;
	enum ig_api_class k;

	if (!strncmp(arg, "python:", 7)) {
		ig_cli_error(st, "--step %s: a Python function as the step's end is "
			   "not supported; name a driver call (cuda:CALL), or leave "
			   "--step out to find the steps from the loop", arg);
		return;
	}
	if (strncmp(arg, "cuda:", 5)) {
		ig_cli_error(st, "--step %s: expected cuda:CALL, for example "
			   "cuda:cuStreamSynchronize", arg);
		return;
	}
	api = ig_api_by_name(arg + 5);
	if (api < 0) {
		ig_cli_error(st, "--step %s: no driver call of that name is probed "
			   "(idlegap check lists them)", arg);
		return;
	}
	k = ig_api_class_of((unsigned int)api);
	if (k != IG_AC_SYNC_COPY && k != IG_AC_STREAM_SYNC &&
	    k != IG_AC_CTX_SYNC && k != IG_AC_EVENT_SYNC) {
		ig_cli_error(st, "--step %s: only a call that waits for the GPU (a "
			   "sync or a synchronous copy) can end a step", arg);
		return;
	}
	c->s.out.engine.step_api = api + 1;
}

static long parse_long(struct argp_state *st, const char *what, const char *s,
		       long lo, long hi)
{
	long v;

	if (!ig_cli_long(s, lo, hi, &v)) {
		ig_cli_error(st, "invalid %s: '%s' (from %ld to %ld)", what, s, lo, hi);
		return lo;
	}
	return v;
}

/* Seconds: finite, more than 0, and at most a year (the deadline must
 * fit the clock arithmetic). */
static double parse_duration(struct argp_state *st, const char *s)
{
	double v;

	if (!ig_cli_seconds(s, IG_MAX_DURATION_S, false, &v)) {
		ig_cli_error(st, "invalid duration: '%s' (seconds, more than 0 and at most %d)",
			     s, IG_MAX_DURATION_S);
		return 0;
	}
	return v;
}

static void usage_error(struct argp_state *st, const char *msg)
{
	ig_cli_error(st, "%s", msg);
}

static void parse_pids(struct argp_state *st, struct ig_cli *c, const char *arg)
{
	char tok[32];

	while (*arg) {
		size_t n = strcspn(arg, ",");

		if (c->s.npids == IG_MAX_PIDS || n >= sizeof(tok)) {
			usage_error(st, n >= sizeof(tok) ? "invalid pid" : "too many pids");
			return;
		}
		memcpy(tok, arg, n);
		tok[n] = 0;
		c->pids[c->s.npids++] = parse_long(st, "pid", tok, 1, INT_MAX);
		arg += n + (arg[n] == ',');
	}
	if (!c->s.npids)
		usage_error(st, "-p needs a pid");
}

/* --clock-offset NAME=SECONDS */
static void parse_clock_offset(struct argp_state *st, struct ig_cli *c, const char *arg)
{
	const char *eq = strrchr(arg, '=');
	char *end;
	double v;

	if (c->cmd != IG_CMD_REPORT) {
		usage_error(st, "--clock-offset applies to report");
		return;
	}
	if (!eq || eq == arg) {
		usage_error(st, "--clock-offset wants NAME=SECONDS (a host or a recording)");
		return;
	}
	errno = 0;
	v = strtod(eq + 1, &end);
	if (errno || end == eq + 1 || *end || v != v || v > 1e9 || v < -1e9) {
		usage_error(st, "--clock-offset: SECONDS is not a number");
		return;
	}
	if (c->noffsets == IG_MERGE_MAX) {
		usage_error(st, "--clock-offset: at most 64");
		return;
	}
	if ((size_t)(eq - arg) >= sizeof(c->offsets[0].name)) {
		usage_error(st, "--clock-offset: NAME is too long");
		return;
	}
	memcpy(c->offsets[c->noffsets].name, arg, eq - arg);
	c->offsets[c->noffsets].name[eq - arg] = '\0';
	c->offsets[c->noffsets++].seconds = v;
}

static bool is_stdout(const char *path)
{
	return path && !strcmp(path, "-");
}

/* The views: --perfetto, --html and top.  1 after a usage error. */
static int check_views(struct argp_state *st, struct ig_cli *c)
{
	const struct ig_output_opts *o = &c->s.out;

	if (c->cmd == IG_CMD_TOP && (c->s.record_path || o->json_path || o->perfetto_path ||
				     o->html_path || o->dump))
		usage_error(st, "top is a live view: -o, --json, --perfetto, --html and --dump apply to the other commands");
	else if (o->perfetto_path && (c->cmd == IG_CMD_CHECK || o->dump))
		usage_error(st, "--perfetto applies to run, attach and report (not --dump)");
	else if (o->html_path && (c->cmd == IG_CMD_CHECK || o->dump))
		usage_error(st, "--html applies to run, attach and report (not --dump)");
	else if (is_stdout(o->perfetto_path) + is_stdout(o->json_path) + is_stdout(o->html_path) > 1)
		usage_error(st, "only one of --json, --perfetto and --html can go to standard output");
	else
		return 0;
	return 1;
}

static void check_end(struct argp_state *st, struct ig_cli *c)
{
	bool traces = c->cmd == IG_CMD_ATTACH || c->cmd == IG_CMD_RUN || c->cmd == IG_CMD_TOP;

	if (check_views(st, c))
		return;
	if (c->cmd == IG_CMD_ATTACH && !c->s.npids)
		usage_error(st, "attach needs -p PID");
	else if (c->cmd == IG_CMD_RUN && !c->s.argv)
		usage_error(st, "run needs a command: idlegap run -- COMMAND [ARGS...]");
	else if (c->cmd == IG_CMD_REPORT && !c->recording)
		usage_error(st, "report needs a RECORDING file");
	else if (!traces && (c->s.record_path || c->s.duration_s > 0))
		usage_error(st, "-o and -d apply to attach, run and top");
	else if (c->nrecordings > 1 && c->s.out.dump)
		usage_error(st, "--dump takes one recording");
	else if (c->noffsets && c->nrecordings < 2)
		usage_error(st, "--clock-offset applies to report of several recordings");
	else if (c->cmd != IG_CMD_REPORT && (c->partial || c->s.out.dump))
		usage_error(st, "--partial and --dump apply to report");
	else if (c->cmd == IG_CMD_RUN && c->s.npids)
		usage_error(st, "-p applies to attach, check and top");
	else if (c->s.every_s && c->cmd != IG_CMD_ATTACH && c->cmd != IG_CMD_RUN)
		usage_error(st, "--every applies to attach and run");
	else if (c->s.output_max_bytes && !c->s.record_path)
		usage_error(st, "--output-max-mb applies to a recording: give -o RECORDING");
	else if (c->s.output_files && !c->s.output_max_bytes)
		usage_error(st, "--output-files needs --output-max-mb (the size at which a piece ends)");
	else if (c->s.output_max_bytes && !strcmp(c->s.record_path, "-"))
		usage_error(st, "--output-max-mb writes files: -o names one, not standard output");
	else if (c->cmd != IG_CMD_RUN && (c->s.run_user || c->s.as_root))
		usage_error(st, "--user and --as-root apply to run");
	else if (c->s.run_user && c->s.as_root)
		usage_error(st, "--user and --as-root exclude each other");
	/* a run left on a job for days: its estimate's evidence bounded by
	 * time as well as by launches (docs/design.md §3.5) */
	if (c->cmd != IG_CMD_ATTACH && c->cmd != IG_CMD_RUN)
		return;
	ig_cli_days_engine(&c->s.out.engine, c->est_block_s_given,
			   c->s.out.perfetto_path != NULL);
}

static error_t parse_opt(int key, char *arg, struct argp_state *st)
{
	struct ig_cli *c = st->input;

	switch (key) {
	case 'p':
		if (c->cmd == IG_CMD_CHECK)
			c->check_pid = parse_long(st, "pid", arg, 1, INT_MAX);
		else
			parse_pids(st, c, arg);
		break;
	case 'd':
		c->s.duration_s = parse_duration(st, arg);
		break;
	case 'j': c->s.out.json_path = arg; break;
	case 'o': c->s.record_path = arg; break;
	case 'q': c->s.out.quiet = true; break;
	case 'v': ig_verbose = c->s.out.engine.verbose = true; break;
	case OPT_LIBCUDA: c->s.libcuda_path = arg; break;
	case OPT_PARTIAL: c->partial = true; break;
	case OPT_DUMP: c->s.out.dump = true; break;
	case OPT_MIN_OFFCPU:
		c->s.min_offcpu_ns = parse_long(st, "--min-offcpu-us", arg, 0, 1000000) * 1000;
		break;
	case OPT_RINGBUF:
		c->s.ringbuf_mb = ig_cli_ringbuf(st, arg, 16);
		break;
	case OPT_NO_NVML: c->s.no_nvml = true; break;
	case OPT_USER: c->s.run_user = arg; break;
	case OPT_AS_ROOT: c->s.as_root = true; break;
	case OPT_PERFETTO: c->s.out.perfetto_path = arg; break;
	case OPT_HTML: c->s.out.html_path = arg; break;
	case OPT_NODE_ROOT:
		ig_cli_node_root(st, arg);
		break;
	case OPT_CLOCK_OFFSET:
		parse_clock_offset(st, c, arg);
		break;
	case OPT_SAMPLE_HZ:
		c->s.sample_hz = parse_long(st, "--sample-hz", arg, 0, 100000);
		break;
	case OPT_STEP:
		parse_step(st, c, arg);
		break;
	case OPT_EVERY:
		if (!ig_cli_seconds(arg, IG_MAX_DURATION_S, false, &c->s.every_s) ||
		    c->s.every_s < 1)
			ig_cli_error(st, "invalid --every: '%s' (seconds, at least 1 and at most %d)",
				     arg, IG_MAX_DURATION_S);
		break;
	case OPT_OUTPUT_MAX_MB:
		c->s.output_max_bytes = (unsigned long long)parse_long(st, "--output-max-mb",
								       arg, 1, 1L << 20) << 20;
		break;
	case OPT_OUTPUT_FILES:
		c->s.output_files = (unsigned int)parse_long(st, "--output-files", arg, 1, 1000000);
		break;
	case OPT_EST_BLOCK:
		c->s.out.engine.est_block = (uint32_t)parse_long(st, "--estimate-block", arg,
								 64, 256L << 10);
		break;
	case OPT_EST_BLOCK_S:
		c->s.out.engine.est_block_s = (double)parse_long(st, "--estimate-block-s", arg,
								 0, IG_MAX_DURATION_S);
		c->est_block_s_given = true;
		break;
	case OPT_DEPTH:
		c->s.out.engine.max_depth = parse_long(st, "--max-depth", arg, 1, 64);
		break;
	case OPT_GAPS:
		c->s.out.engine.max_gaps_json = parse_long(st, "--gaps", arg, -1, INT_MAX);
		if (!c->s.out.engine.max_gaps_json)	/* none listed */
			c->s.out.engine.max_gaps_json = IG_GAPS_NONE;
		break;
	case ARGP_KEY_ARG:
		if (c->cmd == IG_CMD_REPORT) {
			if (c->nrecordings == IG_MERGE_MAX) {
				usage_error(st, "report merges at most 64 recordings");
				break;
			}
			if (!c->recording)
				c->recording = arg;
			c->recordings[c->nrecordings++] = arg;
		} else if (c->cmd == IG_CMD_RUN) {
			/* the command and its arguments: stop parsing here */
			c->s.argv = &st->argv[st->next - 1];
			st->next = st->argc;
		} else {
			ig_cli_error(st, "unexpected argument '%s'", arg);
		}
		break;
	/* stacks */
	case OPT_FOLDED:
		if (c->cmd == IG_CMD_CHECK)
			usage_error(st, "--folded applies to attach, run and report");
		c->s.out.folded_path = arg;
		break;
	case ARGP_KEY_END:
		/* `idlegap --help` still checks the options given with it */
		if (!ig_cli_failed() && (c->cmd == IG_CMD_NONE || !ig_cli_helping()))
			check_end(st, c);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = { options, parse_opt, NULL, doc, NULL, NULL, NULL };

int ig_cli_parse(int argc, char **argv, struct ig_cli *c)
{
	static char name[32];
	char **sub;
	size_t i;
	int rc;

	memset(c, 0, sizeof(*c));
	c->s.pids = c->pids;
	c->s.min_offcpu_ns = 1000;
	c->s.sample_hz = 997;
	c->s.self_argc = argc;
	c->s.self_argv = argv;
	c->s.out.engine.sz = sizeof(c->s.out.engine);
	if (argc < 2) {
		fprintf(stderr, "Usage: idlegap {check|attach|run|report|top|agent} [OPTIONS]\n"
				"Try 'idlegap --help'.\n");
		return 2;
	}
	for (i = 1; i < sizeof(cmd_names) / sizeof(cmd_names[0]); i++)
		if (!strcmp(argv[1], cmd_names[i]))
			c->cmd = i;
	if (c->cmd == IG_CMD_NONE) {
		if (ig_cli_asks_help(argc, argv)) {
			ig_cli_run(&argp, argc, argv, 0, c, IG_CLI_ARGP, NULL);
			return -1;
		}
		ig_err("unknown command '%s' (try 'idlegap --help')", argv[1]);
		return 2;
	}
	/* parse "idlegap CMD ..." as if "idlegap CMD" were the program */
	snprintf(name, sizeof(name), "idlegap %s", cmd_names[c->cmd]);
	sub = calloc(argc, sizeof(*sub));
	if (!sub)
		return 2;
	memcpy(sub, argv + 1, (argc - 1) * sizeof(*sub));
	sub[0] = name;
	rc = ig_cli_run(&argp, argc - 1, sub, ARGP_IN_ORDER, c, IG_CLI_ARGP, NULL);
	/* c keeps pointers to the arguments, not to the array */
	if (c->s.argv)
		c->s.argv = argv + 1 + (c->s.argv - sub);
	free(sub);
	return rc;
}
