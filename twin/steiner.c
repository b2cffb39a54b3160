// SPDX-License-Identifier: MIT
/*
 * Trees over terminals on the auxiliary graph: the minimum spanning tree
 * of their metric closure, exactly (a search from each, Prim on the full
 * closure) or through one multi-source search (the boundary graph of
 * their Voronoi regions, search_voronoi; Mehlhorn 1988). The tree
 * heuristics of the Steiner problem belong here.
 */
#include "sched_impl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* Prim on a dense k x k matrix, rooted at 0. */
static int prim(const double *m, int k, int *parent, int *order,
		double *weight)
{
	double *best = malloc((size_t)k * sizeof(*best));
	bool *in = calloc((size_t)k, sizeof(*in));
	int err = 0;

	if (!best || !in) {
		err = -ENOMEM;
		goto out;
	}
	*weight = 0;
	for (int i = 0; i < k; i++) {
		best[i] = m[i];
		parent[i] = i ? 0 : -1;
	}
	in[0] = true;
	order[0] = 0;
	for (int n = 1; n < k; n++) {
		int pick = -1;

		for (int i = 0; i < k; i++)
			if (!in[i] && (pick < 0 || best[i] < best[pick]))
				pick = i;
		if (!isfinite(best[pick])) {
			err = -ENOSPC;
			goto out;
		}
		in[pick] = true;
		order[n] = pick;
		*weight += best[pick];
		for (int i = 0; i < k; i++)
			if (!in[i] && m[(long)pick * k + i] < best[i]) {
				best[i] = m[(long)pick * k + i];
				parent[i] = pick;
			}
	}
out:
	free(best);
	free(in);
	return err;
}

int terminal_mst(struct sched *s, const int *term, int k, double demand,
		 bool exact, int *parent, int *order, double *weight)
{
	double *m = malloc((size_t)k * k * sizeof(*m));
	int err = 0;

	if (!m)
		return -ENOMEM;
	for (long i = 0; i < (long)k * k; i++)
		m[i] = INFINITY;
	for (int i = 0; i < k; i++)
		m[(long)i * k + i] = 0;
	if (exact) {
		for (int i = 0; i < k && !err; i++) {
			err = search(s, &term[i], 1, -1, S_AUX, false, -1,
				     demand);
			for (int j = 0; j < k && !err; j++)
				if (j != i)
					m[(long)i * k + j] =
						search_dist(s, term[j]);
		}
		/* the closure is symmetric; keep it exactly so */
		for (int i = 0; i < k; i++)
			for (int j = 0; j < i; j++) {
				double d = fmin(m[(long)i * k + j],
						m[(long)j * k + i]);

				m[(long)i * k + j] = m[(long)j * k + i] = d;
			}
	} else {
		err = search_voronoi(s, term, k, demand, m);
	}
	if (!err)
		err = prim(m, k, parent, order, weight);
	free(m);
	return err;
}
