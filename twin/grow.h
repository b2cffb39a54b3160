/* SPDX-License-Identifier: MIT */
/* Arrays that grow by doubling, one way everywhere. */
#ifndef TWIN_GROW_H
#define TWIN_GROW_H

#include <stddef.h>

/*
 * grow_array - array v (elements of size bytes, *cap of them) with room
 * for element n: *cap doubled from first (at least 1) until it is past
 * n, the new elements zeroed. The array (v itself when it had room), or
 * NULL with v and *cap as they were: out of memory, or more than INT_MAX
 * elements.
 */
void *grow_array(void *v, int *cap, int n, size_t size, int first)
	__attribute__((warn_unused_result));

#endif
