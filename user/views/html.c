// SPDX-License-Identifier: GPL-2.0
/*
 * `--html FILE` (html.h): the page's markup, style and script are the
 * files user/views/html_page.html and html_page.js, built into the
 * binary; the run's data goes between them as one JSON object, taken
 * from the JSON report, the strips (html_strip.c), the steps and the
 * folded stacks (html_data.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "engine/engine.h"
#include "engine/jsonval.h"
#include "views/html.h"
#include "views/html_data.h"
#include "views/html_strip.h"

/* The assembler reads the files where make runs, the repository's root. */
__asm__(".pushsection .rodata\n"
	"html_page: .incbin \"user/views/html_page.html\"\n\t.byte 0\n"
	"html_js: .incbin \"user/views/html_page.js\"\n\t.byte 0\n"
	".popsection\n");
extern const char html_page[] __attribute__((visibility("hidden")));
extern const char html_js[] __attribute__((visibility("hidden")));

#define MARK_DATA	"/*@IG_DATA@*/"
#define MARK_JS		"/*@IG_SCRIPT@*/"
#define DETAILS_MAX	64	/* a cause's details on the page */
#define DETAILS_BYTES	(32 << 10)	/* and their JSON's bytes, at most */
#define STRING_MAX	1024	/* bytes of a string of the report's */
#define PROCS_MAX	32
/* The embedded JSON's bytes at most: the parts' own bounds keep it near
 * 3.3 MB at worst (docs/design.md §7.8); strings full of characters that
 * JSON escapes could pass that, and then the details go, then the
 * stacks, and the page says so. */
#define DATA_MAX	(4500u << 10)

struct ig_html {
	struct ig_html_strip *strip;
};

struct ig_html *ig_html_new(void)
{
	struct ig_html *h = calloc(1, sizeof(*h));

	if (h && !(h->strip = ig_html_strip_new())) {
		free(h);
		h = NULL;
	}
	if (!h)
		errno = ENOMEM;
	return h;
}

void ig_html_free(struct ig_html *h)
{
	if (!h)
		return;
	ig_html_strip_free(h->strip);
	free(h);
}

static void on_span(void *ctx, const struct ig_obs_span *s)
{
	struct ig_html *h = ctx;

	ig_html_strip_span(h->strip, s);
}

void ig_html_observer(struct ig_html *h, struct ig_engine_obs *o)
{
	*o = (struct ig_engine_obs){ .span = on_span, .ctx = h };
}

/* The report's value at @key, shared (NULL: none). */
static jo *take(jo *from, const char *key)
{
	jo *v;

	return json_object_object_get_ex(from, key, &v) ? json_object_get(v) : NULL;
}

/* Strings past STRING_MAX are cut (a path can be 4 KiB). */
static void trim(jo *v)
{
	const char *s;
	size_t i, n;

	switch (json_object_get_type(v)) {
	case json_type_string:
		s = json_object_get_string(v);
		n = (size_t)json_object_get_string_len(v);
		if (n > STRING_MAX) {
			while (n > STRING_MAX - 3 || (n && (s[n] & 0xc0) == 0x80))
				n--;	/* a UTF-8 sequence whole */
			char *t = strndup(s, n);
			if (t) {
				json_object_set_string(v, t);
				free(t);
			}
		}
		break;
	case json_type_array:
		for (i = 0, n = json_object_array_length(v); i < n; i++)
			trim(json_object_array_get_idx(v, i));
		break;
	case json_type_object: {
		json_object_object_foreach(v, k, x) {
			(void)k;
			trim(x);
		}
		break;
	}
	default:
		break;
	}
}

/* A cause's details, the first DETAILS_MAX of them and DETAILS_BYTES
 * at most (a stack's frames are many and long); how many were left out. */
static size_t details(jo *d)
{
	size_t n = json_object_array_length(d), cut = 0;

	if (n > DETAILS_MAX) {
		json_object_array_del_idx(d, DETAILS_MAX, n - DETAILS_MAX);
		cut = n - DETAILS_MAX;
		n = DETAILS_MAX;
	}
	trim(d);
	while (n && strlen(json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN)) >
	       DETAILS_BYTES) {
		json_object_array_del_idx(d, --n, 1);
		cut++;
	}
	return cut;
}

