// SPDX-License-Identifier: MIT
/*
 * The timeline (timeline.h): each epoch's network is a scenario of its
 * own that borrows the nodes of the timeline's scenario and the locals of
 * its tasks, with its own fibres (some down) and its own task list (the
 * tasks present, in arrival order: the scenario's first, then arrivals in
 * time order). Each is scheduled from the one before (policy none) or from
 * scratch (full), so every consumer of a plan works on an epoch unchanged.
 */
#include "timeline.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "predict.h"
#include "wire.h"

static const char *const resched_names[] = {
	[RESCHED_NONE] = "none", [RESCHED_FULL] = "full",
	[RESCHED_AUTO] = "auto",
};

unsigned long long timeline_work_max = TIMELINE_WORK_MAX;

const char *resched_name(enum resched r)
{
	return resched_names[r];
}

int resched_find(const char *name)
{
	for (int i = 0; i <= RESCHED_AUTO; i++)
		if (!strcmp(name, resched_names[i]))
			return i;
	return -1;
}

const char *epoch_name(const struct timeline *tl, const struct epoch *e)
{
	if (e->event < 0)
		return "start";
	return e->ends ? "end" :
			 scn_event_kind_name(tl->sc->events[e->event].kind);
}

/* An epoch's scenario: borrowed nodes and locals, its own arrays. */
static void epoch_sc_free(struct scenario *sc)
{
	if (!sc)
		return;
	free(sc->fibres);
	free(sc->tasks);
	free(sc->bg);
	free(sc);
}

/*
 * A copy of prev's scenario (the last epoch's, or the base) with event k
 * of base (none when k < 0), or with the end of its traffic (ends).
 */
static struct scenario *apply(const struct scenario *base,
			      const struct scenario *prev, int k, bool ends)
{
	const struct scn_event *e = k < 0 ? NULL : &base->events[k];
	struct scenario *sc = malloc(sizeof(*sc));
	int n = prev->ntasks;

	if (!sc)
		return NULL;
	*sc = *prev;
	sc->events = NULL;
	sc->nevents = 0;
	sc->fibres = malloc(((size_t)prev->nfibres + 1) * sizeof(*sc->fibres));
	sc->tasks = malloc(((size_t)n + 2) * sizeof(*sc->tasks));
	sc->bg = malloc(((size_t)prev->nbg + 2) * sizeof(*sc->bg));
	if (!sc->fibres || !sc->tasks || !sc->bg) {
		epoch_sc_free(sc);
		return NULL;
	}
	memcpy(sc->fibres, prev->fibres,
	       (size_t)prev->nfibres * sizeof(*sc->fibres));
	memcpy(sc->tasks, prev->tasks, (size_t)n * sizeof(*sc->tasks));
	if (prev->nbg)
		memcpy(sc->bg, prev->bg, (size_t)prev->nbg * sizeof(*sc->bg));
	/* the first epoch: traffic flows from its own event on (a base
	 * that lists every flow, scenario_traffic_all, is a static run's) */
	if (!e) {
		sc->nbg = 0;
		return sc;
	}
	if (ends) {
		for (int i = 0; i < sc->nbg; i++)
			if (sc->bg[i].event == k) {
				memmove(&sc->bg[i], &sc->bg[i + 1],
					(size_t)(sc->nbg - i - 1) *
						sizeof(*sc->bg));
				sc->nbg--;
				break;
			}
		return sc;
	}
	switch (e->kind) {
	case SCN_EV_CUT:
	case SCN_EV_REPAIR:
		sc->fibres[e->fibre].down = e->kind == SCN_EV_CUT;
		break;
	case SCN_EV_ARRIVE:
		sc->tasks[sc->ntasks++] = e->task;
		break;
	case SCN_EV_LEAVE:
		for (int i = 0; i < sc->ntasks; i++)
			if (!strcmp(sc->tasks[i].name, e->task.name)) {
				memmove(&sc->tasks[i], &sc->tasks[i + 1],
					(size_t)(sc->ntasks - i - 1) *
						sizeof(*sc->tasks));
				sc->ntasks--;
				break;
			}
		break;
	case SCN_EV_TRAFFIC:
		sc->bg[sc->nbg++] = (struct scn_bg){ k, e->from, e->to,
						     e->gbps };
		break;
	}
	return sc;
}

