// SPDX-License-Identifier: MIT
/*
 * Trees over terminals on the auxiliary graph: the minimum spanning tree
 * of their metric closure, exactly (a search from each, Prim on the full
 * closure) or through one multi-source search (the boundary graph of
 * their Voronoi regions, search_voronoi; Mehlhorn 1988). The tree
 * heuristics of the Steiner problem belong here.
 */
#include "sched_impl.h"
#include "grow.h"

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

/* An edge of the subgraph the closure's paths span. */
struct kedge {
	int u, v;
	double w;
	enum step_kind kind;
	int idx;
};

static int find(int *uf, int x)
{
	while (uf[x] != x)
		x = uf[x] = uf[uf[x]];
	return x;
}

static int by_weight(const void *a, const void *b)
{
	const struct kedge *x = a, *y = b;

	if (x->w != y->w)
		return x->w < y->w ? -1 : 1;
	if (x->u != y->u)
		return x->u - y->u;
	return x->v - y->v;
}

/* Add st to the edge set once (an edge is its kind, idx and ends). */
static int kedge_add(struct kedge **e, int *n, int *cap,
		     const struct sched *s, const struct step *st)
{
	int u = st->from < st->to ? st->from : st->to;
	int v = st->from < st->to ? st->to : st->from;
	struct kedge *m;

	for (int i = 0; i < *n; i++)
		if ((*e)[i].u == u && (*e)[i].v == v &&
		    (*e)[i].kind == st->kind && (*e)[i].idx == st->idx)
			return 0;
	m = grow_array(*e, cap, *n, sizeof(*m), 64);
	if (!m)
		return -ENOMEM;
	*e = m;
	(*e)[(*n)++] = (struct kedge){ u, v, aux_weight(s, st), st->kind,
				       st->idx };
	return 0;
}

/* Whether node x is a model's server (not only a Steiner vertex). */
#define IS_MODEL(x) (tix[x] >= 0 && tix[x] < nmod)

/*
 * KMB over term[0..k): the first nmod are models, the rest routers the
 * tree may branch at (Steiner vertices: kept only where they join
 * something). *weight: the pruned tree's, on the auxiliary graph. With
 * parent (and order) the models' tree as terminal_kmb says, over the
 * first nmod; without, the weight alone.
 */
