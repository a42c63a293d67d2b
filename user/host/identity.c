// SPDX-License-Identifier: GPL-2.0
/*
 * Workload identity from /proc (see identity.h).  The cgroup path shapes
 * this reads, as the kubelet and slurmd write them:
 *
 *   cgroupfs driver   /kubepods/burstable/pod<uid>/<64 hex>
 *                     /kubepods/pod<uid>/crio-<id>            (guaranteed)
 *   systemd driver    /kubepods.slice/kubepods-burstable.slice/
 *                       kubepods-burstable-pod<uid with _>.slice/
 *                       cri-containerd-<id>.scope | crio-<id>.scope |
 *                       docker-<id>.scope
 *   kind, nested      .../kubelet-kubepods-besteffort-pod<uid>.slice/...
 *   own cgroupns      "0::" then ".." components, then kubepods-...
 *   Slurm v1          /slurm/uid_<U>/job_<J>/step_<S>/task_<T>
 *   Slurm v2          /system.slice/slurmstepd.scope/job_<J>/step_<S>/...
 *
 * The outermost match wins: the pod is the first pod<uid> component after
 * the first kubepods one, its container the component right after it, the
 * Slurm job the first job_ after a slurm one.  A workload that may create
 * cgroups below its own (delegation) can nest .../kubepods/pod<other>/<id>
 * there; that comes after the kubelet's and is never read.  A pod in a
 * kind node's container is found the same way (the node's own docker-<id>
 * comes before kubepods, and is no pod's container).
 *
 * The pod's name and namespace come from the container runtime's record of
 * the container: containerd's task bundle
 *   ROOT/run/containerd/io.containerd.runtime.v2.task/k8s.io/<id>/config.json
 * (annotations io.kubernetes.cri.sandbox-{name,namespace,uid}) or CRI-O's
 *   ROOT/run/containers/storage/overlay-containers/<id>/userdata/config.json
 * (io.kubernetes.pod.{name,namespace,uid}); root writes both, the
 * container sees neither.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/escape.h"
#include "host/identity.h"
#include "host/identity_int.h"

#define ENVIRON_MAX	(256 * 1024)

static bool has_prefix(const char *s, size_t len, const char *p)
{
	size_t n = strlen(p);

	return len >= n && !memcmp(s, p, n);
}

static size_t strip_suffix(const char *s, size_t len, const char *suf)
{
	size_t n = strlen(suf);

	return len >= n && !memcmp(s + len - n, suf, n) ? len - n : len;
}

static const char *find_last(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle), i;

	for (i = len >= n ? len - n + 1 : 0; i-- > 0;)
		if (!memcmp(s + i, needle, n))
			return s + i;
	return NULL;
}

/* 8-4-4-4-12 hex, or 32 hex (a static pod's config hash); _ for - */
static bool try_pod_uid(const char *c, size_t n, struct ig_identity *id)
{
	char uid[40];
	size_t i;

	n = strip_suffix(c, n, ".slice");
	if (has_prefix(c, n, "pod")) {
		c += 3;
		n -= 3;
	} else {
		const char *p = find_last(c, n, "-pod");

		if (!p || !find_last(c, (size_t)(p - c), "kubepods"))
			return false;
		n -= (size_t)(p + 4 - c);
		c = p + 4;
	}
	if (n != 36 && n != 32)
		return false;
	for (i = 0; i < n; i++) {
		bool dash = n == 36 && (i == 8 || i == 13 || i == 18 || i == 23);

		uid[i] = c[i] == '_' ? '-' : c[i];
		if (dash ? uid[i] != '-' : !id_c_hex(uid[i]))
			return false;
	}
	memcpy(id->pod_uid, uid, n);
	id->pod_uid[n] = '\0';
	return true;
}

