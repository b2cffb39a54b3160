// SPDX-License-Identifier: MIT
/*
 * Shared scheduler machinery. One Dijkstra serves every search: the fixed
 * shortest-path routes (fibres by km), point-to-point searches on the
 * auxiliary graph, and the multi-source search behind the terminal MST.
 * The workspace is stamped with a generation counter so a search costs
 * what it visits, not the size of the network.
 */
#include "sched.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slack when comparing residual capacity with a demand (Gbit/s). */
#define ROOM_EPS 1e-9

const struct sched_ops *const sched_list[] = { &sched_spff, &sched_mst, NULL };

const struct sched_ops *sched_find(const char *name)
{
	for (int i = 0; sched_list[i]; i++)
		if (!strcmp(sched_list[i]->name, name))
			return sched_list[i];
	return NULL;
}

struct heap_item {
	double d;
	int v;
};

int sched_init(struct sched *s, struct plan *p)
{
	int n = p->sc->nnodes;

	memset(s, 0, sizeof(*s));
	s->sc = p->sc;
	s->net = p->net;
	s->plan = p;
	s->n = n;
	s->dist = malloc((size_t)(n + 1) * sizeof(*s->dist));
	s->src = malloc((size_t)(n + 1) * sizeof(*s->src));
	s->pred = malloc((size_t)(n + 1) * sizeof(*s->pred));
	s->stamp = calloc((size_t)n + 1, sizeof(*s->stamp));
	s->steps = malloc((size_t)(n + 1) * sizeof(*s->steps));
	s->km_pred = calloc((size_t)n + 1, sizeof(*s->km_pred));
	if (!s->dist || !s->src || !s->pred || !s->stamp || !s->steps ||
	    !s->km_pred) {
		sched_release(s);
		return -ENOMEM;
	}
	return 0;
}

void sched_release(struct sched *s)
{
	if (s->km_pred)
		for (int i = 0; i < s->n; i++)
			free(s->km_pred[i]);
	free(s->km_pred);
	free(s->steps);
	free(s->stamp);
	free(s->pred);
	free(s->src);
	free(s->dist);
	free(s->heap);
	memset(s, 0, sizeof(*s));
}

/* ---- binary heap with lazy deletion ------------------------------------ */

static int heap_push(struct sched *s, double d, int v)
{
	int i;

	if (s->heap_n == s->heap_cap) {
		int ncap = s->heap_cap ? s->heap_cap * 2 : 256;
		struct heap_item *nh = realloc(s->heap,
					       (size_t)ncap * sizeof(*nh));

		if (!nh)
			return -ENOMEM;
		s->heap = nh;
		s->heap_cap = ncap;
	}
	i = s->heap_n++;
	while (i > 0) {
		int up = (i - 1) / 2;

		if (s->heap[up].d <= d)
			break;
		s->heap[i] = s->heap[up];
		i = up;
	}
	s->heap[i] = (struct heap_item){ d, v };
	return 0;
}

static struct heap_item heap_pop(struct sched *s)
{
	struct heap_item top = s->heap[0], last = s->heap[--s->heap_n];
	int i = 0, n = s->heap_n;

	for (;;) {
		int c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && s->heap[c + 1].d < s->heap[c].d)
			c++;
		if (last.d <= s->heap[c].d)
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (n)
		s->heap[i] = last;
	return top;
}

/* ---- searches ---------------------------------------------------------- */

bool search_reached(const struct sched *s, int v)
{
	return s->stamp[v] == s->gen;
}

double search_dist(const struct sched *s, int v)
{
	return search_reached(s, v) ? s->dist[v] : INFINITY;
}

int search_src(const struct sched *s, int v)
{
	return search_reached(s, v) ? s->src[v] : -1;
}

static double ms_of_km(double km)
{
	return km * FIBRE_S_PER_KM * 1e3;
}

