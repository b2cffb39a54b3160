// SPDX-License-Identifier: MIT
/*
 * Tree schedulers over the auxiliary graphs: mst, kmb, svi and tm (whose
 * trees sched_tm.c grows).
 *
 * Flexible scheduler: for each procedure (broadcast, then upload) an MST
 * over the task's servers on the metric closure of the auxiliary graph of
 * the moment, rooted at the global model. Each tree edge is then routed on
 * the current state — after the edges before it — so it reuses the
 * lightpaths the task has just lit where they have room, and lights new
 * ones by first fit only over bare fibre. The upload tree is computed
 * after the broadcast tree is in place, so it sees the reverse capacity of
 * the lightpaths the broadcast lit as cheap. Models with children in the
 * upload tree aggregate.
 *
 * With a stretch in the scenario's weights, a model whose estimated
 * arrival along the tree is more than stretch times its arrival straight
 * from the global model hangs from the global model instead (struct
 * reach, bound_parent), unless it would still be in before the round's
 * slowest model, straight, with the twin's compute model for training
 * (reach_clock): models on servers that train fast relay deeper. With
 * never_slower (the default), mst is never
 * slower than the fixed scheduler's star (every local model straight to
 * the global one over a direct lightpath, as spff places it) on the same
 * network state:
 * while the tasks placed so far have at most SCHED_STAR_CHECK_TRANSFERS
 * transfers (each check predicts the plan so far twice: bounded, so that
 * a plan of many tasks is not quadratic in them), the twin predicts them
 * with the task's trees and with a star in their place, and the task is
 * sent as a star where that ends the rounds placed sooner, summed (the
 * task's own round and the ones it shares links with: the mean a user
 * sees). The scenario's relay setting counts: pipelined relays make trees
 * cheap in time, relays that store add a whole transfer per level.
 */
#include "sched_impl.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net.h"
#include "predict.h"

/*
 * Where a task's model gets to in a round, as mst estimates it to bound a
 * tree's depth: the slowest access link on the way drains what the tasks
 * placed so far send over it with this model (load + bytes, at its rate:
 * transfers of equal size sharing a link fairly end together), and the
 * way adds its propagation. Relays that store add each hop's drain;
 * pipelined ones only the slowest hop's and a chunk per relay.
 */
struct reach {
	const struct sched *s;
	const struct task_plan *tp;
	bool upload, piped;
	double bytes;
	int *fib;		/* sched_km_route's buffer */
	int *kids;		/* children so far, per model */
	double *lag, *peak;	/* per model: the sum and the max part */
	/*
	 * The round's clock (struct tree_est): per model, when what it sends
	 * is ready (0 broadcasting; uploading, when it has the model and has
	 * trained), the latest its upload ancestors let what passes them go
	 * on (uploading), and after what it needs to be in for the round not
	 * to end later than its lower bound.
	 */
	double *ready, *gate, *train, *after;
	double bound;		/* the round's lower bound: no model later */
};

static double drain(const struct reach *r, int server, int dir, int copies)
{
	const struct scn_node *n = &r->s->sc->nodes[server];
	double load = r->s->acc_load[server * 4 + r->upload * 2 + dir];

	return (load + copies * r->bytes) * 8 / (n->access_gbps * 1e9);
}

/* Propagation between two servers on the shortest route by km. */
static double prop_s(struct reach *r, int a, int b)
{
	struct sched *s = (struct sched *)r->s;
	const struct scn_node *na = &s->sc->nodes[a], *nb = &s->sc->nodes[b];
	int ra = s->sc->nodes[na->attach].attach;
	int rb = s->sc->nodes[nb->attach].attach;
	double km = na->access_km + nb->access_km;
	int n = ra == rb ? 0 : sched_km_route(s, ra, rb, r->fib);

	for (int i = 0; i < n; i++)
		km += s->sc->fibres[r->fib[i]].km;
	return n < 0 ? NAN : km * FIBRE_S_PER_KM;
}

/*
 * The estimated arrival of model m hung from p over a way of propagation
 * prop: its two parts in *lag and *peak.
 */
