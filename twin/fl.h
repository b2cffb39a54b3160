/* SPDX-License-Identifier: MIT */
/*
 * Real learning for the federated-learning tasks: a data set the project
 * generates, its non-IID split across the local models, the model they
 * train, the weighted averaging the aggregation tree performs, and the
 * bytes a model occupies on the wire. Pure and deterministic: no I/O, no
 * clock, no kernel calls, no global state; every random choice comes from
 * a seed the caller passes.
 *
 * Determinism. The generator is our own (xoshiro256** seeded through
 * splitmix64), Gaussians come from the Marsaglia polar form of Box-Muller,
 * and the only transcendental functions (exp, log) are our own, built from
 * + - * / and exact bit operations; the one libm call is sqrt, which IEEE
 * 754 requires to be correctly rounded. Loops have a fixed order. So data,
 * partitions, training and digests are bit-identical run to run and from
 * machine to machine, provided doubles and floats are IEEE 754 evaluated
 * at their own precision (FLT_EVAL_METHOD 0: x86-64 SSE, aarch64; not
 * 32-bit x87) and a*b+c is not fused: GCC does not contract in ISO mode
 * (-std=c17), clang is told not to in fl.c. The tests pin golden digests
 * of a data set and of a trained model, so a change that breaks
 * reproducibility of earlier experiments fails them (the same digests
 * come out of GCC -O0 to -O3 and clang -O2 -march=native).
 *
 * Typical worker, one task, k local models, client c:
 *
 *	fl_shape_for(parameters / scale, FL_CLASSES, &dim);
 *	fl_data_generate(&pool, fl_seed_derive(seed, task), FL_SPLIT_TRAIN,
 *			 n, dim, FL_CLASSES);
 *	fl_partition_init(&part, &pool, k, FL_ALPHA, seed2);
 *	fl_data_select(&mine, &pool, part.idx + part.start[c],
 *		       part.count[c]);
 *	each round: decode the global model, fl_train(...) on mine, encode;
 *	the FedAvg weight of the upload is part.count[c].
 */
#ifndef TWIN_FL_H
#define TWIN_FL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- Pseudo-random numbers ---------------------------------------------- */

/*
 * xoshiro256** (Blackman and Vigna 2018): small, fast, and defined by a
 * dozen lines, so the sequence does not depend on a libc's rand().
 */
struct fl_rng {
	uint64_t s[4];
	double spare;		/* second Gaussian of the last pair */
	bool has_spare;
};

/* fl_rng_seed - state from splitmix64(seed); every seed is usable. */
void fl_rng_seed(struct fl_rng *r, uint64_t seed);
uint64_t fl_rng_next(struct fl_rng *r);
/* Uniform in [0, 1), 53 bits. */
double fl_rng_uniform(struct fl_rng *r);
/*
 * Uniform integer in [0, n), n >= 1, by Lemire's multiply-shift on 32
 * bits: biased by at most n / 2^32, which no test here can see, and free
 * of rejection loops.
 */
uint32_t fl_rng_below(struct fl_rng *r, uint32_t n);
/* Standard normal (Marsaglia polar method; pairs, the spare is kept). */
double fl_rng_normal(struct fl_rng *r);
/* fl_rng_normals - n of them into out: what n calls would give, faster. */
void fl_rng_normals(struct fl_rng *r, double *out, size_t n);

/*
 * fl_seed_derive - an independent seed for a named sub-stream (a task, a
 * client, a round, a sample): splitmix64's finalizer over seed and tag.
 * Different tags give unrelated sequences: two streams meet only if two
 * 64-bit seeds collide.
 */
uint64_t fl_seed_derive(uint64_t seed, uint64_t tag);

/* ---- Data --------------------------------------------------------------- */

