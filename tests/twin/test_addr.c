// SPDX-License-Identifier: MIT
/*
 * Addressing and routes: every address unique and inside the range, one
 * route per (router, destination), and forwarding packet by packet along
 * the routes delivers every transfer, and its replies, over exactly the
 * planned path.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>

#include "twin/addr.h"
#include "twin/sched.h"

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

static const struct route *lookup(const struct addressing *a, int node,
				  uint32_t dst)
{
	const struct route *hit = NULL;

	for (int i = 0; i < a->nroutes; i++)
		if (a->routes[i].node == node && a->routes[i].dst == dst) {
			cr_assert_null(hit, "two routes to %x at node %d", dst,
				       node);
			hit = &a->routes[i];
		}
	return hit;
}

/* Forward from server `from` to dst; returns the server reached. */
static int forward(const struct plan *p, const struct addressing *a,
		   int from, uint32_t dst, int *hops)
{
	int at = p->sc->nodes[from].attach;	/* default route */

	*hops = 1;
	for (int guard = 0; guard < 64; guard++) {
		const struct route *r = lookup(a, at, dst);
		int next;

		cr_assert_not_null(r, "no route at %s", p->sc->nodes[at].name);
		cr_assert_eq(addr_on_link(p, a, r->link, at) ^ 1, r->via,
			     "next hop is not the link's far end");
		if (r->link < 2 * p->sc->nnodes)
			next = r->link % 2 ? r->link / 2
					   : p->sc->nodes[r->link / 2].attach;
		else {
			const struct lightpath *lp =
				&p->net->lp[(r->link - 2 * p->sc->nnodes) / 2];

			cr_assert(lp->a == at || lp->b == at);
			next = lp->a == at ? lp->b : lp->a;
		}
		(*hops)++;
		if (p->sc->nodes[next].kind == NODE_SERVER)
			return next;
		at = next;
	}
	cr_assert_fail("routing loop towards %x", dst);
	return -1;
}

static void check(const char *file)
{
	struct scn_error err;
	struct scenario *sc = scenario_load(file, &err);

	cr_assert_not_null(sc, "%s: %s", file, err.msg);
	for (int s = 0; sched_list[s]; s++) {
		struct plan *p = sched_plan(sc, sched_list[s]);
		struct addressing *a;
		uint32_t *all, n = 0;

		cr_assert_not_null(p);
		a = addressing_new(p);
		cr_assert_not_null(a);
		all = malloc(sizeof(*all) * (a->used + 1));
		for (int i = 0; i < sc->nnodes; i++)
			if (sc->nodes[i].kind == NODE_SERVER) {
				all[n++] = a->access[i];
				all[n++] = a->access[i] + 1;
			}
		for (int l = 0; l < p->net->nlp; l++) {
			all[n++] = a->lightpath[l];
			all[n++] = a->lightpath[l] + 1;
		}
		for (int t = 0; t < p->ntasks; t++) {
			const struct task_plan *tp = &p->tasks[t];

			for (int m = 1; m < tp->nmodels; m++)
				for (int up = 0; up < 2; up++) {
					const struct endpoint *ep =
						&a->ep[t][2 * m + up];
					const struct tree *tr =
						up ? &tp->up : &tp->bcast;
					const struct ppath *pp = &tr->path[m];
					int hops;

					/* a blocked task: addresses, no
					 * routes */
					all[n++] = ep->src;
					all[n++] = ep->dst;
					if (tp->blocked)
						continue;
					cr_assert_eq(forward(p, a, pp->from,
							     ep->dst, &hops),
						     pp->to);
					cr_assert_eq(hops, pp->nhops);
					cr_assert_eq(forward(p, a, pp->to,
							     ep->src, &hops),
						     pp->from);
					cr_assert_eq(hops, pp->nhops);
				}
		}
		cr_assert_eq(n, a->used - 2);
		qsort(all, n, sizeof(*all), cmp_u32);
		for (uint32_t i = 0; i < n; i++) {
			cr_assert_geq(all[i], a->base + 2);
			cr_assert_lt(all[i] - a->base,
				     1u << (32 - a->prefix));
			if (i)
				cr_assert_neq(all[i], all[i - 1],
					      "address used twice");
		}
		free(all);
		addressing_free(a);
		plan_free(p);
	}
	scenario_free(sc);
}

Test(addr, teaching_ring)
{
	check("scenarios/teaching-ring.yaml");
}

Test(addr, poster_testbed)
{
	check("scenarios/poster-testbed.yaml");
}

Test(addr, small_range)
{
	static const char y[] =
		"name: x\nwavelength_gbps: 10\nwavelengths: 1\n"
		"demand_gbps: 1\naddressing: 10.0.0.0/24\nroadms: [A, B]\n"
		"fibres: [{a: A, b: B, km: 1}]\n"
		"routers: [{name: rA, roadm: A}, {name: rB, roadm: B}]\n"
		"servers:\n"
		"  - {name: s1, router: rA, access_gbps: 9, cpu: 1, memory_mib: 1}\n"
		"  - {name: s2, router: rB, access_gbps: 9, cpu: 1, memory_mib: 1}\n"
		"tasks:\n"
		"  - {name: a, global: s1, locals: [s2], parameters: 1,\n"
		"     bytes_per_parameter: 1, work_core_s: 0}\n";
	struct scn_error err;
	struct scenario *sc = scenario_parse(y, strlen(y), "x", &err);
	struct plan *p;
	struct addressing *a;

	cr_assert_not_null(sc, "%s", err.msg);
	p = sched_plan(sc, &sched_mst);
	a = addressing_new(p);
	/* 4 access + 2 lightpath + 4 endpoint addresses fit in a /24 */
	cr_assert_not_null(a);
	cr_assert_eq(a->used, 2 + 4 + 2 + 4);
	addressing_free(a);
	plan_free(p);
	scenario_free(sc);
}

