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

/*
 * A new run; stores scenario text (scenario_text, or when NULL the file at
 * scenario_path), plan JSON, tasks and predictions.
 */
int results_begin_run(struct results *r, const struct plan *p,
		      const char *scenario_path, const char *scenario_text,
		      const char *plan_json, const char *plan_dot,
		      const char *prefix, unsigned rounds, char *err,
		      size_t len);
int64_t results_run_id(const struct results *r);

/*
 * Tasks are stored by their index in the run's first plan; a task of the
 * plan that has the name of an earlier one carries it on (over new trees,
 * twin/lpset.h) and is stored as it: one row in tasks, its rounds under
 * it, and whatever is said of it (placed, failed) said of that row.
 */

/*
 * results_task_placed - task t, blocked in the run's first plan, is placed
 * by q later in the run (it arrives, or a departure frees its way): its
 * row gets q's predictions instead. 0 or -EIO.
 */
int results_task_placed(struct results *r, const struct plan *q, int t);

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

/*
 * results_round_begin, results_round_end - what is stored of a round
 * between them (results_round, results_fidelity, results_round_time) is
 * kept whole (keep, and it could be written) or not at all. 0 or -EIO
 * (keep asked, nothing kept).
 */
int results_round_begin(struct results *r);
int results_round_end(struct results *r, bool keep);

/* The fidelity of one round: what the monitor saw, its verdict
 * ("faithful" or "degraded: ...") and whether the live view touched it
 * (then it is kept but not averaged by readers). */
int results_fidelity(struct results *r, unsigned round,
		     const struct mon_round *m, const char *verdict,
		     bool touched);

/* When round ran: from start_s to end_s of scenario time (the first
 * round starts at 0). */
int results_round_time(struct results *r, unsigned round, double start_s,
		       double end_s);

/* Something that happened to the network at at_s (scenario time): its
 * kind ("traffic", "traffic end", ...), what, the tasks it touched (names,
 * comma-separated; "" none) and the interruption it caused them. */
int results_event(struct results *r, double at_s, const char *kind,
		  const char *detail, const char *tasks,
		  double interruption_s);
/* results_event of a change a run answered by re-placing the tasks (moved,
 * by name) by policy: live_s and first_round_s as results_event_row. */
int results_event_moved(struct results *r, double at_s, const char *kind,
			const char *detail, const char *tasks,
			double interruption_s, const char *policy,
			double live_s, double first_round_s);

/* One reading of a link's load: its rate over the interval that ends at
 * t_s, in scenario Gbit/s (wire bytes), beside its capacity. */
struct link_util {
	double t_s;
	char link[64];		/* as struct link_sample */
	double gbps, cap_gbps;
};

/* Readings u[0..n), in one transaction. */
int results_link_samples(struct results *r, const struct link_util *u,
			 size_t n);

/* One point of a blocking experiment (no run): one scheduler's plan of
 * `load` tasks of nlocals local models drawn with seed on base. */
struct results_blocking_row {
	const char *experiment, *base, *scheduler;
	int64_t nlocals, seed, load, blocked, wl_used, wl_total;
	double bytes_links;
};

int results_blocking(struct results *r, const struct results_blocking_row *b);

/* One instance of a gap experiment (no run): one scheduler's tree weight
 * for the instance's only task, and opt's; NAN where blocked. */
struct results_gap_row {
	const char *experiment, *base, *scheduler;
	int64_t nlocals, seed;
	bool blocked;
	double weight, opt_weight, seconds, opt_seconds;
};

int results_gap(struct results *r, const struct results_gap_row *g);

/* The run's dilation and its verdict over all rounds. */
int results_verdict(struct results *r, double dilation, const char *verdict);

/* Mark a task failed (with the reason) and the run's end status. */
int results_task_failed(struct results *r, int task, const char *why);
/*
 * results_end_run - the run's status: ok, failed (a task failed), partial
 * (not every round was stored), aborted (stopped before its end),
 * recalibrated (an attempt --dilation auto abandoned), or replanned (an
 * attempt ended by a cut or repair from the live view, the run played
 * again with it in its story). A run left
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

/* ---- reading, for `twinlab report` ------------------------------------ */

struct results_reader;

/*
 * results_read_open - open the database at path read-only (it is never
 * created or changed) and check that it is a results database. NULL with
 * the reason in err.
 */
struct results_reader *results_read_open(const char *path, char *err,
					  size_t len);
void results_read_close(struct results_reader *rd);

/* Phases of a round, in the order of the arrays below. */
enum { RES_ROUND, RES_BCAST, RES_COMPUTE, RES_UPLOAD, RES_NPHASES };

/* A run as stored; strings are valid during the callback only. */
struct results_run_row {
	int64_t id;
	const char *scenario, *scheduler, *status, *plan_json;
	const char *experiment;		/* "" unless a point */
	const char *verdict;		/* "" when not judged */
	const char *predictor;		/* "fluid" when not recorded */
	double scale;			/* 1 when not recorded */
	double pred_bytes_links, wavelength_links, dilation; /* NAN: none */
	int rounds;
	bool point;
	int nlocals;
	int64_t seed;
};

