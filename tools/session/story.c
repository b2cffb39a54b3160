// SPDX-License-Identifier: MIT
/* What a run says and stores of its story (story.h). */
#include "tools/session/story.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emu/lab.h"
#include "tools/planout.h"
#include "tools/twinlab.h"
#include "twin/addr.h"
#include "twin/predict.h"

void story_summary(FILE *out, const struct plan *p, const struct lpset *set,
		   const struct fleet *f, double (*meas)[4], double (*pred)[4],
		   const int *rounds_done, const int *compared,
		   const double *acc_first,
		   const double *acc_last, const bool *checks_ok,
		   const bool *ran)
{
	fprintf(out, "\n%-10s %6s %7s %9s %9s  %9s %9s %9s  %6s %6s %s\n",
		"task", "locals", "rounds", "round ms", "pred ms", "bcast ms",
		"train ms", "upload ms", "acc0", "acc", "check");
	for (int t = 0; t < p->ntasks; t++) {
		const struct task_plan *tp = &p->tasks[t];
		const char *why = NULL;
		int n = rounds_done[t], k = compared[t];
		bool started = false, checked = true;

		/* a task and those that carry it on over new trees: one */
		if (set && set->base[t] != t)
			continue;
		for (int u = t; u < p->ntasks; u++) {
			const char *w;

			if (!ran[u] || (set ? set->base[u] : u) != t)
				continue;
			started = true;
			checked = checked && checks_ok[u];
			if (!why && fleet_failed(f, u, &w))
				why = w;
			if (!set)
				break;
		}
		if (!started) {
			fprintf(out, "%-10s %6d BLOCKED: %s\n", tp->task->name,
				tp->task->nlocals, tp->why);
			continue;
		}
		if (why) {
			fprintf(out, "%-10s %6d FAILED after %d rounds: %s\n",
				tp->task->name, tp->task->nlocals, n, why);
			continue;
		}
		if (!n) {
			fprintf(out, "%-10s %6d no round completed\n",
				tp->task->name, tp->task->nlocals);
			continue;
		}
		if (!k) {
			fprintf(out, "%-10s %6d %7d rounds, none compared (each "
				"touched from the live view)\n",
				tp->task->name, tp->task->nlocals, n);
			continue;
		}
		fprintf(out,
			"%-10s %6d %7d %9.2f %9.2f  %4.1f/%4.1f %4.1f/%4.1f "
			"%4.1f/%4.1f  %6.3f %6.3f %s\n",
			tp->task->name, tp->task->nlocals, n,
			meas[t][0] / k * 1e3, pred[t][0] / k * 1e3,
			meas[t][1] / k * 1e3, pred[t][1] / k * 1e3,
			meas[t][2] / k * 1e3, pred[t][2] / k * 1e3,
			meas[t][3] / k * 1e3, pred[t][3] / k * 1e3,
			acc_first[t], acc_last[t], checked ? "ok" : "FAILED");
	}
	fprintf(out, "(measured/predicted, per round, mean over the rounds "
		     "compared; acc0: "
		     "held-out accuracy after the task's first round)\n");
}

/* Flow i as the run plays it: the first of its plans that routes it. */
static const struct bg_flow *flow_of(const struct plan *p,
				     const struct lpset *set, int i)
{
	for (int k = 0; k < lpset_nplans(set); k++)
		if (lpset_plan_or(p, set, k)->bg[i].routed)
			return &lpset_plan_or(p, set, k)->bg[i];
	return &p->bg[i];
}

/* The background traffic the run will play, as the twin routed it. */
void story_print_traffic(FILE *out, const struct plan *p,
			 const struct lpset *set)
{
	const struct scenario *sc = p->sc;

	for (int i = 0; i < p->nbg; i++) {
		const struct bg_flow *f = flow_of(p, set, i);
		const struct scn_event *e = &sc->events[f->bg->event];

		fprintf(out,
			"traffic: %s -> %s, %g Gbit/s at %g s for %g s "
			"(scenario time): ",
			sc->nodes[f->bg->from].name, sc->nodes[f->bg->to].name,
			e->gbps, e->at_s, e->for_s);
		if (f->routed)
			fprintf(out, "%d hops, %g km\n", f->path.nhops,
				f->path.km);
		else
			fprintf(out, "not routed (%s): it will not flow\n",
				f->why);
	}
}