/*
 * A synthetic classification set: `classes` classes drawn uniformly,
 * features from a class-conditional Gaussian
 *
 *	x = (mu_y + z) / sqrt(dim),  z ~ N(0, I),
 *	mu_c ~ N(0, FL_DATA_SEPARATION^2 / dim * I), drawn once from the seed.
 *
 * Means drawn with variance s^2/dim keep the distance between two class
 * means near s*sqrt(2) whatever dim, so how hard the task is does not
 * depend on the model size the scenario asks for; classes overlap, so no
 * model reaches 100 % and accuracy climbs over training. The 1/sqrt(dim)
 * makes |x| about 1, so one learning rate suits every dim.
 *
 * Sample i is generated from its own sub-stream of (seed, split, i): a
 * larger set extends a smaller one with the same seed (prefix-stable), and
 * the test split is a held-out sample of the very same distribution (the
 * class means depend on seed, dim and classes, not on split or n).
 *
 * Separation 3 puts the best held-out accuracy near 0.88 for 10 classes
 * (measured at dim 32 and 99): high enough to see learning, low enough
 * that rounds keep mattering.
 */
#define FL_DATA_SEPARATION 3.0

enum fl_split {
	FL_SPLIT_TRAIN,
	FL_SPLIT_TEST,
};

struct fl_data {
	int n, dim, classes;
	float *x;		/* n rows of dim features, row-major */
	int *y;			/* n labels in [0, classes) */
	unsigned char *have;	/* NULL: every row's features are made;
				 * else only those of rows i with have[i] */
};

/*
 * fl_data_generate - fill d with n samples (see above). Returns 0, -EINVAL
 * (n < 1, dim < 1, classes < 2, or n * dim beyond memory's reach) or
 * -ENOMEM. On failure d is empty and fl_data_release is harmless.
 */
int fl_data_generate(struct fl_data *d, uint64_t seed, enum fl_split split,
		     int n, int dim, int classes)
	__attribute__((warn_unused_result));

/*
 * fl_data_labels - as fl_data_generate, the labels only (d->x is NULL):
 * all a partition needs, at a small part of the cost.
 */
int fl_data_labels(struct fl_data *d, uint64_t seed, enum fl_split split,
		   int n, int dim, int classes)
	__attribute__((warn_unused_result));

/*
 * fl_data_generate_at - d gets samples idx[0..n) of the set
 * fl_data_generate makes, in that order, bit for bit, without making the
 * others (a client's share). 0, -EINVAL (as above, or an index < 0),
 * -ENOMEM.
 */
int fl_data_generate_at(struct fl_data *d, uint64_t seed,
			enum fl_split split, const int *idx, int n, int dim,
			int classes)
	__attribute__((warn_unused_result));

/*
 * fl_data_generate_some - as fl_data_generate_at, every label but only the
 * features of the rows i with want[i] set (d->have a copy of want), the
 * others never written nor read: a worker that trains on a few of its
 * samples makes those alone (fl_train_rows says which). fl_train refuses a
 * row it lacks, fl_evaluate and fl_data_select such a set. 0, -EINVAL (as
 * fl_data_generate_at, or want NULL), -ENOMEM.
 */
int fl_data_generate_some(struct fl_data *d, uint64_t seed,
			  enum fl_split split, const int *idx, int n, int dim,
			  int classes, const unsigned char *want)
	__attribute__((warn_unused_result));

/*
 * fl_data_select - dst gets copies of src's samples idx[0..n), in that
 * order (a client's share of a partition). 0, -EINVAL (n < 1, an index
 * out of range, or src has labels only or some rows' features only),
 * -ENOMEM.
 */
int fl_data_select(struct fl_data *dst, const struct fl_data *src,
		   const int *idx, int n)
	__attribute__((warn_unused_result));

/*
 * fl_alloc_whole - len bytes that are to be written whole next, faulted in
 * at once (where a page's first store traps, on a paravirtualised host
 * that trap costs more than the page's arithmetic) and, from 2 MiB up, in
 * 2 MiB pages where the kernel gives them (8 MiB took 16 ms to fault in as
 * 4 KiB pages, 2.3-3.7 ms so). Released with free(); NULL when out of
 * memory.
 */
void *fl_alloc_whole(size_t len);

/* fl_data_release - free the arrays; d may be NULL or already released. */
void fl_data_release(struct fl_data *d);

/* ---- Non-IID partition -------------------------------------------------- */