/* Lightpaths of a that b has not (same routers, fibres, wavelength). */
static int lightpaths_not_in(const struct net *a, const struct net *b)
{
	int n = 0;

	for (int i = 0; i < a->nlp; i++)
		n += net_find_lightpath(b, &a->lp[i]) < 0;
	return n;
}

/* Whether lightpath l is on a hop of tp before hop h of path (m, t). */
static bool crossed_before(const struct task_plan *tp, int m, int t, int h,
			   int l)
{
	for (int m2 = 1; m2 <= m; m2++)
		for (int t2 = 0; t2 < 2; t2++) {
			const struct ppath *pp = t2 ? &tp->up.path[m2] :
						      &tp->bcast.path[m2];
			int end = m2 == m && t2 == t ? h :
				  m2 == m && t2 > t ? 0 : pp->nhops;

			for (int k = 0; k < end; k++)
				if (pp->hops[k].kind == HOP_LIGHTPATH &&
				    pp->hops[k].idx == l)
					return true;
		}
	return false;
}

/* Lightpaths task i of p goes over that net has not, each counted once
 * (both trees may cross one). */
static int new_lightpaths(const struct plan *p, int i, const struct net *net)
{
	const struct task_plan *tp = &p->tasks[i];
	int n = 0;

	for (int m = 1; m < tp->nmodels; m++)
		for (int t = 0; t < 2; t++) {
			const struct ppath *pp = t ? &tp->up.path[m] :
						     &tp->bcast.path[m];

			for (int h = 0; h < pp->nhops; h++) {
				int l = pp->hops[h].idx;

				if (pp->hops[h].kind == HOP_LIGHTPATH &&
				    !crossed_before(tp, m, t, h, l))
					n += net_find_lightpath(net,
						&p->net->lp[l]) < 0;
			}
		}
	return n;
}

/* How long task i of epoch e waits for its new lightpaths (e > 0). */
static double task_setup_s(const struct timeline *tl, int e, int i)
{
	const struct plan *p = tl->e[e].plan;

	return p->sc->reconfig_s *
	       new_lightpaths(p, i, tl->e[e - 1].plan->net);
}

double timeline_setup_s(const struct timeline *tl, int e)
{
	const struct epoch *ep = &tl->e[e];
	double worst = 0;

	for (int i = 0; e > 0 && i < ep->plan->ntasks; i++)
		if (ep->moved[i])
			worst = fmax(worst, task_setup_s(tl, e, i));
	return worst;
}

double timeline_live_s(const struct timeline *tl, int e)
{
	double live = 0;

	for (int k = 1; k <= e && k < tl->n; k++)
		live = fmax(live, tl->e[k].at_s + timeline_setup_s(tl, k));
	return live;
}

/*
 * How long task i of p takes to start over trees other than the ones it
 * ran on as task j of q: a task whose trees change carries on as new
 * workers (twin/lpset.h), which connect to their tree neighbours side by
 * side, so one round trip over its longest transfer path. 0 when its
 * trees are the same (its workers carry on, their connections with them).
 */
static double restart_s(const struct plan *q, int j, const struct plan *p,
			int i)
{
	const struct task_plan *x = &q->tasks[j], *y = &p->tasks[i];
	double km = 0;
	bool same = true;

	if (x->blocked || y->blocked || x->nmodels != y->nmodels)
		return 0;
	for (int m = 1; m < y->nmodels; m++) {
		same = same && x->bcast.parent[m] == y->bcast.parent[m] &&
		       x->up.parent[m] == y->up.parent[m];
		km = fmax(km, fmax(y->bcast.path[m].km, y->up.path[m].km));
	}
	return same ? 0 : 2 * km * FIBRE_S_PER_KM;
}

/*
 * When TCP carries task i of p (task j of q before) on after the cut of
 * fibre at cut_s took its data, its trees kept (its connections carry on
 * over its new paths, in force at live_s). What crossed the fibre is sent
 * again when the retransmission timer expires: WIRE_RTO_MIN_S plus the
 * round trip the connection knew (its old paths'), doubled at every
 * expiry that finds no way, so the first expiry once the new paths are in
 * resends; the message then goes again from one segment, doubling every
 * round trip of the new paths (slow start after a timeout). live_s when
 * its paths did not cross the fibre.
 */
