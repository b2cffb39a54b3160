// SPDX-License-Identifier: MIT
/*
 * An attempt's rounds (session_impl.h): each waits for the tasks due to
 * start, opens the round at a time the workers agree on, predicts it with
 * the twin on the plan in force, measures it from the workers' reports
 * and the shapers' counters, tallies it and lets the monitor judge it.
 */
#include "tools/session/session_impl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/planout.h"
#include "tools/session/play.h"
#include "tools/session/story.h"
#include "tools/twinlab.h"
#include "twin/net.h"
#include "twin/stat.h"

static bool any_running(const struct fleet *f, int ntasks)
{
	for (int t = 0; t < ntasks; t++)
		if (fleet_running(f, t))
			return true;
	return false;
}

/* Whether task t runs in the rounds (not only starting). */
static bool task_in_rounds(const struct fleet *f, int t)
{
	return fleet_running(f, t) && !fleet_starting(f, t);
}

/* Whether any task does. */
static bool in_rounds(const struct fleet *f, int ntasks)
{
	for (int t = 0; t < ntasks; t++)
		if (task_in_rounds(f, t))
			return true;
	return false;
}

/*
 * Epoch e of a followed timeline is in force at round r: the tasks it
 * runs that have not started start their workers (ran), those that have
 * left end theirs. A task whose paths cross a fibre cut meanwhile (its
 * workers came later than its epoch, behind the host's time) waits for
 * the epoch that moves it, as the twin has it wait, and says so once
 * (told). A task that cannot start fails; the others go on. One lost
 * before it started (lpset: a cut never repaired, no way round) does not
 * start, and says why.
 */
static void comings(const struct run_ctx *x, struct fleet *f,
		    struct play *pl, int e, unsigned r, bool *ran, char *told)
{
	const struct lpset *set = x->set;
	const struct plan *q = set->plan[e];
	char err[320];

	for (int t = 0; t < q->ntasks; t++) {
		const char *name = q->tasks[t].task->name;
		int cut = set->runs[e][t] && !ran[t] ?
			  play_cut_under(pl, q, t) : -1;

		if (!ran[t] && set->lost[t] >= 0 && e >= set->lost[t]) {
			if (told[t] != 2) {
				lpset_lost_why(set, t, err, sizeof(err));
				fprintf(x->out, "run: %s; it does not start "
					"(round %u)\n", err, r);
			}
			told[t] = 2;
		} else if (cut >= 0) {
			const struct scn_fibre *fb = &q->sc->fibres[cut];

			if (told[t] != 1)
				fprintf(x->out, "run: task '%s' waits to start: "
					"its paths cross fibre %s-%s, cut, until "
					"an epoch moves it (round %u)\n", name,
					q->sc->nodes[fb->a].name,
					q->sc->nodes[fb->b].name, r);
			told[t] = 1;
		} else if (set->runs[e][t] && !ran[t]) {
			const struct epoch *ep = &set->tl->e[set->prev[t] >= 0 ?
							      set->since[t] : e];
			int prev = set->prev[t];

			/*
			 * One it would carry on from that never started (a
			 * later epoch came in before a round could start it:
			 * two moves close together, a slow host): it carries
			 * on from the last of its line that ran.
			 */
			while (prev >= 0 && !ran[prev])
				prev = set->prev[prev];

			ran[t] = true;
			fprintf(x->out, "run: task '%s' %s (the %s at %g s): its "
				"workers start, at round %u\n", name, prev >= 0 ?
				"carries on over its new trees" : "is placed",
				epoch_name(set->tl, ep), ep->at_s, r);
			fflush(x->out);
			if (prev >= 0 ? fleet_task_resume(f, q, t, prev, r, err,
							  sizeof(err)) :
					fleet_task_start(f, q, t, r, err,
							 sizeof(err)))
				session_say(x, "%s", err);
			else if (results_task_placed(x->res, q, t))
				session_say(x, "warning: task '%s': its placement is "
				    "not stored", name);
		} else if (!set->runs[e][t] && ran[t] &&
			   fleet_running(f, t)) {
			fleet_task_end(f, t);
			fprintf(x->out, "run: task '%s' %s: its workers ended "
				"before round %u\n", name, session_slot_at_end(set, t) ?
				"has left" : "moves to new trees", r);
		}
	}
}

/*
 * Round r's wait: for the epoch that starts someone when nobody runs,
 * and for the tasks whose workers got ready to join.
 */
