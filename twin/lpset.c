// SPDX-License-Identifier: MIT
/*
 * The set of a timeline's lightpaths (lpset.h). Lightpaths are the same
 * when their routers, fibres and wavelength are (net_find_lightpath), as
 * the timeline itself compares them; the set's net lights each once,
 * without asking whether its wavelengths are free, since lightpaths of
 * different epochs may share one.
 */
#include "lpset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predict.h"
#include "grow.h"

/* Light x in net (its twin, if it has one already). Index or -errno. */
static int adopt(struct net *net, const struct lightpath *x)
{
	int l = net_find_lightpath(net, x);

	return l >= 0 ? l : net_light(net, x->a, x->b, x->fib, x->nfib,
				      x->lambda, x->task);
}

/* Every lightpath of net lit in q's network, in its order. 0 or -errno. */
static int light_all(struct plan *q, const struct net *net)
{
	for (int l = 0; l < net->nlp; l++) {
		const struct lightpath *x = &net->lp[l];
		int got = net_light(q->net, x->a, x->b, x->fib, x->nfib,
				    x->lambda, x->task);

		if (got < 0)
			return got;
	}
	return 0;
}

/* pp into *to, its lightpaths renumbered by map (NULL: as they are). */
static int copy_path(struct ppath *to, const struct ppath *pp,
		     const int *map)
{
	*to = *pp;
	to->hops = malloc(((size_t)pp->nhops + 1) * sizeof(*to->hops));
	if (!to->hops)
		return -ENOMEM;
	for (int h = 0; h < pp->nhops; h++) {
		to->hops[h] = pp->hops[h];
		if (map && pp->hops[h].kind == HOP_LIGHTPATH)
			to->hops[h].idx = map[pp->hops[h].idx];
	}
	return 0;
}

static int copy_task(struct task_plan *to, const struct task_plan *tp,
		     const int *map)
{
	int err = 0;

	to->blocked = tp->blocked;
	memcpy(to->why, tp->why, sizeof(to->why));
	if (tp->blocked)
		return 0;
	for (int k = 0; k < 2; k++) {
		struct tree *dst = k ? &to->up : &to->bcast;
		const struct tree *src = k ? &tp->up : &tp->bcast;

		memcpy(dst->parent, src->parent,
		       (size_t)tp->nmodels * sizeof(*dst->parent));
		for (int m = 1; m < tp->nmodels && !err; m++) {
			ppath_release(&dst->path[m]);
			err = copy_path(&dst->path[m], &src->path[m], map);
		}
	}
	return err;
}

static bool same_parents(const struct task_plan *x, const struct task_plan *y)
{
	size_t n = (size_t)x->nmodels * sizeof(int);

	return !memcmp(x->bcast.parent, y->bcast.parent, n) &&
	       !memcmp(x->up.parent, y->up.parent, n);
}

/* Task name's index in p, or -1. */
static int task_in(const struct plan *p, const char *name)
{
	for (int i = 0; i < p->ntasks; i++)
		if (!strcmp(p->tasks[i].task->name, name))
			return i;
	return -1;
}

/*
 * The task of s's scenario that carries task b's name in epoch e: b, or
 * the latest of its incarnations begun by then.
 */
static int slot_at(const struct lpset *s, int b, int e)
{
	int at = b;

	for (int t = b + 1; t < s->sc->ntasks; t++)
		if (s->base[t] == b && s->since[t] <= e)
			at = t;
	return at;
}

/* Not running: blocked in the epoch's plan, with why (tp: its own). */
static void idle(struct task_plan *q, bool ran, const struct task_plan *tp)
{
	q->blocked = true;
	snprintf(q->why, sizeof(q->why), "%s", tp ? tp->why : ran ?
		 "it has left" : "it has not arrived");
}

/* An incarnation of task b not in force in epoch e: blocked, with why. */
static void other_trees(const struct lpset *s, struct task_plan *q, int t,
			int e)
{
	const struct timeline *tl = s->tl;
	int at = slot_at(s, s->base[t], e);
	const struct epoch *ep = &tl->e[at > t ? s->since[at] : s->since[t]];

	q->blocked = true;
	snprintf(q->why, sizeof(q->why), "it %s new trees at the %s at %g s",
		 at > t ? "carries on over" : "runs on these trees from",
		 epoch_name(tl, ep), ep->at_s);
}

/*
 * The background traffic of q (every flow of the timeline, s->sc->bg): a
 * flow routed in src, the timeline's epoch plan, goes the same way over
 * the set's lightpaths (map); any other does not flow in the epoch, with
 * why.
 */
