// SPDX-License-Identifier: MIT
/*
 * The report's statistics: per run (totals and means over its tasks), per
 * point (medians and ranges over seeds), per scheduler (the twin's
 * fidelity), and the schedulers' order, names and colours from the twin's
 * ops table.
 */
#include "tools/report/report.h"
#include "tools/twinlab.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "twin/sched.h"
#include "twin/stat.h"

double rp_quantile(double *v, int n, double q)
{
	int k;

	if (n <= 0)
		return NAN;
	stat_sort(v, n);
	k = (int)ceil(q * n) - 1;
	return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

double rp_median(double *v, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		if (isfinite(v[i]))
			v[k++] = v[i];
	return k ? stat_median(v, k) : NAN;
}

/* Position in the ops table; unknown schedulers after, by name. */
static int sched_rank(const char *s)
{
	int i = sched_index(s);

	return i < 0 ? INT_MAX : i;
}

int rp_sched_cmp(const char *a, const char *b)
{
	int ra = sched_rank(a), rb = sched_rank(b);

	return ra != rb ? (ra < rb ? -1 : 1) : strcmp(a, b);
}

const char *rp_sched_label(const char *s)
{
	static char label[16][64];
	int i = sched_index(s);

	if (i < 0 || i >= 16)
		return s;
	if (!label[i][0])
		snprintf(label[i], sizeof(label[i]), "%s (%s)",
			 sched_list[i]->role, sched_list[i]->name);
	return label[i];
}

/* The ops table's schedulers in the order of their colours; others get
 * the rest of the palette by their place in the report. */
const char *rp_sched_colour(const char *s, int i)
{
	static const char *const known[] = { "#d95f02", "#1b9e77" };
	static const char *const more[] = { "#7570b3", "#e7298a", "#66a61e",
					    "#e6ab02", "#a6761d" };
	int k = sched_index(s);

	if (k >= 0 && k < (int)(sizeof(known) / sizeof(known[0])))
		return known[k];
	return more[i % 5];
}

const char *rp_baseline(const struct report *r)
{
	for (int s = 0; s < r->nscheds; s++) {
		const struct sched_ops *ops = sched_find(r->scheds[s]);

		if (ops && ops->baseline)
			return r->scheds[s];
	}
	return NULL;
}

struct unit byte_unit(double max)
{
	static const struct unit u[] = { { "TB", 1e12 }, { "GB", 1e9 },
					 { "MB", 1e6 }, { "kB", 1e3 },
					 { "B", 1 } };

	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]) - 1; i++)
		if (isfinite(max) && max >= u[i].div)
			return u[i];
	return u[sizeof(u) / sizeof(u[0]) - 1];
}

struct unit exp_byte_unit(const struct report *r, const char *exp)
{
	const struct point *p;
	double max = NAN;

	for (int i = 0; (p = exp_point(r, exp, NULL, &i));) {
		max = fmax_nan(max, p->plan_bf);
		max = fmax_nan(max, p->bf_max);
		max = fmax_nan(max, p->ip_med);
	}
	return byte_unit(max);
}

void run_totals(struct report *r)
{
	for (int i = 0; i < r->ntasks; i++) {
		const struct rtask *t = &r->tasks[i];
		struct rrun *x = &r->runs[t->run];

		x->ntasks++;
		x->nblocked += t->blocked;
		x->nfailed += t->failed;
		x->nrounds += t->nrounds;
		x->nheld += t->nheld;
		x->ntouched += t->ntouched;
		if (t->nrounds > x->max_rounds)
			x->max_rounds = t->nrounds;
	}
	for (int j = 0; j < r->nruns; j++) {
		struct rrun *x = &r->runs[j];
		double ms[NPH] = { 0 }, ps[NPH] = { 0 };
		int nm = 0, np = 0;

		for (int i = 0; i < r->ntasks; i++) {
			const struct rtask *t = &r->tasks[i];

			if (t->run != j)
				continue;
			if (!t->blocked) {
				np++;
				for (int k = 0; k < NPH; k++)
					ps[k] += t->pred[k];
			}
			/* a round touched from the live view is not
			 * averaged (every one of them: none to mean) */
			if (t->nrounds > t->ntouched) {
				nm++;
				for (int k = 0; k < NPH; k++)
					ms[k] += t->meas[k];
			}
		}
		x->nmeasured = nm;
		for (int k = 0; k < NPH; k++) {
			x->meas[k] = nm ? ms[k] / nm : NAN;
			x->pred[k] = np ? ps[k] / np : NAN;
		}
		if (x->link_rounds) {
			x->ip_bytes = x->link_sum / x->link_rounds * x->scale;
			x->bf_bytes = x->bf_known ? x->bf_sum / x->link_rounds *
							    x->scale :
						    NAN;
		}
		r->rounds_total += x->nrounds;
		r->rounds_held += x->nheld;
	}
}