/*
 * Label skew after Hsu, Qi and Brown 2019 ("Measuring the effects of
 * non-identical data distribution", arXiv 1909.06335): for every class,
 * proportions p ~ Dirichlet(alpha, ..., alpha) over the clients, and that
 * class's samples (in a seeded random order) are dealt out in those
 * proportions, rounded by largest remainder. Small alpha gives each client
 * few classes and very unequal sizes (0.1: two to four classes make up a
 * client), large alpha tends to an IID split. Mean total-variation
 * distance between a client's label mix and the global one, measured on
 * 2000 samples and 10 clients: 0.38 at alpha 0.5, 0.014 at 1000.
 * A client left empty then takes one sample from the largest client, so
 * every client has at least one and FedAvg weights are never zero.
 *
 * FL_ALPHA is the value used in the FL literature for "moderately non-IID".
 */
#define FL_ALPHA 0.5

struct fl_partition {
	int nclients;
	int n;			/* samples partitioned */
	int *count;		/* per client: samples, its FedAvg weight */
	int *start;		/* per client: first entry in idx */
	int *idx;		/* n sample indices, client by client,
				 * ascending within a client */
};

/*
 * fl_partition_init - split d among nclients. Returns 0, -EINVAL
 * (nclients < 1, more clients than samples, alpha not finite and > 0),
 * -ENOMEM. On failure p is empty.
 */
int fl_partition_init(struct fl_partition *p, const struct fl_data *d,
		      int nclients, double alpha, uint64_t seed)
	__attribute__((warn_unused_result));
void fl_partition_release(struct fl_partition *p);

/* ---- Model -------------------------------------------------------------- */

/*
 * Multinomial logistic regression: logits = W x + b, softmax,
 * cross-entropy. All parameters are one contiguous float32 vector of
 * nparams = classes * (dim + 1): W row-major (classes rows of dim), then b.
 * That vector is exactly what travels between the models, so its length is
 * the scenario's parameter count and no other state exists to synchronise.
 */
#define FL_CLASSES 10		/* classes a worker uses unless told */
#define FL_INIT_STD 0.01	/* stddev of the seeded initial parameters */

struct fl_model {
	int classes, dim;
	size_t nparams;
	float *w;		/* nparams: W then b */
};

static inline size_t fl_nparams(int classes, int dim)
{
	return (size_t)classes * ((size_t)dim + 1);
}

/*
 * fl_shape_for - the dim whose nparams is closest to `params` for this many
 * classes: dim + 1 = params / classes rounded half up (so a tie takes the
 * larger model), at least 1. |nparams - params| <= classes / 2 whenever
 * params >= 2 * classes; smaller requests get dim 1 (nparams = 2 * classes).
 * Returns 0, or -EINVAL (classes < 2) or -EOVERFLOW (dim would not fit an
 * int).
 */
int fl_shape_for(uint64_t params, int classes, int *dim)
	__attribute__((warn_unused_result));

/*
 * fl_model_init - allocate a model; parameters ~ N(0, FL_INIT_STD^2) from
 * seed. Not zero: a zero model would make the first broadcast a run of
 * zero bytes and every client's first gradient step identical in shape.
 * Returns 0, -EINVAL (classes < 2, dim < 1) or -ENOMEM.
 */
int fl_model_init(struct fl_model *m, int classes, int dim, uint64_t seed)
	__attribute__((warn_unused_result));
void fl_model_release(struct fl_model *m);

/* fl_predict - the class with the largest logit (lowest index on ties). */
int fl_predict(const struct fl_model *m, const float *x);

/*
 * fl_train - plain mini-batch SGD on mean cross-entropy, lr the step size,
 * for exactly `samples` samples (epochs * d->n for whole epochs). Each pass
 * over d visits it in a fresh order drawn from (seed, pass); batches are
 * consecutive runs of `batch` samples of that order, the last one of a pass
 * (or of the budget) shorter. Gradients are accumulated in double, the
 * model stays float32. Returns the samples processed (== samples), or
 * -EINVAL (shape mismatch, batch < 1, samples < 0, lr not finite and > 0),
 * -ENODATA (a row it reached is one d lacks: fl_data_generate_some; the
 * model is then partly trained) or -ENOMEM.
 *
 * FL_LR and FL_BATCH are the values the tests measure with. On n 2000,
 * dim 32, 10 classes, from the seeded start (loss 2.30, accuracy 0.12),
 * held-out loss after epochs 1-4 is 0.92 0.65 0.55 0.51 and accuracy
 * 0.86 0.87 0.88 0.87: the class overlap caps it near 0.88. FedAvg over 5
 * clients at FL_ALPHA, one local epoch a round: 0.52 0.77 0.81 0.84 0.86
 * after rounds 1-5. A larger dim needs more samples (dim 999 on 5000:
 * 0.71 after 4 epochs).
 */
