// SPDX-License-Identifier: MIT
/*
 * Schedulers: known answers on topologies small enough to check by hand,
 * and properties on seeded random topologies.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twin/predict.h"
#include "twin/sched_impl.h"

static struct scenario *parse(const char *yaml)
{
	struct scn_error err;
	struct scenario *sc = scenario_parse(yaml, strlen(yaml), "test", &err);

	cr_assert_not_null(sc, "scenario rejected: %d:%d: %s", err.line,
			   err.col, err.msg);
	return sc;
}

static struct plan *plan_of(const struct scenario *sc,
			    const struct sched_ops *ops)
{
	struct plan *p = sched_plan(sc, ops);

	cr_assert_not_null(p, "sched_plan failed");
	return p;
}

/*
 * An empty plan of sc for mst and s its state, on which mst's searches
 * are checked, as they are or as mst_place places the tasks one by one.
 */
static struct plan *mst_plan(const struct scenario *sc, struct sched *s)
{
	struct plan *p = plan_new(sc, "mst");

	cr_assert_not_null(p);
	cr_assert_eq(sched_init(s, p), 0);
	return p;
}

/* Task t placed as mst places it; one that does not fit leaves nothing. */
static void mst_place(struct sched *s, struct plan *p, int t)
{
	int mark = net_mark(p->net);

	if (sched_mst.place(s, &p->tasks[t], t))
		net_rollback(p->net, mark);
}

/* What mst_plan made; plan_free releases the paths placed by hand. */
static void mst_plan_free(struct sched *s, struct plan *p)
{
	sched_release(s);
	plan_free(p);
}

/*
 * Ring A-B-C-D-A; A-B, B-C, C-D 100 km, D-A 250 km. G on A, locals on B,
 * C, D. SPFF: A-B direct, A-C over B (200 < 350 km), A-D direct (250 <
 * 300 km); first fit gives A-C wavelength 1 since A-B's 0 is taken.
 * MST: the chain A-B-C-D (1.149 per ring step vs 1.2225 for D-A).
 */
/* never_slower off, no stretch and beta 0.1 as worked by hand: these
 * check mst's own trees */
static const char ring4[] =
	"name: ring4\nnever_slower: false\nweights: {beta: 0.1, stretch: 0}\n"
	"wavelength_gbps: 100\nwavelengths: 4\ndemand_gbps: 10\n"
	"roadms: [A, B, C, D]\n"
	"fibres:\n"
	"  - {a: A, b: B, km: 100}\n  - {a: B, b: C, km: 100}\n"
	"  - {a: C, b: D, km: 100}\n  - {a: D, b: A, km: 250}\n"
	"routers:\n"
	"  - {name: rA, roadm: A}\n  - {name: rB, roadm: B}\n"
	"  - {name: rC, roadm: C}\n  - {name: rD, roadm: D}\n"
	"servers:\n"
	"  - {name: sA, router: rA, access_gbps: 100, cpu: 1, memory_mib: 64}\n"
	"  - {name: sB, router: rB, access_gbps: 100, cpu: 1, memory_mib: 64}\n"
	"  - {name: sC, router: rC, access_gbps: 100, cpu: 1, memory_mib: 64}\n"
	"  - {name: sD, router: rD, access_gbps: 100, cpu: 1, memory_mib: 64}\n"
	"tasks:\n"
	"  - {name: t, global: sA, locals: [sB, sC, sD], parameters: 1000,\n"
	"     bytes_per_parameter: 4, work_core_s: 0}\n";

Test(sched_known, spff_ring)
{
	struct scenario *sc = parse(ring4);
	struct plan *p = plan_of(sc, &sched_spff);
	const struct task_plan *tp = &p->tasks[0];
	const struct net *n = p->net;

	cr_assert_eq(p->blocked, 0);
	cr_assert_eq(n->nlp, 3);
	/* lp0 A-B on 0, lp1 A-B-C on 1, lp2 A-D on 0 */
	cr_assert_eq(n->lp[0].nfib, 1);
	cr_assert_eq(n->lp[0].lambda, 0);
	cr_assert_eq(n->lp[1].nfib, 2);
	cr_assert_eq(n->lp[1].lambda, 1);
	cr_assert_eq(n->lp[2].nfib, 1);
	cr_assert_eq(n->lp[2].lambda, 0);
	cr_assert_float_eq(n->lp[2].km, 250, 1e-9);
	for (int m = 1; m < 4; m++) {
		cr_assert_eq(tp->bcast.parent[m], 0);
		cr_assert_eq(tp->up.parent[m], 0);
		cr_assert_eq(tp->bcast.path[m].nhops, 3);
	}
	cr_assert_eq(p->wavelength_links, 4);
	cr_assert_float_eq(p->bytes_links, 4000.0 * 2 * (1 + 2 + 1), 1e-6);
	cr_assert(task_aggregates(tp, 0));
	for (int m = 1; m < 4; m++)
		cr_assert_not(task_aggregates(tp, m));
	plan_free(p);
	scenario_free(sc);
}

/* A lightpath loses what any of its fibres loses: 1 - prod(1 - loss). */
Test(sched_known, lightpath_loss_compounds_over_its_fibres)
{
	struct scenario *sc = parse(ring4);
	struct plan *p;

	sc->fibres[0].loss = 0.1;	/* A-B */
	sc->fibres[1].loss = 0.2;	/* B-C */
	p = plan_of(sc, &sched_spff);
	cr_assert_eq(p->net->nlp, 3);
	cr_assert_float_eq(net_lightpath_loss(sc, &p->net->lp[0]), 0.1,
			   1e-12);
	cr_assert_float_eq(net_lightpath_loss(sc, &p->net->lp[1]),
			   1 - 0.9 * 0.8, 1e-12);
	cr_assert_eq(net_lightpath_loss(sc, &p->net->lp[2]), 0);
	plan_free(p);
	scenario_free(sc);
}

Test(sched_known, mst_ring)
{
	struct scenario *sc = parse(ring4);
	struct plan *p = plan_of(sc, &sched_mst);
	const struct task_plan *tp = &p->tasks[0];

	cr_assert_eq(p->blocked, 0);
	/* chain G -> sB -> sC -> sD, both ways */
	for (int m = 1; m < 4; m++) {
		cr_assert_eq(tp->bcast.parent[m], m - 1, "model %d", m);
		cr_assert_eq(tp->up.parent[m], m - 1, "model %d", m);
	}
	/* three one-fibre lightpaths, all lit by the broadcast, reused up */
	cr_assert_eq(p->net->nlp, 3);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(p->net->lp[i].nfib, 1);
		cr_assert_eq(p->net->lp[i].lambda, 0);
		cr_assert_float_eq(p->net->lp[i].resid[0], 90, 1e-9);
		cr_assert_float_eq(p->net->lp[i].resid[1], 90, 1e-9);
	}
	cr_assert_eq(p->wavelength_links, 3);
	cr_assert_float_eq(p->bytes_links, 4000.0 * 2 * 3, 1e-6);
	/*
	 * tree_weight: each broadcast edge lights its fibre (add 0.05, fibre
	 * 1 + 0.1 x 0.49 ms, drop 0.05: 1.149), each upload edge reuses that
	 * lightpath (1 x 0.1 reuse + 0.049: 0.149)
	 */
	cr_assert_float_eq(tp->tree_weight, 3 * (1.149 + 0.149), 1e-9, "%.6f",
			   tp->tree_weight);
	cr_assert(task_aggregates(tp, 0));
	cr_assert(task_aggregates(tp, 1));
	cr_assert(task_aggregates(tp, 2));
	cr_assert_not(task_aggregates(tp, 3));
	plan_free(p);
	scenario_free(sc);
}