static void reach_via(const struct reach *r, int m, int p, double prop,
		      double *lag, double *peak)
{
	const struct task_plan *tp = r->tp;
	int sp = tp->server[p], sm = tp->server[m];
	/* the parent sends (broadcast) or takes (upload) one more copy */
	double d = r->upload ? fmax(drain(r, sm, 0, 1),
				    drain(r, sp, 1, r->kids[p] + 1)) :
			       fmax(drain(r, sp, 0, r->kids[p] + 1),
				    drain(r, sm, 1, 1));
	double chunk = fmin((double)r->s->sc->chunk_bytes, r->bytes) * 8 /
		       (fmin(r->s->sc->nodes[sp].access_gbps,
			     r->s->sc->nodes[sm].access_gbps) * 1e9);

	if (r->piped) {
		*lag = r->lag[p] + prop + (p ? chunk : 0);
		*peak = fmax(r->peak[p], d);
	} else {
		*lag = r->lag[p] + prop + d;
		*peak = 0;
	}
}

/*
 * Hang m from the root rather than from p when its estimated arrival
 * through p is more than stretch times the arrival straight from the
 * root — Khuller, Raghavachari and Young's bound on a spanning tree's
 * paths (1995), on the estimate above — unless through p it is still in
 * by when it must be for the round not to end past its lower bound
 * (r->after): a model that trains fast, or had the model early, may
 * relay deeper than one the round waits for. Uploading, what m sends is
 * ready once it has trained, and goes on from each ancestor no sooner
 * than that one is ready (r->gate: an aggregator that trains slowly holds
 * back what it aggregates), and no sooner than p has folded it and its
 * other children in (predict_agg_s: a loaded aggregator's cpu).
 */
static int bound_parent(struct reach *r, int m, int p, double stretch)
{
	double lag, peak, dlag, dpeak, via, pv, pd;

	if (!p || !(stretch > 0))
		return p;
	pv = prop_s(r, r->tp->server[p], r->tp->server[m]);
	pd = prop_s(r, r->tp->server[0], r->tp->server[m]);
	if (isnan(pd))
		return p;
	reach_via(r, m, p, isnan(pv) ? 0 : pv, &lag, &peak);
	reach_via(r, m, 0, pd, &dlag, &dpeak);
	/* uploading, p folds m's update into its own: its cpu's time */
	via = fmax(r->ready[m] + lag, r->gate[p]) + peak +
	      (r->upload ? predict_agg_s(r->s->plan, r->tp, p,
					 r->kids[p] + 1) : 0);
	if (via <= r->after[m])
		return p;
	return via - r->ready[m] > stretch * (dlag + dpeak) ? 0 : p;
}

/*
 * Model m's estimate straight from the root, one copy on each link: its
 * arrival going down (*down) and its update's going up (*up).
 */
static void reach_direct(struct reach *r, int m, double *down, double *up)
{
	double pd = prop_s(r, r->tp->server[0], r->tp->server[m]);
	bool upload = r->upload;
	double lag, peak;

	pd = isnan(pd) ? 0 : pd;
	r->upload = false;
	reach_via(r, m, 0, pd, &lag, &peak);
	*down = lag + peak;
	r->upload = true;
	reach_via(r, m, 0, pd, &lag, &peak);
	*up = lag + peak;
	r->upload = upload;
}

/*
 * The round's clock for a tree's bound: each model's training time (the
 * twin's compute model: its server's cpu shared by every model placed on
 * it), when what it sends is ready, and by when it must be in. The round
 * cannot end before its slowest model does, straight: r->bound, the
 * latest of down + train + up over the models. Broadcasting, model m must
 * have the model by bound - train - up; uploading (at[]: each model's
 * estimated arrival in the broadcast tree), its update is ready at at +
 * train and must be in by bound.
 */
