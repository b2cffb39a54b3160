/* SPDX-License-Identifier: MIT */
/*
 * What the learning files (fl_rng.c, fl_data.c, fl_model.c, fl_codec.c)
 * share and nobody else uses: exact helpers, our own exp and log, and the
 * floating-point contract every one of them is compiled under.
 */
#ifndef TWIN_FL_IMPL_H
#define TWIN_FL_IMPL_H

#include <stdint.h>
#include <string.h>

#include "fl.h"

/*
 * Bit-identical results need a*b+c rounded twice, as written. GCC does not
 * contract in ISO mode; clang does unless told (it would fuse on aarch64).
 */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/*
 * A function that is also made for AVX2, used where the CPU has it:
 * 256-bit vectors, the same operations on each element in the same
 * order, so the same bits (no multiply-add is fused: -ffp-contract is
 * off for the files that use it).
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FL_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define FL_CLONES
#endif

static inline uint64_t rotl64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

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

/* Sub-stream tags; fixed forever, or old experiments stop reproducing. */
enum {
	TAG_MEANS = 1,
	TAG_TRAIN = 2,
	TAG_TEST = 3,
	TAG_MODEL = 4,
	TAG_SHUFFLE = 5,
	TAG_PARTITION = 6,
};

/*
 * libm's exp and log are faithfully rounded at best and differ between
 * libm versions in the last bit, which would make data and models differ
 * between machines. These use only + - * / and exact scaling by powers of
 * two, so they round the same everywhere; they are accurate to a few ulp,
 * far more than learning needs.
 */
double fl_exp(double x);
double fl_log(double x);

/* Uniform in (0, 1]: never 0, so its log is finite. */
double fl_rng_uniform_pos(struct fl_rng *r);

#endif