Test(sched_known, mst_weight_by_hand)
{
	struct scenario *sc = parse(ring4);
	struct sched s;
	struct plan *p = mst_plan(sc, &s);
	int term[4] = { scenario_find(sc, "sA"), scenario_find(sc, "sB"),
			scenario_find(sc, "sC"), scenario_find(sc, "sD") };
	int parent[4], order[4];
	double w, step = 0.05 + (1 + 0.1 * 100 * 4.9e-3) + 0.05;

	for (int exact = 0; exact < 2; exact++) {
		cr_assert_eq(terminal_mst(&s, term, 4, 10, exact, parent,
					  order, &w), 0);
		cr_assert_float_eq(w, 3 * step, 1e-12, "exact=%d: %g", exact,
				   w);
		cr_assert_eq(parent[3], 2);
	}
	mst_plan_free(&s, p);
	scenario_free(sc);
}

/* One wavelength on A-B: the second task's SPFF path is blocked. */
Test(sched_known, spff_blocks_without_wavelength)
{
	static const char y[] =
		"name: tiny\nwavelength_gbps: 10\nwavelengths: 1\n"
		"demand_gbps: 10\nroadms: [A, B]\n"
		"fibres: [{a: A, b: B, km: 10}]\n"
		"routers: [{name: rA, roadm: A}, {name: rB, roadm: B}]\n"
		"servers:\n"
		"  - {name: s1, router: rA, access_gbps: 100, cpu: 1, memory_mib: 1}\n"
		"  - {name: s2, router: rB, access_gbps: 100, cpu: 1, memory_mib: 1}\n"
		"tasks:\n"
		"  - {name: a, global: s1, locals: [s2], parameters: 1,\n"
		"     bytes_per_parameter: 1, work_core_s: 0}\n"
		"  - {name: b, global: s2, locals: [s1], parameters: 1,\n"
		"     bytes_per_parameter: 1, work_core_s: 0}\n";
	struct scenario *sc = parse(y);

	for (int i = 0; i < 2; i++) {
		struct plan *p = plan_of(sc, i ? &sched_mst : &sched_spff);

		cr_assert_eq(p->blocked, 1, "%s", p->scheduler);
		cr_assert_not(p->tasks[0].blocked);
		cr_assert(p->tasks[1].blocked);
		cr_assert_neq(p->tasks[1].why[0], '\0');
		/* the blocked task holds nothing */
		cr_assert_eq(p->net->nlp, 1);
		cr_assert_eq(p->tasks[1].lit.n, 0);
		cr_assert_float_eq(p->net->lp[0].resid[0], 0, 1e-9);
		plan_free(p);
	}
	scenario_free(sc);
}

/* ---- SPFF linear, MST flat: n locals at the far side of a ring -------- */

static char *ring_far(int n)
{
	size_t cap = 8192;
	char *y = malloc(cap);
	int off;

	cr_assert_not_null(y);
	off = snprintf(y, cap,
		       "name: far\nnever_slower: false\nwavelength_gbps: 100\nwavelengths: 16\n"
		       "demand_gbps: 10\nroadms: [R0,R1,R2,R3,R4,R5,R6,R7]\n"
		       "fibres:\n");
	for (int i = 0; i < 8; i++)
		off += snprintf(y + off, cap - off,
				"  - {a: R%d, b: R%d, km: 50}\n", i, (i + 1) % 8);
	off += snprintf(y + off, cap - off, "routers:\n");
	for (int i = 0; i < 8; i++)
		off += snprintf(y + off, cap - off,
				"  - {name: r%d, roadm: R%d}\n", i, i);
	off += snprintf(y + off, cap - off,
			"servers:\n  - {name: g, router: r0, access_gbps: 100,"
			" cpu: 1, memory_mib: 1}\n");
	for (int i = 0; i < n; i++)
		off += snprintf(y + off, cap - off,
				"  - {name: l%d, router: r4, access_gbps: 100, "
				"cpu: 1, memory_mib: 1}\n", i);
	off += snprintf(y + off, cap - off,
			"tasks:\n  - name: t\n    global: g\n    locals: [");
	for (int i = 0; i < n; i++)
		off += snprintf(y + off, cap - off, "%sl%d", i ? ", " : "", i);
	snprintf(y + off, cap - off,
		 "]\n    parameters: 1000\n    bytes_per_parameter: 4\n"
		 "    work_core_s: 0\n");
	return y;
}

Test(sched_props, spff_linear_mst_flat_on_ring)
{
	const double per = 4000.0 * 2 * 4;	/* model x 2 ways x 4 fibres */

	for (int n = 1; n <= 12; n++) {
		char *y = ring_far(n);
		struct scenario *sc = parse(y);
		struct plan *ps = plan_of(sc, &sched_spff);
		struct plan *pm = plan_of(sc, &sched_mst);

		cr_assert_eq(ps->blocked + pm->blocked, 0);
		cr_assert_float_eq(ps->bytes_links, n * per, 1e-6, "n=%d", n);
		cr_assert_float_eq(pm->bytes_links, per, 1e-6, "n=%d", n);
		plan_free(ps);
		plan_free(pm);
		scenario_free(sc);
		free(y);
	}
}

