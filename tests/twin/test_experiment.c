// SPDX-License-Identifier: MIT
/*
 * Experiments in the twin (twin/experiment.h): the two kinds and what each
 * needs, the point scenarios, and blocking under offered load.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "twin/experiment.h"
#include "twin/plan.h"
#include "twin/sched.h"

static int parse(const char *y, struct experiment *x, struct scn_error *err)
{
	return experiment_parse(y, strlen(y), "dir/x.yaml", x, err);
}

/*
 * y refused with a message holding msg at line (and col, where not 0);
 * what names the case in what a failure says.
 */
static void refused(const char *y, const char *what, const char *msg,
		    int line, int col)
{
	struct experiment x;
	struct scn_error err;

	cr_expect_eq(parse(y, &x, &err), -EINVAL, "%s", what);
	cr_expect(strstr(err.msg, msg), "%s: %s", what, err.msg);
	cr_expect_eq(err.line, line, "%s: %d:%d: %s", what, err.line, err.col,
		     err.msg);
	if (col)
		cr_expect_eq(err.col, col, "%s: %d:%d: %s", what, err.line,
			     err.col, err.msg);
}

/* A fragment of an experiment file, refused at its line with msg. */
struct bad_fragment {
	const char *y;
	int line;
	const char *msg;
};

/* Each of the n fragments, between head and tail, refused as it says. */
static void fragments_refused(const char *head,
			      const struct bad_fragment *bad, size_t n,
			      const char *tail)
{
	char y[512];

	for (size_t i = 0; i < n; i++) {
		snprintf(y, sizeof(y), "%s%s%s", head, bad[i].y, tail);
		refused(y, bad[i].y, bad[i].msg, bad[i].line, 0);
	}
}

Test(experiment, a_blocking_experiment)
{
	struct experiment x;
	struct scn_error err;

	cr_assert_eq(parse("name: b\nkind: blocking\nbase: net.yaml\n"
			   "schedulers: [spff, mst, kmb, tm]\nlocals: [3]\n"
			   "loads: [10, 20]\nseeds: [1]\n", &x, &err), 0,
		     "%d:%d: %s", err.line, err.col, err.msg);
	cr_assert_eq(x.kind, EXP_BLOCKING);
	cr_assert_eq(x.nloads, 2);
	cr_assert_eq(x.loads[1], 20);
	cr_assert_eq(x.nsched, 4);
	cr_assert_str_eq(x.base, "dir/net.yaml");
}

/* A sweep's tasks fold their children in as the file says. */
Test(experiment, a_sweep_gives_its_tasks_their_aggregating_time)
{
	struct experiment x;
	struct scn_error err;
	struct scenario *base = scenario_load("scenarios/nsfnet.yaml", &err);
	struct scenario pt;

	cr_assert_not_null(base, "%s", err.msg);
	cr_assert_eq(parse("name: a\nbase: net.yaml\nschedulers: [mst]\n"
			   "locals: [3]\nseeds: [1]\ntasks: 4\nparameters: 1000\n"
			   "work_core_s: 0.001\nagg_core_s: 0.0002\n", &x,
			   &err), 0, "%d:%d: %s", err.line, err.col, err.msg);
	cr_assert_float_eq(x.agg, 0.0002, 1e-15);
	cr_assert_eq(experiment_point(&x, base, 3, 1, 4, &pt), 0);
	for (int t = 0; t < pt.ntasks; t++)
		cr_expect_float_eq(pt.tasks[t].agg_core_s, 0.0002, 1e-15);
	experiment_point_release(&pt);
	scenario_free(base);
	refused("name: a\nbase: net.yaml\nschedulers: [mst]\nseeds: [1]\n"
		"locals: [3]\ntasks: 4\n"
		"parameters: 1000\nwork_core_s: 0\nagg_core_s: -1\n",
		"negative", "'agg_core_s' must be >= 0", 9, 0);
}

