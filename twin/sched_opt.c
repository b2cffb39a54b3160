// SPDX-License-Identifier: MIT
/*
 * opt: the exact minimum of a task's tree weight (plan_tree_weight) on the
 * network state it is scheduled on, by an integer program GLPK solves.
 *
 * The graph is the IP layer as the trees see it: the task's servers (each
 * on its access link), every router, every lit lightpath with room for the
 * task's demand (in the direction data would cross it), and, for every
 * pair of routers, the lightpath that could be lit between them — the
 * cheapest fibre run with one wavelength free all along (adds, fibres and
 * drop, at the weights of scenarios/README.md). Servers have one link each,
 * so they never transit. A tree over the task's servers in this graph is
 * what every tree scheduler builds: a lightpath is paid once however many
 * of the task's transfers cross it, a fibre once per lightpath over it.
 *
 * Broadcast and upload are solved together (two arborescences from the
 * global model's server, the upload's arcs read against the flow): the
 * upload may cross a lightpath the broadcast lit at a lit lightpath's
 * weight, as it would once the broadcast is in place. Each arborescence is
 * a multi-commodity flow — one unit from the root to each terminal, on
 * arcs the tree buys — whose LP relaxation is tight on most instances, so
 * branch and bound has little to do.
 *
 * The tree is then realized as models relay: a local model hangs from the
 * model nearest above it, whose server sits on a router of its path from
 * the root (the root if none), so its transfers cross only links the tree
 * bought and aggregation happens where the tree branches at models.
 * The room of a lightpath several of the task's transfers cross is checked
 * as the paths are realized: one too full is left out of the graph and the
 * program solved again (the tree is then the best without it; exact
 * wherever the transfers fit, as on an empty network). Wavelength
 * continuity between the tree's own new lightpaths is checked as they are
 * lit: a tree that cannot be lit blocks the task, saying so.
 *
 * On a very small network the program is the joint one, tree and
 * wavelengths together: every lightpath that could be lit is a candidate
 * edge of its own — every simple fibre run between two routers' ROADMs,
 * on every wavelength free all along it (at most OPT_JOINT_MAX of them)
 * — and a wavelength on a fibre carries at most one of those the trees
 * light. The trees found are then lit exactly as solved, wavelengths and
 * all: the least tree weight of any tree and wavelength assignment the
 * network's free wavelengths allow. A plan says which program placed each
 * task (task_plan.program).
 */
#include "opt_impl.h"
#include "clock.h"

#include <errno.h>
#include <glpk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void ograph_release(struct ograph *g)
{
	for (int i = 0; i < g->ne; i++) {
		free(g->e[i].fib);
		free(g->e[i].roadm);
	}
	free(g->e);
	free(g->node);
	free(g->vert);
	free(g->access);
	memset(g, 0, sizeof(*g));
}

static struct oedge *add_edge(struct ograph *g)
{
	if (g->ne == g->cap) {
		int cap = g->cap * 2 + 64;
		struct oedge *e = realloc(g->e, (size_t)cap * sizeof(*e));

		if (!e)
			return NULL;
		g->e = e;
		g->cap = cap;
	}
	memset(&g->e[g->ne], 0, sizeof(g->e[0]));
	return &g->e[g->ne++];
}

static int add_vertex(struct ograph *g, int node)
{
	if (g->vert[node] < 0) {
		g->node[g->nv] = node;
		g->vert[node] = g->nv++;
	}
	return g->vert[node];
}

/*
 * The cheapest lightpath that could be lit from router a to every other
 * router: Dijkstra over the ROADMs, fibres up with wavelength l free, for
 * each l that differs (skip[l]: free on exactly the fibres an earlier one
 * is, or on none: its runs are the earlier one's, and the lowest l wins a
 * tie); best[r] keeps the lowest cost with the run of fibres behind it.
 * The cost is lighting it, or (both) lighting it and crossing it once more
 * as a lit lightpath: the cheapest run for a lightpath the broadcast
 * lights and the upload reuses may be another.
 */
struct runs {
	double *best;		/* per node: weight, INFINITY if none */
	int **fib, **roadm;	/* per node: the run, owned */
	int *nfib;
	bool *skip;		/* per wavelength */
	/* Dijkstra workspace over nodes */
	double *d;
	int *pred;		/* fibre into the node */
	struct heap q;
};

/* runs.skip[]: wavelengths whose runs an earlier one already gives. */
static void distinct_lambdas(const struct sched *s, bool *skip)
{
	const struct net *net = s->net;
	int nl = net->words * 64, nf = s->sc->nfibres;

	for (int l = 0; l < nl; l++) {
		bool any = false;

		for (int f = 0; f < nf && !any; f++)
			any = net_lambda_free(net, f, l);
		skip[l] = !any;
		for (int k = 0; k < l && !skip[l]; k++) {
			int f = 0;

			if (skip[k])
				continue;
			while (f < nf && net_lambda_free(net, f, l) ==
						 net_lambda_free(net, f, k))
				f++;
			skip[l] = f == nf;
		}
	}
}