/* ---- properties on random topologies ---------------------------------- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

/* A random connected mesh: a random tree plus chords; scarce wavelengths. */
static char *random_scenario(uint64_t seed, int nroadm, int ntasks)
{
	size_t cap = 1 << 16;
	char *y = malloc(cap);
	int off, nsrv = 2 * nroadm, nrtr = 0;
	bool *edge = calloc((size_t)nroadm * nroadm, sizeof(*edge));
	int *rtr = calloc((size_t)nroadm, sizeof(*rtr));

	cr_assert(y && edge && rtr);
	rng_state = seed * 2654435761u + 1;
	off = snprintf(y, cap,
		       "name: rnd\nwavelength_gbps: 100\nwavelengths: %u\n"
		       "demand_gbps: %u\nroadms: [", 2 + rnd(3), 10 + 10 * rnd(5));
	for (int i = 0; i < nroadm; i++)
		off += snprintf(y + off, cap - off, "%sX%d", i ? ", " : "", i);
	off += snprintf(y + off, cap - off, "]\nfibres:\n");
	for (int i = 1; i < nroadm; i++) {
		int j = (int)rnd((uint32_t)i);

		edge[i * nroadm + j] = edge[j * nroadm + i] = true;
		off += snprintf(y + off, cap - off,
				"  - {a: X%d, b: X%d, km: %u}\n", i, j,
				10 + rnd(400));
	}
	for (int k = 0; k < nroadm; k++) {
		int i = (int)rnd((uint32_t)nroadm), j = (int)rnd((uint32_t)nroadm);

		if (i == j || edge[i * nroadm + j])
			continue;
		edge[i * nroadm + j] = edge[j * nroadm + i] = true;
		off += snprintf(y + off, cap - off,
				"  - {a: X%d, b: X%d, km: %u}\n", i, j,
				10 + rnd(400));
	}
	off += snprintf(y + off, cap - off, "routers:\n");
	/* a few ROADMs without a router: pure optical transit */
	for (int i = 0; i < nroadm; i++) {
		if (i >= 2 && rnd(5) == 0)
			continue;
		off += snprintf(y + off, cap - off,
				"  - {name: r%d, roadm: X%d}\n", i, i);
		rtr[nrtr++] = i;
	}
	off += snprintf(y + off, cap - off, "servers:\n");
	for (int i = 0; i < nsrv; i++)
		off += snprintf(y + off, cap - off,
				"  - {name: s%d, router: r%d, access_gbps: 100, "
				"cpu: 1, memory_mib: 1}\n", i, rtr[i % nrtr]);
	off += snprintf(y + off, cap - off, "tasks:\n");
	for (int t = 0; t < ntasks; t++) {
		int g = (int)rnd((uint32_t)nsrv), n = 1 + (int)rnd(6);
		bool *used = calloc((size_t)nsrv, sizeof(*used));

		cr_assert_not_null(used);
		used[g] = true;
		off += snprintf(y + off, cap - off,
				"  - name: t%d\n    global: s%d\n    locals: [",
				t, g);
		for (int k = 0; k < n; k++) {
			int l = (int)rnd((uint32_t)nsrv);

			while (used[l])
				l = (l + 1) % nsrv;
			used[l] = true;
			off += snprintf(y + off, cap - off, "%ss%d",
					k ? ", " : "", l);
		}
		off += snprintf(y + off, cap - off,
				"]\n    parameters: %u\n    bytes_per_parameter: 4\n"
				"    work_core_s: 0.001\n",
				1000 + rnd(100000));
		free(used);
	}
	free(edge);
	free(rtr);
	cr_assert_lt((size_t)off, cap - 1);
	return y;
}

/* Walk a path; it must be contiguous from `from` to `to`. */
static void check_path(const struct plan *p, const struct ppath *pp, int from,
		       int to)
{
	int at = from;

	cr_assert_eq(pp->from, from);
	cr_assert_eq(pp->to, to);
	cr_assert_geq(pp->nhops, 2);
	for (int h = 0; h < pp->nhops; h++) {
		const struct hop *x = &pp->hops[h];

		if (x->kind == HOP_ACCESS) {
			int s = x->idx, r = p->sc->nodes[s].attach;

			cr_assert_eq(at, x->dir ? r : s, "access hop from %d",
				     at);
		} else {
			const struct lightpath *lp = &p->net->lp[x->idx];

			cr_assert_eq(at, x->dir ? lp->b : lp->a,
				     "lightpath hop from wrong end");
		}
		at = hop_next(p, at, x);
	}
	cr_assert_eq(at, to, "path ends at %d, not %d", at, to);
}

static void check_plan(const struct plan *p)
{
	const struct scenario *sc = p->sc;
	const struct net *n = p->net;
	double *use = calloc((size_t)2 * n->nlp + 1, sizeof(*use));
	int *seen = calloc((size_t)sc->nfibres * 64 * n->words + 1,
			   sizeof(*seen));

	cr_assert(use && seen);
	/* wavelengths: continuity, no reuse on a fibre, within W */
	for (int l = 0; l < n->nlp; l++) {
		const struct lightpath *lp = &n->lp[l];
		int at = sc->nodes[lp->a].attach;

		cr_assert_geq(lp->nfib, 1);
		for (int i = 0; i < lp->nfib; i++) {
			const struct scn_fibre *f = &sc->fibres[lp->fib[i]];
			int k = lp->fib[i] * 64 * n->words + lp->lambda;

			cr_assert(f->a == at || f->b == at,
				  "lightpath %d not contiguous", l);
			at = f->a == at ? f->b : f->a;
			cr_assert_lt(lp->lambda, f->wavelengths);
			cr_assert_eq(seen[k], 0,
				     "wavelength %d used twice on fibre %d",
				     lp->lambda, lp->fib[i]);
			seen[k] = 1;
		}
		cr_assert_eq(at, sc->nodes[lp->b].attach);
		cr_assert_not(p->tasks[lp->task].blocked,
			      "a blocked task holds lightpath %d", l);
	}
	/* trees and paths; lightpath capacity from the paths */
	for (int t = 0; t < p->ntasks; t++) {
		const struct task_plan *tp = &p->tasks[t];

		if (tp->blocked)
			continue;
		for (int m = 1; m < tp->nmodels; m++) {
			for (int up = 0; up < 2; up++) {
				const struct tree *tr = up ? &tp->up : &tp->bcast;
				const struct ppath *pp = &tr->path[m];
				int par = tr->parent[m], steps = 0;

				/* the parent chain reaches the root */
				for (int v = m; v != 0; v = tr->parent[v]) {
					cr_assert_geq(tr->parent[v], 0);
					cr_assert_leq(++steps, tp->nmodels,
						      "cycle in tree");
				}
				check_path(p, pp,
					   tp->server[up ? m : par],
					   tp->server[up ? par : m]);
				for (int h = 0; h < pp->nhops; h++)
					if (pp->hops[h].kind == HOP_LIGHTPATH)
						use[2 * pp->hops[h].idx +
						    pp->hops[h].dir] +=
							tp->task->demand_gbps;
			}
		}
	}
	for (int l = 0; l < n->nlp; l++)
		for (int d = 0; d < 2; d++) {
			cr_assert_leq(use[2 * l + d], n->lp[l].cap_gbps + 1e-9,
				      "lightpath %d over capacity", l);
			cr_assert_float_eq(n->lp[l].cap_gbps - n->lp[l].resid[d],
					   use[2 * l + d], 1e-9);
		}
	free(use);
	free(seen);
}

struct rnd_case {
	uint64_t seed;
	int roadms, tasks;
};

static struct rnd_case rnd_cases[] = {
	{ 1, 5, 6 },   { 2, 8, 10 },  { 3, 12, 15 }, { 4, 6, 20 },
	{ 5, 10, 25 }, { 6, 16, 30 }, { 7, 7, 12 },  { 8, 20, 20 },
	{ 9, 9, 30 },  { 10, 14, 40 }, { 11, 4, 10 }, { 12, 25, 30 },
};

/* One of the servers s0 .. s<nsrv-1> at random: its node, its name in nm. */
static int rnd_server(const struct scenario *sc, int nsrv, char nm[16])
{
	snprintf(nm, 16, "s%u", rnd((uint32_t)nsrv));
	return scenario_find(sc, nm);
}