/* A task of a run with its rounds summed up (means over them). */
struct results_task_row {
	int64_t run;
	int task, nlocals;
	const char *name, *why;
	bool blocked, failed;
	double pred[RES_NPHASES];	/* s; NAN when none */
	double meas[RES_NPHASES];	/* s, mean over its rounds not
					 * touched from the live view; NAN */
	int nrounds, nheld;		/* rounds stored, checks that held */
	int ntouched;			/* rounds touched from the live view
					 * (not in meas) */
};

struct results_link_row {
	int64_t run;
	int round;
	const char *link;		/* "lp3:R1>R2", "s1>r1" */
	double bytes;
};

struct results_check_row {
	int64_t run;
	int task, round;
	double err, tol;
};

/*
 * Each reader calls fn for every row, in order, until fn returns nonzero
 * (which it returns); 0 when all were read, -EIO with err set when the
 * database could not be read. Runs: the complete ones (status ok or
 * failed) by id. Tasks: by run and task. Links: by run and round. Checks:
 * the first `limit` task-rounds whose correctness check failed.
 */
int results_read_runs(struct results_reader *rd,
		      int (*fn)(void *ctx, const struct results_run_row *row),
		      void *ctx, char *err, size_t len);
int results_read_tasks(struct results_reader *rd,
		       int (*fn)(void *ctx, const struct results_task_row *row),
		       void *ctx, char *err, size_t len);
int results_read_links(struct results_reader *rd,
		       int (*fn)(void *ctx, const struct results_link_row *row),
		       void *ctx, char *err, size_t len);
int results_read_failed_checks(struct results_reader *rd, int limit,
			       int (*fn)(void *ctx,
					 const struct results_check_row *row),
			       void *ctx, char *err, size_t len);

/*
 * results_read_one - run id whatever its status, then its tasks: 0,
 * -ENOENT (no such run), fn's nonzero, or -EIO with err set.
 */
int results_read_one(struct results_reader *rd, int64_t id,
		     int (*run_fn)(void *ctx, const struct results_run_row *row),
		     int (*task_fn)(void *ctx,
				    const struct results_task_row *row),
		     void *ctx, char *err, size_t len);

/*
 * results_read_left_out - the runs that are not results: *nrecal attempts
 * abandoned by --dilation auto, and *nleft others (aborted, partial,
 * running), described by status with their ids in buf. 0 or -EIO.
 */
int results_read_left_out(struct results_reader *rd, int *nrecal, int *nleft,
			  char *buf, size_t buflen, char *err, size_t len);

/* The orchestrator's view of a run (older databases have none: no rows). */
struct results_event_row {
	int64_t run;
	double at_s;
	const char *kind, *detail, *tasks;
	double interruption_s;
	/* a cut a run answered by re-placing the tasks over it: the policy
	 * ("" otherwise), when the moves were live and when the first round
	 * on the new paths ended (scenario s; NAN: not) */
	const char *policy;
	double live_s, first_round_s;
};

struct results_when_row {
	int task, round;
	const char *name;
	double start_s, round_s;	/* when it started, how long it took */
	double pred_s;			/* the round's prediction; NAN */
	double pred_bytes_links;	/* the twin's, as placed then; NAN */
};

struct results_load_row {
	double t_s;
	const char *link;
	double gbps, cap_gbps;
};

/* Every event, by run and time. */
int results_read_events(struct results_reader *rd,
			int (*fn)(void *ctx,
				  const struct results_event_row *row),
			void *ctx, char *err, size_t len);
/* Run id's task-rounds with when they started, by task and round. */
int results_read_when(struct results_reader *rd, int64_t id,
		      int (*fn)(void *ctx, const struct results_when_row *row),
		      void *ctx, char *err, size_t len);
/* Run id's link readings, by link and time. */
int results_read_load(struct results_reader *rd, int64_t id,
		      int (*fn)(void *ctx, const struct results_load_row *row),
		      void *ctx, char *err, size_t len);

/* Every blocking point, by experiment, local models, scheduler, load. */
int results_read_blocking(struct results_reader *rd,
			  int (*fn)(void *ctx,
				    const struct results_blocking_row *row),
			  void *ctx, char *err, size_t len);

/* Every gap instance, by experiment, scheduler, local models, seed. */
int results_read_gap(struct results_reader *rd,
		     int (*fn)(void *ctx, const struct results_gap_row *row),
		     void *ctx, char *err, size_t len);

/*
 * results_read_accuracy - the held-out accuracy of each task of run id
 * after each round, by task and round (NAN where not recorded).
 */
int results_read_accuracy(struct results_reader *rd, int64_t id,
			  int (*fn)(void *ctx, int task, int round,
				    double accuracy),
			  void *ctx, char *err, size_t len);

/* The plan's DOT text stored with run id (malloc'd), or NULL. */
char *results_read_plan_dot(struct results_reader *rd, int64_t id);

/* Each task's picture stored with run id, in the order stored. */
int results_read_pictures(struct results_reader *rd, int64_t id,
			  int (*fn)(void *ctx, const char *name,
				    const char *dot),
			  void *ctx);

#endif