static void round_wait(struct attempt *a, unsigned r, struct att_round *R)
{
	ATT_LOCALS;

	/*
	 * Nobody runs, some will (the tasks a cut moves to new
	 * trees, arrivals): the next round waits for the epoch
	 * that starts them, not run empty.
	 */
	while (x->set && r > 1) {
		story_say_events(x->out, p, x->set, a->mo, a->nmo, &a->said,
				 story_since_s(a->t0, n));
		story_say_moves(x->out, x->set, a->pl, &a->shown);
		comings(x, a->f, a->pl, R->ein, r, a->ran, a->told);
		if (*x->stop || any_running(a->f, p->ntasks) ||
		    !story_to_come(x->set, a->ran, R->ein) ||
		    !play_wait_epoch(a->pl, R->ein + 1, x->stop))
			break;
		R->ein = story_epoch_in(a->pl, x->set, story_since_s(a->t0, n));
	}
	/*
	 * Tasks whose workers started (arrivals, tasks carried on
	 * over new trees) join the rounds once ready: the others'
	 * rounds do not wait for their handshakes, unless nobody
	 * else runs.
	 */
	if (x->set && r > 1) {
		char why[320];

		if (!in_rounds(a->f, p->ntasks) &&
		    fleet_ready(a->f, why, sizeof(why)))
			session_say(x, "%s", why);
		fleet_admit(a->f, r, a->joined);
		for (int t = 0; t < p->ntasks; t++)
			if (a->joined[t])
				fprintf(x->out,
					"run: task '%s' joins "
					"the rounds at round %u: its "
					"workers are ready\n",
					p->tasks[t].task->name, r);
	}
}

/* Round r's start time, and on the first the clocks of what plays. */
static int round_open(struct attempt *a, unsigned r, struct att_round *R)
{
	ATT_LOCALS;
	int e;

	/*
	 * The round starts when chosen here, so it can be predicted
	 * as it will fall: two go margins ahead, for what comes
	 * before the go (the first round's threads, the counters),
	 * so the roots still have about one to wake in.
	 */
	/* whether a change from the live view's page is in force, read
	 * before the round's start is chosen (the view may hold its lock
	 * a while) */
	(void)view_srv_changes(x->view, &R->page_in0);
	R->now = mono_ns() + 2 * FLEET_GO_MARGIN_NS;
	R->mr = (struct mon_round){.dilation = n, .round_min_s = INFINITY};

	for (int t = 0; t < p->ntasks; t++)
		R->live += task_in_rounds(a->f, t);
	/* scenario time starts with the first round */
	if (r == 1) {
		double step = p->mean_round_s > 0
				      ? fmin(0.1, p->mean_round_s / 5)
				      : 0.1;

		a->t0 = R->now;
		if (a->tg && tg_go(a->tg, a->t0)) {
			session_say(x, "cannot start the traffic generator");
			return -1;
		}
		/* the links' load, read every step of scenario time */
		e = linkload_start(p, x->set, x->lo.prefix, a->ag, n, a->t0, step,
				   &a->ll);
		if (e)
			session_say(x,
			    "warning: the links' load is not "
			    "recorded: %s",
			    strerror(-e));
		/* cuts and repairs, each at its time, and the view's clock */
		view_srv_clock(x->view, a->t0, n);
		e = play_start(p, x->set, x->lo.prefix, n, a->t0, a->leave,
			       &a->pl);
		if (e) {
			session_say(x, "cannot play the cuts: %s", strerror(-e));
			return -1;
		}
	}
	return 0;
}