static int epoch_traffic(struct plan *q, const struct plan *src,
			 const int *map)
{
	int err;

	if (!q->sc->nbg)
		return 0;
	err = plan_bg_new(q);
	if (err)
		return err;
	for (int i = 0; i < q->nbg; i++) {
		struct bg_flow *f = &q->bg[i];
		const struct bg_flow *g = NULL;

		for (int j = 0; j < src->nbg && !g; j++)
			if (src->bg[j].bg->event == f->bg->event)
				g = &src->bg[j];
		if (!g) {
			snprintf(f->why, sizeof(f->why), "it does not flow "
				 "in this epoch");
			continue;
		}
		if (!g->routed) {
			memcpy(f->why, g->why, sizeof(f->why));
			continue;
		}
		if (copy_path(&f->path, &g->path, map))
			return -ENOMEM;
		f->routed = true;
	}
	return 0;
}

/* Epoch e's plan over the set's lightpaths; s->plan[e - 1] made. */
static int epoch_plan(struct lpset *s, int e, const int *map)
{
	const struct timeline *tl = s->tl;
	const struct epoch *ep = &tl->e[e];
	const struct plan *src = ep->plan;
	const struct plan *prev = e ? s->plan[e - 1] : NULL;
	struct plan *q = plan_new(s->sc, src->scheduler);
	int err = q ? light_all(q, s->net) : -ENOMEM;

	for (int i = 0; q && i < src->ntasks; i++)
		s->index[e][i] = slot_at(s, task_in(q, src->tasks[i].task->name),
					 e);
	for (int t = 0; q && t < q->ntasks && !err; t++) {
		const char *name = q->tasks[t].task->name;
		int i = task_in(src, name);
		const struct task_plan *tp = i < 0 ? NULL : &src->tasks[i];
		const struct task_plan *was = prev ? &prev->tasks[t] : NULL;
		bool ran = e > 0 && s->runs[e - 1][t];

		if (slot_at(s, s->base[t], e) != t) {
			/* an incarnation not in force: before, or after */
			other_trees(s, &q->tasks[t], t, e);
		} else if (!tp || (tp->blocked && !ran)) {
			/* not arrived, left, or never placed yet */
			idle(&q->tasks[t], ran, tp);
		} else if (tp->blocked) {
			/* nothing reaches it: it waits on what it had */
			s->runs[e][t] = s->waits[e][t] = true;
			err = copy_task(&q->tasks[t], was, NULL);
		} else {
			/* (an incarnation begins with its own trees) */
			s->runs[e][t] = true;
			err = copy_task(&q->tasks[t], tp, map);
		}
	}
	if (!err)
		err = epoch_traffic(q, src, map);
	if (err) {
		plan_free(q);
		return err;
	}
	s->plan[e] = q;
	return 0;
}

/*
 * Every task the timeline ever has, its own first, then arrivals in the
 * order of its events, and every background flow (its traffic events, in
 * order): a scenario of their own that borrows the rest.
 */
static struct scenario *every_task(const struct scenario *sc)
{
	struct scenario *x = malloc(sizeof(*x));
	int n = sc->ntasks;

	if (!x)
		return NULL;
	*x = *sc;
	for (int k = 0; k < sc->nevents; k++)
		n += sc->events[k].kind == SCN_EV_ARRIVE;
	x->tasks = malloc(((size_t)n + 1) * sizeof(*x->tasks));
	if (!x->tasks) {
		free(x);
		return NULL;
	}
	memcpy(x->tasks, sc->tasks, (size_t)sc->ntasks * sizeof(*x->tasks));
	x->ntasks = sc->ntasks;
	for (int k = 0; k < sc->nevents; k++)
		if (sc->events[k].kind == SCN_EV_ARRIVE)
			x->tasks[x->ntasks++] = sc->events[k].task;
	x->bg = NULL;
	if (scenario_traffic_all(x)) {
		free(x->tasks);
		free(x);
		return NULL;
	}
	return x;
}

/*
 * Whether task b (of s's scenario) changes its trees in epoch e while it
 * runs, and the trees it now has: *running (placed, or waiting on the
 * paths it had) and *last (the trees it last ran on) carry its state from
 * the epoch before.
 */
