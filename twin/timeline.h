/* SPDX-License-Identifier: MIT */
/*
 * A timeline: the twin's view of a scenario as its events happen. Epoch 0
 * is the network at t = 0; each cut, repair, arrival or departure starts
 * a new epoch with the network as it is then (cut fibres down, the tasks
 * present then) and a plan for it, made by a re-scheduling policy:
 *
 *   none  only what must move moves: tasks whose lightpaths cross a cut
 *         fibre, and arriving tasks, are placed on what the others leave;
 *         every other task keeps its lightpaths and routes;
 *   full  everything is scheduled again from scratch;
 *   auto  as none, and besides a task moves when scheduling from scratch
 *         would shorten its round by more, over the rounds it has left,
 *         than moving costs: its round in flight (lost) and the set-up
 *         of each lightpath it would need that is not lit (the
 *         scenario's reconfig_ms).
 *
 * Background traffic changes no plan (it is not the schedulers' to
 * place) but shares the links with the tasks: its start and its end each
 * begin an epoch whose scenario lists the traffic flowing (struct
 * scn_bg), which the prediction includes (predict_round).
 */
#ifndef TWIN_TIMELINE_H
#define TWIN_TIMELINE_H

#include <stdbool.h>

#include "plan.h"
#include "scenario.h"
#include "sched.h"

enum resched { RESCHED_NONE, RESCHED_FULL, RESCHED_AUTO };

/*
 * The most work (predict_work) a timeline's plans may take, epochs
 * together: each epoch schedules and predicts its tasks and flows again
 * (full and auto from scratch, with mst's polish), so a file of a few
 * hundred events can ask for hours. Past it timeline_new fails with
 * ETIME at the epoch it reached (predict_strerror says what to do).
 * About 13 s on this project's 2-core test machine, where the shipped
 * NSFNET dynamics take half of it under auto (6 s). A variable so that
 * tests can lower it.
 */
#define TIMELINE_WORK_MAX 1000000000
extern unsigned long long timeline_work_max;

struct epoch {
	double at_s;		/* when it starts, scenario seconds */
	int event;		/* the event that started it, -1 at t = 0 */
	bool ends;		/* started by the end of event's traffic */
	struct scenario *sc;	/* the network then (nodes shared with the
				 * timeline's scenario) */
	struct plan *plan;	/* scheduled and predicted */
	bool *moved;		/* per task of sc: placed before, placed anew */
	int nmoved;		/* tasks that were placed and moved */
	int lit, unlit;		/* lightpaths lit and gone since the last */
};

struct timeline {
	const struct scenario *sc;
	enum resched policy;
	int n;
	struct epoch *e;
};

/* resched_name / resched_find: "none", "full", "auto"; find: -1 if unknown. */
const char *resched_name(enum resched r);
int resched_find(const char *name);

/* What began epoch e: "start", the event's kind, or "end" (of traffic). */
const char *epoch_name(const struct timeline *tl, const struct epoch *e);

/*
 * timeline_new - the epochs of sc under policy, each planned with ops and
 * predicted with predict. NULL and errno on failure (ENOMEM, ETIME past
 * timeline_work_max, or what scheduling or prediction returned).
 */
struct timeline *timeline_new(const struct scenario *sc,
			      const struct sched_ops *ops,
			      enum resched policy,
			      int (*predict)(struct plan *p))
	__attribute__((warn_unused_result));
void timeline_free(struct timeline *tl);

/*
 * timeline_setup_s - how long the moves of epoch e take to set up: each
 * moved task waits reconfig_s for every lightpath it needs that the epoch
 * before had not lit, the tasks side by side; the longest of those (0 for
 * epoch 0 or when nothing moves).
 */
double timeline_setup_s(const struct timeline *tl, int e);

/*
 * timeline_live_s - when epoch e's lightpaths and routes are in force:
 * its event's time plus its set-up, and never before the epoch before it
 * (an orchestrator brings its network states in one after another; 0 for
 * epoch 0). What the event itself does happens at its time: a fibre goes
 * dark, a task that leaves ends, traffic flows; the tasks an epoch moves
 * resume on their new paths when it is in force.
 */
double timeline_live_s(const struct timeline *tl, int e);

/*
 * What a timeline comes to for its tasks, in the twin's terms: each task
 * runs its rounds back to back from its start (0 or its arrival), each
 * round as long as its epoch's plan predicts. A task re-placed while it
 * runs loses its round in flight (the part of it done) and waits until
 * its epoch is in force (timeline_live_s: the set-up of the lightpaths
 * the epoch needs that were not lit, reconfig_ms each, after the epochs
 * before it), whatever epochs begin meanwhile; a blocked task waits; a
 * task that leaves stops. Compares policies on the
 * same events.
 */
struct tl_task_outcome {
	const char *name;	/* the timeline's scenario's */
	double start_s, end_s;	/* end: its last round's; inf: never */
	unsigned rounds, done;	/* asked for; completed */
	int moves;		/* re-placed while running */
	double interrupted_s;	/* lost rounds in flight + waits */
	double bytes_links;	/* over its completed rounds */
};

struct tl_outcome {
	int ntasks;
	struct tl_task_outcome *t;
	int finished;		/* tasks that completed every round */
	long rounds_done;
	double mean_completion_s;	/* end - start, over finished ones */
	int moves;
	double interrupted_s, bytes_links;
};

/* timeline_outcome - *out for tl (release it). 0 or -ENOMEM. */
int timeline_outcome(const struct timeline *tl, struct tl_outcome *out)
	__attribute__((warn_unused_result));
void tl_outcome_release(struct tl_outcome *o);

#endif