Test(experiment, a_gap_experiment)
{
	struct experiment x;
	struct scn_error err;

	cr_assert_eq(parse("name: g\nkind: gap\nbase: random\nroadms: 9\n"
			   "schedulers: [spff, mst]\nlocals: [2, 4]\n"
			   "seeds: [1, 2]\n", &x, &err), 0, "%d:%d: %s",
		     err.line, err.col, err.msg);
	cr_assert_eq(x.kind, EXP_GAP);
	cr_assert_eq(x.random_roadms, 9);
	cr_assert_str_eq(x.base, "random");
	cr_assert_eq(parse("name: g\nkind: gap\nbase: random\nroadms: 3\n"
			   "schedulers: [mst]\nlocals: [2]\nseeds: [1]\n", &x,
			   &err), -EINVAL);
	cr_assert(strstr(err.msg, "'roadms' must be 4 to 128, got 3"), "%s",
		  err.msg);
	cr_assert_eq(parse("name: g\nkind: gap\nbase: n.yaml\n"
			   "schedulers: [mst, opt]\nlocals: [2]\nseeds: [1]\n",
			   &x, &err), -EINVAL);
	cr_assert(strstr(err.msg, "compares each scheduler with opt: list "
			 "the others"), "%s", err.msg);
	cr_assert_eq(err.line, 4);
}

/*
 * A random network is the seed's: the same seed draws the same network, it
 * is connected (every router reaches every other over fibres), and every
 * ROADM has a router and a server. On its instances opt's tree weighs no
 * more than any other scheduler's.
 */
Test(experiment, random_networks_and_gap_points)
{
	struct experiment x;
	struct scn_error err;

	cr_assert_eq(parse("name: g\nkind: gap\nbase: random\nroadms: 12\n"
			   "schedulers: [spff, mst, kmb, tm]\nlocals: [5]\n"
			   "seeds: [1]\n", &x, &err), 0, "%s", err.msg);
	for (long seed = 1; seed <= 20; seed++) {
		struct scenario *a, *b, pt;
		struct exp_gap o, g;
		int routers = 0, servers = 0, fibres_seen;
		bool reach[64] = { false };

		cr_assert_eq(experiment_random_base(12, seed, &a), 0);
		cr_assert_eq(experiment_random_base(12, seed, &b), 0);
		cr_assert_eq(a->nfibres, b->nfibres);
		for (int f = 0; f < a->nfibres; f++)
			cr_assert(a->fibres[f].a == b->fibres[f].a &&
				  a->fibres[f].km == b->fibres[f].km);
		for (int i = 0; i < a->nnodes; i++) {
			routers += a->nodes[i].kind == NODE_ROUTER;
			servers += a->nodes[i].kind == NODE_SERVER;
		}
		cr_assert_eq(routers, 12);
		cr_assert_eq(servers, 12);
		cr_assert_geq(a->nfibres, 11);
		/* connected: grow the ROADMs reached over fibres */
		reach[a->fibres[0].a] = true;
		do {
			fibres_seen = 0;
			for (int f = 0; f < a->nfibres; f++) {
				int u = a->fibres[f].a, v = a->fibres[f].b;

				if (reach[u] != reach[v]) {
					reach[u] = reach[v] = true;
					fibres_seen++;
				}
			}
		} while (fibres_seen);
		for (int i = 0; i < a->nnodes; i++)
			cr_assert(a->nodes[i].kind != NODE_ROADM || reach[i],
				  "seed %ld: ROADM %s cut off", seed,
				  a->nodes[i].name);
		cr_assert_eq(experiment_point(&x, a, 5, seed, 1, &pt), 0);
		cr_assert_eq(experiment_gap_point(&pt, &sched_opt, &o), 0);
		cr_assert_not(o.blocked);
		for (int s = 0; s < x.nsched; s++) {
			cr_assert_eq(experiment_gap_point(
				&pt, sched_find(x.sched[s]), &g), 0);
			cr_assert(g.blocked ||
				  g.weight >= o.weight * (1 - 1e-9),
				  "seed %ld: %s %.9f < opt %.9f", seed,
				  x.sched[s], g.weight, o.weight);
		}
		experiment_point_release(&pt);
		scenario_free(a);
		scenario_free(b);
	}
	cr_assert_eq(experiment_random_base(3, 1, &(struct scenario *){ 0 }),
		     -EINVAL);
}