static void reach_clock(struct reach *r, const double *at)
{
	int k = r->tp->nmodels;
	double *up = r->after;	/* while the bound is found */

	r->bound = 0;
	for (int m = 1; m < k; m++) {
		double down;

		r->train[m] = predict_train_s(r->s->plan, r->tp, m);
		reach_direct(r, m, &down, &up[m]);
		if (r->upload)
			down = at[m];
		r->ready[m] = r->upload ? down + r->train[m] : 0;
		r->bound = fmax(r->bound, down + r->train[m] + up[m]);
	}
	for (int m = 1; m < k; m++)
		r->after[m] = r->upload ? r->bound :
					  r->bound - r->train[m] - up[m];
	r->after[0] = r->bound;
}

int place_terminal_tree(struct sched *s, struct task_plan *tp, int ti,
			struct tree *t, bool upload, double stretch,
			double *at,
			int (*choose)(struct sched *s, const int *term, int k,
				      double demand, int *parent, int *order))
{
	int k = tp->nmodels, err;
	int *parent = malloc((size_t)k * sizeof(*parent));
	int *order = malloc((size_t)k * sizeof(*order));
	bool bound = stretch > 0 && at;
	double *buf = bound ? calloc((size_t)k * 6, sizeof(double)) : NULL;
	struct reach r = {
		.s = s, .tp = tp, .upload = upload,
		.piped = s->sc->relay == SCN_RELAY_PIPELINED,
		.bytes = (double)tp->task->parameters *
			 tp->task->bytes_per_parameter,
	};

	if (bound) {
		r.fib = malloc(((size_t)s->sc->nfibres + 1) * sizeof(int));
		r.kids = calloc((size_t)k, sizeof(int));
	}
	if (!parent || !order || (bound && (!r.fib || !r.kids || !buf))) {
		err = -ENOMEM;
		goto out;
	}
	if (bound) {
		r.lag = buf;
		r.peak = buf + k;
		r.ready = buf + 2 * k;
		r.gate = buf + 3 * k;
		r.train = buf + 4 * k;
		r.after = buf + 5 * k;
		reach_clock(&r, at);
	}
	err = choose(s, tp->server, k, tp->task->demand_gbps, parent, order);
	if (err == -ENOSPC)
		snprintf(tp->why, sizeof(tp->why),
			 "the %s auxiliary graph does not connect the task's "
			 "servers", upload ? "upload" : "broadcast");
	if (err)
		goto out;
	/* root outwards, so each edge sees the edges placed before it */
	for (int i = 1; i < k && !err; i++) {
		int m = order[i], p = bound_parent(&r, m, parent[m], stretch);
		int a = tp->server[upload ? m : p], b = tp->server[upload ? p : m];

		t->parent[m] = p;
		err = route_edge(s, tp, ti, a, b, &t->path[m]);
		if (err || !bound)
			continue;
		/* the way it took, for its children's estimates */
		reach_via(&r, m, p, t->path[m].km * FIBRE_S_PER_KM,
			  &r.lag[m], &r.peak[m]);
		r.kids[p]++;
		if (upload)
			r.gate[m] = fmax(r.ready[m] + r.lag[m], r.gate[p]);
		else
			at[m] = r.lag[m] + r.peak[m];
	}
out:
	free(parent);
	free(order);
	free(r.fib);
	free(r.kids);
	free(buf);
	return err;
}

/* The MST of the closure, through one multi-source search (Mehlhorn). */
static int mst_choose(struct sched *s, const int *term, int k, double demand,
		      int *parent, int *order)
{
	double weight;

	return terminal_mst(s, term, k, demand, false, parent, order, &weight);
}

/* mst's two trees, bounded by the scenario's stretch (0: none) */
int sched_mst_trees(struct sched *s, struct task_plan *tp, int ti)
{
	double stretch = s->sc->weights.stretch;
	double *at = calloc((size_t)tp->nmodels, sizeof(*at));
	int err = at ? place_terminal_tree(s, tp, ti, &tp->bcast, false,
					   stretch, at, mst_choose) : -ENOMEM;

	if (!err)
		err = place_terminal_tree(s, tp, ti, &tp->up, true, stretch,
					  at, mst_choose);
	free(at);
	return err;
}

