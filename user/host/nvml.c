// SPDX-License-Identifier: GPL-2.0
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/types.h>
#include "host/nvml.h"
#include "host/nvml_samples.h"

/* The few NVML entry points used, as NVML's API reference declares them. */
typedef int nvml_ret;
typedef void *nvml_device;
typedef void *nvml_gpm;
struct nvml_util { unsigned int gpu, memory; };
struct nvml_sample {		/* nvmlSample_t */
	unsigned long long ts_us;	/* CLOCK_REALTIME */
	union { double d; unsigned int u; unsigned long long ull; } v;
};
struct nvml_proc_util {		/* nvmlProcessUtilizationSample_t */
	unsigned int pid;
	unsigned long long ts_us;
	unsigned int sm, mem, enc, dec;
};
struct nvml_gpm_metric {	/* nvmlGpmMetric_t */
	unsigned int id;
	nvml_ret ret;
	double value;
	char *names[3];
};
struct nvml_gpm_get {		/* nvmlGpmMetricsGet_t, one metric */
	unsigned int version, n;
	nvml_gpm s1, s2;
	struct nvml_gpm_metric m[210];	/* NVML_GPM_METRIC_MAX */
};
struct nvml_gpm_support { unsigned int version, supported; };

#define NVML_ERROR_INSUFFICIENT_SIZE	7
#define NVML_UTIL_SAMPLES		1	/* NVML_GPU_UTILIZATION_SAMPLES */
#define NVML_GPM_GRAPHICS_UTIL		1
#define NSAMP				128
#define MAXDEV				16

struct nvml_dev_state {
	struct ig_nvml_sampling s;	/* the samples read so far */
	nvml_gpm gpm[2];		/* GPM: the previous sample, the next */
	uint64_t gpm_t;			/* when the previous was taken */
	bool gpm_ok;
};
/* nvmlProcessInfo_t, the layout of nvmlDeviceGetComputeRunningProcesses_v3 */
struct nvml_proc {
	unsigned int pid;
	unsigned long long used_mem;
	unsigned int gpu_instance, compute_instance;
};
#define NVML_INSUFFICIENT_SIZE 7
#define IG_NVML_SNAP 1024

struct ig_nvml {
	void *lib;
	unsigned int ndev;
	nvml_device dev[MAXDEV];
	unsigned int idx[MAXDEV];	/* NVML's index of dev[i] */
	struct nvml_dev_state st[MAXDEV];
	nvml_ret (*shutdown)(void);
	nvml_ret (*util)(nvml_device, struct nvml_util *);
	nvml_ret (*procs)(nvml_device, unsigned int *, struct nvml_proc *);
	nvml_ret (*uuid)(nvml_device, char *, unsigned int);
	nvml_ret (*samples)(nvml_device, int, unsigned long long, int *,
			    unsigned int *, struct nvml_sample *);
	nvml_ret (*procutil)(nvml_device, struct nvml_proc_util *, unsigned int *,
			     unsigned long long);
	nvml_ret (*gpm_support)(nvml_device, struct nvml_gpm_support *);
	nvml_ret (*gpm_alloc)(nvml_gpm *);
	nvml_ret (*gpm_free)(nvml_gpm);
	nvml_ret (*gpm_get)(nvml_device, nvml_gpm);
	nvml_ret (*gpm_metrics)(struct nvml_gpm_get *);
	nvml_ret (*count)(unsigned int *);
	nvml_ret (*handle)(unsigned int, nvml_device *);
	/* every GPU's compute processes, as last read */
	struct { unsigned int pid, dev; } snap[IG_NVML_SNAP];
	unsigned int nsnap;
	__u64 snap_at;
	int snap_ok;
};

/* The optional entry points: NULL where this NVML lacks one. */
static void optional(struct ig_nvml *n)
{
	n->samples = dlsym(n->lib, "nvmlDeviceGetSamples");
	n->procutil = dlsym(n->lib, "nvmlDeviceGetProcessUtilization");
	n->gpm_support = dlsym(n->lib, "nvmlGpmQueryDeviceSupport");
	n->gpm_alloc = dlsym(n->lib, "nvmlGpmSampleAlloc");
	n->gpm_free = dlsym(n->lib, "nvmlGpmSampleFree");
	n->gpm_get = dlsym(n->lib, "nvmlGpmSampleGet");
	n->gpm_metrics = dlsym(n->lib, "nvmlGpmMetricsGet");
	if (!n->gpm_support || !n->gpm_alloc || !n->gpm_free || !n->gpm_get ||
	    !n->gpm_metrics)
		n->gpm_support = NULL;
}

