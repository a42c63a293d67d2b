/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JSON values as the report prints them (user/engine/report/report_json.c):
 * numbers with fixed precision, seconds and milliseconds from ns, strings
 * that are never null.
 */
#ifndef IG_ENGINE_JSONVAL_H
#define IG_ENGINE_JSONVAL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "util/escape.h"

typedef struct json_object jo;

static inline jo *jnum(double v, int prec)
{
	char buf[64];
	size_t n;

	snprintf(buf, sizeof(buf), "%.*f", prec, v);
	n = strlen(buf);
	/* trim trailing zeros, keep one digit after the point */
	while (n > 2 && buf[n - 1] == '0' && buf[n - 2] != '.')
		buf[--n] = '\0';
	if (!strcmp(buf, "-0.0"))
		snprintf(buf, sizeof(buf), "0.0");
	return json_object_new_double_s(v, buf);
}

static inline jo *jsec(uint64_t ns)
{
	return jnum((double)ns / 1e9, 6);
}

static inline jo *jms(uint64_t ns)
{
	return jnum((double)ns / 1e6, 3);
}

/* json-c copies strings as they are: bytes that are not UTF-8 (a path,
 * a frame name from a damaged recording) are replaced first, or the
 * report would not parse (escape.h). */
static inline jo *jstrn(const char *s, size_t n)
{
	char *t;
	jo *o;

	if (ig_utf8_valid(s, n))
		return json_object_new_string_len(s, (int)n);
	t = ig_utf8_dup(s, n);
	o = json_object_new_string(t ? t : "");
	free(t);
	return o;
}

static inline jo *jstr(const char *s)
{
	return s ? jstrn(s, strlen(s)) : json_object_new_string("");
}

static inline jo *ju64(uint64_t v)
{
	return json_object_new_int64((int64_t)v);
}

static inline void add(jo *o, const char *k, jo *v)
{
	json_object_object_add(o, k, v);
}

#endif