/* mst's trees, each fibre lit once where the trees branch at a router */
static int tree_place(struct sched *s, struct task_plan *tp, int ti)
{
	return sched_lit_once(s, tp, ti, sched_mst_trees);
}

/* Whether task i of p has been placed, while ti is being placed. */
static bool placed(const struct plan *p, int i, int ti)
{
	const struct task_plan *tp = &p->tasks[i];

	return i == ti || (!tp->blocked && tp->bcast.parent[1] >= 0);
}

/* Transfers of the tasks placed so far, ti among them. */
static long placed_transfers(const struct plan *p, int ti)
{
	long n = 0;

	for (int i = 0; i < p->ntasks; i++)
		if (placed(p, i, ti))
			n += 2L * (p->tasks[i].nmodels - 1);
	return n;
}

/* Undo what was placed for tp since mark (its lightpaths past lit). */
static void unplace_since(struct sched *s, struct task_plan *tp, int mark,
			  int lit)
{
	net_rollback(s->net, mark);
	task_unplace(tp);
	tp->lit.n = lit;
}

/*
 * The predicted rounds of the tasks placed so far, summed: the others
 * (not yet placed) are left out of the prediction, and the plan is left
 * as if never predicted. 0, or -errno.
 */
static int placed_rounds(struct plan *p, int ti, double *sum)
{
	bool *out = calloc((size_t)p->ntasks + 1, sizeof(*out));
	int err;

	if (!out)
		return -ENOMEM;
	for (int i = 0; i < p->ntasks; i++) {
		struct task_plan *tp = &p->tasks[i];

		out[i] = !tp->blocked && !placed(p, i, ti);
		tp->blocked = tp->blocked || out[i];
	}
	err = predict_round(p);
	*sum = 0;
	for (int i = 0; i < p->ntasks; i++) {
		struct task_plan *tp = &p->tasks[i];

		if (!err && !tp->blocked)
			*sum += tp->round_s;
		tp->blocked = tp->blocked && !out[i];
	}
	plan_prediction_forget(p);
	free(out);
	return err;
}

/* The shapes never_slower compares, in the order a tie keeps. */
enum shape { SH_TREE, SH_STAR, NSHAPES };

static const char *const shape_name[NSHAPES] = { "tree", "star" };

static int shape_place(struct sched *s, struct task_plan *tp, int ti,
		       enum shape sh)
{
	return sh == SH_TREE ? tree_place(s, tp, ti) :
			       sched_spff.place(s, tp, ti);
}

static int mst_place(struct sched *s, struct task_plan *tp, int ti)
{
	int mark = net_mark(s->net), lit = tp->lit.n, err;
	double sum[NSHAPES] = { NAN, NAN };
	enum shape best = SH_TREE;
	char why[sizeof(tp->why)] = "";

	if (s->force && s->force[ti]) {
		/* the polish's choice; the other shape if it cannot be had */
		best = s->force[ti] == 's' ? SH_STAR : SH_TREE;
		err = shape_place(s, tp, ti, best);
		if (err == -ENOSPC) {
			unplace_since(s, tp, mark, lit);
			best = best == SH_STAR ? SH_TREE : SH_STAR;
			err = shape_place(s, tp, ti, best);
		}
		if (!err)
			tp->shape = shape_name[best];
		return err;
	}
	if (!s->sc->never_slower ||
	    placed_transfers(s->plan, ti) > SCHED_STAR_CHECK_TRANSFERS)
		return tree_place(s, tp, ti);
	/*
	 * Each shape placed on the same state and the plan so far predicted
	 * with it. One that cannot be placed, or not predicted (out of
	 * memory, or a bug said as -ELOOP), is not chosen; the tree is kept
	 * when nothing could be predicted.
	 */
	for (enum shape sh = SH_TREE; sh < NSHAPES; sh++) {
		err = shape_place(s, tp, ti, sh);
		if (err && err != -ENOSPC)
			return err;
		if (!err && placed_rounds(s->plan, ti, &sum[sh]))
			sum[sh] = NAN;
		if (!isnan(sum[sh]) && (isnan(sum[best]) || sum[sh] < sum[best]))
			best = sh;
		if (!why[0])
			memcpy(why, tp->why, sizeof(why));
		unplace_since(s, tp, mark, lit);
		tp->why[0] = '\0';
	}
	err = shape_place(s, tp, ti, best);
	if (err) {
		/* nothing half placed, and the first shape's reason */
		unplace_since(s, tp, mark, lit);
		memcpy(tp->why, why, sizeof(why));
	} else {
		tp->shape = shape_name[best];
		tp->tree_sum_s = sum[SH_TREE];
		tp->star_sum_s = sum[SH_STAR];
	}
	return err;
}

