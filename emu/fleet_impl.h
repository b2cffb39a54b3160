/* SPDX-License-Identifier: MIT */
/*
 * What fleet.c (starting, rounds, ending) and fleet_check.c (what a
 * task's round's reports say) share: a worker's and a task's state.
 */
#ifndef EMU_FLEET_IMPL_H
#define EMU_FLEET_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "emu/cgroup.h"
#include "emu/fleet.h"
#include "emu/remote.h"
#include "emu/worker.h"
#include "twin/plan.h"

struct fworker {
	pid_t pid;
	int ctl;		/* write end of its wk_ctl pipe, or -1 */
	double train_s;		/* its compute phase now, scenario s */
	double agg_s;		/* its folding in now, scenario s */
	bool exited;
	int status;
	struct cg *cg;
	uint64_t cpu_ns;	/* cgroup CPU time at the last round's end */
	double cpu_s;		/* the worker's own count, likewise */
	int gate_slot;		/* its place in the training gate, or -1 */
	bool remote;		/* started through fleet_opts.via: ctl is
				 * its link, which takes frames */
	int from;		/* its link's read end until the relay
				 * takes it, or -1 */
	const struct rm_link *link;	/* the relay's, once it has it */
};

struct ftask {
	bool live, failed;
	bool ended;		/* it left: ended by the harness, no failure */
	const struct plan *plan;	/* places it (the fleet's, or an
					 * epoch's: fleet_task_start) */
	unsigned first;		/* the fleet's round that is its round 1 */
	unsigned from;		/* its workers' first round (1, or later
				 * when they carry a task on) */
	unsigned last;		/* the task's last round completed, or 0 */
	int model_fd;		/* the root's kept model (wk_kept), or -1 */
	char why[256];
	int nmodels;
	bool starting;		/* its workers started, it is not in the
				 * rounds yet (fleet_admit) */
	uint64_t start_by;	/* ... and fails if not ready by then */
	bool awaited;		/* fleet_ready's: starting when it began */
	struct fworker *w;
	struct wk_report *rep;	/* per model, this round */
	bool *got;
	int ngot;
	int go_fd;		/* write end: start a round */
	int dim;
	size_t nparams, wire;
	int depth;
};

/*
 * fleet_check_round - task ft's round as its workers reported it: the
 * global model against the weighted mean of the locals (check_* of res).
 */
void fleet_check_round(const struct ftask *ft, struct fleet_task_round *res);

/* fleet_late_worst - the workers' lateness summed along the worst path of
 * a tree of tp (ns, host time). */
uint64_t fleet_late_worst(const struct ftask *ft,
			  const struct task_plan *tp);

/* fleet_late_last - the workers' lateness along the way that ended the
 * round (ns, host time). */
uint64_t fleet_late_last(const struct ftask *ft, const struct task_plan *tp);

/* fleet_overrun_stretch - how many times the host time its compute phase
 * had q's arithmetic took (> 1 when it overran; 0 when unknown). */
double fleet_overrun_stretch(const struct wk_report *q);

#endif
