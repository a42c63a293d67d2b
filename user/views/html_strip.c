// SPDX-License-Identifier: GPL-2.0
/*
 * The GPU strips of `--html`: each device's states in bins of equal
 * width that merge two into one as the run grows (html_strip.h).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/jsonval.h"
#include "views/html_strip.h"

#define FIRST_BIN_NS	1000u	/* 1 us: a short run keeps its stretches */

struct dev {
	int key;		/* the observer's device */
	uint64_t t0;		/* the first bin's start */
	uint64_t bin_ns;
	uint32_t nbins;		/* in use */
	double (*ns)[IG_HS_N];	/* IG_HTML_BINS */
};

#define DROPPED_MAX	256	/* devices left out, told apart */

struct ig_html_strip {
	struct dev dev[IG_HTML_DEVS];
	unsigned int ndev, dropped;
	int dropped_key[DROPPED_MAX];
};

struct ig_html_strip *ig_html_strip_new(void)
{
	return calloc(1, sizeof(struct ig_html_strip));
}

void ig_html_strip_free(struct ig_html_strip *st)
{
	unsigned int i;

	if (!st)
		return;
	for (i = 0; i < st->ndev; i++)
		free(st->dev[i].ns);
	free(st);
}

unsigned int ig_html_strip_dropped(const struct ig_html_strip *st)
{
	return st->dropped;
}

static struct dev *dev_get(struct ig_html_strip *st, int key, uint64_t t0)
{
	struct dev *d;
	unsigned int i;

	for (i = 0; i < st->ndev; i++)
		if (st->dev[i].key == key)
			return &st->dev[i];
	if (st->ndev == IG_HTML_DEVS) {
		for (i = 0; i < st->dropped; i++)
			if (st->dropped_key[i] == key)
				return NULL;
		if (st->dropped < DROPPED_MAX)
			st->dropped_key[st->dropped++] = key;
		return NULL;
	}
	d = &st->dev[st->ndev];
	d->ns = calloc(IG_HTML_BINS, sizeof(*d->ns));
	if (!d->ns)
		return NULL;
	st->ndev++;
	d->key = key;
	d->t0 = t0;
	d->bin_ns = FIRST_BIN_NS;
	return d;
}

/* Two bins into one: the width doubles. */
static void merge(struct dev *d)
{
	uint32_t i, n = (d->nbins + 1) / 2;
	int k;

	for (i = 0; i < n; i++)
		for (k = 0; k < IG_HS_N; k++)
			d->ns[i][k] = d->ns[2 * i][k] +
				      (2 * i + 1 < d->nbins ? d->ns[2 * i + 1][k] : 0);
	memset(d->ns + n, 0, (d->nbins - n) * sizeof(*d->ns));
	d->nbins = n;
	d->bin_ns *= 2;
}

/* Room for [t0, t1): bins added before the first (a stretch older than
 * any seen), and merged until the last one reaches t1. */
static void cover(struct dev *d, uint64_t t0, uint64_t t1)
{
	uint64_t k;

	while (t0 < d->t0) {
		k = (d->t0 - t0 + d->bin_ns - 1) / d->bin_ns;
		if (d->nbins + k > IG_HTML_BINS) {
			merge(d);
			continue;
		}
		memmove(d->ns + k, d->ns, d->nbins * sizeof(*d->ns));
		memset(d->ns, 0, k * sizeof(*d->ns));
		d->nbins += (uint32_t)k;
		d->t0 -= k * d->bin_ns;
	}
	while ((t1 - d->t0 + d->bin_ns - 1) / d->bin_ns > IG_HTML_BINS)
		merge(d);
	k = (t1 - d->t0 + d->bin_ns - 1) / d->bin_ns;
	if (k > d->nbins)
		d->nbins = (uint32_t)k;
}

/* @w of each nanosecond of [t0, t1) to state @k, by overlap with each bin. */
static void spread(struct dev *d, int k, uint64_t t0, uint64_t t1, double w)
{
	uint64_t i = (t0 - d->t0) / d->bin_ns, a, b;

	for (; t0 < t1; i++, t0 = b) {
		a = d->t0 + i * d->bin_ns;
		b = a + d->bin_ns < t1 ? a + d->bin_ns : t1;
		d->ns[i][k] += w * (double)(b - t0);
	}
}

/* A rank's wait for peers: out of busy time, then unresolved (§4.9),
 * bin by bin. */
