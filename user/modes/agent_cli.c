// SPDX-License-Identifier: GPL-2.0
/* The command line of `idlegap agent`. */
#include <errno.h>
#include <string.h>
#include "modes/agent.h"
#include "modes/cli_base.h"
#include "util/escape.h"
#include "views/httpd.h"
#include "probes/log.h"
#include "views/metrics.h"

enum {
	OPT_LISTEN = 0x200, OPT_WINDOW, OPT_EVERY, OPT_REPORTS, OPT_LIBCUDA,
	OPT_LABEL, OPT_KEEP, OPT_MAX_MB, OPT_RINGBUF, OPT_NODE_ROOT, OPT_CGROUP,
};

static const char doc[] =
"idlegap agent: every GPU process on this host, traced for --window seconds\n"
"every --every seconds; Prometheus metrics on /metrics.\n"
"\n"
"EXAMPLES:\n"
"  sudo idlegap agent                          # 10 s every minute, 127.0.0.1:10437\n"
"  sudo idlegap agent --listen 0.0.0.0:10437 --label cluster=a100-east\n"
"  sudo idlegap agent --window 5 --every 5 --reports /var/lib/idlegap\n"
"\n"
"OPTIONS:";

static const struct argp_option options[] = {
	{ "listen", OPT_LISTEN, "ADDR:PORT", 0, "Serve /metrics here (default " IG_HTTPD_LISTEN ")", 0 },
	{ "window", OPT_WINDOW, "SECONDS", 0, "Trace this long each time (default 10)", 0 },
	{ "every", OPT_EVERY, "SECONDS", 0, "Start a window this often (default 60; = --window: continuous)", 0 },
	{ "reports", OPT_REPORTS, "DIR", 0, "Write each window's JSON report in DIR", 0 },
	{ "reports-keep", OPT_KEEP, "N", 0, "Window reports kept in DIR, oldest removed (default 100)", 0 },
	{ "reports-max-mb", OPT_MAX_MB, "MB", 0, "At most this many MiB of reports in DIR (default 64)", 0 },
	{ "libcuda", OPT_LIBCUDA, "PATH", 0, "Probe this libcuda in every process instead of the one it maps", 0 },
	{ "label", OPT_LABEL, "KEY=VALUE", 0, "A label on every series (repeatable)", 0 },
	{ "node-root", OPT_NODE_ROOT, "DIR", 0, "Read the container runtimes' records under DIR/run (default /)", 0 },
	{ "cgroup", OPT_CGROUP, "PATH", 0, "Follow only the processes of this cgroup v2 subtree (as /proc/PID/cgroup names it)", 0 },
	{ "ringbuf-mb", OPT_RINGBUF, "MB", 0, "Ring buffer size, a power of two (default 8)", 0 },
	{ "verbose", 'v', NULL, 0, "Debug output", 0 },
	{},
};

static bool window_given, every_given;

static double parse_seconds(struct argp_state *st, const char *s)
{
	double v;

	if (!ig_cli_seconds(s, 86400, true, &v)) {
		ig_cli_error(st, "invalid seconds: '%s' (a whole number from 1 to 86400)", s);
		return 1;
	}
	return v;
}

static void add_label(struct argp_state *st, struct ig_agent_opts *o,
		      const char *kv)
{
	int err = ig_metrics_check_label(kv);
	/* the pair as typed, escaped: a newline in it keeps to one line */
	char esc[IG_ESC_SIZE(128)];

	ig_esc(esc, sizeof(esc), kv, strlen(kv));
	if (o->nlabels == IG_AGENT_MAX_LABELS)
		ig_cli_error(st, "too many --label pairs (at most 32): '%s'", esc);
	else if (err == -EEXIST)
		ig_cli_error(st, "--label '%s': the agent sets this label itself", esc);
	else if (err == -EINVAL && !strchr(kv, '='))
		ig_cli_error(st, "invalid --label '%s': no '=' (KEY=VALUE)", esc);
	else if (err == -EINVAL)
		ig_cli_error(st, "invalid --label '%s': KEY is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)", esc);
	else if (err == -E2BIG)
		ig_cli_error(st, "invalid --label '%s': VALUE is longer than 256 bytes", esc);
	else if (err)
		ig_cli_error(st, "invalid --label '%s': VALUE holds a control character, a backslash or bytes that are not UTF-8", esc);
	else
		o->labels[o->nlabels++] = kv;
}

