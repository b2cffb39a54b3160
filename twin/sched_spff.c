// SPDX-License-Identifier: MIT
/*
 * Fixed baseline: shortest path, first fit. Every local model talks to the
 * global model over its own end-to-end path: the shortest route by km
 * between their ROADMs, carried by a direct lightpath between their two
 * routers — an existing one with room in both directions (grooming), else a
 * new one by first fit on that route. If no wavelength is free on the
 * whole route the task is blocked: the baseline tries no other route.
 * Broadcast and upload use the same path; only the global model
 * aggregates.
 */
#include "sched_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* Memory the route cache may take: every tree up to about 2,000 sites. */
#define KM_CACHE_BYTES ((size_t)64 << 20)

/*
 * The shortest route by km from ROADM from to ROADM to, as fibres in order
 * into fib[]; their count, or -ENOENT. Routes come from shortest-path trees
 * rooted at to, cached per ROADM while they fit in KM_CACHE_BYTES (all of
 * them took 655 MiB at 10,000 sites). Past that, a search from to that
 * stops once from is final gives the same route: a final node's
 * predecessors are final.
 */
int sched_km_route(struct sched *s, int from, int to, int *fib)
{
	size_t size = (size_t)s->n * sizeof(**s->km_pred);
	const int *tree = s->km_pred[to];
	int n = 0;

	if (!tree) {
		bool keep = s->km_bytes + size <= KM_CACHE_BYTES;
		int *pred, err;

		err = search(s, &to, 1, keep ? -1 : from, S_KM, false, -1, 0);
		if (err || !search_reached(s, from))
			return -ENOENT;
		/* without memory for the tree, the search is still here */
		pred = keep ? malloc(size) : NULL;
		if (pred) {
			for (int v = 0; v < s->n; v++)
				pred[v] = search_reached(s, v) ?
						  s->fwd.pred[v].idx :
						  -1;
			s->km_pred[to] = pred;
			tree = pred;
			s->km_bytes += size;
		}
	}
	for (int v = from; v != to; n++) {
		int f = tree ? tree[v] : s->fwd.pred[v].idx;

		fib[n] = f;
		v = s->sc->fibres[f].a == v ? s->sc->fibres[f].b :
					      s->sc->fibres[f].a;
	}
	return n;
}

/* A lightpath between routers a and b with room both ways, or -1. */
static int groom(struct sched *s, int a, int b, double demand)
{
	const struct lp_ends *e = &s->net->router_ends[a];

	for (int i = 0; i < e->n; i++) {
		const struct lp_end *x = &e->v[i];

		if (x->to == b && x->out >= demand && x->in >= demand)
			return x->lp;
	}
	return -1;
}

/* New lightpath from router ra to router rb on the shortest km route. */
static int light_shortest(struct sched *s, struct task_plan *tp, int ti,
			  int ra, int rb)
{
	const struct scenario *sc = s->sc;
	int from = sc->nodes[ra].attach, to = sc->nodes[rb].attach;
	int *fib, n, l, id, err;

	fib = malloc((size_t)sc->nfibres * sizeof(*fib));
	if (!fib)
		return -ENOMEM;
	n = sched_km_route(s, from, to, fib);
	l = n < 0 ? -1 : net_first_fit(s->net, fib, n);
	if (l < 0) {
		if (n < 0)
			snprintf(tp->why, sizeof(tp->why),
				 "no fibre route from '%s' to '%s'",
				 sc->nodes[from].name, sc->nodes[to].name);
		else
			snprintf(tp->why, sizeof(tp->why),
				 "no wavelength free on the shortest path from "
				 "'%s' to '%s' (%d fibres)",
				 sc->nodes[from].name, sc->nodes[to].name, n);
		free(fib);
		return -ENOSPC;
	}
	id = net_light(s->net, ra, rb, fib, n, l, ti);
	free(fib);
	if (id < 0)
		return id;
	err = int_vec_push(&tp->lit, id);
	return err ? err : id;
}

/* The path server a -> server b, using lightpath lp (or none) between. */
static int direct_path(struct sched *s, struct task_plan *tp, int a, int b,
		       int lp, struct ppath *pp)
{
	struct step st[3];
	int n = 0, ra = s->sc->nodes[a].attach, rb = s->sc->nodes[b].attach;

	st[n++] = (struct step){ ST_ACCESS, a, a, ra };
	if (lp >= 0)
		st[n++] = (struct step){ ST_LIGHTPATH, lp, ra, rb };
	st[n++] = (struct step){ ST_ACCESS, b, rb, b };
	return realize(s, tp, -1, st, n, -1, pp);
}

static int spff_place(struct sched *s, struct task_plan *tp, int ti)
{
	const struct scenario *sc = s->sc;
	double demand = tp->task->demand_gbps;
	int g = tp->server[0], rg = sc->nodes[g].attach;

	for (int m = 1; m < tp->nmodels; m++) {
		int l = tp->server[m], rl = sc->nodes[l].attach, lp = -1, err;

		if (rl != rg) {
			lp = groom(s, rg, rl, demand);
			if (lp < 0)
				lp = light_shortest(s, tp, ti, rg, rl);
			if (lp < 0)
				return lp;
		}
		tp->bcast.parent[m] = tp->up.parent[m] = 0;
		err = direct_path(s, tp, g, l, lp, &tp->bcast.path[m]);
		if (!err)
			err = direct_path(s, tp, l, g, lp, &tp->up.path[m]);
		if (err)
			return err;
	}
	return 0;
}

const struct sched_ops sched_spff = {
	.name = "spff",
	.help = "fixed baseline: shortest path, first-fit wavelength, "
		"direct path G-Li, aggregation at G only",
	.role = "fixed",
	.baseline = true,
	.place = spff_place,
};