/*
 * The polish (sched_ops.polish): mst's greedy check judges each task on
 * the tasks before it, and a tree that pays then can slow the tasks
 * placed after it (the poster testbed with the defaults: 2 % slower than
 * spff, greedy alone). So once every task is placed,
 * the whole plan is judged, a shape at a time:
 *
 *  1. each task in turn takes the other shape, kept where the plan's
 *     rounds, summed, end sooner (one pass);
 *  2. the plan with every task a star (spff's, but for a task whose star
 *     cannot be placed) is predicted; where it ends sooner, it is kept
 *     and step 1 runs on it — so the plan is never slower than that one;
 *  3. with the time left under the stars' (a margin of
 *     SCHED_POLISH_MARGIN of their rounds), each star in turn becomes a
 *     tree, kept where that sends fewer bytes and the rounds stay in it.
 *
 * A plan that blocks fewer tasks is always worth more. Each step places
 * and predicts the whole plan again, so it runs only while the plan has
 * at most SCHED_STAR_CHECK_TRANSFERS transfers, and not on a plan made
 * as the network changes (sched_plan_keep's prev: a timeline of many
 * epochs), where the greedy check stands alone.
 */
struct worth {
	int blocked;
	double sum_s, bytes;
};

static int plan_worth(struct plan *p, struct worth *w)
{
	int err = predict_round(p);

	w->blocked = p->blocked;
	w->bytes = p->bytes_links;
	w->sum_s = 0;
	for (int i = 0; !err && i < p->ntasks; i++)
		if (!p->tasks[i].blocked)
			w->sum_s += p->tasks[i].round_s;
	plan_prediction_forget(p);
	return err;
}

/*
 * Whether a is worth more than b: with cap NAN, when its rounds end
 * sooner; else when it sends fewer bytes and its rounds stay within cap.
 */
static bool worth_more(const struct worth *a, const struct worth *b,
		       double cap)
{
	if (a->blocked != b->blocked)
		return a->blocked < b->blocked;
	if (isnan(cap))
		return a->sum_s < b->sum_s * (1 - 1e-9);
	return a->sum_s <= cap && a->bytes < b->bytes * (1 - 1e-9);
}

/* The plan with these shapes, and its worth. 0 or -errno. */
static int forced(const struct scenario *sc, const char *force,
		  struct plan **out, struct worth *w)
{
	int err;

	*out = sched_plan_forced(sc, &sched_mst, NULL, NULL, NULL, force);
	if (!*out)
		return -errno;
	err = plan_worth(*out, w);
	if (err) {
		plan_free(*out);
		*out = NULL;
	}
	return err;
}

int sched_polish_lanes = 2;

/* A task's other shape in a shape vector ('t' a tree, 's' a star). */
static void flip(char *force, int i)
{
	force[i] = force[i] == 's' ? 't' : 's';
}

/*
 * One shape vector's plan and worth, made on a thread of its own while the
 * caller makes another (the plans of a pass are independent: each is made
 * from its shapes alone). Its predict_work is its thread's; the caller
 * adds it where it uses the plan, so the work counted is the one pass
 * made one plan at a time would count.
 */
struct lane {
	const struct scenario *sc;
	char *force;		/* its own copy */
	struct plan *q;
	struct worth w;
	int err;
	unsigned long long work;
	pthread_t th;
	bool started;
};

static void *lane_run(void *arg)
{
	struct lane *l = arg;
	unsigned long long w0 = predict_work;

	l->err = forced(l->sc, l->force, &l->q, &l->w);
	l->work = predict_work - w0;
	return NULL;
}