/* The cases each property below is checked on. */
static struct criterion_test_params rnd_params(void)
{
	return cr_make_param_array(struct rnd_case, rnd_cases,
				   sizeof(rnd_cases) / sizeof(rnd_cases[0]));
}

/* Case c's random scenario, drawn from seed c->seed + salt. */
static struct scenario *rnd_scenario(const struct rnd_case *c, uint64_t salt)
{
	char *y = random_scenario(c->seed + salt, c->roadms, c->tasks);
	struct scenario *sc = parse(y);

	free(y);
	return sc;
}

ParameterizedTestParameters(sched_props, random)
{
	return rnd_params();
}

ParameterizedTest(struct rnd_case *c, sched_props, random)
{
	struct scenario *sc = rnd_scenario(c, 0);

	for (int i = 0; sched_list[i]; i++) {
		struct plan *p = plan_of(sc, sched_list[i]);

		check_plan(p);
		cr_assert_eq(predict_round(p), 0);
		for (int t = 0; t < p->ntasks; t++)
			if (!p->tasks[t].blocked)
				cr_assert_gt(p->tasks[t].round_s, 0);
		plan_free(p);
	}
	scenario_free(sc);
}

ParameterizedTestParameters(sched_props, mst_matches_closure_prim)
{
	return rnd_params();
}

/*
 * The terminal MST from one multi-source search (Mehlhorn) against Prim on
 * the full metric closure, on random states: after each task is placed,
 * for a random terminal set.
 */
ParameterizedTest(struct rnd_case *c, sched_props, mst_matches_closure_prim)
{
	struct scenario *sc = rnd_scenario(c, 100);
	struct sched s;
	struct plan *p = mst_plan(sc, &s);
	int nsrv = 2 * c->roadms, checked = 0;

	for (int t = 0; t < p->ntasks; t++) {
		int term[8], k = 2 + (int)rnd(6), parent[8], order[8];
		double w1, w2;
		int e1, e2;

		mst_place(&s, p, t);
		for (int i = 0; i < k; i++) {
			char nm[16];

			term[i] = rnd_server(sc, nsrv, nm);
			for (int j = 0; j < i; j++)
				if (term[j] == term[i])
					term[i] = -1;
			if (term[i] < 0)
				i--;
		}
		e1 = terminal_mst(&s, term, k, 10, false, parent, order, &w1);
		e2 = terminal_mst(&s, term, k, 10, true, parent, order, &w2);
		cr_assert_eq(e1, e2);
		if (!e1) {
			cr_assert_float_eq(w1, w2, 1e-9 * (1 + w2),
					   "task %d: voronoi %g, closure %g", t,
					   w1, w2);
			checked++;
		}
	}
	cr_assert_gt(checked, 0);
	mst_plan_free(&s, p);
	scenario_free(sc);
}

ParameterizedTestParameters(sched_props, search_matches_bellman_ford)
{
	return rnd_params();
}

/*
 * A directed search's distances from a server against Bellman-Ford over
 * the auxiliary graph as the plan's state defines it, built here from the
 * lightpaths' own records (not the routers' tables of their ends): fibres
 * with a wavelength free, add/drop, access (servers are never transit) and
 * lightpaths with room in the direction of travel. On random states, after
 * each task is placed.
 */
ParameterizedTest(struct rnd_case *c, sched_props, search_matches_bellman_ford)
{
	struct scenario *sc = rnd_scenario(c, 300);
	struct sched s;
	struct plan *p = mst_plan(sc, &s);
	int n = sc->nnodes, nsrv = 2 * c->roadms, compared = 0;
	double *d = calloc((size_t)n, sizeof(*d));

	cr_assert_not_null(d);
	for (int t = 0; t < p->ntasks; t++) {
		const struct net *net = p->net;
		int src;
		double demand = 10.0 * (1 + (int)rnd(10));
		char nm[16];
		bool more = true;

		mst_place(&s, p, t);
		src = rnd_server(sc, nsrv, nm);
		cr_assert_geq(src, 0);
		for (int v = 0; v < n; v++)
			d[v] = v == src ? 0 : INFINITY;
		for (int round = 0; more && round < n; round++) {
			more = false;
			for (int u = 0; u < n; u++) {
				if (isinf(d[u]) || (u != src &&
				    sc->nodes[u].kind == NODE_SERVER))
					continue;
				for (int e = net->adj_start[u];
				     e < net->adj_start[u + 1]; e++) {
					const struct adj *a = &net->adj[e];
					double w;

					if (a->kind == E_FIBRE) {
						if (sc->fibres[a->idx].down ||
						    !net_any_free(net, a->idx))
							continue;
						w = weight_fibre(sc, a->idx);
					} else if (a->kind == E_ADDDROP) {
						w = weight_adddrop(sc);
					} else {
						w = weight_access(sc, a->idx);
					}
					if (d[u] + w < d[a->to]) {
						d[a->to] = d[u] + w;
						more = true;
					}
				}
			}
			for (int l = 0; l < net->nlp; l++) {
				const struct lightpath *lp = &net->lp[l];
				double w = weight_lightpath(sc, lp);

				for (int dir = 0; dir < 2; dir++) {
					int from = dir ? lp->b : lp->a;
					int to = dir ? lp->a : lp->b;

					if (lp->resid[dir] + ROOM_EPS < demand ||
					    d[from] + w >= d[to])
						continue;
					d[to] = d[from] + w;
					more = true;
				}
			}
		}
		cr_assert_eq(search(&s, &src, 1, -1, S_AUX, true, -1,
				    demand), 0);
		for (int v = 0; v < n; v++) {
			double got = search_dist(&s, v);

			if (isinf(d[v])) {
				cr_assert(isinf(got), "task %d: %s reached at "
					  "%g, not by Bellman-Ford", t,
					  sc->nodes[v].name, got);
				continue;
			}
			cr_assert_float_eq(got, d[v], 1e-9 * (1 + d[v]),
					   "task %d: %s at %.17g, Bellman-Ford "
					   "%.17g", t, sc->nodes[v].name, got,
					   d[v]);
			compared++;
		}
	}
	cr_assert_gt(compared, n);
	mst_plan_free(&s, p);
	scenario_free(sc);
	free(d);
}

/* ---- shipped scenarios -------------------------------------------------- */

