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
 *
 * With never_slower set in the scenario, mst is never slower than the
 * fixed scheduler's star (every local model straight to the global one
 * over a direct lightpath, as spff places it) on the same network state:
 * while the tasks placed so far have at most SCHED_STAR_CHECK_TRANSFERS
 * transfers (each check predicts the plan so far twice: bounded, so that
 * a plan of many tasks is not quadratic in them), the twin predicts them
 * with the task's trees and with a star in their place, and the task is
 * sent as a star where that ends the rounds placed sooner, summed (the
 * task's own round and the ones it shares links with: the mean a user
 * sees). The scenario's relay setting counts: pipelined relays make trees
 * cheap in time, relays that store add a whole transfer per level.
 */
#include "sched_impl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "predict.h"

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

static int tree_place(struct sched *s, struct task_plan *tp, int ti)
{
	int err = place_terminal_tree(s, tp, ti, &tp->bcast, false,
				      mst_choose);

	return err ? err : place_terminal_tree(s, tp, ti, &tp->up, true,
					       mst_choose);
}

/* Whether task i of p has been placed, while ti is being placed. */
static bool placed(const struct plan *p, int i, int ti)
{
	const struct task_plan *tp = &p->tasks[i];

	return i == ti || (!tp->blocked && tp->bcast.parent[1] >= 0);
}

/* Transfers of the tasks placed so far, ti among them. */
static long placed_transfers(const struct plan *p, int ti)
{
	long n = 0;

	for (int i = 0; i < p->ntasks; i++)
		if (placed(p, i, ti))
			n += 2L * (p->tasks[i].nmodels - 1);
	return n;
}

/* Undo what was placed for tp since mark (its lightpaths past lit). */
static void unplace_since(struct sched *s, struct task_plan *tp, int mark,
			  int lit)
{
	net_rollback(s->net, mark);
	task_unplace(tp);
	tp->lit.n = lit;
}

/*
 * The predicted rounds of the tasks placed so far, summed: the others
 * (not yet placed) are left out of the prediction, and the plan is left
 * as if never predicted. 0, or -errno.
 */
static int placed_rounds(struct plan *p, int ti, double *sum)
{
	bool *out = calloc((size_t)p->ntasks + 1, sizeof(*out));
	int err;

	if (!out)
		return -ENOMEM;
	for (int i = 0; i < p->ntasks; i++) {
		struct task_plan *tp = &p->tasks[i];

		out[i] = !tp->blocked && !placed(p, i, ti);
		tp->blocked = tp->blocked || out[i];
	}
	err = predict_round(p);
	*sum = 0;
	for (int i = 0; i < p->ntasks; i++) {
		struct task_plan *tp = &p->tasks[i];

		if (!err && !tp->blocked)
			*sum += tp->round_s;
		tp->blocked = tp->blocked && !out[i];
	}
	plan_prediction_forget(p);
	free(out);
	return err;
}

static int mst_place(struct sched *s, struct task_plan *tp, int ti)
{
	int mark = net_mark(s->net), lit = tp->lit.n, err;
	double tree, star = NAN;

	err = tree_place(s, tp, ti);
	if (err || !s->sc->never_slower ||
	    placed_transfers(s->plan, ti) > SCHED_STAR_CHECK_TRANSFERS)
		return err;
	/*
	 * A prediction that fails (out of memory, or a bug said as -ELOOP)
	 * leaves the tree, unchecked; a star that cannot be placed, or not
	 * predicted, leaves the tree.
	 */
	if (placed_rounds(s->plan, ti, &tree))
		return 0;
	unplace_since(s, tp, mark, lit);
	err = sched_spff.place(s, tp, ti);
	if (err && err != -ENOSPC)
		return err;
	if (!err && placed_rounds(s->plan, ti, &star))
		star = NAN;
	if (star < tree) {
		tp->shape = "star";
		tp->tree_sum_s = tree;
		tp->star_sum_s = star;
		return 0;
	}
	unplace_since(s, tp, mark, lit);
	tp->why[0] = '\0';
	err = tree_place(s, tp, ti);
	if (!err) {
		tp->shape = "tree";
		tp->tree_sum_s = tree;
		tp->star_sum_s = star;
	}
	return err;
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