static int cmp_point_run(const void *a, const void *b, void *ctx)
{
	const struct rrun *runs = ctx;
	const struct rrun *x = &runs[*(const int *)a];
	const struct rrun *y = &runs[*(const int *)b];
	int c = strcmp(x->experiment, y->experiment);

	if (!c)
		c = rp_sched_cmp(x->scheduler, y->scheduler);
	if (!c)
		c = x->nlocals - y->nlocals;
	if (!c)
		c = (x->seed > y->seed) - (x->seed < y->seed);
	if (!c)
		c = (x->id > y->id) - (x->id < y->id);
	return c;
}

static void point_stats(struct report *r, struct point *p)
{
	double *v = calloc((size_t)p->n * 4 + 1, sizeof(*v)), *w, *u, *z;
	double psum[NPH] = { 0 }, bfp = 0, wl = 0;
	double shape[4] = { 0 };	/* depth, stars, aggs, busiest */
	int np = 0, nb = 0, nw = 0, ns = 0;

	if (!v) {
		p->lat_med = NAN;
		return;
	}
	w = v + p->n;
	u = w + p->n;
	z = u + p->n;
	p->lat_min = p->lat_max = p->bf_min = p->bf_max = NAN;
	for (int i = 0; i < p->n; i++) {
		const struct rrun *x = &r->runs[r->order[p->first + i]];

		/* a degraded run's latency is the host's, not the network's */
		double lat = x->degraded ? NAN : x->meas[PH_ROUND];

		v[i] = lat;
		w[i] = x->bf_bytes;
		u[i] = x->ip_bytes;
		p->nmeas += isfinite(lat);
		p->lat_min = fmin_nan(p->lat_min, lat);
		p->lat_max = fmax_nan(p->lat_max, lat);
		p->bf_min = fmin_nan(p->bf_min, x->bf_bytes);
		p->bf_max = fmax_nan(p->bf_max, x->bf_bytes);
		if (isfinite(x->pred[PH_ROUND])) {
			np++;
			for (int k = 0; k < NPH; k++)
				psum[k] += x->pred[k];
		}
		if (isfinite(x->plan_bf)) {
			bfp += x->plan_bf;
			nb++;
		}
		if (isfinite(x->wl)) {
			wl += x->wl;
			nw++;
		}
		if (isfinite(x->depth) && isfinite(x->busiest)) {
			shape[0] += x->depth;
			shape[1] += x->stars;
			shape[2] += x->aggs;
			shape[3] += x->busiest;
			ns++;
		}
	}
	p->depth = ns ? shape[0] / ns : NAN;
	p->stars = ns ? shape[1] / ns : NAN;
	p->aggs = ns ? shape[2] / ns : NAN;
	p->busiest = ns ? shape[3] / ns : NAN;
	p->lat_med = rp_median(v, p->n);
	p->bf_med = rp_median(w, p->n);
	p->ip_med = rp_median(u, p->n);
	for (int k = 0; k < NPH; k++) {
		for (int i = 0; i < p->n; i++)
			z[i] = r->runs[r->order[p->first + i]].meas[k];
		p->ph_med[k] = rp_median(z, p->n);
		p->ph_pred[k] = np ? psum[k] / np : NAN;
	}
	p->lat_pred = p->ph_pred[PH_ROUND];
	p->plan_bf = nb ? bfp / nb : NAN;
	p->wl = nw ? wl / nw : NAN;
	free(v);
}

