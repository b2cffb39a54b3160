// SPDX-License-Identifier: MIT
#include "fl.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Bit-identical results need a*b+c rounded twice, as written. GCC does not
 * contract in ISO mode; clang does unless told (it would fuse on aarch64).
 */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* ---- Pseudo-random numbers ---------------------------------------------- */

static inline uint64_t rotl64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void fl_rng_seed(struct fl_rng *r, uint64_t seed)
{
	uint64_t sm = seed;

	/* splitmix64 never yields four zero words, the one bad state. */
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&sm);
	r->spare = 0;
	r->has_spare = false;
}

uint64_t fl_rng_next(struct fl_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl64(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl64(s[3], 45);
	return result;
}

double fl_rng_uniform(struct fl_rng *r)
{
	return (double)(fl_rng_next(r) >> 11) * 0x1p-53;
}

/* Uniform in (0, 1]: for logarithms. */
static double uniform_pos(struct fl_rng *r)
{
	return (double)((fl_rng_next(r) >> 11) + 1) * 0x1p-53;
}

uint32_t fl_rng_below(struct fl_rng *r, uint32_t n)
{
	return (uint32_t)(((fl_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

uint64_t fl_seed_derive(uint64_t seed, uint64_t tag)
{
	uint64_t a = tag, b;

	/* Mix the tag first, so seed ^ tag collisions cannot pair streams. */
	b = seed ^ splitmix64(&a);
	return splitmix64(&b);
}

/* ---- Our own exp and log ------------------------------------------------ */

/*
 * libm's exp and log are faithfully rounded at best and differ between
 * libm versions in the last bit, which would make data and models differ
 * between machines. These use only + - * / and exact scaling by powers of
 * two, so they round the same everywhere; they are accurate to a few ulp,
 * far more than learning needs.
 */

/* Round to the nearest integer, ties to even, for |x| < 2^51. */
static inline double round_even(double x)
{
	const double magic = 0x1.8p52;

	return x >= 0 ? (x + magic) - magic : -((-x + magic) - magic);
}

/* 2^k for -1022 <= k <= 1023, from its bits: exact. */
static inline double pow2i(int k)
{
	uint64_t bits = (uint64_t)(k + 1023) << 52;
	double d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

static double fl_exp(double x)
{
	/* ln 2 split so that k * LN2_HI is exact for |k| < 2^11. */
	const double ln2_hi = 0x1.62e42fee00000p-1;
	const double ln2_lo = 0x1.a39ef35793c76p-33;
	double k, r, p;
	int ki;

	if (x != x)
		return x;
	if (x > 709.78)
		return HUGE_VAL;
	if (x < -745.2)
		return 0;
	k = round_even(x * 0x1.71547652b82fep0);	/* x / ln 2 */
	r = (x - k * ln2_hi) - k * ln2_lo;		/* |r| <= 0.347 */
	/* Taylor to r^13 / 13!: truncation below 1e-17 for |r| <= 0.347. */
	p = 1.0 / 6227020800.0;
	p = p * r + 1.0 / 479001600.0;
	p = p * r + 1.0 / 39916800.0;
	p = p * r + 1.0 / 3628800.0;
	p = p * r + 1.0 / 362880.0;
	p = p * r + 1.0 / 40320.0;
	p = p * r + 1.0 / 5040.0;
	p = p * r + 1.0 / 720.0;
	p = p * r + 1.0 / 120.0;
	p = p * r + 1.0 / 24.0;
	p = p * r + 1.0 / 6.0;
	p = p * r + 0.5;
	p = p * r + 1.0;
	p = p * r + 1.0;
	ki = (int)k;
	if (ki > 1023) {
		p *= 2.0;
		ki -= 1;
	}
	if (ki < -1022) {	/* subnormal result: two exact steps */
		p *= 0x1p-1000;
		ki += 1000;
	}
	return p * pow2i(ki);
}

static double fl_log(double x)
{
	const double ln2 = 0x1.62e42fefa39efp-1;
	double m, f, f2, s, t;
	uint64_t bits;
	int e;

	if (x != x || x < 0)
		return NAN;
	if (x == 0)
		return -HUGE_VAL;
	if (x == HUGE_VAL)
		return x;
	e = 0;
	if (x < 0x1p-1022) {	/* subnormal: make it normal first */
		x *= 0x1p54;
		e = -54;
	}
	memcpy(&bits, &x, sizeof(bits));
	e += (int)(bits >> 52) - 1023;
	bits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
	memcpy(&m, &bits, sizeof(m));	/* x = m * 2^e, m in [1, 2) */
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e += 1;
	}
	/* log m = 2 atanh(f), |f| <= 0.1716: the series to f^25 suffices. */
	f = (m - 1.0) / (m + 1.0);
	f2 = f * f;
	s = 1.0 / 25;
	for (int k = 23; k >= 1; k -= 2)
		s = s * f2 + 1.0 / k;
	t = 2.0 * f * s;
	return (double)e * ln2 + t;
}

double fl_rng_normal(struct fl_rng *r)
{
	double u, v, s, f;

	if (r->has_spare) {
		r->has_spare = false;
		return r->spare;
	}
	do {
		u = 2.0 * fl_rng_uniform(r) - 1.0;
		v = 2.0 * fl_rng_uniform(r) - 1.0;
		s = u * u + v * v;
	} while (s >= 1.0 || s == 0.0);
	f = sqrt(-2.0 * fl_log(s) / s);
	r->spare = v * f;
	r->has_spare = true;
	return u * f;
}

/* ---- Data --------------------------------------------------------------- */

/* Sub-stream tags; fixed forever, or old experiments stop reproducing. */
enum {
	TAG_MEANS = 1,
	TAG_TRAIN = 2,
	TAG_TEST = 3,
	TAG_MODEL = 4,
	TAG_SHUFFLE = 5,
	TAG_PARTITION = 6,
};

void fl_data_release(struct fl_data *d)
{
	if (!d)
		return;
	free(d->x);
	free(d->y);
	memset(d, 0, sizeof(*d));
}

static int data_alloc(struct fl_data *d, int n, int dim, int classes)
{
	memset(d, 0, sizeof(*d));
	if (n < 1 || dim < 1 || classes < 2)
		return -EINVAL;
	if ((uint64_t)n * (uint64_t)dim > SIZE_MAX / sizeof(float))
		return -EINVAL;
	d->x = malloc((size_t)n * (size_t)dim * sizeof(float));
	d->y = malloc((size_t)n * sizeof(int));
	if (!d->x || !d->y) {
		fl_data_release(d);
		return -ENOMEM;
	}
	d->n = n;
	d->dim = dim;
	d->classes = classes;
	return 0;
}

int fl_data_generate(struct fl_data *d, uint64_t seed, enum fl_split split,
		     int n, int dim, int classes)
{
	double *mu, sd, inv;
	struct fl_rng r;
	uint64_t stream;
	int err;

	err = data_alloc(d, n, dim, classes);
	if (err)
		return err;
	if (split != FL_SPLIT_TRAIN && split != FL_SPLIT_TEST) {
		fl_data_release(d);
		return -EINVAL;
	}
	mu = malloc((size_t)classes * (size_t)dim * sizeof(*mu));
	if (!mu) {
		fl_data_release(d);
		return -ENOMEM;
	}
	inv = 1.0 / sqrt((double)dim);
	sd = FL_DATA_SEPARATION * inv;
	fl_rng_seed(&r, fl_seed_derive(seed, TAG_MEANS));
	for (size_t k = 0; k < (size_t)classes * (size_t)dim; k++)
		mu[k] = sd * fl_rng_normal(&r);

	stream = fl_seed_derive(seed, split == FL_SPLIT_TRAIN ? TAG_TRAIN
							       : TAG_TEST);
	for (int i = 0; i < n; i++) {
		float *x = d->x + (size_t)i * (size_t)dim;
		const double *m;
		int y;

		/* One stream per sample: larger sets extend smaller ones. */
		fl_rng_seed(&r, fl_seed_derive(stream, (uint64_t)i));
		y = (int)fl_rng_below(&r, (uint32_t)classes);
		m = mu + (size_t)y * (size_t)dim;
		for (int j = 0; j < dim; j++)
			x[j] = (float)((m[j] + fl_rng_normal(&r)) * inv);
		d->y[i] = y;
	}
	free(mu);
	return 0;
}

int fl_data_select(struct fl_data *dst, const struct fl_data *src,
		   const int *idx, int n)
{
	size_t dim = (size_t)src->dim;
	int err;

	err = data_alloc(dst, n, src->dim, src->classes);
	if (err)
		return err;
	for (int i = 0; i < n; i++) {
		if (idx[i] < 0 || idx[i] >= src->n) {
			fl_data_release(dst);
			return -EINVAL;
		}
		memcpy(dst->x + (size_t)i * dim,
		       src->x + (size_t)idx[i] * dim, dim * sizeof(float));
		dst->y[i] = src->y[idx[i]];
	}
	return 0;
}

/* ---- Non-IID partition -------------------------------------------------- */

/*
 * log of a Gamma(a, 1) variate, Marsaglia and Tsang 2000; for a < 1 the
 * boost Gamma(a) = Gamma(a + 1) * U^(1/a). In logs, because for small
 * alpha U^(1/a) underflows to zero for every client and the proportions
 * would be 0/0.
 */
static double log_gamma_variate(struct fl_rng *r, double a)
{
	double boost = 0, d, c, x, v, u;

	if (a < 1) {
		boost = fl_log(uniform_pos(r)) / a;
		a += 1;
	}
	d = a - 1.0 / 3;
	c = 1.0 / sqrt(9 * d);
	for (;;) {
		do {
			x = fl_rng_normal(r);
			v = 1 + c * x;
		} while (v <= 0);
		v = v * v * v;
		u = uniform_pos(r);
		if (u < 1 - 0.0331 * (x * x) * (x * x) ||
		    fl_log(u) < 0.5 * x * x + d * (1 - v + fl_log(v)))
			return fl_log(d * v) + boost;
	}
}

struct share {
	double frac;
	int client;
};

static int cmp_share(const void *pa, const void *pb)
{
	const struct share *a = pa, *b = pb;

	if (a->frac != b->frac)
		return a->frac > b->frac ? -1 : 1;
	return (a->client > b->client) - (a->client < b->client);
}

/*
 * Deal the m samples list[0..m) of one class to the k clients in
 * Dirichlet(alpha) proportions: owner[list[i]] = client.
 */
static void deal_class(struct fl_rng *r, const int *list, int m, int k,
		       double alpha, double *lg, int *cnt, struct share *sh,
		       int *owner)
{
	double max = -HUGE_VAL, sum = 0;
	int given = 0, at = 0;

	for (int c = 0; c < k; c++) {
		lg[c] = log_gamma_variate(r, alpha);
		if (lg[c] > max)
			max = lg[c];
	}
	for (int c = 0; c < k; c++) {
		lg[c] = fl_exp(lg[c] - max);
		sum += lg[c];
	}
	/* Largest remainder: counts sum to m exactly, ties to lower index. */
	for (int c = 0; c < k; c++) {
		double q = lg[c] / sum * m;
		int whole = (int)q;

		if (whole > m - given)
			whole = m - given;
		sh[c].frac = q - whole;
		sh[c].client = c;
		cnt[c] = whole;
		given += whole;
	}
	qsort(sh, (size_t)k, sizeof(*sh), cmp_share);
	for (int i = 0; given < m; i = (i + 1) % k, given++)
		cnt[sh[i].client]++;
	for (int c = 0; c < k; c++)
		for (int i = 0; i < cnt[c]; i++)
			owner[list[at++]] = c;
}

void fl_partition_release(struct fl_partition *p)
{
	if (!p)
		return;
	free(p->count);
	free(p->start);
	free(p->idx);
	memset(p, 0, sizeof(*p));
}

int fl_partition_init(struct fl_partition *p, const struct fl_data *d,
		      int nclients, double alpha, uint64_t seed)
{
	int k = nclients, n = d->n, classes = d->classes;
	int *owner = NULL, *bycls = NULL, *cstart = NULL, *fill = NULL;
	struct share *sh = NULL;
	double *lg = NULL;
	struct fl_rng r;
	int err = -ENOMEM;

	memset(p, 0, sizeof(*p));
	if (k < 1 || k > n || !(alpha > 0) || alpha == HUGE_VAL)
		return -EINVAL;
	p->count = calloc((size_t)k, sizeof(int));
	p->start = calloc((size_t)k, sizeof(int));
	p->idx = malloc((size_t)n * sizeof(int));
	owner = malloc((size_t)n * sizeof(int));
	bycls = malloc((size_t)n * sizeof(int));
	cstart = calloc((size_t)classes + 1, sizeof(int));
	fill = calloc((size_t)(classes > k ? classes : k), sizeof(int));
	lg = malloc((size_t)k * sizeof(*lg));
	sh = malloc((size_t)k * sizeof(*sh));
	if (!p->count || !p->start || !p->idx || !owner || !bycls ||
	    !cstart || !fill || !lg || !sh)
		goto out;

	/* Samples bucketed by class, each bucket in a seeded random order. */
	for (int i = 0; i < n; i++)
		cstart[d->y[i] + 1]++;
	for (int c = 0; c < classes; c++)
		cstart[c + 1] += cstart[c];
	for (int i = 0; i < n; i++)
		bycls[cstart[d->y[i]] + fill[d->y[i]]++] = i;
	fl_rng_seed(&r, fl_seed_derive(seed, TAG_PARTITION));
	for (int c = 0; c < classes; c++) {
		int *list = bycls + cstart[c], m = cstart[c + 1] - cstart[c];

		for (int i = m - 1; i > 0; i--) {
			int j = (int)fl_rng_below(&r, (uint32_t)i + 1);
			int t = list[i];

			list[i] = list[j];
			list[j] = t;
		}
		/* fill is free again: one class's per-client counts. */
		if (m)
			deal_class(&r, list, m, k, alpha, lg, fill, sh,
				   owner);
	}

	for (int i = 0; i < n; i++)
		p->count[owner[i]]++;
	/*
	 * An empty client takes the highest-indexed sample of the largest
	 * one: the weights must all be > 0, and k <= n guarantees a donor
	 * with two or more.
	 */
	for (int c = 0; c < k; c++) {
		int big = 0;

		if (p->count[c])
			continue;
		for (int o = 1; o < k; o++)
			if (p->count[o] > p->count[big])
				big = o;
		for (int i = n - 1; i >= 0; i--)
			if (owner[i] == big) {
				owner[i] = c;
				break;
			}
		p->count[big]--;
		p->count[c]++;
	}
	for (int c = 1; c < k; c++)
		p->start[c] = p->start[c - 1] + p->count[c - 1];
	memset(fill, 0, (size_t)k * sizeof(int));
	for (int i = 0; i < n; i++)
		p->idx[p->start[owner[i]] + fill[owner[i]]++] = i;
	p->nclients = k;
	p->n = n;
	err = 0;
out:
	if (err)
		fl_partition_release(p);
	free(owner);
	free(bycls);
	free(cstart);
	free(fill);
	free(lg);
	free(sh);
	return err;
}

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

void fl_agg_release(struct fl_agg *a)
{
	if (!a)
		return;
	free(a->sum);
	memset(a, 0, sizeof(*a));
}

/* ---- Wire encoding ------------------------------------------------------ */

bool fl_wire_supported(unsigned bytes_per_parameter)
{
	switch (bytes_per_parameter) {
	case 1: case 2: case 4: case 8:
		return true;
	default:
		return false;
	}
}

size_t fl_wire_size(size_t nparams, unsigned bytes_per_parameter)
{
	if (!fl_wire_supported(bytes_per_parameter) ||
	    nparams > (SIZE_MAX - 4) / bytes_per_parameter)
		return 0;
	return nparams * bytes_per_parameter +
	       (bytes_per_parameter == 1 ? 4 : 0);
}

static inline uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static inline float f32_from(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static inline void put_le(unsigned char *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint64_t get_le(const unsigned char *p, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* binary32 to bfloat16, round to nearest even; NaN stays (quiet) NaN. */
static inline uint16_t to_bf16(float f)
{
	uint32_t u = f32_bits(f);

	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x0040u);
	return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static int encode_int8(const float *w, size_t n, unsigned char *p)
{
	double max = 0;
	float scale;

	for (size_t k = 0; k < n; k++) {
		double v = fabs(w[k]);

		if (!(v <= FLT_MAX))
			return -EINVAL;
		if (v > max)
			max = v;
	}
	scale = (float)(max / 127);
	put_le(p, f32_bits(scale), 4);
	p += 4;
	for (size_t k = 0; k < n; k++) {
		double q = scale > 0 ? round_even(w[k] / (double)scale) : 0;

		if (q > 127)
			q = 127;
		if (q < -127)
			q = -127;
		p[k] = (unsigned char)(int8_t)q;
	}
	return 0;
}

int fl_encode(const float *w, size_t nparams, unsigned bytes_per_parameter,
	      void *buf, size_t len)
{
	unsigned char *p = buf;

	if (!fl_wire_supported(bytes_per_parameter))
		return -EINVAL;
	if (len != fl_wire_size(nparams, bytes_per_parameter))
		return -EMSGSIZE;
	switch (bytes_per_parameter) {
	case 1:
		return encode_int8(w, nparams, p);
	case 2:
		for (size_t k = 0; k < nparams; k++)
			put_le(p + 2 * k, to_bf16(w[k]), 2);
		break;
	case 4:
		for (size_t k = 0; k < nparams; k++)
			put_le(p + 4 * k, f32_bits(w[k]), 4);
		break;
	case 8:
		for (size_t k = 0; k < nparams; k++) {
			double d = w[k];
			uint64_t u;

			memcpy(&u, &d, sizeof(u));
			put_le(p + 8 * k, u, 8);
		}
		break;
	}
	return 0;
}

int fl_decode(const void *buf, size_t len, unsigned bytes_per_parameter,
	      float *w, size_t nparams)
{
	const unsigned char *p = buf;

	if (!fl_wire_supported(bytes_per_parameter))
		return -EINVAL;
	if (len != fl_wire_size(nparams, bytes_per_parameter))
		return -EMSGSIZE;
	switch (bytes_per_parameter) {
	case 1: {
		float scale = f32_from((uint32_t)get_le(p, 4));

		if (!(scale >= 0) || scale > FLT_MAX)
			return -EBADMSG;
		for (size_t k = 0; k < nparams; k++)
			w[k] = (float)(int8_t)p[4 + k] * scale;
		break;
	}
	case 2:
		for (size_t k = 0; k < nparams; k++)
			w[k] = f32_from((uint32_t)get_le(p + 2 * k, 2) << 16);
		break;
	case 4:
		for (size_t k = 0; k < nparams; k++)
			w[k] = f32_from((uint32_t)get_le(p + 4 * k, 4));
		break;
	case 8:
		for (size_t k = 0; k < nparams; k++) {
			uint64_t u = get_le(p + 8 * k, 8);
			double d;

			memcpy(&d, &u, sizeof(d));
			w[k] = (float)d;
		}
		break;
	}
	return 0;
}

/* ---- Digest: XXH64 ------------------------------------------------------ */

#define XXP1 0x9e3779b185ebca87ULL
#define XXP2 0xc2b2ae3d27d4eb4fULL
#define XXP3 0x165667b19e3779f9ULL
#define XXP4 0x85ebca77c2b2ae63ULL
#define XXP5 0x27d4eb2f165667c5ULL

static inline uint64_t xx_round(uint64_t acc, uint64_t input)
{
	acc += input * XXP2;
	acc = rotl64(acc, 31);
	return acc * XXP1;
}

static inline uint64_t xx_merge(uint64_t acc, uint64_t val)
{
	acc ^= xx_round(0, val);
	return acc * XXP1 + XXP4;
}

uint64_t fl_digest(const void *buf, size_t len)
{
	const unsigned char *p = buf, *end = p + len;
	uint64_t h;

	if (len >= 32) {
		uint64_t v1 = XXP1 + XXP2, v2 = XXP2, v3 = 0, v4 = -XXP1;

		do {
			v1 = xx_round(v1, get_le(p, 8));
			v2 = xx_round(v2, get_le(p + 8, 8));
			v3 = xx_round(v3, get_le(p + 16, 8));
			v4 = xx_round(v4, get_le(p + 24, 8));
			p += 32;
		} while (end - p >= 32);
		h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) +
		    rotl64(v4, 18);
		h = xx_merge(h, v1);
		h = xx_merge(h, v2);
		h = xx_merge(h, v3);
		h = xx_merge(h, v4);
	} else {
		h = XXP5;
	}
	h += (uint64_t)len;
	for (; end - p >= 8; p += 8) {
		h ^= xx_round(0, get_le(p, 8));
		h = rotl64(h, 27) * XXP1 + XXP4;
	}
	if (end - p >= 4) {
		h ^= get_le(p, 4) * XXP1;
		h = rotl64(h, 23) * XXP2 + XXP3;
		p += 4;
	}
	for (; p < end; p++) {
		h ^= *p * XXP5;
		h = rotl64(h, 11) * XXP1;
	}
	h ^= h >> 33;
	h *= XXP2;
	h ^= h >> 29;
	h *= XXP3;
	h ^= h >> 32;
	return h;
}