Test(sched_props, mst_not_worse_than_spff_on_shipped_scenarios)
{
	glob_t g;

	cr_assert_eq(glob("scenarios/*.yaml", 0, NULL, &g), 0,
		     "run from the repository top");
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct scn_error err;
		struct scenario *sc = scenario_load(g.gl_pathv[i], &err);
		struct plan *ps, *pm;
		double bs = 0, bm = 0;
		long ws = 0, wm = 0;

		cr_assert_not_null(sc, "%s:%d: %s", g.gl_pathv[i], err.line,
				   err.msg);
		ps = plan_of(sc, &sched_spff);
		pm = plan_of(sc, &sched_mst);
		check_plan(ps);
		check_plan(pm);
		cr_assert_leq(pm->blocked, ps->blocked, "%s", g.gl_pathv[i]);
		/* compare over the tasks both placed */
		for (int t = 0; t < sc->ntasks; t++)
			if (!ps->tasks[t].blocked && !pm->tasks[t].blocked) {
				bs += ps->tasks[t].bytes_links;
				bm += pm->tasks[t].bytes_links;
				ws += ps->tasks[t].wavelength_links;
				wm += pm->tasks[t].wavelength_links;
			}
		cr_assert_leq(bm, bs, "%s: mst %g > spff %g byte-links",
			      g.gl_pathv[i], bm, bs);
		/* nobel-germany: mst also places the task spff blocks, and
		 * lights 380 wavelength-links to spff's 375 for it */
		cr_assert_leq(wm, ws, "%s: mst %ld > spff %ld wavelength-links",
			      g.gl_pathv[i], wm, ws);
		plan_free(ps);
		plan_free(pm);
		scenario_free(sc);
	}
	cr_assert_geq(g.gl_pathc, 6);
	globfree(&g);
}

/* ---- bidirectional point-to-point search -------------------------------- */

ParameterizedTestParameters(sched_props, pair_search_matches_dijkstra)
{
	return rnd_params();
}

/* Whether step st may be taken, as a directed search on the aux graph. */
static bool step_ok(const struct plan *p, const struct step *st, int lambda,
		    double demand)
{
	const struct scenario *sc = p->sc;
	const struct net *n = p->net;

	switch (st->kind) {
	case ST_FIBRE: {
		const struct scn_fibre *f = &sc->fibres[st->idx];

		if (!(f->a == st->from && f->b == st->to) &&
		    !(f->b == st->from && f->a == st->to))
			return false;
		return lambda >= 0 ? net_lambda_free(n, st->idx, lambda) :
				     net_any_free(n, st->idx);
	}
	case ST_ADDDROP:
	case ST_ACCESS: {
		/* idx: the router (add/drop) or server (access) */
		int at = sc->nodes[st->idx].attach;

		if (sc->nodes[st->idx].kind !=
		    (st->kind == ST_ADDDROP ? NODE_ROUTER : NODE_SERVER))
			return false;
		return (st->from == st->idx && st->to == at) ||
		       (st->to == st->idx && st->from == at);
	}
	case ST_LIGHTPATH: {
		const struct lightpath *lp = &n->lp[st->idx];

		if (!(lp->a == st->from && lp->b == st->to) &&
		    !(lp->b == st->from && lp->a == st->to))
			return false;
		return lp->resid[lp_dir_from(lp, st->from)] + 1e-9 >= demand;
	}
	}
	return false;
}

/*
 * search_pair() against a one-sided Dijkstra, on random states (after each
 * task is placed) and random server pairs, with and without a wavelength:
 * the same reachability, and a valid simple path of the same weight; also
 * with all weights 0, where every path is a shortest one.
 */
static void check_pairs(const char *y, int nsrv)
{
	struct scenario *sc = parse(y);
	struct sched s;
	struct plan *p = mst_plan(sc, &s);
	int found = 0, missed = 0;
	bool *seen = calloc((size_t)sc->nnodes, sizeof(*seen));

	cr_assert_not_null(seen);
	for (int t = 0; t < p->ntasks; t++) {
		mst_place(&s, p, t);
		for (int q = 0; q < 20; q++) {
			char na[16], nb[16];
			int a, b, lambda = q % 2 ? (int)rnd(4) : -1, e1, n;
			double demand = 10.0 * (1 + (int)rnd(10)), d1, d2 = 0;
			struct step *st;

			a = rnd_server(sc, nsrv, na);
			b = rnd_server(sc, nsrv, nb);
			if (a == b)
				continue;
			e1 = search(&s, &a, 1, b, S_AUX, true, lambda, demand);
			d1 = search_dist(&s, b);
			n = search_pair(&s, a, b, lambda, demand, &st);
			if (e1) {
				/* both -ENOENT */
				cr_assert_eq(n, e1, "task %d: %s->%s", t, na,
					     nb);
				missed++;
				continue;
			}
			cr_assert_geq(n, 2, "task %d: %s->%s: %d", t, na, nb,
				      n);
			cr_assert_eq(st[0].from, a);
			cr_assert_eq(st[n - 1].to, b);
			memset(seen, 0, (size_t)sc->nnodes * sizeof(*seen));
			seen[a] = true;
			for (int i = 0; i < n; i++) {
				cr_assert(step_ok(p, &st[i], lambda, demand),
					  "task %d: step %d", t, i);
				cr_assert(i == 0 || st[i].from == st[i - 1].to);
				cr_assert_not(seen[st[i].to], "path loops");
				seen[st[i].to] = true;
				/* servers are endpoints, never transit */
				cr_assert(i == n - 1 ||
					  sc->nodes[st[i].to].kind !=
						  NODE_SERVER);
				d2 += aux_weight(&s, &st[i]);
			}
			cr_assert_float_eq(d2, d1, 1e-9 * (1 + d1),
					   "task %d: %s->%s: pair %g, "
					   "one-sided %g", t, na, nb, d2, d1);
			found++;
		}
	}
	cr_assert_gt(found, 0);
	cr_log_info("%d paths compared, %d pairs unreachable", found, missed);
	free(seen);
	mst_plan_free(&s, p);
	scenario_free(sc);
}

ParameterizedTest(struct rnd_case *c, sched_props, pair_search_matches_dijkstra)
{
	static const char zero[] =
		"weights: {alpha: 0, beta: 0, reuse: 0, adddrop: 0}\n";
	char *y = random_scenario(c->seed + 200, c->roadms, c->tasks);
	char *y0 = malloc(strlen(zero) + strlen(y) + 1);

	cr_assert_not_null(y0);
	check_pairs(y, 2 * c->roadms);
	strcpy(y0, zero);
	strcat(y0, y);
	check_pairs(y0, 2 * c->roadms);
	free(y0);
	free(y);
}

/* Reports read every scheduler against the one baseline, by role. */
Test(sched, the_ops_table_names_one_baseline)
{
	int baselines = 0;

	for (int i = 0; sched_list[i]; i++) {
		cr_expect(sched_list[i]->role && *sched_list[i]->role, "%s",
			  sched_list[i]->name);
		cr_expect_eq(sched_index(sched_list[i]->name), i);
		baselines += sched_list[i]->baseline;
	}
	cr_expect_eq(baselines, 1);
	cr_expect_eq(sched_index("no-such"), -1);
	cr_expect_null(sched_find("no-such"));
}

/*
 * Where the tree heuristics differ: G on A, locals on B and C, which
 * reach each other and A through a hub H whose router serves no model
 * (A-H 300 km, H-B 100 km, H-C 120 km). The closure's MST relays through a
 * model: sB is nearer to sC than sA is, so sC hangs from sB. The Steiner
 * heuristics branch at H, which carries no model, so both locals hang
 * from G, whose transfers then each cross A-H: a heavier tree here.
 */
