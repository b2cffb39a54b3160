// SPDX-License-Identifier: MIT
/* Order statistics; see stat.h. */
#include "stat.h"

#include <stdlib.h>

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void stat_sort(double *v, int n)
{
	if (n > 1)
		qsort(v, (size_t)n, sizeof(*v), by_value);
}

double stat_median(double *v, int n)
{
	stat_sort(v, n);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
