// SPDX-License-Identifier: MIT
/*
 * Tree schedulers over the auxiliary graphs: mst and kmb (and sched_tm.c).
 *
 * Flexible scheduler: for each procedure (broadcast, then upload) an MST
 * over the task's servers on the metric closure of the auxiliary graph of
 * the moment, rooted at the global model. Each tree edge is then routed on
 * the current state — after the edges before it — so it reuses the
 * lightpaths the task has just lit where they have room, and lights new
 * ones by first fit only over bare fibre. The upload tree is computed
 * after the broadcast tree is in place, so it sees the reverse capacity of
 * the lightpaths the broadcast lit as cheap. Models with children in the
 * upload tree aggregate.
 */
#include "sched_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int place_terminal_tree(struct sched *s, struct task_plan *tp, int ti,
			struct tree *t, bool upload,
			int (*choose)(struct sched *s, const int *term, int k,
				      double demand, int *parent, int *order))
{
	int k = tp->nmodels, err;
	int *parent = malloc((size_t)k * sizeof(*parent));
	int *order = malloc((size_t)k * sizeof(*order));

	if (!parent || !order) {
		err = -ENOMEM;
		goto out;
	}
	err = choose(s, tp->server, k, tp->task->demand_gbps, parent, order);
	if (err == -ENOSPC)
		snprintf(tp->why, sizeof(tp->why),
			 "the %s auxiliary graph does not connect the task's "
			 "servers", upload ? "upload" : "broadcast");
	if (err)
		goto out;
	/* root outwards, so each edge sees the edges placed before it */
	for (int i = 1; i < k && !err; i++) {
		int m = order[i], p = parent[m];
		int a = tp->server[upload ? m : p], b = tp->server[upload ? p : m];

		t->parent[m] = p;
		err = route_edge(s, tp, ti, a, b, &t->path[m]);
	}
out:
	free(parent);
	free(order);
	return err;
}

/* The MST of the closure, through one multi-source search (Mehlhorn). */
static int mst_choose(struct sched *s, const int *term, int k, double demand,
		      int *parent, int *order)
{
	double weight;

	return terminal_mst(s, term, k, demand, false, parent, order, &weight);
}

static int mst_place(struct sched *s, struct task_plan *tp, int ti)
{
	int err = place_terminal_tree(s, tp, ti, &tp->bcast, false,
				      mst_choose);

	return err ? err : place_terminal_tree(s, tp, ti, &tp->up, true,
					       mst_choose);
}

static int kmb_place(struct sched *s, struct task_plan *tp, int ti)
{
	int err = place_terminal_tree(s, tp, ti, &tp->bcast, false,
				      terminal_kmb);

	return err ? err : place_terminal_tree(s, tp, ti, &tp->up, true,
					       terminal_kmb);
}

/*
 * Kou-Markowsky-Berman: the same auxiliary graphs and the same routing of
 * each edge as mst, only the tree differs — the MST of the subgraph the
 * closure's shortest paths span, so terminals whose paths share a stretch
 * hang from the one that reaches it first.
 */
const struct sched_ops sched_kmb = {
	.name = "kmb",
	.help = "Steiner baseline: Kou-Markowsky-Berman trees on the "
		"auxiliary graphs, routed as mst",
	.role = "Steiner heuristic",
	.baseline = false,
	.place = kmb_place,
};

const struct sched_ops sched_mst = {
	.name = "mst",
	.help = "flexible: MST over G and the Li on the auxiliary graphs, "
		"aggregation at the tree's middle nodes",
	.role = "flexible",
	.baseline = false,
	.place = mst_place,
};
