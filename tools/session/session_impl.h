/* SPDX-License-Identifier: MIT */
/*
 * What session.c (an attempt's phases) and rounds.c (its rounds) share:
 * a run's context, an attempt's state and one round's.
 */
#ifndef TOOLS_SESSION_IMPL_H
#define TOOLS_SESSION_IMPL_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <sys/types.h>

#include "emu/fleet.h"
#include "emu/lab.h"
#include "emu/agent.h"
#include "emu/monitor.h"
#include "emu/traffic.h"
#include "tools/results/results.h"
#include "tools/session/counters.h"
#include "tools/session/linkload.h"
#include "tools/session/play.h"
#include "tools/session/session.h"
#include "tools/view/srv.h"
#include "twin/addr.h"
#include "twin/lpset.h"
#include "twin/predict.h"

/* Everything one attempt at one dilation needs and leaves behind. */
struct run_ctx {
	const char *scenario_path, *db;
	FILE *out;
	const volatile sig_atomic_t *stop;
	const struct sched_ops *ops;
	struct lab_opts lo;
	struct fleet_opts fo;
	bool keep, auto_n;
	struct view *view; /* the live view, or NULL */
	char *const *agents_via;	/* session_opts.agents_via */
	bool deployed;			/* session_opts.deployed */
	predict_fn predict;
	char *scenario_text;	/* as run, when not the file's (--events) */
	struct plan *p;
	struct timeline *tl;	/* followed live (session_opts.follow) */
	struct lpset *set;	/* its lightpaths; p is set->plan[0] */
	struct addressing *a;
	struct results *res;
	char *json_text;
	/* results of the attempt */
	uint64_t min_segments;	/* shortest message of a placed task */
	bool built, retry;
	int late_retries;	/* whole runs auto abandoned after round 1 */
	bool same_rerun;	/* run again at the same N for what came
				 * now and then (monitor_passing): once */
	double suggest;
	char verdict[256];
	const char *status;
	/*
	 * A cut or repair from the live view in a run that follows its
	 * story: taken into sc's events, and the run planned again
	 * (ATTEMPT_REPLAN). The view's thread writes page and sets replan.
	 */
	struct scenario *sc;
	bool follow;
	atomic_bool replan;
	struct {
		int fibre;
		bool cut;
		double at_s;
	} page;
	int replans;
};

/* session_say - an error or warning, "twinlab: <message>", where x writes. */
void session_say(const struct run_ctx *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * session_slot_at_end - whether task t of a followed set is the last of
 * its line (no later task carries it on over new trees), or the run
 * follows no set.
 */
bool session_slot_at_end(const struct lpset *set, int t);

enum { ATTEMPT_DONE = 0, ATTEMPT_FAILED = 1, ATTEMPT_RETRY = 3,
       ATTEMPT_REPLAN = 4 };

/* How often a run is planned again for the page's cuts and repairs. */
#define SESSION_REPLANS_MAX 8

/* host time past a round's last packet's due arrival before its links'
 * bytes are read: for the delay line's lateness and the last hop */
#define SESSION_DRAIN_MARGIN_NS 2000000u

/*
 * One attempt at x->lo.dilation, its state shared by the phases below:
 * begin (build or use the emulation, open the run's record), prepare
 * (counters, the monitor, the workers' options), start (the workers and
 * the traffic), each round (wait, open, predict, measure, tally, judge),
 * finish (summaries, verdict, status) and release.
 */
struct attempt {
	struct run_ctx *x;
	const struct plan *p;
	double n; /* the dilation */
	struct fleet *f;
	struct lab *lab;
	struct monitor *mon;
	struct agents *ag;	/* the nodes' agents (agents_via), or NULL */
	struct agents_mon am;	/* the monitor's reader over them */
	bool run_open;		/* its row in the results begun, not ended */
	unsigned page_rounds;	/* rounds touched from the live view */
	unsigned page_seen;	/* the view's changes when the last round
				 * was measured */
	int *cmp;		/* per task: rounds compared with the twin */
	struct dl_live *dlc;
	struct counter *ctr;
	struct nscache *nsc;
	struct fleet_task_round *rr;
	struct link_sample *ls;
	double (*meas)[4], (*pm)[4], *acc0, *acc1;
	struct tg *tg;
	struct linkload *ll;
	struct play *pl;
	double *quiet, *interr, *first;
	double *frac;		/* a round's tasks' lateness over their
				 * rounds (monitor.h), to take the median */
	uint64_t t0;
	int said, nmo, shown;
	bool unstored_events;
	struct scn_moment *mo; /* the scenario's, in time order */
	double t_end;
	bool *busy;
	double link_meas, link_pred;
	double dl_late, dl_max, rq_sum;
	double stall_s, wall_s, stall_max, stall_over;	/* emu/awake.h */
	uint64_t drain_ns;	/* a round's last packets at most, host ns */
	uint64_t dl_pk, rq_max;
	unsigned rounds_run, degraded, unstored, compared;
	bool not_passing;	/* a round degraded for more than what
				 * comes now and then */
	pid_t sup, line0;
	int watch_fd;
	char watch_what[200];
	int *done, nctr, nnsc, rc, failed;
	bool *checks, *ran;    /* ran: its workers started */
	char *told;	       /* said: its wait to start (1), lost (2) */
	atomic_int *leave;     /* per task: left mid-round (play) */
	bool *joined, *absent; /* per task: fleet_admit's; starting,
				* not in the round */
	bool *carried;	       /* per task: a later one carries it on */
	struct plan *own;      /* the epoch's without them */
	char (*lost_why)[256]; /* per task: why it is lost */
	char err[512], first_why[240];
	double outage, used, ofrom, oto; /* longest_outage's */
	int ofib;
};

/* One round's own state. */
struct att_round {
	int ok, nt, live, ein;
	double sum, psum, acc, sug, t_r;
	const struct plan *pr; /* predicts the round */
	uint64_t now;
	struct mon_sample s0, s1;
	struct mon_round mr;
	char why[200], verdict[320];
	bool fine, whole;
	bool page;		/* touched from the live view */
	bool page_in0;		/* one in force before it */
};

#define ATT_LOCALS                                                             \
	struct run_ctx *x = a->x;                                              \
	const struct plan *p = a->p;                                           \
	double n = a->n;                                                       \
	(void)x;                                                               \
	(void)p;                                                               \
	(void)n

/* session_rounds - an attempt's rounds; 0, or -1 to end the attempt
 * (a->rc says how). */
int session_rounds(struct attempt *a);

#endif
