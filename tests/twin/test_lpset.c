// SPDX-License-Identifier: MIT
/*
 * One set of lightpaths for a whole timeline (twin/lpset.h): each epoch's
 * plan over it lights exactly what the timeline's epoch lights, keeps
 * every address of the epoch before (only routes differ), crosses no cut
 * fibre, a task cut off for ever is lost from its cut, and a task whose
 * trees change carries on as a task of its own.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <string.h>

#include "twin/addr.h"
#include "twin/lpset.h"
#include "twin/predict.h"
#include "twin/sched.h"

#include "tests/lib/ring.h"

/* The addresses two plans of one set give: all equal, routes aside. */
static void same_addresses(const struct plan *p, const struct plan *q)
{
	struct addressing *a = addressing_new(p), *b = addressing_new(q);

	cr_assert_not_null(a);
	cr_assert_not_null(b);
	cr_assert_eq(a->used, b->used);
	for (int i = 0; i < p->sc->nnodes; i++)
		cr_assert_eq(a->access[i], b->access[i]);
	for (int l = 0; l < p->net->nlp; l++)
		cr_assert_eq(a->lightpath[l], b->lightpath[l]);
	for (int t = 0; t < p->ntasks; t++)
		for (int i = 2; a->ep[t] && i < 2 * p->tasks[t].nmodels; i++) {
			cr_assert_eq(a->ep[t][i].src, b->ep[t][i].src);
			cr_assert_eq(a->ep[t][i].dst, b->ep[t][i].dst);
		}
	addressing_free(a);
	addressing_free(b);
}

/* Every lightpath a placed task of epoch e's set plan crosses is lit. */
static void paths_lit(const struct lpset *s, int e)
{
	const struct plan *q = s->plan[e];

	for (int t = 0; t < q->ntasks; t++)
		for (int m = 1; !s->waits[e][t] && !q->tasks[t].blocked &&
				m < q->tasks[t].nmodels; m++)
			for (int k = 0; k < 2; k++) {
				const struct ppath *pp =
					k ? &q->tasks[t].up.path[m] :
					    &q->tasks[t].bcast.path[m];

				for (int h = 0; h < pp->nhops; h++)
					cr_assert(pp->hops[h].kind !=
							  HOP_LIGHTPATH ||
						  s->lit[e][pp->hops[h].idx],
						  "epoch %d task %d crosses "
						  "a dark lightpath", e, t);
			}
}

/* Tasks whose paths in epoch e of s differ from the epoch before. */
static int paths_changed(const struct lpset *s, int e)
{
	int n = 0;

	for (int t = 0; t < s->plan[e]->ntasks; t++)
		n += !plan_task_same(s->plan[e - 1], t, s->plan[e], t);
	return n;
}

/* The policies a set is checked under, where each may give other epochs. */
static const enum resched policies[] = { RESCHED_NONE, RESCHED_FULL,
					 RESCHED_AUTO };

#define NPOLICIES (sizeof(policies) / sizeof(policies[0]))

/*
 * The ring with events (*sc), followed by ops under policy pol (*tl),
 * and the set of lightpaths over that timeline; each asserted made.
 */
static struct lpset *ring_set(const char *events, const struct sched_ops *ops,
			      enum resched pol, struct scenario **sc,
			      struct timeline **tl)
{
	struct lpset *s;
	char why[256] = "";

	*sc = ring_with(events);
	*tl = timeline_new(*sc, ops, pol, predict_round);
	cr_assert_not_null(*tl);
	cr_assert_eq(lpset_new(*tl, &s, why, sizeof(why)), 0, "%s", why);
	return s;
}

/* What ring_set (or lpset_follow) made, the set first as it uses the rest. */
static void ring_set_free(struct lpset *s, struct timeline *tl,
			  struct scenario *sc)
{
	lpset_free(s);
	timeline_free(tl);
	scenario_free(sc);
}

/*
 * check(s, sc, tl, pol) on the ring with events followed by SPFF under
 * each policy in turn: what a set must hold whichever epochs it is given.
 */
static void each_policy(const char *events,
			void (*check)(struct lpset *s, struct scenario *sc,
				      struct timeline *tl, enum resched pol))
{
	for (size_t i = 0; i < NPOLICIES; i++) {
		struct scenario *sc;
		struct timeline *tl;
		struct lpset *s = ring_set(events, &sched_spff, policies[i],
					   &sc, &tl);

		check(s, sc, tl, policies[i]);
		ring_set_free(s, tl, sc);
	}
}