/* Start the plan of force with task i's shape flipped (n tasks). */
static void lane_start(struct lane *l, const struct scenario *sc,
		       const char *force, int n, int i)
{
	*l = (struct lane){ .sc = sc, .err = -ENOMEM };
	l->force = malloc((size_t)n + 1);
	if (!l->force)
		return;
	memcpy(l->force, force, (size_t)n + 1);
	flip(l->force, i);
	l->started = !pthread_create(&l->th, NULL, lane_run, l);
	if (!l->started)
		lane_run(l);	/* no thread: made here, in turn */
}

/* Wait for it (its copy of the shapes freed). */
static void lane_wait(struct lane *l)
{
	if (l->started)
		pthread_join(l->th, NULL);
	l->started = false;
	free(l->force);
	l->force = NULL;
}

/* Wait for it; 0 with l->q and l->w (added to this thread's work), or
 * -errno. */
static int lane_join(struct lane *l)
{
	lane_wait(l);
	if (!l->err)
		predict_work += l->work;
	return l->err;
}

/* Wait for it and drop what it made, unused. */
static void lane_drop(struct lane *l)
{
	lane_wait(l);
	plan_free(l->q);
	l->q = NULL;
}

/* The next task after i a pass flips (with a cap, only stars), or -1. */
static int next_flip(const char *force, int n, double cap, int i)
{
	for (i++; i < n; i++)
		if (force[i] && (isnan(cap) || force[i] == 's'))
			return i;
	return -1;
}

/*
 * Task i's flip judged on plan q: kept where it is worth more (*best and
 * *w follow; a plan left behind is freed, but for keep), else undone.
 * Whether it was kept.
 */
static bool flip_judged(char *force, int i, double cap, const struct plan *keep,
			struct plan **best, struct worth *w, struct plan *q,
			const struct worth *wq)
{
	if (worth_more(wq, w, cap)) {
		if (*best != keep)
			plan_free(*best);
		*best = q;
		*w = *wq;
		return true;
	}
	plan_free(q);
	flip(force, i);
	return false;
}

/*
 * One pass of flips over the tasks (with a cap, only stars become trees),
 * each kept where it is worth more; *best and *w follow. A plan left
 * behind is freed, but for keep (the greedy plan, which the caller
 * holds). Two flips are made at once (sched_polish_lanes), the second
 * as if the first were not kept: where it is not (most are), both are
 * judged in turn, as one at a time would; where it is, the second is made
 * again. 0 or -errno.
 */
static int flips(const struct scenario *sc, char *force, double cap,
		 const struct plan *keep, struct plan **best, struct worth *w,
		 int *evals)
{
	int n = (*best)->ntasks;

	for (int i = next_flip(force, n, cap, -1); i >= 0;) {
		int j = sched_polish_lanes > 1 ? next_flip(force, n, cap, i) : -1;
		int err, ej;
		struct lane l = { 0 };
		struct plan *q;
		struct worth wq;

		if (j >= 0)
			lane_start(&l, sc, force, n, j);
		flip(force, i);
		err = forced(sc, force, &q, &wq);
		if (err) {
			lane_drop(&l);
			return err;
		}
		++*evals;
		if (flip_judged(force, i, cap, keep, best, w, q, &wq) || j < 0) {
			lane_drop(&l);
			i = next_flip(force, n, cap, i);
			continue;
		}
		ej = lane_join(&l);
		if (ej)
			return ej;
		++*evals;
		flip(force, j);
		flip_judged(force, j, cap, keep, best, w, l.q, &l.w);
		i = next_flip(force, n, cap, j);
	}
	return 0;
}