static int runs_from(const struct sched *s, struct runs *r, int a, bool both)
{
	const struct scenario *sc = s->sc;
	const struct net *net = s->net;
	int n = sc->nnodes, src = sc->nodes[a].attach;

	for (int v = 0; v < n; v++)
		r->best[v] = INFINITY;
	for (int l = 0; l < net->words * 64; l++) {
		if (r->skip[l])
			continue;
		for (int v = 0; v < n; v++) {
			r->d[v] = INFINITY;
			r->q.pos[v] = -1;
		}
		r->d[src] = 2 * weight_adddrop(sc);
		heap_set(&r->q, r->d[src], src, false);
		while (r->q.n) {
			int u = heap_pop(&r->q);

			for (int e = net->adj_start[u]; e < net->adj_start[u + 1];
			     e++) {
				const struct adj *x = &net->adj[e];
				double nd;

				if (x->kind != E_FIBRE || sc->fibres[x->idx].down ||
				    !net_lambda_free(net, x->idx, l))
					continue;
				nd = r->d[u] + weight_fibre(sc, x->idx);
				if (both) {
					struct lightpath one = {
						.nfib = 1,
						.km = sc->fibres[x->idx].km };

					nd += weight_lightpath(sc, &one);
				}
				if (nd < r->d[x->to]) {
					heap_set(&r->q, nd, x->to,
						 isfinite(r->d[x->to]));
					r->d[x->to] = nd;
					r->pred[x->to] = x->idx;
				}
			}
		}
		for (int b = 0; b < n; b++) {
			int at, k = 0, x = sc->nodes[b].attach;
			double w;

			if (sc->nodes[b].kind != NODE_ROUTER || b == a ||
			    x == src || !isfinite(r->d[x]))
				continue;
			w = r->d[x];
			if (w >= r->best[b])
				continue;
			for (at = x; at != src; k++) {
				const struct scn_fibre *f =
					&sc->fibres[r->pred[at]];

				at = f->a == at ? f->b : f->a;
			}
			free(r->fib[b]);
			free(r->roadm[b]);
			r->fib[b] = malloc((size_t)k * sizeof(int));
			r->roadm[b] = malloc((size_t)(k + 1) * sizeof(int));
			if (!r->fib[b] || !r->roadm[b])
				return -ENOMEM;
			r->best[b] = w;
			r->nfib[b] = k;
			r->roadm[b][k] = x;
			for (at = x; at != src;) {
				const struct scn_fibre *f =
					&sc->fibres[r->pred[at]];

				r->fib[b][--k] = r->pred[at];
				at = f->a == at ? f->b : f->a;
				r->roadm[b][k] = at;
			}
		}
	}
	return 0;
}

static bool room(const struct lightpath *lp, int from, double demand)
{
	return lp->resid[lp_dir_from(lp, from)] + ROOM_EPS >= demand;
}

/* Whether an edge from router a (the last added) joins b over r's run. */
static bool same_run(const struct ograph *g, int a, int b,
		     const struct runs *r)
{
	for (int i = g->ne - 1; i >= 0 && g->e[i].kind == OE_NEW &&
				g->e[i].u == g->vert[a]; i--) {
		const struct oedge *e = &g->e[i];

		if (e->v == g->vert[b] && e->nfib == r->nfib[b] &&
		    !memcmp(e->fib, r->fib[b], (size_t)e->nfib * sizeof(int)))
			return true;
	}
	return false;
}

/* A new edge's weights: lighting its run, and crossing it once lit. */
static void new_weights(const struct scenario *sc, struct oedge *e)
{
	struct lightpath as_lit = { .nfib = e->nfib };

	e->w = 2 * weight_adddrop(sc);
	for (int f = 0; f < e->nfib; f++) {
		as_lit.km += sc->fibres[e->fib[f]].km;
		e->w += weight_fibre(sc, e->fib[f]);
	}
	e->w_reuse = weight_lightpath(sc, &as_lit);
}

/* The edge lighting r's run from router a to router b (taking it). */
static struct oedge *new_edge(struct ograph *g, const struct scenario *sc,
			      int a, int b, struct runs *r)
{
	struct oedge *e = add_edge(g);

	if (!e)
		return NULL;
	*e = (struct oedge){ .kind = OE_NEW, .u = g->vert[a], .v = g->vert[b],
			     .nfib = r->nfib[b], .fib = r->fib[b],
			     .roadm = r->roadm[b], .lambda = -1 };
	new_weights(sc, e);
	r->fib[b] = NULL;
	r->roadm[b] = NULL;
	return e;
}

/*
 * The joint program's candidates (see the top), found by a depth-first
 * walk over the ROADMs from router a's: the run so far, its fibres fib[]
 * and ROADMs roadm[] (n and n + 1), on[] marking those on it.
 */