#define FL_LR 1.0
#define FL_BATCH 16

/*
 * fl_lr_for - the step size for a model of `dim` features: FL_LR up to dim
 * 32, FL_LR x dim / 32 above. Features are scaled by 1/sqrt(dim), so the
 * part of a sample that tells the classes apart shrinks as 1/sqrt(dim)
 * while its noise keeps |x| near 1; a step that grows with dim keeps the
 * progress per sample near what dim 32 makes. Measured, FedAvg over 3
 * clients at FL_ALPHA with 200 samples each and 640 training samples a
 * round, dim 624: accuracy after rounds 1-6 is 0.12 0.47 0.40 0.51 0.56
 * 0.55 (with FL_LR: 0.09 throughout).
 */
static inline double fl_lr_for(int dim)
{
	return dim > 32 ? FL_LR * dim / 32.0 : FL_LR;
}

int64_t fl_train(struct fl_model *m, const struct fl_data *d, int64_t samples,
		 int batch, double lr, uint64_t seed)
	__attribute__((warn_unused_result));

/*
 * fl_train_rows - mark[i] = 1 for every row i of a set of n rows that
 * fl_train(m, d, samples, batch, lr, seed) visits (whatever batch and lr;
 * other marks are left as they are): all rows when samples >= n, else the
 * first `samples` of its first pass's order. 0, or -EINVAL (n < 1,
 * samples < 0).
 */
int fl_train_rows(int n, int64_t samples, uint64_t seed, unsigned char *mark);

/*
 * fl_evaluate - mean cross-entropy (nats) and accuracy (fraction right) of
 * m on d. Either output may be NULL. 0, -EINVAL (shape mismatch, or d
 * made by fl_data_generate_some), -ENOMEM.
 */
int fl_evaluate(const struct fl_model *m, const struct fl_data *d,
		double *loss, double *accuracy)
	__attribute__((warn_unused_result));

/*
 * Compute cost. One training sample costs 2 * nparams multiply-adds (the
 * logits, then the gradient) plus `classes` exponentials; everything else
 * is per batch. twin/ never measures time: a worker that wants to spend
 * the scenario's work_core_s times its rate (multiply-adds per core-second,
 * measured once by timing fl_train) asks fl_samples_for_work how many
 * samples that is.
 */
static inline double fl_sample_cost(const struct fl_model *m)
{
	return 2.0 * (double)m->nparams;
}

/*
 * fl_samples_for_work - floor(work_core_s * madds_per_core_s / cost), the
 * training budget for fl_train; 0 for no work. -EINVAL for a negative or
 * non-finite argument.
 */
int64_t fl_samples_for_work(const struct fl_model *m, double work_core_s,
			    double madds_per_core_s);

/* ---- Aggregation -------------------------------------------------------- */

/*
 * FedAvg (McMahan et al. 2017): the global model is the mean of the local
 * models weighted by their sample counts. The accumulator holds the
 * weighted sum in double and the total weight.
 *
 * Trees. A node of an aggregation tree adds its own update (weight: its
 * sample count) and each child's aggregate, then forwards the mean
 * (fl_agg_finish, float32) and the total weight (agg.weight) upstream;
 * the parent adds that mean with that weight like any update, since
 * w1 m1 + w2 m2 = (w1 + w2) m. The weight travels beside the payload (it
 * is not part of the fl_encode bytes, which must stay exactly the
 * scenario's model size). Sample counts are exact in a double.
 *
 * Tolerance. Each hop rounds the mean to float32 once (relative 2^-24);
 * weighted means are convex, so errors never grow past the hop that made
 * them: the root differs from the exact weighted mean of the local models
 * by at most depth * 2^-24 * max_i |w_i[j]| per parameter j (plus double
 * rounding, ~1e-16), and from the float32 flat mean by at most
 * (depth + 1) * 2^-24 * max_i |w_i[j]|. FL_AGG_TOL bounds both for any
 * tree up to depth 160; the tests check both on stars, chains and random
 * trees of 2..16 clients.
 */
