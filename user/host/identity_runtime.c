// SPDX-License-Identifier: GPL-2.0
/*
 * The pod's name and namespace from the container runtime's record of the
 * container (identity.c says which records, and why they are trusted).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include "host/identity_int.h"

#define RECORD_MAX	(1024 * 1024)

static char node_root[256] = "";

void ig_identity_set_node_root(const char *root)
{
	size_t n;

	snprintf(node_root, sizeof(node_root), "%s", root ? root : "");
	n = strlen(node_root);
	while (n && node_root[n - 1] == '/')
		node_root[--n] = '\0';
}

static const char *annotation(struct json_object *ann, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(ann, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* A pod name: a DNS subdomain (lower case, digits, '-', '.'). */
static void set_name(char *dst, size_t n, const char *v)
{
	if (v)
		id_set_if(dst, n, v, strlen(v), id_c_dns);
}

void ig_identity_parse_runtime(const char *buf, size_t len,
			       struct ig_identity *id)
{
	static const char *const keys[][3] = {
		/* containerd's CRI plugin */
		{ "io.kubernetes.cri.sandbox-uid", "io.kubernetes.cri.sandbox-name",
		  "io.kubernetes.cri.sandbox-namespace" },
		/* CRI-O */
		{ "io.kubernetes.pod.uid", "io.kubernetes.pod.name",
		  "io.kubernetes.pod.namespace" },
	};
	struct json_tokener *tok;
	struct json_object *o, *ann, *proc, *env;
	size_t i, ne;

	if (!id->pod_uid[0] || !len || len > RECORD_MAX)
		return;
	tok = json_tokener_new();
	if (!tok)
		return;
	o = json_tokener_parse_ex(tok, buf, (int)len);
	json_tokener_free(tok);
	if (!o)
		return;
	if (!json_object_object_get_ex(o, "annotations", &ann) ||
	    !json_object_is_type(ann, json_type_object))
		goto out;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *uid = annotation(ann, keys[i][0]);
		const char *ns = annotation(ann, keys[i][2]);

		if (!uid || strcmp(uid, id->pod_uid))
			continue;
		/* a namespace is a DNS label: no dots */
		if (ns && !strchr(ns, '.'))
			set_name(id->namespace, sizeof(id->namespace), ns);
		set_name(id->pod, sizeof(id->pod), annotation(ann, keys[i][1]));
		break;
	}
	if (i == sizeof(keys) / sizeof(keys[0]))
		goto out;	/* another pod's record: nothing from it */
	/* the container's environment as the runtime started it: the
	 * device plugin's NVIDIA_VISIBLE_DEVICES */
	if (!json_object_object_get_ex(o, "process", &proc) ||
	    !json_object_object_get_ex(proc, "env", &env) ||
	    !json_object_is_type(env, json_type_array))
		goto out;
	ne = json_object_array_length(env);
	for (i = 0; i < ne; i++) {
		const char *kv = json_object_get_string(json_object_array_get_idx(env, i));
		static const char nv[] = "NVIDIA_VISIBLE_DEVICES=";

		if (!kv || strncmp(kv, nv, sizeof(nv) - 1))
			continue;
		id->nvidia_visible[0] = '\0';
		id->self &= ~IG_SELF_NVIDIA;
		id_set_if(id->nvidia_visible, sizeof(id->nvidia_visible),
		       kv + sizeof(nv) - 1, strlen(kv + sizeof(nv) - 1), id_c_cvd);
	}
out:
	json_object_put(o);
}

/* The runtime's record of the container, under the node root. */
void ig_identity_read_runtime(struct ig_identity *id)
{
	static const char *const fmt[] = {
		"%s/run/containerd/io.containerd.runtime.v2.task/k8s.io/%s/config.json",
		"%s/run/containers/storage/overlay-containers/%s/userdata/config.json",
	};
	char path[512], *buf;
	ssize_t n, got;
	size_t i;
	int fd;

	if (!id->container[0] || !id->pod_uid[0])
		return;
	for (i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		snprintf(path, sizeof(path), fmt[i], node_root, id->container);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			continue;
		buf = malloc(RECORD_MAX);
		got = 0;
		while (buf && got < RECORD_MAX &&
		       (n = read(fd, buf + got, RECORD_MAX - (size_t)got)) > 0)
			got += n;
		close(fd);
		if (buf)
			ig_identity_parse_runtime(buf, (size_t)got, id);
		free(buf);
		return;
	}
}