double aux_weight(const struct sched *s, const struct step *st)
{
	const struct scn_weights *w = &s->sc->weights;

	switch (st->kind) {
	case ST_FIBRE:
		return w->alpha + w->beta * ms_of_km(s->sc->fibres[st->idx].km);
	case ST_ADDDROP:
		return w->alpha * w->adddrop;
	case ST_ACCESS:
		return w->beta * ms_of_km(s->sc->nodes[st->idx].access_km);
	case ST_LIGHTPATH: {
		const struct lightpath *lp = &s->net->lp[st->idx];

		return w->alpha * w->reuse * lp->nfib +
		       w->beta * ms_of_km(lp->km);
	}
	}
	return INFINITY;
}

/*
 * Room on a lightpath for one more transfer. Directed searches route a
 * real transfer, so only the direction of travel counts. The undirected
 * searches behind the MST take a lightpath with room either way: the tree
 * is over an undirected closure, and its edges are then routed directed.
 */
static bool lp_has_room(const struct lightpath *lp, int from, bool directed,
			double demand)
{
	int d = lp_dir_from(lp, from);

	if (lp->resid[d] + ROOM_EPS >= demand)
		return true;
	return !directed && lp->resid[1 - d] + ROOM_EPS >= demand;
}

static int relax(struct sched *s, int u, int v, double w,
		 const struct step *st)
{
	double nd = s->dist[u] + w;

	if (s->stamp[v] == s->gen && s->dist[v] <= nd)
		return 0;
	s->stamp[v] = s->gen;
	s->dist[v] = nd;
	s->src[v] = s->src[u];
	s->pred[v] = *st;
	return heap_push(s, nd, v);
}

static void new_generation(struct sched *s)
{
	if (++s->gen == 0) {
		memset(s->stamp, 0, (size_t)s->n * sizeof(*s->stamp));
		s->gen = 1;
	}
	s->heap_n = 0;
}

int search(struct sched *s, const int *srcs, int nsrc, int target,
	   enum search_mode mode, bool directed, int lambda, double demand)
{
	const struct scenario *sc = s->sc;
	const struct net *net = s->net;
	int err;

	new_generation(s);
	for (int i = 0; i < nsrc; i++) {
		int v = srcs[i];

		s->stamp[v] = s->gen;
		s->dist[v] = 0;
		s->src[v] = i;
		s->pred[v] = (struct step){ .kind = ST_ACCESS, .idx = -1,
					    .from = -1, .to = v };
		err = heap_push(s, 0, v);
		if (err)
			return err;
	}
	while (s->heap_n) {
		struct heap_item it = heap_pop(s);
		int u = it.v;

		if (it.d > s->dist[u])
			continue;	/* stale entry */
		if (u == target)
			return 0;
		for (int e = net->adj_start[u]; e < net->adj_start[u + 1]; e++) {
			const struct adj *a = &net->adj[e];
			struct step st = { .idx = a->idx, .from = u,
					   .to = a->to };
			double w;

			switch (a->kind) {
			case E_FIBRE:
				if (lambda >= 0 ?
					    !net_lambda_free(net, a->idx, lambda) :
					    mode == S_AUX &&
						    !net_any_free(net, a->idx))
					continue;
				st.kind = ST_FIBRE;
				break;
			case E_ADDDROP:
				if (mode == S_KM)
					continue;
				st.kind = ST_ADDDROP;
				break;
			case E_ACCESS:
				if (mode == S_KM)
					continue;
				/* servers are endpoints, never transit */
				if (sc->nodes[u].kind == NODE_SERVER &&
				    s->dist[u] > 0)
					continue;
				st.kind = ST_ACCESS;
				break;
			}
			w = mode == S_KM ? sc->fibres[a->idx].km
					 : aux_weight(s, &st);
			err = relax(s, u, a->to, w, &st);
			if (err)
				return err;
		}
		if (mode != S_AUX || sc->nodes[u].kind != NODE_ROUTER)
			continue;
		for (int i = 0; i < net->router_lps[u].n; i++) {
			int l = net->router_lps[u].v[i];
			const struct lightpath *lp = &net->lp[l];
			struct step st = { .kind = ST_LIGHTPATH, .idx = l,
					   .from = u,
					   .to = lp->a == u ? lp->b : lp->a };

			if (!lp_has_room(lp, u, directed, demand))
				continue;
			err = relax(s, u, st.to, aux_weight(s, &st), &st);
			if (err)
				return err;
		}
	}
	return target < 0 ? 0 : -ENOENT;
}

