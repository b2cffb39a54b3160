/* SPDX-License-Identifier: MIT */
/*
 * What a run says and stores of its story, beside the session that runs
 * it (session.c): the per-task summary, the traffic and the cuts, the
 * epochs of a timeline followed live and what each moved, and when the
 * moved tasks' rounds came back. Private to tools/session/.
 */
#ifndef TOOLS_SESSION_STORY_H
#define TOOLS_SESSION_STORY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "emu/fleet.h"
#include "emu/traffic.h"
#include "tools/results/results.h"
#include "tools/session/play.h"
#include "twin/lpset.h"
#include "twin/plan.h"
#include "twin/scenario.h"

void story_summary(FILE *out, const struct plan *p, const struct lpset *set,
		   const struct fleet *f, double (*meas)[4], double (*pred)[4],
		   const int *rounds_done, const int *compared,
		   const double *acc_first,
		   const double *acc_last, const bool *checks_ok,
		   const bool *ran);
void story_print_traffic(FILE *out, const struct plan *p,
			 const struct lpset *set);
void story_say_events(FILE *out, const struct plan *p, const struct lpset *set,
		      const struct scn_moment *m, int n, int *cursor, double t);
void story_tg_summary(FILE *out, const struct plan *p, const struct lpset *set,
		      const struct tg *g, double t_end);
int story_line_of(const struct lpset *set, int t);
int story_store_traffic(struct results *res, const struct plan *p,
			double t_end);
bool story_has_cut(const struct scenario *sc);
bool story_cut_in(const struct plan *p, double t0, double t1, bool *busy);
void story_charge_cuts(const struct plan *p, int t, double t_r, double extra,
		       double *interr);
void story_cut_summary(FILE *out, const struct plan *p, double t_end,
		       const double *interr);
int story_store_cuts(struct results *res, const struct plan *p, double t_end,
		     const double *interr);
void story_traffic_links(const struct plan *p, const struct lpset *set,
			 double t0, double t1, bool *busy);
double story_since_s(uint64_t t0, double n);
bool story_to_come(const struct lpset *set, const bool *ran, int e);
int story_epoch_in(struct play *pl, const struct lpset *set, double t);
int story_epoch_due(const struct lpset *set, int ein, double t_r);
void story_say_moves(FILE *out, const struct lpset *set, struct play *pl,
		     int *shown);
void story_note_recovery(const struct lpset *set, struct play *pl,
			 const struct fleet *f, const bool *ran,
			 const struct fleet_task_round *rr, double t_end,
			 double *first);
void story_follow_summary(FILE *out, struct results *res,
			  const struct lpset *set, struct play *pl,
			  const double *first, const double *interr,
			  double t_end, bool *unstored);

#endif
