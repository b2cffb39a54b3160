// SPDX-License-Identifier: MIT
/*
 * Shared scheduler machinery: the list of schedulers, the workspace, the
 * realization of a tree edge on the network of the moment (lightpaths
 * reused or lit), and the driver that places a plan's tasks in turn
 * (sched_plan and its variants). The searches are in search.c.
 */
#include "sched_impl.h"
#include "grow.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


const struct sched_ops *const sched_list[] = {
	&sched_spff, &sched_mst, &sched_kmb, &sched_tm, &sched_svi, &sched_opt,
	NULL
};

int sched_fits(const struct sched_ops *ops, const struct scenario *sc,
	       char *why, size_t n)
{
	return ops->fits ? ops->fits(sc, why, n) : 0;
}

int sched_index(const char *name)
{
	for (int i = 0; sched_list[i]; i++)
		if (!strcmp(sched_list[i]->name, name))
			return i;
	return -1;
}

const struct sched_ops *sched_find(const char *name)
{
	int i = sched_index(name);

	return i < 0 ? NULL : sched_list[i];
}

int sched_init(struct sched *s, struct plan *p)
{
	const struct net *net = p->net;
	int n = p->sc->nnodes, nadj = net->adj_start[n];

	memset(s, 0, sizeof(*s));
	s->sc = p->sc;
	s->net = p->net;
	s->plan = p;
	s->n = n;
	s->adj_w = malloc((size_t)(nadj + 1) * sizeof(*s->adj_w));
	s->steps = malloc((size_t)(n + 1) * sizeof(*s->steps));
	s->km_pred = calloc((size_t)n + 1, sizeof(*s->km_pred));
	s->acc_load = calloc((size_t)n * 4 + 1, sizeof(*s->acc_load));
	if (frontier_init(&s->fwd, n) || frontier_init(&s->bwd, n) ||
	    !s->adj_w || !s->steps || !s->km_pred || !s->acc_load) {
		sched_release(s);
		return -ENOMEM;
	}
	/*
	 * The weights of the static edges never change; computing them once
	 * keeps the node and fibre tables out of the searches' inner loop.
	 * A cut fibre (cut for the life of a plan) weighs INFINITY.
	 */
	for (int u = 0; u < n; u++) {
		for (int e = net->adj_start[u]; e < net->adj_start[u + 1];
		     e++) {
			const struct adj *a = &net->adj[e];
			struct step st = { step_of[a->kind], a->idx, u, a->to };

			s->adj_w[e] = a->kind == E_FIBRE &&
					      s->sc->fibres[a->idx].down ?
					      INFINITY : aux_weight(s, &st);
		}
	}
	return 0;
}