Test(experiment, each_kind_needs_its_fields)
{
	static const struct bad_fragment bad[] = {
		{ "kind: nope\n", 4, "'kind' must be emulation, blocking, gap "
				      "or dynamics, got 'nope'" },
		{ "kind: gap\ntasks: 3\n", 5, "a gap experiment schedules one "
		  "task per instance: 'tasks' is not for it" },
		{ "kind: gap\nloads: [3]\n", 5, "'loads' is not for it" },
		{ "kind: gap\nroadms: 10\n", 5,
		  "'base: random' and 'roadms' go together" },
		{ "tasks: 3\nparameters: 5\nwork_core_s: 0\nroadms: 10\n", 7,
		  "random networks ('base: random' with 'roadms') are for "
		  "'kind: gap'" },
		{ "kind: blocking\n", 1, "a blocking experiment needs 'loads'" },
		{ "kind: blocking\nloads: [5]\ntasks: 3\n", 6,
		  "a blocking experiment takes 'loads', not 'tasks'" },
		{ "kind: blocking\nloads: [20000]\n", 5,
		  "'loads': at most 10000 tasks, got 20000" },
		{ "tasks: 3\nwork_core_s: 0\n", 1,
		  "an experiment on the emulation needs 'parameters'" },
		{ "tasks: 3\nparameters: 5\nwork_core_s: 0\nloads: [5]\n", 7,
		  "'loads' is for 'kind: blocking'" },
	};

	fragments_refused("name: b\nbase: n.yaml\nschedulers: [mst]\n", bad,
			  sizeof(bad) / sizeof(bad[0]),
			  "locals: [2]\nseeds: [1]\n");
}

/* A scheduler, local-model count or seed listed twice is refused where
 * it is listed again. */
Test(experiment, an_entry_listed_twice_is_refused)
{
	static const struct {
		const char *sched, *locals, *seeds;
		int line, col;
		const char *msg;
	} bad[] = {
		{ "[spff, mst, spff]", "[2]", "[1]", 3, 25,
		  "'spff' twice in 'schedulers' (first at line 3)" },
		{ "[mst]", "[2, 4,\n  2]", "[1]", 5, 3,
		  "'2' twice in 'locals' (first at line 4)" },
		{ "[mst]", "[2]", "[7, 7]", 5, 12,
		  "'7' twice in 'seeds' (first at line 5)" },
	};
	char y[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(y, sizeof(y), "name: b\nbase: n.yaml\nschedulers: %s\n"
			 "locals: %s\nseeds: %s\n", bad[i].sched,
			 bad[i].locals, bad[i].seeds);
		refused(y, y, bad[i].msg, bad[i].line, bad[i].col);
	}
}

/*
 * A dynamics experiment: the base's tasks through a file of events, once
 * per scheduler and policy; its files resolved as the base is, its
 * policies all three unless it names some, and nothing it does not use.
 */
Test(experiment, a_dynamics_experiment_names_its_events_and_policies)
{
	static const struct bad_fragment bad[] = {
		{ "kind: dynamics\n", 1, "a dynamics experiment needs 'events'" },
		{ "kind: dynamics\nevents: e.yaml\nlocals: [2]\n", 6,
		  "a dynamics experiment runs the base's own tasks through its "
		  "events: 'locals' is not for it" },
		{ "kind: dynamics\nevents: e.yaml\ntasks: 3\n", 6,
		  "'tasks' is not for it" },
		{ "kind: dynamics\nevents: e.yaml\npolicies: [none, none]\n",
		  6, "policy 'none' twice in 'policies'" },
		{ "kind: dynamics\nevents: e.yaml\npolicies: [sometimes]\n",
		  6, "unknown policy 'sometimes' in 'policies': none, full or "
		  "auto" },
		{ "kind: dynamics\nevents: e.yaml\npolicies: []\n", 6,
		  "'policies' must list 1 to 3 of none, full and auto" },
		{ "events: e.yaml\nlocals: [2]\nseeds: [1]\n", 4,
		  "'events' is for 'kind: dynamics'" },
		{ "tasks: 3\nparameters: 5\nwork_core_s: 0\nseeds: [1]\n", 1,
		  "an experiment needs 'locals'" },
	};
	struct experiment x;
	struct scn_error err;
	char y[512];

	fragments_refused("name: d\nbase: n.yaml\nschedulers: [spff]\n", bad,
			  sizeof(bad) / sizeof(bad[0]), "");
	snprintf(y, sizeof(y), "name: d\nkind: dynamics\nbase: ../n.yaml\n"
		 "events: ../ev/e.yaml\nschedulers: [spff]\nrounds: 8\n");
	cr_assert_eq(experiment_parse(y, strlen(y), "x/d.yaml", &x, &err), 0,
		     "%s", err.msg);
	cr_assert_eq(x.kind, EXP_DYNAMICS);
	cr_assert_str_eq(x.base, "x/../n.yaml");
	cr_assert_str_eq(x.events, "x/../ev/e.yaml");
	cr_assert_eq(x.rounds, 8);
	cr_assert_eq(x.npolicies, 3);
	cr_assert(x.policy[0] == RESCHED_NONE && x.policy[1] == RESCHED_FULL &&
		  x.policy[2] == RESCHED_AUTO);
	snprintf(y, sizeof(y), "name: d\nkind: dynamics\nbase: n.yaml\n"
		 "events: /abs/e.yaml\nschedulers: [spff, mst]\npolicies: "
		 "[auto, none]\n");
	cr_assert_eq(parse(y, &x, &err), 0, "%s", err.msg);
	cr_assert_str_eq(x.events, "/abs/e.yaml");
	cr_assert_eq(x.npolicies, 2);
	cr_assert(x.policy[0] == RESCHED_AUTO && x.policy[1] == RESCHED_NONE);
	cr_assert_eq(x.nsched, 2);
}

