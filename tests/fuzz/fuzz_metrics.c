// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness over the metrics registry (metrics.c, metrics_text.c):
 * the input is a window report as JSON text, of any shape; it is added
 * twice (under two identities) and the exposition rendered.  Every line
 * of the exposition must be a comment or end in a value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "views/metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const char *buf, size_t len)
{
	const char *p = buf, *e;

	if (memchr(buf, '\0', len))
		abort();
	for (; p < buf + len; p = e + 1) {
		e = memchr(p, '\n', (size_t)(buf + len - p));
		if (!e || (*p != '#' && !memchr(p, ' ', (size_t)(e - p))))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const labels[] = { "cluster=fuzz" };
	struct ig_metrics_opts o = { .sz = sizeof(o), .labels = labels,
				     .nlabels = 1, .keep_windows = 1,
				     .max_series = 4 };
	struct ig_pid_identity ids[2] = { { .pid = 1 }, { .pid = 2 } };
	struct json_tokener *tok = json_tokener_new();
	struct json_object *r;
	struct ig_metrics *m;
	char *buf;
	size_t len;

	if (!tok)
		return 0;
	r = json_tokener_parse_ex(tok, (const char *)data, (int)(size > 65536 ? 65536 : size));
	json_tokener_free(tok);
	m = ig_metrics_new(&o);
	if (!m)
		abort();
	strcpy(ids[0].id.pod, "p\"o\\d\n");
	strcpy(ids[1].id.cuda_visible, "3,GPU-x,,7");
	ig_metrics_add_window(m, r, ids, 1);
	ig_metrics_add_window(m, r, ids, 2);
	if (!ig_metrics_render(m, &buf, &len)) {
		check(buf, len);
		free(buf);
	}
	ig_metrics_free(m);
	json_object_put(r);
	return 0;
}
