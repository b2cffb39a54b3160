/* SPDX-License-Identifier: MIT */
/*
 * Local-model selection: which k of a task's n local models to train with,
 * by the usefulness of their data against what reaching them costs the
 * network. The workers' data are seeded (twin/fl.h), so the twin knows
 * each local model's label mix exactly: its share of the task's pool,
 * split non-IID over all n locals as the workers split it.
 *
 * Selection is greedy: each step adds the local model that brings the
 * chosen models' pooled label mix closest to the pool's (total-variation
 * distance), plus lambda times its network cost (its server's shortest
 * distance from the global model's over fibres and access links, over the
 * largest such distance among the task's locals); ties go to the lower
 * index. lambda 0 is data alone.
 *
 * What a subset learns is measured here too, by the same arithmetic the
 * workers run: FedAvg of the chosen local models (each trains its share
 * from the broadcast model, with the same seeds and budget, and the means
 * are weighted by sample counts), the global model scored on the held-out
 * set after every round.
 */
#ifndef TWIN_SELECT_H
#define TWIN_SELECT_H

#include <stdbool.h>
#include <stdint.h>

#include "fl.h"
#include "scenario.h"

/* How the workers of a task learn (emu/fleet.c fills the same). */
struct sel_learning {
	uint64_t seed;			/* the task's: fl_seed_derive(sc, t) */
	int samples_per_local;		/* pool = this x nlocals */
	int test_samples;
	int dim, classes;
	int64_t train_samples;		/* per local model and round */
	unsigned bpp;			/* the wire's bytes per parameter */
};

/* A task's local models as the selection sees them. */
struct sel_task {
	int n;				/* local models */
	int split;			/* shares the data are split into */
	int *share;			/* the share each local holds */
	int *count;			/* samples of each */
	double *mix;			/* n x classes label shares */
	double pool[FL_CLASSES];	/* the whole pool's label shares */
	double *cost;			/* network cost in [0, 1] */
	int classes;
};

/*
 * sel_task_init - the label mix of each of task t's local models (learning
 * l) and its network cost on sc. 0, -EINVAL, -ENOMEM.
 */
int sel_task_init(struct sel_task *s, const struct scenario *sc, int t,
		  const struct sel_learning *l)
	__attribute__((warn_unused_result));
void sel_task_release(struct sel_task *s);

/* sel_distance - total-variation distance of the pooled mix of chosen[0..k)
 * from the pool's. */
double sel_distance(const struct sel_task *s, const int *chosen, int k);

/* sel_choose - k of the n locals (1 <= k <= n), greedily (see the top),
 * in the order chosen. 0 or -EINVAL. */
int sel_choose(const struct sel_task *s, int k, double lambda, int *chosen);

/*
 * sel_choose_within - as sel_choose, at most kmax, adding at each step only
 * a local with which fits(ctx, chosen, k) still holds (a latency or
 * bandwidth budget), and stopping when none does. Returns how many were
 * chosen (0 if not even one fits), or -EINVAL, -ENOMEM.
 */
int sel_choose_within(const struct sel_task *s, int kmax, double lambda,
		      bool (*fits)(void *ctx, const int *chosen, int k),
		      void *ctx, int *chosen);

/* sel_random - k of the n locals drawn uniformly with seed. */
void sel_random(int n, int k, uint64_t seed, int *chosen);

/*
 * sel_learn - FedAvg over the local models holding shares[0..k) of the
 * data split into `split`, over rounds rounds; accuracy[r] gets the global
 * model's held-out accuracy after round r + 1. 0, -EINVAL, -ENOMEM.
 */
int sel_learn(const struct sel_learning *l, int split, const int *shares,
	      int k, int rounds, double *accuracy)
	__attribute__((warn_unused_result));

#endif