/* nvmlInit's failures a node shows, by the name NVML's header gives
 * them (docs/design.md §4.2, "Without NVML"). */
static const char *init_error_name(nvml_ret r)
{
	switch (r) {
	case 9: return "NVML_ERROR_DRIVER_NOT_LOADED";
	case 18: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
	case 4: return "NVML_ERROR_NO_PERMISSION";
	case 12: return "NVML_ERROR_LIBRARY_NOT_FOUND";
	case 19: return "NVML_ERROR_GPU_IS_LOST";
	default: return NULL;
	}
}

static char why_buf[256];

static const char *init_why(void *lib, nvml_ret r)
{
	const char *(*str)(nvml_ret) = (const char *(*)(nvml_ret))
		dlsym(lib, "nvmlErrorString");
	const char *name = init_error_name(r), *s = str ? str(r) : NULL;

	size_t n;

	snprintf(why_buf, sizeof(why_buf), "%s", s ? s : "error");
	n = strlen(why_buf);
	if (n && why_buf[n - 1] == '.')	/* "... version mismatch." */
		why_buf[--n] = '\0';
	snprintf(why_buf + n, sizeof(why_buf) - n, " (%s%s%d)",
		 name ? name : "", name ? ", " : "error ", (int)r);
	memmove(why_buf + 27, why_buf, strlen(why_buf) + 1);
	memcpy(why_buf, "NVML failed to initialise: ", 27);
	return why_buf;
}

struct ig_nvml *ig_nvml_open(const char **why)
{
	nvml_ret (*init)(void), (*count)(unsigned int *);
	nvml_ret (*handle)(unsigned int, nvml_device *);
	struct ig_nvml *n = calloc(1, sizeof(*n));
	unsigned int i, cnt = 0;
	nvml_ret r;

	if (!n)
		return NULL;
	n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		*why = "NVML cannot be loaded (no libnvidia-ml.so.1 where the loader looks)";
		goto fail;
	}
	init = (nvml_ret (*)(void))dlsym(n->lib, "nvmlInit_v2");
	count = (nvml_ret (*)(unsigned int *))dlsym(n->lib, "nvmlDeviceGetCount_v2");
	handle = (nvml_ret (*)(unsigned int, nvml_device *))
		dlsym(n->lib, "nvmlDeviceGetHandleByIndex_v2");
	n->util = (nvml_ret (*)(nvml_device, struct nvml_util *))
		dlsym(n->lib, "nvmlDeviceGetUtilizationRates");
	n->shutdown = (nvml_ret (*)(void))dlsym(n->lib, "nvmlShutdown");
	*(void **)&n->procs = dlsym(n->lib, "nvmlDeviceGetComputeRunningProcesses_v3");
	*(void **)&n->uuid = dlsym(n->lib, "nvmlDeviceGetUUID");
	if (!init || !count || !handle || !n->util || !n->shutdown) {
		*why = "NVML lacks the utilization API";
		goto fail;
	}
	if ((r = init())) {
		*why = init_why(n->lib, r);
		n->shutdown = NULL;
		goto fail;
	}
	if (count(&cnt) || !cnt) {
		*why = "NVML sees no GPU";
		goto fail;
	}
	n->count = count;
	n->handle = handle;
	for (i = 0; i < cnt && n->ndev < 16; i++)
		if (!handle(i, &n->dev[n->ndev]))
			n->idx[n->ndev++] = i;
	if (!n->ndev) {
		*why = "NVML gives no device handle";
		goto fail;
	}
	optional(n);
	return n;
fail:
	ig_nvml_close(n);
	return NULL;
}

unsigned int ig_nvml_ndevices(const struct ig_nvml *n)
{
	return n ? n->ndev : 0;
}