static bool changes_trees(const struct lpset *s, int b, int e, bool *running,
			  const struct task_plan **last)
{
	const struct plan *src = s->tl->e[e].plan;
	int i = task_in(src, s->sc->tasks[b].name);
	const struct task_plan *tp = i < 0 ? NULL : &src->tasks[i];
	bool change = *running && tp && !tp->blocked && *last &&
		      !same_parents(tp, *last);

	*running = tp && (!tp->blocked || *running);
	if (tp && !tp->blocked)
		*last = tp;
	return change;
}

/*
 * A task whose trees change while it runs (its workers keep a connection
 * per tree edge, and each transfer its own addresses) carries on as an
 * incarnation of its own: one more task of s->sc per change, after every
 * other, with the epoch it begins at (since), the task it carries on from
 * (prev) and the first of its line (base).
 */
static int incarnations(struct lpset *s)
{
	int n0 = s->sc->ntasks, n = n0;
	struct scn_task *tasks;

	for (int b = 0; b < n0; b++) {
		const struct task_plan *last = NULL;
		bool running = false;

		for (int e = 0; e < s->nepochs; e++)
			n += changes_trees(s, b, e, &running, &last);
	}
	tasks = realloc(s->sc->tasks, ((size_t)n + 1) * sizeof(*tasks));
	s->base = calloc((size_t)n + 1, sizeof(*s->base));
	s->since = calloc((size_t)n + 1, sizeof(*s->since));
	s->prev = calloc((size_t)n + 1, sizeof(*s->prev));
	if (tasks)
		s->sc->tasks = tasks;
	if (!tasks || !s->base || !s->since || !s->prev)
		return -ENOMEM;
	for (int b = 0; b < n0; b++) {
		const struct task_plan *last = NULL;
		bool running = false;
		int cur = b;

		s->base[b] = b;
		s->prev[b] = -1;
		for (int e = 0; e < s->nepochs; e++) {
			int k;

			if (!changes_trees(s, b, e, &running, &last))
				continue;
			k = s->sc->ntasks++;
			tasks[k] = tasks[b];
			s->base[k] = b;
			s->since[k] = e;
			s->prev[k] = cur;
			cur = k;
		}
	}
	return 0;
}

/*
 * The tasks that would wait for ever (no path reaches them in the last
 * epoch, nor in any epoch after the one their wait began at): lost[t]
 * that epoch, -1 for the others.
 */
static void find_lost(struct lpset *s)
{
	int k = s->nepochs - 1;

	for (int t = 0; t < s->sc->ntasks; t++) {
		int since = k;

		s->lost[t] = -1;
		if (!s->waits[k][t])
			continue;
		while (since > 1 && s->waits[since - 1][t])
			since--;
		s->lost[t] = since;
	}
}

int lpset_new(const struct timeline *tl, struct lpset **out, char *why,
	      size_t len)
{
	struct lpset *s = calloc(1, sizeof(*s));
	int *map = NULL, err;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->tl = tl;
	s->nepochs = tl->n;
	err = -ENOMEM;
	s->sc = every_task(tl->sc);
	s->net = net_new(tl->sc);
	s->plan = calloc((size_t)tl->n + 1, sizeof(*s->plan));
	s->lit = calloc((size_t)tl->n + 1, sizeof(*s->lit));
	s->runs = calloc((size_t)tl->n + 1, sizeof(*s->runs));
	s->waits = calloc((size_t)tl->n + 1, sizeof(*s->waits));
	s->index = calloc((size_t)tl->n + 1, sizeof(*s->index));
	if (!s->sc || incarnations(s))
		goto fail;
	s->lost = calloc((size_t)s->sc->ntasks + 1, sizeof(*s->lost));
	if (!s->sc || !s->net || !s->plan || !s->lit || !s->runs ||
	    !s->waits || !s->index || !s->lost)
		goto fail;
	/* every epoch's lightpaths first, so each plan has them all */
	for (int e = 0; e < tl->n; e++)
		for (int l = 0; l < tl->e[e].plan->net->nlp; l++) {
			err = adopt(s->net, &tl->e[e].plan->net->lp[l]);
			if (err < 0)
				goto fail;
		}
	for (int e = 0; e < tl->n; e++) {
		const struct net *n = tl->e[e].plan->net;

		err = -ENOMEM;
		s->lit[e] = calloc((size_t)s->net->nlp + 1, sizeof(**s->lit));
		s->runs[e] = calloc((size_t)s->sc->ntasks + 1,
				    sizeof(**s->runs));
		s->waits[e] = calloc((size_t)s->sc->ntasks + 1,
				     sizeof(**s->waits));
		s->index[e] = calloc((size_t)tl->e[e].plan->ntasks + 1,
				     sizeof(**s->index));
		free(map);
		map = malloc(((size_t)n->nlp + 1) * sizeof(*map));
		if (!s->lit[e] || !s->runs[e] || !s->waits[e] ||
		    !s->index[e] || !map)
			goto fail;
		for (int l = 0; l < n->nlp; l++) {
			map[l] = net_find_lightpath(s->net, &n->lp[l]);
			s->lit[e][map[l]] = true;
		}
		err = epoch_plan(s, e, map);
		if (err)
			goto fail;
		/* its figures: byte-links per task, the wavelengths lit */
		plan_totals(s->plan[e]);
		s->plan[e]->wavelength_links = 0;
		for (int l = 0; l < s->net->nlp; l++)
			if (s->lit[e][l])
				s->plan[e]->wavelength_links +=
					s->net->lp[l].nfib;
	}
	free(map);
	find_lost(s);
	*out = s;
	return 0;
fail:
	free(map);
	lpset_free(s);
	if (err == -ENOMEM)
		snprintf(why, len, "out of memory");
	return err;
}

