/* SPDX-License-Identifier: MIT */
/*
 * The lightpaths a timeline lights over all its epochs, and each epoch's
 * plan in their terms: what an emulation builds once, at the start (the
 * lightpaths an epoch does not light stay dark), so that it can follow
 * the timeline live — light and darken lightpaths, rewire ROADMs, swap
 * routes — without making or removing anything while the tasks run.
 *
 * Every epoch's plan here lists every task the timeline ever has (sc: the
 * scenario's, then arrivals), each with the same trees, over one list of
 * lightpaths: addressing_new() gives each the same addresses (access
 * links, lightpaths, transfers); only the routes differ. A task runs in an
 * epoch (runs) from the first in which it is placed until it leaves; in
 * the others it is blocked in the epoch's plan (no routes), with why. A
 * task that no path reaches in an epoch (a cut with nothing around it)
 * keeps the paths it had, over the cut, and waits for the repair, as it
 * would without re-scheduling.
 *
 * Two lightpaths of the set may share a wavelength on a fibre when no
 * epoch lights both (one went dark before the other lit): the wavelength
 * is one segment, which the ROADMs switch from one to the other.
 *
 * Background traffic is listed the same way: every epoch's plan has every
 * flow of the timeline (sc->bg, its traffic events in order), routed as
 * the timeline's epoch routes it over the set's lightpaths, and not
 * routed, with why, where it does not flow (before its start, after its
 * end, or with no lit path); each keeps its addresses throughout.
 *
 * A task that waits for ever (a cut never repaired leaves it no way
 * round) is lost from the epoch its wait began at (lost): a live run
 * fails it there, with lpset_lost_why, and the others go on.
 *
 * A task whose trees change from one epoch to the next while it runs
 * carries on as an incarnation of its own, a task of sc after all the
 * others (prev: the one it carries on from; base: the first of its line;
 * since: the epoch it begins at), with its own addresses: its workers keep
 * a connection per tree edge, so a live run ends the old ones at the
 * event and starts the new ones, with the global model as it was, from
 * the round that was in flight, once the epoch is live. Only one task of
 * a line runs in an epoch; in the others each is blocked, with why.
 */
#ifndef TWIN_LPSET_H
#define TWIN_LPSET_H

#include <stdbool.h>
#include <stddef.h>

#include "plan.h"
#include "timeline.h"

struct lpset {
	const struct timeline *tl;
	struct scenario *sc;	/* every task and flow ever (the rest
				 * borrowed from tl->sc) */
	struct net *net;	/* every lightpath some epoch lights: epoch
				 * 0's in its order, then each other as it
				 * first lights */
	int nepochs;
	struct plan **plan;	/* per epoch: its plan over net's
				 * lightpaths (tasks of sc, in order) */
	bool **lit;		/* [epoch][lightpath of net] */
	bool **runs;		/* [epoch][task of sc]: placed (or waiting),
				 * arrived and not left */
	bool **waits;		/* [epoch][task]: no path reaches it, it
				 * keeps the last it had */
	int **index;		/* [epoch][task of the timeline's epoch
				 * plan]: its index in sc */
	int *lost;		/* per task of sc: the epoch from which
				 * no path ever reaches it again, or -1 */
	int *base, *prev, *since;	/* per task of sc: its line (see the
					 * top); prev -1 for the first */
};

/*
 * lpset_new - the set of tl's epochs. 0 and *out; -ENOMEM (why says so).
 */
int lpset_new(const struct timeline *tl, struct lpset **out, char *why,
	      size_t len) __attribute__((warn_unused_result));
void lpset_free(struct lpset *s);

/*
 * lpset_lost_why - why task t of s's scenario is lost, into buf (the task,
 * and the event its wait began at): snprintf's count, or -1 if it is not.
 */
int lpset_lost_why(const struct lpset *s, int t, char *buf, size_t len);

/*
 * lpset_plan_without - epoch e's plan with the tasks absent[t] (per task of
 * s->sc) blocked ("its workers are not ready yet"), to be predicted as a
 * round in which they do not run yet; the rest (tasks, flows, lightpaths)
 * as the epoch's. plan_free it. NULL with errno.
 */
struct plan *lpset_plan_without(const struct lpset *s, int e,
				const bool *absent)
	__attribute__((warn_unused_result));

/*
 * lpset_follow - sc's timeline under policy (each epoch planned with ops,
 * predicted with predict) and the set of its lightpaths, for a run that
 * follows it live: 0 with *tl and *set; -errno when the timeline or the
 * set cannot be made (why says so). Nothing is kept on failure.
 */
int lpset_follow(const struct scenario *sc, const struct sched_ops *ops,
		 enum resched policy, int (*predict)(struct plan *p),
		 struct timeline **tl, struct lpset **set, char *why,
		 size_t len) __attribute__((warn_unused_result));

/*
 * The plans a run plays: p alone, or with a set followed live (p its
 * first epoch's) every epoch's; the same tasks and flows in each.
 */
static inline int lpset_nplans(const struct lpset *s)
{
	return s ? s->nepochs : 1;
}

static inline const struct plan *lpset_plan_or(const struct plan *p,
						const struct lpset *s, int k)
{
	return s ? s->plan[k] : p;
}

#endif