static double tcp_back_s(const struct plan *q, int j, const struct plan *p,
			 int i, int fibre, double cut_s, double live_s)
{
	const struct task_plan *x = &q->tasks[j], *y = &p->tasks[i];
	double km_old = 0, km_new = 0;
	bool crossed = false;
	struct wire_msg wm;

	for (int m = 1; m < x->nmodels && m < y->nmodels; m++)
		for (int up = 0; up < 2; up++) {
			const struct ppath *a = up ? &x->up.path[m]
						   : &x->bcast.path[m];
			const struct ppath *b = up ? &y->up.path[m]
						   : &y->bcast.path[m];

			crossed = crossed || plan_path_crosses(q, a, fibre);
			km_old = fmax(km_old, a->km);
			km_new = fmax(km_new, b->km);
		}
	if (!crossed || wire_message(q->sc, x->task, &wm))
		return live_s;
	return wire_tcp_resume(cut_s, 2 * km_old * FIBRE_S_PER_KM, live_s) +
	       wire_slow_start_s((double)wm.segments,
				 2 * km_new * FIBRE_S_PER_KM);
}

/* When the task named name started: 0, or the time it arrived. */
static double started(const struct scenario *base, const char *name)
{
	for (int k = 0; k < base->nevents; k++)
		if (base->events[k].kind == SCN_EV_ARRIVE &&
		    !strcmp(base->events[k].task.name, name))
			return base->events[k].at_s;
	return 0;
}

/*
 * auto: which of the tasks that could stay should move. Re-scheduled from
 * scratch, a task's round may be shorter; that saving over the rounds it
 * has left must exceed what moving costs: the round it has in flight
 * (lost) and setting up each lightpath it would need that is not lit.
 */
static int choose(const struct timeline *tl, double at_s,
		  const struct scenario *sc, const struct sched_ops *ops,
		  int (*predict)(struct plan *p), const struct plan *prev,
		  bool *replan)
{
	bool *must = calloc((size_t)sc->ntasks + 1, sizeof(*must));
	struct plan *none = NULL, *full = NULL;
	int err = -ENOMEM;

	if (!must)
		return -ENOMEM;
	none = sched_plan_keep(sc, ops, prev, NULL, must);
	full = none ? sched_plan(sc, ops) : NULL;
	if (!none || !full) {
		err = -errno;
		goto out;
	}
	err = predict(none);
	if (!err)
		err = predict(full);
	for (int i = 0; !err && i < sc->ntasks; i++) {
		const struct task_plan *n = &none->tasks[i], *f = &full->tasks[i];
		double round, left, saving, cost;
		int j;

		replan[i] = false;
		if (must[i] || n->blocked || f->blocked ||
		    plan_task_same(none, i, full, i))
			continue;
		j = plan_task_find(prev, n->task->name);
		if (j < 0 || !(prev->tasks[j].round_s > 0))
			continue;
		round = prev->tasks[j].round_s;
		left = n->task->rounds -
		       floor((at_s - started(tl->sc, n->task->name)) / round) -
		       1;
		saving = (n->round_s - f->round_s) * fmax(0, left);
		cost = n->round_s +
		       sc->reconfig_s * new_lightpaths(full, i, none->net) +
		       restart_s(none, i, full, i);
		replan[i] = saving > cost;
	}
out:
	plan_free(none);
	plan_free(full);
	free(must);
	return err;
}

static int add_epoch(struct timeline *tl, struct scenario *sc,
		     const struct scn_moment *mo, const struct sched_ops *ops,
		     int (*predict)(struct plan *p))
{
	const struct plan *prev = tl->n ? tl->e[tl->n - 1].plan : NULL;
	struct epoch *e = &tl->e[tl->n];
	int err;

	memset(e, 0, sizeof(*e));
	e->sc = sc;
	e->event = mo ? mo->event : -1;
	e->ends = mo && mo->ends;
	e->at_s = mo ? mo->at_s : 0;
	e->moved = calloc((size_t)sc->ntasks + 1, sizeof(*e->moved));
	if (!e->moved) {
		epoch_sc_free(sc);
		return -ENOMEM;
	}
	tl->n++;		/* owned by the timeline from here */
	if (tl->policy == RESCHED_AUTO && prev) {
		bool *replan = calloc((size_t)sc->ntasks + 1, sizeof(*replan));

		err = replan ? choose(tl, e->at_s, sc, ops, predict, prev,
				      replan) : -ENOMEM;
		if (!err) {
			e->plan = sched_plan_keep(sc, ops, prev, replan,
						  e->moved);
			err = e->plan ? 0 : -errno;
		}
		free(replan);
		if (err)
			return err;
	} else {
		e->plan = tl->policy == RESCHED_FULL || !prev ?
			sched_plan(sc, ops) :
			sched_plan_keep(sc, ops, prev, NULL, e->moved);
		if (!e->plan)
			return -errno;
	}
	err = predict(e->plan);
	if (err)
		return err;
	if (tl->policy == RESCHED_FULL && prev) {
		/* a task moves when its trees or paths are not the same */
		for (int i = 0; i < sc->ntasks; i++) {
			int j = plan_task_find(prev, sc->tasks[i].name);

			e->moved[i] = j >= 0 && !prev->tasks[j].blocked &&
				      !plan_task_same(prev, j, e->plan, i);
		}
	}
	for (int i = 0; i < sc->ntasks; i++)
		e->nmoved += e->moved[i];
	if (prev) {
		e->lit = lightpaths_not_in(e->plan->net, prev->net);
		e->unlit = lightpaths_not_in(prev->net, e->plan->net);
	}
	return 0;
}