struct jwalk {
	const struct sched *s;
	struct ograph *g;
	int a;
	int *fib, *roadm, n;
	bool *on;
	long steps, found;
};

/* Whether wavelength l is free on every fibre of the run so far. */
static bool run_free(const struct jwalk *w, int l)
{
	for (int i = 0; i < w->n; i++)
		if (!net_lambda_free(w->s->net, w->fib[i], l))
			return false;
	return true;
}

/* The candidates ending at ROADM x: to each router b > a on it. */
static int jemit(struct jwalk *w, int x)
{
	const struct scenario *sc = w->s->sc;

	for (int b = w->a + 1; b < sc->nnodes; b++) {
		if (sc->nodes[b].kind != NODE_ROUTER || sc->nodes[b].attach != x)
			continue;
		for (int l = 0; l < w->g->nlambda; l++) {
			struct oedge *e;

			if (!run_free(w, l))
				continue;
			if (++w->found > OPT_JOINT_MAX)
				return -E2BIG;
			e = add_edge(w->g);
			if (!e)
				return -ENOMEM;
			*e = (struct oedge){ .kind = OE_NEW,
					     .u = w->g->vert[w->a],
					     .v = w->g->vert[b], .nfib = w->n,
					     .lambda = l };
			e->fib = malloc((size_t)w->n * sizeof(int));
			e->roadm = malloc((size_t)(w->n + 1) * sizeof(int));
			if (!e->fib || !e->roadm)
				return -ENOMEM;
			memcpy(e->fib, w->fib, (size_t)w->n * sizeof(int));
			memcpy(e->roadm, w->roadm,
			       (size_t)(w->n + 1) * sizeof(int));
			new_weights(sc, e);
		}
	}
	return 0;
}

static int jdfs(struct jwalk *w, int u)
{
	const struct net *net = w->s->net;
	int err = 0;

	if (++w->steps > OPT_JOINT_STEPS)
		return -E2BIG;
	for (int i = net->adj_start[u]; i < net->adj_start[u + 1] && !err;
	     i++) {
		const struct adj *x = &net->adj[i];

		if (x->kind != E_FIBRE || w->on[x->to])
			continue;
		w->fib[w->n] = x->idx;
		w->roadm[++w->n] = x->to;
		/* a wavelength free all along (none on a cut fibre) */
		if (net_first_fit(net, w->fib, w->n) >= 0) {
			w->on[x->to] = true;
			err = jemit(w, x->to);
			if (!err)
				err = jdfs(w, x->to);
			w->on[x->to] = false;
		}
		w->n--;
	}
	return err;
}

/* Every candidate of the joint program, or -E2BIG if they are too many. */
static int joint_edges(const struct sched *s, struct ograph *g)
{
	const struct scenario *sc = s->sc;
	int n = sc->nnodes, err = 0;
	struct jwalk w = { .s = s, .g = g };

	w.fib = malloc((size_t)(n + 1) * sizeof(int));
	w.roadm = malloc((size_t)(n + 2) * sizeof(int));
	w.on = calloc((size_t)n + 1, sizeof(bool));
	if (!w.fib || !w.roadm || !w.on)
		err = -ENOMEM;
	for (int a = 0; a < n && !err; a++) {
		int x = sc->nodes[a].attach;

		if (sc->nodes[a].kind != NODE_ROUTER)
			continue;
		w.a = a;
		w.n = 0;
		w.roadm[0] = x;
		w.on[x] = true;
		err = jdfs(&w, x);
		w.on[x] = false;
	}
	free(w.fib);
	free(w.roadm);
	free(w.on);
	return err;
}

/*
 * Drop the new edges some router in between makes useless: u-v goes when
 * new edges u-c and c-v, each lighter than it, together weigh no more, to
 * light and to reuse alike. A tree lighting u-v does as well with u-c and
 * c-v instead (and those, if dropped too, by lighter ones again: the
 * weights strictly fall, so the replacing ends), so the least tree weight
 * is unchanged; with free add/drops (weights.adddrop 0) only the runs
 * between routers adjacent over fibre are left, a handful per router
 * where there were as many as routers. The new edges are the graph's
 * last; the others keep their places. 0 or -ENOMEM.
 */