/* Round r predicted as it falls (traffic, cuts, tasks still starting). */
static int round_predict(struct attempt *a, unsigned r, struct att_round *R)
{
	ATT_LOCALS;
	int e;

	R->t_r = (double)(R->now - a->t0) / 1e9 / n;
	/*
	 * Each round predicted as it falls: traffic in its window,
	 * the lightpaths over a cut fibre dark in theirs; and as if
	 * nothing were cut, for what the cuts cost.
	 */
	if (x->set) {
		/*
		 * the epoch in force at the round's start: predicted
		 * as scheduled, quiet (the latest live now: starting
		 * arrivals' workers may have taken a while since ein
		 * was read, and traffic due by the start with it)
		 */
		story_say_events(x->out, p, x->set, a->mo, a->nmo, &a->said,
				 R->t_r);
		story_say_moves(x->out, x->set, a->pl, &a->shown);
		if (r > 1)
			R->ein = story_epoch_due(
				x->set,
				story_epoch_in(a->pl, x->set,
					       story_since_s(a->t0, n)),
				R->t_r);
		R->pr = x->set->plan[R->ein];
		/* the page draws the trees of the epoch in force */
		view_srv_plan(x->view, R->pr);
		/* tasks still starting are not in this round */
		plan_free(a->own);
		a->own = NULL;
		for (int t = 0; t < p->ntasks; t++)
			a->absent[t] = fleet_starting(a->f, t) &&
				       !R->pr->tasks[t].blocked;
		for (int t = 0; t < p->ntasks && !a->own; t++)
			if (a->absent[t]) {
				a->own = lpset_plan_without(x->set, R->ein,
							    a->absent);
				e = a->own ? x->predict(a->own) : -errno;
				if (e) {
					session_say(x,
					    "cannot predict round "
					    "%u: %s",
					    r, predict_strerror(e));
					return -1;
				}
				R->pr = a->own;
			}
		/* who shares a server's cores may have changed */
		fleet_train_from(a->f, R->pr);
		for (int t = 0; t < p->ntasks; t++)
			a->quiet[t] = R->pr->tasks[t].round_s;
	} else if (p->sc->nevents) {
		story_say_events(x->out, p, NULL, a->mo, a->nmo, &a->said,
				 R->t_r);
		e = plan_traffic_windows(x->p, R->t_r);
		if (!e && story_has_cut(p->sc)) {
			x->p->ndown = 0;
			e = x->predict(x->p);
			for (int t = 0; !e && t < p->ntasks; t++)
				a->quiet[t] = p->tasks[t].round_s;
		}
		if (!e)
			e = plan_cut_windows(x->p, R->t_r);
		if (!e)
			e = x->predict(x->p);
		if (e) {
			session_say(x, "cannot predict round %u: %s", r,
			    predict_strerror(e));
			return -1;
		}
	}
	return 0;
}

/* A link's counter its node's agent could not give: the round fails,
 * saying which (-1). */
static int counter_lost(const struct run_ctx *x, const struct counter *c,
			int e)
{
	session_say(x, "cannot read %s's %s through its node's agent: %s "
		    "(the round's bytes would be wrong)", c->ns, c->ifname,
		    strerror(-e));
	return -1;
}

/*
 * When round r's last packets have reached their links (CLOCK_MONOTONIC
 * ns), with the round just over at now. Every route ACKs at once, so a
 * transfer's last ACK has left its receiver once it read the last of it
 * (its report's time) and comes back over its path: the transfer is quiet
 * its path's in-flight time x N after that, each of its hops late by as
 * much as the delay line let any packet of the round go (late_ns, host
 * time), and the round after the latest of those, with the margin and
 * the clocks' error. A task that failed, or that is not done and still
 * runs or starts, may have anything in flight, and so may a run that
 * follows a timeline (tasks that left, moved or arrived): for them the
 * bound of the plan's longest path from now (a->drain_ns).
 */
static uint64_t round_quiet_ns(const struct attempt *a, const struct plan *pr,
			       uint64_t now, uint64_t late_ns)
{
	uint64_t bound = now + a->drain_ns;
	uint64_t quiet = 0;

	if (a->x->set)
		return bound;
	for (int t = 0; t < pr->ntasks; t++) {
		const struct task_plan *tp = &pr->tasks[t];
		const struct fleet_task_round *q = &a->rr[t];

		if (tp->blocked)
			continue;
		if (!q->done) {
			if (q->failed || fleet_running(a->f, t) ||
			    fleet_starting(a->f, t))
				return bound;
			continue;
		}
		for (int m = 1; m < tp->nmodels; m++) {
			int up = tp->up.parent[m];
			int child = tree_child_index(&tp->up, m);
			double b = net_in_flight_s(tp->bcast.path[m].km) *
				   a->n * 1e9;
			double u = net_in_flight_s(tp->up.path[m].km) *
				   a->n * 1e9;
			uint64_t eb, eu;

			eb = q->rep[m].t_start + (uint64_t)b +
			     (uint64_t)tp->bcast.path[m].nhops * late_ns;
			eu = q->rep[up].t_child[child] + (uint64_t)u +
			     (uint64_t)tp->up.path[m].nhops * late_ns;
			quiet = eb > quiet ? eb : quiet;
			quiet = eu > quiet ? eu : quiet;
		}
	}
	quiet += SESSION_DRAIN_MARGIN_NS + fleet_clock_error_ns(a->f);
	return quiet < now ? now : quiet > bound ? bound : quiet;
}