int path_to(struct sched *s, int v, struct step **out)
{
	int n = 0;

	while (s->pred[v].from >= 0) {
		s->steps[n++] = s->pred[v];
		v = s->pred[v].from;
	}
	for (int i = 0; i < n / 2; i++) {
		struct step t = s->steps[i];

		s->steps[i] = s->steps[n - 1 - i];
		s->steps[n - 1 - i] = t;
	}
	*out = s->steps;
	return n;
}

/* ---- realization ------------------------------------------------------- */

static int push_hop(struct ppath *pp, struct hop h)
{
	struct hop *nh = realloc(pp->hops, (size_t)(pp->nhops + 1) * sizeof(*nh));

	if (!nh)
		return -ENOMEM;
	pp->hops = nh;
	pp->hops[pp->nhops++] = h;
	return 0;
}

static int use_lightpath(struct sched *s, struct task_plan *tp, int l,
			 int from, struct ppath *pp)
{
	const struct lightpath *lp = &s->net->lp[l];
	int dir = lp_dir_from(lp, from), err;

	err = net_reserve(s->net, l, dir, tp->task->demand_gbps);
	if (err)
		return err;
	pp->km += lp->km;
	pp->fibre_hops += lp->nfib;
	return push_hop(pp, (struct hop){ HOP_LIGHTPATH, l, dir });
}

int realize(struct sched *s, struct task_plan *tp, int ti,
	    const struct step *st, int nst, int lambda, struct ppath *pp)
{
	const struct scenario *sc = s->sc;
	int mark = net_mark(s->net), lit = tp->lit.n;
	int run_from = -1, nrun = 0, *run = NULL, err = 0;

	ppath_release(pp);
	pp->from = nst ? st[0].from : -1;
	pp->to = nst ? st[nst - 1].to : -1;
	run = malloc((size_t)(nst + 1) * sizeof(*run));
	if (!run)
		return -ENOMEM;
	for (int i = 0; i < nst && !err; i++) {
		const struct step *x = &st[i];

		switch (x->kind) {
		case ST_ACCESS: {
			int dir = sc->nodes[x->from].kind == NODE_SERVER ? 0 : 1;

			pp->km += sc->nodes[x->idx].access_km;
			err = push_hop(pp, (struct hop){ HOP_ACCESS, x->idx,
							  dir });
			break;
		}
		case ST_LIGHTPATH:
			err = use_lightpath(s, tp, x->idx, x->from, pp);
			break;
		case ST_FIBRE:
			run[nrun++] = x->idx;
			break;
		case ST_ADDDROP: {
			int l, id;

			if (sc->nodes[x->from].kind == NODE_ROUTER) {
				run_from = x->from;	/* add */
				nrun = 0;
				break;
			}
			/* drop: light the run as one lightpath */
			if (lambda >= 0) {
				l = lambda;
				for (int j = 0; j < nrun; j++)
					if (!net_lambda_free(s->net, run[j], l))
						l = -1;
			} else {
				l = net_first_fit(s->net, run, nrun);
			}
			if (l < 0) {
				err = -EAGAIN;
				break;
			}
			id = net_light(s->net, run_from, x->to, run, nrun, l,
				       ti);
			if (id < 0) {
				err = id;
				break;
			}
			err = int_vec_push(&tp->lit, id);
			if (!err)
				err = use_lightpath(s, tp, id, run_from, pp);
			break;
		}
		}
	}
	free(run);
	if (err) {
		net_rollback(s->net, mark);
		tp->lit.n = lit;
		ppath_release(pp);
	}
	return err;
}

int route_edge(struct sched *s, struct task_plan *tp, int ti, int a, int b,
	       struct ppath *pp)
{
	double demand = tp->task->demand_gbps;
	struct step *st;
	int n, err, maxw = s->net->words * 64;

