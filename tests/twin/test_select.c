// SPDX-License-Identifier: MIT
/*
 * Local-model selection (twin/select.h): the label mixes the workers' data
 * make, the greedy choice against brute force, random draws, and FedAvg
 * over a subset as the emulation measures it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "twin/select.h"
#include "twin/wire.h"

static struct scenario *ring(void)
{
	struct scn_error err;
	struct scenario *sc = scenario_load("scenarios/teaching-ring.yaml",
					    &err);

	cr_assert_not_null(sc, "%d:%d: %s", err.line, err.col, err.msg);
	return sc;
}

/* As emu/fleet.c's fleet_learning sets up task 0 of the teaching ring. */
static struct sel_learning learning(const struct scenario *sc)
{
	struct fl_model shape = { .classes = FL_CLASSES };
	struct sel_learning l = {
		.seed = fl_seed_derive(sc->seed, 0), .samples_per_local = 200,
		.test_samples = 1000, .classes = FL_CLASSES, .bpp = 4,
	};
	struct wire_msg wm;

	cr_assert_eq(wire_message(sc, &sc->tasks[0], &wm), 0);
	l.dim = wm.dim;
	shape.dim = wm.dim;
	shape.nparams = wm.nparams;
	l.train_samples = fl_samples_for_work(&shape, sc->tasks[0].work_core_s,
					      4e8);
	return l;
}

Test(select, label_mixes_and_costs)
{
	struct scenario *sc = ring();
	struct sel_learning l = learning(sc);
	struct sel_task s;
	int all[3] = { 0, 1, 2 }, total = 0;
	double far = 0;

	cr_assert_eq(sel_task_init(&s, sc, 0, &l), 0);
	cr_assert_eq(s.n, 3);
	for (int c = 0; c < s.n; c++) {
		double sum = 0;

		total += s.count[c];
		for (int j = 0; j < s.classes; j++)
			sum += s.mix[c * s.classes + j];
		cr_assert_float_eq(sum, 1, 1e-12, "local %d", c);
		cr_assert(s.cost[c] >= 0 && s.cost[c] <= 1);
		far = fmax(far, s.cost[c]);
	}
	cr_assert_eq(total, 600, "the pool, split over all three");
	cr_assert_float_eq(far, 1, 1e-12, "the farthest local costs 1");
	cr_assert_lt(sel_distance(&s, all, 3), 1e-12, "all of it is the pool");
	/* a single local of a non-IID split is far from the pool */
	cr_assert_gt(sel_distance(&s, all, 1), 0.05);
	sel_task_release(&s);
	scenario_free(sc);
}

Test(select, greedy_against_brute_force)
{
	struct scenario *sc = ring();
	struct sel_learning l = learning(sc);
	struct sel_task s;
	int one[1], two[2], best1 = -1, cheap = -1;
	double best2 = INFINITY;

	cr_assert_eq(sel_task_init(&s, sc, 0, &l), 0);
	for (int c = 0; c < s.n; c++) {
		int x[1] = { c };

		if (best1 < 0 || sel_distance(&s, x, 1) <
				 sel_distance(&s, &best1, 1))
			best1 = c;
		if (cheap < 0 || s.cost[c] < s.cost[cheap])
			cheap = c;
		for (int d = c + 1; d < s.n; d++) {
			int y[2] = { c, d };

			best2 = fmin(best2, sel_distance(&s, y, 2));
		}
	}
	/* one local, data alone: greedy is exact */
	cr_assert_eq(sel_choose(&s, 1, 0, one), 0);
	cr_assert_eq(one[0], best1);
	/* the network's weight overwhelming: the nearest */
	cr_assert_eq(sel_choose(&s, 1, 1e6, one), 0);
	cr_assert_eq(one[0], cheap);
	/* two: greedy starts from the best single and is no better than the
	 * best pair */
	cr_assert_eq(sel_choose(&s, 2, 0, two), 0);
	cr_assert_eq(two[0], best1);
	cr_assert_neq(two[1], two[0]);
	cr_assert_geq(sel_distance(&s, two, 2), best2 - 1e-12);
	cr_assert_eq(sel_choose(&s, 4, 0, two), -EINVAL);
	cr_assert_eq(sel_choose(&s, 0, 0, two), -EINVAL);
	sel_task_release(&s);
	scenario_free(sc);
}

Test(select, random_draws_are_distinct_and_seeded)
{
	int a[5], b[5];

	for (uint64_t seed = 1; seed < 50; seed++) {
		sel_random(9, 5, seed, a);
		sel_random(9, 5, seed, b);
		cr_assert_eq(memcmp(a, b, sizeof(a)), 0);
		for (int i = 0; i < 5; i++) {
			cr_assert(a[i] >= 0 && a[i] < 9);
			for (int j = 0; j < i; j++)
				cr_assert_neq(a[i], a[j]);
		}
	}
}

