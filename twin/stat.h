/* SPDX-License-Identifier: MIT */
/* Order statistics of a few doubles, one way everywhere. */
#ifndef TWIN_STAT_H
#define TWIN_STAT_H

/* stat_sort - v[0..n) in ascending order, in place. */
void stat_sort(double *v, int n);

/* stat_median - the median of v[0..n) (n > 0), sorted in place: the mean
 * of the middle two when n is even. */
double stat_median(double *v, int n);

#endif