/*
 * Say, in time order, what of the scenario's moments m[0..n) happened in
 * (the last said, t] of scenario time: traffic starting and ending, fibres
 * cut and repaired. *cursor counts what was said.
 */
void story_say_events(FILE *out, const struct plan *p, const struct lpset *set,
		      const struct scn_moment *m, int n, int *cursor, double t)
{
	const struct scenario *sc = p->sc;
	bool follow = set != NULL;

	for (; *cursor < n && m[*cursor].at_s <= t; (*cursor)++) {
		const struct scn_event *e = &sc->events[m[*cursor].event];
		const struct scn_fibre *f = &sc->fibres[e->fibre];
		bool routed = true;

		fprintf(out, "event at %.6f s: ", m[*cursor].at_s);
		switch (e->kind) {
		case SCN_EV_TRAFFIC:
			for (int i = 0; i < p->nbg; i++)
				if (p->bg[i].bg->event == m[*cursor].event)
					routed = lab_traffic_flows(p, set, i);
			fprintf(out, "traffic %s -> %s, %g Gbit/s %s%s\n",
				sc->nodes[e->from].name, sc->nodes[e->to].name,
				e->gbps, m[*cursor].ends ? "ends" : "starts",
				routed ? ""
				       : " (not routed: it does not flow)");
			break;
		case SCN_EV_CUT:
		case SCN_EV_REPAIR:
			fprintf(out, "fibre %s-%s %s\n", sc->nodes[f->a].name,
				sc->nodes[f->b].name,
				e->kind != SCN_EV_CUT ? "repaired"
				: follow ? "cut: its lightpaths go "
					   "dark"
					 : "cut: its lightpaths go dark, "
					   "nothing "
					   "is re-placed");
			break;
		case SCN_EV_ARRIVE:
		case SCN_EV_LEAVE:
			fprintf(out, "task '%s' %s\n", e->task.name,
				e->kind == SCN_EV_ARRIVE ? "arrives"
							 : "leaves");
			break;
		}
	}
}

/*
 * What the background traffic carried: per flow, what its generator sent
 * and what reached its sink, as a rate over the part of its window the
 * run lasted (scenario Gbit/s, frames on the wire).
 */
void story_tg_summary(FILE *out, const struct plan *p, const struct lpset *set,
		      const struct tg *g, double t_end)
{
	const struct scenario *sc = p->sc;
	int k = 0, events = 0;

	for (int i = 0; i < p->nbg; i++) {
		const struct scn_event *e = &sc->events[p->bg[i].bg->event];

		events += (e->at_s <= t_end) + (e->at_s + e->for_s <= t_end);
	}
	fprintf(out,
		"traffic: %d of %d starts and ends happened before the "
		"run ended at %.6f s\n",
		events, 2 * p->nbg, t_end);
	for (int i = 0; g && i < p->nbg; i++) {
		const struct scn_event *e = &sc->events[p->bg[i].bg->event];
		double span = fmin(t_end, e->at_s + e->for_s) - e->at_s;
		uint64_t sent, got;
		double wire = (double)TG_FRAME / TG_PAYLOAD * 8 * sc->scale;

		if (!lab_traffic_flows(p, set, i))
			continue;
		tg_bytes(g, k++, &sent, &got);
		fprintf(out,
			"traffic %s -> %s: %" PRIu64 " bytes sent, %" PRIu64
			" received",
			sc->nodes[p->bg[i].bg->from].name,
			sc->nodes[p->bg[i].bg->to].name, sent, got);
		if (span > 0)
			fprintf(out, ": %.3g of %g Gbit/s over %.6f s; its "
				"datagrams at most %.3f ms late on this host\n",
				(double)got * wire / span / 1e9, e->gbps, span,
				(double)tg_late_ns(g, k - 1) / 1e6);
		else
			fputs(" (its window did not come)\n", out);
	}
}

/* The task t is counted as: the first of its line (twin/lpset.h). */
int story_line_of(const struct lpset *set, int t)
{
	return set ? set->base[t] : t;
}

/* Append name to the comma-separated list in buf (*used long), if it fits. */
static void list_add(char *buf, size_t len, size_t *used, const char *name)
{
	if (*used + strlen(name) + 2 < len)
		*used += (size_t)snprintf(buf + *used, len - *used, "%s%s",
					  *used ? "," : "", name);
}