struct timeline *timeline_new(const struct scenario *sc,
			      const struct sched_ops *ops,
			      enum resched policy,
			      int (*predict)(struct plan *p))
{
	struct timeline *tl = calloc(1, sizeof(*tl));
	const struct scenario *last = sc;
	struct scn_moment *mo = NULL;
	unsigned long long work0;
	int err = -ENOMEM, nmo;

	if (!tl)
		return NULL;
	tl->sc = sc;
	tl->policy = policy;
	work0 = predict_work;
	nmo = scn_moments(sc, &mo);
	tl->e = calloc(2 * (size_t)sc->nevents + 2, sizeof(*tl->e));
	if (nmo < 0 || !tl->e)
		goto fail;
	for (int i = -1; i < nmo; i++) {
		struct scenario *next = apply(sc, last, i < 0 ? -1 :
					      mo[i].event, i >= 0 && mo[i].ends);

		if (!next) {
			err = -ENOMEM;
			goto fail;
		}
		err = add_epoch(tl, next, i < 0 ? NULL : &mo[i], ops, predict);
		if (!err && predict_work - work0 > timeline_work_max)
			err = -ETIME;
		if (err)
			goto fail;
		last = next;
	}
	free(mo);
	return tl;
fail:
	free(mo);
	timeline_free(tl);
	errno = -err;
	return NULL;
}

void timeline_free(struct timeline *tl)
{
	if (!tl)
		return;
	for (int i = 0; i < tl->n; i++) {
		plan_free(tl->e[i].plan);
		epoch_sc_free(tl->e[i].sc);
		free(tl->e[i].moved);
	}
	free(tl->e);
	free(tl);
}

/* The names of every task the timeline ever has: its own, then arrivals. */
static int outcome_tasks(const struct timeline *tl, struct tl_outcome *o)
{
	const struct scenario *sc = tl->sc;
	int n = sc->ntasks;

	for (int k = 0; k < sc->nevents; k++)
		n += sc->events[k].kind == SCN_EV_ARRIVE;
	o->t = calloc((size_t)n + 1, sizeof(*o->t));
	if (!o->t)
		return -ENOMEM;
	for (int i = 0; i < sc->ntasks; i++) {
		o->t[o->ntasks].name = sc->tasks[i].name;
		o->t[o->ntasks++].rounds = sc->tasks[i].rounds;
	}
	for (int k = 0; k < sc->nevents; k++)
		if (sc->events[k].kind == SCN_EV_ARRIVE) {
			o->t[o->ntasks].name = sc->events[k].task.name;
			o->t[o->ntasks++].rounds = sc->events[k].task.rounds;
		}
	for (int i = 0; i < o->ntasks; i++)
		o->t[i].start_s = o->t[i].end_s = INFINITY;
	return 0;
}

/* The fibre epoch ep's event cuts, or -1. */
static int cut_of(const struct timeline *tl, const struct epoch *ep)
{
	const struct scn_event *ev = ep->event < 0 ? NULL :
				     &tl->sc->events[ep->event];

	return ev && ev->kind == SCN_EV_CUT ? ev->fibre : -1;
}

/* A task's course through the timeline, as timeline_outcome follows it. */
struct course {
	double prog;		/* rounds done, with the fraction in flight */
	double ready;		/* when its paths are in force again */
	int last;		/* the epoch it last ran in, or -1 */
	int cut;		/* the epoch whose cut left it waiting, or -1 */
};

