// SPDX-License-Identifier: GPL-2.0
/*
 * The registry's label sets (metrics_impl.h): the workload labels' names
 * and the check of a --label, a process's or a window's label set from
 * its identity and its JSON report, and a label set as exposed, which is
 * also the key of its series.  The registry (metrics.c) and the
 * exposition (metrics_text.c) both call this file; it calls neither.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "util/escape.h"
#include "views/metrics_impl.h"

const char *const ig_metrics_keys[IG_MK__MAX] = {
#define IG_MK_NAME(e, name) [e] = name,
	IG_METRIC_KEYS(IG_MK_NAME)
#undef IG_MK_NAME
};

bool ig_metrics_name_ok(const char *k, size_t n)
{
	size_t i;

	if (!n || (k[0] >= '0' && k[0] <= '9') || (n >= 2 && !memcmp(k, "__", 2)))
		return false;
	for (i = 0; i < n; i++)
		if (!(k[i] == '_' || (k[i] >= 'a' && k[i] <= 'z') ||
		      (k[i] >= 'A' && k[i] <= 'Z') || (k[i] >= '0' && k[i] <= '9')))
			return false;
	return true;
}

static bool reserved(const char *k, size_t n)
{
	static const char *const own[] = { "state", "cause", "le", "reason",
					   "version", "job", "instance", "late_rank",
					   "communicator", "comm_rank", "comm_size" };
	size_t i;

	for (i = 0; i < IG_MK__MAX; i++)
		if (strlen(ig_metrics_keys[i]) == n && !memcmp(k, ig_metrics_keys[i], n))
			return true;
	for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (strlen(own[i]) == n && !memcmp(k, own[i], n))
			return true;
	return false;
}

int ig_metrics_check_label(const char *kv)
{
	const char *eq = kv ? strchr(kv, '=') : NULL;
	char esc[IG_ESC_SIZE(256)];
	size_t n;

	if (!eq || !ig_metrics_name_ok(kv, (size_t)(eq - kv)))
		return -EINVAL;
	n = strlen(eq + 1);
	if (n > 256)
		return -E2BIG;
	/* control characters, backslashes or bytes that are not UTF-8 */
	if (strcmp(ig_esc(esc, sizeof(esc), eq + 1, n), eq + 1))
		return -EILSEQ;
	return reserved(kv, (size_t)(eq - kv)) ? -EEXIST : 0;
}

void ig_metrics_put_value(FILE *f, const char *v)
{
	char *fixed = NULL;
	size_t n = strlen(v);

	if (!ig_utf8_valid(v, n) && (fixed = ig_utf8_dup(v, n)))
		v = fixed;
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f), fputc(*v, f);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
	free(fixed);
}

char *ig_metrics_lset_text(const struct ig_lset *s)
{
	char *buf = NULL;
	size_t len = 0, k;
	const char *sep = "";
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (k = 0; k < IG_MK__MAX; k++) {
		if (!s->v[k][0])
			continue;
		fprintf(f, "%s%s=\"", sep, ig_metrics_keys[k]);
		ig_metrics_put_value(f, s->v[k]);
		fputc('"', f);
		sep = ",";
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- label sets ---------------------------------------------------------- */

/* The labels above whose values only the process vouches for
 * (docs/design.md §7.7), comma-separated in label order. */
static void self_reported(const struct ig_identity *id, int device,
			  struct ig_lset *s)
{
	char *o = s->v[IG_MK_SELF];
	size_t n = sizeof(s->v[IG_MK_SELF]), at = 0;
	bool gpu = device >= 0 && (s->v[IG_MK_GPU][0] || s->v[IG_MK_UUID][0]) &&
		   ig_identity_gpu_self(id, (unsigned int)device);

#define ADD(cond, k) \
	if ((cond) && s->v[k][0]) \
		at += (size_t)snprintf(o + at, n - at, "%s%s", at ? "," : "", ig_metrics_keys[k]);
	ADD(gpu, IG_MK_GPU)
	ADD(gpu, IG_MK_UUID)
	ADD(id->self & IG_SELF_SLURM, IG_MK_SLURM_JOB)
	ADD(id->self & IG_SELF_RANK, IG_MK_RANK)
#undef ADD
}

void ig_metrics_lset_of(const struct ig_identity *id, int device, struct ig_lset *s)
{
	memset(s, 0, sizeof(*s));
#define CP(k, f) snprintf(s->v[k], sizeof(s->v[k]), "%s", id->f)
	CP(IG_MK_NAMESPACE, namespace);
	CP(IG_MK_POD, pod);
	CP(IG_MK_POD_UID, pod_uid);
	CP(IG_MK_CONTAINER, container);
	CP(IG_MK_SLURM_JOB, slurm_job);
	CP(IG_MK_RANK, rank);
	CP(IG_MK_COMM, comm);
#undef CP
	if (device >= 0)
		ig_identity_gpu(id, (unsigned int)device, s->v[IG_MK_GPU],
				sizeof(s->v[IG_MK_GPU]), s->v[IG_MK_UUID],
				sizeof(s->v[IG_MK_UUID]));
	self_reported(id, device, s);
}

/* Keeps in @acc only the labels @s agrees with; the first one is taken. */
static void lset_meet(struct ig_lset *acc, bool *first, const struct ig_lset *s)
{
	size_t k;

	if (*first) {
		*acc = *s;
		*first = false;
		return;
	}
	for (k = 0; k < IG_MK__MAX; k++)
		if (strcmp(acc->v[k], s->v[k]))
			acc->v[k][0] = '\0';
}

const struct ig_identity *ig_metrics_who(const struct ig_pid_identity *ids,
					size_t n, int64_t pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ids[i].pid == pid)
			return &ids[i].id;
	return NULL;
}

int64_t ig_metrics_jint(struct json_object *o, const char *k, int64_t dflt)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k, &v) ||
	    !json_object_is_type(v, json_type_int))
		return dflt;
	return json_object_get_int64(v);
}