/* Whether placed task t of q shares a link with q's flow i. */
static bool task_meets(const struct plan *q, int t, int i)
{
	const struct task_plan *tp = &q->tasks[t];
	const struct ppath *bp = &q->bg[i].path;

	if (tp->blocked || !q->bg[i].routed)
		return false;
	for (int m = 1; m < tp->nmodels; m++)
		for (int k = 0; k < 2; k++) {
			const struct ppath *pp =
				k ? &tp->up.path[m] : &tp->bcast.path[m];

			for (int h = 0; h < pp->nhops; h++)
				for (int g = 0; g < bp->nhops; g++)
					if (plan_link(q, &pp->hops[h]) ==
					    plan_link(q, &bp->hops[g]))
						return true;
		}
	return false;
}

/*
 * The tasks flow i shares a link with in some plan the run plays,
 * comma-separated, into buf.
 */
static void touched(const struct plan *p, const struct lpset *set, int i,
		    char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int t = 0; t < p->ntasks; t++) {
		bool meets = false;

		/* a task and those that carry it on over new trees: once */
		if (story_line_of(set, t) != t)
			continue;
		for (int u = t; u < p->ntasks && !meets; u++)
			for (int k = 0; story_line_of(set, u) == t && !meets &&
					k < lpset_nplans(set);
			     k++)
				meets = task_meets(lpset_plan_or(p, set, k), u,
						   i);
		if (meets)
			list_add(buf, len, &used, p->tasks[t].task->name);
	}
}

/* The traffic's starts and ends up to t_end, with the tasks it touched. */
int story_store_traffic(struct results *res, const struct plan *p, double t_end)
{
	const struct scenario *sc = p->sc;
	int err = 0;

	for (int i = 0; i < p->nbg && !err; i++) {
		const struct scn_event *e = &sc->events[p->bg[i].bg->event];
		char what[200], tasks[512];

		snprintf(what, sizeof(what), "%s -> %s, %g Gbit/s for %g s%s",
			 sc->nodes[e->from].name, sc->nodes[e->to].name,
			 e->gbps, e->for_s,
			 p->bg[i].routed ? ""
					 : " (not routed: it did not flow)");
		touched(p, NULL, i, tasks, sizeof(tasks));
		if (e->at_s <= t_end)
			err = results_event(res, e->at_s, "traffic", what,
					    tasks, 0);
		if (!err && e->at_s + e->for_s <= t_end)
			err = results_event(res, e->at_s + e->for_s,
					    "traffic end", what, tasks, 0);
	}
	return err;
}

/* Whether sc cuts a fibre. */
bool story_has_cut(const struct scenario *sc)
{
	for (int k = 0; k < sc->nevents; k++)
		if (sc->events[k].kind == SCN_EV_CUT)
			return true;
	return false;
}

/* The repair of the cut event k, or inf. */
static double repair_of(const struct scenario *sc, int k)
{
	int r = scn_repair_of(sc, k);

	return r < 0 ? INFINITY : sc->events[r].at_s;
}

/*
 * Whether a fibre was cut during [t0, t1) of scenario time; the IP links
 * over it are marked in busy (their bytes are not compared).
 */
bool story_cut_in(const struct plan *p, double t0, double t1, bool *busy)
{
	const struct scenario *sc = p->sc;
	bool any = false;

	for (int k = 0; k < sc->nevents; k++) {
		const struct scn_event *e = &sc->events[k];

		if (e->kind != SCN_EV_CUT || e->at_s >= t1 ||
		    repair_of(sc, k) <= t0)
			continue;
		any = true;
		for (int l = 0; l < p->net->nlp; l++)
			if (plan_lightpath_crosses(p, l, e->fibre))
				busy[2 * sc->nnodes + 2 * l] =
					busy[2 * sc->nnodes + 2 * l + 1] = true;
	}
	return any;
}

/* A round of task t starting at t_r, `extra` longer than it would have
 * been with nothing cut: charged to each cut over its paths it spans. */