/* An event: task t9 arrives at at_s, one local model on s3. */
#define T9_ARRIVES(at_s)						\
	"  - {at_s: " at_s ", arrive: {name: t9, global: s6,"		\
	" locals: [s3], parameters: 1000,"				\
	" bytes_per_parameter: 4, work_core_s: 0.01}}\n"

static const char cut_repair[] =
	"events:\n"
	"  - {at_s: 1, cut: {a: A, b: B}}\n"
	"  - {at_s: 3, repair: {a: A, b: B}}\n";

static void cut_and_repair(struct lpset *s, struct scenario *sc,
			   struct timeline *tl, enum resched pol)
{
	int ab = sc->events[0].fibre, moved = 0;

	cr_assert_eq(s->nepochs, 3);
	for (int e = 0; e < s->nepochs; e++) {
		const struct net *n = tl->e[e].plan->net;
		int lit = 0;

		cr_assert_eq(s->plan[e]->net->nlp, s->net->nlp);
		for (int l = 0; l < s->net->nlp; l++) {
			lit += s->lit[e][l];
			cr_assert_eq(s->lit[e][l],
				     net_find_lightpath(n,
					     &s->net->lp[l]) >= 0);
			if (e == 1 && s->lit[e][l])
				cr_assert_not(plan_lightpath_crosses(
					s->plan[e], l, ab));
		}
		cr_assert_eq(lit, n->nlp, "epoch %d", e);
		paths_lit(s, e);
		if (e)
			same_addresses(s->plan[0], s->plan[e]);
		for (int t = 0; t < sc->ntasks; t++)
			cr_assert_not(s->waits[e][t]);
	}
	/* epoch 0 is the plan itself, its lightpaths first */
	for (int l = 0; l < tl->e[0].plan->net->nlp; l++)
		cr_assert(s->lit[0][l]);
	for (int t = 0; t < sc->ntasks; t++)
		moved += tl->e[1].moved[t];
	cr_assert_gt(moved, 0, "the ring's tasks cross A-B");
	cr_assert_eq(paths_changed(s, 1), moved, "policy %s",
		     resched_name(pol));
	cr_assert_gt(s->net->nlp, tl->e[0].plan->net->nlp,
		     "the cut lights lightpaths around it");
}

Test(lpset, a_cut_and_its_repair_over_one_set)
{
	each_policy(cut_repair, cut_and_repair);
}

/* Cut off (C alone after two cuts): the task waits on what it had. */
Test(lpset, a_task_nothing_reaches_keeps_its_paths)
{
	struct scenario *sc;
	struct timeline *tl;
	struct lpset *s = ring_set("events:\n"
				   "  - {at_s: 1, cut: {a: B, b: C}}\n"
				   "  - {at_s: 1, cut: {a: C, b: D}}\n"
				   "  - {at_s: 2, repair: {a: B, b: C}}\n",
				   &sched_spff, RESCHED_NONE, &sc, &tl);
	int waited = 0;

	for (int e = 1; e < s->nepochs; e++)
		for (int t = 0; t < sc->ntasks; t++) {
			cr_assert_eq(s->waits[e][t],
				     tl->e[e].plan->tasks[t].blocked);
			if (!s->waits[e][t])
				continue;
			waited++;
			cr_assert(plan_task_same(s->plan[e], t,
						 s->plan[e - 1], t));
		}
	cr_assert_gt(waited, 0, "the ring's tasks reach C");
	ring_set_free(s, tl, sc);
}

/*
 * Cut off for ever (C alone, never repaired): the tasks that reach C are
 * lost from the cuts' epoch, with why; the others are not; with the repair
 * (above) nothing is lost. A live run fails the lost ones there.
 */