int ig_nvml_sample(struct ig_nvml *n, unsigned int dev, unsigned int *util,
		   unsigned int *mem)
{
	struct nvml_util u;

	if (!n || dev >= n->ndev || n->util(n->dev[dev], &u))
		return -1;
	*util = u.gpu;
	*mem = u.memory;
	return 0;
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The buffered utilization samples newer than the last seen, oldest
 * first, as windows (nvml_samples.c). */
static int read_samples(struct ig_nvml *n, unsigned int dev, ig_nvml_win_fn cb,
			void *ctx)
{
	struct nvml_dev_state *st = &n->st[dev];
	struct nvml_sample v[NSAMP];
	struct ig_nvml_util_sample u[NSAMP];
	unsigned int cnt = NSAMP, i;
	int type = 0;
	nvml_ret r;

	r = n->samples(n->dev[dev], NVML_UTIL_SAMPLES, st->s.last_us, &type, &cnt, v);
	if (r == 6)	/* NVML_ERROR_NOT_FOUND: none newer */
		return 0;
	if (r || type != 1 /* NVML_VALUE_TYPE_UNSIGNED_INT */)
		return -1;
	for (i = 0; i < cnt && i < NSAMP; i++)
		u[i] = (struct ig_nvml_util_sample){ v[i].ts_us, v[i].v.u };
	return ig_nvml_sample_windows(&st->s, u, i, ig_nvml_wall_offset(), n->idx[dev], cb, ctx);
}

/* GPM's graphics utilization between the previous sample and now. */
static int read_gpm(struct ig_nvml *n, unsigned int dev, ig_nvml_win_fn cb,
		    void *ctx)
{
	struct nvml_dev_state *st = &n->st[dev];
	struct nvml_gpm_get *g;
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	/* its window's ends are this process's reads, not the counter's,
	 * and an op in flight at either may count on either side: a
	 * percent either way, as the samples' step */
	struct ig_nvml_win w = { .kind = IG_NVML_GPM, .quant_ppm = 20000 };
	nvml_gpm t;
	int k = 0;

	if (!st->gpm[0] && (n->gpm_alloc(&st->gpm[0]) || n->gpm_alloc(&st->gpm[1])))
		return -1;
	if (!st->gpm_t) {
		if (n->gpm_get(n->dev[dev], st->gpm[0]))
			return -1;
		st->gpm_t = now;
		return 0;
	}
	if (now - st->gpm_t < 200000000ULL)	/* GPM: 100 ms at least */
		return 0;
	if (n->gpm_get(n->dev[dev], st->gpm[1]))
		return -1;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -1;
	g->version = 1;
	g->n = 1;
	g->s1 = st->gpm[0];
	g->s2 = st->gpm[1];
	g->m[0].id = NVML_GPM_GRAPHICS_UTIL;
	if (!n->gpm_metrics(g) && !g->m[0].ret && g->m[0].value >= 0 &&
	    g->m[0].value <= 100) {
		w.t0 = st->gpm_t;
		w.t1 = now;
		w.busy_ppm = (uint32_t)(g->m[0].value * 10000 + 0.5);
		cb(ctx, n->idx[dev], &w);
		k = 1;
	}
	free(g);
	t = st->gpm[0];
	st->gpm[0] = st->gpm[1];
	st->gpm[1] = t;
	st->gpm_t = now;
	return k;
}

int ig_nvml_windows(struct ig_nvml *n, unsigned int dev, ig_nvml_win_fn cb,
		    void *ctx)
{
	if (!n || dev >= n->ndev)
		return -1;
	if (n->samples && !(n->st[dev].gpm_ok && n->gpm_support)) {
		int k = read_samples(n, dev, cb, ctx);

		if (k >= 0)
			return k;
		n->samples = NULL;	/* unsupported here: GPM, if any */
	}
	if (n->gpm_support) {
		struct nvml_gpm_support s = { .version = 1 };

		if (!n->st[dev].gpm_ok &&
		    (n->gpm_support(n->dev[dev], &s) || !s.supported))
			return -1;
		n->st[dev].gpm_ok = true;
		return read_gpm(n, dev, cb, ctx);
	}
	return -1;
}

int ig_nvml_nprocs(struct ig_nvml *n, unsigned int dev)
{
	unsigned int cnt = 0;
	nvml_ret r;

	if (!n || dev >= n->ndev || !n->procs)
		return -1;
	r = n->procs(n->dev[dev], &cnt, NULL);
	if (r && r != NVML_ERROR_INSUFFICIENT_SIZE)
		return -1;
	return (int)cnt;
}

static void noop_win(void *ctx, unsigned int dev, const struct ig_nvml_win *w)
{
	(void)ctx;
	(void)dev;
	(void)w;
}

unsigned int ig_nvml_counters(struct ig_nvml *n, unsigned int dev)
{
	struct nvml_util u;
	struct nvml_gpm_support s = { .version = 1 };
	unsigned int have = 0, cnt = 0;
	nvml_ret r;

	if (!n || dev >= n->ndev)
		return 0;
	if (!n->util(n->dev[dev], &u))
		have |= IG_NVML_HAVE_RATES;
	if (n->samples) {
		struct nvml_sample v[NSAMP];
		int type = 0;

		cnt = NSAMP;
		r = n->samples(n->dev[dev], NVML_UTIL_SAMPLES, 0, &type, &cnt, v);
		if (!r || r == 6)
			have |= IG_NVML_HAVE_SAMPLES;
	}
	if (n->procutil) {
		cnt = 0;
		r = n->procutil(n->dev[dev], NULL, &cnt, 0);
		if (!r || r == NVML_ERROR_INSUFFICIENT_SIZE || r == 6)
			have |= IG_NVML_HAVE_PROCUTIL;
	}
	if (n->gpm_support && !n->gpm_support(n->dev[dev], &s) && s.supported) {
		struct ig_nvml t = *n;

		memset(&t.st[dev], 0, sizeof(t.st[dev]));
		t.samples = NULL;
		if (read_gpm(&t, dev, noop_win, NULL) >= 0)
			have |= IG_NVML_HAVE_GPM;
		if (t.st[dev].gpm[0])
			n->gpm_free(t.st[dev].gpm[0]);
		if (t.st[dev].gpm[1])
			n->gpm_free(t.st[dev].gpm[1]);
	}
	if (ig_nvml_nprocs(n, dev) >= 0)
		have |= IG_NVML_HAVE_PROCS;
	return have;
}

/* GPUs that came after the library was opened (a simulated machine's
 * grow as its processes say; a real one's never change). */
static void more_devices(struct ig_nvml *n)
{
	unsigned int cnt = 0, i;

	if (n->count(&cnt))
		return;
	for (i = n->ndev ? n->idx[n->ndev - 1] + 1 : 0; i < cnt && n->ndev < 16; i++)
		if (!n->handle(i, &n->dev[n->ndev]))
			n->idx[n->ndev++] = i;
}

/* One GPU's compute processes into the snapshot; -1 when NVML cannot
 * list them. */
static int snap_device(struct ig_nvml *n, unsigned int i)
{
	struct nvml_proc v[256];
	unsigned int cnt = 256, k;

	if (n->procs(n->dev[i], &cnt, v))
		return -1;	/* more than 256 on one GPU: not listed */
	for (k = 0; k < cnt && n->nsnap < IG_NVML_SNAP; k++) {
		n->snap[n->nsnap].pid = v[k].pid;
		n->snap[n->nsnap++].dev = n->idx[i];
	}
	return 0;
}

/* Every GPU's processes, read again when older than @max_age_ns: NVML's
 * lists take a driver call per GPU, and a host may start processes by
 * the thousand. */
static int snapshot(struct ig_nvml *n, __u64 max_age_ns)
{
	struct timespec ts;
	__u64 now;
	unsigned int i;
	int ok = 0;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
	if (n->snap_at && now - n->snap_at < max_age_ns)
		return n->snap_ok;
	more_devices(n);
	n->nsnap = 0;
	for (i = 0; i < n->ndev; i++)
		ok |= !snap_device(n, i);
	n->snap_at = now;
	return n->snap_ok = ok;
}

static int in_snapshot(const struct ig_nvml *n, pid_t pid, int *devs, int max)
{
	unsigned int i;
	int found = 0;

	for (i = 0; i < n->nsnap; i++)
		if (n->snap[i].pid == (unsigned int)pid) {
			if (found < max)
				devs[found] = (int)n->snap[i].dev;
			found++;
		}
	return found;
}

int ig_nvml_proc_gpus(struct ig_nvml *n, pid_t pid, int *devs, int max)
{
	int found;

	if (!n || !n->procs)
		return -1;
	/* a quarter of a second old at most; 10 ms for one not in it (its
	 * context may be newer) */
	if (!snapshot(n, 250000000ull))
		return -1;
	found = in_snapshot(n, pid, devs, max);
	if (!found && snapshot(n, 10000000ull))
		found = in_snapshot(n, pid, devs, max);
	return found;
}

int ig_nvml_uuid(struct ig_nvml *n, int index, char *buf, size_t len)
{
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; n && n->uuid && i < n->ndev; i++)
		if (n->idx[i] == (unsigned int)index)
			return n->uuid(n->dev[i], buf, (unsigned int)len) ? -1 : 0;
	return -1;
}

int ig_nvml_index_of(struct ig_nvml *n, const char *uuid)
{
	char u[96];
	unsigned int i;

	for (i = 0; n && n->uuid && i < n->ndev; i++)
		if (!n->uuid(n->dev[i], u, sizeof(u)) &&
		    !strncmp(u, uuid, strlen(uuid)))
			return (int)n->idx[i];
	return -1;
}

void ig_nvml_close(struct ig_nvml *n)
{
	unsigned int i;

	if (!n)
		return;
	for (i = 0; i < n->ndev && n->gpm_free; i++) {
		if (n->st[i].gpm[0])
			n->gpm_free(n->st[i].gpm[0]);
		if (n->st[i].gpm[1])
			n->gpm_free(n->st[i].gpm[1]);
	}
	if (n->shutdown)
		n->shutdown();
	if (n->lib)
		dlclose(n->lib);
	free(n);
}