static int kmb_tree(struct sched *s, const int *term, int k, int nmod,
		    double demand, int *parent, int *order, double *weight)
{
	int n = s->n, ne = 0, cap = 0, nt = 0, err;
	int *cpar = malloc((size_t)k * sizeof(*cpar));
	int *cord = malloc((size_t)k * sizeof(*cord));
	int *uf = malloc((size_t)n * sizeof(*uf));
	int *deg = calloc((size_t)n, sizeof(*deg));
	int *tix = malloc((size_t)n * sizeof(*tix));	/* node -> terminal */
	int *anc = malloc((size_t)n * sizeof(*anc));
	int *queue = malloc((size_t)n * sizeof(*queue));
	int *at = malloc((size_t)n * sizeof(*at));	/* router -> terminal */
	bool *keep = NULL;
	struct kedge *e = NULL;
	double w;

	err = cpar && cord && uf && deg && tix && anc && queue && at ? 0 :
									 -ENOMEM;
	/* 1. the MST of the metric closure */
	if (!err)
		err = terminal_mst(s, term, k, demand, true, cpar, cord, &w);
	/* 2. its edges as shortest paths: the subgraph they span */
	for (int i = 1; i < k && !err; i++) {
		struct step *st;
		int len;

		err = search(s, &term[cpar[i]], 1, term[i], S_AUX, false, -1,
			     demand);
		if (err) {
			err = -ENOSPC;
			break;
		}
		len = path_to(s, term[i], &st);
		for (int j = 0; j < len && !err; j++)
			err = kedge_add(&e, &ne, &cap, s, &st[j]);
	}
	keep = err ? NULL : calloc((size_t)ne + 1, sizeof(*keep));
	if (!err && !keep)
		err = -ENOMEM;
	if (err)
		goto out;
	/* 3. its minimum spanning tree (Kruskal) */
	qsort(e, (size_t)ne, sizeof(*e), by_weight);
	for (int i = 0; i < n; i++) {
		uf[i] = i;
		tix[i] = -1;
		anc[i] = -2;		/* not reached */
	}
	for (int i = 0; i < k; i++)
		tix[term[i]] = i;
	for (int i = 0; i < ne; i++) {
		int a = find(uf, e[i].u), b = find(uf, e[i].v);

		if (a == b)
			continue;
		uf[a] = b;
		keep[i] = true;
		deg[e[i].u]++;
		deg[e[i].v]++;
	}
	/* 4. leaves that are not models go, until none is left */
	for (bool cut = true; cut;) {
		cut = false;
		for (int i = 0; i < ne; i++) {
			int leaf = -1;

			if (!keep[i])
				continue;
			if (deg[e[i].u] == 1 && !IS_MODEL(e[i].u))
				leaf = e[i].u;
			else if (deg[e[i].v] == 1 && !IS_MODEL(e[i].v))
				leaf = e[i].v;
			if (leaf < 0)
				continue;
			keep[i] = false;
			deg[e[i].u]--;
			deg[e[i].v]--;
			cut = true;
		}
	}
	*weight = 0;
	for (int i = 0; i < ne; i++)
		if (keep[i])
			*weight += e[i].w;
	if (!parent)
		goto out;
	/*
	 * 5. hung from term[0]: each terminal under the nearest one above.
	 * Servers are never transit, so a terminal is a leaf at its router
	 * and none lies on another's way up: at each site (a ROADM and its
	 * router) the tree crosses, a terminal at that router (the first;
	 * the one above, if it is there) relays for the site, and the
	 * others and everything below hang from it — where the tree
	 * branches at a server, as models can relay, not at the router or
	 * the ROADM, which cannot. at[r]: the first terminal at router r.
	 */
	for (int i = 0; i < n; i++)
		at[i] = -1;
	for (int i = nmod - 1; i >= 0; i--)
		at[s->sc->nodes[term[i]].attach] = i;
	parent[0] = -1;
	order[nt++] = 0;
	anc[term[0]] = 0;
	queue[0] = term[0];
	for (int qh = 0, qt = 1; qh < qt; qh++) {
		int x = queue[qh], head = IS_MODEL(x) ? tix[x] : anc[x];
		const struct scn_node *nx = &s->sc->nodes[x];
		int site = nx->kind == NODE_ROUTER ? x :
			   nx->kind == NODE_ROADM ? nx->router : -1;
		int h = site >= 0 ? at[site] : -1;

		if (!IS_MODEL(x) && h >= 0 && anc[term[h]] == -2 &&
		    s->sc->nodes[term[head]].attach != site) {
			anc[term[h]] = head;
			parent[h] = head;
			order[nt++] = h;
			queue[qt++] = term[h];
			head = h;
		}
		for (int i = 0; i < ne; i++) {
			int y;

			if (!keep[i] || (e[i].u != x && e[i].v != x))
				continue;
			y = e[i].u == x ? e[i].v : e[i].u;
			if (anc[y] != -2)
				continue;
			anc[y] = head;
			if (IS_MODEL(y)) {
				parent[tix[y]] = anc[y];
				order[nt++] = tix[y];
			}
			queue[qt++] = y;
		}
	}
	if (nt != nmod)
		err = -ENOSPC;
out:
	free(cpar);
	free(cord);
	free(uf);
	free(deg);
	free(tix);
	free(anc);
	free(queue);
	free(at);
	free(keep);
	free(e);
	return err;
}

#undef IS_MODEL

int terminal_kmb(struct sched *s, const int *term, int k, double demand,
		 int *parent, int *order)
{
	double w;

	return kmb_tree(s, term, k, k, demand, parent, order, &w);
}

/* Most KMB trees one Steiner-vertex insertion search may weigh. */
#define SVI_TRIES_MAX 4000

int terminal_svi(struct sched *s, const int *term, int k, double demand,
		 int *parent, int *order)
{
	const struct scenario *sc = s->sc;
	int n = s->n, ns = 0, tries = 0, err;
	int *t = malloc(((size_t)k + (size_t)n) * sizeof(*t));
	bool *held = calloc((size_t)n, sizeof(*held));	/* router: a model */
	double best, w;

	if (!t || !held) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < k; i++) {
		t[i] = term[i];
		held[sc->nodes[term[i]].attach] = true;
	}
	err = kmb_tree(s, t, k, k, demand, NULL, NULL, &best);
	/*
	 * Routers without a model, each tried as one more vertex the tree
	 * must reach (pruned again if it ends a leaf); kept where the tree
	 * gets lighter, and the round repeated while one was kept.
	 */
	for (bool better = !err; better && tries < SVI_TRIES_MAX;) {
		better = false;
		for (int r = 0; r < n && !err && tries < SVI_TRIES_MAX; r++) {
			if (sc->nodes[r].kind != NODE_ROUTER || held[r])
				continue;
			t[k + ns] = r;
			tries++;
			err = kmb_tree(s, t, k + ns + 1, k, demand, NULL, NULL,
				       &w);
			if (err == -ENOSPC) {
				err = 0;	/* cut off: not a way */
				continue;
			}
			if (!err && w < best - 1e-9 * fabs(best)) {
				best = w;
				held[r] = true;
				ns++;
				better = true;
			}
		}
	}
	if (!err)
		err = kmb_tree(s, t, k + ns, k, demand, parent, order, &w);
out:
	free(t);
	free(held);
	return err;
}