Test(lpset, a_task_cut_off_for_ever_is_lost)
{
	struct scenario *sc = ring_with("events:\n"
					"  - {at_s: 1, cut: {a: B, b: C}}\n"
					"  - {at_s: 1, cut: {a: C, b: D}}\n");
	struct timeline *tl = NULL;
	struct lpset *s = NULL;
	char why[256];
	int lost = 0;

	cr_assert_eq(lpset_follow(sc, &sched_spff, RESCHED_NONE, predict_round,
				  &tl, &s, why, sizeof(why)), 0, "%s", why);
	for (int t = 0; t < s->sc->ntasks; t++) {
		int last = s->nepochs - 1, n;

		cr_assert_eq(s->lost[t] >= 0, s->waits[last][t], "task %d", t);
		n = lpset_lost_why(s, t, why, sizeof(why));
		if (s->lost[t] < 0) {
			cr_assert_eq(n, -1);
			continue;
		}
		lost++;
		cr_assert_geq(s->lost[t], 1);
		cr_assert(s->waits[s->lost[t]][t]);
		cr_assert_not(s->waits[s->lost[t] - 1][t], "from its start");
		cr_assert(strstr(why, "has no way round the cut at 1 s, which "
				 "is never repaired: its servers are cut off"),
			  "%s", why);
		cr_assert(strstr(why, s->sc->tasks[t].name), "%s", why);
	}
	cr_assert_gt(lost, 0, "the ring's tasks reach C");
	cr_assert_eq(lpset_lost_why(s, -1, why, sizeof(why)), -1);
	ring_set_free(s, tl, sc);
	/* repaired: nobody is lost */
	sc = ring_with("events:\n"
		       "  - {at_s: 1, cut: {a: B, b: C}}\n"
		       "  - {at_s: 1, cut: {a: C, b: D}}\n"
		       "  - {at_s: 2, repair: {a: B, b: C}}\n");
	cr_assert_eq(lpset_follow(sc, &sched_spff, RESCHED_NONE, predict_round,
				  &tl, &s, why, sizeof(why)), 0, "%s", why);
	for (int t = 0; t < s->sc->ntasks; t++)
		cr_assert_eq(s->lost[t], -1);
	ring_set_free(s, tl, sc);
}

/*
 * Background traffic among arrivals: every epoch's plan lists the flow,
 * routed where the timeline's epoch routes it (over lit lightpaths of the
 * set, hop for hop) and not where it does not flow; its addresses are the
 * same in every epoch, and so are everyone else's.
 */
static const char traffic_and_arrival[] =
	"events:\n"
	"  - {at_s: 1, traffic: {from: s1, to: s4, gbps: 5, for_s: 1}}\n"
	T9_ARRIVES("1.5");

static void background_flows(struct lpset *s, struct scenario *sc,
			     struct timeline *tl, enum resched pol)
{
	struct addressing *a0;
	int routed = 0;

	(void)sc;
	(void)pol;
	/* start, traffic, arrival, traffic's end */
	cr_assert_eq(s->nepochs, 4);
	cr_assert_eq(s->sc->nbg, 1);
	a0 = addressing_new(s->plan[0]);
	cr_assert_not_null(a0);
	cr_assert_neq(a0->bg[0].src, 0);
	for (int e = 0; e < s->nepochs; e++) {
		const struct plan *q = s->plan[e], *src = tl->e[e].plan;
		const struct bg_flow *f = &q->bg[0];
		struct addressing *a = addressing_new(q);

		cr_assert_eq(q->nbg, 1);
		cr_assert_eq(src->nbg, e == 1 || e == 2, "epoch %d", e);
		cr_assert_eq(f->routed, src->nbg && src->bg[0].routed,
			     "epoch %d", e);
		cr_assert(f->routed || f->why[0], "epoch %d", e);
		routed += f->routed;
		for (int h = 0; f->routed && h < f->path.nhops; h++) {
			const struct hop *x = &f->path.hops[h];
			const struct hop *y = &src->bg[0].path.hops[h];

			cr_assert_eq(f->path.nhops,
				     src->bg[0].path.nhops);
			cr_assert_eq(x->kind, y->kind);
			cr_assert_eq(x->dir, y->dir);
			if (x->kind != HOP_LIGHTPATH) {
				cr_assert_eq(x->idx, y->idx);
				continue;
			}
			cr_assert(s->lit[e][x->idx], "epoch %d: a "
				  "dark lightpath", e);
			cr_assert_eq(net_find_lightpath(s->net,
					&src->net->lp[y->idx]), x->idx);
		}
		cr_assert_not_null(a);
		cr_assert_eq(a->bg[0].src, a0->bg[0].src);
		cr_assert_eq(a->bg[0].dst, a0->bg[0].dst);
		same_addresses(s->plan[0], q);
		paths_lit(s, e);
		addressing_free(a);
	}
	cr_assert_eq(routed, 2, "the flow flows in two epochs");
	cr_assert(strstr(s->plan[0]->bg[0].why, "does not flow"),
		  "%s", s->plan[0]->bg[0].why);
	addressing_free(a0);
}

