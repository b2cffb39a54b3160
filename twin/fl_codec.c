// SPDX-License-Identifier: MIT
/* Wire formats of a model (float32, bfloat16, int8) and its digest (XXH64). See fl.h. */
#include "fl_impl.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