/*
 * FedAvg over all three locals of the ring's first task: the held-out
 * accuracy the emulation measured in its rounds 1-4 (twinlab run
 * scenarios/teaching-ring.yaml --rounds 4), which tests/emu/test_run.c
 * compares run by run.
 */
Test(select, learning_is_the_workers)
{
	static const double measured[4] = { 0.107, 0.412, 0.510, 0.487 };
	struct scenario *sc = ring();
	struct sel_learning l = learning(sc);
	int all[3] = { 0, 1, 2 }, two[2] = { 0, 2 };
	double acc[4], again[4];

	cr_assert_eq(sel_learn(&l, 3, all, 3, 4, acc), 0);
	for (int r = 0; r < 4; r++)
		cr_assert_float_eq(acc[r], measured[r], 1e-9, "round %d: %.3f",
				   r + 1, acc[r]);
	cr_assert_eq(sel_learn(&l, 3, two, 2, 4, acc), 0);
	cr_assert_eq(sel_learn(&l, 3, two, 2, 4, again), 0);
	cr_assert_eq(memcmp(acc, again, sizeof(acc)), 0, "deterministic");
	cr_assert_eq(sel_learn(&l, 3, two, 2, 0, acc), -EINVAL);
	two[1] = 3;
	cr_assert_eq(sel_learn(&l, 3, two, 2, 4, acc), -EINVAL);
	scenario_free(sc);
}

/*
 * A subset keeps the shares it held: a task of two of the ring's three
 * locals, split over three, has those locals' label mixes, and FedAvg
 * over them is what the emulation measured running that subset
 * (twinlab select ... --write, then twinlab run of the '-selected' file:
 * 0.124 0.394 0.415 0.413).
 */
Test(select, a_subset_keeps_its_shares)
{
	static const double measured[4] = { 0.124, 0.394, 0.415, 0.413 };
	struct scenario *sc = ring();
	struct sel_learning l = learning(sc);
	struct sel_task full, sub;
	struct scn_task keep = sc->tasks[0];
	int loc[2] = { sc->tasks[0].locals[0], sc->tasks[0].locals[2] };
	int share[2] = { 0, 2 }, both[2] = { 0, 1 };
	double acc[4];

	cr_assert_eq(sel_task_init(&full, sc, 0, &l), 0);
	sc->tasks[0].locals = loc;
	sc->tasks[0].nlocals = 2;
	sc->tasks[0].split_over = 3;
	sc->tasks[0].share = share;
	cr_assert_eq(sel_task_init(&sub, sc, 0, &l), 0);
	cr_assert_eq(sub.split, 3);
	for (int c = 0; c < 2; c++) {
		cr_assert_eq(sub.count[c], full.count[share[c]]);
		for (int j = 0; j < sub.classes; j++)
			cr_assert_float_eq(sub.mix[c * sub.classes + j],
					   full.mix[share[c] * full.classes + j],
					   1e-15);
	}
	cr_assert_float_eq(sel_distance(&sub, both, 2),
			   sel_distance(&full, share, 2), 1e-15);
	cr_assert_eq(sel_learn(&l, 3, share, 2, 4, acc), 0);
	for (int r = 0; r < 4; r++)
		cr_assert_float_eq(acc[r], measured[r], 1e-9, "round %d: %.3f",
				   r + 1, acc[r]);
	sc->tasks[0] = keep;
	sel_task_release(&full);
	sel_task_release(&sub);
	scenario_free(sc);
}

static bool at_most_two_without_0(void *ctx, const int *chosen, int k)
{
	int *calls = ctx;

	(*calls)++;
	for (int i = 0; i < k; i++)
		if (chosen[i] == 0)
			return false;
	return k <= 2;
}

static bool nothing_fits(void *ctx, const int *chosen, int k)
{
	(void)ctx;
	(void)chosen;
	(void)k;
	return false;
}

/* A budget: only subsets it admits, as many as fit, none if none does. */
Test(select, within_a_budget)
{
	struct scenario *sc = ring();
	struct sel_learning l = learning(sc);
	struct sel_task s;
	int chosen[3], calls = 0;

	cr_assert_eq(sel_task_init(&s, sc, 0, &l), 0);
	cr_assert_eq(sel_choose_within(&s, 3, 0, at_most_two_without_0,
				       &calls, chosen), 2);
	cr_assert(chosen[0] != 0 && chosen[1] != 0 && chosen[0] != chosen[1]);
	cr_assert_gt(calls, 0);
	cr_assert_eq(sel_choose_within(&s, 3, 0, nothing_fits, NULL, chosen),
		     0);
	cr_assert_eq(sel_choose_within(&s, 3, 0, NULL, NULL, chosen), 3);
	sel_task_release(&s);
	scenario_free(sc);
}
