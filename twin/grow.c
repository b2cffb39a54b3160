// SPDX-License-Identifier: MIT
#include "grow.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *grow_array(void *v, int *cap, int n, size_t size, int first)
{
	long c = *cap > 0 ? *cap : 0;
	char *m;

	if (n < 0)
		return NULL;
	if (n < c)
		return v;
	if (c == 0)
		c = first > 0 ? first : 1;
	while (c <= n)
		c *= 2;
	if (c > INT_MAX || (size_t)c > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	m = realloc(v, (size_t)c * size);
	if (!m)
		return NULL;
	memset(m + (size_t)*cap * size, 0, (size_t)(c - *cap) * size);
	*cap = (int)c;
	return m;
}
