// SPDX-License-Identifier: MIT
/* Pseudo-random numbers (xoshiro256**), and the exp and log they need. See fl.h. */
#include "fl_impl.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Pseudo-random numbers ---------------------------------------------- */


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
double fl_rng_uniform_pos(struct fl_rng *r)
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



/*
 * c[0] x^(n-1) + ... + c[n-1] by Horner's rule, in this order always: the
 * same bits on every machine (no fused multiply-add in ISO C mode).
 * Unrolled (n is a constant where it is used), so that a loop over
 * several x has no loop inside and is made a loop of vectors.
 */
static inline double horner(const double *c, size_t n, double x)
{
	double p = c[0];

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 16
#endif
	for (size_t i = 1; i < n; i++)
		p = p * x + c[i];
	return p;
}

/* exp r = sum r^k / k!, to k = 13: below 1e-17 for |r| <= 0.347 */
static const double exp_taylor[] = {
	1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0,
	1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0,
	1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0,
};

/* atanh f / f = sum f^2k / (2k + 1), to k = 12 (each a constant, rounded
 * as the division would be) */
static const double atanh_series[] = {
	1.0 / 25, 1.0 / 23, 1.0 / 21, 1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13,
	1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1.0,
};

double fl_exp(double x)
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
	p = horner(exp_taylor, sizeof(exp_taylor) / sizeof(*exp_taylor), r);
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

/*
 * log(x 2^e0) for a normal, finite x > 0: x = m * 2^e with m in [sqrt(1/2),
 * sqrt(2)], log m = 2 atanh(f), |f| <= 0.1716: the series to f^25
 * suffices. Without branches, so that a loop of them runs several at once;
 * fl_log and fl_rng_normals share it, so both give the same bits.
 */
static inline double log_normal(double x, int e0)
{
	const double ln2 = 0x1.62e42fefa39efp-1;
	double m, f, f2, s, e;
	uint64_t bits, mb, eb;

	memcpy(&bits, &x, sizeof(bits));
	/*
	 * m = x 2^-e in [1, 2); above sqrt 2 (bits 0x3ff6a09e667f3bcd) it is
	 * halved and e is one more. In integers, so that a loop of these
	 * has no branch (a halving that could trap would be one): the
	 * exponent's field as a double is 2^52 + field, less 2^52, exactly.
	 */
	mb = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
	eb = bits >> 52;
	if (mb > 0x3ff6a09e667f3bcdULL) {
		mb -= 1ULL << 52;
		eb++;
	}
	eb |= 0x4330000000000000ULL;
	memcpy(&m, &mb, sizeof(m));
	memcpy(&e, &eb, sizeof(e));
	e = e - 0x1p52 - 1023.0 + (double)e0;
	f = (m - 1.0) / (m + 1.0);
	f2 = f * f;
	s = horner(atanh_series, sizeof(atanh_series) / sizeof(*atanh_series),
		   f2);
	return e * ln2 + 2.0 * f * s;
}

double fl_log(double x)
{
	if (x != x || x < 0)
		return NAN;
	if (x == 0)
		return -HUGE_VAL;
	if (x == HUGE_VAL)
		return x;
	if (x < 0x1p-1022)	/* subnormal: make it normal first */
		return log_normal(x * 0x1p54, -54);
	return log_normal(x, 0);
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

/*
 * The same numbers as n calls of fl_rng_normal, in two passes: the
 * uniforms drawn and the pairs accepted first (cheap, branchy), then the
 * logarithms and roots of a block of pairs in a loop without branches,
 * which the CPU (or the compiler's vectors) runs several at a time. Every
 * value goes through the same operations in the same order.
 */
FL_CLONES
void fl_rng_normals(struct fl_rng *r, double *out, size_t n)
{
	enum { BLOCK = 64 };
	double u[BLOCK], v[BLOCK], f[BLOCK];

	if (n && r->has_spare) {
		r->has_spare = false;
		*out++ = r->spare;
		n--;
	}
	while (n) {
		size_t pairs = (n + 1) / 2, whole, k;

		if (pairs > BLOCK)
			pairs = BLOCK;
		for (k = 0; k < pairs; k++) {
			double a, b, q;

			do {
				a = 2.0 * fl_rng_uniform(r) - 1.0;
				b = 2.0 * fl_rng_uniform(r) - 1.0;
				q = a * a + b * b;
			} while (q >= 1.0 || q == 0.0);
			u[k] = a;
			v[k] = b;
			f[k] = q;	/* 2^-104 <= q < 1: normal */
		}
		for (k = 0; k < pairs; k++)
			f[k] = sqrt(-2.0 * log_normal(f[k], 0) / f[k]);
		whole = n / 2 < pairs ? n / 2 : pairs;
		for (k = 0; k < whole; k++) {
			out[2 * k] = u[k] * f[k];
			out[2 * k + 1] = v[k] * f[k];
		}
		out += 2 * whole;
		n -= 2 * whole;
		if (whole < pairs) {	/* n was odd: the last pair's second kept */
			*out = u[whole] * f[whole];
			r->spare = v[whole] * f[whole];
			r->has_spare = true;
			n = 0;
		}
	}
}
