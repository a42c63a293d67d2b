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
 * The innermost match wins (a pod inside a kind node's container).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include "escape.h"
#include "identity.h"

#define ENVIRON_MAX	(256 * 1024)

typedef bool (*ig_char_ok)(char c);

static bool c_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool c_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool c_alnum(char c)
{
	return c_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool c_dns(char c)
{
	return c_digit(c) || (c >= 'a' && c <= 'z') || c == '-' || c == '.';
}

static bool c_step(char c)
{
	return c_alnum(c) || c == '_';
}

/* CUDA_VISIBLE_DEVICES: "0,2", "GPU-8f3c...", "MIG-GPU-.../1/0" */
static bool c_cvd(char c)
{
	return c_alnum(c) || c == ',' || c == '-' || c == '/' || c == '_';
}

/* Copies @s[@len] into @dst[@n] when every byte passes @ok. */
static bool set_if(char *dst, size_t n, const char *s, size_t len,
		   ig_char_ok ok)
{
	size_t i;

	if (!len || len >= n)
		return false;
	for (i = 0; i < len; i++)
		if (!ok(s[i]))
			return false;
	memcpy(dst, s, len);
	dst[len] = '\0';
	return true;
}

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
static void try_pod_uid(const char *c, size_t n, struct ig_identity *id)
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
			return;
		n -= (size_t)(p + 4 - c);
		c = p + 4;
	}
	if (n != 36 && n != 32)
		return;
	for (i = 0; i < n; i++) {
		bool dash = n == 36 && (i == 8 || i == 13 || i == 18 || i == 23);

		uid[i] = c[i] == '_' ? '-' : c[i];
		if (dash ? uid[i] != '-' : !c_hex(uid[i]))
			return;
	}
	memcpy(id->pod_uid, uid, n);
	id->pod_uid[n] = '\0';
}

static void try_container(const char *c, size_t n, struct ig_identity *id)
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
		return;		/* CRI-O's monitor, not the container */
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
		return;
	if (set_if(id->container, sizeof(id->container), c, n, c_hex))
		snprintf(id->runtime, sizeof(id->runtime), "%s", runtime);
}

static void try_slurm(const char *c, size_t n, struct ig_identity *id)
{
	if (has_prefix(c, n, "job_"))
		set_if(id->slurm_job, sizeof(id->slurm_job), c + 4, n - 4,
		       c_digit);
	else if (has_prefix(c, n, "step_"))
		set_if(id->slurm_step, sizeof(id->slurm_step), c + 5, n - 5,
		       c_step);
}

static void parse_cgroup_path(const char *p, size_t len, struct ig_identity *id)
{
	bool kube = find_last(p, len, "kubepods") != NULL;
	bool slurm = find_last(p, len, "slurm") != NULL;
	size_t s = 0, e;

	while (s < len) {
		for (e = s; e < len && p[e] != '/'; e++)
			;
		if (e > s) {
			if (kube)
				try_pod_uid(p + s, e - s, id);
			try_container(p + s, e - s, id);
			if (slurm)
				try_slurm(p + s, e - s, id);
		}
		s = e + 1;
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
		V("HOSTNAME", pod, c_dns),
		V("SLURM_JOB_ID", slurm_job, c_digit),
		V("SLURM_STEP_ID", slurm_step, c_step),
		V("RANK", rank, c_digit),
		V("LOCAL_RANK", local_rank, c_digit),
		V("WORLD_SIZE", world_size, c_digit),
		V("CUDA_VISIBLE_DEVICES", cuda_visible, c_cvd),
		V("NVIDIA_VISIBLE_DEVICES", nvidia_visible, c_cvd),
#undef V
	};
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		char *dst = (char *)id + vars[i].off;

		if (kn != strlen(vars[i].key) || memcmp(k, vars[i].key, kn))
			continue;
		/* the cgroup path, read first, is the better witness */
		if (!*dst)
			set_if(dst, vars[i].size, v, vn, vars[i].ok);
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

void ig_identity_parse_namespace(const char *buf, size_t len,
				 struct ig_identity *id)
{
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	/* a DNS label: no dots */
	if (!memchr(buf, '.', len))
		set_if(id->namespace, sizeof(id->namespace), buf, len, c_dns);
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

/*
 * The namespace file inside the container, resolved in its root: a
 * symbolic link there (/var/run -> /run is common, or one planted to
 * reach the agent's own files) stays inside it (RESOLVE_IN_ROOT).
 */
static void read_namespace(const char *root, pid_t pid, struct ig_identity *id)
{
	static const char sa[] = "var/run/secrets/kubernetes.io/serviceaccount/namespace";
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	char path[512], buf[256];
	ssize_t n;
	int dir, fd;

	snprintf(path, sizeof(path), "%s/%d/root", root, (int)pid);
	dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	fd = (int)syscall(SYS_openat2, dir, sa, &how, sizeof(how));
	close(dir);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n > 0)
		ig_identity_parse_namespace(buf, (size_t)n, id);
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
	if (!id->pod_uid[0])
		id->pod[0] = '\0';	/* HOSTNAME names a pod only in one */
	else
		read_namespace(root, pid, id);
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
	return set_if(out, n, s, e ? (size_t)(e - s) : strlen(s), c_cvd);
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
		if (!c_digit(s[i]))
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
