// SPDX-License-Identifier: MIT
/* The model (softmax regression), training, evaluation, aggregation. See fl.h. */
#include "fl_impl.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Model -------------------------------------------------------------- */

int fl_shape_for(uint64_t params, int classes, int *dim)
{
	uint64_t rows;

	if (classes < 2)
		return -EINVAL;
	/* dim + 1 = round(params / classes), ties up; in integers. */
	rows = params / (uint64_t)classes;
	if (params % (uint64_t)classes >= ((uint64_t)classes + 1) / 2)
		rows++;
	if (rows < 2)
		rows = 2;
	if (rows - 1 > (uint64_t)INT_MAX)
		return -EOVERFLOW;
	*dim = (int)(rows - 1);
	return 0;
}

void fl_model_release(struct fl_model *m)
{
	if (!m)
		return;
	free(m->w);
	memset(m, 0, sizeof(*m));
}

int fl_model_init(struct fl_model *m, int classes, int dim, uint64_t seed)
{
	struct fl_rng r;

	memset(m, 0, sizeof(*m));
	if (classes < 2 || dim < 1)
		return -EINVAL;
	m->nparams = fl_nparams(classes, dim);
	if (m->nparams > SIZE_MAX / sizeof(float))
		return -EINVAL;
	m->w = malloc(m->nparams * sizeof(float));
	if (!m->w)
		return -ENOMEM;
	m->classes = classes;
	m->dim = dim;
	fl_rng_seed(&r, fl_seed_derive(seed, TAG_MODEL));
	for (size_t k = 0; k < m->nparams; k++)
		m->w[k] = (float)(FL_INIT_STD * fl_rng_normal(&r));
	return 0;
}

static void logits(const struct fl_model *m, const float *x, double *z)
{
	const float *b = m->w + (size_t)m->classes * (size_t)m->dim;

	for (int c = 0; c < m->classes; c++) {
		const float *row = m->w + (size_t)c * (size_t)m->dim;
		double acc = b[c];

		for (int j = 0; j < m->dim; j++)
			acc += (double)row[j] * x[j];
		z[c] = acc;
	}
}

/*
 * Softmax in place, max subtracted so exp cannot overflow; returns the
 * log-sum-exp of the logits (the loss of class y is lse - z[y]).
 */
static double softmax(double *z, int classes)
{
	double max = z[0], sum = 0;

	for (int c = 1; c < classes; c++)
		if (z[c] > max)
			max = z[c];
	for (int c = 0; c < classes; c++) {
		z[c] = fl_exp(z[c] - max);
		sum += z[c];
	}
	for (int c = 0; c < classes; c++)
		z[c] /= sum;
	return max + fl_log(sum);
}

static int argmax(const double *z, int classes)
{
	int best = 0;

	for (int c = 1; c < classes; c++)
		if (z[c] > z[best])
			best = c;
	return best;
}

int fl_predict(const struct fl_model *m, const float *x)
{
	const float *b = m->w + (size_t)m->classes * (size_t)m->dim;
	double best_z = 0;
	int best = 0;

	/* The same sums as logits(), one class at a time: no allocation. */
	for (int c = 0; c < m->classes; c++) {
		const float *row = m->w + (size_t)c * (size_t)m->dim;
		double acc = b[c];

		for (int j = 0; j < m->dim; j++)
			acc += (double)row[j] * x[j];
		if (c == 0 || acc > best_z) {
			best_z = acc;
			best = c;
		}
	}
	return best;
}

static bool same_shape(const struct fl_model *m, const struct fl_data *d)
{
	return m->w && d->x && m->classes == d->classes && m->dim == d->dim &&
	       d->n > 0;
}