static int prune_dominated(struct ograph *g)
{
	int first = g->ne, nr, k;
	int *pair, *rank;	/* two edges per ordered pair of routers */
	bool *drop;

	while (first > 0 && g->e[first - 1].kind == OE_NEW)
		first--;
	nr = g->nv - g->nserv;
	if (first == g->ne || nr < 3)
		return 0;
	pair = malloc((size_t)nr * (size_t)nr * 2 * sizeof(*pair));
	rank = malloc((size_t)g->nv * sizeof(*rank));
	drop = calloc((size_t)g->ne, sizeof(*drop));
	if (!pair || !rank || !drop) {
		free(pair);
		free(rank);
		free(drop);
		return -ENOMEM;
	}
	for (long i = 0; i < (long)nr * nr * 2; i++)
		pair[i] = -1;
	for (int v = 0; v < g->nv; v++)
		rank[v] = v - g->nserv;
	for (int e = first; e < g->ne; e++) {
		int u = rank[g->e[e].u], v = rank[g->e[e].v];
		int *at = &pair[((long)u * nr + v) * 2];
		int *ta = &pair[((long)v * nr + u) * 2];

		at[at[0] >= 0] = e;
		ta[ta[0] >= 0] = e;
	}
	for (int e = first; e < g->ne; e++) {
		const struct oedge *x = &g->e[e];
		int u = rank[x->u], v = rank[x->v];

		for (int c = 0; c < nr && !drop[e]; c++) {
			const int *uc = &pair[((long)u * nr + c) * 2];
			const int *cv = &pair[((long)c * nr + v) * 2];

			if (c == u || c == v)
				continue;
			for (int i = 0; i < 4 && !drop[e]; i++) {
				int a = uc[i & 1], b = cv[i >> 1];

				if (a < 0 || b < 0)
					continue;
				drop[e] = g->e[a].w < x->w && g->e[b].w < x->w &&
					  g->e[a].w + g->e[b].w <= x->w &&
					  g->e[a].w_reuse + g->e[b].w_reuse <=
						  x->w_reuse;
			}
		}
	}
	k = first;
	for (int e = first; e < g->ne; e++) {
		if (drop[e]) {
			free(g->e[e].fib);
			free(g->e[e].roadm);
			continue;
		}
		g->e[k++] = g->e[e];
	}
	g->ne = k;
	free(pair);
	free(rank);
	free(drop);
	return 0;
}

/*
 * A lightpath left out of a task's graph: one its trees crossed more
 * often than it has room for. OE_LIT: lit lightpath idx; OE_NEW: the run
 * of fibres fib[] between routers a and b (scenario nodes).
 */
struct oban {
	enum oedge_kind kind;
	int idx, a, b, nfib;
	int *fib;
};

static bool banned_lit(const struct oban *ban, int nban, int l)
{
	for (int i = 0; i < nban; i++)
		if (ban[i].kind == OE_LIT && ban[i].idx == l)
			return true;
	return false;
}

static bool banned_run(const struct oban *ban, int nban, int a, int b,
		       const int *fib, int nfib)
{
	for (int i = 0; i < nban; i++)
		if (ban[i].kind == OE_NEW && ban[i].nfib == nfib &&
		    ((ban[i].a == a && ban[i].b == b) ||
		     (ban[i].a == b && ban[i].b == a)) &&
		    !memcmp(ban[i].fib, fib, (size_t)nfib * sizeof(int)))
			return true;
	return false;
}

/*
 * The IP-layer graph of the moment for task tp (see the top), with the
 * joint program's candidates or (not joint) the cheapest runs.
 */
static int build_graph(const struct sched *s, const struct task_plan *tp,
		       bool joint, const struct oban *ban, int nban,
		       struct ograph *g)
{
	const struct scenario *sc = s->sc;
	const struct net *net = s->net;
	double demand = tp->task->demand_gbps;
	struct runs r = { 0 };
	int n = sc->nnodes, err = -ENOMEM;

