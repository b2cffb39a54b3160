/* SPDX-License-Identifier: MIT */
/*
 * An experiment file: a sweep over numbers of local models, seeds and
 * schedulers on one base topology (tools/README.md, "Experiments and reports"). Read with the
 * scenario's machinery: bounded, strict numbers, errors at file:line:col.
 *
 *   name: poster-fig3                 names files: [A-Za-z0-9_.-]
 *   base: ../poster-testbed.yaml      relative to the experiment file
 *   schedulers: [spff, mst]
 *   locals: [3, 6, 9, 12, 15]         local models per task
 *   tasks: 30
 *   seeds: [1, 2, 3]
 *   rounds: 2                         default 1
 *   parameters: 500000                per task, as in a scenario
 *   bytes_per_parameter: 4            default 4
 *   work_core_s: 0.0005
 *   agg_core_s: 0.0001                default 0 (aggregation instant)
 *
 * or, with `kind: blocking`, offered load in the twin alone: `loads`
 * (numbers of tasks) instead of `tasks`, each point scheduled by each
 * scheduler and its blocked tasks and wavelength use counted; rounds,
 * parameters and work_core_s are optional there.
 *
 * or, with `kind: gap`, the optimality gap in the twin alone: one task per
 * (locals, seed) on the empty network, its tree weight by each scheduler
 * against opt's; `base: random` with `roadms: N` draws the network with
 * the seed too (experiment_random_base).
 *
 * or, with `kind: dynamics`, the base's own tasks through a file of
 * events (`events`, relative to the experiment file), run live once per
 * scheduler and re-scheduling policy (`policies`, default none, full,
 * auto): no locals, seeds, tasks or task fields.
 */
#ifndef TWIN_EXPERIMENT_H
#define TWIN_EXPERIMENT_H

#include "scenario.h"
#include "sched.h"
#include "timeline.h"

#define EXP_LIST_MAX 32		/* entries of a list */
#define EXP_TASKS_MAX 10000	/* tasks per point */
#define EXP_RANDOM_MAX 128	/* ROADMs of a random base */

enum exp_kind { EXP_EMULATION, EXP_BLOCKING, EXP_GAP, EXP_DYNAMICS };

struct experiment {
	enum exp_kind kind;
	char name[SCN_NAME_MAX + 1];
	char base[512];			/* resolved against the file's dir */
	char sched[EXP_LIST_MAX][16];
	int nsched;
	long locals[EXP_LIST_MAX], seeds[EXP_LIST_MAX], loads[EXP_LIST_MAX];
	int nlocals, nseeds, nloads;
	long tasks, rounds, parameters, bpp;
	double work;
	double agg;		/* agg_core_s of every task (0: instant) */
	long random_roadms;		/* base: random (gap), else 0 */
	char events[512];		/* dynamics: resolved as base */
	enum resched policy[3];		/* dynamics: in the file's order */
	int npolicies;
};

/*
 * experiment_parse - the experiment in buf (its file's path: name). 0, or
 * -EINVAL with err filled ("name:line:col: msg").
 */
int experiment_parse(const char *buf, size_t len, const char *name,
		     struct experiment *x, struct scn_error *err);

/* experiment_load - experiment_parse of a file read as scenarios are. */
int experiment_load(const char *path, struct experiment *x,
		    struct scn_error *err);

/*
 * experiment_point - the point scenario: base's network (shared, not
 * copied) with its tasks replaced by ntasks tasks of one global and nl
 * local models each on servers drawn with seed (a partial Fisher-Yates
 * shuffle per task; the first n tasks are the same whatever ntasks), and
 * x's task fields. Free with experiment_point_release. 0 or -ENOMEM,
 * -EINVAL (fewer than nl + 1 servers).
 */
int experiment_point(const struct experiment *x, const struct scenario *base,
		     long nl, long seed, long ntasks, struct scenario *pt)
	__attribute__((warn_unused_result));
void experiment_point_release(struct scenario *pt);

/* What one scheduler makes of a point under offered load. */
struct exp_load {
	int tasks, blocked;
	long wl_used, wl_total;		/* wavelength-links lit, on all fibres */
	double bytes_links;
};

/* experiment_load_point - schedule pt with ops and count. 0 or -errno. */
int experiment_load_point(const struct scenario *pt,
			  const struct sched_ops *ops, struct exp_load *out)
	__attribute__((warn_unused_result));

/*
 * experiment_random_base - a random network of nroadm (4 to
 * EXP_RANDOM_MAX) ROADMs drawn with seed: a random tree plus about half as
 * many chords again, 50-1000 km, 16 wavelengths; a router and a server on
 * every ROADM. 0 and *out (scenario_free it), or -ENOMEM, -EINVAL.
 */
int experiment_random_base(long nroadm, long seed, struct scenario **out)
	__attribute__((warn_unused_result));

/* What one scheduler makes of a gap instance's only task. */
struct exp_gap {
	bool blocked;
	double weight;			/* tree_weight, NAN if blocked */
};

/* experiment_gap_point - schedule pt's one task with ops. 0 or -errno. */
int experiment_gap_point(const struct scenario *pt,
			 const struct sched_ops *ops, struct exp_gap *out)
	__attribute__((warn_unused_result));

#endif