/* Round r run and measured: the host's counters, the links' bytes. */
static int round_measure(struct attempt *a, unsigned r, struct att_round *R)
{
	ATT_LOCALS;
	int e;

	/* every task pr places runs: the links carry its bytes (not
	 * so while tasks that moved to new trees wait for them) */
	R->whole = true;
	for (int t = 0; t < p->ntasks; t++)
		R->whole = R->whole &&
			   (R->pr->tasks[t].blocked || fleet_running(a->f, t));
	for (int i = 0; i < a->nctr; i++) {
		e = counters_get(&a->ctr[i], &a->ctr[i].before);
		if (e)
			return counter_lost(x, &a->ctr[i], e);
	}
	e = monitor_sample(a->mon, &R->s0);
	tg_lateness(a->tg, &R->s0.tg_late_ns_sum, &R->s0.tg_dgrams,
		    &R->s0.tg_late_ns_max);
	a->line0 = x->fo.watch ? lab_delay_line(a->sup) : 0;
	R->ok = fleet_round(a->f, r, R->now, a->rr);
	R->mr.delay_restarted =
		x->fo.watch && lab_delay_line(a->sup) != a->line0;
	if (!e)
		e = monitor_sample(a->mon, &R->s1);
	tg_lateness(a->tg, &R->s1.tg_late_ns_sum, &R->s1.tg_dgrams,
		    &R->s1.tg_late_ns_max);
	/* a delay line that bound its queues again (a node's, read by
	 * its agent, that no pid here shows) */
	if (!e && R->s1.dl_starts != R->s0.dl_starts)
		R->mr.delay_restarted = true;
	if (e) {
		session_say(x, "cannot read the host's counters: %s", strerror(-e));
		return -1;
	}
	/* the round's last ACKs reach their links before they count */
	{
		uint64_t until = round_quiet_ns(a, R->pr, mono_ns(),
						R->s1.dl_late_ns_max);
		struct timespec ts = {
			.tv_sec = (time_t)(until / 1000000000u),
			.tv_nsec = (long)(until % 1000000000u),
		};

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				       NULL) == EINTR && !*x->stop)
			;
	}
	a->t_end = story_since_s(a->t0, n);
	/*
	 * A cut, repair or flow from the live view's page, which no plan or
	 * prediction knows of, touched the round: one made since the last
	 * round was measured, or one in force at its start or now.
	 */
	{
		bool in1;
		unsigned c1 = view_srv_changes(x->view, &in1);

		R->page = c1 != a->page_seen || R->page_in0 || in1;
		a->page_seen = c1;
	}
	/* links background traffic crossed during the round carry
	 * more than the tasks' bytes: not compared */
	memset(a->busy, 0, (size_t)plan_nlinks(p) * sizeof(*a->busy));
	story_traffic_links(p, x->set, R->t_r, a->t_end, a->busy);
	/* and links over a fibre cut during it: TCP resent there;
	 * the scenario's losses are not the host's */
	R->mr.lossy = scenario_has_loss(p->sc) ||
		      story_cut_in(p, R->t_r, a->t_end, a->busy) || R->page;
	if (R->page)
		R->whole = false;	/* its links' bytes are not compared */
	monitor_diff(&R->s0, &R->s1, &R->mr);
	a->dl_pk += R->mr.dl_packets;
	a->dl_late += R->mr.dl_late_mean_s * (double)R->mr.dl_packets;
	a->dl_max = fmax(a->dl_max, R->mr.dl_late_max_s);
	a->stall_s += R->mr.stall_frac * R->mr.wall_s;
	a->stall_over += R->mr.stall_excess * R->mr.wall_s;
	a->wall_s += R->mr.wall_s;
	a->stall_max = fmax(a->stall_max, R->mr.stall_max_s);
	a->rq_sum += R->mr.runq_mean;
	a->rq_max = a->rq_max > R->mr.runq_max ? a->rq_max : R->mr.runq_max;
	a->compared += R->ok == R->live && R->whole && a->nctr > 0;
	for (int i = 0; i < a->nctr; i++) {
		const struct counter *c = &a->ctr[i];
		struct nl_qstats q;

		e = counters_get(c, &q);
		if (e)
			return counter_lost(x, c, e);

		link_name(p, c->link, a->ls[i].name, sizeof(a->ls[i].name));
		a->ls[i].bytes = q.bytes - c->before.bytes;
		R->mr.drops += q.drops - c->before.drops;
		/* the twin's bytes on the wire, in emulated bytes;
		 * a task that failed this round sent only part */
		a->ls[i].pred_bytes =
			R->ok == R->live && R->whole && !a->busy[c->link]
				? R->pr->link_bytes[c->link] / p->sc->scale
				: 0;
		/* a round a task failed or left in is not compared */
		if (a->busy[c->link] || R->ok != R->live || !R->whole)
			continue;
		a->link_meas += (double)a->ls[i].bytes;
		a->link_pred += a->ls[i].pred_bytes;
	}
	return 0;
}