int timeline_outcome(const struct timeline *tl, struct tl_outcome *o)
{
	struct course *cs;
	int err;

	memset(o, 0, sizeof(*o));
	err = outcome_tasks(tl, o);
	cs = err ? NULL : calloc((size_t)o->ntasks + 1, sizeof(*cs));
	if (!cs) {
		tl_outcome_release(o);
		return -ENOMEM;
	}
	for (int k = 0; k < o->ntasks; k++)
		cs[k].last = cs[k].cut = -1;
	for (int e = 0; e < tl->n; e++) {
		const struct epoch *ep = &tl->e[e];
		const struct plan *p = ep->plan;
		double t0 = ep->at_s;
		double t1 = e + 1 < tl->n ? tl->e[e + 1].at_s : INFINITY;
		int cut = cut_of(tl, ep);

		for (int k = 0; k < o->ntasks; k++) {
			struct tl_task_outcome *x = &o->t[k];
			struct course *c = &cs[k];
			int i = plan_task_find(p, x->name);
			const struct task_plan *tp;
			double from, r, need;

			if (i < 0 || x->done >= x->rounds)
				continue;
			tp = &p->tasks[i];
			if (!isfinite(x->start_s))
				x->start_s = t0;	/* here from now */
			if (ep->moved[i]) {
				const struct plan *q = tl->e[e - 1].plan;
				int j = plan_task_find(q, x->name);
				double again = j < 0 ? 0 : restart_s(q, j, p, i);

				if (c->prog > x->done) {
					/* the round in flight is lost */
					x->interrupted_s += (c->prog - x->done) *
							    q->tasks[j].round_s;
					c->prog = x->done;
				}
				x->moves++;
				/* it waits from its event, or from the end of
				 * a wait not over yet, until the epoch is in,
				 * and new workers until they are connected */
				from = fmax(t0, c->ready);
				c->ready = timeline_live_s(tl, e) + again;
				/* trees kept over a cut: TCP's own wait */
				if (j >= 0 && !tp->blocked && cut >= 0 &&
				    again == 0)
					c->ready = tcp_back_s(q, j, p, i, cut, t0,
							      c->ready);
				x->interrupted_s += fmax(0, c->ready - from);
			}
			/*
			 * Left waiting by a cut, back when it is repaired:
			 * its connections carry on too, at TCP's first
			 * timeout since the cut once the way is back.
			 */
			if (tp->blocked && c->cut < 0 && c->last >= 0 &&
			    cut >= 0) {
				c->cut = e;
			} else if (!tp->blocked && c->cut >= 0) {
				const struct epoch *w = &tl->e[c->cut];
				const struct plan *q = tl->e[c->last].plan;
				int j = plan_task_find(q, x->name);

				if (j >= 0 && restart_s(q, j, p, i) == 0)
					c->ready = tcp_back_s(
						q, j, p, i, cut_of(tl, w),
						w->at_s, fmax(t0, c->ready));
				c->cut = -1;
			}
			if (!tp->blocked)
				c->last = e;
			if (tp->blocked || !(tp->round_s > 0))
				continue;	/* waits */
			r = tp->round_s;
			from = fmax(t0, c->ready);
			need = (x->rounds - c->prog) * r;
			if (from + need <= t1) {
				x->end_s = from + need;
				c->prog = x->rounds;
			} else if (from < t1) {
				c->prog += (t1 - from) / r;
			}
			/* the rounds this epoch completed, at its plan's bytes */
			x->bytes_links += (floor(c->prog + 1e-9) - x->done) *
					  tp->bytes_links;
			x->done = (unsigned)floor(c->prog + 1e-9);
		}
	}
	for (int k = 0; k < o->ntasks; k++) {
		const struct tl_task_outcome *x = &o->t[k];

		if (isfinite(x->end_s)) {
			o->finished++;
			o->mean_completion_s += x->end_s - x->start_s;
		}
		o->rounds_done += x->done;
		o->moves += x->moves;
		o->interrupted_s += x->interrupted_s;
		o->bytes_links += x->bytes_links;
	}
	if (o->finished)
		o->mean_completion_s /= o->finished;
	free(cs);
	return 0;
}

void tl_outcome_release(struct tl_outcome *o)
{
	free(o->t);
	memset(o, 0, sizeof(*o));
}
