// SPDX-License-Identifier: MIT
#include "net.h"
#include "grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int int_vec_push(struct int_vec *v, int x)
{
	int *nv = grow_array(v->v, &v->cap, v->n, sizeof(*nv), 4);

	if (!nv)
		return -ENOMEM;
	v->v = nv;
	v->v[v->n++] = x;
	return 0;
}

static void add_edge(struct net *net, int *fill, int u, int v, int idx,
		     enum edge_kind kind)
{
	net->adj[fill[u]++] = (struct adj){ .to = v, .idx = idx, .kind = kind };
	net->adj[fill[v]++] = (struct adj){ .to = u, .idx = idx, .kind = kind };
}

struct net *net_new(const struct scenario *sc)
{
	struct net *net = calloc(1, sizeof(*net));
	int n = sc->nnodes, maxw = 1, *deg = NULL;

	if (!net)
		return NULL;
	net->sc = sc;
	net->adj_start = calloc((size_t)n + 1, sizeof(*net->adj_start));
	deg = calloc((size_t)n + 1, sizeof(*deg));
	net->router_ends = calloc((size_t)n + 1, sizeof(*net->router_ends));
	if (!net->adj_start || !deg || !net->router_ends)
		goto fail;

	/* Count degrees, then fill CSR in one pass per edge kind. */
	for (int i = 0; i < sc->nfibres; i++) {
		deg[sc->fibres[i].a]++;
		deg[sc->fibres[i].b]++;
		if (sc->fibres[i].wavelengths > maxw)
			maxw = sc->fibres[i].wavelengths;
	}
	for (int i = 0; i < n; i++)
		if (sc->nodes[i].kind != NODE_ROADM &&
		    sc->nodes[i].attach >= 0) {
			deg[i]++;
			deg[sc->nodes[i].attach]++;
		}
	for (int i = 0; i < n; i++)
		net->adj_start[i + 1] = net->adj_start[i] + deg[i];
	net->adj = calloc((size_t)net->adj_start[n] + 1, sizeof(*net->adj));
	if (!net->adj)
		goto fail;
	memcpy(deg, net->adj_start, (size_t)n * sizeof(*deg));
	for (int i = 0; i < sc->nfibres; i++)
		add_edge(net, deg, sc->fibres[i].a, sc->fibres[i].b, i,
			 E_FIBRE);
	for (int i = 0; i < n; i++)
		if (sc->nodes[i].kind != NODE_ROADM &&
		    sc->nodes[i].attach >= 0)
			add_edge(net, deg, i, sc->nodes[i].attach, i,
				 sc->nodes[i].kind == NODE_ROUTER ? E_ADDDROP
								  : E_ACCESS);
	free(deg);
	deg = NULL;

	net->words = (maxw + 63) / 64;
	net->used = calloc((size_t)sc->nfibres * net->words + 1,
			   sizeof(*net->used));
	if (!net->used)
		goto fail;
	/*
	 * Wavelengths beyond a fibre's count are marked used forever; all of
	 * a fibre that is down.
	 */
	for (int i = 0; i < sc->nfibres; i++)
		for (int l = sc->fibres[i].down ? 0 : sc->fibres[i].wavelengths;
		     l < net->words * 64; l++)
			net->used[(long)i * net->words + l / 64] |=
				1ull << (l % 64);
	return net;
fail:
	free(deg);
	net_free(net);
	errno = ENOMEM;
	return NULL;
}

void net_free(struct net *net)
{
	if (!net)
		return;
	for (int i = 0; i < net->nlp; i++)
		free(net->lp[i].fib);
	free(net->lp);
	if (net->router_ends)
		for (int i = 0; i < net->sc->nnodes; i++)
			free(net->router_ends[i].v);
	FREE_ALL(net->router_ends, net->undo, net->used, net->adj,
		 net->adj_start, net);
}

bool net_any_free(const struct net *net, int fibre)
{
	const uint64_t *w = &net->used[(long)fibre * net->words];

	for (int i = 0; i < net->words; i++)
		if (~w[i])
			return true;
	return false;
}

int net_first_fit(const struct net *net, const int *fib, int n)
{
	for (int i = 0; i < net->words; i++) {
		uint64_t busy = 0;

		for (int j = 0; j < n; j++)
			busy |= net->used[(long)fib[j] * net->words + i];
		if (~busy)
			return i * 64 + __builtin_ctzll(~busy);
	}
	return -1;
}

static int push_undo(struct net *net, struct undo u)
{
	struct undo *nu = grow_array(net->undo, &net->capundo, net->nundo,
				     sizeof(*nu), 64);

	if (!nu)
		return -ENOMEM;
	net->undo = nu;
	net->undo[net->nundo++] = u;
	return 0;
}

/* Append lp's end at router a (d 0) or b (d 1); its slot, or -ENOMEM. */
static int push_end(struct net *net, const struct lightpath *lp, int id,
		    int d)
{
	struct lp_ends *e = &net->router_ends[d ? lp->b : lp->a];
	struct lp_end *nv = grow_array(e->v, &e->cap, e->n, sizeof(*nv), 4);

	if (!nv)
		return -ENOMEM;
	e->v = nv;
	e->v[e->n] = (struct lp_end){ .lp = id, .to = d ? lp->a : lp->b,
				      .w = weight_lightpath(net->sc, lp),
				      .out = lp->resid[d],
				      .in = lp->resid[1 - d] };
	return e->n++;
}

