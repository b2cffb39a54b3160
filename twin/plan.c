// SPDX-License-Identifier: MIT
#include "plan.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int tree_alloc(struct tree *t, int nmodels)
{
	t->parent = malloc((size_t)nmodels * sizeof(*t->parent));
	t->path = calloc((size_t)nmodels, sizeof(*t->path));
	if (!t->parent || !t->path) {
		free(t->parent);
		free(t->path);
		t->parent = NULL;
		t->path = NULL;
		return -ENOMEM;
	}
	for (int i = 0; i < nmodels; i++)
		t->parent[i] = -1;
	return 0;
}

void ppath_release(struct ppath *pp)
{
	free(pp->hops);
	memset(pp, 0, sizeof(*pp));
}

void tree_release(struct tree *t, int nmodels)
{
	if (t->path)
		for (int i = 0; i < nmodels; i++)
			ppath_release(&t->path[i]);
	free(t->path);
	free(t->parent);
	t->path = NULL;
	t->parent = NULL;
}

struct plan *plan_new(const struct scenario *sc, const char *scheduler)
{
	struct plan *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->sc = sc;
	p->scheduler = scheduler;
	p->net = net_new(sc);
	p->tasks = calloc((size_t)sc->ntasks + 1, sizeof(*p->tasks));
	if (!p->net || !p->tasks)
		goto fail;
	p->ntasks = sc->ntasks;
	for (int i = 0; i < sc->ntasks; i++) {
		struct task_plan *tp = &p->tasks[i];
		const struct scn_task *t = &sc->tasks[i];

		tp->task = t;
		tp->nmodels = 1 + t->nlocals;
		tp->server = malloc((size_t)tp->nmodels * sizeof(*tp->server));
		if (!tp->server)
			goto fail;
		tp->server[0] = t->global;
		memcpy(tp->server + 1, t->locals,
		       (size_t)t->nlocals * sizeof(*t->locals));
		if (tree_alloc(&tp->bcast, tp->nmodels) ||
		    tree_alloc(&tp->up, tp->nmodels))
			goto fail;
	}
	return p;
fail:
	plan_free(p);
	errno = ENOMEM;
	return NULL;
}

void plan_free(struct plan *p)
{
	if (!p)
		return;
	for (int i = 0; p->tasks && i < p->ntasks; i++) {
		struct task_plan *tp = &p->tasks[i];

		tree_release(&tp->bcast, tp->nmodels);
		tree_release(&tp->up, tp->nmodels);
		free(tp->server);
		free(tp->lit.v);
	}
	free(p->tasks);
	free(p->link_bytes);
	for (int i = 0; i < p->nbg; i++)
		ppath_release(&p->bg[i].path);
	free(p->bg);
	free(p->down);
	net_free(p->net);
	free(p);
}

void plan_prediction_forget(struct plan *p)
{
	free(p->link_bytes);
	p->link_bytes = NULL;
	for (int i = 0; i < p->nbg; i++)
		ppath_release(&p->bg[i].path);
	free(p->bg);
	p->bg = NULL;
	p->nbg = 0;
	p->predicted = false;
	p->predictor = NULL;
	p->mean_round_s = 0;
	for (int i = 0; i < p->ntasks; i++) {
		struct task_plan *tp = &p->tasks[i];

		tp->bcast_s = tp->compute_s = tp->upload_s = tp->round_s = 0;
	}
}

double plan_link_gbps(const struct plan *p, int link)
{
	int n2 = 2 * p->sc->nnodes;

	if (link < n2)
		return p->sc->nodes[link / 2].access_gbps;
	return p->net->lp[(link - n2) / 2].cap_gbps;
}

int hop_next(const struct plan *p, int at, const struct hop *h)
{
	if (h->kind == HOP_ACCESS)
		return h->dir == 0 ? p->sc->nodes[h->idx].attach : h->idx;
	return p->net->lp[h->idx].a == at ? p->net->lp[h->idx].b
					  : p->net->lp[h->idx].a;
}

bool task_aggregates(const struct task_plan *tp, int m)
{
	if (m == 0)
		return true;
	for (int i = 1; i < tp->nmodels; i++)
		if (tp->up.parent[i] == m)
			return true;
	return false;
}

static bool tree_crosses_lp(const struct task_plan *tp,
			    const struct tree *t, int lp)
{
	for (int m = 1; m < tp->nmodels; m++)
		for (int h = 0; h < t->path[m].nhops; h++)
			if (t->path[m].hops[h].kind == HOP_LIGHTPATH &&
			    t->path[m].hops[h].idx == lp)
				return true;
	return false;
}

