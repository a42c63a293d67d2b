// SPDX-License-Identifier: GPL-2.0
/*
 * Bounds on the durations from marks that only say the queue had ended
 * by their return (docs/design.md §4.10).  Under the model (a duration
 * d_s >= 0 per signature, a latency >= 0), the queue after a mark's chain
 * of launches (those since the previous mark) cannot end before
 * l_j + sum_{i >= j} d_s(i) for any launch j of the chain, latency 0
 * being the most permissive: each is one linear constraint.  The most
 * busy time consistent with all of them is a packing program:
 *
 *	maximise  w.d   subject to   C d <= t_end - l,   0 <= d <= cap
 *
 * solved by the simplex method on the few signatures, with the
 * constraints brought in as the solution violates them (a chain has one
 * per launch; only the tightest matter).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/estimate/est_bound.h"

#define LP_EPS		1e-9
#define LP_MAX_PIVOTS	20000
#define ROUNDS		2000
#define ROUND_ROWS	256	/* rows added per round at most */
#define VIOL_NS		10.0	/* a constraint violated past this is added */

/*
 * The simplex method on a condensed (Tucker) tableau: row i holds a basic
 * variable as  rhs - sum_j T[i][j] * nonbasic_j,  the last row the
 * objective the same way; columns are the nonbasic variables, the last
 * column the right-hand side.  Labels: 0..n-1 the d's, n.. the slacks.
 * Bland's rule (smallest label) for the entering and, among equal
 * ratios, the leaving variable: no cycling.
 */
int ig_est_lp_max(const double *a, const double *b, const double *c,
		  uint32_t m, uint32_t n, double *x, double *opt)
{
	uint32_t w = n + 1, i, j, it, *rl, *cl;
	double *t = calloc((size_t)(m + 1) * w, sizeof(*t));
	int ret = -1;

	rl = calloc(m + 1, sizeof(*rl));
	cl = calloc(n + 1, sizeof(*cl));
	if (!t || !rl || !cl)
		goto out;
	for (i = 0; i < m; i++) {
		if (b[i] < 0)
			goto out;
		memcpy(&t[(size_t)i * w], &a[(size_t)i * n], n * sizeof(*t));
		t[(size_t)i * w + n] = b[i];
		rl[i] = n + i;
	}
	for (j = 0; j < n; j++) {
		t[(size_t)m * w + j] = -c[j];
		cl[j] = j;
	}
	for (it = 0; it < LP_MAX_PIVOTS; it++) {
		uint32_t q = n, r = m;
		double best = 0, p;

		for (j = 0; j < n; j++)
			if (t[(size_t)m * w + j] < -LP_EPS && (q == n || cl[j] < cl[q]))
				q = j;
		if (q == n)
			break;		/* optimal */
		for (i = 0; i < m; i++) {
			double e = t[(size_t)i * w + q], ratio;

			if (e <= LP_EPS)
				continue;
			ratio = t[(size_t)i * w + n] / e;
			if (r == m || ratio < best - LP_EPS ||
			    (ratio <= best + LP_EPS && rl[i] < rl[r])) {
				r = i;
				best = ratio;
			}
		}
		if (r == m) {
			ret = 1;	/* unbounded */
			goto out;
		}
		p = t[(size_t)r * w + q];
		for (i = 0; i <= m; i++) {
			double f;

			if (i == r || !(f = t[(size_t)i * w + q]))
				continue;
			for (j = 0; j <= n; j++)
				if (j != q)
					t[(size_t)i * w + j] -= f * t[(size_t)r * w + j] / p;
			t[(size_t)i * w + q] = -f / p;
		}
		for (j = 0; j <= n; j++)
			if (j != q)
				t[(size_t)r * w + j] /= p;
		t[(size_t)r * w + q] = 1 / p;
		i = rl[r];
		rl[r] = cl[q];
		cl[q] = i;
	}
	if (it == LP_MAX_PIVOTS)
		goto out;
	memset(x, 0, n * sizeof(*x));
	for (i = 0; i < m; i++)
		if (rl[i] < n)
			x[rl[i]] = t[(size_t)i * w + n];
	*opt = t[(size_t)m * w + n];
	ret = 0;
out:
	free(t);
	free(rl);
	free(cl);
	return ret;
}

