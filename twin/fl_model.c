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

/*
 * A row times a sample: as one sum, each add waited for the one before,
 * and SGD ran at 1.4 G multiply-adds a second on this host (dim 1003,
 * the best of nine). Eight sums side by side, added pairwise at the end
 * (an order of our own, not left to the compiler: the same bits on
 * every machine); with the batch's tiles below and the AVX2 clones, 6.2.
 */
#define FL_LANES 8

/* Learning's two entry points have AVX2 clones (FL_CLONES, fl_impl.h);
 * their loops are inlined into each. */
#define FL_INLINE static inline __attribute__((always_inline))

FL_INLINE void logits(const struct fl_model *m, const float *x, double *z)
{
	const float *b = m->w + (size_t)m->classes * (size_t)m->dim;

	for (int c = 0; c < m->classes; c++) {
		const float *row = m->w + (size_t)c * (size_t)m->dim;
		double a[FL_LANES] = { 0 };
		int j = 0;

		/* FL_LANES sums side by side (one sum waited for each add) */
		for (; j + FL_LANES <= m->dim; j += FL_LANES)
			for (int k = 0; k < FL_LANES; k++)
				a[k] += (double)row[j + k] * x[j + k];
		for (; j < m->dim; j++)
			a[0] += (double)row[j] * x[j];
		z[c] = b[c] + (((a[0] + a[1]) + (a[2] + a[3])) +
			       ((a[4] + a[5]) + (a[6] + a[7])));
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

/*
 * One step of SGD over the batch idx[0..bs): every sample's dCE/dz at the
 * weights as they are (z: bs rows of classes), then each weight moved by
 * lr / bs times its gradient, the sum over the batch in its order from 0,
 * as one gradient array summed sample by sample would have it, bit for
 * bit. The sums are made a tile of FL_TILE weights at a time, on the
 * stack (no gradient array as large as the model: the batch's samples
 * are read from the cache, not the gradient from memory), the tile's
 * samples once for all the classes.
 */
#define FL_TILE 256

FL_INLINE void batch_step(struct fl_model *m, const struct fl_data *d,
			  const int *idx, int bs, double lr, double *z)
{
	size_t dim = (size_t)m->dim, wb = (size_t)m->classes * dim;
	int classes = m->classes;
	double step = lr / bs, tile[FL_TILE];

	for (int s = 0; s < bs; s++) {
		double *zs = z + (size_t)s * (size_t)classes;

		logits(m, d->x + (size_t)idx[s] * dim, zs);
		softmax(zs, classes);
		zs[d->y[idx[s]]] -= 1.0;	/* dCE/dz: p - 1y */
	}
	for (size_t j0 = 0; j0 < dim; j0 += FL_TILE) {
		size_t n = dim - j0 < FL_TILE ? dim - j0 : FL_TILE;

		for (int c = 0; c < classes; c++) {
			float *w = m->w + (size_t)c * dim + j0;

			memset(tile, 0, n * sizeof(*tile));
			for (int s = 0; s < bs; s++) {
				const float *x =
					d->x + (size_t)idx[s] * dim + j0;
				double zc = z[(size_t)s * (size_t)classes +
					      (size_t)c];

				for (size_t j = 0; j < n; j++)
					tile[j] += zc * x[j];
			}
			for (size_t j = 0; j < n; j++)
				w[j] = (float)(w[j] - step * tile[j]);
		}
	}
	for (int c = 0; c < classes; c++) {
		float *wc = m->w + wb + (size_t)c;	/* its bias */
		double gb = 0;

		for (int s = 0; s < bs; s++)
			gb += z[(size_t)s * (size_t)classes + (size_t)c];
		*wc = (float)(*wc - step * gb);
	}
}

/* The order of fl_train's pass `pass` over n rows: Fisher-Yates. */
static void pass_order(int *order, int n, uint64_t shuffle, int64_t pass)
{
	struct fl_rng r;

	fl_rng_seed(&r, fl_seed_derive(shuffle, (uint64_t)pass));
	for (int i = 0; i < n; i++)
		order[i] = i;
	for (int i = n - 1; i > 0; i--) {
		int j = (int)fl_rng_below(&r, (uint32_t)i + 1);
		int t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
}

int fl_train_rows(int n, int64_t samples, uint64_t seed, unsigned char *mark)
{
	int *order;

	if (n < 1 || samples < 0 || !mark)
		return -EINVAL;
	if (samples >= n) {
		memset(mark, 1, (size_t)n);
		return 0;
	}
	order = malloc((size_t)n * sizeof(*order));
	if (!order)
		return -ENOMEM;
	pass_order(order, n, fl_seed_derive(seed, TAG_SHUFFLE), 0);
	for (int64_t i = 0; i < samples; i++)
		mark[order[i]] = 1;
	free(order);
	return 0;
}

/* Does d hold the features of rows idx[0..n)? */
static bool rows_made(const struct fl_data *d, const int *idx, int n)
{
	for (int i = 0; d->have && i < n; i++)
		if (!d->have[idx[i]])
			return false;
	return true;
}

FL_CLONES
int64_t fl_train(struct fl_model *m, const struct fl_data *d, int64_t samples,
		 int batch, double lr, uint64_t seed)
{
	int *order = NULL;
	double *z = NULL;
	uint64_t shuffle = fl_seed_derive(seed, TAG_SHUFFLE);
	int64_t done = 0, pass = 0;

	if (!same_shape(m, d) || batch < 1 || samples < 0 || !(lr > 0) ||
	    lr == HUGE_VAL)
		return -EINVAL;
	if (batch > d->n)
		batch = d->n;	/* no batch is larger than the set */
	order = malloc((size_t)d->n * sizeof(*order));
	z = malloc((size_t)batch * (size_t)m->classes * sizeof(*z));
	if (!order || !z) {
		done = -ENOMEM;
		goto out;
	}
	while (done < samples) {
		/* Fresh Fisher-Yates order per pass, from (seed, pass). */
		pass_order(order, d->n, shuffle, pass++);
		for (int at = 0; at < d->n && done < samples;) {
			int bs = batch;

			if (bs > d->n - at)
				bs = d->n - at;
			if (bs > samples - done)
				bs = (int)(samples - done);
			if (!rows_made(d, order + at, bs)) {
				done = -ENODATA;
				goto out;
			}
			batch_step(m, d, order + at, bs, lr, z);
			at += bs;
			done += bs;
		}
	}
out:
	free(order);
	free(z);
	return done;
}

FL_CLONES
int fl_evaluate(const struct fl_model *m, const struct fl_data *d,
		double *loss, double *accuracy)
{
	double *z, sum = 0;
	int right = 0;

	if (!same_shape(m, d) || d->have)	/* every row, or none */
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

