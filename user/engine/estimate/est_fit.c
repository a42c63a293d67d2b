// SPDX-License-Identifier: GPL-2.0
/*
 * The duration model (docs/design.md §4.10).  For a sync that waited, the
 * replay's last busy chain before it (from the last launch that found the
 * queue empty, or from the previous sync's end) must end at its drained
 * point:  base + latency + sum of the chain's durations = T.  Each such
 * sync is one linear equation in the durations; a sync that returned at
 * once adds one only where the replay overshoots it.  The chains depend on
 * the durations, so the fit alternates replay and weighted least squares;
 * equations whose residual is more than 3 robust deviations off are left
 * out of the next round.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/estimate/est_fit.h"

#define ROUNDS		10
#define MIN_SIGMA_NS	2000.0
#define NX		(EST_MAX_SIGS + 1)	/* latency, then durations */
#define EST_CAP_SLACK_NS	5000.0	/* ig_est_infeasible(): past a mark's end */

/* Where the chain that ends at a mark starts. */
struct chain {
	uint32_t first, head, end;	/* launches [from, end) */
	double base;		/* launch time of head, or the anchor */
	int lat;		/* 1: base is a launch (latency applies) */
	double cap;		/* the most latency its head can have */
	double e;		/* predicted end of the queue */
	int any;
};

/* The most latency launch @i can have: EST_MAX_LAT_NS, and its call had
 * returned, and the op was queued, by the entry of the next submission or
 * of the sync @lim (docs/design.md §4.10). */
static double lat_cap(const struct est_launch *l, uint32_t nl, uint32_t i,
		      uint64_t lim)
{
	uint64_t next = i + 1 < nl && l[i + 1].t < lim ? l[i + 1].t : lim;

	if (next - l[i].t >= EST_MAX_LAT_NS)
		return EST_MAX_LAT_NS;
	return (double)(next - l[i].t);
}

/* The latency of launch @i under @md: its cap in the variant EST_LATE. */
static double lat_of(const struct est_model *md, const struct est_launch *l,
		     uint32_t nl, uint32_t i, uint64_t lim)
{
	return md->lat < EST_LATE_NS ? md->lat : lat_cap(l, nl, i, lim);
}

/* Replay with @md; one chain per mark; busy intervals into @k. */
static void walk(const struct est_model *md, const struct est_launch *l,
		 uint32_t nl, const struct est_mark *m, uint32_t nm,
		 struct chain *ch, struct est_ival *k, uint32_t *nk)
{
	double e = -INFINITY, anchor = -INFINITY;
	uint32_t li = 0, head = 0, j;
	int head_set = 0;

	for (j = 0; j <= nm; j++) {
		uint64_t lim = j < nm ? m[j].t_in : UINT64_MAX;
		uint32_t first = li;

		head_set = 0;
		while (li < nl && l[li].t < lim) {
			double t = (double)l[li].t + lat_of(md, l, nl, li, lim);
			double s = t >= e ? t : e;

			if (t >= e) {
				head = li;
				head_set = 1;
			}
			e = s + md->d[l[li].sig];
			if (k)
				k[(*nk)++] = (struct est_ival){ (uint64_t)s, (uint64_t)e };
			li++;
		}
		if (j == nm)
			break;
		if (ch) {
			ch[j].first = first;
			ch[j].end = li;
			ch[j].any = li > first;
			ch[j].e = e;
			ch[j].head = head_set ? head : first;
			ch[j].lat = head_set;
			ch[j].cap = head_set ? lat_cap(l, nl, head, lim) : 0;
			ch[j].base = head_set ? (double)l[head].t : anchor;
		}
		if (m[j].waited || e > (double)m[j].t_end) {
			double t_end = (double)m[j].t_end;

			/* the queue ended there: trim what the replay ran on */
			while (k && *nk && (double)k[*nk - 1].t1 > t_end) {
				struct est_ival *x = &k[*nk - 1];

				if ((double)x->t0 >= t_end) {
					(*nk)--;
					continue;
				}
				x->t1 = (uint64_t)t_end;
				break;
			}
			e = t_end;
		}
		anchor = e;
	}
}