/* What round r's tasks measured, summed for the run and the monitor. */
static void round_tally(struct attempt *a, struct att_round *R)
{
	ATT_LOCALS;
	int nfrac = 0;

	a->rounds_run++;
	for (int t = 0; t < p->ntasks; t++) {
		struct fleet_task_round *q = &a->rr[t];

		int b = story_line_of(x->set, t); /* counted as */

		if (!q->done)
			continue;
		a->done[b]++;
		/* a round the page touched is not held against the twin */
		if (!R->page) {
			a->cmp[b]++;
			a->meas[b][0] += q->round_s;
			a->meas[b][1] += q->bcast_s;
			a->meas[b][2] += q->compute_s;
			a->meas[b][3] += q->upload_s;
			a->pm[b][0] += R->pr->tasks[t].round_s;
			/* what each cut cost the tasks over its fibre */
			story_charge_cuts(R->pr, t, R->t_r,
					  q->round_s - a->quiet[t], a->interr);
			a->pm[b][1] += R->pr->tasks[t].bcast_s;
			a->pm[b][2] += R->pr->tasks[t].compute_s;
			a->pm[b][3] += R->pr->tasks[t].upload_s;
		}
		if (a->done[b] == 1) /* its first (it may arrive) */
			a->acc0[b] = q->rep[0].accuracy;
		a->acc1[b] = q->rep[0].accuracy;
		a->checks[t] = a->checks[t] && q->check_ok;
		R->sum += q->round_s;
		R->psum += R->pr->tasks[t].round_s;
		R->acc += q->rep[0].accuracy;
		R->nt++;
		R->mr.overruns += q->overruns;
		R->mr.phases += p->tasks[t].nmodels - 1;
		R->mr.overrun_max_s =
			fmax(R->mr.overrun_max_s, q->overrun_max_s);
		R->mr.overrun_stretch =
			fmax(R->mr.overrun_stretch, q->overrun_stretch);
		R->mr.skew_max_s = fmax(R->mr.skew_max_s, q->skew_s);
		R->mr.late_max_s = fmax(R->mr.late_max_s, q->late_max_s);
		if (q->round_s > 0)
			a->frac[nfrac++] = q->late_last_s / q->round_s;
		R->mr.round_min_s = fmin(R->mr.round_min_s, q->round_s);
	}
	/*
	 * No task completed the round (those in flight moved to
	 * new trees, or left): the host's lateness is judged against
	 * the shortest round the twin has for a task placed then.
	 */
	for (int t = 0; !R->nt && t < p->ntasks; t++)
		if (a->ran[t] && !R->pr->tasks[t].blocked)
			R->mr.round_min_s = fmin(R->mr.round_min_s,
						 R->pr->tasks[t].round_s);
	if (!isfinite(R->mr.round_min_s))
		R->mr.round_min_s = 0;
	/* each task's lateness against its own round: median and worst */
	if (nfrac) {
		R->mr.late_frac_median = stat_median(a->frac, nfrac);
		R->mr.late_frac_worst = a->frac[nfrac - 1];
	}
	R->mr.min_segments = x->min_segments;
}