static bool try_container(const char *c, size_t n, struct ig_identity *id)
{
	static const struct { const char *prefix, *runtime; } rt[] = {
		{ "cri-containerd-", "containerd" },
		{ "crio-", "cri-o" },
		{ "docker-", "docker" },
		{ "libpod-", "podman" },
	};
	const char *runtime = "";
	size_t i;

	n = strip_suffix(c, n, ".scope");
	if (has_prefix(c, n, "crio-conmon-"))
		return false;	/* CRI-O's monitor, not the container */
	for (i = 0; i < sizeof(rt) / sizeof(rt[0]); i++) {
		if (has_prefix(c, n, rt[i].prefix)) {
			c += strlen(rt[i].prefix);
			n -= strlen(rt[i].prefix);
			runtime = rt[i].runtime;
			break;
		}
	}
	/* bare ids are full length; prefixed ones at least docker's short id */
	if (n != 64 && (!*runtime || n < 12 || n > 64))
		return false;
	if (!id_set_if(id->container, sizeof(id->container), c, n, id_c_hex))
		return false;
	snprintf(id->runtime, sizeof(id->runtime), "%s", runtime);
	return true;
}

/*
 * One cgroup path, outermost first (see the top of this file).  Fields
 * already set by an earlier line of the file stay: the lines of a v1 file
 * name one place.
 */
static void parse_cgroup_path(const char *p, size_t len, struct ig_identity *id)
{
	enum { NONE, KUBE, POD, DONE } k = NONE;
	enum { S_NONE, S_SLURM, S_JOB, S_DONE } sl = S_NONE;
	bool pod_set = id->pod_uid[0], ctr_set = id->container[0];
	bool job_set = id->slurm_job[0] && !(id->self & IG_SELF_SLURM);
	bool other_ctr = false;
	size_t s = 0, e;

	while (s < len) {
		const char *c;
		size_t n;

		for (e = s; e < len && p[e] != '/'; e++)
			;
		c = p + s;
		n = e - s;
		s = e + 1;
		if (!n)
			continue;
		if (k == NONE && find_last(c, n, "kubepods")) {
			k = KUBE;
			if (other_ctr && !ctr_set)
				id->container[0] = id->runtime[0] = '\0';
		}
		if (k == KUBE) {
			struct ig_identity t = { 0 };

			if (try_pod_uid(c, n, &t)) {
				if (!pod_set)
					memcpy(id->pod_uid, t.pod_uid, sizeof(t.pod_uid));
				k = POD;
				continue;
			}
		} else if (k == POD) {
			struct ig_identity t = { 0 };

			/* the kubelet's container, right below its pod */
			if (!ctr_set && try_container(c, n, &t)) {
				memcpy(id->container, t.container, sizeof(t.container));
				memcpy(id->runtime, t.runtime, sizeof(t.runtime));
			}
			k = DONE;
		} else if (k == NONE && !other_ctr) {
			struct ig_identity t = { 0 };

			/* outside Kubernetes (plain docker, podman): the
			 * outermost container, kept unless kubepods follows */
			if (try_container(c, n, &t)) {
				other_ctr = true;
				if (!ctr_set) {
					memcpy(id->container, t.container, sizeof(t.container));
					memcpy(id->runtime, t.runtime, sizeof(t.runtime));
				}
			}
		}
		if (sl == S_NONE && find_last(c, n, "slurm"))
			sl = S_SLURM;
		else if (sl == S_SLURM && has_prefix(c, n, "job_")) {
			if (!job_set) {
				id->slurm_job[0] = id->slurm_step[0] = '\0';
				id->self &= ~IG_SELF_SLURM;
				id_set_if(id->slurm_job, sizeof(id->slurm_job), c + 4,
				       n - 4, id_c_digit);
			}
			sl = S_JOB;
		} else if (sl == S_JOB) {
			if (!job_set && has_prefix(c, n, "step_"))
				id_set_if(id->slurm_step, sizeof(id->slurm_step),
				       c + 5, n - 5, id_c_step);
			sl = S_DONE;
		}
	}
}

/* Lines "ID:CONTROLLERS:PATH" (v1) or "0::PATH" (v2). */
void ig_identity_parse_cgroup(const char *buf, size_t len,
			      struct ig_identity *id)
{
	size_t s = 0, e;