/* A causes list, bounded (details()); "details_omitted" counts what the
 * page leaves out too. */
static jo *causes(jo *report, const char *key)
{
	jo *c = take(report, key), *d, *om;
	size_t i, n, cut;

	for (i = 0, n = c ? json_object_array_length(c) : 0; i < n; i++) {
		jo *x = json_object_array_get_idx(c, i);

		if (!json_object_object_get_ex(x, "details", &d))
			continue;
		cut = details(d);
		if (cut && json_object_object_get_ex(x, "details_omitted", &om))
			json_object_set_int64(om, json_object_get_int64(om) + (int64_t)cut);
	}
	return c;
}

static jo *processes(jo *report)
{
	jo *p, *a = json_object_new_array();
	size_t i, n;

	if (!json_object_object_get_ex(report, "processes", &p))
		return a;
	for (i = 0, n = json_object_array_length(p); i < n && i < PROCS_MAX; i++) {
		jo *x = json_object_array_get_idx(p, i), *o = json_object_new_object();

		add(o, "pid", take(x, "pid"));
		add(o, "comm", take(x, "comm"));
		json_object_array_add(a, o);
	}
	return a;
}

static const char *const gpu_keys[] = {
	"busy_s", "idle_s", "peer_wait_s", "unresolved_s", "span_s", "gaps",
	"gap_p50_ms", "gap_p99_ms", "idle_estimated_s", "unresolved_host_bound_s",
	"unresolved_gpu_bound_s", "unresolved_open_s",
};
static const char *const dev_keys[] = {
	"device", "uuid", "rank", "busy_s", "idle_s", "peer_wait_s", "unresolved_s",
	"span_start_ns", "span_end_ns", "gaps", "causes",
};

static jo *pick(jo *from, const char *const *keys, size_t n)
{
	jo *o = json_object_new_object();
	size_t i;

	for (i = 0; i < n; i++)
		add(o, keys[i], take(from, keys[i]));
	return o;
}

/* The report's GPU figures, and each device's ("key": the strip's). */
static void gpu(jo *data, jo *report)
{
	jo *g = NULL, *devs, *a = json_object_new_array();
	size_t i, n;

	json_object_object_get_ex(report, "gpu", &g);
	add(data, "gpu", pick(g, gpu_keys, sizeof(gpu_keys) / sizeof(*gpu_keys)));
	if (g && json_object_object_get_ex(g, "devices", &devs))
		for (i = 0, n = json_object_array_length(devs); i < n; i++)
			json_object_array_add(a, pick(json_object_array_get_idx(devs, i),
						      dev_keys, sizeof(dev_keys) / sizeof(*dev_keys)));
	add(data, "devices", a);
}

static jo *flame(struct ig_engine *e)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	jo *o = NULL;

	if (!m)
		return NULL;
	if (!ig_engine_folded(e, m) && !fflush(m))
		o = ig_html_flame_json(text);
	fclose(m);
	free(text);
	return o;
}

static jo *bounds(void)
{
	jo *o = json_object_new_object();

	add(o, "bins_per_gpu", json_object_new_int(IG_HTML_BINS));
	add(o, "bins_all", json_object_new_int(IG_HTML_BINS_ALL));
	add(o, "step_points", json_object_new_int(IG_HTML_STEP_POINTS));
	add(o, "step_points_all", json_object_new_int(IG_HTML_STEP_POINTS_ALL));
	add(o, "flame_nodes", json_object_new_int(IG_HTML_FLAME_NODES));
	add(o, "details_per_cause", json_object_new_int(DETAILS_MAX));
	return o;
}