static int mst_polish(const struct scenario *sc, struct plan **p)
{
	struct plan *greedy = *p, *best = greedy, *stars = NULL;
	struct worth wg, wb, ws;
	char *force = NULL, *allstar = NULL;
	long transfers = 0;
	int n = greedy->ntasks, err, evals = 1;

	if (!sc->never_slower)
		return 0;
	for (int i = 0; i < n; i++)
		transfers += 2L * (greedy->tasks[i].nmodels - 1);
	if (transfers > SCHED_STAR_CHECK_TRANSFERS)
		return 0;
	force = calloc((size_t)n + 1, 1);
	allstar = calloc((size_t)n + 1, 1);
	if (!force || !allstar) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		const char *sh = greedy->tasks[i].shape;

		force[i] = !sh ? 0 : !strcmp(sh, "star") ? 's' : 't';
		allstar[i] = force[i] ? 's' : 0;
	}
	err = plan_worth(greedy, &wg);
	if (err)
		goto out;
	wb = wg;
	err = flips(sc, force, NAN, greedy, &best, &wb, &evals);
	if (err)
		goto out;
	err = forced(sc, allstar, &stars, &ws);
	if (err)
		goto out;
	evals++;
	if (worth_more(&ws, &wb, NAN)) {
		if (best != greedy)
			plan_free(best);
		best = stars;
		stars = NULL;
		wb = ws;
		memcpy(force, allstar, (size_t)n);
		err = flips(sc, force, NAN, greedy, &best, &wb, &evals);
		if (err)
			goto out;
	}
	err = flips(sc, force,
		    fmax(wb.sum_s, (1 - SCHED_POLISH_MARGIN) * ws.sum_s),
		    greedy, &best, &wb, &evals);
	if (err)
		goto out;
	for (int i = 0; best != greedy && i < n; i++) {
		struct task_plan *tp = &best->tasks[i];
		const struct task_plan *g = &greedy->tasks[i];

		tp->tree_sum_s = g->tree_sum_s;
		tp->star_sum_s = g->star_sum_s;
		tp->reshaped = tp->shape && g->shape && strcmp(tp->shape, g->shape);
	}
	best->polish = (struct plan_polish){
		.evals = evals, .greedy_s = wg.sum_s, .stars_s = ws.sum_s,
		.final_s = wb.sum_s, .stars_blocked = ws.blocked,
	};
	if (best != greedy) {
		plan_free(greedy);
		*p = best;
	}
	best = NULL;	/* it is *p now */
out:
	if (best && best != greedy)
		plan_free(best);
	plan_free(stars);
	free(force);
	free(allstar);
	return err;
}

static int kmb_trees(struct sched *s, struct task_plan *tp, int ti)
{
	int err = place_terminal_tree(s, tp, ti, &tp->bcast, false, 0, NULL,
				      terminal_kmb);

	return err ? err : place_terminal_tree(s, tp, ti, &tp->up, true, 0, NULL,
					       terminal_kmb);
}

static int svi_trees(struct sched *s, struct task_plan *tp, int ti)
{
	int err = place_terminal_tree(s, tp, ti, &tp->bcast, false, 0, NULL,
				      terminal_svi);

	return err ? err : place_terminal_tree(s, tp, ti, &tp->up, true, 0, NULL,
					       terminal_svi);
}

/* The tree weight of what tp has placed (NAN: out of memory). */
static double placed_weight(struct sched *s, struct task_plan *tp)
{
	return plan_tree_weight(s->plan, tp, &tp->bcast, NULL) +
	       plan_tree_weight(s->plan, tp, &tp->up, &tp->bcast);
}

int sched_lightest(struct sched *s, struct task_plan *tp, int ti,
		   const struct sched_way *way, int nway)
{
	int mark = net_mark(s->net), lit = tp->lit.n, best = -1, err = 0;
	double w, least = INFINITY;
	char why[sizeof(tp->why)] = "";

	for (int i = 0; i < nway; i++) {
		err = sched_lit_once(s, tp, ti, way[i].trees);
		if (err && err != -ENOSPC)
			return err;
		w = err ? NAN : placed_weight(s, tp);
		if (!err && isnan(w))
			return -ENOMEM;
		if (!err && (best < 0 || w < least - 1e-9 * fabs(least))) {
			least = w;
			best = i;
		}
		if (!why[0])
			memcpy(why, tp->why, sizeof(why));
		unplace_since(s, tp, mark, lit);
		tp->why[0] = '\0';
	}
	if (best < 0) {
		memcpy(tp->why, why, sizeof(why));
		return -ENOSPC;
	}
	err = sched_lit_once(s, tp, ti, way[best].trees);
	if (err)
		unplace_since(s, tp, mark, lit);
	else
		tp->trees_by = way[best].name;
	return err;
}