	while (s < len) {
		const char *c1, *c2;

		for (e = s; e < len && buf[e] != '\n'; e++)
			;
		c1 = memchr(buf + s, ':', e - s);
		c2 = c1 ? memchr(c1 + 1, ':', (size_t)(buf + e - c1 - 1)) : NULL;
		if (c2)
			parse_cgroup_path(c2 + 1, (size_t)(buf + e - c2 - 1), id);
		s = e + 1;
	}
}

static void env_var(const char *k, size_t kn, const char *v, size_t vn,
		    struct ig_identity *id)
{
	static const struct {
		const char *key;
		size_t off, size;
		ig_char_ok ok;
	} vars[] = {
#define V(key, f, ok) { key, offsetof(struct ig_identity, f), \
			sizeof(((struct ig_identity *)0)->f), ok }
		V("SLURM_JOB_ID", slurm_job, id_c_digit),
		V("SLURM_STEP_ID", slurm_step, id_c_step),
		V("RANK", rank, id_c_digit),
		V("LOCAL_RANK", local_rank, id_c_digit),
		V("WORLD_SIZE", world_size, id_c_digit),
		V("CUDA_VISIBLE_DEVICES", cuda_visible, id_c_cvd),
		V("NVIDIA_VISIBLE_DEVICES", nvidia_visible, id_c_cvd),
#undef V
	};
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		char *dst = (char *)id + vars[i].off;

		if (kn != strlen(vars[i].key) || memcmp(k, vars[i].key, kn))
			continue;
		/* the cgroup path, read first, is the better witness */
		if (*dst || !id_set_if(dst, vars[i].size, v, vn, vars[i].ok))
			return;
		if (vars[i].off == offsetof(struct ig_identity, slurm_job) ||
		    vars[i].off == offsetof(struct ig_identity, slurm_step))
			id->self |= IG_SELF_SLURM;
		else if (vars[i].off == offsetof(struct ig_identity, nvidia_visible))
			id->self |= IG_SELF_NVIDIA;
		else if (vars[i].off != offsetof(struct ig_identity, cuda_visible))
			id->self |= IG_SELF_RANK;
		return;
	}
}

/* NUL-separated KEY=VALUE, as the process was exec'd. */
void ig_identity_parse_environ(const char *buf, size_t len,
			       struct ig_identity *id)
{
	size_t s = 0, e;

	while (s < len) {
		const char *eq;

		for (e = s; e < len && buf[e]; e++)
			;
		eq = memchr(buf + s, '=', e - s);
		if (eq)
			env_var(buf + s, (size_t)(eq - buf - s), eq + 1,
				(size_t)(buf + e - eq - 1), id);
		s = e + 1;
	}
}

/* Up to @cap bytes of ROOT/PID/NAME into a new buffer; -errno. */
static ssize_t slurp(const char *root, pid_t pid, const char *name,
		     size_t cap, char **out)
{
	char path[512];
	ssize_t n, got = 0;
	char *buf;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/%s", root, (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while ((size_t)got < cap && (n = read(fd, buf + got, cap - got)) > 0)
		got += n;
	close(fd);
	*out = buf;
	return got;
}

typedef void (*ig_parse_fn)(const char *, size_t, struct ig_identity *);

static int read_one(const char *root, pid_t pid, const char *name, size_t cap,
		    ig_parse_fn parse, struct ig_identity *id)
{
	char *buf = NULL;
	ssize_t n = slurp(root, pid, name, cap, &buf);

	if (n < 0)
		return (int)n;
	parse(buf, (size_t)n, id);
	free(buf);
	return 0;
}

static void parse_comm(const char *buf, size_t len, struct ig_identity *id)
{
	if (len && buf[len - 1] == '\n')
		len--;
	ig_esc(id->comm, sizeof(id->comm), buf, len);
}