void story_charge_cuts(const struct plan *p, int t, double t_r, double extra,
		       double *interr)
{
	const struct scenario *sc = p->sc;

	for (int k = 0; k < sc->nevents; k++) {
		const struct scn_event *e = &sc->events[k];

		if (e->kind == SCN_EV_CUT &&
		    e->at_s < t_r + extra + p->tasks[t].round_s &&
		    repair_of(sc, k) > t_r &&
		    plan_task_crosses(p, t, e->fibre) && extra > 0)
			interr[k] += extra;
	}
}

void story_cut_summary(FILE *out, const struct plan *p, double t_end,
		       const double *interr)
{
	const struct scenario *sc = p->sc;

	for (int k = 0; k < sc->nevents; k++) {
		const struct scn_event *e = &sc->events[k];
		const struct scn_fibre *f = &sc->fibres[e->fibre];

		if (e->kind != SCN_EV_CUT)
			continue;
		fprintf(out,
			"cut of %s-%s at %g s%s: the rounds over it took "
			"%.3f ms longer than with nothing cut (all tasks, "
			"measured)\n",
			sc->nodes[f->a].name, sc->nodes[f->b].name, e->at_s,
			e->at_s <= t_end ? "" : " (after the run ended)",
			interr[k] * 1e3);
	}
}

/*
 * How an event names its fibre ("fibre A-B (40 km)"): the report matches
 * a repair to its cut by it. Returns its length.
 */
static int fibre_what(const struct scenario *sc, int fibre, char *buf,
		      size_t len)
{
	const struct scn_fibre *f = &sc->fibres[fibre];
	int n = snprintf(buf, len, "fibre %s-%s (%g km)", sc->nodes[f->a].name,
			 sc->nodes[f->b].name, f->km);

	return n < 0 ? 0 : (size_t)n >= len ? (int)len - 1 : n;
}

/* The cuts and repairs up to t_end, with the tasks over them and what the
 * cuts cost them. */
int story_store_cuts(struct results *res, const struct plan *p, double t_end,
		     const double *interr)
{
	const struct scenario *sc = p->sc;
	int err = 0;

	for (int k = 0; k < sc->nevents && !err; k++) {
		const struct scn_event *e = &sc->events[k];
		char what[160], tasks[512] = "";
		size_t used = 0;

		if ((e->kind != SCN_EV_CUT && e->kind != SCN_EV_REPAIR) ||
		    e->at_s > t_end)
			continue;
		fibre_what(sc, e->fibre, what, sizeof(what));
		for (int t = 0; t < p->ntasks; t++)
			if (plan_task_crosses(p, t, e->fibre))
				list_add(tasks, sizeof(tasks), &used,
					 p->tasks[t].task->name);
		err = results_event(res, e->at_s, scn_event_kind_name(e->kind),
				    what, tasks,
				    e->kind == SCN_EV_CUT ? interr[k] : 0);
	}
	return err;
}

/*
 * The links background traffic crossed in [t0, t1) of scenario time, in
 * busy: every link of a played flow whose window meets it, as any plan
 * the run plays routes it.
 */
void story_traffic_links(const struct plan *p, const struct lpset *set,
			 double t0, double t1, bool *busy)
{
	for (int i = 0; i < p->nbg; i++) {
		const struct scn_event *e = &p->sc->events[p->bg[i].bg->event];

		if (!lab_traffic_flows(p, set, i) || e->at_s >= t1 ||
		    e->at_s + e->for_s <= t0)
			continue;
		for (int k = 0; k < lpset_nplans(set); k++) {
			const struct bg_flow *f =
				&lpset_plan_or(p, set, k)->bg[i];

			for (int h = 0; f->routed && h < f->path.nhops; h++)
				busy[plan_link(p, &f->path.hops[h])] = true;
		}
	}
}

/* Scenario seconds since t0 (CLOCK_MONOTONIC ns) at dilation n. */
double story_since_s(uint64_t t0, double n)
{
	return (double)(mono_ns() - t0) / 1e9 / n;
}

/* Whether task t of a followed set runs in epoch e or a later one (not
 * lost before). */
static bool to_come_one(const struct lpset *set, int t, int e)
{
	for (int k = e; k < set->nepochs; k++)
		if (set->runs[k][t] && (set->lost[t] < 0 || k < set->lost[t]))
			return true;
	return false;
}

/*
 * Whether a task of a followed set that has not started yet will, in
 * epoch e or a later one.
 */