/*
 * Offered load grows one workload: the first n tasks of a point are the
 * same whatever its number of tasks, so, scheduled in order, a heavier
 * load blocks at least what a lighter one did, and the blocking
 * experiment's curves never fall.
 */
Test(experiment, a_heavier_load_adds_tasks_and_never_blocks_fewer)
{
	struct experiment x = { .kind = EXP_BLOCKING, .rounds = 1,
				.parameters = 1000000, .bpp = 4 };
	struct scn_error err;
	struct scenario *base = scenario_load("scenarios/nsfnet.yaml", &err);
	struct scenario a, b;
	static const long loads[] = { 50, 200, 400, 800, 1600 };

	cr_assert_not_null(base, "%s", err.msg);
	cr_assert_eq(experiment_point(&x, base, 4, 7, 10, &a), 0);
	cr_assert_eq(experiment_point(&x, base, 4, 7, 30, &b), 0);
	cr_assert_eq(b.ntasks, 30);
	for (int t = 0; t < a.ntasks; t++) {
		cr_assert_str_eq(a.tasks[t].name, b.tasks[t].name);
		cr_assert_eq(a.tasks[t].global, b.tasks[t].global);
		cr_assert_eq(memcmp(a.tasks[t].locals, b.tasks[t].locals,
				    4 * sizeof(int)), 0, "task %d", t);
	}
	experiment_point_release(&a);
	experiment_point_release(&b);
	cr_assert_eq(experiment_point(&x, base, 40, 1, 3, &a), -EINVAL,
		     "more locals than servers");
	for (int s = 0; sched_list[s]; s++) {
		int last = 0;

		/* an integer program per task: 800 take over a minute; opt
		 * is held to the schedulers' properties in sched_props */
		if (sched_list[s] == &sched_opt)
			continue;

		for (size_t l = 0; l < sizeof(loads) / sizeof(loads[0]); l++) {
			struct exp_load el;

			cr_assert_eq(experiment_point(&x, base, 5, 1, loads[l],
						      &a), 0);
			cr_assert_eq(experiment_load_point(&a, sched_list[s],
							   &el), 0);
			experiment_point_release(&a);
			cr_assert_eq(el.tasks, loads[l]);
			cr_assert_geq(el.blocked, last, "%s at %ld",
				      sched_list[s]->name, loads[l]);
			cr_assert(el.wl_used > 0 && el.wl_used <= el.wl_total);
			last = el.blocked;
			cr_log_info("%s: %ld tasks, %d blocked",
				    sched_list[s]->name, loads[l],
				    el.blocked);
		}
		/*
		 * 1,600 tasks of five locals fill NSFNET's wavelengths
		 * (800 did not always: mst blocked 5 or none of them,
		 * depending only on how equal-weight paths were chosen)
		 */
		cr_assert_gt(last, 0, "%s blocks nothing at 1600",
			     sched_list[s]->name);
	}
	scenario_free(base);
}

