// SPDX-License-Identifier: GPL-2.0
/*
 * The host GPU a process is on, from evidence that outlives its set-up
 * (docs/design.md §4.2): NVML's per-GPU lists of compute processes, else
 * the one /dev/nvidiaN it holds open, else the one GPU its
 * CUDA_VISIBLE_DEVICES names, labelled as such.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/gpudev.h"
#include "host/identity.h"
#include "host/nvml.h"

#define RETRY_NS 1000000000ull
#define WATCH_MAX 1024

static struct ig_nvml *nv;
static bool nv_tried;
static const char *nv_why;

/* Processes looked at: whether their GPU is known, and when to look
 * again if not. */
static struct watch {
	pid_t pid;
	bool known;
	bool at_work;		/* looked at since its first GPU work */
	__u64 next;
} watch[WATCH_MAX];

static struct ig_nvml *nvml(void)
{
	const char *why = NULL;

	if (!nv_tried) {
		nv_tried = true;
		nv = ig_nvml_open(&why);
		nv_why = nv ? NULL : why ? why : "NVML cannot be used";
	}
	return nv;
}

const char *ig_gpudev_no_nvml(void)
{
	nvml();
	return nv_why;
}

static struct watch *watch_of(pid_t pid, bool add)
{
	unsigned int h = (unsigned int)pid % WATCH_MAX, i;

	for (i = 0; i < WATCH_MAX; i++) {
		struct watch *w = &watch[(h + i) % WATCH_MAX];

		if (w->pid == pid)
			return w;
		if (!w->pid) {
			if (!add)
				return NULL;
			w->pid = pid;
			return w;
		}
	}
	/* full: start over rather than stop looking */
	if (add) {
		memset(watch, 0, sizeof(watch));
		watch[h].pid = pid;
		return &watch[h];
	}
	return NULL;
}

bool ig_gpudev_wanted(pid_t pid, __u64 now)
{
	struct watch *w = watch_of(pid, false);

	/* one never looked at: a child forked after it was followed */
	if (!w)
		return true;
	if (w->known)
		return false;
	/* its first GPU work since it was looked at: its context is made */
	if (!w->at_work) {
		w->at_work = true;
		return true;
	}
	return now >= w->next;
}

void ig_gpudev_forget(pid_t pid)
{
	struct watch *w = watch_of(pid, false);

	/* the slot stays taken (probing goes past it), as a known one */
	if (w) {
		w->known = true;
		w->next = 0;
	}
}

/*
 * The one /dev/nvidiaN the process holds open, or -1: none, several, or
 * not readable.  The CUDA driver opens the node of every GPU the process
 * may use, so one node names its GPU only where it sees one GPU.  Not
 * checked against a real driver: the simulated one opens none.
 */
static int devnode(pid_t pid)
{
	char path[64], link[64];
	struct dirent *de;
	int found = -1, n = 0;
	ssize_t len;
	char *end;
	long v;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)) && n < 2) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%.16s", (int)pid,
			 de->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 11 || strncmp(link, "/dev/nvidia", 11))
			continue;
		link[len] = '\0';
		v = strtol(link + 11, &end, 10);
		if (end == link + 11 || *end || v < 0 || v > 255 || v == found)
			continue;
		found = (int)v;
		n++;
	}
	closedir(d);
	return n == 1 ? found : -1;
}

int ig_gpudev_index_of(const char *uuid)
{
	return ig_nvml_index_of(nvml(), uuid);
}

/* The GPU the environment points at: the one GPU CUDA_VISIBLE_DEVICES
 * names, through NVIDIA_VISIBLE_DEVICES to the host's index.  -1 when it
 * names none or several.  LOCAL_RANK and RANK name a rank, not a GPU: a
 * launcher's rank r is on GPU r only by the job's own convention, which
 * nothing on the node vouches for (docs/design.md §4.2). */
static int from_env(const struct ig_identity *id, __u32 *src)
{
	char tok[80];

	if (!*id->cuda_visible)
		return -1;
	ig_identity_gpu_token(id, 1, tok, sizeof(tok));
	if (tok[0])
		return -1;	/* several GPUs, none chosen */
	*src = IG_GD_CVD;
	ig_identity_gpu_token(id, 0, tok, sizeof(tok));
	if (tok[0] == '#')
		return atoi(tok + 1);
	if (!strncmp(tok, "GPU-", 4))
		return ig_gpudev_index_of(tok);
	return -1;
}

static void choose(struct ig_gpudev *r, const struct ig_identity *id, pid_t pid)
{
	int devs[16], n, d, i;
	__u32 src = IG_GD_NONE;

	n = ig_nvml_proc_gpus(nvml(), pid, devs, 16);
	r->ngpus = n > 0 ? (__u32)n : 0;
	if (n == 1) {
		r->dev = devs[0];
		r->src = IG_GD_NVML;
		return;
	}
	d = n > 1 ? -1 : devnode(pid);
	if (d >= 0) {
		r->dev = d;
		r->src = IG_GD_DEVNODE;
		return;
	}
	d = from_env(id, &src);
	/* on several GPUs: the environment may say which is its own */
	for (i = 0; n > 1 && i < n && i < 16 && devs[i] != d; i++)
		;
	if (d >= 0 && (n <= 1 || i < n)) {
		r->dev = d;
		r->src = src;
		return;
	}
	r->src = n > 1 ? IG_GD_NVML_MANY : IG_GD_NONE;
}

int ig_gpudev_record(struct ig_gpudev *r, pid_t pid, __u64 ts, bool at_work)
{
	struct ig_identity id;
	struct watch *w;

	memset(r, 0, sizeof(*r));
	memset(&id, 0, sizeof(id));
	if (ig_identity_read(NULL, pid, &id) == -ENOENT)
		return -ENOENT;
	r->h.type = IG_REC_GPUDEV;
	r->h.size = sizeof(*r);
	r->h.tid = r->h.tgid = (__u32)pid;
	r->h.ts = ts;
	r->dev = -1;
	r->rank = *id.rank ? atoi(id.rank) : -1;
	choose(r, &id, pid);
	if (r->dev >= 0)
		ig_nvml_uuid(nvml(), r->dev, r->uuid, sizeof(r->uuid));
	w = watch_of(pid, true);
	if (w) {
		w->at_work = at_work;
		/* only NVML and the device node are worth asking again */
		w->known = r->src == IG_GD_NVML || r->src == IG_GD_DEVNODE;
		w->next = ts + RETRY_NS;
	}
	return 0;
}