/* Direction dir of lp changed: copy it to the two ends. */
static void sync_ends(struct net *net, const struct lightpath *lp, int dir)
{
	struct lp_end *from = &net->router_ends[dir ? lp->b : lp->a]
				       .v[lp->end[dir]];
	struct lp_end *to = &net->router_ends[dir ? lp->a : lp->b]
				     .v[lp->end[1 - dir]];

	from->out = to->in = lp->resid[dir];
}

int net_light(struct net *net, int a, int b, const int *fib, int n,
	      int lambda, int task)
{
	const struct scenario *sc = net->sc;
	struct lightpath *lp;
	int id = net->nlp, err;

	lp = grow_array(net->lp, &net->caplp, net->nlp, sizeof(*lp), 64);
	if (!lp)
		return -ENOMEM;
	net->lp = lp;
	lp = &net->lp[id];
	memset(lp, 0, sizeof(*lp));
	lp->fib = malloc((size_t)n * sizeof(*lp->fib));
	if (!lp->fib)
		return -ENOMEM;
	memcpy(lp->fib, fib, (size_t)n * sizeof(*fib));
	lp->a = a;
	lp->b = b;
	lp->lambda = lambda;
	lp->nfib = n;
	lp->cap_gbps = sc->wavelength_gbps;
	lp->resid[0] = lp->resid[1] = sc->wavelength_gbps;
	lp->task = task;
	for (int i = 0; i < n; i++)
		lp->km += sc->fibres[fib[i]].km;

	err = push_end(net, lp, id, 0);
	if (err < 0)
		goto fail_fib;
	lp->end[0] = err;
	err = push_end(net, lp, id, 1);
	if (err < 0)
		goto fail_a;
	lp->end[1] = err;
	err = push_undo(net, (struct undo){ .kind = U_LIGHT, .lp = id });
	if (err)
		goto fail_b;
	for (int i = 0; i < n; i++)
		net->used[(long)fib[i] * net->words + lambda / 64] |=
			1ull << (lambda % 64);
	net->nlp++;
	return id;
fail_b:
	net->router_ends[b].n--;
fail_a:
	net->router_ends[a].n--;
fail_fib:
	free(lp->fib);
	return err;
}

int net_reserve(struct net *net, int lp, int dir, double amount)
{
	int err = push_undo(net, (struct undo){ .kind = U_RESERVE, .lp = lp,
						.dir = dir, .amount = amount });

	if (err)
		return err;
	net->lp[lp].resid[dir] -= amount;
	sync_ends(net, &net->lp[lp], dir);
	return 0;
}

void net_rollback(struct net *net, int mark)
{
	while (net->nundo > mark) {
		struct undo *u = &net->undo[--net->nundo];
		struct lightpath *lp = &net->lp[u->lp];

		if (u->kind == U_RESERVE) {
			lp->resid[u->dir] += u->amount;
			sync_ends(net, lp, u->dir);
			continue;
		}
		/* U_LIGHT: lightpaths are undone newest first. */
		for (int i = 0; i < lp->nfib; i++)
			net->used[(long)lp->fib[i] * net->words +
				  lp->lambda / 64] &= ~(1ull << (lp->lambda % 64));
		net->router_ends[lp->a].n--;
		net->router_ends[lp->b].n--;
		free(lp->fib);
		net->nlp--;
	}
}

int net_find_lightpath(const struct net *net, const struct lightpath *x)
{
	const struct lp_ends *e = &net->router_ends[x->a];

	for (int i = 0; i < e->n; i++) {
		const struct lightpath *y = &net->lp[e->v[i].lp];

		if (y->a == x->a && y->b == x->b && y->lambda == x->lambda &&
		    y->nfib == x->nfib &&
		    !memcmp(y->fib, x->fib, (size_t)x->nfib * sizeof(*x->fib)))
			return e->v[i].lp;
	}
	return -1;
}

static double ms_of_km(double km)
{
	return km * FIBRE_S_PER_KM * 1e3;
}

double weight_fibre(const struct scenario *sc, int fibre)
{
	return sc->weights.alpha +
	       sc->weights.beta * ms_of_km(sc->fibres[fibre].km);
}

double weight_adddrop(const struct scenario *sc)
{
	return sc->weights.alpha * sc->weights.adddrop;
}

double weight_access(const struct scenario *sc, int server)
{
	return sc->weights.beta * ms_of_km(sc->nodes[server].access_km);
}

double weight_lightpath(const struct scenario *sc, const struct lightpath *lp)
{
	const struct scn_weights *w = &sc->weights;

	return w->alpha * w->reuse * lp->nfib + w->beta * ms_of_km(lp->km);
}

double net_lightpath_loss(const struct scenario *sc,
			  const struct lightpath *lp)
{
	double pass = 1;

	for (int i = 0; i < lp->nfib; i++)
		pass *= 1 - sc->fibres[lp->fib[i]].loss;
	return 1 - pass;
}
