// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the numbers a user writes (tools/args.h: --rounds,
 * --dilation, an experiment's numbers): a string is accepted only if it is
 * what it claims — plain digits that print back the same, a finite number
 * in range — and nothing crashes. Seed corpus: tests/fuzz/args/.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[64], back[32];
	uint64_t u;
	double d;
	bool a;

	if (size >= sizeof(s))
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (!parse_uint(s, 0, UINT64_MAX, &u)) {
		const char *z = s;

		while (z[0] == '0' && z[1])
			z++;
		snprintf(back, sizeof(back), "%" PRIu64, u);
		if (strcmp(back, z))
			abort();
	}
	if (!parse_uint(s, 5, 10, &u) && (u < 5 || u > 10))
		abort();
	if (!parse_real(s, -1, 1e6, &d) &&
	    (!isfinite(d) || d < -1 || d > 1e6 || s[0] == ' '))
		abort();
	if (!parse_dilation(s, 10000, &d, &a) &&
	    !(a && d == 0 && !strcmp(s, "auto")) && !(d >= 1 && d <= 10000))
		abort();
	return 0;
}