int build_points(struct report *r)
{
	r->order = calloc((size_t)r->nruns + 1, sizeof(*r->order));
	r->points = calloc((size_t)r->nruns + 1, sizeof(*r->points));
	r->exps = calloc((size_t)r->nruns + 1, sizeof(*r->exps));
	r->scheds = calloc((size_t)r->nruns + 1, sizeof(*r->scheds));
	if (!r->order || !r->points || !r->exps || !r->scheds) {
		p_err("out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < r->nruns; i++) {
		int k;

		if (r->runs[i].point)
			r->order[r->norder++] = i;
		for (k = 0; k < r->nscheds; k++)
			if (!strcmp(r->scheds[k], r->runs[i].scheduler))
				break;
		if (k == r->nscheds)
			r->scheds[r->nscheds++] = r->runs[i].scheduler;
	}
	for (int i = 1; i < r->nscheds; i++)
		for (int j = i; j > 0 &&
				rp_sched_cmp(r->scheds[j - 1], r->scheds[j]) > 0;
		     j--) {
			const char *t = r->scheds[j];

			r->scheds[j] = r->scheds[j - 1];
			r->scheds[j - 1] = t;
		}
	qsort_r(r->order, (size_t)r->norder, sizeof(*r->order),
		cmp_point_run, r->runs);
	for (int i = 0; i < r->norder; i++) {
		const struct rrun *x = &r->runs[r->order[i]];
		struct point *p = r->npoints ? &r->points[r->npoints - 1] :
					       NULL;

		if (p && !strcmp(p->experiment, x->experiment) &&
		    !strcmp(p->scheduler, x->scheduler) &&
		    p->nlocals == x->nlocals) {
			p->n++;
			continue;
		}
		p = &r->points[r->npoints++];
		p->experiment = x->experiment;
		p->scheduler = x->scheduler;
		p->nlocals = x->nlocals;
		p->first = i;
		p->n = 1;
		if (!r->nexps ||
		    strcmp(r->exps[r->nexps - 1], x->experiment))
			r->exps[r->nexps++] = x->experiment;
	}
	for (int i = 0; i < r->npoints; i++)
		point_stats(r, &r->points[i]);
	return 0;
}

const struct point *exp_point(const struct report *r, const char *exp,
			      const char *sched, int *i)
{
	while (*i < r->npoints) {
		const struct point *p = &r->points[(*i)++];

		if (!strcmp(p->experiment, exp) &&
		    (!sched || !strcmp(p->scheduler, sched)))
			return p;
	}
	return NULL;
}

const struct point *find_point(const struct report *r,
				      const char *exp, const char *sched,
				      int nlocals)
{
	const struct point *p;
	int i = 0;

	while ((p = exp_point(r, exp, sched, &i)))
		if (p->nlocals == nlocals)
			return p;
	return NULL;
}

bool exp_has_sched(const struct report *r, const char *exp,
			  const char *sched)
{
	int i = 0;

	return exp_point(r, exp, sched, &i);
}

void exp_suffix(const struct report *r, const char *exp, char *buf,
		       size_t len)
{
	char part[48];

	if (r->nexps <= 1) {
		buf[0] = '\0';
		return;
	}
	fname_part(part, sizeof(part), exp);
	snprintf(buf, len, "-%s", part);
}

bool task_measured(const struct report *r, const struct rtask *t)
{
	return !t->blocked && t->nrounds > 0 && isfinite(t->meas[PH_ROUND]) &&
	       isfinite(t->pred[PH_ROUND]) && !r->runs[t->run].degraded;
}

struct fid fidelity_stats(const struct report *r, const char *sched)
{
	struct fid s = { .med = NAN, .min = NAN, .max = NAN, .r = NAN,
			 .p95 = NAN };
	double *v = calloc(2 * (size_t)r->ntasks + 2, sizeof(*v)), *e;
	double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;

	if (!v)
		return s;
	e = v + r->ntasks + 1;
	for (int i = 0; i < r->ntasks; i++) {
		const struct rtask *t = &r->tasks[i];
		double q, x = t->pred[PH_ROUND], y = t->meas[PH_ROUND];

		if (strcmp(r->runs[t->run].scheduler, sched) ||
		    !task_measured(r, t) || !(x > 0))
			continue;
		q = y / x;
		v[s.n++] = q;
		s.min = fmin_nan(s.min, q);
		s.max = fmax_nan(s.max, q);
		s.within += fabs(q - 1) <= 0.25;
		sx += x;
		sy += y;
		sxx += x * x;
		syy += y * y;
		sxy += x * y;
	}
	for (int i = 0; i < s.n; i++)
		e[i] = fabs(v[i] - 1);
	s.p95 = rp_quantile(e, s.n, 0.95);
	s.med = rp_median(v, s.n);
	if (s.n >= 3) {
		double cov = sxy - sx * sy / s.n;
		double vx = sxx - sx * sx / s.n, vy = syy - sy * sy / s.n;

		if (vx > 0 && vy > 0)
			s.r = cov / sqrt(vx * vy);
	}
	free(v);
	return s;
}

int common_max_n(const struct report *r, const char *exp,
			const char *a, const char *b)
{
	const struct point *p, *q;
	int best = -1;

	for (int i = 0; (p = exp_point(r, exp, a, &i));) {
		if (!isfinite(p->lat_med))
			continue;
		q = find_point(r, exp, b, p->nlocals);
		if (q && isfinite(q->lat_med) && p->nlocals > best)
			best = p->nlocals;
	}
	return best;
}

struct rrun *run_by_id(struct report *r, int64_t id, int *idx)
{
	int lo = 0, hi = r->nruns - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (r->runs[mid].id == id) {
			if (idx)
				*idx = mid;
			return &r->runs[mid];
		}
		if (r->runs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}