Test(lpset, background_traffic_flows_in_its_epochs)
{
	each_policy(traffic_and_arrival, background_flows);
}

/* Whether x and y have the same trees (parents per model). */
static bool same_trees(const struct task_plan *x, const struct task_plan *y)
{
	size_t n = (size_t)x->nmodels * sizeof(int);

	return !memcmp(x->bcast.parent, y->bcast.parent, n) &&
	       !memcmp(x->up.parent, y->up.parent, n);
}

/*
 * mst re-plans trees from scratch under 'full': after the ring's cut and
 * again after its repair, a task whose trees change carries on as an
 * incarnation of its own, one per change (counted here apart from the
 * set, from the timeline's own plans): the same task, its own addresses;
 * in each epoch exactly one of a line runs, on the epoch's trees, and the
 * others are blocked, saying why.
 */
Test(lpset, a_tree_that_changes_carries_on_as_a_task_of_its_own)
{
	struct scenario *sc = ring_with(cut_repair);
	struct timeline *tl = timeline_new(sc, &sched_mst, RESCHED_FULL,
					   predict_round);
	struct addressing *a;
	struct lpset *s;
	char why[256] = "";
	int changes = 0;

	cr_assert_not_null(tl);
	for (int t = 0; t < sc->ntasks; t++)
		for (int e = 1; e < tl->n; e++)
			changes += !same_trees(&tl->e[e - 1].plan->tasks[t],
					       &tl->e[e].plan->tasks[t]);
	cr_assert_geq(changes, 2, "mst under full changes no trees here");
	cr_assert_eq(lpset_new(tl, &s, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(s->sc->ntasks, sc->ntasks + changes);
	for (int t = 0; t < s->sc->ntasks; t++) {
		int b = s->base[t];

		cr_assert_str_eq(s->sc->tasks[t].name, sc->tasks[b].name);
		if (t < sc->ntasks) {
			cr_assert_eq(b, t);
			cr_assert_eq(s->prev[t], -1);
			continue;
		}
		/* it begins where its trees change, after the one before */
		cr_assert(s->prev[t] >= 0 && s->prev[t] < t);
		cr_assert_eq(s->base[s->prev[t]], b);
		cr_assert(s->since[t] >= 1 && s->since[t] < tl->n);
		cr_assert(s->prev[t] < sc->ntasks ||
			  s->since[s->prev[t]] < s->since[t]);
	}
	for (int e = 0; e < tl->n; e++)
		for (int i = 0; i < sc->ntasks; i++) {
			int at = s->index[e][i], running = 0;

			cr_assert_eq(s->base[at], i);
			cr_assert(s->runs[e][at]);
			cr_assert(same_trees(&s->plan[e]->tasks[at],
					     &tl->e[e].plan->tasks[i]),
				  "epoch %d: task %d runs on other trees", e, i);
			for (int t = 0; t < s->sc->ntasks; t++) {
				if (s->base[t] != i || t == at)
					continue;
				running += s->runs[e][t];
				cr_assert(s->plan[e]->tasks[t].blocked);
				cr_assert(strstr(s->plan[e]->tasks[t].why,
						 "new trees"), "%s",
					  s->plan[e]->tasks[t].why);
			}
			cr_assert_eq(running, 0, "epoch %d: task %d runs twice",
				     e, i);
		}
	/* its own addresses: none shared with the one before */
	a = addressing_new(s->plan[0]);
	cr_assert_not_null(a);
	for (int t = sc->ntasks; t < s->sc->ntasks; t++)
		for (int m = 1; m < s->plan[0]->tasks[t].nmodels; m++)
			cr_assert_neq(a->ep[t][2 * m].dst,
				      a->ep[s->prev[t]][2 * m].dst);
	cr_log_info("mst under full on the ring: %d tree changes", changes);
	addressing_free(a);
	ring_set_free(s, tl, sc);
}

/*
 * A task arrives and another leaves: every epoch's plan lists both, the
 * arrival running from its epoch on and the departed one until its own,
 * each blocked (no routes, its reason) where it does not run; addresses
 * stay those of epoch 0 and every running task crosses only lit
 * lightpaths.
 */
static const char arrival_and_departure[] =
	"events:\n"
	T9_ARRIVES("1") "  - {at_s: 2, leave: t1}\n";

static void arrive_and_leave(struct lpset *s, struct scenario *sc,
			     struct timeline *tl, enum resched pol)
{
	int t1 = -1, t9 = -1;

	(void)pol;
	cr_assert_eq(s->nepochs, 3);
	cr_assert_eq(s->sc->ntasks, sc->ntasks + 1);
	for (int t = 0; t < s->sc->ntasks; t++) {
		if (!strcmp(s->sc->tasks[t].name, "t1"))
			t1 = t;
		if (!strcmp(s->sc->tasks[t].name, "t9"))
			t9 = t;
	}
	cr_assert_eq(t9, sc->ntasks, "arrivals after the scenario's");
	cr_assert_geq(t1, 0);
	for (int e = 0; e < s->nepochs; e++) {
		const struct plan *q = s->plan[e];

		cr_assert_eq(q->ntasks, s->sc->ntasks);
		cr_assert_eq(s->runs[e][t9], e >= 1, "epoch %d", e);
		cr_assert_eq(s->runs[e][t1], e < 2, "epoch %d", e);
		cr_assert_eq(q->tasks[t9].blocked, e < 1);
		cr_assert_eq(q->tasks[t1].blocked, e >= 2);
		for (int t = 0; t < q->ntasks; t++) {
			cr_assert_eq(s->runs[e][t],
				     !q->tasks[t].blocked);
			cr_assert_not(s->waits[e][t]);
		}
		if (e)
			same_addresses(s->plan[0], q);
		paths_lit(s, e);
		/* each running task's byte-links, as the timeline's */
		for (int k = 0; k < tl->e[e].plan->ntasks; k++)
			cr_assert_float_eq(
				q->tasks[s->index[e][k]].bytes_links,
				tl->e[e].plan->tasks[k].bytes_links,
				1e-6, "epoch %d task %d", e, k);
	}
	/* the timeline's epoch plans list who is there, in order */
	for (int e = 0; e < s->nepochs; e++)
		for (int k = 0; k < tl->e[e].plan->ntasks; k++)
			cr_assert_str_eq(s->sc->tasks[s->index[e][k]]
						 .name,
					 tl->e[e].plan->tasks[k]
						 .task->name);
	cr_assert_eq(tl->e[2].plan->ntasks, sc->ntasks, "t1 gone");
	cr_assert(strstr(s->plan[0]->tasks[t9].why, "not arrived"),
		  "%s", s->plan[0]->tasks[t9].why);
	cr_assert(strstr(s->plan[2]->tasks[t1].why, "left"), "%s",
		  s->plan[2]->tasks[t1].why);
	/* the arrival's lightpaths light at its epoch */
	for (int l = 0; l < s->net->nlp; l++)
		if (s->net->lp[l].task == t9)
			cr_assert(s->lit[1][l] && !s->lit[0][l]);
}

Test(lpset, tasks_that_arrive_and_leave_run_in_their_epochs)
{
	each_policy(arrival_and_departure, arrive_and_leave);
}

/*
 * A round in which a task's workers are not ready yet is predicted
 * without it: the epoch's plan with that task blocked, saying why, the
 * others as they are (trees, paths, their byte-links), its links lighter.
 */
Test(lpset, an_epoch_without_a_task_that_is_not_ready)
{
	struct scenario *sc;
	struct timeline *tl;
	struct lpset *s = ring_set(cut_repair, &sched_spff, RESCHED_NONE, &sc,
				   &tl);
	bool absent[8] = { true };
	struct plan *q;
	double with = 0, without = 0;

	cr_assert_eq(sc->ntasks, 2);
	cr_assert_eq(predict_round(s->plan[1]), 0);
	q = lpset_plan_without(s, 1, absent);
	cr_assert_not_null(q);
	cr_assert_eq(predict_round(q), 0);
	cr_assert(q->tasks[0].blocked);
	cr_assert_str_eq(q->tasks[0].why, "its workers are not ready yet");
	cr_assert(!q->tasks[1].blocked);
	cr_assert(plan_task_same(s->plan[1], 1, q, 1));
	cr_assert_float_eq(q->tasks[1].bytes_links,
			   s->plan[1]->tasks[1].bytes_links, 1e-9);
	cr_assert_eq(q->wavelength_links, s->plan[1]->wavelength_links);
	for (int l = 0; l < plan_nlinks(q); l++) {
		with += s->plan[1]->link_bytes[l];
		without += q->link_bytes[l];
	}
	cr_assert_lt(without, with, "t1's bytes are gone from the links");
	cr_assert_gt(without, 0);
	plan_free(q);
	ring_set_free(s, tl, sc);
}
