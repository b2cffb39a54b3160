/* SPDX-License-Identifier: MIT */
/*
 * The orchestrator's view of the links: a thread that reads every link
 * the run uses (the tasks' and the background traffic's) at a fixed step
 * of scenario time and keeps each link's rate over the step, in scenario
 * Gbit/s beside its capacity, for the results database (link_samples).
 */
#ifndef TOOLS_LINKLOAD_H
#define TOOLS_LINKLOAD_H

#include <stdint.h>

#include "tools/results/results.h"
#include "twin/plan.h"

/* Readings kept at most (links x steps); later ones are counted, not kept. */
#define LINKLOAD_MAX 200000

struct linkload;
struct lpset;
struct agents;

/*
 * linkload_start - read p's links (with set, a timeline followed live:
 * those of every epoch; counters_open) in prefix's emulation (or through
 * ag, its nodes' agents) every step_s
 * of scenario time (x dilation of real time) from t0_ns
 * (CLOCK_MONOTONIC). 0 or -errno.
 */
int linkload_start(const struct plan *p, const struct lpset *set,
		   const char *prefix, struct agents *ag, double dilation,
		   uint64_t t0_ns, double step_s, struct linkload **out)
	__attribute__((warn_unused_result));

/*
 * linkload_stop - stop reading, store what was read in res (NULL: store
 * nothing) and free l. The readings stored (>= 0), or -errno; *lost the
 * readings beyond LINKLOAD_MAX.
 */
long linkload_stop(struct linkload *l, struct results *res, long *lost);

#endif
