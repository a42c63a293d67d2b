// SPDX-License-Identifier: GPL-2.0
/*
 * Serves the metrics of recorded window reports, for the Prometheus tests:
 *
 *   metrics_serve [--listen ADDR:PORT] [--proc-root DIR] [--node-root DIR]
 *                 [--label K=V]... [--once] REPORT.json...
 *
 * Each report is one window; the identity of each of its pids is read
 * under --proc-root (a fixture tree; default /proc).  --once prints the
 * exposition and exits; otherwise it prints "listening PORT", serves
 * /metrics until SIGTERM or SIGINT, and exits 0.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "views/httpd.h"
#include "views/metrics.h"

#define MAX_LABELS 16
#define MAX_PIDS 256

static int usage(void)
{
	fprintf(stderr, "usage: metrics_serve [--listen ADDR:PORT] [--proc-root DIR] "
		"[--node-root DIR] [--label K=V]... [--once] REPORT.json...\n");
	return 2;
}

static int render(void *ctx, char **buf, size_t *len)
{
	return ig_metrics_render(ctx, buf, len);
}

static int add_report(struct ig_metrics *m, const char *path, const char *root)
{
	static struct ig_pid_identity ids[MAX_PIDS];
	struct json_object *r = json_object_from_file(path), *procs;
	size_t i, n = 0;
	int err;

	if (!r) {
		fprintf(stderr, "metrics_serve: %s: not a JSON report\n", path);
		return -EINVAL;
	}
	if (json_object_object_get_ex(r, "processes", &procs) &&
	    json_object_is_type(procs, json_type_array)) {
		for (i = 0; i < json_object_array_length(procs) && n < MAX_PIDS; i++) {
			struct json_object *p = json_object_array_get_idx(procs, i), *v;

			if (!json_object_object_get_ex(p, "pid", &v))
				continue;
			ids[n].pid = (pid_t)json_object_get_int(v);
			if (!ig_identity_read(root, ids[n].pid, &ids[n].id))
				n++;
		}
	}
	err = ig_metrics_add_window(m, r, ids, n);
	if (err)
		fprintf(stderr, "metrics_serve: %s: %s\n", path, strerror(-err));
	json_object_put(r);
	return err;
}

static int serve(struct ig_metrics *m, const char *listen)
{
	struct ig_httpd *h;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	h = ig_httpd_start(listen, render, m);
	if (!h) {
		fprintf(stderr, "metrics_serve: %s: %s\n", listen, strerror(errno));
		return 1;
	}
	printf("listening %d\n", ig_httpd_port(h));
	fflush(stdout);
	sigwait(&set, &sig);
	ig_httpd_stop(h);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "proc-root", required_argument, NULL, 'p' },
		{ "node-root", required_argument, NULL, 'N' },
		{ "label", required_argument, NULL, 'L' },
		{ "once", no_argument, NULL, 'o' },
		{ 0 },
	};
	const char *labels[MAX_LABELS], *listen = IG_HTTPD_LISTEN, *root = NULL;
	struct ig_metrics_opts mo = { .sz = sizeof(mo), .labels = labels,
				      .version = "test" };
	struct ig_metrics *m;
	int c, once = 0, rc = 0;
	char *buf;
	size_t len;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'l')
			listen = optarg;
		else if (c == 'p')
			root = optarg;
		else if (c == 'N')
			ig_identity_set_node_root(optarg);
		else if (c == 'o')
			once = 1;
		else if (c == 'L' && mo.nlabels < MAX_LABELS &&
			 !ig_metrics_check_label(optarg))
			labels[mo.nlabels++] = optarg;
		else
			return usage();
	}
	if (optind == argc)
		return usage();
	m = ig_metrics_new(&mo);
	if (!m)
		return 1;
	for (; optind < argc && !rc; optind++)
		rc = add_report(m, argv[optind], root) ? 1 : 0;
	if (!rc && once) {
		rc = ig_metrics_render(m, &buf, &len) ? 1 : 0;
		if (!rc && fwrite(buf, 1, len, stdout) != len)
			rc = 1;
		if (!rc)
			free(buf);
	} else if (!rc) {
		rc = serve(m, listen);
	}
	ig_metrics_free(m);
	return rc;
}