static jo *data(struct ig_html *h, struct ig_engine *e, jo *report)
{
	jo *d = json_object_new_object(), *strips, *steps = json_object_new_array();
	size_t i, n, points;

	add(d, "version", json_object_new_int(1));
	add(d, "meta", take(report, "meta"));
	trim(json_object_object_get(d, "meta"));
	add(d, "duration_s", take(report, "duration_s"));
	add(d, "complete", take(report, "complete"));
	add(d, "stop_reason", take(report, "stop_reason"));
	add(d, "processes", processes(report));
	gpu(d, report);
	add(d, "causes", causes(report, "causes"));
	add(d, "unresolved_causes", causes(report, "unresolved_causes"));
	add(d, "events", take(report, "events"));
	strips = ig_html_strip_json(h->strip);
	n = strips ? json_object_array_length(strips) : 0;
	points = n ? IG_HTML_STEP_POINTS_ALL / n : 0;
	points = points > IG_HTML_STEP_POINTS ? IG_HTML_STEP_POINTS :
		 points < 100 ? 100 : points;
	for (i = 0; i < n; i++) {
		jo *key = json_object_object_get(json_object_array_get_idx(strips, i), "key");

		json_object_array_add(steps, ig_html_steps_json(e, json_object_get_int(key),
								(unsigned int)points));
	}
	add(d, "strips", strips);
	add(d, "strips_left_out", json_object_new_int((int)ig_html_strip_dropped(h->strip)));
	add(d, "steps", steps);
	add(d, "flame", flame(e));
	add(d, "bounds", bounds());
	return d;
}

/* @s, with '<' as \u003c: no "</script>" nor "<!--" inside the page's
 * script element, whatever the names of files and threads. */
static size_t put_json(FILE *f, const char *s)
{
	size_t n = 0, k;

	while (*s) {
		k = strcspn(s, "<");
		n += fwrite(s, 1, k, f);
		s += k;
		if (*s == '<') {
			n += fwrite("\\u003c", 1, 6, f);
			s++;
		}
	}
	return n;
}

static void drop_details(jo *list)
{
	size_t i, n = list ? json_object_array_length(list) : 0;

	for (i = 0; i < n; i++)
		json_object_object_del(json_object_array_get_idx(list, i), "details");
}

/* The page's text: DATA_MAX bytes at most (escapes of '<' not counted:
 * at most 5 bytes more for each). */
static const char *bounded(jo *d)
{
	jo *b = json_object_object_get(d, "bounds"), *left = json_object_new_array();
	const char *s;

	add(b, "left_out", left);
	s = json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN);
	if (strlen(s) > DATA_MAX) {
		drop_details(json_object_object_get(d, "causes"));
		drop_details(json_object_object_get(d, "unresolved_causes"));
		json_object_array_add(left, json_object_new_string("details"));
		s = json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN);
	}
	if (strlen(s) > DATA_MAX) {
		json_object_object_del(d, "flame");
		json_object_array_add(left, json_object_new_string("stacks"));
		s = json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN);
	}
	return s;
}

int ig_html_write(struct ig_html *h, struct ig_engine *e, FILE *f,
		  struct ig_html_stats *st)
{
	const char *at_data = strstr(html_page, MARK_DATA);
	const char *at_js = strstr(html_page, MARK_JS);
	char *buf = NULL;
	size_t len = 0;
	jo *report, *d;
	int err;

	memset(st, 0, sizeof(*st));
	if (!at_data || !at_js || at_js < at_data)
		return -EINVAL;	/* the page as built is broken */
	err = ig_engine_report_json_buf(e, &buf, &len);
	if (err)
		return err;
	report = json_tokener_parse(buf);
	free(buf);
	if (!report)
		return -ENOMEM;
	d = data(h, e, report);
	json_object_put(report);
	if (!d)
		return -ENOMEM;
	st->devices = (unsigned int)json_object_array_length(json_object_object_get(d, "strips"));
	st->devices_left_out = ig_html_strip_dropped(h->strip);
	st->bytes = fwrite(html_page, 1, (size_t)(at_data - html_page), f);
	st->data_bytes = put_json(f, bounded(d));
	at_data += strlen(MARK_DATA);
	st->bytes += st->data_bytes + fwrite(at_data, 1, (size_t)(at_js - at_data), f);
	st->bytes += fwrite(html_js, 1, strlen(html_js), f);
	at_js += strlen(MARK_JS);
	st->bytes += fwrite(at_js, 1, strlen(at_js), f);
	json_object_put(d);
	return 0;
}