bool story_to_come(const struct lpset *set, const bool *ran, int e)
{
	for (int t = 0; set && t < set->sc->ntasks; t++)
		if (!ran[t] && to_come_one(set, t, e))
			return true;
	return false;
}

/*
 * The latest epoch of a followed timeline the emulation had brought in by
 * scenario time t (0 without one).
 */
int story_epoch_in(struct play *pl, const struct lpset *set, double t)
{
	double live;

	for (int e = set ? set->nepochs - 1 : 0; e > 0; e--)
		if (play_epoch(pl, e, &live, NULL) && live <= t)
			return e;
	return 0;
}

/*
 * The epoch in force at t_r, the start of a round chosen a little ahead
 * of it, from ein, the one in force now: what comes in by then without
 * moving or starting anything, traffic that starts or ends (its
 * generator keeps the scenario's clock, and the epoch needs no set-up),
 * is in the round. Epochs that move tasks are not taken before they are
 * live: the workers follow those.
 */
int story_epoch_due(const struct lpset *set, int ein, double t_r)
{
	for (int e = ein + 1; set && e < set->nepochs; e++) {
		const struct epoch *ep = &set->tl->e[e];
		const struct scn_event *ev = &set->tl->sc->events[ep->event];

		if (ev->kind != SCN_EV_TRAFFIC || ep->nmoved || ep->lit ||
		    ep->unlit || timeline_live_s(set->tl, e) > t_r)
			break;
		ein = e;
	}
	return ein;
}

/* The tasks epoch e moved (or left waiting), by name, into buf. */
static void moved_names(const struct lpset *set, int e, bool waiting, char *buf,
			size_t len)
{
	const struct epoch *ep = &set->tl->e[e];
	size_t used = 0;

	buf[0] = '\0';
	for (int t = 0; t < ep->plan->ntasks; t++) {
		const char *name = ep->plan->tasks[t].task->name;
		int st = set->index[e][t]; /* the set's */

		/* (waiting: for a repair; a task lost here is said apart) */
		if (waiting ? set->waits[e][st] && set->lost[st] != e
			    : ep->moved[t] && !set->waits[e][st])
			list_add(buf, len, &used, name);
	}
}

/* Each epoch brought in since the last one said: what moved, and when. */
void story_say_moves(FILE *out, const struct lpset *set, struct play *pl,
		     int *shown)
{
	double live;
	int ch;

	while (set && *shown + 1 < set->nepochs &&
	       play_epoch(pl, *shown + 1, &live, &ch)) {
		const struct timeline *tl = set->tl;
		const struct epoch *ep = &tl->e[++*shown];
		char moved[256], waits[256], lost[256];
		size_t used = 0;

		moved_names(set, *shown, false, moved, sizeof(moved));
		moved_names(set, *shown, true, waits, sizeof(waits));
		lost[0] = '\0';
		for (int t = 0; t < set->sc->ntasks; t++)
			if (set->lost[t] == *shown)
				list_add(lost, sizeof(lost), &used,
					 set->sc->tasks[t].name);
		fprintf(out,
			"run: the %s at %g s (--reschedule %s): %s%s%s%s%s"
			"%s%s%s; set up in %.3f ms, live at %.6f s (%d "
			"lightpaths and routes changed)\n",
			epoch_name(tl, ep), ep->at_s, resched_name(tl->policy),
			moved[0] ? "moved " : "",
			moved[0] ? moved : "nothing moved",
			waits[0] ? ", no way round for " : "", waits,
			waits[0] ? " (it waits)" : "",
			lost[0] ? ", no way round ever for " : "", lost,
			lost[0] ? " (it fails)" : "",
			timeline_setup_s(tl, *shown) * 1e3, live, ch);
	}
}

/*
 * The first round that ends on a moved task's new paths, per epoch: after
 * a round (ending at t_end) in which every task epoch e moved that was
 * still running (not left, failed or yet to start) completed, one at
 * least, once the epoch was live before that end; first[e] then holds how
 * long after its event that was.
 */
