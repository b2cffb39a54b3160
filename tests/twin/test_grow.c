// SPDX-License-Identifier: MIT
/* grow_array: doubling from its first size, new elements zeroed, the
 * array kept when there is room, refused past INT_MAX elements. */
#include <criterion/criterion.h>

#include <limits.h>
#include <stdlib.h>

#include "twin/grow.h"

Test(grow, doubles_zeroes_and_keeps_what_was_there)
{
	int *v = NULL, *w, cap = 0;

	for (int n = 0; n < 100; n++) {
		w = grow_array(v, &cap, n, sizeof(*v), 4);
		cr_assert_not_null(w);
		cr_assert_gt(cap, n);
		/* the first size, then doubling: 4, 8, 16, ... */
		cr_assert_eq(cap & (cap - 1), 0, "cap %d", cap);
		cr_assert_geq(cap, 4);
		cr_assert_eq(w[n], 0, "element %d not zeroed", n);
		for (int i = 0; i < n; i++)
			cr_assert_eq(w[i], i + 1, "element %d lost", i);
		w[n] = n + 1;
		v = w;
	}
	cr_assert_eq(cap, 128);
	/* room: the same array back, nothing moved */
	cr_assert_eq(grow_array(v, &cap, 127, sizeof(*v), 4), v);
	free(v);
}

Test(grow, refuses_past_int_max_and_keeps_the_array)
{
	char *v = malloc(16);
	int cap = 16;

	cr_assert_not_null(v);
	cr_assert_null(grow_array(v, &cap, INT_MAX, 1, 4));
	cr_assert_eq(cap, 16, "cap changed on failure");
	cr_assert_null(grow_array(v, &cap, -1, 1, 4));
	v[15] = 1;	/* still ours */
	free(v);
}