/* Each mark's chain: launches [first[j], end[j]) since the previous mark. */
static int chains(const struct est_launch *l, uint32_t nl,
		  const struct est_mark *m, uint32_t nm, uint32_t **first)
{
	uint32_t j, li = 0;

	*first = calloc(nm + 1, sizeof(**first));
	if (!*first)
		return -1;
	for (j = 0; j < nm; j++) {
		(*first)[j] = li;
		while (li < nl && l[li].t < m[j].t_in)
			li++;
	}
	(*first)[nm] = li;
	return 0;
}

/* The chain's launch that the replay with @d overshoots @m by most, and
 * by how much (ns, negative when it does not). */
static double worst(const struct est_launch *l, uint32_t a, uint32_t z,
		    const struct est_mark *m, const double *d, uint32_t *at)
{
	double suf = 0, v = -INFINITY;
	uint32_t i;

	for (i = z; i-- > a;) {
		double e;

		suf += d[l[i].sig];
		e = (double)l[i].t + suf - (double)m->t_end;
		if (e > v) {
			v = e;
			*at = i;
		}
	}
	return v;
}

struct rows {
	double *a, *b;
	uint32_t n, m;
	uint32_t *hash;		/* open addressing: row + 1, 0 empty */
};

static uint32_t row_hash(const double *v, uint32_t n)
{
	uint32_t h = 2166136261u, i;

	for (i = 0; i < n; i++) {
		uint32_t k = (uint32_t)v[i];

		h = (h ^ k) * 16777619u;
	}
	return h;
}

/* Add the row @v <= @rhs, or tighten the same row: 1 when new or
 * tighter, 0 unchanged, -1 full. */
static int row_add(struct rows *r, const double *v, double rhs)
{
	uint32_t sz = 2 * EST_LP_MAX_ROWS, h = row_hash(v, r->n) % sz;

	for (;; h = (h + 1) % sz) {
		uint32_t k = r->hash[h];

		if (!k)
			break;
		if (!memcmp(&r->a[(size_t)(k - 1) * r->n], v, r->n * sizeof(*v))) {
			if (rhs < r->b[k - 1]) {
				r->b[k - 1] = rhs;
				return 1;
			}
			return 0;
		}
	}
	if (r->m == EST_LP_MAX_ROWS)
		return -1;
	memcpy(&r->a[(size_t)r->m * r->n], v, r->n * sizeof(*v));
	r->b[r->m] = rhs;
	r->hash[h] = ++r->m;
	return 1;
}

