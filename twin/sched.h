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

#include "plan.h"
#include "scenario.h"

struct sched;

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
};

extern const struct sched_ops sched_spff, sched_mst;

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

#endif
