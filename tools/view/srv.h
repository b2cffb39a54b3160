/* SPDX-License-Identifier: MIT */
/*
 * The live view's server: started once, it shows whatever emulation it
 * is given (view_srv_show) until stopped — 'twinlab view' gives it the
 * one that is up, a run (run --view) its own at each attempt, a sweep
 * (experiment --view) each point's in turn, on the same address.
 */
#ifndef TOOLS_VIEW_SRV_H
#define TOOLS_VIEW_SRV_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>

#include "emu/fleet.h"
#include "twin/addr.h"
#include "twin/plan.h"

#define VIEW_PORT 7880

struct view_srv_opts {
	struct sockaddr_in sa; /* where to listen */
	bool any_port;	       /* sa's port in use: any free one */
	double interval;       /* seconds between load events */
	bool json;	       /* say where as JSON */
	FILE *out;	       /* where to say it */
	bool owner;	       /* this process owns the prefixes it shows
				* (a run's view): the page's changes take
				* no lock of their own */
};

struct view;

/*
 * view_srv_start - listen, read the page's files, say where (the address
 * with its token) on o->out, and sample what is shown every interval.
 * 0, or -errno after saying why.
 */
int view_srv_start(const struct view_srv_opts *o, struct view **out);

/*
 * view_srv_show - show plan p (addressed by a) of the emulation up under
 * prefix at dilation, until the next call; NULL prefix: nothing. p, a
 * and the scenario stay the caller's and must outlive what is shown: call
 * it with NULL before freeing them. A NULL view does nothing. 0 or -errno.
 */
int view_srv_show(struct view *v, const char *prefix, const struct plan *p,
		  const struct addressing *a, double dilation);

/*
 * view_srv_plan - p's trees shown from now on in place of the plan's: an
 * epoch of a followed timeline (twin/lpset.h), over the same lightpaths
 * and addresses. What is shown stays (its counters, the run's clock, the
 * page's changes); the page draws the trees again. Nothing when nothing
 * is shown, p is, or p is over other lightpaths. p must outlive what is
 * shown, as view_srv_show's.
 */
void view_srv_plan(struct view *v, const struct plan *p);

/*
 * What a run does with a cut or repair from the page (view_srv_replan):
 * fibre, cut or not, at scenario time at_s; dry asks whether it would
 * take it, !dry says it was made. 0, or refused with why (the page gets
 * it, nothing is changed).
 */
typedef int (*view_replan_fn)(void *ctx, int fibre, bool cut, double at_s,
			      bool dry, char *why, size_t len);

/*
 * view_srv_replan - until nothing is shown, the page's cuts and repairs
 * are asked of fn first (dry), then made in the emulation and told to fn
 * (not dry): they are the run's story from then on, not the teacher's
 * (view_srv_changes does not count them). Refused before the run's
 * clock starts (view_srv_clock). NULL fn: the teacher's again.
 */
void view_srv_replan(struct view *v, view_replan_fn fn, void *ctx);

/*
 * view_srv_changes - how many cuts, repairs and flows the page has made
 * (the teacher's, which no plan or prediction knows of), and whether one
 * is in force now (a fibre cut from the page, its traffic flowing): a
 * run does not judge or compare the rounds they touch. NULL view: 0.
 */
unsigned view_srv_changes(struct view *v, bool *in_force);

/* view_srv_note - a line the page shows (a run's last round). */
void view_srv_note(struct view *v, const char *line);

/*
 * view_srv_clock - a run's rounds started at t0_ns (CLOCK_MONOTONIC) at
 * dilation: the page's timeline marks the scenario's events as their
 * scenario time comes (as the run plays them).
 */
void view_srv_clock(struct view *v, uint64_t t0_ns, double dilation);

/*
 * view_srv_tasks - round `round` of every task that ran in it (ran[t]):
 * measured and predicted, with its phases, for the page's table.
 */
void view_srv_tasks(struct view *v, const struct plan *p, unsigned round,
		    const struct fleet_task_round *rr, const bool *ran);

/* view_srv_stop - every stream ended, the server stopped and freed. */
void view_srv_stop(struct view *v);

#endif
