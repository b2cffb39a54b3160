// SPDX-License-Identifier: MIT
/*
 * A plan split over hosts (twin/partition.h): sites whole, only fibres
 * cut, a tunnel per lit wavelength and direction over them with a VNI of
 * its own, the workers balanced within 1.1 where the sites allow it, and
 * fewer tunnels than the naive split's on a large network.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <string.h>

#include "tests/lib/ring.h"
#include "twin/experiment.h"
#include "twin/net.h"
#include "twin/partition.h"
#include "twin/sched.h"

static struct plan *planned(const char *path, const struct sched_ops *ops,
			    struct scenario **sc)
{
	struct scn_error err;
	struct plan *p;

	*sc = scenario_load(path, &err);
	cr_assert_not_null(*sc, "%s", err.msg);
	p = sched_plan(*sc, ops);
	cr_assert_not_null(p);
	return p;
}

/* Everything a split promises, counted again from the plan. */
static void holds(const struct plan *p, const struct partition *pt,
		  const char *what)
{
	const struct scenario *sc = p->sc;
	long models = 0, workers = 0, tunnels = 0;
	int cut = 0;

	for (int n = 0; n < sc->nnodes; n++) {
		int r = n;

		cr_assert(pt->host[n] >= 0 && pt->host[n] < pt->nhosts);
		while (sc->nodes[r].kind != NODE_ROADM)
			r = sc->nodes[r].attach;
		cr_assert_eq(pt->host[n], pt->host[r], "%s: %s away from its "
			     "ROADM %s", what, sc->nodes[n].name,
			     sc->nodes[r].name);
	}
	for (int t = 0; t < p->ntasks; t++)
		models += p->tasks[t].blocked ? 0 : p->tasks[t].nmodels;
	for (int h = 0; h < pt->nhosts; h++) {
		cr_assert_gt(pt->namespaces[h], 0, "%s: host %d empty", what,
			     h);
		workers += pt->workers[h];
	}
	cr_assert_eq(workers, models, "%s", what);
	for (int f = 0; f < sc->nfibres; f++)
		cut += pt->host[sc->fibres[f].a] != pt->host[sc->fibres[f].b];
	cr_assert_eq(cut, pt->ncut_fibres, "%s", what);
	for (int l = 0; l < p->net->nlp; l++)
		for (int k = 0; k < p->net->lp[l].nfib; k++) {
			const struct scn_fibre *fb =
				&sc->fibres[p->net->lp[l].fib[k]];

			tunnels += 2 * (pt->host[fb->a] != pt->host[fb->b]);
		}
	cr_assert_eq(tunnels, pt->ntunnels, "%s", what);
	for (int i = 0; i < pt->ntunnels; i++) {
		const struct part_tunnel *t = &pt->tunnel[i];
		const struct scn_fibre *fb = &sc->fibres[t->fibre];

		cr_assert_eq(t->from, pt->host[t->dir ? fb->b : fb->a]);
		cr_assert_eq(t->to, pt->host[t->dir ? fb->a : fb->b]);
		cr_assert_neq(t->from, t->to);
		cr_assert(t->vni >= 1 && t->vni < (1u << 24));
		for (int j = 0; j < i; j++)
			cr_assert_neq(t->vni, pt->tunnel[j].vni,
				      "%s: VNI %u twice", what, t->vni);
	}
}

Test(partition, nsfnet_splits_whole_sites_within_the_balance)
{
	struct scenario *sc;
	struct plan *p = planned("scenarios/nsfnet.yaml", &sched_mst, &sc);
	char why[256];

	for (int n = 1; n <= 4; n *= 2) {
		struct partition a, b, naive;
		char what[32];

		snprintf(what, sizeof(what), "%d hosts", n);
		cr_assert_eq(partition_plan(p, n, false, &a, why, sizeof(why)),
			     0, "%s", why);
		cr_assert_eq(partition_plan(p, n, false, &b, why, sizeof(why)),
			     0, "%s", why);
		cr_assert_eq(partition_plan(p, n, true, &naive, why,
					    sizeof(why)), 0, "%s", why);
		holds(p, &a, what);
		holds(p, &naive, what);
		cr_expect_leq(a.balance, PART_BALANCE + 1e-9, "%s: %.3f", what,
			      a.balance);
		cr_assert_eq(memcmp(a.host, b.host,
				    (size_t)sc->nnodes * sizeof(*a.host)), 0,
			     "%s: the same split twice", what);
		if (n == 1)
			cr_expect(a.ntunnels == 0 && a.balance == 1.0);
		partition_release(&a);
		partition_release(&b);
		partition_release(&naive);
	}
	plan_free(p);
	scenario_free(sc);
}

/*
 * A generated network of 100 ROADMs (a router and a server each) with
 * 100 tasks of 5 locals: within 1.1 over 2 and 4 hosts, and fewer
 * tunnels than the naive split's.
 */
Test(partition, a_hundred_roadms_split_better_than_naively, .timeout = 60)
{
	struct scenario *base, pt;
	struct plan *p;
	char why[256];

	hundred_roadms(&base, &pt);
	p = sched_plan(&pt, &sched_spff);
	cr_assert_not_null(p);
	for (int n = 2; n <= 4; n *= 2) {
		struct partition a, naive;
		char what[32];

		snprintf(what, sizeof(what), "%d hosts", n);
		cr_assert_eq(partition_plan(p, n, false, &a, why, sizeof(why)),
			     0, "%s", why);
		cr_assert_eq(partition_plan(p, n, true, &naive, why,
					    sizeof(why)), 0, "%s", why);
		holds(p, &a, what);
		cr_log_info("%s: balance %.3f, %d tunnels; naive %.3f, %d", what,
			    a.balance, a.ntunnels, naive.balance,
			    naive.ntunnels);
		cr_expect_leq(a.balance, PART_BALANCE + 1e-9, "%s: %.3f", what,
			      a.balance);
		cr_expect_lt(a.ntunnels, naive.ntunnels, "%s", what);
		partition_release(&a);
		partition_release(&naive);
	}
	plan_free(p);
	experiment_point_release(&pt);
	scenario_free(base);
}

Test(partition, impossible_host_counts_are_refused)
{
	struct scenario *sc;
	struct plan *p = planned("scenarios/teaching-ring.yaml", &sched_spff,
				 &sc);
	struct partition a;
	char why[256];
	int roadms = 0;

	for (int n = 0; n < sc->nnodes; n++)
		roadms += sc->nodes[n].kind == NODE_ROADM;
	cr_assert_eq(partition_plan(p, 0, false, &a, why, sizeof(why)),
		     -EINVAL);
	cr_assert(strstr(why, "from 1 to 256"), "%s", why);
	cr_assert_eq(partition_plan(p, roadms + 1, false, &a, why,
				    sizeof(why)), -EINVAL);
	cr_assert(strstr(why, "stay whole on one host each: it cannot be "
			 "split over"), "%s", why);
	cr_assert_null(a.host);
	cr_assert_eq(partition_plan(p, roadms, false, &a, why, sizeof(why)),
		     0, "%s", why);
	holds(p, &a, "a host per ROADM");
	partition_release(&a);
	plan_free(p);
	scenario_free(sc);
}
