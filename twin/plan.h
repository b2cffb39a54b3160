/* SPDX-License-Identifier: MIT */
/*
 * A plan: what a scheduler decided for every task of a scenario. Lightpaths
 * live in the plan's net (final state); each task has a broadcast tree and
 * an upload tree over its models, every tree edge realized as a path of IP
 * hops (access links and lightpaths), which is also the hop-by-hop route
 * the emulation installs. Model 0 of a task is its global model G, models
 * 1..n its local models in scenario order.
 */
#ifndef TWIN_PLAN_H
#define TWIN_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "net.h"
#include "scenario.h"

enum hop_kind { HOP_ACCESS, HOP_LIGHTPATH };

/*
 * One IP hop. HOP_ACCESS: idx is the server, dir 0 = server -> router,
 * 1 = router -> server. HOP_LIGHTPATH: idx is the lightpath, dir 0 = a -> b.
 */
struct hop {
	enum hop_kind kind;
	int idx;
	int dir;
};

struct ppath {
	int from, to;		/* server node indices */
	int nhops;
	struct hop *hops;
	double km;		/* fibre plus access length */
	int fibre_hops;		/* fibres crossed (bandwidth measure) */
	double weight;		/* its auxiliary-graph weight when chosen
				 * (scenarios/README.md "Scheduler weights") */
};

/*
 * A tree over a task's models, rooted at model 0. parent[0] = -1. For the
 * broadcast tree path[i] runs parent -> i; for the upload tree i -> parent.
 * path[0] is unused.
 */
struct tree {
	int *parent;
	struct ppath *path;
};

struct task_plan {
	const struct scn_task *task;
	bool blocked;
	char why[160];
	int nmodels;		/* 1 + nlocals */
	int *server;		/* model -> server node */
	struct tree bcast, up;
	struct int_vec lit;	/* lightpaths this task lit */
	long wavelength_links;	/* fibres spanned by lightpaths it lit */
	double bytes_links;	/* model bytes x fibres crossed, per round */
	double tree_weight;	/* its two trees' weights (plan_tree_weight)
				 * when it was placed: what tree schedulers
				 * minimise */
	const char *program;	/* opt: the integer program that placed it,
				 * "joint" (tree and wavelengths) or "runs"
				 * (see sched_opt.c); NULL otherwise */
	const char *trees_by;	/* kmb, tm, svi: the heuristic whose trees
				 * were kept as the lightest once placed
				 * (sched_lightest); NULL otherwise */
	const char *shape;	/* mst: "tree", or "star" where its tree was
				 * predicted slower (sched_mst.c); NULL when
				 * not compared */
	double tree_sum_s, star_sum_s;	/* with shape: the predicted rounds
				 * of the tasks placed so far, summed, with
				 * the tree and with the star */
	bool reshaped;		/* mst's polish gave it the other shape
				 * than the greedy check did */
	/* prediction, seconds */
	double bcast_s, compute_s, upload_s, round_s;
};

/*
 * Background traffic (the scenario's bg) as it flows over the plan's IP
 * links: the shortest path by length over the access links and the lit
 * lightpaths. Traffic no such path joins is not routed (why says so).
 */
struct bg_flow {
	const struct scn_bg *bg;
	bool routed;
	char why[160];
	struct ppath path;
	/* when it flows, in seconds from the round's start, as predict_round
	 * sees it: [0, inf) from plan_background; a run that plays the
	 * traffic sets it each round */
	double on_s, off_s;
};

/* A fibre cut in a window of the round (a run that plays cuts). */
struct fibre_down {
	int fibre;
	double on_s, off_s;	/* from the round's start; off inf: no repair */
};

/* What mst's polish did (twin/sched_mst.c); evals 0: it did not run. */
struct plan_polish {
	int evals;		/* plans placed and predicted */
	double greedy_s;	/* rounds summed: as the greedy check left it, */
	double stars_s;		/* with every task a star, */
	double final_s;		/* and as polished */
	int stars_blocked;	/* tasks the all-star plan blocks */
};

struct plan {
	const struct scenario *sc;
	const char *scheduler;
	struct net *net;
	int ntasks;
	struct task_plan *tasks;	/* in scenario (arrival) order */
	/* totals */
	int blocked;
	long wavelength_links;
	double bytes_links;
	double mean_round_s;		/* over scheduled tasks */
	struct plan_polish polish;
	bool predicted;
	const char *predictor;		/* "fluid" or "packet" once predicted */
	/* predicted bytes per round on each directed IP link, see plan_link */
	double *link_bytes;
	/* background traffic, once plan_background has routed it */
	int nbg;
	struct bg_flow *bg;
	/* fibres cut during the round (plan_cut_windows): the lightpaths
	 * over one carry nothing while it is down */
	int ndown;
	struct fibre_down *down;
};

/*
 * Directed IP link ids used by link_bytes: access link of server s in
 * direction d is 2*s + d; lightpath l in direction d is 2*nnodes + 2*l + d.
 */