	err = search(s, &a, 1, b, S_AUX, true, -1, demand);
	if (err && err != -ENOENT)
		return err;
	if (!err) {
		n = path_to(s, b, &st);
		err = realize(s, tp, ti, st, n, -1, pp);
		if (err != -EAGAIN)
			return err;
	}
	/*
	 * Continuity failed on the cheapest path (or there is none): try the
	 * graph restricted to one wavelength at a time, first fit.
	 */
	for (int l = 0; l < maxw; l++) {
		err = search(s, &a, 1, b, S_AUX, true, l, demand);
		if (err == -ENOENT)
			continue;
		if (err)
			return err;
		n = path_to(s, b, &st);
		err = realize(s, tp, ti, st, n, l, pp);
		if (err != -EAGAIN)
			return err;
	}
	snprintf(tp->why, sizeof(tp->why),
		 "no route with capacity and a free wavelength from '%s' to "
		 "'%s'", s->sc->nodes[a].name, s->sc->nodes[b].name);
	return -ENOSPC;
}

/* ---- terminal MST ------------------------------------------------------ */

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

static void boundary(struct sched *s, int u, int v, double w, int k,
		     double *m)
{
	int a, b;
	double d;

	if (!search_reached(s, v))
		return;
	a = s->src[u];
	b = s->src[v];
	if (a == b)
		return;
	d = s->dist[u] + w + s->dist[v];
	if (d < m[(long)a * k + b]) {
		m[(long)a * k + b] = d;
		m[(long)b * k + a] = d;
	}
}

int terminal_mst(struct sched *s, const int *term, int k, double demand,
		 bool exact, int *parent, int *order, double *weight)
{
	const struct net *net = s->net;
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
		err = search(s, term, k, -1, S_AUX, false, -1, demand);
		/* every edge between two Voronoi regions */
		for (int u = 0; u < s->n && !err; u++) {
			if (!search_reached(s, u))
				continue;
			for (int e = net->adj_start[u];
			     e < net->adj_start[u + 1]; e++) {
				const struct adj *a = &net->adj[e];
				struct step st = { .idx = a->idx, .from = u,
						   .to = a->to };

				if (a->kind == E_FIBRE) {
					if (!net_any_free(net, a->idx))
						continue;
					st.kind = ST_FIBRE;
				} else {
					st.kind = a->kind == E_ADDDROP ?
							  ST_ADDDROP :
							  ST_ACCESS;
				}
				boundary(s, u, a->to, aux_weight(s, &st), k,
					 m);
			}
			if (s->sc->nodes[u].kind != NODE_ROUTER)
				continue;
			for (int i = 0; i < net->router_lps[u].n; i++) {
				int l = net->router_lps[u].v[i];
				const struct lightpath *lp = &net->lp[l];
				struct step st = { .kind = ST_LIGHTPATH,
						   .idx = l, .from = u };

				if (!lp_has_room(lp, u, false, demand))
					continue;
				st.to = lp->a == u ? lp->b : lp->a;
				boundary(s, u, st.to, aux_weight(s, &st), k, m);
			}
		}
	}
	if (!err)
		err = prim(m, k, parent, order, weight);
	free(m);
	return err;
}

/* ---- driver ------------------------------------------------------------ */

struct plan *sched_plan(const struct scenario *sc, const struct sched_ops *ops)
{
	struct plan *p = plan_new(sc, ops->name);
	struct sched s;
	int err;

	if (!p)
		return NULL;
	err = sched_init(&s, p);
	if (err)
		goto fail;
	for (int i = 0; i < p->ntasks; i++) {
		struct task_plan *tp = &p->tasks[i];
		int mark = net_mark(p->net);

		err = ops->place(&s, tp, i);
		if (err == -ENOSPC) {
			net_rollback(p->net, mark);
			tp->lit.n = 0;
			tp->blocked = true;
			for (int m = 0; m < tp->nmodels; m++) {
				ppath_release(&tp->bcast.path[m]);
				ppath_release(&tp->up.path[m]);
				tp->bcast.parent[m] = tp->up.parent[m] = -1;
			}
			err = 0;
			continue;
		}
		if (err)
			goto fail_sched;
	}
	sched_release(&s);
	plan_totals(p);
	return p;
fail_sched:
	sched_release(&s);
fail:
	plan_free(p);
	errno = -err;
	return NULL;
}
