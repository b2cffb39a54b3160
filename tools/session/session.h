/* SPDX-License-Identifier: MIT */
/*
 * One session: plan -> up -> workers -> rounds -> results -> down, for
 * one scenario. `run` is one session; `experiment` runs one per point, in
 * its own process, and gets each run's id back.
 *
 * The caller owns the prefix (lab_lock) and the stop signals; a session
 * never prints to stdout or stderr itself, only to the FILE it is given.
 */
#ifndef TOOLS_SESSION_H
#define TOOLS_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "twin/timeline.h"
#include "tools/twinlab.h"

struct sched_ops;

/*
 * The longest, in seconds of wall time, the tasks over a cut fibre may be
 * made to wait for its repair (the cut's scenario seconds times the
 * dilation): a round's deadline is stretched by the longest outage, so a
 * task waits for the repair instead of timing out; past this, the run is
 * refused before anything is built.
 */
#define SESSION_OUTAGE_WAIT_MAX_S 1800

struct session_opts {
	const char *scenario;		/* the scenario file */
	const char *events;		/* its events from this file, or NULL */
	const struct sched_ops *ops;
	predict_fn predict;
	unsigned rounds;		/* 0: the tasks' own (at least 1) */
	const char *db;			/* results database */
	const char *prefix;		/* the caller holds its lock */
	double dilation;		/* N; with auto_n, where auto starts */
	bool auto_n;			/* raise N until round 1 is faithful */
	bool keep;			/* leave the emulation up */
	int hosts;			/* > 1: split over hosts, built here */
	char *const *via;		/* fleet_opts.via: workers started by
					 * a command; NULL: forked */
	/*
	 * On a deployment of parts (an exported topology, each node built
	 * by its own `up --node`, on other hosts): nothing is built or
	 * removed here; via and agents_via are needed, the dilation is the
	 * deployment's, and {prefix} in their commands is each node's
	 * part's prefix (lab_part_prefix).
	 */
	bool deployed;
	char *const *agents_via;	/* the nodes' counters read by agents
					 * started by this command (`twinlab
					 * agent`); NULL: in the namespaces */
	/* re-place tasks as the scenario's cuts and repairs change the
	 * network, by policy `resched`, live (twin/lpset.h); else cuts are
	 * played and nothing moves */
	bool follow;
	enum resched resched;
	/* with follow: a cut or repair from the live view is taken into the
	 * story at its time and the run planned again and played from the
	 * start (a run's own; a sweep's points keep their story) */
	bool page_replans;
	FILE *out;			/* progress, summary, errors */
	struct view *view;		/* shows each attempt live, or NULL */
	/* set (by a signal handler) to abandon the round and tear down */
	const volatile sig_atomic_t *stop;
};

/* What a session stored. */
struct session_result {
	int64_t run;			/* the run's id; 0 if none was stored */
	double dilation;		/* the stored run's */
	const char *status;		/* ok, failed, partial, aborted */
	char verdict[256];		/* fidelity verdict of the stored run */
};

/*
 * session_run - run the scenario as o says and store it. Returns 0 (the
 * run is ok), 1 (it failed, is partial or was aborted; or the emulation
 * could not be built) or EXIT_USAGE (a scenario that cannot be loaded,
 * scheduled or fitted into this machine; nothing was made or written).
 */
int session_run(const struct session_opts *o, struct session_result *res);

#endif