static const char hub[] =
	"name: hub\nnever_slower: false\nweights: {beta: 0.1, stretch: 0}\n"
	"wavelength_gbps: 100\nwavelengths: 4\ndemand_gbps: 10\n"
	"roadms: [A, H, B, C]\n"
	"fibres: [{a: A, b: H, km: 300}, {a: H, b: B, km: 100},"
	" {a: H, b: C, km: 120}]\n"
	"routers: [{name: rA, roadm: A}, {name: rH, roadm: H},"
	" {name: rB, roadm: B}, {name: rC, roadm: C}]\n"
	"servers:\n"
	"  - {name: sA, router: rA, access_gbps: 100, cpu: 1, memory_mib: 64}\n"
	"  - {name: sB, router: rB, access_gbps: 100, cpu: 1, memory_mib: 64}\n"
	"  - {name: sC, router: rC, access_gbps: 100, cpu: 1, memory_mib: 64}\n"
	"tasks:\n"
	"  - {name: t, global: sA, locals: [sB, sC], parameters: 1000,\n"
	"     bytes_per_parameter: 4, work_core_s: 0}\n";

Test(sched_known, steiner_heuristics_branch_where_mst_relays)
{
	struct scenario *sc = parse(hub);
	const struct sched_ops *ops[] = { &sched_mst, &sched_kmb, &sched_tm };
	double w[3];

	for (int i = 0; i < 3; i++) {
		struct plan *p = plan_of(sc, ops[i]);
		const struct task_plan *tp = &p->tasks[0];

		cr_assert_eq(p->blocked, 0, "%s", ops[i]->name);
		cr_assert_eq(tp->bcast.parent[1], 0, "%s", ops[i]->name);
		cr_assert_eq(tp->bcast.parent[2], i == 0 ? 1 : 0, "%s: sC under "
			     "model %d", ops[i]->name, tp->bcast.parent[2]);
		w[i] = tp->tree_weight;
		plan_free(p);
	}
	/*
	 * Lit as Steiner trees (ending lightpaths at H, where they branch),
	 * all three light A-H, H-B and H-C once and weigh the same: kmb and
	 * tm pay no more than mst (lit edge by edge, they paid 5.4036
	 * against mst's 5.2076).
	 */
	cr_assert_float_eq(w[1], w[0], 1e-9);
	cr_assert_float_eq(w[2], w[0], 1e-9);
	scenario_free(sc);
}

/*
 * Every tree scheduler on every shipped scenario: each placed task's
 * trees reach every model from the global one along connected paths
 * (each edge from its parent's server to its model's, upload the other
 * way), every lightpath within its capacity, and a positive tree weight.
 */
Test(sched_props, every_scheduler_makes_connected_trees)
{
	glob_t g;

	cr_assert_eq(glob("scenarios/*.yaml", 0, NULL, &g), 0);
	for (size_t f = 0; f < g.gl_pathc; f++) {
		struct scn_error err;
		struct scenario *sc = scenario_load(g.gl_pathv[f], &err);

		cr_assert_not_null(sc, "%s: %s", g.gl_pathv[f], err.msg);
		for (int s = 0; sched_list[s]; s++) {
			struct plan *p = plan_of(sc, sched_list[s]);

			for (int l = 0; l < p->net->nlp; l++)
				for (int d = 0; d < 2; d++)
					cr_assert_geq(p->net->lp[l].resid[d],
						      -1e-9);
			for (int t = 0; t < p->ntasks; t++) {
				const struct task_plan *tp = &p->tasks[t];

				if (tp->blocked)
					continue;
				cr_assert_gt(tp->tree_weight, 0);
				for (int m = 1; m < tp->nmodels; m++)
					for (int up = 0; up < 2; up++) {
						const struct tree *tr =
							up ? &tp->up :
							     &tp->bcast;
						const struct ppath *pp =
							&tr->path[m];
						int par = tr->parent[m];
						int at = pp->from;

						cr_assert(par >= 0 &&
							  par < tp->nmodels);
						cr_assert_eq(pp->from,
							tp->server[up ? m : par]);
						for (int h = 0; h < pp->nhops;
						     h++)
							at = hop_next(p, at,
								&pp->hops[h]);
						cr_assert_eq(at, pp->to,
							"%s %s %s model %d",
							g.gl_pathv[f],
							sched_list[s]->name,
							tp->task->name, m);
						cr_assert_eq(pp->to,
							tp->server[up ? par : m]);
					}
			}
			plan_free(p);
		}
		scenario_free(sc);
	}
	globfree(&g);
}

/*
 * A chain mst builds, and the bound on it (weights.stretch). G on A has
 * 100 Gbit/s of access, sB and sC 1 Gbit/s; A-B is 300 km, B-C 10 km. The
 * MST hangs sC from sB. A model of 4 MB drains a 1 Gbit/s link in 32 ms
 * (G's with two copies in 0.64 ms). Relays that store: through sB, sC has
 * it after 1.470 + 32 + 0.049 + 32 = 65.519 ms; from G straight, 1.519 +
 * 32 = 33.519 ms, 1.955 times less. A stretch of 1.5 hangs sC from G, one
 * of 2 leaves the chain; pipelined relays add only sB's chunk (256 kB at
 * 1 Gbit/s: 2.048 ms), 35.567 ms, 1.061 times, and keep it at 1.5. Both
 * ways, up as down. The twin agrees: the bounded tree ends sooner.
 */
static const char chain[] =
	"name: chain\nnever_slower: false\nwavelength_gbps: 100\n"
	"wavelengths: 4\ndemand_gbps: 1\nweights: {stretch: %s}\n"
	"relay: %s\nroadms: [A, B, C]\n"
	"fibres: [{a: A, b: B, km: 300}, {a: B, b: C, km: 10}]\n"
	"routers: [{name: rA, roadm: A}, {name: rB, roadm: B},"
	" {name: rC, roadm: C}]\n"
	"servers:\n"
	"  - {name: g, router: rA, access_gbps: 100, cpu: 1, memory_mib: 64}\n"
	"  - {name: sB, router: rB, access_gbps: 1, cpu: 1, memory_mib: 64}\n"
	"  - {name: sC, router: rC, access_gbps: 1, cpu: 1, memory_mib: 64}\n"
	"tasks:\n"
	"  - {name: t, global: g, locals: [sB, sC], parameters: 1000000,\n"
	"     bytes_per_parameter: 4, work_core_s: 0}\n";

static struct plan *chain_plan(const char *stretch, const char *relay,
			       struct scenario **sc)
{
	char y[2048];
	struct plan *p;

	snprintf(y, sizeof(y), chain, stretch, relay);
	*sc = parse(y);
	p = plan_of(*sc, &sched_mst);
	cr_assert_eq(p->blocked, 0);
	cr_assert_eq(predict_round(p), 0);
	return p;
}

