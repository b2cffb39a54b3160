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

/* The workers of a plan's tasks (emu/fleet.h), as fleet.c keeps them. */
struct fleet {
	const struct plan *p;
	const struct addressing *a;
	struct fleet_opts o;
	int report_fd;		/* read end */
	int report_wr;		/* write end, for workers started later */
	struct rm_relay *relay;	/* workers started through o.via */
	uint64_t clock_err_ns;	/* their clocks' worst match */
	struct ftask *t;
	bool watch_gone;	/* the watched process ended */
	struct traingate *gate;	/* forked workers' (NULL: none) */
	int gate_slots, gate_next;	/* its places, the next one free */
};

/* fleet_server_of - the server of task t's model m (a started task's). */
const struct scn_node *fleet_server_of(const struct fleet *f, int t, int m);

/*
 * fleet_fill_conf - task t's worker m's conf as f starts it (no listening
 * socket yet: fleet_listen). emu/fleet_conf.c.
 */
void fleet_fill_conf(const struct fleet *f, int t, int m, struct wk_conf *c);

/*
 * fleet_listen - c's listening sockets made in its namespace (c->lfd_*),
 * before any worker of its task is forked (emu/fleet_conf.c). 0, or
 * -errno with err said as the worker on `host` would have said it, and
 * none left open.
 */
int fleet_listen(struct wk_conf *c, const char *host, char *err, size_t len);

/* fleet_unlisten - c's listening sockets closed (this process's copies),
 * each set to -1. */
void fleet_unlisten(struct wk_conf *c);

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
