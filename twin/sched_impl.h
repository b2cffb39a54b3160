/* SPDX-License-Identifier: MIT */
/*
 * The machinery the schedulers share, for them and their tests: searches
 * over the fibre graph and over the auxiliary graph (fibres with a free
 * wavelength, lit lightpaths with room, add/drop and access links; weights
 * in scenarios/README.md), the realization of a found path as hops,
 * lighting lightpaths by first fit where it crosses bare fibre (sched.c),
 * and trees over terminals (steiner.c).
 */
#ifndef TWIN_SCHED_IMPL_H
#define TWIN_SCHED_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "sched.h"

/* Slack when comparing residual capacity with a demand (Gbit/s). */
#define ROOM_EPS 1e-9

enum search_mode {
	S_KM,			/* fibres only, weight = km (SPFF routes) */
	S_AUX,			/* auxiliary graph, MST weights */
};

enum step_kind { ST_FIBRE, ST_ADDDROP, ST_ACCESS, ST_LIGHTPATH };

struct step {
	enum step_kind kind;
	int idx;
	int from, to;
};

/*
 * An indexed min-heap of keys 0..n-1 with decrease-key: each key is in it
 * at most once, so no stale entries are popped.
 */
struct heap {
	struct heap_item *item;
	int *pos;		/* slot of each key in it, else -1 */
	int n;
};

int heap_init(struct heap *h, int n);
void heap_release(struct heap *h);
/* Insert v (in: false), or lower its key to d (in: it is in the heap). */
void heap_set(struct heap *h, double d, int v, bool in);
int heap_pop(struct heap *h);	/* the key of least d; h->n > 0 */

/*
 * A node's label in one side of a search, valid where stamp == gen; the
 * fields a relaxation reads side by side.
 */
struct label {
	double dist;
	uint32_t stamp;
	int src;		/* index of the nearest source */
	int bucket;		/* in the frontier's queue, or -1: final */
	int next, prev;		/* the bucket's list */
};

/*
 * A search's queue of labelled nodes, a radix heap: Dijkstra takes nodes
 * in order of distance and labels none below the last taken, so a node
 * can be kept in the bucket of the highest bit where its distance differs
 * from that one's (as bits: non-negative doubles order as integers); only
 * the lowest non-empty bucket is ever searched, and its nodes then spread
 * over lower ones. Lowering a label moves its node between two lists.
 * Each bucket is first in, first out: among equal distances the node
 * labelled first is taken first. That order chooses among trees of equal
 * weight (servers at one router are 0 apart): last in, first out made the
 * poster testbed's broadcast trees deeper (relay chains, depth 173 against
 * 143 over the 15-local demo's 30 tasks), which the twin predicted less
 * well (broadcast measured/predicted 0.94-0.96 against 1.00).
 */
struct rqueue {
	uint64_t last;		/* bits of the last distance taken */
	uint64_t used;		/* non-empty buckets */
	int head[64], tail[64];	/* first in, first out among equals */
	int n;
};

/* One side of a Dijkstra search. */
struct frontier {
	struct label *lab;
	struct step *pred;	/* the step that labelled the node */
	struct rqueue q;
};

/* A search's labels and queue over n nodes (search.c). 0 or -ENOMEM. */
int frontier_init(struct frontier *f, int n);
void frontier_release(struct frontier *f);

/* The step each kind of static edge of the auxiliary graph makes. */
extern const enum step_kind step_of[];

struct sched {
	const struct scenario *sc;
	struct net *net;
	struct plan *plan;
	/* search workspace, reused; bwd is the backward half of search_pair */
	int n;
	uint32_t gen;
	struct frontier fwd, bwd;
	double *adj_w;		/* aux weight of each net->adj entry, fixed
				 * (INFINITY: a cut fibre) */
	struct step *steps;	/* path buffer, n entries */
	/* SPFF route cache: per ROADM, predecessor fibre per node, or NULL */
	int **km_pred;
	size_t km_bytes;
	/*
	 * Bytes the tasks placed so far send over each server's access link
	 * in a round, per node: [node * 4 + phase * 2 + dir], phase 0 the
	 * broadcast and 1 the upload, dir 0 server -> router and 1 router ->
	 * server (sched_load_add). What mst's arrival estimates read.
	 */
	double *acc_load;
	/*
	 * ROADMs where realize ends a lightpath it lights over bare fibre
	 * (at the ROADM's router) instead of passing through: where a tree
	 * branches (sched_lit_once). NULL: nowhere.
	 */
	bool *split;
	/*
	 * Per task: 0, or the shape mst places without comparing ('t' its
	 * trees, 's' a star), as its polish asks (sched_plan_forced). NULL:
	 * none forced.
	 */
	const char *force;
};