Test(sched_known, stretch_bounds_a_chain)
{
	static const struct {
		const char *stretch, *relay;
		int parent;	/* of sC, both trees */
	} c[] = {
		{ "0", "store", 1 },
		{ "2", "store", 1 },
		{ "1.5", "store", 0 },
		{ "1.5", "pipelined", 1 },
		{ "1.05", "pipelined", 0 },
	};
	struct scenario *sc0;
	struct plan *chain0 = chain_plan("0", "store", &sc0);

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct scenario *sc;
		struct plan *p = chain_plan(c[i].stretch, c[i].relay, &sc);
		const struct task_plan *tp = &p->tasks[0];

		cr_expect_eq(tp->bcast.parent[1], 0);
		cr_expect_eq(tp->bcast.parent[2], c[i].parent,
			     "stretch %s, %s: broadcast", c[i].stretch,
			     c[i].relay);
		cr_expect_eq(tp->up.parent[2], c[i].parent,
			     "stretch %s, %s: upload", c[i].stretch,
			     c[i].relay);
		if (!c[i].parent && !strcmp(c[i].relay, "store"))
			cr_expect_lt(tp->round_s, chain0->tasks[0].round_s -
						  20e-3,
				     "the bounded tree ends sooner");
		plan_free(p);
		scenario_free(sc);
	}
	plan_free(chain0);
	scenario_free(sc0);
}

/*
 * Aggregating in the bound: the chain above at stretch 2, with 100 ms of
 * training. Without folding time sC's update goes up through sB: ready
 * at 65.519 + 100 ms, its way through sB (65.519 ms) is 1.955 times the
 * way straight (33.519). With 40 ms of folding per child (agg_core_s),
 * sB must fold it in before it sends: 105.519 ms, 3.148 times, and sC
 * goes up straight; the broadcast, which folds nothing, keeps its chain.
 * The twin agrees that this pays: 283.4 ms against 316.9 for the chain
 * (stretch 0), where sB's fold and g's come one after the other.
 */
static struct plan *folding_chain(const char *stretch, const char *agg,
				  struct scenario **sc)
{
	char y[2048], *at;
	struct plan *p;

	snprintf(y, sizeof(y), chain, stretch, "store");
	at = strstr(y, "work_core_s: 0}");
	cr_assert(at);
	snprintf(at, sizeof(y) - (size_t)(at - y),
		 "work_core_s: 0.1, agg_core_s: %s}\n", agg);
	*sc = parse(y);
	p = plan_of(*sc, &sched_mst);
	cr_assert_eq(p->blocked, 0);
	cr_assert_eq(predict_round(p), 0);
	return p;
}

Test(sched_known, a_loaded_aggregator_is_passed_by)
{
	struct scenario *sc[3];
	struct plan *p[3] = {
		folding_chain("2", "0", &sc[0]),
		folding_chain("2", "0.04", &sc[1]),
		folding_chain("0", "0.04", &sc[2]),
	};

	for (int i = 0; i < 3; i++)
		cr_expect_eq(p[i]->tasks[0].bcast.parent[2], 1, "plan %d", i);
	cr_expect_eq(p[0]->tasks[0].up.parent[2], 1, "no folding: the chain");
	cr_expect_eq(p[1]->tasks[0].up.parent[2], 0, "folding: straight");
	cr_expect_eq(p[2]->tasks[0].up.parent[2], 1, "no stretch: the chain");
	cr_expect_lt(p[1]->tasks[0].round_s, p[2]->tasks[0].round_s - 30e-3,
		     "%.3f ms against the chain's %.3f",
		     p[1]->tasks[0].round_s * 1e3,
		     p[2]->tasks[0].round_s * 1e3);
	for (int i = 0; i < 3; i++) {
		plan_free(p[i]);
		scenario_free(sc[i]);
	}
}

/*
 * Compute in the bound: the chain above at stretch 1.05, pipelined, with
 * training (3 ms of work). A model may relay deeper than the stretch
 * allows where it is still in by when the round's slowest model is:
 * straight, sB has the model after 1.470 + 32 = 33.470 ms and its update
 * is in 33.470 ms after it trained; sC 33.519 each way. With both cpus 1
 * both train 3 ms and sC is the round's last (bound 67.038 + 3 ms): it
 * must have the model by 33.519 ms, the chain's 35.567 is late, and the
 * stretch (1.061 > 1.05) hangs it from G. With sB's cpu 0.5, sB trains 6
 * ms: the round cannot end before 72.940 ms, sC may have the model as
 * late as 72.940 - 3 - 33.519 = 36.421 ms, and the chain (35.567) keeps
 * it, a fibre's copy saved. Its update is then ready at 38.567 ms and in
 * through sB at 74.134 (> 72.940: sC would be last) or straight at
 * 72.086: it goes straight. The twin agrees: the round is the star's.
 */
Test(sched_known, a_model_that_trains_fast_relays_deeper)
{
	static const struct {
		const char *cpu;	/* of sB */
		int parent;		/* of sC in the broadcast */
		double bytes_links;
	} c[] = {
		{ "1", 0, 24e6 },
		{ "0.5", 1, 20e6 },
	};
	char y[2048];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct scenario *sc;
		struct plan *p, *star;
		const struct task_plan *tp;
		const char *cut;

		snprintf(y, sizeof(y), chain, "1.05", "pipelined");
		/* sB's cpu, and 3 ms of training */
		cut = strstr(y, "sB, router: rB, access_gbps: 1, cpu: 1");
		cr_assert(cut);
		snprintf(y + (cut - y), sizeof(y) - (size_t)(cut - y),
			 "sB, router: rB, access_gbps: 1, cpu: %s, "
			 "memory_mib: 64}\n"
			 "  - {name: sC, router: rC, access_gbps: 1, cpu: 1, "
			 "memory_mib: 64}\n"
			 "tasks:\n"
			 "  - {name: t, global: g, locals: [sB, sC], "
			 "parameters: 1000000,\n"
			 "     bytes_per_parameter: 4, work_core_s: 0.003}\n",
			 c[i].cpu);
		sc = parse(y);
		p = plan_of(sc, &sched_mst);
		star = plan_of(sc, &sched_spff);
		cr_assert_eq(p->blocked, 0);
		cr_assert_eq(predict_round(p), 0);
		cr_assert_eq(predict_round(star), 0);
		tp = &p->tasks[0];
		cr_expect_eq(tp->bcast.parent[2], c[i].parent, "cpu %s",
			     c[i].cpu);
		cr_expect_eq(tp->up.parent[2], 0, "cpu %s", c[i].cpu);
		cr_expect_float_eq(p->bytes_links, c[i].bytes_links, 1,
				   "cpu %s", c[i].cpu);
		cr_expect_leq(tp->round_s, star->tasks[0].round_s * (1 + 1e-9),
			      "cpu %s: %.6f ms against the star's %.6f",
			      c[i].cpu, tp->round_s * 1e3,
			      star->tasks[0].round_s * 1e3);
		plan_free(star);
		plan_free(p);
		scenario_free(sc);
	}
}