/*
 * Steiner-vertex insertion pays: on random 24-ROADM networks with tasks
 * of 8 local models, svi's tree weight is never above mst's or kmb's (it
 * keeps theirs where they weigh less) nor below opt's, and is below
 * both somewhere — where a router with no model joins the tree.
 */
Test(experiment, steiner_vertex_insertion_lightens_trees)
{
	struct experiment x;
	struct scn_error err;
	int lighter = 0;

	cr_assert_eq(parse("name: g\nkind: gap\nbase: random\nroadms: 24\n"
			   "schedulers: [mst]\nlocals: [8]\nseeds: [1]\n", &x,
			   &err), 0, "%s", err.msg);
	for (long seed = 1; seed <= 25; seed++) {
		struct scenario *a, pt;
		struct exp_gap o, m, k, v;

		cr_assert_eq(experiment_random_base(24, seed, &a), 0);
		cr_assert_eq(experiment_point(&x, a, 8, seed, 1, &pt), 0);
		cr_assert_eq(experiment_gap_point(&pt, &sched_opt, &o), 0);
		cr_assert_eq(experiment_gap_point(&pt, &sched_mst, &m), 0);
		cr_assert_eq(experiment_gap_point(&pt, &sched_kmb, &k), 0);
		cr_assert_eq(experiment_gap_point(&pt, &sched_svi, &v), 0);
		cr_assert(!o.blocked && !m.blocked && !k.blocked && !v.blocked);
		cr_expect_leq(v.weight, m.weight * (1 + 1e-12), "seed %ld", seed);
		cr_expect_leq(v.weight, k.weight * (1 + 1e-12), "seed %ld", seed);
		cr_expect_geq(v.weight, o.weight * (1 - 1e-9), "seed %ld", seed);
		lighter += v.weight < fmin(m.weight, k.weight) * (1 - 1e-9);
		experiment_point_release(&pt);
		scenario_free(a);
	}
	cr_expect_gt(lighter, 0, "svi never lighter than both mst and kmb");
}

/*
 * No Steiner heuristic is heavier than mst: on random 12-ROADM networks
 * with tasks of 2 to 8 local models, kmb and tm keep mst's trees where
 * their own weigh more once lit, and svi tm's; tm's own are lighter than
 * mst's somewhere, so the rule is not mst under another name.
 */
Test(experiment, no_steiner_heuristic_is_heavier_than_mst)
{
	struct experiment x;
	struct scn_error err;
	int tm_lighter = 0;

	cr_assert_eq(parse("name: g\nkind: gap\nbase: random\nroadms: 12\n"
			   "schedulers: [mst]\nlocals: [2]\nseeds: [1]\n",
			   &x, &err),
		     0, "%s", err.msg);
	for (long seed = 1; seed <= 25; seed++) {
		for (int locals = 2; locals <= 8; locals += 2) {
			struct scenario *a, pt;
			struct exp_gap m, k, t, v;

			cr_assert_eq(experiment_random_base(12, seed, &a), 0);
			cr_assert_eq(
				experiment_point(&x, a, locals, seed, 1, &pt),
				0);
			cr_assert_eq(experiment_gap_point(&pt, &sched_mst, &m),
				     0);
			cr_assert_eq(experiment_gap_point(&pt, &sched_kmb, &k),
				     0);
			cr_assert_eq(experiment_gap_point(&pt, &sched_tm, &t),
				     0);
			cr_assert_eq(experiment_gap_point(&pt, &sched_svi, &v),
				     0);
			cr_assert(!m.blocked && !k.blocked && !t.blocked &&
				  !v.blocked);
			cr_expect_leq(k.weight, m.weight * (1 + 1e-12),
				      "kmb, seed %ld, %d locals", seed, locals);
			cr_expect_leq(t.weight, m.weight * (1 + 1e-12),
				      "tm, seed %ld, %d locals", seed, locals);
			cr_expect_leq(v.weight, t.weight * (1 + 1e-12),
				      "svi, seed %ld, %d locals", seed, locals);
			tm_lighter += t.weight < m.weight * (1 - 1e-9);
			experiment_point_release(&pt);
			scenario_free(a);
		}
	}
	cr_expect_gt(tm_lighter, 0, "tm's trees never lighter than mst's");
}
