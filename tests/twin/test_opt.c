// SPDX-License-Identifier: MIT
/*
 * opt against brute force: on seeded random instances small enough to try
 * every tree, the integer program's tree weight is the least there is,
 * and no other scheduler's is lower on the same state.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twin/sched.h"

#define NR 4			/* routers, on ROADMs 0..3 */
#define NROADM 6		/* two more ROADMs, transit only */
#define NPAIR (NR * (NR - 1) / 2)

struct inst {
	double alpha, beta, reuse, adddrop;
	double km[NROADM][NROADM];	/* 0: no fibre */
	double access_km[NR + 1];
	int server_router[NR + 1];	/* five servers */
	int global, nlocals, locals[NR];
};

static uint64_t rng_state;

static double uniform(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (double)(rng_state >> 11) / 9007199254740992.0;
}

static int below(int n)
{
	return (int)(uniform() * n);
}

/* x's weights, drawn from the stream as it stands. */
static void random_weights(struct inst *x)
{
	x->alpha = 0.5 + uniform();
	x->beta = 0.02 + uniform() * 0.5;
	x->reuse = 0.05 + uniform() * 0.9;
	x->adddrop = uniform() * 0.5;
}

/* n draws of a further fibre among ROADMs 0..nroadm-1; u = v adds none. */
static void random_fibres(struct inst *x, int nroadm, int n)
{
	for (int i = 0; i < n; i++) {
		int u = below(nroadm), v = below(nroadm);

		if (u != v)
			x->km[u][v] = x->km[v][u] = 20 + uniform() * 800;
	}
}

/*
 * Servers 0..nr (nr <= NR): server s < nr on router s, the last on a
 * random one, each at a random distance from it; the task's global model
 * and its locals on distinct servers at random.
 */