void lpset_free(struct lpset *s)
{
	if (!s)
		return;
	for (int e = 0; e < s->nepochs; e++) {
		if (s->plan)
			plan_free(s->plan[e]);
		if (s->lit)
			free(s->lit[e]);
		if (s->runs)
			free(s->runs[e]);
		if (s->waits)
			free(s->waits[e]);
		if (s->index)
			free(s->index[e]);
	}
	FREE_ALL(s->plan, s->lit, s->runs, s->waits, s->index, s->lost, s->base,
		 s->since, s->prev);
	net_free(s->net);
	if (s->sc) {
		free(s->sc->tasks);
		free(s->sc->bg);
	}
	free(s->sc);
	free(s);
}

struct plan *lpset_plan_without(const struct lpset *s, int e,
				const bool *absent)
{
	const struct plan *src = s->plan[e];
	struct plan *q = plan_new(s->sc, src->scheduler);
	int err = q ? light_all(q, s->net) : -ENOMEM;

	for (int t = 0; q && t < q->ntasks && !err; t++) {
		if (!absent[t] || src->tasks[t].blocked) {
			err = copy_task(&q->tasks[t], &src->tasks[t], NULL);
			continue;
		}
		q->tasks[t].blocked = true;
		snprintf(q->tasks[t].why, sizeof(q->tasks[t].why),
			 "its workers are not ready yet");
	}
	if (q && !err && src->nbg) {
		q->bg = calloc((size_t)src->nbg, sizeof(*q->bg));
		err = q->bg ? 0 : -ENOMEM;
		for (int i = 0; q->bg && i < src->nbg && !err; i++) {
			q->bg[i] = src->bg[i];
			q->bg[i].path.hops = NULL;
			if (src->bg[i].routed)
				err = copy_path(&q->bg[i].path,
						&src->bg[i].path, NULL);
		}
		q->nbg = src->nbg;
	}
	if (err) {
		plan_free(q);
		errno = -err;
		return NULL;
	}
	/* its figures, as the epoch's (the lightpaths lit are the same) */
	plan_totals(q);
	q->wavelength_links = src->wavelength_links;
	return q;
}

int lpset_lost_why(const struct lpset *s, int t, char *buf, size_t len)
{
	const struct epoch *e;

	if (t < 0 || t >= s->sc->ntasks || s->lost[t] < 0)
		return -1;
	e = &s->tl->e[s->lost[t]];
	return snprintf(buf, len, "task '%s' has no way round the %s at %g s,"
			" which is never repaired: its servers are cut off",
			s->sc->tasks[t].name, epoch_name(s->tl, e), e->at_s);
}

int lpset_follow(const struct scenario *sc, const struct sched_ops *ops,
		 enum resched policy, int (*predict)(struct plan *p),
		 struct timeline **tl, struct lpset **set, char *why,
		 size_t len)
{
	int err;

	*set = NULL;
	*tl = timeline_new(sc, ops, policy, predict);
	if (!*tl) {
		err = errno ? -errno : -ENOMEM;
		snprintf(why, len, "cannot schedule '%s' as its events change "
			 "it: %s", sc->name, predict_strerror(err));
		return err;
	}
	err = lpset_new(*tl, set, why, len);
	if (err) {
		lpset_free(*set);
		*set = NULL;
		timeline_free(*tl);
		*tl = NULL;
	}
	return err;
}