static bool lit_by_task(const struct task_plan *tp, int lp)
{
	for (int i = 0; i < tp->lit.n; i++)
		if (tp->lit.v[i] == lp)
			return true;
	return false;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

double plan_tree_weight(const struct plan *p, const struct task_plan *tp,
			const struct tree *t, const struct tree *before)
{
	const struct scenario *sc = p->sc;
	long *key;
	size_t hops = 0;
	int n = 0;
	double w = 0;

	for (int m = 1; m < tp->nmodels; m++)
		hops += (size_t)t->path[m].nhops;
	key = malloc((hops + 1) * sizeof(*key));
	if (!key)
		return NAN;
	/* every hop once: access links as -1 - server, lightpaths as index */
	for (int m = 1; m < tp->nmodels; m++)
		for (int h = 0; h < t->path[m].nhops; h++) {
			const struct hop *x = &t->path[m].hops[h];

			key[n++] = x->kind == HOP_ACCESS ? -1L - x->idx : x->idx;
		}
	qsort(key, (size_t)n, sizeof(*key), cmp_long);
	for (int i = 0; i < n; i++) {
		const struct lightpath *lp;

		if (i && key[i] == key[i - 1])
			continue;
		if (key[i] < 0) {
			w += weight_access(sc, (int)(-1 - key[i]));
			continue;
		}
		lp = &p->net->lp[key[i]];
		if (lit_by_task(tp, (int)key[i]) &&
		    !(before && tree_crosses_lp(tp, before, (int)key[i]))) {
			/* lit for this tree: what lighting it cost */
			w += 2 * weight_adddrop(sc);
			for (int f = 0; f < lp->nfib; f++)
				w += weight_fibre(sc, lp->fib[f]);
		} else {
			w += weight_lightpath(sc, lp);
		}
	}
	free(key);
	return w;
}

void plan_totals(struct plan *p)
{
	p->blocked = 0;
	p->wavelength_links = 0;
	p->bytes_links = 0;
	for (int i = 0; i < p->net->nlp; i++)
		p->wavelength_links += p->net->lp[i].nfib;
	for (int i = 0; i < p->ntasks; i++) {
		struct task_plan *tp = &p->tasks[i];
		double bytes = (double)scn_task_bytes(tp->task);
		long hops = 0;

		tp->wavelength_links = 0;
		tp->bytes_links = 0;
		if (tp->blocked) {
			tp->tree_weight = 0;
			p->blocked++;
			continue;
		}
		for (int j = 0; j < tp->lit.n; j++)
			tp->wavelength_links += p->net->lp[tp->lit.v[j]].nfib;
		for (int m = 1; m < tp->nmodels; m++)
			hops += tp->bcast.path[m].fibre_hops +
				tp->up.path[m].fibre_hops;
		tp->bytes_links = bytes * (double)hops;
		p->bytes_links += tp->bytes_links;
	}
}

static bool same_path(const struct plan *a, const struct ppath *x,
		      const struct plan *b, const struct ppath *y)
{
	if (x->nhops != y->nhops || x->from != y->from || x->to != y->to)
		return false;
	for (int h = 0; h < x->nhops; h++) {
		const struct hop *u = &x->hops[h], *v = &y->hops[h];

		if (u->kind != v->kind || u->dir != v->dir)
			return false;
		if (u->kind == HOP_ACCESS ? u->idx != v->idx :
		    net_find_lightpath(b->net, &a->net->lp[u->idx]) != v->idx)
			return false;
	}
	return true;
}

int plan_task_find(const struct plan *p, const char *name)
{
	for (int i = 0; p && i < p->ntasks; i++)
		if (!strcmp(p->tasks[i].task->name, name))
			return i;
	return -1;
}

bool plan_task_same(const struct plan *a, int i, const struct plan *b, int j)
{
	const struct task_plan *x = &a->tasks[i], *y = &b->tasks[j];

	if (x->blocked != y->blocked || x->nmodels != y->nmodels)
		return false;
	for (int m = 0; !x->blocked && m < x->nmodels; m++) {
		if (x->bcast.parent[m] != y->bcast.parent[m] ||
		    x->up.parent[m] != y->up.parent[m])
			return false;
		if (m && (!same_path(a, &x->bcast.path[m], b,
				     &y->bcast.path[m]) ||
			  !same_path(a, &x->up.path[m], b, &y->up.path[m])))
			return false;
	}
	return true;
}

bool plan_lightpath_crosses(const struct plan *p, int l, int f)
{
	const struct lightpath *lp = &p->net->lp[l];

	for (int i = 0; i < lp->nfib; i++)
		if (lp->fib[i] == f)
			return true;
	return false;
}

double plan_lightpath_dark_until(const struct plan *p, int l, double t)
{
	double until = t;

	for (int d = 0; d < p->ndown; d++) {
		const struct fibre_down *x = &p->down[d];

		if (x->on_s <= t && t < x->off_s &&
		    plan_lightpath_crosses(p, l, x->fibre))
			until = fmax(until, x->off_s);
	}
	return until;
}

bool plan_path_crosses(const struct plan *p, const struct ppath *pp, int f)
{
	for (int h = 0; h < pp->nhops; h++)
		if (pp->hops[h].kind == HOP_LIGHTPATH &&
		    plan_lightpath_crosses(p, pp->hops[h].idx, f))
			return true;
	return false;
}

bool plan_task_crosses(const struct plan *p, int t, int f)
{
	const struct task_plan *tp = &p->tasks[t];

	for (int m = 1; !tp->blocked && m < tp->nmodels; m++)
		if (plan_path_crosses(p, &tp->bcast.path[m], f) ||
		    plan_path_crosses(p, &tp->up.path[m], f))
			return true;
	return false;
}