int64_t fl_train(struct fl_model *m, const struct fl_data *d, int64_t samples,
		 int batch, double lr, uint64_t seed)
{
	size_t dim = (size_t)m->dim, wb = (size_t)m->classes * dim;
	int classes = m->classes, *order = NULL;
	double *g = NULL, *z = NULL;
	uint64_t shuffle = fl_seed_derive(seed, TAG_SHUFFLE);
	int64_t done = 0, pass = 0;
	struct fl_rng r;

	if (!same_shape(m, d) || batch < 1 || samples < 0 || !(lr > 0) ||
	    lr == HUGE_VAL)
		return -EINVAL;
	order = malloc((size_t)d->n * sizeof(*order));
	g = malloc(m->nparams * sizeof(*g));
	z = malloc((size_t)classes * sizeof(*z));
	if (!order || !g || !z) {
		done = -ENOMEM;
		goto out;
	}
	while (done < samples) {
		/* Fresh Fisher-Yates order per pass, from (seed, pass). */
		fl_rng_seed(&r, fl_seed_derive(shuffle, (uint64_t)pass++));
		for (int i = 0; i < d->n; i++)
			order[i] = i;
		for (int i = d->n - 1; i > 0; i--) {
			int j = (int)fl_rng_below(&r, (uint32_t)i + 1);
			int t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (int at = 0; at < d->n && done < samples;) {
			int bs = batch;
			double step;

			if (bs > d->n - at)
				bs = d->n - at;
			if (bs > samples - done)
				bs = (int)(samples - done);
			memset(g, 0, m->nparams * sizeof(*g));
			for (int s = 0; s < bs; s++) {
				int i = order[at + s];
				const float *x = d->x + (size_t)i * dim;

				logits(m, x, z);
				softmax(z, classes);
				z[d->y[i]] -= 1.0;	/* dCE/dz: p - 1y */
				for (int c = 0; c < classes; c++) {
					double *gr = g + (size_t)c * dim;

					for (size_t j = 0; j < dim; j++)
						gr[j] += z[c] * x[j];
					g[wb + (size_t)c] += z[c];
				}
			}
			step = lr / bs;
			for (size_t k = 0; k < m->nparams; k++)
				m->w[k] = (float)(m->w[k] - step * g[k]);
			at += bs;
			done += bs;
		}
	}
out:
	free(order);
	free(g);
	free(z);
	return done;
}

int fl_evaluate(const struct fl_model *m, const struct fl_data *d,
		double *loss, double *accuracy)
{
	double *z, sum = 0;
	int right = 0;

	if (!same_shape(m, d))
		return -EINVAL;
	z = malloc((size_t)m->classes * sizeof(*z));
	if (!z)
		return -ENOMEM;
	for (int i = 0; i < d->n; i++) {
		double zy;

		logits(m, d->x + (size_t)i * (size_t)d->dim, z);
		if (argmax(z, m->classes) == d->y[i])
			right++;
		zy = z[d->y[i]];
		sum += softmax(z, m->classes) - zy;
	}
	free(z);
	if (loss)
		*loss = sum / d->n;
	if (accuracy)
		*accuracy = (double)right / d->n;
	return 0;
}

int64_t fl_samples_for_work(const struct fl_model *m, double work_core_s,
			    double madds_per_core_s)
{
	double s;

	if (!(work_core_s >= 0) || !(madds_per_core_s >= 0) ||
	    work_core_s == HUGE_VAL || madds_per_core_s == HUGE_VAL)
		return -EINVAL;
	s = work_core_s * madds_per_core_s / fl_sample_cost(m);
	if (s >= 0x1p62)
		return INT64_C(1) << 62;
	return (int64_t)s;
}

/* ---- Aggregation -------------------------------------------------------- */

int fl_agg_init(struct fl_agg *a, size_t nparams)
{
	memset(a, 0, sizeof(*a));
	if (!nparams || nparams > SIZE_MAX / sizeof(double))
		return -EINVAL;
	a->sum = calloc(nparams, sizeof(double));
	if (!a->sum)
		return -ENOMEM;
	a->nparams = nparams;
	return 0;
}

void fl_agg_reset(struct fl_agg *a)
{
	memset(a->sum, 0, a->nparams * sizeof(double));
	a->weight = 0;
	a->count = 0;
}

int fl_agg_add(struct fl_agg *a, const float *w, double weight)
{
	if (!(weight > 0) || weight == HUGE_VAL)
		return -EINVAL;
	for (size_t k = 0; k < a->nparams; k++)
		a->sum[k] += weight * w[k];
	a->weight += weight;
	a->count++;
	return 0;
}

int fl_agg_finish(const struct fl_agg *a, float *mean)
{
	if (!a->count)
		return -ENODATA;
	for (size_t k = 0; k < a->nparams; k++)
		mean[k] = (float)(a->sum[k] / a->weight);
	return 0;
}

int fl_mean_range(const float *const *w, const double *wt, int n, size_t lo,
		  size_t hi, float *mean)
{
	double total = 0;

	if (n <= 0)
		return -ENODATA;
	for (int i = 0; i < n; i++) {
		if (!(wt[i] > 0) || wt[i] == HUGE_VAL)
			return -EINVAL;
		total += wt[i];
	}
	for (size_t k = lo; k < hi; k++) {
		double sum = 0;

		for (int i = 0; i < n; i++)
			sum += wt[i] * w[i][k];
		mean[k] = (float)(sum / total);
	}
	return 0;
}

void fl_agg_release(struct fl_agg *a)
{
	if (!a)
		return;
	free(a->sum);
	memset(a, 0, sizeof(*a));
}