#define FL_AGG_TOL 1e-5

struct fl_agg {
	size_t nparams;
	double *sum;		/* sum of weight * w */
	double weight;		/* total weight added */
	int count;		/* updates added */
};

/* fl_agg_init - an empty accumulator. 0, -EINVAL (nparams 0), -ENOMEM. */
int fl_agg_init(struct fl_agg *a, size_t nparams)
	__attribute__((warn_unused_result));
/* fl_agg_reset - empty it again for the next round, keeping the memory. */
void fl_agg_reset(struct fl_agg *a);
/*
 * fl_agg_add - add weight * w. 0, or -EINVAL for a weight that is not
 * finite and > 0 (a zero-weight update carries no information and would
 * make an empty subtree look like a contribution).
 */
int fl_agg_add(struct fl_agg *a, const float *w, double weight)
	__attribute__((warn_unused_result));
/* fl_agg_finish - mean = sum / weight, in float32. 0 or -ENODATA if empty. */
int fl_agg_finish(const struct fl_agg *a, float *mean)
	__attribute__((warn_unused_result));
void fl_agg_release(struct fl_agg *a);

/*
 * fl_mean_range - parameters [lo, hi) of the weighted mean of the models
 * w[0..n) with weights wt[0..n), into mean[lo..hi) (mean may be w[0]): the
 * same sums in the same order as fl_agg_add of each in turn and then
 * fl_agg_finish, so the same bits, a range at a time (an aggregator that
 * streams its mean up chunk by chunk). 0, -ENODATA (n 0) or -EINVAL (a
 * weight fl_agg_add refuses).
 */
int fl_mean_range(const float *const *w, const double *wt, int n, size_t lo,
		  size_t hi, float *mean) __attribute__((warn_unused_result));

/* ---- Wire encoding ------------------------------------------------------ */

/*
 * A parameter vector on the wire, in the scenario's bytes_per_parameter:
 *
 *	8  IEEE binary64, little-endian; decodes by rounding to float32,
 *	   so a float32 model round-trips exactly
 *	4  IEEE binary32, little-endian; exact
 *	2  bfloat16 (the top half of binary32), round to nearest even,
 *	   NaN kept a NaN; relative error <= 2^-8 for normal values
 *	1  int8, symmetric: a 4-byte binary32 LE scale s = max|w| / 127
 *	   first, then q = round-half-even(w / s) in [-127, 127] as two's
 *	   complement bytes; w = q * s, error <= s / 2. The only format with
 *	   a header: nparams + 4 bytes.
 *
 * Other sizes (3, 5-7, 9-16, which the scenario format admits) are
 * rejected with -EINVAL: there is no standard number format for them, and
 * inventing padding would claim a precision that does not exist.
 * fl_wire_supported lets a caller refuse such a task before starting.
 */
bool fl_wire_supported(unsigned bytes_per_parameter);

/* fl_wire_size - encoded bytes for nparams parameters; 0 if unsupported. */
size_t fl_wire_size(size_t nparams, unsigned bytes_per_parameter);

/*
 * fl_encode - w[0..nparams) into buf, which must be exactly
 * fl_wire_size(nparams, bpp) bytes. 0, -EINVAL (unsupported size; for
 * int8 a non-finite parameter), -EMSGSIZE (len is not that size).
 */
int fl_encode(const float *w, size_t nparams, unsigned bytes_per_parameter,
	      void *buf, size_t len)
	__attribute__((warn_unused_result));

/*
 * fl_decode - the inverse, into w[0..nparams). 0, -EINVAL (unsupported
 * size), -EMSGSIZE (len is not fl_wire_size), -EBADMSG (int8 scale not
 * finite and >= 0).
 */
int fl_decode(const void *buf, size_t len, unsigned bytes_per_parameter,
	      float *w, size_t nparams)
	__attribute__((warn_unused_result));

/*
 * fl_digest - XXH64 with seed 0 (Collet, xxHash spec) of len bytes: fast
 * (8 bytes per step, four lanes), any single changed byte changes it, and
 * it is the standard algorithm, so `xxhsum -H1` over a dumped payload gives
 * the same number for an independent check.
 */
uint64_t fl_digest(const void *buf, size_t len);

#endif