void story_note_recovery(const struct lpset *set, struct play *pl,
			 const struct fleet *f, const bool *ran,
			 const struct fleet_task_round *rr, double t_end,
			 double *first)
{
	for (int e = 1; set && e < set->nepochs; e++) {
		const struct epoch *ep = &set->tl->e[e];
		double live;
		bool all = true;
		int n = 0;

		if (!isnan(first[e]) || !ep->nmoved ||
		    !play_epoch(pl, e, &live, NULL) || live >= t_end)
			continue;
		for (int t = 0; t < ep->plan->ntasks; t++) {
			int st = set->index[e][t]; /* the set's */

			if (!ep->moved[t] || set->waits[e][st])
				continue;
			n += rr[st].done;
			/* (one that carries it on over new trees and has
			 * not started yet is still to come, unless its line
			 * ends first) */
			all = all && (rr[st].done ||
				      (!fleet_running(f, st) &&
				       (ran[st] ||
					!to_come_one(set, st,
						     story_epoch_in(pl, set,
								    t_end)))));
		}
		if (all && n)
			first[e] = t_end - ep->at_s;
	}
}

/*
 * A traffic epoch ep of set, said into buf: the flow, whether it starts or
 * ends, and the tasks it shares a link with in the run. Its length.
 */
static int traffic_what(const struct lpset *set, const struct epoch *ep,
			char *buf, size_t len)
{
	const struct plan *p = set->plan[0];
	const struct scn_event *ev = &p->sc->events[ep->event];
	char tasks[256] = "";
	int n;

	for (int i = 0; i < p->nbg; i++)
		if (p->bg[i].bg->event == ep->event)
			touched(p, set, i, tasks, sizeof(tasks));
	n = snprintf(buf, len, "traffic %s -> %s, %g Gbit/s %s%s%s",
		     p->sc->nodes[ev->from].name, p->sc->nodes[ev->to].name,
		     ev->gbps, ep->ends ? "ends" : "starts",
		     tasks[0] ? ", beside " : "", tasks);
	return n < 0 ? 0 : n >= (int)len ? (int)len - 1 : n;
}

/* A followed timeline's events as they were brought in, and what the
 * cuts cost the tasks they moved. */
void story_follow_summary(FILE *out, struct results *res,
			  const struct lpset *set, struct play *pl,
			  const double *first, const double *interr,
			  double t_end, bool *unstored)
{
	const struct timeline *tl = set->tl;

	for (int e = 1; e < tl->n; e++) {
		const struct epoch *ep = &tl->e[e];
		const struct scn_event *ev = &tl->sc->events[ep->event];
		const char *kind = ep->ends ? "traffic end"
					    : scn_event_kind_name(ev->kind);
		char moved[256], what[400];
		double live;
		bool in = play_epoch(pl, e, &live, NULL);
		int n;

		if (ep->at_s > t_end)
			continue;
		moved_names(set, e, false, moved, sizeof(moved));
		if (ev->kind == SCN_EV_CUT || ev->kind == SCN_EV_REPAIR)
			n = fibre_what(tl->sc, ev->fibre, what, sizeof(what));
		else if (ev->kind == SCN_EV_TRAFFIC)
			n = traffic_what(set, ep, what, sizeof(what));
		else
			n = snprintf(what, sizeof(what), "task '%s' %s",
				     ev->task.name,
				     ev->kind == SCN_EV_ARRIVE ? "arrives"
							       : "leaves");
		snprintf(what + n, sizeof(what) - (size_t)n, "; %s%s; %s",
			 moved[0] ? "moved " : "nothing moved", moved,
			 !in ? "not live by the end of the run" : "live");
		if (in)
			snprintf(what + strlen(what),
				 sizeof(what) - strlen(what),
				 " %.3f ms after it", (live - ep->at_s) * 1e3);
		if (in && !isnan(first[e]))
			snprintf(what + strlen(what),
				 sizeof(what) - strlen(what),
				 "; the first round on the new "
				 "paths ended %.3f ms after it",
				 first[e] * 1e3);
		fprintf(out, "%s at %g s: %s", kind, ep->at_s, what);
		if (ev->kind == SCN_EV_CUT)
			fprintf(out,
				"; the rounds over it took %.3f ms longer "
				"than predicted without it (measured)",
				interr[ep->event] * 1e3);
		fputc('\n', out);
		if (results_event_moved(
			    res, ep->at_s, kind, what, moved,
			    ev->kind == SCN_EV_CUT ? interr[ep->event] : 0,
			    resched_name(tl->policy), in ? live : NAN,
			    in ? ep->at_s + first[e] : NAN))
			*unstored = true;
	}
}