	g->node = malloc((size_t)n * sizeof(*g->node));
	g->vert = malloc((size_t)n * sizeof(*g->vert));
	g->access = malloc((size_t)tp->nmodels * sizeof(*g->access));
	r.best = malloc((size_t)n * sizeof(*r.best));
	r.fib = calloc((size_t)n, sizeof(*r.fib));
	r.roadm = calloc((size_t)n, sizeof(*r.roadm));
	r.nfib = calloc((size_t)n, sizeof(*r.nfib));
	r.d = malloc((size_t)n * sizeof(*r.d));
	r.pred = malloc((size_t)n * sizeof(*r.pred));
	r.skip = malloc((size_t)net->words * 64 * sizeof(*r.skip));
	if (!g->node || !g->vert || !g->access || !r.best || !r.fib ||
	    !r.roadm || !r.nfib || !r.d || !r.pred || !r.skip ||
	    heap_init(&r.q, n))
		goto out;
	distinct_lambdas(s, r.skip);
	for (int i = 0; i < n; i++)
		g->vert[i] = -1;
	g->joint = joint;
	g->nfibres = sc->nfibres;
	g->nlambda = net->words * 64;
	/* the servers first, the root's as vertex 0, then the routers */
	for (int m = 0; m < tp->nmodels; m++)
		add_vertex(g, tp->server[m]);
	g->nserv = g->nv;
	for (int i = 0; i < n; i++)
		if (sc->nodes[i].kind == NODE_ROUTER)
			add_vertex(g, i);
	/* one access link per server, however many models it holds */
	for (int v = 0; v < g->nserv; v++) {
		int sv = g->node[v];
		struct oedge *e = add_edge(g);

		if (!e)
			goto out;
		g->access[v] = g->ne - 1;
		*e = (struct oedge){ .kind = OE_ACCESS, .u = v,
				     .v = g->vert[sc->nodes[sv].attach],
				     .idx = sv, .w = weight_access(sc, sv) };
	}
	for (int l = 0; l < net->nlp; l++) {
		const struct lightpath *lp = &net->lp[l];
		struct oedge *e;

		if ((!room(lp, lp->a, demand) && !room(lp, lp->b, demand)) ||
		    banned_lit(ban, nban, l))
			continue;
		e = add_edge(g);
		if (!e)
			goto out;
		*e = (struct oedge){ .kind = OE_LIT, .u = g->vert[lp->a],
				     .v = g->vert[lp->b], .idx = l,
				     .w = weight_lightpath(sc, lp),
				     .room = { room(lp, lp->a, demand),
					       room(lp, lp->b, demand) } };
	}
	if (joint) {
		err = joint_edges(s, g);
		goto out;
	}
	for (int a = 0; a < n; a++) {
		if (sc->nodes[a].kind != NODE_ROUTER)
			continue;
		for (int both = 0; both < 2; both++) {
			err = runs_from(s, &r, a, both);
			if (err)
				goto out;
			err = -ENOMEM;
			for (int b = a + 1; b < n; b++) {
				if (!isfinite(r.best[b]) ||
				    (both && same_run(g, a, b, &r)) ||
				    banned_run(ban, nban, a, b, r.fib[b],
					       r.nfib[b]))
					continue;
				if (!new_edge(g, sc, a, b, &r))
					goto out;
			}
		}
	}
	err = prune_dominated(g);
out:
	for (int i = 0; r.fib && i < n; i++)
		free(r.fib[i]);
	for (int i = 0; r.roadm && i < n; i++)
		free(r.roadm[i]);
	free(r.best);
	free(r.fib);
	free(r.roadm);
	free(r.nfib);
	free(r.d);
	free(r.pred);
	free(r.skip);
	heap_release(&r.q);
	return err;
}

/*
 * One procedure's tree, from what it bought: in[v] the arc into vertex v
 * (-1 for the root and vertices off the tree), order[] the vertices from
 * the root outwards. Arcs that lead to no terminal (zero weight) are
 * dropped. Returns the number of vertices in order, or -EPROTO if a
 * terminal is not reached.
 */
static int tree_of(const struct ograph *g, const bool *bought,
		   const bool *reused, const int *term, int nt, int *in,
		   int *order)
{
	int n = 0, k = 0;
	bool *keep = calloc((size_t)g->nv, sizeof(*keep));

	if (!keep)
		return -ENOMEM;
	for (int v = 0; v < g->nv; v++)
		in[v] = -1;
	order[n++] = 0;
	keep[0] = true;		/* as "reached" while searching */
	for (int i = 0; i < n; i++)
		for (int a = 0; a < 2 * g->ne; a++)
			if ((bought[a] || (reused && reused[a])) &&
			    arc_tail(g, a) == order[i] && !keep[arc_head(g, a)]) {
				keep[arc_head(g, a)] = true;
				in[arc_head(g, a)] = a;
				order[n++] = arc_head(g, a);
			}
	/* keep only what lies on a terminal's way up */
	memset(keep, 0, (size_t)g->nv * sizeof(*keep));
	keep[0] = true;
	for (int t = 0; t < nt; t++) {
		int v = term[t];

		if (v && in[v] < 0) {
			free(keep);
			return -EPROTO;
		}
		for (; !keep[v]; v = arc_tail(g, in[v]))
			keep[v] = true;
	}
	for (int i = 0; i < n; i++)
		if (keep[order[i]])
			order[k++] = order[i];
		else
			in[order[i]] = -1;
	free(keep);
	return k;
}

/*
 * The steps that cross edge e from vertex p, appended at st[*n], each with
 * e in eo[]; lit >= 0: a new edge's lightpath, already lit.
 */
static void cross(const struct ograph *g, int e, int p, int lit,
		  struct step *st, int *eo, int *n)
{
	const struct oedge *x = &g->e[e];
	int from = g->node[p], to = g->node[p == x->u ? x->v : x->u];
	int n0 = *n;

	if (x->kind == OE_ACCESS) {
		st[(*n)++] = (struct step){ ST_ACCESS, x->idx, from, to };
	} else if (x->kind == OE_LIT || lit >= 0) {
		st[(*n)++] = (struct step){ ST_LIGHTPATH,
					    x->kind == OE_LIT ? x->idx : lit,
					    from, to };
	} else {
		/* light it: add, the fibres in the direction of travel, drop */
		bool fwd = p == x->u;
		int k = x->nfib;

		st[(*n)++] = (struct step){ ST_ADDDROP, from, from,
					    x->roadm[fwd ? 0 : k] };
		for (int i = 0; i < k; i++) {
			int j = fwd ? i : k - 1 - i;

			st[(*n)++] = (struct step){
				ST_FIBRE, x->fib[j], x->roadm[fwd ? j : j + 1],
				x->roadm[fwd ? j + 1 : j] };
		}
		st[(*n)++] = (struct step){ ST_ADDDROP, to,
					    x->roadm[fwd ? k : 0], to };
	}
	while (n0 < *n)
		eo[n0++] = e;
}