/*
 * The hub again: every tree the heuristics build crosses A-H for both
 * locals and branches at H, whose router holds no model. mst's chain
 * sA -> sB -> sC comes back over H-B; kmb's and tm's star from sA goes
 * over A-H twice. Lit with lightpaths ending at H where the trees branch,
 * each fibre is lit once: three wavelength-links, as opt lights them.
 */
Test(sched_known, a_branch_at_a_router_without_a_model_lights_each_fibre_once)
{
	struct scenario *sc = parse(hub);
	const struct sched_ops *ops[] = { &sched_mst, &sched_kmb, &sched_tm,
					  &sched_opt };

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct plan *p = plan_of(sc, ops[i]);
		int spans[3] = { 0 };

		cr_assert_eq(p->blocked, 0, "%s", ops[i]->name);
		for (int l = 0; l < p->net->nlp; l++)
			for (int j = 0; j < p->net->lp[l].nfib; j++)
				spans[p->net->lp[l].fib[j]]++;
		for (int f = 0; f < 3; f++)
			cr_expect_eq(spans[f], 1, "%s: fibre %d lit %d times",
				     ops[i]->name, f, spans[f]);
		cr_expect_eq(p->wavelength_links, 3, "%s", ops[i]->name);
		plan_free(p);
	}
	scenario_free(sc);
}

/*
 * A Steiner tree joins routers and ROADMs; terminals are servers, leaves
 * at their routers, so none lies on another's way up, and kmb hung every
 * terminal from the global model (tm too, from whoever's path it met): a
 * star, each copy crossing every fibre on its way. Now a terminal at each
 * site (a router and its ROADM) the tree crosses relays for it, as mst's
 * trees do: on a line A-B-C with the global model on A, b1 and b2 on B
 * and c1 on C, b1 hangs from g and b2 and c1 from b1 — two fibres crossed
 * a tree, not four.
 */
Test(sched_known, steiner_trees_relay_at_a_server_where_they_cross_a_site)
{
	static const char y[] =
		"name: line\nnever_slower: false\nwavelength_gbps: 100\n"
		"wavelengths: 4\ndemand_gbps: 10\nroadms: [A, B, C]\n"
		"fibres: [{a: A, b: B, km: 100}, {a: B, b: C, km: 100}]\n"
		"routers: [{name: rA, roadm: A}, {name: rB, roadm: B},"
		" {name: rC, roadm: C}]\n"
		"servers:\n"
		"  - {name: g, router: rA, access_gbps: 100, cpu: 1, "
		"memory_mib: 64}\n"
		"  - {name: b1, router: rB, access_gbps: 100, cpu: 1, "
		"memory_mib: 64}\n"
		"  - {name: b2, router: rB, access_gbps: 100, cpu: 1, "
		"memory_mib: 64}\n"
		"  - {name: c1, router: rC, access_gbps: 100, cpu: 1, "
		"memory_mib: 64}\n"
		"tasks:\n"
		"  - {name: t, global: g, locals: [b1, b2, c1], "
		"parameters: 1000,\n     bytes_per_parameter: 4, "
		"work_core_s: 0}\n";
	struct scenario *sc = parse(y);
	const struct sched_ops *ops[] = { &sched_kmb, &sched_tm, &sched_mst };

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct plan *p = plan_of(sc, ops[i]);
		const struct task_plan *tp = &p->tasks[0];
		int hops = 0;

		cr_assert_eq(p->blocked, 0);
		cr_expect_eq(tp->bcast.parent[1], 0, "%s", ops[i]->name);
		cr_expect_eq(tp->bcast.parent[2], 1, "%s: b2 under model %d",
			     ops[i]->name, tp->bcast.parent[2]);
		cr_expect_eq(tp->bcast.parent[3], 1, "%s: c1 under model %d",
			     ops[i]->name, tp->bcast.parent[3]);
		for (int m = 1; m < 4; m++)
			hops += tp->bcast.path[m].fibre_hops;
		cr_expect_eq(hops, 2, "%s", ops[i]->name);
		plan_free(p);
	}
	scenario_free(sc);
}

/*
 * A fan: the global model at A, one local at each of eight ROADMs hung
 * off B (no model at B). Every local joins tm's upload at router B on
 * the first one's way up: it hangs from that one, which aggregates before
 * A-B, so one update crosses A-B, not eight (a star's upload: hung from
 * the receiver, each crossed it on its own, and past a lightpath's room
 * lit another). The lit fibres are the tree's: A-B and the eight.
 */
Test(sched_known, tm_uploads_aggregate_where_they_join)
{
	char y[4096];
	int n = 0;
	struct scenario *sc;
	struct plan *p;
	const struct task_plan *tp;
	int at_root = 0;

	n += snprintf(y + n, sizeof(y) - n,
		      "name: fan\nnever_slower: false\nwavelength_gbps: 100\n"
		      "wavelengths: 4\ndemand_gbps: 10\nweights: {alpha: 1, "
		      "beta: 0, reuse: 0, adddrop: 0}\nroadms: [A, B");
	for (int i = 0; i < 8; i++)
		n += snprintf(y + n, sizeof(y) - n, ", C%d", i);
	n += snprintf(y + n, sizeof(y) - n,
		      "]\nfibres:\n  - {a: A, b: B, km: 1}\n");
	for (int i = 0; i < 8; i++)
		n += snprintf(y + n, sizeof(y) - n,
			      "  - {a: B, b: C%d, km: 1}\n", i);
	n += snprintf(y + n, sizeof(y) - n, "routers:\n  - {name: rA, roadm: "
		      "A}\n  - {name: rB, roadm: B}\n");
	for (int i = 0; i < 8; i++)
		n += snprintf(y + n, sizeof(y) - n,
			      "  - {name: r%d, roadm: C%d}\n", i, i);
	n += snprintf(y + n, sizeof(y) - n, "servers:\n  - {name: g, router: "
		      "rA, access_gbps: 100, cpu: 1, memory_mib: 64}\n");
	for (int i = 0; i < 8; i++)
		n += snprintf(y + n, sizeof(y) - n,
			      "  - {name: s%d, router: r%d, access_gbps: 100, "
			      "cpu: 1, memory_mib: 64}\n", i, i);
	n += snprintf(y + n, sizeof(y) - n, "tasks:\n  - {name: t, global: "
		      "g, locals: [s0, s1, s2, s3, s4, s5, s6, s7], "
		      "parameters: 10, bytes_per_parameter: 4, "
		      "work_core_s: 0}\n");
	cr_assert_lt(n, (int)sizeof(y));
	sc = parse(y);
	p = plan_of(sc, &sched_tm);
	tp = &p->tasks[0];
	cr_assert_not(tp->blocked, "%s", tp->why);
	for (int m = 1; m < tp->nmodels; m++)
		at_root += tp->up.parent[m] == 0;
	cr_expect_eq(at_root, 1, "%d updates go straight to the global "
		     "model", at_root);
	cr_expect_eq(p->wavelength_links, 9, "%ld", p->wavelength_links);
	cr_expect_float_eq(tp->tree_weight, 9, 1e-9, "%g", tp->tree_weight);
	plan_free(p);
	scenario_free(sc);
}