double ig_metrics_jsec(struct json_object *o, const char *k)
{
	struct json_object *v;
	double d;

	if (!json_object_object_get_ex(o, k, &v) ||
	    !(json_object_is_type(v, json_type_double) ||
	      json_object_is_type(v, json_type_int)))
		return 0;
	d = json_object_get_double(v);
	return d > 0 && d < 1e15 ? d : 0;
}

struct json_object *ig_metrics_jget(struct json_object *o, const char *k,
				    enum json_type t)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, t))
		return NULL;
	return v;
}

/* A process NVML or its device node placed (docs/design.md §4.2), or
 * whose context's GPU is the one they list it on: its GPU labels are
 * that GPU, as the node says, not its environment's. */
static void gpu_from_node(struct json_object *p, int64_t dev,
			  const struct ig_identity *id, struct ig_lset *s)
{
	struct json_object *v;
	const char *src, *uuid;

	if (dev < 0 || dev >= IG_GPU_NAMED ||
	    !(v = ig_metrics_jget(p, "device_source", json_type_string)))
		return;
	src = json_object_get_string(v);
	if (strcmp(src, "nvml") && strcmp(src, "device_node") &&
	    (strcmp(src, "context") || ig_metrics_jint(p, "node_device", -1) != dev))
		return;
	snprintf(s->v[IG_MK_GPU], sizeof(s->v[IG_MK_GPU]), "%d", (int)dev);
	v = ig_metrics_jget(p, "uuid", json_type_string);
	uuid = v ? json_object_get_string(v) : "";
	snprintf(s->v[IG_MK_UUID], sizeof(s->v[IG_MK_UUID]), "%s", uuid);
	s->v[IG_MK_SELF][0] = '\0';
	self_reported(id, -1, s);
}

/*
 * The label set shared by the window's GPU processes on @device (-1: on
 * any device).  A device nobody claims keeps just its ordinal.
 */
void ig_metrics_window_lset(struct json_object *procs,
			    const struct ig_pid_identity *ids, size_t nids,
			    int64_t device, struct ig_lset *out)
{
	struct ig_identity none = { 0 };
	bool first = true;
	size_t i, n = procs ? json_object_array_length(procs) : 0;

	for (i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(procs, i);
		int64_t dev = ig_metrics_jint(p, "device", -1), pid = ig_metrics_jint(p, "pid", -1);
		int64_t ord = ig_metrics_jint(p, "ordinal", dev);	/* the process's own number */
		const struct ig_identity *id = ig_metrics_who(ids, nids, pid);
		struct ig_lset s;

		if (dev < 0 || dev > IG_MAX_DEVICE_ID || ord < 0 || ord > IG_MAX_DEVICE_ID ||
		    (device >= 0 && dev != device))
			continue;
		ig_metrics_lset_of(id ? id : &none, (int)ord, &s);
		gpu_from_node(p, dev, id ? id : &none, &s);
		lset_meet(out, &first, &s);
	}
	if (first) {
		memset(out, 0, sizeof(*out));
		if (device >= 0 && device < IG_GPU_NAMED)	/* the host's index */
			snprintf(out->v[IG_MK_GPU], sizeof(out->v[IG_MK_GPU]),
				 "%d", (int)device);
	}
}