int ig_identity_read(const char *proc_root, pid_t pid, struct ig_identity *id)
{
	const char *root = proc_root ? proc_root : "/proc";
	int ok = 0;

	memset(id, 0, sizeof(*id));
	ok |= !read_one(root, pid, "cgroup", 64 * 1024,
			ig_identity_parse_cgroup, id);
	ok |= !read_one(root, pid, "environ", ENVIRON_MAX,
			ig_identity_parse_environ, id);
	ok |= !read_one(root, pid, "comm", 64, parse_comm, id);
	if (ok)
		ig_identity_read_runtime(id);
	return ok ? 0 : -ENOENT;
}

/* Entry @k of a comma-separated list into @out (@n bytes); false when
 * there is none. */
static bool nth(const char *s, unsigned int k, char *out, size_t n)
{
	const char *e;

	for (; k && s; k--) {
		s = strchr(s, ',');
		s = s ? s + 1 : NULL;
	}
	if (!s)
		return false;
	e = strchr(s, ',');
	return id_set_if(out, n, s, e ? (size_t)(e - s) : strlen(s), id_c_cvd);
}

static bool is_uuid(const char *s)
{
	return has_prefix(s, strlen(s), "GPU-") || has_prefix(s, strlen(s), "MIG-");
}

/* A GPU index: 1 to 4 digits. */
static bool is_index(const char *s)
{
	size_t i, n = strlen(s);

	for (i = 0; i < n; i++)
		if (!id_c_digit(s[i]))
			return false;
	return n && n <= 4;
}

void ig_identity_gpu_token(const struct ig_identity *id, unsigned int ordinal,
			   char *tok, size_t n)
{
	const char *nv = id->nvidia_visible;
	char e[72], h[72];

	tok[0] = '\0';
	if (!*id->cuda_visible)
		snprintf(e, sizeof(e), "%u", ordinal);
	else if (!nth(id->cuda_visible, ordinal, e, sizeof(e)))
		return;
	if (is_uuid(e))
		snprintf(tok, n, "%s", e);
	else if (!is_index(e))
		return;
	else if (!*nv && *id->container)	/* the container's own numbering */
		snprintf(tok, n, "C:%s/%s", id->container, e);
	else if (!*nv || !strcmp(nv, "all"))
		snprintf(tok, n, "#%s", e);
	else if (!nth(nv, (unsigned int)atoi(e), h, sizeof(h)))
		return;			/* past the container's GPUs */
	else if (is_uuid(h))
		snprintf(tok, n, "%s", h);
	else if (is_index(h))		/* not "none", "void" */
		snprintf(tok, n, "#%s", h);
}

int ig_identity_gpu_self(const struct ig_identity *id, unsigned int ordinal)
{
	char e[72];

	if (!*id->cuda_visible && !*id->nvidia_visible)
		return 0;	/* the ordinal is the GPU's own index */
	if (!*id->cuda_visible)
		snprintf(e, sizeof(e), "%u", ordinal);
	else if (!nth(id->cuda_visible, ordinal, e, sizeof(e)))
		return 0;
	if (is_uuid(e)) {
		/* named by the process itself: it stands only when the
		 * runtime gave the container that GPU */
		char h[72];
		unsigned int k;

		if (!*id->nvidia_visible || (id->self & IG_SELF_NVIDIA))
			return 1;
		for (k = 0; nth(id->nvidia_visible, k, h, sizeof(h)); k++)
			if (!strcmp(h, e))
				return 0;
		return 1;
	}
	/* an index: the host's own numbering (outside a container), or
	 * through the container's list */
	if (!*id->nvidia_visible)
		return !*id->container;
	return (id->self & IG_SELF_NVIDIA) != 0;
}

void ig_identity_gpu(const struct ig_identity *id, unsigned int ordinal,
		     char *gpu, size_t ngpu, char *uuid, size_t nuuid)
{
	char tok[80];

	gpu[0] = uuid[0] = '\0';
	ig_identity_gpu_token(id, ordinal, tok, sizeof(tok));
	if (tok[0] == '#')
		snprintf(gpu, ngpu, "%s", tok + 1);
	else if (is_uuid(tok))
		snprintf(uuid, nuuid, "%s", tok);
}
