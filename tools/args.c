// SPDX-License-Identifier: MIT
#include "tools/args.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s || strspn(s, "0123456789") != strlen(s))
		return -EINVAL;
	for (; *s; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	if (v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_real(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	/* what strtod reads beyond plain numbers: hex, inf, nan, space */
	if (!*s || strspn(s, "0123456789.eE+-") != strlen(s) ||
	    !((s[0] >= '0' && s[0] <= '9') ||
	      (s[0] == '.' && s[1] >= '0' && s[1] <= '9')))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || !(v >= min && v <= max))
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_dilation(const char *s, double max, double *n, bool *auto_n)
{
	*auto_n = !strncmp(s, "auto", 4);
	*n = 0;
	if (*auto_n && !s[4])
		return 0;
	if (*auto_n) {
		if (s[4] != ':')
			return -EINVAL;
		s += 5;
	}
	return parse_real(s, 1, max, n);
}
