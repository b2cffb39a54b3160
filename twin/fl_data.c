// SPDX-License-Identifier: MIT
/* Synthetic data and its non-IID partition. See fl.h. */
#include "fl_impl.h"
#include "grow.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- Data --------------------------------------------------------------- */

void fl_data_release(struct fl_data *d)
{
	if (!d)
		return;
	free(d->x);
	free(d->y);
	free(d->have);
	memset(d, 0, sizeof(*d));
}

/*
 * Fault in at once the whole pages of [p, p + len), to be written next:
 * one call, where page by page each first store would trap (on a
 * paravirtualised host that trap costs more than the page's arithmetic).
 * Only a hint: a kernel without MADV_POPULATE_WRITE (before 5.14), or one
 * out of memory now, leaves the stores to fault as before.
 */
static void prefault(void *p, size_t len)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)p + pg - 1) & ~(pg - 1);
	uintptr_t b = ((uintptr_t)p + len) & ~(pg - 1);

	if (len >= 65536 && b > a)
		(void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
}

void *fl_alloc_whole(size_t len)
{
	size_t huge = (size_t)2 << 20, room;
	void *p = NULL;

	if (len < huge)
		p = malloc(len ? len : 1);
	else if (len <= SIZE_MAX - huge) {
		room = (len + huge - 1) & ~(huge - 1);
		if (posix_memalign(&p, huge, room))
			p = NULL;
		else
			(void)madvise(p, room, MADV_HUGEPAGE);
	}
	if (p)
		prefault(p, len);
	return p;
}

/*
 * Room for n samples; their features too unless labels_only, made ready
 * to be written at once unless only a few rows are to be (some).
 */
static int data_alloc(struct fl_data *d, int n, int dim, int classes,
		      bool labels_only, bool some)
{
	memset(d, 0, sizeof(*d));
	if (n < 1 || dim < 1 || classes < 2)
		return -EINVAL;
	if ((uint64_t)n * (uint64_t)dim > SIZE_MAX / sizeof(float))
		return -EINVAL;
	if (!labels_only) {
		size_t len = (size_t)n * (size_t)dim * sizeof(float);

		/* a few rows of many pages: the pages they fall on alone */
		d->x = some ? malloc(len) : fl_alloc_whole(len);
	}
	d->y = malloc((size_t)n * sizeof(int));
	d->have = some ? calloc((size_t)n, 1) : NULL;
	if ((!labels_only && !d->x) || !d->y || (some && !d->have)) {
		fl_data_release(d);
		return -ENOMEM;
	}
	d->n = n;
	d->dim = dim;
	d->classes = classes;
	return 0;
}

/*
 * Samples idx[0..n) of the set (0..n-1 when idx is NULL), with their
 * features unless labels_only (of rows i with want[i] only, want given).
 * Each sample has its own stream, so a sample is the same whichever
 * others are made with it.
 */
static int generate(struct fl_data *d, uint64_t seed, enum fl_split split,
		    const int *idx, int n, int dim, int classes,
		    bool labels_only, const unsigned char *want)
{
	double *mu = NULL, *z = NULL, sd, inv;
	struct fl_rng r;
	uint64_t stream;
	int err;

	err = data_alloc(d, n, dim, classes, labels_only, want != NULL);
	if (err)
		return err;
	if (split != FL_SPLIT_TRAIN && split != FL_SPLIT_TEST) {
		fl_data_release(d);
		return -EINVAL;
	}
	for (int i = 0; idx && i < n; i++)
		if (idx[i] < 0) {
			fl_data_release(d);
			return -EINVAL;
		}
	inv = 1.0 / sqrt((double)dim);
	if (!labels_only) {
		mu = malloc((size_t)classes * (size_t)dim * sizeof(*mu));
		z = malloc((size_t)dim * sizeof(*z));
		if (!mu || !z) {
			free(mu);
			free(z);
			fl_data_release(d);
			return -ENOMEM;
		}
		sd = FL_DATA_SEPARATION * inv;
		fl_rng_seed(&r, fl_seed_derive(seed, TAG_MEANS));
		fl_rng_normals(&r, mu, (size_t)classes * (size_t)dim);
		for (size_t k = 0; k < (size_t)classes * (size_t)dim; k++)
			mu[k] *= sd;
	}

	stream = fl_seed_derive(seed, split == FL_SPLIT_TRAIN ? TAG_TRAIN
							       : TAG_TEST);
	for (int i = 0; i < n; i++) {
		int at = idx ? idx[i] : i, y;

		/* One stream per sample: larger sets extend smaller ones. */
		fl_rng_seed(&r, fl_seed_derive(stream, (uint64_t)at));
		y = (int)fl_rng_below(&r, (uint32_t)classes);
		d->y[i] = y;
		if (labels_only || (want && !want[i]))
			continue;
		if (want)
			d->have[i] = 1;
		float *x = d->x + (size_t)i * (size_t)dim;
		const double *m = mu + (size_t)y * (size_t)dim;

		fl_rng_normals(&r, z, (size_t)dim);
		for (int j = 0; j < dim; j++)
			x[j] = (float)((m[j] + z[j]) * inv);
	}
	free(mu);
	free(z);
	return 0;
}

int fl_data_generate(struct fl_data *d, uint64_t seed, enum fl_split split,
		     int n, int dim, int classes)
{
	return generate(d, seed, split, NULL, n, dim, classes, false, NULL);
}

int fl_data_labels(struct fl_data *d, uint64_t seed, enum fl_split split,
		   int n, int dim, int classes)
{
	return generate(d, seed, split, NULL, n, dim, classes, true, NULL);
}

int fl_data_generate_at(struct fl_data *d, uint64_t seed,
			enum fl_split split, const int *idx, int n, int dim,
			int classes)
{
	return generate(d, seed, split, idx, n, dim, classes, false, NULL);
}

int fl_data_generate_some(struct fl_data *d, uint64_t seed,
			  enum fl_split split, const int *idx, int n, int dim,
			  int classes, const unsigned char *want)
{
	if (!want) {
		memset(d, 0, sizeof(*d));
		return -EINVAL;
	}
	return generate(d, seed, split, idx, n, dim, classes, false, want);
}

int fl_data_select(struct fl_data *dst, const struct fl_data *src,
		   const int *idx, int n)
{
	size_t dim = (size_t)src->dim;
	int err;

	if (!src->x || src->have)
		return -EINVAL;
	err = data_alloc(dst, n, src->dim, src->classes, false, false);
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
		boost = fl_log(fl_rng_uniform_pos(r)) / a;
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
		u = fl_rng_uniform_pos(r);
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
	FREE_ALL(p->count, p->start, p->idx);
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
	FREE_ALL(owner, bycls, cstart, fill, lg, sh);
	return err;
}

