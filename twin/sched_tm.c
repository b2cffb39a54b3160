// SPDX-License-Identifier: MIT
/*
 * Takahashi-Matsuyama (1980): a tree grown from the global model, each
 * step joining the terminal nearest to anything the tree already holds —
 * its servers and every router and ROADM its paths cross — on the
 * auxiliary graph of the moment. A terminal joined at a node some path
 * crosses hangs from a model of the tree at that node's site (a router or
 * its ROADM), which can relay where a router cannot, else from the model
 * that path belongs to: in the broadcast the one who sends through that
 * node, in the upload the one whose update goes through it, which then
 * aggregates the newcomer's before the shared stretch (hung from the
 * receiver instead, every update crossed the stretch on its own and,
 * past a lightpath's room, lit another: a star's upload). Its edge is
 * routed as mst routes one (route_edge), so it reuses the stretch it
 * shares. Broadcast, then upload, as mst. The scheduler tm, which keeps
 * these trees unless mst's weigh less, is in sched_mst.c with kmb and svi.
 */
#include "sched_impl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The nodes path pp crosses, ROADMs inside its lightpaths too, as model m's. */
static void own_path(const struct sched *s, const struct ppath *pp, int m,
		     int *owner)
{
	int at = pp->from;

	for (int h = 0; h < pp->nhops; h++) {
		const struct hop *x = &pp->hops[h];

		if (owner[at] < 0)
			owner[at] = m;
		if (x->kind == HOP_LIGHTPATH) {
			const struct lightpath *lp = &s->net->lp[x->idx];

			for (int f = 0; f < lp->nfib; f++) {
				const struct scn_fibre *fb =
					&s->sc->fibres[lp->fib[f]];

				if (owner[fb->a] < 0)
					owner[fb->a] = m;
				if (owner[fb->b] < 0)
					owner[fb->b] = m;
			}
		}
		at = hop_next(s->plan, at, x);
	}
}

static int tm_tree(struct sched *s, struct task_plan *tp, int ti,
		   struct tree *t, bool upload)
{
	int k = tp->nmodels, n = s->n, err = 0;
	int *owner = malloc((size_t)n * sizeof(*owner));
	int *srcs = malloc((size_t)n * sizeof(*srcs));
	int *at = malloc((size_t)n * sizeof(*at));	/* router -> model */
	bool *in = calloc((size_t)k, sizeof(*in));

	if (!owner || !srcs || !at || !in) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++)
		owner[i] = at[i] = -1;
	owner[tp->server[0]] = 0;
	at[s->sc->nodes[tp->server[0]].attach] = 0;
	in[0] = true;
	t->parent[0] = -1;
	for (int joined = 1; joined < k && !err; joined++) {
		int nsrc = 0, m = -1, v, a, b;
		struct step *st;

		for (int i = 0; i < n; i++)
			if (owner[i] >= 0)
				srcs[nsrc++] = i;
		search(s, srcs, nsrc, -1, S_AUX, false, -1,
		       tp->task->demand_gbps);
		for (int i = 1; i < k; i++)
			if (!in[i] && search_reached(s, tp->server[i]) &&
			    (m < 0 || search_dist(s, tp->server[i]) <
					      search_dist(s, tp->server[m])))
				m = i;
		if (m < 0) {
			snprintf(tp->why, sizeof(tp->why),
				 "the %s auxiliary graph does not connect the "
				 "task's servers", upload ? "upload" :
				 "broadcast");
			err = -ENOSPC;
			break;
		}
		/* where it joins: the source its path starts from */
		v = path_to(s, tp->server[m], &st) ? st[0].from :
						     tp->server[m];
		t->parent[m] = owner[v];
		/*
		 * Joined at a site (a router or its ROADM) where a model of
		 * the tree sits: that model relays, as a router cannot.
		 */
		{
			const struct scn_node *nv = &s->sc->nodes[v];
			int site = nv->kind == NODE_ROUTER ? v :
				   nv->kind == NODE_ROADM ? nv->router : -1;

			if (site >= 0 && at[site] >= 0)
				t->parent[m] = at[site];
		}
		a = tp->server[upload ? m : t->parent[m]];
		b = tp->server[upload ? t->parent[m] : m];
		err = route_edge(s, tp, ti, a, b, &t->path[m]);
		if (err)
			break;
		in[m] = true;
		if (at[s->sc->nodes[tp->server[m]].attach] < 0)
			at[s->sc->nodes[tp->server[m]].attach] = m;
		owner[tp->server[m]] = m;
		own_path(s, &t->path[m], upload ? m : t->parent[m], owner);
		owner[tp->server[m]] = m;
	}
out:
	free(owner);
	free(srcs);
	free(at);
	free(in);
	return err;
}

int sched_tm_trees(struct sched *s, struct task_plan *tp, int ti)
{
	int err = tm_tree(s, tp, ti, &tp->bcast, false);

	return err ? err : tm_tree(s, tp, ti, &tp->up, true);
}