static void random_servers(struct inst *x, int nr)
{
	int perm[NR + 1];

	for (int s = 0; s <= nr; s++) {
		x->server_router[s] = s < nr ? s : below(nr);
		x->access_km[s] = uniform() * 30;
		perm[s] = s;
	}
	for (int i = nr; i > 0; i--) {
		int j = below(i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	x->global = perm[0];
	x->nlocals = 1 + below(nr);
	for (int i = 0; i < x->nlocals; i++)
		x->locals[i] = perm[1 + i];
}

static void random_inst(struct inst *x, uint64_t seed)
{
	memset(x, 0, sizeof(*x));
	rng_state = seed * 0x9e3779b97f4a7c15ULL + 1;
	random_weights(x);
	/* a random spanning tree, then a few more fibres */
	for (int v = 1; v < NROADM; v++) {
		int u = below(v);

		x->km[u][v] = x->km[v][u] = 20 + uniform() * 800;
	}
	random_fibres(x, NROADM, 2 + below(4));
	random_servers(x, NR);
}

/* x as a scenario: routers on ROADMs 0..nr-1 of nroadm, nlambda each. */
static struct scenario *scenario_of(const struct inst *x, int nroadm, int nr,
				    int nlambda)
{
	char y[8192];
	int n = 0;
	struct scn_error err;
	struct scenario *sc;

	n += snprintf(y + n, sizeof(y) - n,
		      "name: tiny\nwavelength_gbps: 100\nwavelengths: %d\n"
		      "demand_gbps: 10\nweights: {alpha: %.17g, beta: %.17g, "
		      "reuse: %.17g, adddrop: %.17g}\nroadms: [", nlambda,
		      x->alpha, x->beta, x->reuse, x->adddrop);
	for (int u = 0; u < nroadm; u++)
		n += snprintf(y + n, sizeof(y) - n, "%sR%d", u ? ", " : "", u);
	n += snprintf(y + n, sizeof(y) - n, "]\nfibres:\n");
	for (int u = 0; u < nroadm; u++)
		for (int v = u + 1; v < nroadm; v++)
			if (x->km[u][v] > 0)
				n += snprintf(y + n, sizeof(y) - n,
					      "  - {a: R%d, b: R%d, km: %.17g}\n",
					      u, v, x->km[u][v]);
	n += snprintf(y + n, sizeof(y) - n, "routers:\n");
	for (int r = 0; r < nr; r++)
		n += snprintf(y + n, sizeof(y) - n,
			      "  - {name: r%d, roadm: R%d}\n", r, r);
	n += snprintf(y + n, sizeof(y) - n, "servers:\n");
	for (int s = 0; s <= nr; s++)
		n += snprintf(y + n, sizeof(y) - n,
			      "  - {name: s%d, router: r%d, access_gbps: 100, "
			      "access_km: %.17g, cpu: 1, memory_mib: 64}\n", s,
			      x->server_router[s], x->access_km[s]);
	n += snprintf(y + n, sizeof(y) - n,
		      "tasks:\n  - {name: t, global: s%d, locals: [", x->global);
	for (int i = 0; i < x->nlocals; i++)
		n += snprintf(y + n, sizeof(y) - n, "%ss%d", i ? ", " : "",
			      x->locals[i]);
	n += snprintf(y + n, sizeof(y) - n,
		      "], parameters: 1000, bytes_per_parameter: 4, "
		      "work_core_s: 0}\n");
	cr_assert_lt(n, (int)sizeof(y));
	sc = scenario_parse(y, strlen(y), "tiny", &err);
	cr_assert_not_null(sc, "%d:%d: %s\n%s", err.line, err.col, err.msg, y);
	return sc;
}

static double ms(double km)
{
	return km * 4.9e-6 * 1e3;
}

/*
 * Shortest fibre runs between ROADMs by Floyd-Warshall, per fibre cost
 * alpha + beta ms (lighting) or that plus reuse alpha + beta ms (lighting
 * and crossing once more); for the second, what lighting and crossing the
 * run found cost apart.
 */
struct runs {
	/* [0] cheapest to light, [1] cheapest to light and cross again */
	double light[2][NR][NR], lit[2][NR][NR];
};

static void shortest(const struct inst *x, bool both, double d[][NROADM],
		     int nxt[][NROADM])
{
	for (int u = 0; u < NROADM; u++)
		for (int v = 0; v < NROADM; v++) {
			double k = x->km[u][v];

			d[u][v] = u == v ? 0 : k > 0 ?
				  x->alpha + x->beta * ms(k) +
				  (both ? x->alpha * x->reuse + x->beta * ms(k) : 0) :
				  INFINITY;
			nxt[u][v] = v;
		}
	for (int k = 0; k < NROADM; k++)
		for (int u = 0; u < NROADM; u++)
			for (int v = 0; v < NROADM; v++)
				if (d[u][k] + d[k][v] < d[u][v]) {
					d[u][v] = d[u][k] + d[k][v];
					nxt[u][v] = nxt[u][k];
				}
}

static void runs_of(const struct inst *x, struct runs *r)
{
	double d[NROADM][NROADM];
	int nxt[NROADM][NROADM];

	for (int both = 0; both < 2; both++) {
		shortest(x, both, d, nxt);
		for (int a = 0; a < NR; a++)
			for (int b = 0; b < NR; b++) {
				double light = 2 * x->alpha * x->adddrop, km = 0;
				int nfib = 0;

				for (int u = a; u != b; u = nxt[u][b]) {
					double k = x->km[u][nxt[u][b]];

					light += x->alpha + x->beta * ms(k);
					km += k;
					nfib++;
				}
				r->light[both][a][b] = light;
				r->lit[both][a][b] = x->alpha * x->reuse * nfib +
						     x->beta * ms(km);
			}
	}
}

/*
 * Whether the pairs of routers 0..nr-1 chosen (pick[p] != none, pairs in
 * the order (0, 1), (0, 2), ..., (1, 2), ...) join every router in need.
 */
static bool joins(int nr, const int *pick, int none, unsigned need)
{
	int uf[NR], p = 0, root = -1;

	for (int i = 0; i < nr; i++)
		uf[i] = i;
	for (int a = 0; a < nr; a++)
		for (int b = a + 1; b < nr; b++, p++)
			if (pick[p] != none) {
				int ra = a, rb = b;

				while (uf[ra] != ra)
					ra = uf[ra];
				while (uf[rb] != rb)
					rb = uf[rb];
				uf[ra] = rb;
			}
	for (int i = 0; i < nr; i++)
		if (need >> i & 1) {
			int r = i;

			while (uf[r] != r)
				r = uf[r];
			if (root >= 0 && r != root)
				return false;
			root = r;
		}
	return true;
}

/*
 * The routers the task's servers are on, a bit each, and the weight of
 * their access links, each server's counted once.
 */
static double task_access(const struct inst *x, unsigned *need)
{
	unsigned seen = 0;
	double access = 0;

	*need = 0;
	for (int i = -1; i < x->nlocals; i++) {
		int s = i < 0 ? x->global : x->locals[i];

		*need |= 1u << x->server_router[s];
		if (!(seen >> s & 1))
			access += x->beta * ms(x->access_km[s]);
		seen |= 1u << s;
	}
	return access;
}

/*
 * The least weight of a broadcast tree and an upload tree over the
 * task's servers, trying every choice per pair of routers: broadcast
 * none, the run cheapest to light, or the run cheapest to light and cross
 * again; upload none, or the cheaper of lighting anew and crossing what
 * the broadcast lit.
 */
static double brute_force(const struct inst *x)
{
	struct runs r;
	unsigned need;
	double access = task_access(x, &need), best = INFINITY;
	int pick[NPAIR], up[NPAIR], pa[NPAIR], pb[NPAIR], p = 0;

	runs_of(x, &r);
	for (int a = 0; a < NR; a++)
		for (int b = a + 1; b < NR; b++, p++) {
			pa[p] = a;
			pb[p] = b;
		}
	for (long code = 0; code < 729; code++) {	/* 3^6 */
		double wb = access, cu[NPAIR];
		long c = code;

		for (p = 0; p < NPAIR; p++, c /= 3)
			pick[p] = (int)(c % 3);
		if (!joins(NR, pick, 0, need))
			continue;
		for (p = 0; p < NPAIR; p++) {
			int a = pa[p], b = pb[p];

			/* up: light anew, or cross what the broadcast lit */
			cu[p] = r.light[0][a][b];
			if (pick[p]) {
				wb += r.light[pick[p] - 1][a][b];
				cu[p] = fmin(cu[p], r.lit[pick[p] - 1][a][b]);
			}
		}
		for (unsigned m = 0; m < 1u << NPAIR; m++) {
			double wu = access;

			for (p = 0; p < NPAIR; p++)
				up[p] = m >> p & 1;
			if (!joins(NR, up, 0, need))
				continue;
			for (p = 0; p < NPAIR; p++)
				if (up[p])
					wu += cu[p];
			best = fmin(best, wb + wu);
		}
	}
	return best;
}

Test(sched_opt, least_tree_weight_against_brute_force)
{
	int relayed = 0;

	for (uint64_t seed = 1; seed <= 300; seed++) {
		struct inst x;
		struct scenario *sc;
		struct plan *p;
		double want, got;

		random_inst(&x, seed);
		sc = scenario_of(&x, NROADM, NR, 4);
		want = brute_force(&x);
		p = sched_plan(sc, &sched_opt);
		cr_assert_not_null(p, "seed %d: %s", (int)seed, strerror(errno));
		cr_assert_not(p->tasks[0].blocked, "seed %d: %s", (int)seed,
			      p->tasks[0].why);
		got = p->tasks[0].tree_weight;
		cr_assert_float_eq(got, want, 1e-9 * want,
				   "seed %d: opt %.12f, brute force %.12f",
				   (int)seed, got, want);
		for (int m = 1; m < p->tasks[0].nmodels; m++)
			relayed += p->tasks[0].bcast.parent[m] > 0;
		plan_free(p);
		/* nothing does better on the same state */
		for (int i = 0; sched_list[i]; i++) {
			if (sched_list[i] == &sched_opt)
				continue;
			p = sched_plan(sc, sched_list[i]);
			cr_assert_not_null(p);
			if (!p->tasks[0].blocked)
				cr_assert_geq(p->tasks[0].tree_weight,
					      want - 1e-9 * want,
					      "seed %d: %s %.12f < opt %.12f",
					      (int)seed, sched_list[i]->name,
					      p->tasks[0].tree_weight, want);
			plan_free(p);
		}
		scenario_free(sc);
	}
	/* the instances exercise relaying at models, not only stars */
	cr_assert_gt(relayed, 0);
}

/* A ring of n ROADMs with a router each and 8 servers, one task of all. */
static struct scenario *ring(int n, char *y, size_t len)
{
	struct scn_error err;
	struct scenario *sc;
	size_t k = 0;

	k += snprintf(y + k, len - k,
		      "name: big\nwavelength_gbps: 100\nwavelengths: 4\n"
		      "demand_gbps: 10\nroadms: [");
	for (int i = 0; i < n; i++)
		k += snprintf(y + k, len - k, "%sR%d", i ? ", " : "", i);
	k += snprintf(y + k, len - k, "]\nfibres:\n");
	for (int i = 0; i < n; i++)
		k += snprintf(y + k, len - k, "  - {a: R%d, b: R%d, km: 10}\n",
			      i, (i + 1) % n);
	k += snprintf(y + k, len - k, "routers:\n");
	for (int i = 0; i < n; i++)
		k += snprintf(y + k, len - k, "  - {name: r%d, roadm: R%d}\n",
			      i, i);
	k += snprintf(y + k, len - k, "servers:\n");
	for (int i = 0; i < 8; i++)
		k += snprintf(y + k, len - k,
			      "  - {name: s%d, router: r%d, access_gbps: 100, "
			      "cpu: 1, memory_mib: 64}\n", i, i * (n / 8));
	k += snprintf(y + k, len - k,
		      "tasks:\n  - {name: t, global: s0, locals: [s1, s2, s3, "
		      "s4, s5, s6, s7], parameters: 10, bytes_per_parameter: 4, "
		      "work_core_s: 0}\n");
	cr_assert_lt(k, len);
	sc = scenario_parse(y, k, "big", &err);
	cr_assert_not_null(sc, "%d:%d: %s", err.line, err.col, err.msg);
	return sc;
}

/*
 * Past 600 routers opt refuses the network before planning (its graph
 * has an edge per pair of routers before pruning). Below, a task whose
 * program stays too large once pruned blocks, saying so: on a ring with
 * add/drops that cost, no run is as good as two through a third router,
 * so all 44,850 pairs stay (x 2 runs x 6 columns > 200,000).
 */
Test(sched_opt, refuses_what_is_too_large_before_planning)
{
	static char y[131072];
	char why[256] = "";
	struct scenario *sc = ring(700, y, sizeof(y));
	struct plan *p;

	cr_assert_eq(sched_fits(&sched_opt, sc, why, sizeof(why)), -E2BIG);
	cr_assert(strstr(why, "at most 600 routers") && strstr(why, "has 700") &&
		  strstr(why, "use mst"), "%s", why);
	cr_assert_eq(sched_fits(&sched_mst, sc, why, sizeof(why)), 0);
	cr_assert_null(sched_plan(sc, &sched_opt));
	cr_assert_eq(errno, E2BIG);
	scenario_free(sc);

	sc = ring(300, y, sizeof(y));
	cr_assert_eq(sched_fits(&sched_opt, sc, why, sizeof(why)), 0);
	p = sched_plan(sc, &sched_opt);
	cr_assert_not_null(p, "%s", strerror(errno));
	cr_assert(p->tasks[0].blocked);
	cr_assert(strstr(p->tasks[0].why, "opt's program would have") &&
		  strstr(p->tasks[0].why, "more than 200000"), "%s",
		  p->tasks[0].why);
	plan_free(p);
	scenario_free(sc);
}

/*
 * The joint program (tree and wavelengths) against brute force: three
 * routers on ROADMs 0-2 of five, one or two wavelengths, so that the
 * trees' own lightpaths contend for them. Every lightpath that could be
 * lit is a simple fibre run between two routers' ROADMs on a wavelength;
 * brute force tries, per pair of routers, every such lightpath or none
 * for the broadcast, and none, reusing the broadcast's or lighting one
 * for the upload, with no wavelength on a fibre lit twice.
 */
#define JR 3			/* routers, on ROADMs 0..2 */
#define JROADM 5
#define JPAIR (JR * (JR - 1) / 2)
#define JCAND 64		/* lightpaths per pair, at most */

struct jinst {
	struct inst x;		/* km, weights, servers on routers 0..2 */
	int nlambda, fid[JROADM][JROADM], nfib;
};

struct jcand {
	unsigned fibs;		/* fibre ids on the run */
	int lambda;
	double light, lit;
};

struct jpairs {
	int n[JPAIR];
	struct jcand c[JPAIR][JCAND];
};

static void jrandom(struct jinst *j, uint64_t seed)
{
	struct inst *x = &j->x;

	memset(j, 0, sizeof(*j));
	rng_state = seed * 0x9e3779b97f4a7c15ULL + 7;
	random_weights(x);
	j->nlambda = 1 + below(2);
	/* a random spanning tree grown from the transit ROADMs, so that
	 * runs between routers often share a fibre; then a few more */
	for (int i = 1; i < JROADM; i++) {
		static const int order[JROADM] = { 3, 4, 0, 1, 2 };
		int u = order[below(i)], v = order[i];

		x->km[u][v] = x->km[v][u] = 20 + uniform() * 800;
	}
	random_fibres(x, JROADM, 1 + below(4));
	for (int u = 0; u < JROADM; u++)
		for (int v = u + 1; v < JROADM; v++)
			if (x->km[u][v] > 0)
				j->fid[u][v] = j->fid[v][u] = j->nfib++;
	random_servers(x, JR);
}

/* Every simple run from ROADM u to ROADM b, on every wavelength. */
static void jruns(const struct jinst *j, int p, int u, int b, bool *on,
		  unsigned fibs, int nfib, double fw, double km,
		  struct jpairs *c)
{
	const struct inst *x = &j->x;

	if (u == b) {
		for (int l = 0; l < j->nlambda; l++) {
			struct jcand *k = &c->c[p][c->n[p]++];

			cr_assert_leq(c->n[p], JCAND);
			*k = (struct jcand){
				.fibs = fibs, .lambda = l,
				.light = 2 * x->alpha * x->adddrop + fw,
				.lit = x->alpha * x->reuse * nfib +
				       x->beta * ms(km) };
		}
		return;
	}
	for (int v = 0; v < JROADM; v++) {
		if (x->km[u][v] <= 0 || on[v])
			continue;
		on[v] = true;
		jruns(j, p, v, b, on, fibs | 1u << j->fid[u][v], nfib + 1,
		      fw + x->alpha + x->beta * ms(x->km[u][v]),
		      km + x->km[u][v], c);
		on[v] = false;
	}
}

/*
 * The least weight of the two trees, with wavelength capacity (wl) or
 * without; INFINITY if none fits.
 */
static double jbrute(const struct jinst *j, const struct jpairs *c, bool wl)
{
	unsigned need;
	double access = task_access(&j->x, &need), best = INFINITY;
	int b[JPAIR], u[JPAIR];

	/* per pair: -1 none, else a lightpath; the upload's -2 reuses */
	for (b[0] = -1; b[0] < c->n[0]; b[0]++)
	for (b[1] = -1; b[1] < c->n[1]; b[1]++)
	for (b[2] = -1; b[2] < c->n[2]; b[2]++) {
		unsigned used[2] = { 0, 0 };
		double wb = 2 * access;
		bool clash = false;

		if (!joins(JR, b, -1, need))
			continue;
		for (int p = 0; p < JPAIR; p++) {
			const struct jcand *k;

			if (b[p] < 0)
				continue;
			k = &c->c[p][b[p]];
			clash |= (used[k->lambda] & k->fibs) != 0;
			used[k->lambda] |= k->fibs;
			wb += k->light;
		}
		if (wl && clash)
			continue;
		for (u[0] = -2; u[0] < c->n[0]; u[0]++)
		for (u[1] = -2; u[1] < c->n[1]; u[1]++)
		for (u[2] = -2; u[2] < c->n[2]; u[2]++) {
			unsigned uu[2] = { used[0], used[1] };
			int join[JPAIR];
			double w = wb;
			bool ok = true;

			for (int p = 0; p < JPAIR && ok; p++) {
				const struct jcand *k;

				join[p] = u[p] == -1 ? -1 : 0;
				if (u[p] == -1)
					continue;
				if (u[p] == -2) {
					ok = b[p] >= 0;
					if (ok)
						w += c->c[p][b[p]].lit;
					continue;
				}
				k = &c->c[p][u[p]];
				ok = !wl || !(uu[k->lambda] & k->fibs);
				uu[k->lambda] |= k->fibs;
				w += k->light;
			}
			if (ok && w < best && joins(JR, join, -1, need))
				best = w;
		}
	}
	return best;
}

/* Lit as solved: no wavelength on a fibre carries two lightpaths. */
static bool each_wavelength_once(const struct net *net)
{
	for (int a = 0; a < net->nlp; a++)
		for (int b = a + 1; b < net->nlp; b++) {
			const struct lightpath *x = &net->lp[a], *y = &net->lp[b];

			for (int f = 0; f < x->nfib; f++)
				for (int g = 0; g < y->nfib; g++)
					if (x->lambda == y->lambda &&
					    x->fib[f] == y->fib[g])
						return false;
		}
	return true;
}

Test(sched_opt, joint_program_against_brute_force)
{
	int bound = 0, relayed = 0;

	for (uint64_t seed = 1; seed <= 500; seed++) {
		struct jinst j;
		struct jpairs c = { 0 };
		struct scenario *sc;
		struct plan *p;
		bool on[JROADM] = { false };
		double want, free_of_wl;
		static const int pa[JPAIR] = { 0, 0, 1 }, pb[JPAIR] = { 1, 2, 2 };

		jrandom(&j, seed);
		for (int q = 0; q < JPAIR; q++) {
			on[pa[q]] = true;
			jruns(&j, q, pa[q], pb[q], on, 0, 0, 0, 0, &c);
			on[pa[q]] = false;
		}
		sc = scenario_of(&j.x, JROADM, JR, j.nlambda);
		want = jbrute(&j, &c, true);
		free_of_wl = jbrute(&j, &c, false);
		bound += want > free_of_wl * (1 + 1e-9);
		p = sched_plan(sc, &sched_opt);
		cr_assert_not_null(p, "seed %d: %s", (int)seed, strerror(errno));
		if (isinf(want)) {
			cr_assert(p->tasks[0].blocked, "seed %d", (int)seed);
		} else {
			cr_assert_not(p->tasks[0].blocked, "seed %d: %s",
				      (int)seed, p->tasks[0].why);
			cr_assert_str_eq(p->tasks[0].program, "joint");
			cr_assert_float_eq(p->tasks[0].tree_weight, want,
					   1e-9 * want,
					   "seed %d (%d wavelengths): opt %.12f, "
					   "brute force %.12f", (int)seed,
					   j.nlambda, p->tasks[0].tree_weight,
					   want);
			cr_assert(each_wavelength_once(p->net), "seed %d",
				  (int)seed);
			for (int m = 1; m < p->tasks[0].nmodels; m++)
				relayed += p->tasks[0].bcast.parent[m] > 0;
		}
		plan_free(p);
		scenario_free(sc);
	}
	/* the wavelengths bind: the trees without them would be lighter */
	fprintf(stderr, "joint program: wavelengths bind in %d of 500\n",
		bound);
	cr_assert_gt(bound, 0);
	cr_assert_gt(relayed, 0);
}

/* Which program places a task: the joint one only where it is small. */
Test(sched_opt, says_which_program_placed_each_task)
{
	static const struct {
		const char *file, *program;
	} want[] = {
		{ "scenarios/teaching-ring.yaml", "joint" },
		{ "scenarios/poster-testbed.yaml", "runs" },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct scn_error err;
		struct scenario *sc = scenario_load(want[i].file, &err);
		struct plan *p;

		cr_assert_not_null(sc, "%s: %s", want[i].file, err.msg);
		p = sched_plan(sc, &sched_opt);
		cr_assert_not_null(p);
		for (int t = 0; t < p->ntasks; t++)
			if (!p->tasks[t].blocked)
				cr_assert_str_eq(p->tasks[t].program,
						 want[i].program, "%s task %d",
						 want[i].file, t);
		plan_free(p);
		p = sched_plan(sc, &sched_mst);
		cr_assert_not_null(p);
		cr_assert_null(p->tasks[0].program);
		plan_free(p);
		scenario_free(sc);
	}
}

/*
 * The program over runs, its dominated runs pruned, against the Steiner
 * tree's known minimum. A random graph of SV vertices (a ROADM, a router
 * and a server each) whose edge of weight w is a chain of w 1-km fibres,
 * free add/drops, beta and reuse 0: a tree's weight is the fibres its
 * broadcast lights, and its least is the Steiner minimum, found here as
 * the lightest spanning tree over the terminals and any subset of the
 * other vertices (shortest-path distances). 64 wavelengths, so that the
 * joint program has too many candidates and the runs decide.
 */
#define SV 9
#define STERM 4

static double steiner_min(double d[SV][SV], const int *term)
{
	double best = INFINITY;
	bool is_term[SV] = { false };

	for (int i = 0; i < STERM; i++)
		is_term[term[i]] = true;
	for (unsigned sub = 0; sub < 1u << SV; sub++) {
		bool in[SV], done[SV] = { false };
		double key[SV], w = 0;
		int n = 0;

		for (int v = 0; v < SV; v++) {
			in[v] = is_term[v] || (sub >> v & 1);
			key[v] = INFINITY;
			n += in[v];
		}
		if (sub & (1u << term[0] | 1u << term[1]))
			continue;	/* each subset of non-terminals once */
		key[term[0]] = 0;
		for (int k = 0; k < n; k++) {	/* Prim */
			int u = -1;

			for (int v = 0; v < SV; v++)
				if (in[v] && !done[v] && (u < 0 || key[v] < key[u]))
					u = v;
			done[u] = true;
			w += key[u];
			for (int v = 0; v < SV; v++)
				if (in[v] && !done[v] && d[u][v] < key[v])
					key[v] = d[u][v];
		}
		best = fmin(best, w);
	}
	return best;
}

Test(sched_opt, runs_program_is_the_steiner_minimum)
{
	for (uint64_t seed = 1; seed <= 40; seed++) {
		char y[32768];
		double d[SV][SV], want;
		int w[SV][SV] = { { 0 } }, term[STERM], n = 0, chain = 0;
		struct scn_error err;
		struct scenario *sc;
		struct plan *p;

		rng_state = seed * 0x9e3779b97f4a7c15ull;
		for (int v = 1; v < SV; v++) {	/* a random tree, then chords */
			int u = below(v);

			w[u][v] = w[v][u] = 1 + below(4);
		}
		for (int k = 0; k < SV; k++) {
			int u = below(SV), v = below(SV);

			if (u != v && !w[u][v])
				w[u][v] = w[v][u] = 1 + below(4);
		}
		for (int i = 0; i < STERM; i++) {
			bool again;

			do {
				term[i] = below(SV);
				again = false;
				for (int j = 0; j < i; j++)
					again |= term[j] == term[i];
			} while (again);
		}
		for (int u = 0; u < SV; u++)
			for (int v = 0; v < SV; v++)
				d[u][v] = u == v ? 0 : w[u][v] ? w[u][v] :
								 INFINITY;
		for (int k = 0; k < SV; k++)
			for (int u = 0; u < SV; u++)
				for (int v = 0; v < SV; v++)
					d[u][v] = fmin(d[u][v], d[u][k] + d[k][v]);
		want = steiner_min(d, term);

		n += snprintf(y + n, sizeof(y) - n,
			      "name: steiner\nwavelength_gbps: 100\n"
			      "wavelengths: 64\ndemand_gbps: 10\n"
			      "weights: {alpha: 1, beta: 0, reuse: 0, "
			      "adddrop: 0}\nnever_slower: false\nroadms: [");
		for (int v = 0; v < SV; v++)
			n += snprintf(y + n, sizeof(y) - n, "%sV%d", v ? ", " : "",
				      v);
		for (int u = 0; u < SV; u++)
			for (int v = u + 1; v < SV; v++)
				for (int k = 1; k < w[u][v]; k++)
					n += snprintf(y + n, sizeof(y) - n,
						      ", C%d", chain++);
		n += snprintf(y + n, sizeof(y) - n, "]\nfibres:\n");
		chain = 0;
		for (int u = 0; u < SV; u++)
			for (int v = u + 1; v < SV; v++) {
				char at[16];

				if (!w[u][v])
					continue;
				snprintf(at, sizeof(at), "V%d", u);
				for (int k = 1; k < w[u][v]; k++) {
					n += snprintf(y + n, sizeof(y) - n,
						      "  - {a: %s, b: C%d, km: 1}\n",
						      at, chain);
					snprintf(at, sizeof(at), "C%d", chain++);
				}
				n += snprintf(y + n, sizeof(y) - n,
					      "  - {a: %s, b: V%d, km: 1}\n", at, v);
			}
		n += snprintf(y + n, sizeof(y) - n, "routers:\n");
		for (int v = 0; v < SV; v++)
			n += snprintf(y + n, sizeof(y) - n,
				      "  - {name: r%d, roadm: V%d}\n", v, v);
		n += snprintf(y + n, sizeof(y) - n, "servers:\n");
		for (int v = 0; v < SV; v++)
			n += snprintf(y + n, sizeof(y) - n,
				      "  - {name: s%d, router: r%d, access_gbps: "
				      "100, cpu: 1, memory_mib: 64}\n", v, v);
		n += snprintf(y + n, sizeof(y) - n,
			      "tasks:\n  - {name: t, global: s%d, locals: [s%d, "
			      "s%d, s%d], parameters: 10, bytes_per_parameter: "
			      "4, work_core_s: 0}\n", term[0], term[1], term[2],
			      term[3]);
		cr_assert_lt(n, (int)sizeof(y));
		sc = scenario_parse(y, (size_t)n, "steiner", &err);
		cr_assert_not_null(sc, "%d:%d: %s", err.line, err.col, err.msg);
		p = sched_plan(sc, &sched_opt);
		cr_assert_not_null(p, "seed %d: %s", (int)seed, strerror(errno));
		cr_assert_not(p->tasks[0].blocked, "seed %d: %s", (int)seed,
			      p->tasks[0].why);
		cr_assert_str_eq(p->tasks[0].program, "runs", "seed %d",
				 (int)seed);
		cr_assert_float_eq(p->tasks[0].tree_weight, want, 1e-9,
				   "seed %d: opt %g, the Steiner minimum %g",
				   (int)seed, p->tasks[0].tree_weight, want);
		/* a fibre lit once, however the tree branches */
		cr_assert_eq(p->wavelength_links, (long)want, "seed %d: %ld",
			     (int)seed, (long)p->wavelength_links);
		plan_free(p);
		scenario_free(sc);
	}
}