/* Whether the upload crosses arc a on the lightpath the broadcast lit. */
static bool reuses(const bool *reused, const int *lit, int a)
{
	return reused[a] && lit[a / 2] >= 0;
}

/*
 * Realize one procedure's tree (in[], order[] from tree_of) as t's parents
 * and paths. lit[e] is the lightpath lit over new edge e (-1 if none yet);
 * the broadcast fills it, the upload crosses what it reuses on it and
 * lights the rest in up_lit. -EXFULL with *full set to the edge when a
 * transfer finds no room on a lightpath it crosses.
 */
static int realize_tree(struct sched *s, struct task_plan *tp, int ti,
			const struct ograph *g, const int *in,
			const int *order, int nord, bool upload,
			const bool *reused, int *lit, int *up_lit,
			struct tree *t, int *full)
{
	int k = tp->nmodels, err = 0, maxst = 0;
	int *at = malloc((size_t)g->nv * sizeof(*at)); /* model on vertex */
	int *chain = malloc((size_t)g->nv * sizeof(*chain));
	struct step *st = NULL;
	int *eo = NULL;

	for (int e = 0; e < g->ne; e++)
		maxst += g->e[e].nfib + 2;
	st = malloc((size_t)(maxst + 2) * sizeof(*st));
	eo = malloc((size_t)(maxst + 2) * sizeof(*eo));
	if (!at || !chain || !st || !eo) {
		err = -ENOMEM;
		goto out;
	}
	for (int v = 0; v < g->nv; v++)
		at[v] = -1;
	at[0] = 0;
	t->parent[0] = -1;
	/* models on the global model's server hang from it, as in mst */
	for (int m = 1; m < k && !err; m++)
		if (g->vert[tp->server[m]] == 0) {
			t->parent[m] = 0;
			err = route_edge(s, tp, ti, tp->server[0], tp->server[0],
					 &t->path[m]);
		}
	/* models in the order their servers come from the root */
	for (int i = 1; i < nord && !err; i++) {
		int sv = order[i];

		for (int m = 1; m < k && !err; m++) {
			int nc = 0, p, x, nst = 0, mark = tp->lit.n;
			int a, b;

			if (g->vert[tp->server[m]] != sv)
				continue;
			if (at[sv] >= 0) {
				/* a second model on a server: as mst does */
				p = at[sv];
				t->parent[m] = p;
				err = route_edge(s, tp, ti, tp->server[p],
						 tp->server[m], &t->path[m]);
				continue;
			}
			at[sv] = m;
			/* up from its router to a router a model hangs on */
			for (x = arc_tail(g, in[sv]);; x = arc_tail(g, in[x])) {
				chain[nc++] = x;
				p = -1;
				for (int v = 0; v < g->nserv && p < 0; v++)
					if (g->e[g->access[v]].v == x &&
					    at[v] >= 0 && v != sv)
						p = at[v];
				if (p >= 0)
					break;
			}
			t->parent[m] = p;
			/* the path down from p's server to m's: edges in[] of
			 * chain[nc-1 .. 0] then m's access link */
			a = g->vert[tp->server[p]];
			cross(g, g->access[a], a, -1, st, eo, &nst);
			for (int c = nc - 2; c >= -1; c--) {
				int v = c >= 0 ? chain[c] : sv, e = in[v] / 2;
				int l = g->e[e].kind != OE_NEW ? -1 :
					!upload ? lit[e] :
					reuses(reused, lit, in[v]) ? lit[e] :
								     up_lit[e];

				cross(g, e, arc_tail(g, in[v]), l, st, eo, &nst);
			}
			if (upload) {	/* data the other way */
				for (int i2 = 0, j = nst - 1; i2 < j; i2++, j--) {
					struct step y = st[i2];
					int z = eo[i2];

					st[i2] = st[j];
					st[j] = y;
					eo[i2] = eo[j];
					eo[j] = z;
				}
				for (int i2 = 0; i2 < nst; i2++) {
					int f = st[i2].from;

					st[i2].from = st[i2].to;
					st[i2].to = f;
				}
			}
			/* room for one more transfer on what it crosses lit */
			for (int i2 = 0; i2 < nst; i2++) {
				const struct lightpath *lp;

				if (st[i2].kind != ST_LIGHTPATH)
					continue;
				lp = &s->net->lp[st[i2].idx];
				if (lp->resid[lp_dir_from(lp, st[i2].from)] +
					    ROOM_EPS < tp->task->demand_gbps) {
					*full = eo[i2];
					err = -EXFULL;
					goto out;
				}
			}
			err = realize(s, tp, ti, st, nst, -1, &t->path[m]);
			if (err == -EAGAIN || err == -ENOSPC) {
				snprintf(tp->why, sizeof(tp->why),
					 "opt's tree cannot be realized: %s",
					 err == -EAGAIN ?
						 "its lightpaths find no common "
						 "free wavelength" :
						 "a lightpath lacks room for the "
						 "transfers crossing it");
				err = -ENOSPC;
				break;
			}
			if (err)
				break;
			/* the lightpaths just lit, in the order crossed */
			b = mark;
			for (int c = upload ? -1 : nc - 2;
			     upload ? c <= nc - 2 : c >= -1; c += upload ? 1 : -1) {
				int v = c >= 0 ? chain[c] : sv, e = in[v] / 2;
				int *slot = upload ? &up_lit[e] : &lit[e];

				if (g->e[e].kind != OE_NEW ||
				    (upload && reuses(reused, lit, in[v])) ||
				    *slot >= 0)
					continue;
				if (b >= tp->lit.n) {
					err = -EPROTO;
					break;
				}
				*slot = tp->lit.v[b++];
			}
		}
	}
out:
	free(at);
	free(chain);
	free(st);
	free(eo);
	return err;
}