int sched_init(struct sched *s, struct plan *p) __attribute__((warn_unused_result));

/*
 * sched_plan_forced - sched_plan_keep with force (see struct sched) given
 * to ops->place, and no polish. A plan or NULL with errno set.
 */
struct plan *sched_plan_forced(const struct scenario *sc,
			       const struct sched_ops *ops,
			       const struct plan *prev, const bool *replan,
			       bool *moved, const char *force)
	__attribute__((warn_unused_result));
void sched_release(struct sched *s);

/*
 * search - Dijkstra from srcs[0..nsrc) until target is settled (target < 0:
 * everything reachable). S_AUX with directed = true checks lightpath room
 * in the direction of travel, else in both directions; lambda >= 0 admits
 * only fibres where that wavelength is free. Returns 0, or -ENOENT when the
 * target was not reached.
 */
int search(struct sched *s, const int *srcs, int nsrc, int target,
	   enum search_mode mode, bool directed, int lambda, double demand);

/* After search: whether v was reached, and its distance. */
bool search_reached(const struct sched *s, int v);
double search_dist(const struct sched *s, int v);

/* path_to - steps from the source to v after search; returns their count. */
int path_to(struct sched *s, int v, struct step **out);

/*
 * search_pair - a shortest path from server a to server b on the aux graph
 * as search(..., b, S_AUX, true, lambda, demand) finds it (equal weight;
 * among equally short paths it may pick another), by a bidirectional
 * search. Returns the number of steps, with the steps in *out, -ENOENT
 * when b cannot be reached.
 */
int search_pair(struct sched *s, int a, int b, int lambda, double demand,
		struct step **out);

/* aux_weight - the MST weight of one step (scenarios/README.md). */
double aux_weight(const struct sched *s, const struct step *st);

/*
 * realize - turn steps into pp's hops, reserving demand along the way and
 * lighting lightpaths (first fit, or wavelength lambda if >= 0) over bare
 * fibre runs. On failure everything it changed is undone: -EAGAIN when a
 * fibre run has no common free wavelength, -errno otherwise.
 */
int realize(struct sched *s, struct task_plan *tp, int ti,
	    const struct step *st, int nst, int lambda, struct ppath *pp);

/*
 * route_edge - a path from server a to server b on the current state,
 * realized into pp: shortest on the aux graph, and if wavelength continuity
 * fails there, the first wavelength whose restricted graph has a path.
 * -ENOSPC when none exists.
 */
int route_edge(struct sched *s, struct task_plan *tp, int ti, int a, int b,
	       struct ppath *pp);

/* sched_load_add - count tp's transfers in s->acc_load. */
void sched_load_add(struct sched *s, const struct task_plan *tp);

/*
 * sched_km_route - the shortest route by km from ROADM from to ROADM to,
 * as fibres in order into fib[] (room for every fibre); their count, or
 * -ENOENT. Cached per destination (sched_spff.c).
 */
int sched_km_route(struct sched *s, int from, int to, int *fib);

/*
 * sched_lit_once - place tp's trees with place (a tree scheduler's place);
 * where the lightpaths they lit cross one fibre twice, place them again
 * with lightpaths ending at the routers of the ROADMs where the lit
 * fibres branch, so that a later edge of the trees grooms onto the
 * stretch an earlier one lit, and keep that where it lights fewer fibres.
 * 0, -ENOSPC or -errno, as place.
 */
int sched_lit_once(struct sched *s, struct task_plan *tp, int ti,
		   int (*place)(struct sched *s, struct task_plan *tp,
				int ti));

