/* SPDX-License-Identifier: MIT */
/*
 * The network's resource state while tasks are scheduled: which wavelength
 * is lit on which fibre, the lightpaths (IP links between routers) and their
 * residual capacity in each direction. Every change goes through an undo log
 * so a task that cannot be placed is rolled back exactly.
 */
#ifndef TWIN_NET_H
#define TWIN_NET_H

#include <stdbool.h>
#include <stdint.h>

#include "scenario.h"

/* Fibre propagation delay: group index ~1.47 gives 4.9 us per km. */
#define FIBRE_S_PER_KM 4.9e-6

/*
 * How long the last packets sent over a path of km may still be on their
 * way (scenario seconds): its propagation with a margin of a fifth for
 * the delay line. Callers add what their clock needs on top.
 */
static inline double net_in_flight_s(double km)
{
	return 1.2 * km * FIBRE_S_PER_KM;
}

/* Static graph edges (the aux graph adds lightpaths on top). */
enum edge_kind { E_FIBRE, E_ADDDROP, E_ACCESS };

struct adj {
	int to;
	int idx;		/* E_FIBRE: fibre; E_ADDDROP: router; E_ACCESS: server */
	enum edge_kind kind;
};

struct lightpath {
	int a, b;		/* router node indices; fibres run a -> b */
	int lambda;
	int nfib;
	int *fib;		/* fibre indices in order from a to b */
	double km;
	double cap_gbps;
	double resid[2];	/* [0] a->b, [1] b->a */
	int task;		/* scenario task index that lit it */
	int end[2];		/* its slot in router_ends of a, of b */
};

/*
 * A lightpath as the searches see it from one of its routers: where it
 * goes, what it weighs, and its room leaving and entering this router
 * (copies of resid[], kept by net_reserve and net_rollback). The ends at
 * a router lie side by side, so a search scanning the router reads one
 * short array instead of a lightpath's whole record per lightpath.
 */
struct lp_end {
	int lp;
	int to;			/* the router at its other end */
	double w;		/* weight_lightpath() */
	double out, in;		/* room leaving, entering this router */
};

struct lp_ends {
	int n, cap;
	struct lp_end *v;
};

struct int_vec {
	int n, cap;
	int *v;
};

enum undo_kind { U_RESERVE, U_LIGHT };

struct undo {
	enum undo_kind kind;
	int lp, dir;
	double amount;
};

struct net {
	const struct scenario *sc;
	/* CSR adjacency of the static graph */
	int *adj_start;		/* nnodes + 1 */
	struct adj *adj;
	/* wavelength bitmaps, one per fibre, words of 64 */
	int words;
	uint64_t *used;		/* nfibres * words */
	int nlp, caplp;
	struct lightpath *lp;
	struct lp_ends *router_ends; /* per node: lightpaths ending there */
	int nundo, capundo;
	struct undo *undo;
};

/* net_new - resource state of an empty network. NULL and errno on failure. */
struct net *net_new(const struct scenario *sc) __attribute__((warn_unused_result));
void net_free(struct net *net);

static inline bool net_lambda_free(const struct net *net, int fibre, int l)
{
	return !(net->used[(long)fibre * net->words + l / 64] >>
		 (l % 64) & 1);
}

/* net_any_free - whether fibre has at least one free wavelength. */
bool net_any_free(const struct net *net, int fibre);

/*
 * net_first_fit - lowest wavelength free on every fibre of fib[0..n), or -1.
 * Only wavelengths that exist on every fibre are considered.
 */
int net_first_fit(const struct net *net, const int *fib, int n);

/*
 * net_light - light a lightpath a -> b over fib[0..n) on wavelength lambda
 * (which must be free on each). Returns its index or -errno.
 */
int net_light(struct net *net, int a, int b, const int *fib, int n,
	      int lambda, int task) __attribute__((warn_unused_result));

/* net_reserve - take amount Gbit/s of lightpath lp in direction dir. 0 or -errno. */
int net_reserve(struct net *net, int lp, int dir, double amount)
	__attribute__((warn_unused_result));

/* Undo log: a mark, and rollback to it (reverse order). */
static inline int net_mark(const struct net *net)
{
	return net->nundo;
}
void net_rollback(struct net *net, int mark);

/* Direction of travel on lightpath lp when leaving router from. */
static inline int lp_dir_from(const struct lightpath *lp, int from)
{
	return lp->a == from ? 0 : 1;
}

/*
 * net_find_lightpath - the lightpath of net that is x's twin (same
 * routers, fibres and wavelength; x may be of another net over the same
 * scenario), or -1.
 */
int net_find_lightpath(const struct net *net, const struct lightpath *x);

/* net_lightpath_loss - the probability that a packet sent into lp is lost
 * on one of its fibres: 1 - prod(1 - loss). */
double net_lightpath_loss(const struct scenario *sc,
			  const struct lightpath *lp);

/*
 * The scheduler weights of the auxiliary graph's edges (scenarios/README.md,
 * "Scheduler weights"): a fibre crossed on a free wavelength, one add or
 * drop, the access link of server s, a lit lightpath.
 */
double weight_fibre(const struct scenario *sc, int fibre);
double weight_adddrop(const struct scenario *sc);
double weight_access(const struct scenario *sc, int server);
double weight_lightpath(const struct scenario *sc, const struct lightpath *lp);

int int_vec_push(struct int_vec *v, int x) __attribute__((warn_unused_result));

#endif