/* 70 one-local tasks need 280 transfer addresses: more than a /24. */
Test(addr, range_too_small)
{
	char *y = malloc(1 << 16);
	int off;
	struct scn_error err;
	struct scenario *sc;
	struct plan *p;

	cr_assert_not_null(y);
	off = sprintf(y, "name: x\nwavelength_gbps: 100\nwavelengths: 8\n"
			 "demand_gbps: 0.1\naddressing: 10.0.0.0/24\n"
			 "roadms: [A, B]\nfibres: [{a: A, b: B, km: 1}]\n"
			 "routers: [{name: rA, roadm: A}, {name: rB, roadm: B}]\n"
			 "servers:\n"
			 "  - {name: s1, router: rA, access_gbps: 9, cpu: 1, memory_mib: 1}\n"
			 "  - {name: s2, router: rB, access_gbps: 9, cpu: 1, memory_mib: 1}\n"
			 "tasks:\n");
	for (int t = 0; t < 70; t++)
		off += sprintf(y + off, "  - {name: t%d, global: s1, locals: [s2], "
				       "parameters: 1, bytes_per_parameter: 1, "
				       "work_core_s: 0}\n", t);
	sc = scenario_parse(y, (size_t)off, "x", &err);
	cr_assert_not_null(sc, "%s", err.msg);
	p = sched_plan(sc, &sched_spff);
	cr_assert_not_null(p);
	cr_assert_eq(p->blocked, 0);
	errno = 0;
	cr_assert_null(addressing_new(p));
	cr_assert_eq(errno, ENOSPC);
	plan_free(p);
	scenario_free(sc);
	free(y);
}

/*
 * Background traffic (the ring's events file, and traffic between two
 * routers): each routed flow has its own pair after the transfers', which
 * keep theirs, and routes that carry it over its path both ways, from and
 * to routers too.
 */
static int walk(const struct plan *p, const struct addressing *a, int from,
		int to, uint32_t dst, int *hops)
{
	bool srv = p->sc->nodes[from].kind == NODE_SERVER;
	int at = srv ? p->sc->nodes[from].attach : from;

	*hops = srv;
	for (int guard = 0; guard < 64 && at != to; guard++) {
		const struct route *r = lookup(a, at, dst);

		cr_assert_not_null(r, "no route at %s", p->sc->nodes[at].name);
		if (r->link < 2 * p->sc->nnodes) {
			at = r->link % 2 ? r->link / 2 :
					   p->sc->nodes[r->link / 2].attach;
		} else {
			const struct lightpath *lp =
				&p->net->lp[(r->link - 2 * p->sc->nnodes) / 2];

			at = lp->a == at ? lp->b : lp->a;
		}
		(*hops)++;
	}
	return at;
}

Test(addr, background_traffic)
{
	struct scn_error err;
	struct scenario *sc = scenario_load("scenarios/teaching-ring.yaml",
					    &err);
	struct plan *quiet, *p;
	struct addressing *aq, *a;

	cr_assert_not_null(sc, "%s", err.msg);
	cr_assert_eq(scenario_load_events(sc,
		"scenarios/events/teaching-ring-cut.yaml", &err), 0, "%s",
		err.msg);
	quiet = sched_plan(sc, &sched_mst);
	cr_assert_not_null(quiet);
	aq = addressing_new(quiet);
	cr_assert_not_null(aq);
	cr_assert_eq(scenario_traffic_all(sc), 0);
	cr_assert_eq(sc->nbg, 1);
	/* and one between the routers of A and C */
	sc->bg[1] = (struct scn_bg){ 0, scenario_find(sc, "r1"),
				     scenario_find(sc, "r3"), 1 };
	sc->nbg = 2;
	p = sched_plan(sc, &sched_mst);
	cr_assert_not_null(p);
	cr_assert_eq(plan_background(p), 0);
	a = addressing_new(p);
	cr_assert_not_null(a);
	cr_assert_eq(a->nbg, 2);
	cr_assert_eq(a->used, aq->used + 4);
	for (int t = 0; t < p->ntasks; t++)
		for (int k = 2; k < 2 * p->tasks[t].nmodels; k++) {
			cr_assert_eq(a->ep[t][k].src, aq->ep[t][k].src);
			cr_assert_eq(a->ep[t][k].dst, aq->ep[t][k].dst);
		}
	for (int i = 0; i < 2; i++) {
		const struct bg_flow *f = &p->bg[i];
		int hops;

		cr_assert(f->routed, "%s", f->why);
		cr_assert_geq(a->bg[i].src, aq->base + aq->used);
		cr_assert_eq(walk(p, a, f->bg->from, f->bg->to, a->bg[i].dst,
				  &hops), f->bg->to);
		cr_assert_eq(hops, f->path.nhops);
		cr_assert_eq(walk(p, a, f->bg->to, f->bg->from, a->bg[i].src,
				  &hops), f->bg->from);
		cr_assert_eq(hops, f->path.nhops);
	}
	addressing_free(a);
	addressing_free(aq);
	plan_free(p);
	plan_free(quiet);
	scenario_free(sc);
}