static error_t parse_opt(int key, char *arg, struct argp_state *st)
{
	struct ig_agent_opts *o = st->input;
	long v;

	switch (key) {
	case OPT_LISTEN: o->listen = arg; break;
	case OPT_WINDOW:
		o->window_s = parse_seconds(st, arg);
		window_given = true;
		break;
	case OPT_EVERY:
		o->every_s = parse_seconds(st, arg);
		every_given = true;
		break;
	case OPT_REPORTS: o->reports_dir = arg; break;
	case OPT_LIBCUDA: o->libcuda_path = arg; break;
	case OPT_LABEL: add_label(st, o, arg); break;
	case OPT_NODE_ROOT:
		ig_cli_node_root(st, arg);
		break;
	case OPT_CGROUP:
		if (ig_agent_scope_check(arg))
			ig_cli_error(st, "invalid --cgroup: '%s' (a cgroup v2 path from the root, e.g. /system.slice/job.scope)", arg);
		else
			o->cgroup = arg;
		break;
	case OPT_KEEP:
		if (!ig_cli_long(arg, 1, 1000000, &v))
			ig_cli_error(st, "invalid --reports-keep: '%s' (1 to 1000000)", arg);
		o->reports_keep = v;
		break;
	case OPT_MAX_MB:
		if (!ig_cli_long(arg, 1, 1 << 20, &v))
			ig_cli_error(st, "invalid --reports-max-mb: '%s' (1 to 1048576)", arg);
		o->reports_max_bytes = (unsigned long long)v << 20;
		break;
	case OPT_RINGBUF:
		o->ringbuf_mb = ig_cli_ringbuf(st, arg, 1);
		break;
	case 'v': ig_verbose = o->engine.verbose = true; break;
	case ARGP_KEY_ARG:
		ig_cli_error(st, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (!ig_cli_failed() && window_given && every_given && o->window_s > o->every_s)
			ig_cli_error(st, "--window is longer than --every");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = { options, parse_opt, NULL, doc, NULL, NULL, NULL };

int ig_agent_main(int argc, char **argv)
{
	static char name[] = "idlegap agent";
	static struct ig_agent_opts o;
	int rc;

	memset(&o, 0, sizeof(o));
	o.listen = IG_HTTPD_LISTEN;
	o.window_s = IG_AGENT_WINDOW_S;
	o.every_s = IG_AGENT_EVERY_S;
	o.reports_keep = IG_AGENT_KEEP;
	o.reports_max_bytes = (unsigned long long)IG_AGENT_KEEP_MB << 20;
	o.min_offcpu_ns = 1000;
	o.ringbuf_mb = IG_AGENT_RINGBUF_MB;
	o.engine.sz = sizeof(o.engine);
	o.self_argc = argc;
	o.self_argv = argv;
	window_given = every_given = false;
	argv[0] = name;
	rc = ig_cli_run(&argp, argc, argv, 0, &o, IG_CLI_ONE_LINE, "agent: ");
	if (rc)
		return rc < 0 ? 0 : rc;
	/* --window 10 alone: every 60 s; --every 5 alone: a window as long */
	if (o.every_s < o.window_s)
		o.window_s = o.every_s;
	/* a window holds a whole window's launches no longer: its estimate
	 * folds them as attach and run do, and no window has a timeline */
	ig_cli_days_engine(&o.engine, false, false);
	return ig_agent_run(&o);
}
