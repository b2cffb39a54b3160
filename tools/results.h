/* SPDX-License-Identifier: MIT */
/*
 * The results database (SQLite). One run is the scenario's text, the plan
 * (as JSON), the twin's predictions, and per round: every task's measured
 * phases, accuracy, correctness check and CPU time, every transfer's start
 * and end, and every link's byte counters — so figures can be recomputed
 * from the database alone. Each round is one transaction.
 */
#ifndef TOOLS_RESULTS_H
#define TOOLS_RESULTS_H

#include <stdbool.h>
#include <stdint.h>

#include "emu/fleet.h"
#include "emu/monitor.h"
#include "twin/plan.h"

struct results;

/* results_open - open (creating the schema) the database at path. */
struct results *results_open(const char *path, char *err, size_t len);
void results_close(struct results *r);

/* A new run; stores scenario text, plan JSON, tasks and predictions. */
int results_begin_run(struct results *r, const struct plan *p,
		      const char *scenario_path, const char *plan_json,
		      const char *plan_dot, const char *prefix, unsigned rounds,
		      char *err, size_t len);
int64_t results_run_id(const struct results *r);

struct link_sample {
	char name[64];		/* as in the plan JSON: "lp3:R1>R2", "s1>r1" */
	double pred_bytes;	/* predicted per round, emulated bytes */
	uint64_t bytes;		/* measured this round */
};

/* One round of every task, and link counters, in one transaction. */
int results_round(struct results *r, const struct plan *p, unsigned round,
		  const struct fleet_task_round *res,
		  const struct link_sample *links, int nlinks, char *err,
		  size_t len);

/* The fidelity of one round: what the monitor saw and its verdict
 * ("faithful" or "degraded: ..."). */
int results_fidelity(struct results *r, unsigned round,
		     const struct mon_round *m, const char *verdict);

/* The run's dilation and its verdict over all rounds. */
int results_verdict(struct results *r, double dilation, const char *verdict);

/* Mark a task failed (with the reason) and the run's end status. */
int results_task_failed(struct results *r, int task, const char *why);
/*
 * results_end_run - the run's status: ok, failed (a task failed), partial
 * (not every round was stored), aborted (stopped before its end), or
 * recalibrated (an attempt --dilation auto abandoned). A run left
 * 'running' by a process that is gone is marked aborted by the next
 * results_open().
 */
int results_end_run(struct results *r, const char *status);

/* Whether the process that began a run (pid, start time) still runs. */
bool results_owner_alive(int64_t pid, int64_t start);

/*
 * results_picture - a picture of the current run's plan, as Graphviz DOT:
 * one per task (name: the task's), drawn from the plan that ran. 0 or
 * -EIO.
 */
int results_picture(struct results *r, const char *name, const char *dot);

/*
 * results_point - record run `run` as a point of experiment `name` (base
 * topology, scheduler, local models, seed). 0 or -EIO.
 */
int results_point(struct results *r, int64_t run, const char *name,
		  const char *base, const char *sched, long nlocals,
		  long seed);

#endif
