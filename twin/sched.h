/* SPDX-License-Identifier: MIT */
/*
 * Schedulers: an ops table, so more can be added. Tasks are scheduled one
 * after another in arrival order; a task that cannot be placed whole is
 * rolled back and reported blocked. The machinery the schedulers share is
 * in sched_impl.h.
 */
#ifndef TWIN_SCHED_H
#define TWIN_SCHED_H

#include <stdbool.h>
#include <stddef.h>

#include "plan.h"
#include "scenario.h"

struct sched;
struct sched_way;

struct sched_ops {
	const char *name;
	const char *help;
	/*
	 * What it is in the poster's comparison: "fixed" (the baseline every
	 * other is read against: exactly one has it) or "flexible"; reports
	 * call it "<role> (<name>)".
	 */
	const char *role;
	bool baseline;
	/* Place one task; 0, -ENOSPC (blocked, tp->why set) or -errno. */
	int (*place)(struct sched *s, struct task_plan *tp, int ti);
	/*
	 * Or, with place NULL: the ways to place a task's trees, of which
	 * the one that weighs least once placed is kept (sched_lightest,
	 * sched_impl.h).
	 */
	const struct sched_way *ways;
	int nways;
	/* Whether it can plan sc at all (NULL: always): 0, or -E2BIG with
	 * why saying what is too large. */
	int (*fits)(const struct scenario *sc, char *why, size_t n);
	/*
	 * After every task of a plan made afresh (not from a previous one:
	 * a timeline's epochs) is placed (NULL: nothing): may replace *p
	 * with a better plan of the same tasks (sched_plan_forced), freeing
	 * the old one. 0 or -errno (*p is then still a valid plan).
	 */
	int (*polish)(const struct scenario *sc, struct plan **p);
};

/*
 * mst with never_slower compares its trees with a star while the tasks
 * placed have at most this many transfers (twin/sched_mst.c).
 */
#define SCHED_STAR_CHECK_TRANSFERS 1000

/*
 * mst's polish trades time for bytes only while the plan's rounds stay
 * this fraction under those of every task a star (twin/sched_mst.c): the
 * twin's mst/spff ratios agree with the emulation's to 0.015 on the
 * poster testbed's sweep.
 */
#define SCHED_POLISH_MARGIN 0.02

/*
 * How many of its plans mst's polish makes at once, each on a thread of
 * its own: 2 (the default) or 1 (one at a time). The plan, its polish's
 * figures and the predictors' work counted are the same either way (each
 * flip is judged in turn; a plan made ahead where an earlier flip is
 * then kept is made again). Set it before planning, not while a plan is
 * made.
 */
extern int sched_polish_lanes;

extern const struct sched_ops sched_spff, sched_mst, sched_kmb, sched_tm,
	sched_svi, sched_opt;

/* sched_fits - ops->fits, if it has one: 0 or -E2BIG with why set. */
int sched_fits(const struct sched_ops *ops, const struct scenario *sc,
	       char *why, size_t n);

/* sched_find - scheduler by name, or NULL. */
const struct sched_ops *sched_find(const char *name);

/* sched_index - its position in sched_list, or -1 for an unknown name. */
int sched_index(const char *name);

/* All schedulers, NULL-terminated, in the order reports list them. */
extern const struct sched_ops *const sched_list[];

/*
 * sched_plan - schedule every task of sc with ops. Returns a plan (blocked
 * tasks marked in it) or NULL with errno set on a resource failure.
 */
struct plan *sched_plan(const struct scenario *sc, const struct sched_ops *ops)
	__attribute__((warn_unused_result));

/*
 * sched_plan_keep - schedule sc's tasks with ops as the network changes:
 * a task that prev placed (matched by name) and whose lightpaths cross no
 * fibre down in sc keeps its placement hop by hop (the same lightpaths,
 * lit again where prev's net had them); every other task is placed by ops
 * after those, in order, and so is every task i with replan[i] (replan
 * may be NULL). sc has the same nodes and fibres as prev's scenario
 * (fibres may be down). moved (may be NULL) gets, per task of sc, whether
 * prev had placed it and it was placed anew. prev NULL is sched_plan. A
 * plan or NULL with errno set.
 */
struct plan *sched_plan_keep(const struct scenario *sc,
			     const struct sched_ops *ops,
			     const struct plan *prev, const bool *replan,
			     bool *moved)
	__attribute__((warn_unused_result));

#endif