/* Solve @a x = @b (n x n, row-major, destroyed) by elimination with
 * partial pivoting; -1 when singular. */
static int solve(double *a, double *b, double *x, int n)
{
	int i, j, c, p;

	for (c = 0; c < n; c++) {
		p = c;
		for (i = c + 1; i < n; i++)
			if (fabs(a[i * n + c]) > fabs(a[p * n + c]))
				p = i;
		if (fabs(a[p * n + c]) < 1e-300)
			return -1;
		if (p != c) {
			double t;

			for (j = 0; j < n; j++) {
				t = a[c * n + j];
				a[c * n + j] = a[p * n + j];
				a[p * n + j] = t;
			}
			t = b[c];
			b[c] = b[p];
			b[p] = t;
		}
		for (i = c + 1; i < n; i++) {
			double f = a[i * n + c] / a[c * n + c];

			if (f == 0)
				continue;
			for (j = c; j < n; j++)
				a[i * n + j] -= f * a[c * n + j];
			b[i] -= f * b[c];
		}
	}
	for (i = n - 1; i >= 0; i--) {
		double s = b[i];

		for (j = i + 1; j < n; j++)
			s -= a[i * n + j] * x[j];
		x[i] = s / a[i * n + i];
	}
	return 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, uint32_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A mark's end, or with @soon a waiting sync's end a wakeup's delay
 * earlier, never before its entry (EST_SOON). */
static double mark_end(const struct est_mark *m, int soon)
{
	if (soon && m->waited)	/* from its wakeup, where it ran later */
		return fmax((double)m->t_in, (double)(m->t_wake ? m->t_wake :
			    m->t_end) - EST_WAKE_NS);
	return (double)m->t_end;
}

/* Does mark @j give an equation, and with which right-hand side?
 * @soon: a waiting sync's queue ended up to a wakeup's delay before its
 * drained point, never before its entry (EST_SOON). */
static int equation(const struct est_mark *m, const struct chain *c,
		    int skip, int soon, double *rhs)
{
	if (!c->any || (skip >= 0 && m->fold == skip) || !isfinite(c->base))
		return 0;
	if (m->waited) {
		*rhs = mark_end(m, soon) - c->base;
		return 1;
	}
	if (c->e > (double)m->t_end) {	/* overshot a sync that found it done */
		*rhs = (double)m->t_end - c->base;
		return 1;
	}
	return 0;
}

void ig_est_caps(const struct est_launch *l, uint32_t nl, const struct est_mark *m,
		 uint32_t nm, uint32_t nsig, int soon, double *cap)
{
	uint32_t i, j = 0;

	for (i = 0; i < nsig && i < EST_MAX_SIGS; i++)
		cap[i] = INFINITY;
	for (i = 0; i < nl; i++) {
		while (j < nm && m[j].t_in <= l[i].t)
			j++;
		if (j == nm)
			break;
		if (l[i].sig < EST_MAX_SIGS &&
		    mark_end(&m[j], soon) - (double)l[i].t < cap[l[i].sig])
			cap[l[i].sig] = fmax(0, mark_end(&m[j], soon) - (double)l[i].t);
	}
}

int ig_est_fit(const struct est_launch *l, uint32_t nl, const struct est_mark *m,
	       uint32_t nm, uint32_t nsig, int skip, int zero, struct est_model *out)
{
	struct chain *ch = calloc(nm + 1, sizeof(*ch));
	double *res = calloc(nm + 1, sizeof(*res)), *tmp = calloc(nm + 1, sizeof(*tmp));
	double *a = malloc(sizeof(double) * NX * NX), b[NX], x[NX], x0[NX], cnt[NX];
	uint8_t *keep = malloc(nm + 1);
	uint32_t j, i, r, nt, ntmp = 0, rows = 0;
	int n = (int)(nsig > EST_MAX_SIGS ? EST_MAX_SIGS : nsig) + 1, ret = -1;
	double sigma = INFINITY, med = 0, init;
	int flags = zero == EST_EARLY ? EST_EXPECT : zero >= EST_LATE ?
		    zero & ~(EST_LATE - 1) : 0;
	int late = flags & EST_LATE, shrt = flags & EST_SHORT;
	int soon = flags & EST_SOON, expect = flags & EST_EXPECT;
	int lat0 = flags & EST_LAT0;
	double cap[EST_MAX_SIGS];

	if (zero >= EST_LATE)	/* and the signature in the low bits, if any, to 0 */
		zero = (zero & (EST_LATE - 1)) - 1;
	else if (zero == EST_EARLY)
		zero = -1;


	memset(out, 0, sizeof(*out));
	out->nsig = (uint32_t)n - 1;
	/* EST_LATE: every head as late as its cap allows */
	if (late)
		out->lat = EST_LATE_NS;
	if (!ch || !res || !tmp || !a || !keep || n < 2)
		goto done;
	memset(keep, 1, nm + 1);
	/* start: every duration the median over waiting syncs of the time
	 * from the first launch they cover to their end, per launch */
	walk(out, l, nl, m, nm, ch, NULL, NULL);
	for (j = 0; j < nm; j++)
		if (m[j].waited && ch[j].any && !(skip >= 0 && m[j].fold == skip))
			tmp[ntmp++] = ((double)m[j].t_end - (double)l[ch[j].first].t) /
				      (ch[j].end - ch[j].first);
	if (!ntmp)
		goto done;
	init = median(tmp, ntmp);
	if (shrt)
		ig_est_caps(l, nl, m, nm, (uint32_t)n - 1, soon, cap);
	for (i = 0; i < (uint32_t)n - 1; i++) {
		out->d[i] = init > 0 ? init : 0;
		if (shrt && cap[i] < out->d[i])
			out->d[i] = cap[i];
	}
	for (r = 0; r < ROUNDS; r++) {
		double tr = 0, lam, w;
		int pass, p, q;

		walk(out, l, nl, m, nm, ch, NULL, NULL);
		memset(a, 0, sizeof(double) * NX * NX);
		memset(b, 0, sizeof(b));
		rows = 0;
		/* pass 0: this round's residuals and their robust spread;
		 * pass 1: the equations within 3 deviations of the median */
		for (pass = 0; pass < 2; pass++) {
			nt = 0;
			for (j = 0; j < nm; j++) {
				double rhs, pred;

				if (!equation(&m[j], &ch[j], skip, soon, &rhs))
					continue;
				memset(cnt, 0, sizeof(double) * n);
				cnt[0] = lat0 ? 0 : ch[j].lat;
				/* EST_LATE: each head's latency is its cap */
				if (ch[j].lat && late) {
					cnt[0] = 0;
					rhs -= ch[j].cap;
				}
				for (i = ch[j].head; i < ch[j].end; i++)
					cnt[1 + l[i].sig]++;
				if (!pass) {
					pred = cnt[0] * out->lat;
					for (p = 1; p < n; p++)
						pred += cnt[p] * out->d[p - 1];
					res[j] = pred - rhs;
					tmp[nt++] = res[j];
					continue;
				}
				if (r && fabs(res[j] - med) > 3 * sigma)
					continue;
				/* EST_EARLY: a drained point is late by a
				 * wakeup's delay, never early; ends later
				 * than the replay weigh less (an expectile) */
				w = expect && r ? (res[j] < 0 ? 0.2 : 0.8) : 1;
				rows++;
				for (p = 0; p < n; p++) {
					if (!cnt[p])
						continue;
					b[p] += w * cnt[p] * rhs;
					for (q = 0; q < n; q++)
						a[p * n + q] += w * cnt[p] * cnt[q];
				}
			}
			if (!pass) {
				med = median(tmp, nt);
				for (j = 0; j < nt; j++)
					tmp[j] = fabs(tmp[j] - med);
				sigma = 1.4826 * median(tmp, nt);
				if (sigma < MIN_SIGMA_NS)
					sigma = MIN_SIGMA_NS;
			}
		}
		if (!rows)
			goto done;
		/* a weak pull toward the start keeps unpinned durations
		 * there, and latency toward 0 */
		for (i = 0; i < (uint32_t)n; i++)
			tr += a[i * n + i];
		lam = 1e-6 * tr / n + 1e-9;
		x0[0] = 0;
		for (i = 1; i < (uint32_t)n; i++)
			x0[i] = out->d[i - 1];
		if (zero >= 0 && zero + 1 < n)
			x0[zero + 1] = 0;
		for (i = 0; i < (uint32_t)n; i++) {
			double w = i ? lam : lam + 1e-3 * rows;

			/* the variant that pulls one duration to 0: where the
			 * syncs cannot tell it from the others, it is 0; and
			 * EST_SOON pulls them all: as short as the syncs allow */
			if ((zero >= 0 && (int)i == zero + 1) || (soon && i)) {
				w = 1e-3 * tr / n;
				x0[i] = 0;
			}
			a[i * n + i] += w;
			b[i] += w * x0[i];
		}
		if (solve(a, b, x, n))
			goto done;
		if (!late && !lat0)
			out->lat = x[0] < 0 ? 0 : x[0] > EST_MAX_LAT_NS ?
				   EST_MAX_LAT_NS : x[0];
		for (i = 1; i < (uint32_t)n; i++) {
			out->d[i - 1] = x[i] < 0 ? 0 : x[i];
			/* EST_SHORT: no longer than the marks allow */
			if (shrt && cap[i - 1] < out->d[i - 1])
				out->d[i - 1] = cap[i - 1];
		}
	}
	ret = 0;
done:
	free(ch);
	free(res);
	free(tmp);
	free(a);
	free(keep);
	return ret;
}

double ig_est_infeasible(const struct est_model *md, const struct est_launch *l,
			 uint32_t nl, const struct est_mark *m, uint32_t nm)
{
	uint32_t i = 0, j, n = 0, bad = 0;

	for (j = 0; j < nm; j++) {
		int any = 0, hit = 0;

		for (; i < nl && l[i].t < m[j].t_in; i++) {
			any = 1;
			if (l[i].sig < md->nsig && (double)l[i].t + md->d[l[i].sig] >
			    (double)m[j].t_end + EST_CAP_SLACK_NS)
				hit = 1;
		}
		n += any;
		bad += hit;
	}
	return n ? (double)bad / n : 0;
}

double ig_est_pinned(const struct est_model *md, const struct est_launch *l,
		     uint32_t nl, const struct est_mark *m, uint32_t nm)
{
	struct chain *ch = calloc(nm + 1, sizeof(*ch));
	uint64_t n = 0;
	uint32_t j;

	if (!ch || !nl) {
		free(ch);
		return 0;
	}
	walk(md, l, nl, m, nm, ch, NULL, NULL);
	for (j = 0; j < nm; j++)
		if (m[j].waited && ch[j].any && isfinite(ch[j].base))
			n += ch[j].end - ch[j].head;
	free(ch);
	return (double)n / nl;
}

void ig_est_predict(const struct est_model *md, const struct est_launch *l,
		    uint32_t nl, const struct est_mark *m, uint32_t nm, int fold,
		    double *err, uint32_t *nerr, double *rel, uint32_t *nrel)
{
	struct chain *ch = calloc(nm + 1, sizeof(*ch));
	uint32_t j;

	if (!ch)
		return;
	walk(md, l, nl, m, nm, ch, NULL, NULL);
	for (j = 0; j < nm; j++) {
		double busy;

		if (m[j].fold != fold || !m[j].waited || !ch[j].any ||
		    !isfinite(ch[j].base))
			continue;
		err[(*nerr)++] = fabs(ch[j].e - (double)m[j].t_end) / 1000.0;
		busy = (double)m[j].t_end - ch[j].base -
		       ch[j].lat * (md->lat < EST_LATE_NS ? md->lat : ch[j].cap);
		if (busy > 1000.0)
			rel[(*nrel)++] = (ch[j].e - (double)m[j].t_end) / busy;
	}
	free(ch);
}

void ig_est_replay(const struct est_model *md, const struct est_launch *l,
		   uint32_t nl, const struct est_mark *m, uint32_t nm,
		   struct est_ival *k, uint32_t *nk)
{
	*nk = 0;
	walk(md, l, nl, m, nm, NULL, k, nk);
}

double ig_est_p50(const struct est_model *md, const struct est_launch *l,
		  uint32_t nl, const struct est_mark *m, uint32_t nm)
{
	struct chain *ch = calloc(nm + 1, sizeof(*ch));
	double *err = calloc(nm + 1, sizeof(*err)), p50;
	uint32_t j, n = 0;

	if (!ch || !err) {
		free(ch);
		free(err);
		return INFINITY;
	}
	walk(md, l, nl, m, nm, ch, NULL, NULL);
	for (j = 0; j < nm; j++)
		if (m[j].waited && ch[j].any && isfinite(ch[j].base))
			err[n++] = fabs(ch[j].e - (double)m[j].t_end) / 1000.0;
	p50 = median(err, n);
	free(ch);
	free(err);
	return p50;
}

double ig_est_busy_p50(const struct est_model *md, const struct est_launch *l,
		       uint32_t nl, const struct est_mark *m, uint32_t nm)
{
	struct chain *ch = calloc(nm + 1, sizeof(*ch));
	double *b = calloc(nm + 1, sizeof(*b)), p50;
	uint32_t j, n = 0;

	if (!ch || !b) {
		free(ch);
		free(b);
		return INFINITY;
	}
	walk(md, l, nl, m, nm, ch, NULL, NULL);
	for (j = 0; j < nm; j++)
		if (m[j].waited && ch[j].any && isfinite(ch[j].base))
			b[n++] = ch[j].e - ch[j].base;
	p50 = median(b, n);
	free(ch);
	free(b);
	return p50;
}

double ig_est_hidden(const struct est_model *md, const struct est_launch *l,
		     uint32_t nl, const struct est_mark *m, uint32_t nm)
{
	struct chain *ch = calloc(nm + 1, sizeof(*ch));
	double h = 0, slept, x;
	uint32_t j;

	if (!ch)
		return 0;
	walk(md, l, nl, m, nm, ch, NULL, NULL);
	for (j = 0; j < nm; j++) {
		if (!m[j].waited || m[j].t_end <= m[j].t_in)
			continue;
		slept = (double)(m[j].t_end - m[j].t_in);
		x = EST_WAKE_NS;
		if (m[j].t_wake)	/* and its time from the wakeup on */
			x += (double)(m[j].t_end - m[j].t_wake);
		if (ch[j].any && ch[j].lat && (double)m[j].t_end > ch[j].e)
			x += (double)m[j].t_end - ch[j].e;
		h += x < slept ? x : slept;	/* no more than it slept */
	}
	free(ch);
	return h;
}

/* The q-quantile of @v[0..n) (sorted in place), interpolated. */
static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double ig_est_quantile(double *v, uint32_t n, double q)
{
	double pos;
	uint32_t i;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), by_double);
	pos = q * (n - 1);
	i = (uint32_t)pos;
	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (pos - i) * (v[i + 1] - v[i]);
}