/*
 * Whether opt takes sc at all, before any task is placed: its graph has
 * a candidate edge per pair of routers before pruning (prune_dominated),
 * so the routers are bounded; the program's own size is known, and
 * bounded, only once a task's graph is pruned (opt_place).
 */
static int opt_fits(const struct scenario *sc, char *why, size_t n)
{
	long routers = 0;

	for (int i = 0; i < sc->nnodes; i++)
		routers += sc->nodes[i].kind == NODE_ROUTER;
	if (routers <= OPT_ROUTERS_MAX)
		return 0;
	snprintf(why, n,
		 "opt takes networks of at most %d routers; '%s' has %ld: use "
		 "mst, kmb, tm or svi", OPT_ROUTERS_MAX, sc->name, routers);
	return -E2BIG;
}

/*
 * The joint program's new lightpaths on procedure P's tree (in[] from
 * tree_of), lit as solved, wavelength and all, into lit[] (broadcast) or
 * up_lit[] (upload, what it does not reuse).
 */
static int light_joint(struct sched *s, struct task_plan *tp, int ti,
		       const struct ograph *g, const int *in, int P,
		       const bool *reused, int *lit, int *up_lit)
{
	for (int v = 0; v < g->nv; v++) {
		const struct oedge *x;
		int *slot, id, err;

		if (in[v] < 0 || g->e[in[v] / 2].kind != OE_NEW)
			continue;
		x = &g->e[in[v] / 2];
		if (P && reuses(reused, lit, in[v]))
			continue;
		slot = P ? &up_lit[in[v] / 2] : &lit[in[v] / 2];
		if (*slot >= 0)
			continue;
		id = net_light(s->net, g->node[x->u], g->node[x->v], x->fib,
			       x->nfib, x->lambda, ti);
		if (id < 0)
			return id == -ENOMEM ? id : -EPROTO;
		err = int_vec_push(&tp->lit, id);
		if (err)
			return err;
		*slot = id;
	}
	return 0;
}

/*
 * Place task tp on graph g: solve and realize. A lightpath the trees
 * cross more often than it has room for is left out and the program
 * solved again (the tree found is then the best without it: exact only
 * where every crossing fits). In the joint program it is closed in g;
 * otherwise (own) nothing is placed and -EXFULL returned with *full the
 * edge, for the caller to build the graph without it: the edges pruned
 * for being no better than a way over it may be what the task needs then.
 * retried: lightpaths were left out before (for the message).
 */