/* A way to place a task's two trees, by the name plan shows. */
struct sched_way {
	const char *name;
	int (*trees)(struct sched *s, struct task_plan *tp, int ti);
};

/*
 * sched_lightest - place tp with each of way[0..nway) in turn (each lit
 * once, sched_lit_once), undo it, and place it again with the one whose
 * trees weigh least once placed (plan_tree_weight); a tie keeps the
 * earlier. tp->trees_by names it. 0, -ENOSPC (no way placed it: tp->why
 * the first way's reason) or -errno.
 */
int sched_lightest(struct sched *s, struct task_plan *tp, int ti,
		   const struct sched_way *way, int nway);

/* The two trees of mst (sched_mst.c) and of tm (sched_tm.c), unlit. */
int sched_mst_trees(struct sched *s, struct task_plan *tp, int ti);
int sched_tm_trees(struct sched *s, struct task_plan *tp, int ti);

/* task_unplace - forget tp's placement (its resources are the caller's
 * to undo: net_rollback). */
void task_unplace(struct task_plan *tp);

/*
 * terminal_mst - a minimum spanning tree of the metric closure of the aux
 * graph over terminal nodes term[0..k), rooted at term[0]: parent[i] is a
 * terminal index (parent[0] = -1), order[] lists terminals in the order
 * they joined. exact = false uses one multi-source search (Voronoi regions
 * of the terminals; Mehlhorn 1988 shows an MST of that boundary graph is
 * an MST of the closure); exact = true runs k searches and Prim on the full
 * closure. *weight gets the tree's total. -ENOSPC if not connected.
 */
int terminal_mst(struct sched *s, const int *term, int k, double demand,
		 bool exact, int *parent, int *order, double *weight);

/*
 * terminal_kmb - a tree over the terminals term[0..k) by Kou, Markowsky
 * and Berman (1981): the MST of the aux graph's metric closure over them
 * (terminal_mst, exact), each of its edges expanded into a shortest path,
 * the MST of the subgraph those paths span, its leaves that are not
 * terminals pruned. Hung from term[0], each terminal's parent is the
 * nearest terminal above it; parent and order as terminal_mst. 0, -ENOSPC
 * if not connected, -ENOMEM.
 */
int terminal_kmb(struct sched *s, const int *term, int k, double demand,
		 int *parent, int *order);

/*
 * terminal_svi - terminal_kmb's tree improved by Steiner-vertex insertion
 * (Minoux 1990): each router that holds no model is tried as a vertex
 * the tree must also reach, and kept where the tree (pruned of leaves
 * that are no models) weighs less on the auxiliary graph; until a round
 * keeps none. parent and order over the models as terminal_kmb.
 */
int terminal_svi(struct sched *s, const int *term, int k, double demand,
		 int *parent, int *order);


/*
 * place_terminal_tree - a task's broadcast (upload false) or upload tree:
 * parent[] over its models chosen by choose (terminal_mst's or
 * terminal_kmb's contract, weight unused), then each edge routed on the
 * state of the moment (route_edge), root outwards, so each sees the edges
 * placed before it. With stretch > 0, a model whose estimated arrival
 * through its parent is more than stretch times its arrival straight
 * from the root hangs from the root instead, unless it would still be in
 * before the round's slowest model, straight, counting training
 * (sched_mst.c). at (k entries, needed for the bound): the broadcast
 * tree writes there when each model has the model, by the estimate; the
 * upload tree reads it. 0, -ENOSPC (tp->why set) or -errno.
 */
int place_terminal_tree(struct sched *s, struct task_plan *tp, int ti,
			struct tree *t, bool upload, double stretch,
			double *at,
			int (*choose)(struct sched *s, const int *term, int k,
				      double demand, int *parent, int *order));

/*
 * search_voronoi - one search from all terminals term[0..k): m[a * k + b]
 * (k x k, INFINITY off the diagonal, 0 on it, filled in by the caller)
 * gets the cheapest path from terminal a to b through an edge between
 * their Voronoi regions, for every pair the search meets before the
 * regions are known to be joined. 0 or -ENOMEM.
 */
int search_voronoi(struct sched *s, const int *term, int k, double demand,
		   double *m);

#endif