static inline int plan_link(const struct plan *p, const struct hop *h)
{
	return h->kind == HOP_ACCESS ? 2 * h->idx + h->dir
				     : 2 * p->sc->nnodes + 2 * h->idx + h->dir;
}

static inline int plan_nlinks(const struct plan *p)
{
	return 2 * p->sc->nnodes + 2 * p->net->nlp;
}

/*
 * Whether link index l is a link at all: access links are indexed by
 * node, and only servers have one (lightpaths' all are).
 */
static inline bool plan_link_exists(const struct plan *p, int l)
{
	return l >= 2 * p->sc->nnodes ||
	       p->sc->nodes[l / 2].kind == NODE_SERVER;
}

/* Capacity of a directed link in Gbit/s. */
double plan_link_gbps(const struct plan *p, int link);

/* plan_new - empty plan for sc; NULL and errno on failure. */
struct plan *plan_new(const struct scenario *sc, const char *scheduler)
	__attribute__((warn_unused_result));
void plan_free(struct plan *p);

/*
 * tree_child_index - m's place among its parent's children in t, in model
 * order: how the parent's worker numbers what it receives (its report's
 * t_child[]).
 */
static inline int tree_child_index(const struct tree *t, int m)
{
	int i = 0;

	for (int k = 1; k < m; k++)
		i += t->parent[k] == t->parent[m];
	return i;
}

/* tree_alloc / task_plan_release: helpers for schedulers. */
int tree_alloc(struct tree *t, int nmodels) __attribute__((warn_unused_result));
void tree_release(struct tree *t, int nmodels);
void ppath_release(struct ppath *pp);

/*
 * plan_tree_weight - the weight of tree t of task tp on the auxiliary graph
 * of its moment (scenarios/README.md, "Scheduler weights"): every access
 * link and lightpath its paths cross counted once, a lightpath lit for
 * this tree at what lighting it cost (its fibres and its add and drop),
 * any other as a lit lightpath (lit by another task, or by tp for the tree
 * before, the broadcast when t is the upload tree; before may be NULL).
 * NAN if out of memory.
 */
double plan_tree_weight(const struct plan *p, const struct task_plan *tp,
			const struct tree *t, const struct tree *before);

/*
 * plan_prediction_forget - drop what a prediction left in p (link bytes,
 * the tasks' times, the mean, the routes of background traffic), as a
 * plan not yet predicted has it.
 */
void plan_prediction_forget(struct plan *p);

/* plan_totals - recompute task and plan bandwidth figures. */
void plan_totals(struct plan *p);

/* Node index reached after hop h taken from node `at`. */
int hop_next(const struct plan *p, int at, const struct hop *h);

/* plan_task_find - index of the task named name in p, or -1. */
int plan_task_find(const struct plan *p, const char *name);

/*
 * plan_task_same - whether task i of a and task j of b go the same way:
 * the same trees, and every path over the same hops (lightpaths compared
 * by routers, fibres and wavelength, not by index).
 */
bool plan_task_same(const struct plan *a, int i, const struct plan *b, int j);

/*
 * plan_bg_new - p->bg, one flow for each of the scenario's (it has some),
 * each on from the start for good and not routed yet. 0 or -ENOMEM.
 */
int plan_bg_new(struct plan *p) __attribute__((warn_unused_result));

/*
 * plan_background - route the scenario's background traffic over p (see
 * struct bg_flow); again after the first call does nothing. 0 or -ENOMEM.
 */
int plan_background(struct plan *p) __attribute__((warn_unused_result));

/*
 * plan_traffic_windows - route the background traffic (plan_background)
 * and set each flow's window as seen from a round that starts at t_s of
 * scenario time: [at_s - t_s, at_s + for_s - t_s) of its event. 0 or
 * -ENOMEM.
 */
int plan_traffic_windows(struct plan *p, double t_s)
	__attribute__((warn_unused_result));

/*
 * plan_cut_windows - the scenario's cuts as seen from a round that starts
 * at t_s of scenario time: each cut event's fibre down from its time until
 * the next repair of that fibre (inf when none). Cuts are played as they
 * happen to the links: nothing is re-placed. 0 or -ENOMEM.
 */
int plan_cut_windows(struct plan *p, double t_s)
	__attribute__((warn_unused_result));

/* plan_lightpath_crosses - whether lightpath l of p runs over fibre f. */
bool plan_lightpath_crosses(const struct plan *p, int l, int f);

/*
 * plan_lightpath_dark_until - when lightpath l of p comes back from the
 * cuts (p->down) that have it dark at t: the latest of their repairs
 * (INFINITY: never), or t if none does.
 */
double plan_lightpath_dark_until(const struct plan *p, int l, double t);

/* plan_path_crosses - whether path pp of p has a lightpath over fibre f. */
bool plan_path_crosses(const struct plan *p, const struct ppath *pp, int f);

/* plan_task_crosses - whether placed task t of p has a path over fibre f. */
bool plan_task_crosses(const struct plan *p, int t, int f);

/* Whether model m aggregates on upload (root, or has upload children). */
bool task_aggregates(const struct task_plan *tp, int m);

#endif