/* Round r's verdict, stored and said; 1 when auto tries another dilation. */
static int round_judge(struct attempt *a, unsigned r, struct att_round *R)
{
	ATT_LOCALS;
	int e;

	R->fine = monitor_verdict(&R->mr, R->why, sizeof(R->why), &R->sug);
	/* a round its tasks failed, none done, measured nothing */
	for (int t = 0; R->fine && !R->nt && t < p->ntasks; t++)
		if (a->ran[t] && a->rr[t].failed) {
			R->fine = false;
			R->sug = 0;
			snprintf(R->why, sizeof(R->why),
				 "no task completed "
				 "the round (%.60s: %.100s)",
				 p->tasks[t].task->name, a->rr[t].why);
		}
	snprintf(R->verdict, sizeof(R->verdict), "%s%s%s",
		 R->fine ? "faithful" : "degraded: ", R->fine ? "" : R->why,
		 R->page ? " (touched from the live view: a cut, repair or "
			   "traffic no prediction has; not compared)" : "");
	a->page_rounds += R->page;
	if (!R->fine) {
		a->degraded++;
		a->not_passing = a->not_passing || !monitor_passing(&R->mr);
		if (!a->first_why[0])
			snprintf(a->first_why, sizeof(a->first_why),
				 "%s (round %u)", R->why, r);
		x->suggest = fmax(x->suggest, R->sug);
	}
	story_note_recovery(x->set, a->pl, a->f, a->ran, a->rr, a->t_end,
			    a->first);
	/* a round is stored whole or not at all */
	a->err[0] = '\0';
	e = results_round_begin(x->res);
	if (!e && (results_round(x->res, R->pr, r, a->rr, a->ls, a->nctr,
				 a->err, sizeof(a->err)) ||
		   results_fidelity(x->res, r, &R->mr, R->verdict, R->page) ||
		   results_round_time(x->res, r, R->t_r, a->t_end)))
		e = -EIO;
	if (results_round_end(x->res, !e) || e) {
		session_say(x, "round %u not stored: %s", r,
		    a->err[0] ? a->err
			      : "cannot store the round's fidelity "
				"and times");
		a->unstored++;
	}
	/* the view has the round before anyone reads of it */
	view_srv_tasks(x->view, R->pr, r, a->rr, a->ran);
	{
		char line[512];

		snprintf(line, sizeof(line),
			 "round %u/%u: %d tasks done, mean round %.2f ms "
			 "(predicted %.2f ms), mean accuracy %.3f; %s",
			 r, x->fo.rounds, R->ok,
			 R->nt ? R->sum / R->nt * 1e3 : 0,
			 R->nt ? R->psum / R->nt * 1e3 : 0,
			 R->nt ? R->acc / R->nt : 0, R->verdict);
		fprintf(x->out, "%s\n", line);
		fflush(x->out);
		view_srv_note(x->view, line);
	}
	/*
	 * auto: the first round calibrates; a degraded one retries at the
	 * N the monitor names, or at the same N once when what degraded it
	 * came now and then (monitor_passing: a second run may not meet it)
	 */
	double next = !R->fine && x->auto_n && r == 1 && x->built ?
			      monitor_next(n, x->suggest, !a->not_passing,
					   &x->same_rerun) : 0;

	if (next > 0 && next <= LAB_DILATION_MAX) {
		x->suggest = next;
		x->retry = true;
		results_end_run(x->res, "recalibrated");
		a->run_open = false;
		results_verdict(x->res, n, R->verdict);
		fprintf(x->out,
			"run: dilation %g is not faithful (%s); trying "
			"%g%s\n",
			n, R->why, next, next == n ? " again (it came now "
			"and then; a second run may not meet it)" : "");
		a->rc = ATTEMPT_RETRY;
		return 1;
	}
	return 0;
}

/* The rounds; 0, or -1 to end the attempt (a->rc says how). */
int session_rounds(struct attempt *a)
{
	struct run_ctx *x = a->x;
	const struct plan *p = a->p;

	for (unsigned r = 1; r <= x->fo.rounds && !*x->stop; r++) {
		struct att_round rd = {.pr = p}, *R = &rd;

		/*
		 * A followed timeline's epoch in force: its arrivals' workers
		 * start (before the round's time is chosen: starting them is
		 * the host's time), who has left is ended.
		 */
		R->ein = x->set && r > 1
				 ? story_epoch_in(a->pl, x->set,
						  story_since_s(a->t0, a->n))
				 : 0;
		round_wait(a, r, R);
		if (round_open(a, r, R) || round_predict(a, r, R) ||
		    round_measure(a, r, R))
			return -1;
		/* the page changed the story: the run is planned again */
		if (atomic_load(&x->replan)) {
			results_end_run(x->res, "replanned");
			a->run_open = false;
			a->rc = ATTEMPT_REPLAN;
			return -1;
		}
		round_tally(a, R);
		if (round_judge(a, r, R)) {
			a->rc = ATTEMPT_RETRY;
			return -1;
		}
		if (R->ok == 0 && !any_running(a->f, p->ntasks) &&
		    !story_to_come(x->set, a->ran, R->ein))
			break;
	}
	/* the page's cuts are the teacher's again: the story is played */
	view_srv_replan(x->view, NULL, NULL);
	if (atomic_exchange(&x->replan, false))
		fprintf(x->out, "run: the page's %s came as the rounds ended: "
			"the run is not planned again\n",
			x->page.cut ? "cut" : "repair");
	return 0;
}