static void peer_wait(struct dev *d, uint64_t t0, uint64_t t1)
{
	uint64_t i = (t0 - d->t0) / d->bin_ns, a, b;
	double want, take;
	int k;

	for (; t0 < t1; i++, t0 = b) {
		a = d->t0 + i * d->bin_ns;
		b = a + d->bin_ns < t1 ? a + d->bin_ns : t1;
		want = (double)(b - t0);
		for (k = IG_HS_BUSY; k <= IG_HS_UNRES && want > 0; k++) {
			take = d->ns[i][k] < want ? d->ns[i][k] : want;
			d->ns[i][k] -= take;
			d->ns[i][IG_HS_PEER] += take;
			want -= take;
		}
	}
}

static int cause_of(const char *name)
{
	unsigned int c;

	for (c = 0; name && c < IG_C__MAX; c++)
		if (!strcmp(ig_names_cause(c), name))
			return (int)c;
	return -1;
}

static void idle(struct dev *d, const struct ig_obs_span *s)
{
	double len = (double)(s->t1 - s->t0), sum = 0;
	unsigned int i;
	int c;

	for (i = 0; i < s->nall; i++) {
		c = cause_of(s->all[i].name);
		if (c < 0)
			continue;
		spread(d, IG_HS_IDLE + c, s->t0, s->t1, (double)s->all[i].ns / len);
		sum += (double)s->all[i].ns;
	}
	/* time given no cause (none where attribution is whole) */
	if (sum < len)
		spread(d, IG_HS_IDLE_ANY, s->t0, s->t1, (len - sum) / len);
}

void ig_html_strip_span(struct ig_html_strip *st, const struct ig_obs_span *s)
{
	uint64_t t1 = s->kind == IG_OBS_COLLECTIVE ? s->wait_until : s->t1;
	struct dev *d;

	if (t1 <= s->t0 || !(d = dev_get(st, s->device, s->t0)))
		return;
	cover(d, s->t0, t1);
	switch (s->kind) {
	case IG_OBS_BUSY:
		spread(d, IG_HS_BUSY, s->t0, t1, 1);
		break;
	case IG_OBS_UNRES:
		spread(d, IG_HS_UNRES, s->t0, t1, 1);
		break;
	case IG_OBS_IDLE:
		idle(d, s);
		break;
	case IG_OBS_COLLECTIVE:
		peer_wait(d, s->t0, t1);
		break;
	}
}

static const char *state_name(int k, char *buf, size_t n)
{
	static const char *const fixed[] = { "busy", "unresolved", "peer_wait", "idle" };

	if (k < IG_HS_IDLE)
		return fixed[k];
	snprintf(buf, n, "idle:%s", ig_names_cause((unsigned int)(k - IG_HS_IDLE)));
	return buf;
}

/*
 * A state's bins as per mille of the bin's width, rounded so that the
 * sum over any first bins stays within one unit of the exact sum: a cause
 * spread thinly over many bins keeps its share of the strip.
 */
static jo *per_mille(const struct dev *d, int k)
{
	jo *a = json_object_new_array_ext((int)d->nbins);
	double exact = 0, scale = 1000.0 / (double)d->bin_ns;
	long long given = 0, v;
	uint32_t i;

	for (i = 0; a && i < d->nbins; i++) {
		exact += d->ns[i][k] * scale;
		v = llround(exact) - given;
		given += v;
		json_object_array_add(a, json_object_new_int64(v));
	}
	return a;
}

static jo *dev_json(const struct dev *d)
{
	jo *o = json_object_new_object(), *states = json_object_new_object();
	jo *secs = json_object_new_object();
	const char *name;
	double tot;
	char buf[48];
	uint32_t i;
	int k;

	add(o, "key", json_object_new_int(d->key));
	add(o, "t0_ns", ju64(d->t0));
	add(o, "bin_ns", ju64(d->bin_ns));
	add(o, "nbins", ju64(d->nbins));
	for (k = 0; k < IG_HS_N; k++) {
		for (tot = 0, i = 0; i < d->nbins; i++)
			tot += d->ns[i][k];
		if (tot < 0.5)
			continue;
		name = state_name(k, buf, sizeof(buf));
		add(states, name, per_mille(d, k));
		add(secs, name, jnum(tot / 1e9, 6));
	}
	add(o, "states", states);
	add(o, "seconds", secs);
	return o;
}

jo *ig_html_strip_json(struct ig_html_strip *st)
{
	jo *a = json_object_new_array();
	uint32_t all, most;
	unsigned int i, at;

	/* the page's bound: the devices with the most bins merge first */
	for (;;) {
		for (all = 0, most = 0, at = 0, i = 0; i < st->ndev; i++) {
			all += st->dev[i].nbins;
			if (st->dev[i].nbins > most) {
				most = st->dev[i].nbins;
				at = i;
			}
		}
		if (all <= IG_HTML_BINS_ALL)
			break;
		merge(&st->dev[at]);
	}
	for (i = 0; a && i < st->ndev; i++)
		json_object_array_add(a, dev_json(&st->dev[i]));
	return a;
}
