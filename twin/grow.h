/* SPDX-License-Identifier: MIT */
/* Arrays that grow by doubling, and blocks freed together, one way everywhere. */
#ifndef TWIN_GROW_H
#define TWIN_GROW_H

#include <stddef.h>
#include <stdlib.h>

/*
 * grow_array - array v (elements of size bytes, *cap of them) with room
 * for element n: *cap doubled from first (at least 1) until it is past
 * n, the new elements zeroed. The array (v itself when it had room), or
 * NULL with v and *cap as they were: out of memory, or more than INT_MAX
 * elements.
 */
void *grow_array(void *v, int *cap, int n, size_t size, int first)
	__attribute__((warn_unused_result));

/* free_each - free each of the n blocks p[0..n-1] (NULL ones too, as free). */
static inline void free_each(void *const *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i]);
}

/* FREE_ALL(a, b, ...) - free(a); free(b); ... in that order. */
#define FREE_ALL(...) \
	free_each((void *const[]){ __VA_ARGS__ }, \
		  sizeof((void *const[]){ __VA_ARGS__ }) / sizeof(void *))

#endif