int ig_est_bound_fit(const struct est_launch *l, uint32_t nl,
		     const struct est_mark *m, uint32_t nm, uint32_t nsig,
		     const double *w, double cap, int skip, struct est_model *out)
{
	uint32_t n = nsig > EST_MAX_SIGS ? EST_MAX_SIGS : nsig, j, i, s, round;
	uint32_t start = 0;
	struct rows r = { .n = n };
	double *v = calloc(n + 1, sizeof(*v)), x[EST_MAX_SIGS] = { 0 }, opt;
	uint32_t *first = NULL;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	out->nsig = n;
	r.a = malloc(sizeof(double) * EST_LP_MAX_ROWS * (n ? n : 1));
	r.b = malloc(sizeof(double) * EST_LP_MAX_ROWS);
	r.hash = calloc(2 * EST_LP_MAX_ROWS, sizeof(*r.hash));
	if (!n || !v || !r.a || !r.b || !r.hash || chains(l, nl, m, nm, &first))
		goto done;
	for (s = 0; s < n; s++) {	/* each duration at most cap */
		memset(v, 0, n * sizeof(*v));
		v[s] = 1;
		row_add(&r, v, cap);
		x[s] = cap;
	}
	for (round = 0; round < ROUNDS; round++) {
		uint32_t jj;
		int added = 0;

		/* from where the last round stopped, a bounded batch: the
		 * first solutions cut most of the others off */
		for (jj = 0; jj < nm && added < ROUND_ROWS; jj++) {
			uint32_t at = 0;
			int k;

			j = (start + jj) % nm;
			if ((skip >= 0 && m[j].fold == skip) || first[j + 1] <= first[j])
				continue;
			if (worst(l, first[j], first[j + 1], &m[j], x, &at) <= VIOL_NS)
				continue;
			memset(v, 0, n * sizeof(*v));
			for (i = at; i < first[j + 1]; i++)
				v[l[i].sig < n ? l[i].sig : n - 1]++;
			k = row_add(&r, v, (double)m[j].t_end - (double)l[at].t);
			if (k < 0)
				goto done;
			added += k;
		}
		start = nm ? (start + jj) % nm : 0;
		if (!added)
			break;
		if (ig_est_lp_max(r.a, r.b, w, r.m, n, x, &opt))
			goto done;
	}
	if (round == ROUNDS)
		goto done;
	for (s = 0; s < n; s++)
		out->d[s] = x[s] < 0 ? 0 : x[s];
	ret = 0;
done:
	free(v);
	free(r.a);
	free(r.b);
	free(r.hash);
	free(first);
	return ret;
}

void ig_est_bound_check(const struct est_model *md, const struct est_launch *l,
			uint32_t nl, const struct est_mark *m, uint32_t nm,
			int fold, double *err, uint32_t *nerr)
{
	uint32_t *first = NULL, j, at;

	if (chains(l, nl, m, nm, &first))
		return;
	for (j = 0; j < nm; j++) {
		double v;

		if (m[j].fold != fold || first[j + 1] <= first[j])
			continue;
		v = worst(l, first[j], first[j + 1], &m[j], md->d, &at);
		err[(*nerr)++] = v > 0 ? v / 1000.0 : 0;
	}
	free(first);
}

/* The largest t such that the replay with t * @u ends by every mark. */
static double scale_max(const struct est_launch *l, const uint32_t *first,
			const struct est_mark *m, uint32_t nm, const double *u,
			uint32_t n, double cap)
{
	double t = INFINITY;
	uint32_t j, i;

	for (i = 0; i < n; i++)
		if (u[i] > 0 && cap / u[i] < t)
			t = cap / u[i];
	for (j = 0; j < nm; j++) {
		double suf = 0;

		for (i = first[j + 1]; i-- > first[j];) {
			double room = (double)m[j].t_end - (double)l[i].t;

			suf += u[l[i].sig];
			if (suf > 0 && room / suf < t)
				t = room < 0 ? 0 : room / suf;
		}
	}
	return t;
}

int ig_est_bound_point(const struct est_launch *l, uint32_t nl,
		       const struct est_mark *m, uint32_t nm, uint32_t nsig,
		       const double *w, double cap, const struct est_model *hi,
		       struct est_model *out)
{
	double u[EST_MAX_SIGS] = { 0 }, e[EST_MAX_SIGS], busy = 0, ub = 0, t;
	uint32_t n = hi->nsig, s, *first = NULL;
	struct est_model one;

	*out = *hi;
	for (s = 0; s < n; s++) {
		busy += w[s] * hi->d[s];
		u[s] = hi->d[s];
		if (!w[s])
			continue;
		/* this signature's own largest duration */
		memset(e, 0, sizeof(e));
		e[s] = 1;
		if (ig_est_bound_fit(l, nl, m, nm, nsig, e, cap, -1, &one))
			return -1;
		u[s] = one.d[s];
	}
	for (s = 0; s < n; s++)
		ub += w[s] * u[s];
	if (chains(l, nl, m, nm, &first))
		return -1;
	t = scale_max(l, first, m, nm, u, n, cap);
	free(first);
	t = ub > 0 ? fmin(busy / 2 / ub, t) : 0;
	for (s = 0; s < n; s++)
		out->d[s] = t * u[s];
	return 0;
}