static int place_on(struct sched *s, struct task_plan *tp, int ti,
		    const struct ograph *g, bool own, bool retried, int *full,
		    double deadline)
{
	int nv = g->nv, na = 2 * g->ne, nt, n, err;
	int *term = NULL, *in = NULL, *order = NULL, *lit = NULL,
	    *up_lit = NULL;
	bool *bought[2] = { NULL, NULL }, *reused = NULL, *closed = NULL;

	term = malloc((size_t)nv * sizeof(*term));
	in = malloc((size_t)nv * sizeof(*in));
	order = malloc((size_t)nv * sizeof(*order));
	lit = malloc((size_t)(g->ne + 1) * sizeof(*lit));
	up_lit = malloc((size_t)(g->ne + 1) * sizeof(*up_lit));
	bought[0] = calloc((size_t)na + 1, sizeof(bool));
	bought[1] = calloc((size_t)na + 1, sizeof(bool));
	reused = calloc((size_t)na + 1, sizeof(bool));
	closed = calloc((size_t)g->ne + 1, sizeof(bool));
	err = -ENOMEM;
	if (!term || !in || !order || !lit || !up_lit || !bought[0] ||
	    !bought[1] || !reused || !closed)
		goto out;
	/* the terminals: the task's servers but the root's */
	nt = g->nserv - 1;
	for (int i = 0; i < nt; i++)
		term[i] = i + 1;
	for (int tries = 0;; tries++) {
		int mark = net_mark(s->net), lit0 = tp->lit.n;

		*full = -1;
		err = opt_solve(g, closed, term, nt, bought, reused, deadline);
		if (err == -ENOSPC)
			snprintf(tp->why, sizeof(tp->why),
				 "the auxiliary graph does not connect the "
				 "task's servers%s%s", g->joint ? " on "
				 "wavelengths free for all its lightpaths" : "",
				 tries || retried ? " with room for the "
				 "transfers of its trees" : "");
		if (err)
			break;
		for (int e = 0; e < g->ne; e++)
			lit[e] = up_lit[e] = -1;
		for (int P = 0; P < 2 && !err; P++) {
			n = tree_of(g, bought[P], P ? reused : NULL, term, nt,
				    in, order);
			err = n < 0 ? n : !g->joint ? 0 :
			      light_joint(s, tp, ti, g, in, P, reused, lit,
					  up_lit);
			if (!err)
				err = realize_tree(s, tp, ti, g, in, order, n,
						   P, reused, lit, up_lit,
						   P ? &tp->up : &tp->bcast,
						   full);
		}
		if (err != -EXFULL)
			break;
		net_rollback(s->net, mark);
		tp->lit.n = lit0;
		if (own)
			break;
		closed[*full] = true;
	}
out:
	free(term);
	free(in);
	free(order);
	free(lit);
	free(up_lit);
	free(bought[0]);
	free(bought[1]);
	free(reused);
	free(closed);
	return err;
}

/* Most lightpaths left out of one task's graph before opt gives up. */
#define OPT_BANS_MAX 4096

static int opt_place(struct sched *s, struct task_plan *tp, int ti)
{
	struct ograph g = { 0 };
	struct oban *ban = NULL;
	int nban = 0, full, err;
	double deadline = mono_s() + OPT_TIME_LIMIT_S;

	/* the joint program where the network is small enough for it */
	err = build_graph(s, tp, true, NULL, 0, &g);
	if (!err && program_cols(g.ne) > OPT_MAX_COLS)
		err = -E2BIG;
	if (!err) {
		tp->program = "joint";
		err = place_on(s, tp, ti, &g, false, false, &full, deadline);
		goto out;
	}
	tp->program = "runs";
	while (err == -E2BIG || err == -EXFULL) {
		struct oban *nb;
		const struct oedge *x;

		if (err == -EXFULL) {
			/* build the graph again without the full lightpath */
			x = &g.e[full];
			nb = nban < OPT_BANS_MAX ?
			     realloc(ban, (size_t)(nban + 1) * sizeof(*ban)) :
			     NULL;
			if (!nb) {
				err = nban < OPT_BANS_MAX ? -ENOMEM : -ENOSPC;
				snprintf(tp->why, sizeof(tp->why),
					 "opt left %d lightpaths too full for "
					 "the task's trees out and gave up",
					 nban);
				break;
			}
			ban = nb;
			ban[nban] = (struct oban){
				.kind = x->kind, .idx = x->idx,
				.a = g.node[x->u], .b = g.node[x->v],
				.nfib = x->nfib };
			if (x->nfib) {
				ban[nban].fib = malloc((size_t)x->nfib *
						       sizeof(int));
				if (!ban[nban].fib) {
					err = -ENOMEM;
					break;
				}
				memcpy(ban[nban].fib, x->fib,
				       (size_t)x->nfib * sizeof(int));
			}
			nban++;
		}
		ograph_release(&g);
		err = build_graph(s, tp, false, ban, nban, &g);
		if (err)
			break;
		if (program_cols(g.ne) > OPT_MAX_COLS) {
			/* the task, not the plan: it blocks, saying why */
			snprintf(tp->why, sizeof(tp->why),
				 "opt's program would have %ld columns, more "
				 "than %d: use mst, kmb, tm or svi",
				 program_cols(g.ne), OPT_MAX_COLS);
			err = -ENOSPC;
			break;
		}
		err = place_on(s, tp, ti, &g, true, nban > 0, &full,
			       deadline);
	}
out:
	if (err == -ETIMEDOUT) {
		/* the task, not the plan: it blocks, saying why */
		snprintf(tp->why, sizeof(tp->why),
			 "opt found no proven optimum within %d s: use mst, "
			 "kmb, tm or svi", OPT_TIME_LIMIT_S);
		err = -ENOSPC;
	}
	ograph_release(&g);
	for (int i = 0; i < nban; i++)
		free(ban[i].fib);
	free(ban);
	return err;
}

const struct sched_ops sched_opt = {
	.name = "opt",
	.help = "exact: the least tree weight for each task on the state it "
		"is scheduled on (an integer program, GLPK; small networks; "
		"trees and wavelengths together on very small ones)",
	.role = "exact optimum",
	.baseline = false,
	.place = opt_place,
	.fits = opt_fits,
};