void sched_release(struct sched *s)
{
	if (s->km_pred)
		for (int i = 0; i < s->n; i++)
			free(s->km_pred[i]);
	FREE_ALL(s->km_pred, s->acc_load, s->steps, s->adj_w);
	frontier_release(&s->bwd);
	frontier_release(&s->fwd);
	memset(s, 0, sizeof(*s));
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

/*
 * Light fibres run[0..n) from router a to router b as one lightpath, or,
 * where the run crosses a ROADM marked in s->split that has a router, as
 * one lightpath up to that router and the rest from there; wavelength
 * lambda, or first fit for each. -EAGAIN when one has no wavelength.
 */
static int light_run(struct sched *s, struct task_plan *tp, int ti, int a,
		     int b, const int *run, int n, int lambda,
		     struct ppath *pp)
{
	const struct scenario *sc = s->sc;
	int at = sc->nodes[a].attach, from = a, start = 0;

	for (int j = 0; j < n; j++) {
		const struct scn_fibre *f = &sc->fibres[run[j]];
		int l, id, err;

		at = f->a == at ? f->b : f->a;
		if (j < n - 1 && !(s->split && s->split[at] &&
				   sc->nodes[at].router >= 0))
			continue;
		l = lambda;
		for (int i = start; l >= 0 && i <= j; i++)
			if (!net_lambda_free(s->net, run[i], l))
				l = -1;
		if (lambda < 0)
			l = net_first_fit(s->net, run + start, j + 1 - start);
		if (l < 0)
			return -EAGAIN;
		id = net_light(s->net, from, j < n - 1 ? sc->nodes[at].router :
				b, run + start, j + 1 - start, l, ti);
		if (id < 0)
			return id;
		err = int_vec_push(&tp->lit, id);
		if (!err)
			err = use_lightpath(s, tp, id, from, pp);
		if (err)
			return err;
		from = sc->nodes[at].router;
		start = j + 1;
	}
	return 0;
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
	for (int i = 0; i < nst; i++)
		pp->weight += aux_weight(s, &st[i]);
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
		case ST_ADDDROP:
			if (sc->nodes[x->from].kind == NODE_ROUTER) {
				run_from = x->from;	/* add */
				nrun = 0;
				break;
			}
			/* drop: light the run, ending at split points */
			err = light_run(s, tp, ti, run_from, x->to, run, nrun,
					lambda, pp);
			break;
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

	n = search_pair(s, a, b, -1, demand, &st);
	if (n < 0 && n != -ENOENT)
		return n;
	if (n >= 0) {
		err = realize(s, tp, ti, st, n, -1, pp);
		if (err != -EAGAIN)
			return err;
	}
	/*
	 * Continuity failed on the cheapest path (or there is none): try the
	 * graph restricted to one wavelength at a time, first fit.
	 */
	for (int l = 0; l < maxw; l++) {
		n = search_pair(s, a, b, l, demand, &st);
		if (n == -ENOENT)
			continue;
		if (n < 0)
			return n;
		err = realize(s, tp, ti, st, n, l, pp);
		if (err != -EAGAIN)
			return err;
	}
	snprintf(tp->why, sizeof(tp->why),
		 "no route with capacity and a free wavelength from '%s' to "
		 "'%s'", s->sc->nodes[a].name, s->sc->nodes[b].name);
	return -ENOSPC;
}

/* ---- driver ------------------------------------------------------------ */

/* Fibres the lightpaths tp lit since lit0 span, in all. */
static long lit_fibres(const struct sched *s, const struct task_plan *tp,
		       int lit0)
{
	long n = 0;

	for (int i = lit0; i < tp->lit.n; i++)
		n += s->net->lp[tp->lit.v[i]].nfib;
	return n;
}

/*
 * Mark in split the ROADMs with a router where the fibres the lightpaths
 * tp lit since lit0 span meet three or more of them: where the trees
 * branch. Whether any fibre is spanned twice (else nothing is marked).
 */
static bool branch_points(const struct sched *s, const struct task_plan *tp,
			  int lit0, int *uses, bool *split)
{
	const struct scenario *sc = s->sc;
	bool twice = false;

	for (int i = lit0; i < tp->lit.n; i++) {
		const struct lightpath *lp = &s->net->lp[tp->lit.v[i]];

		for (int j = 0; j < lp->nfib; j++)
			twice |= ++uses[lp->fib[j]] == 2;
	}
	for (int i = lit0; twice && i < tp->lit.n; i++) {
		const struct lightpath *lp = &s->net->lp[tp->lit.v[i]];

		for (int j = 0; j < lp->nfib; j++) {
			const struct scn_fibre *f = &sc->fibres[lp->fib[j]];
			int ends[2] = { f->a, f->b };

			for (int e = 0; e < 2; e++) {
				int v = ends[e], deg = 0;

				if (split[v] || sc->nodes[v].router < 0)
					continue;
				for (int k = s->net->adj_start[v];
				     k < s->net->adj_start[v + 1]; k++)
					deg += s->net->adj[k].kind == E_FIBRE &&
					       uses[s->net->adj[k].idx] > 0;
				split[v] = deg >= 3;
			}
		}
	}
	return twice;
}

int sched_lit_once(struct sched *s, struct task_plan *tp, int ti,
		   int (*place)(struct sched *s, struct task_plan *tp,
				int ti))
{
	int mark = net_mark(s->net), lit0 = tp->lit.n, err;
	int *uses = NULL;
	bool *split = NULL;
	long once;

	err = place(s, tp, ti);
	if (err || s->split)
		return err;
	uses = calloc((size_t)s->sc->nfibres + 1, sizeof(*uses));
	split = calloc((size_t)s->n + 1, sizeof(*split));
	if (!uses || !split) {
		err = -ENOMEM;
		goto out;
	}
	if (!branch_points(s, tp, lit0, uses, split))
		goto out;
	once = lit_fibres(s, tp, lit0);
	net_rollback(s->net, mark);
	task_unplace(tp);
	tp->lit.n = lit0;
	s->split = split;
	err = place(s, tp, ti);
	s->split = NULL;
	if (!err && lit_fibres(s, tp, lit0) < once)
		goto out;
	/* no better (or not placed): as it was the first time */
	net_rollback(s->net, mark);
	task_unplace(tp);
	tp->lit.n = lit0;
	tp->why[0] = '\0';
	err = place(s, tp, ti);
out:
	free(uses);
	free(split);
	return err;
}

void sched_load_add(struct sched *s, const struct task_plan *tp)
{
	double bytes = (double)tp->task->parameters *
		       tp->task->bytes_per_parameter;

	for (int ph = 0; ph < 2; ph++) {
		const struct tree *t = ph ? &tp->up : &tp->bcast;

		for (int m = 1; m < tp->nmodels; m++) {
			const struct ppath *pp = &t->path[m];

			if (pp->nhops <= 0)
				continue;
			s->acc_load[pp->from * 4 + ph * 2] += bytes;
			s->acc_load[pp->to * 4 + ph * 2 + 1] += bytes;
		}
	}
}

void task_unplace(struct task_plan *tp)
{
	tp->lit.n = 0;
	for (int m = 0; m < tp->nmodels; m++) {
		ppath_release(&tp->bcast.path[m]);
		ppath_release(&tp->up.path[m]);
		tp->bcast.parent[m] = tp->up.parent[m] = -1;
	}
}

/* The lightpath of s->net that is old's twin (same routers, fibres and
 * wavelength), lit now for task ti if there is none: its index or -errno. */
static int same_lightpath(struct sched *s, struct task_plan *tp, int ti,
			  const struct lightpath *old)
{
	int id = net_find_lightpath(s->net, old);

	if (id >= 0)
		return id;
	id = net_light(s->net, old->a, old->b, old->fib, old->nfib,
		       old->lambda, ti);
	if (id >= 0 && int_vec_push(&tp->lit, id))
		return -ENOMEM;
	return id;
}

/* One of a kept task's paths, hop by hop as prev had it. */
static int keep_path(struct sched *s, struct task_plan *tp, int ti,
		     const struct net *pnet, const struct ppath *old,
		     struct ppath *pp)
{
	int err = 0;

	ppath_release(pp);
	pp->from = old->from;
	pp->to = old->to;
	pp->km = old->km;
	pp->fibre_hops = old->fibre_hops;
	pp->weight = old->weight;
	pp->hops = malloc((size_t)(old->nhops + 1) * sizeof(*pp->hops));
	if (!pp->hops)
		return -ENOMEM;
	for (int h = 0; h < old->nhops && !err; h++) {
		struct hop x = old->hops[h];

		if (x.kind == HOP_LIGHTPATH) {
			x.idx = same_lightpath(s, tp, ti, &pnet->lp[x.idx]);
			err = x.idx < 0 ? x.idx :
			      net_reserve(s->net, x.idx, x.dir,
					  tp->task->demand_gbps);
		}
		pp->hops[pp->nhops++] = x;
	}
	return err;
}

/* Whether prev's placement old crosses no fibre that is down in sc. */
static bool still_whole(const struct scenario *sc, const struct plan *prev,
			const struct task_plan *old)
{
	for (int m = 1; m < old->nmodels; m++)
		for (int t = 0; t < 2; t++) {
			const struct ppath *pp = t ? &old->up.path[m] :
						     &old->bcast.path[m];

			for (int h = 0; h < pp->nhops; h++) {
				const struct lightpath *lp;

				if (pp->hops[h].kind != HOP_LIGHTPATH)
					continue;
				lp = &prev->net->lp[pp->hops[h].idx];
				for (int f = 0; f < lp->nfib; f++)
					if (sc->fibres[lp->fib[f]].down)
						return false;
			}
		}
	return true;
}

static int keep_task(struct sched *s, struct task_plan *tp, int ti,
		     const struct plan *prev, const struct task_plan *old)
{
	int err = 0;

	for (int m = 0; m < tp->nmodels && !err; m++) {
		tp->bcast.parent[m] = old->bcast.parent[m];
		tp->up.parent[m] = old->up.parent[m];
		if (m == 0)
			continue;
		err = keep_path(s, tp, ti, prev->net, &old->bcast.path[m],
				&tp->bcast.path[m]);
		if (!err)
			err = keep_path(s, tp, ti, prev->net, &old->up.path[m],
					&tp->up.path[m]);
	}
	return err;
}

/* prev's placement of the task named like sc's task i, if it is kept. */
static const struct task_plan *kept(const struct scenario *sc, int i,
				    const struct plan *prev)
{
	int j = plan_task_find(prev, sc->tasks[i].name);
	const struct task_plan *old = j < 0 ? NULL : &prev->tasks[j];

	return old && !old->blocked && still_whole(sc, prev, old) ? old : NULL;
}

struct plan *sched_plan_forced(const struct scenario *sc,
			       const struct sched_ops *ops,
			       const struct plan *prev, const bool *replan,
			       bool *moved, const char *force)
{
	struct plan *p = plan_new(sc, ops->name);
	struct sched s;
	bool *pinned = NULL;
	int err = -ENOMEM;

	if (!p)
		return NULL;
	/* the caller said why with sched_fits; this only refuses */
	if (sched_fits(ops, sc, NULL, 0)) {
		err = -E2BIG;
		goto fail;
	}
	pinned = calloc((size_t)p->ntasks + 1, sizeof(*pinned));
	if (!pinned)
		goto fail;
	err = sched_init(&s, p);
	if (err)
		goto fail;
	s.force = force;
	/*
	 * The tasks that keep their placement first, exactly as they had it:
	 * they held those resources together before, and since then
	 * resources were only freed (a task left or moved) or lost with a
	 * fibre none of them crosses. Then the others, in order.
	 */
	for (int i = 0; prev && i < p->ntasks; i++) {
		const struct task_plan *old = replan && replan[i] ? NULL :
					      kept(sc, i, prev);
		int mark = net_mark(p->net);

		if (moved)
			moved[i] = false;
		if (!old)
			continue;
		err = keep_task(&s, &p->tasks[i], i, prev, old);
		if (err == -ENOMEM)
			goto fail_sched;
		if (err) {	/* cannot happen with a consistent prev */
			net_rollback(p->net, mark);
			task_unplace(&p->tasks[i]);
			continue;
		}
		pinned[i] = true;
		sched_load_add(&s, &p->tasks[i]);
		/* its weight as it was chosen: what it lit is lit anew here
		 * by whichever kept task comes first */
		p->tasks[i].tree_weight = old->tree_weight;
		p->tasks[i].shape = old->shape;
		p->tasks[i].trees_by = old->trees_by;
		p->tasks[i].tree_sum_s = old->tree_sum_s;
		p->tasks[i].star_sum_s = old->star_sum_s;
	}
	for (int i = 0; i < p->ntasks; i++) {
		struct task_plan *tp = &p->tasks[i];
		int mark = net_mark(p->net);

		if (pinned[i])
			continue;
		if (moved) {
			int j = plan_task_find(prev, tp->task->name);

			moved[i] = j >= 0 && !prev->tasks[j].blocked;
		}
		err = ops->place ? ops->place(&s, tp, i) :
				   sched_lightest(&s, tp, i, ops->ways,
						  ops->nways);
		if (err == -ENOSPC) {
			net_rollback(p->net, mark);
			tp->blocked = true;
			task_unplace(tp);
			err = 0;
			continue;
		}
		if (err)
			goto fail_sched;
		sched_load_add(&s, tp);
		tp->tree_weight = plan_tree_weight(p, tp, &tp->bcast, NULL) +
				  plan_tree_weight(p, tp, &tp->up, &tp->bcast);
		if (isnan(tp->tree_weight)) {
			err = -ENOMEM;
			goto fail_sched;
		}
	}
	sched_release(&s);
	free(pinned);
	plan_totals(p);
	return p;
fail_sched:
	sched_release(&s);
fail:
	free(pinned);
	plan_free(p);
	errno = -err;
	return NULL;
}

struct plan *sched_plan_keep(const struct scenario *sc,
			     const struct sched_ops *ops,
			     const struct plan *prev, const bool *replan,
			     bool *moved)
{
	struct plan *p = sched_plan_forced(sc, ops, prev, replan, moved, NULL);
	int err;

	if (!p || !ops->polish || prev)
		return p;
	err = ops->polish(sc, &p);
	if (err) {
		plan_free(p);
		errno = -err;
		return NULL;
	}
	return p;
}

struct plan *sched_plan(const struct scenario *sc, const struct sched_ops *ops)
{
	return sched_plan_keep(sc, ops, NULL, NULL, NULL);
}