/*
 * kmb's trees, or mst's where those weigh less once placed: KMB's tree is
 * never heavier than the closure's MST on the auxiliary graph, but the
 * lightpaths each edge lights, and the stretch it grooms onto, depend on
 * the order the edges are routed in, so once lit it can come out heavier
 * (SteinLib B shapes, two draws: 3 of 36, by one to three fibres).
 */
static const struct sched_way kmb_ways[] = {
	{"kmb", kmb_trees},
	{"mst", sched_mst_trees},
};

/*
 * Kou-Markowsky-Berman: the same auxiliary graphs and the same routing of
 * each edge as mst, only the tree differs — the MST of the subgraph the
 * closure's shortest paths span, so terminals whose paths share a stretch
 * hang from the one that reaches it first; mst's where they weigh less once
 * lit.
 */
const struct sched_ops sched_kmb = {
	.name = "kmb",
	.help = "Steiner baseline: Kou-Markowsky-Berman trees on the "
		"auxiliary graphs, routed as mst; never heavier than mst's",
	.role = "Steiner heuristic",
	.baseline = false,
	.ways = kmb_ways,
	.nways = sizeof(kmb_ways) / sizeof(kmb_ways[0]),
};

/*
 * tm's trees, or mst's where those weigh less once placed: nothing bounds
 * a Takahashi-Matsuyama tree by the closure's MST, and on sparse graphs
 * with many terminals it comes out heavier (SteinLib B shapes, two draws:
 * 14 of 36, up to 15 % over the optimum where mst's is 0.5 %).
 */
static const struct sched_way tm_ways[] = {
	{"tm", sched_tm_trees},
	{"mst", sched_mst_trees},
};

const struct sched_ops sched_tm = {
	.name = "tm",
	.help = "Steiner baseline: Takahashi-Matsuyama trees grown on the "
		"auxiliary graphs, routed as mst; never heavier than mst's",
	.role = "Steiner heuristic",
	.baseline = false,
	.ways = tm_ways,
	.nways = sizeof(tm_ways) / sizeof(tm_ways[0]),
};

/*
 * svi's trees, or kmb's, tm's or mst's where those weigh less once
 * placed: the insertion judges a tree on the auxiliary graph, and what
 * its transfers light can come out otherwise (NSFNET, 2 locals: 2.3 %
 * over opt on average, 30 % at worst, where mst's are 1.9 and 19 %); tm
 * grows another tree altogether, lighter on some graphs (SteinLib B
 * shapes, two draws: 3 of 36). A tie keeps the first: svi's.
 */
static const struct sched_way svi_ways[] = {
	{"svi", svi_trees},
	{"kmb", kmb_trees},
	{"tm", sched_tm_trees},
	{"mst", sched_mst_trees},
};

/*
 * Steiner-vertex insertion: kmb's trees, with the routers that make them
 * lighter added as vertices they must reach (terminal_svi); routed as mst,
 * and kept unless kmb's, tm's or mst's own weigh less.
 */
const struct sched_ops sched_svi = {
	.name = "svi",
	.help = "Steiner heuristic: kmb's trees improved by Steiner-vertex "
		"insertion (routers that lighten them), routed as mst; "
		"never heavier than kmb's, tm's or mst's",
	.role = "Steiner heuristic",
	.baseline = false,
	.ways = svi_ways,
	.nways = sizeof(svi_ways) / sizeof(svi_ways[0]),
};

const struct sched_ops sched_mst = {
	.name = "mst",
	.help = "flexible: MST over G and the Li on the auxiliary graphs, "
		"aggregation at the tree's middle nodes",
	.role = "flexible",
	.baseline = false,
	.place = mst_place,
	.polish = mst_polish,
};
