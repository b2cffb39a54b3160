// SPDX-License-Identifier: MIT
/*
 * One session (see session.h): the orchestration of a run, from the plan
 * to the stored results, with dilation calibration (--dilation auto: an
 * attempt whose first round is degraded is stored as 'recalibrated' and
 * the session tries again at the dilation the monitor suggests).
 */
#include "tools/session/session.h"
#include "tools/session/session_impl.h"

#include <errno.h>
#include <time.h>
#include <inttypes.h>
#include <math.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <json-c/json.h>

#include "emu/fleet.h"
#include "emu/monitor.h"
#include "emu/lab.h"
#include "emu/netns.h"
#include "emu/nl.h"
#include "emu/traffic.h"
#include "tools/session/counters.h"
#include "tools/session/linkload.h"
#include "tools/planout.h"
#include "tools/session/play.h"
#include "tools/session/story.h"
#include "tools/view/srv.h"
#include "tools/results/results.h"
#include "twin/addr.h"
#include "twin/lpset.h"
#include "twin/predict.h"
#include "twin/sched.h"
#include "twin/wire.h"
#include "tools/twinlab.h"

/* An error or warning, "twinlab: <message>", where the session writes. */
void session_say(const struct run_ctx *x, const char *fmt, ...)
{
	va_list ap;

	fprintf(x->out, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(x->out, fmt, ap);
	va_end(ap);
	fputc('\n', x->out);
	fflush(x->out);
}

/*
 * Whether task t of a followed set is the last of its line (no later task
 * carries it on over new trees), or the run follows no set.
 */
bool session_slot_at_end(const struct lpset *set, int t)
{
	for (int u = t + 1; set && u < set->sc->ntasks; u++)
		if (set->prev[u] == t)
			return false;
	return true;
}

/*
 * How long, in emulated seconds, the last packets of a round may still be
 * on their way once the round is over: the ACKs of the last upload travel
 * back over its whole path, and the round ends when the data arrived. The
 * longest path's propagation, with a margin for the delay line.
 */
static double drain_s(const struct plan *p, double dilation)
{
	double km = 0;

	for (int t = 0; t < p->ntasks; t++) {
		const struct task_plan *tp = &p->tasks[t];

		if (tp->blocked)
			continue;
		for (int m = 1; m < tp->nmodels; m++)
			km = fmax(km, fmax(tp->up.path[m].km,
					   tp->bcast.path[m].km));
	}
	return net_in_flight_s(km) * dilation +
	       (double)SESSION_DRAIN_MARGIN_NS / 1e9;
}

#define SESSION_LATE_RETRIES 2

/* the longest the workers' handshakes may cross the delay line at once
 * (host seconds; later ones are delayed, as are those of workers that
 * start during the rounds) */
#define SESSION_AT_ONCE_S 30.0

/*
 * The longest a fibre stays cut (to its repair), scenario seconds, over
 * every cut of the scenario (0: none; a cut never repaired is refused by
 * the timeline); of those, the longest over a fibre the plan lit
 * lightpaths over, in *used, with its fibre and times.
 */
static double longest_outage(const struct plan *p, double *used, int *fib,
			     double *from, double *to)
{
	const struct scenario *sc = p->sc;
	double any = 0;

	*used = 0;
	for (int i = 0; i < sc->nevents; i++) {
		const struct scn_event *c = &sc->events[i];
		double w = INFINITY;
		bool lit = false;

		if (c->kind != SCN_EV_CUT)
			continue;
		for (int j = i + 1; j < sc->nevents && isinf(w); j++)
			if (sc->events[j].kind == SCN_EV_REPAIR &&
			    sc->events[j].fibre == c->fibre)
				w = sc->events[j].at_s - c->at_s;
		if (isinf(w))
			continue;
		any = fmax(any, w);
		for (int l = 0; l < p->net->nlp && !lit; l++)
			for (int f = 0; f < p->net->lp[l].nfib && !lit; f++)
				lit = p->net->lp[l].fib[f] == c->fibre;
		if (lit && w > *used) {
			*used = w;
			*fib = c->fibre;
			*from = c->at_s;
			*to = c->at_s + w;
		}
	}
	return any;
}

/* Build the emulation or use the one up; the run's record and pictures. */
static int att_begin(struct attempt *a)
{
	ATT_LOCALS;
	int e;

	x->built = x->retry = false;
	x->status = NULL;
	x->suggest = 0;
	snprintf(x->verdict, sizeof(x->verdict), "faithful");
	a->outage = longest_outage(p, &a->used, &a->ofib, &a->ofrom, &a->oto);
	if (a->used * n > SESSION_OUTAGE_WAIT_MAX_S) {
		const struct scn_fibre *fb = &p->sc->fibres[a->ofib];

		session_say(x,
		    "fibre %s-%s is cut from %g s to %g s of scenario "
		    "time: at dilation %g the tasks over it would wait %.0f s "
		    "for the repair, more than %d s (repair it sooner, or "
		    "run at a lower --dilation)",
		    p->sc->nodes[fb->a].name, p->sc->nodes[fb->b].name,
		    a->ofrom, a->oto, n, a->used * n,
		    SESSION_OUTAGE_WAIT_MAX_S);
		return -1;
	}
	if (x->deployed) {
		fprintf(x->out,
			"run: %s, scheduler %s, %u rounds, prefix '%s', "
			"dilation %g: on its deployment, node by node\n",
			p->sc->name, x->ops->name, x->fo.rounds, x->lo.prefix,
			n);
	} else if (lab_exists(x->lo.prefix)) {
		fprintf(x->out,
			"run: %s, scheduler %s, %u rounds, prefix '%s', "
			"dilation %g: using the emulation that is up\n",
			p->sc->name, x->ops->name, x->fo.rounds, x->lo.prefix,
			n);
	} else {
		fprintf(x->out,
			"run: %s, scheduler %s, %u rounds, prefix '%s', "
			"dilation %g: building\n",
			p->sc->name, x->ops->name, x->fo.rounds, x->lo.prefix,
			n);
		fflush(x->out);
		e = lab_up(p, x->a, &x->lo, &a->lab, a->err, sizeof(a->err));
		if (e) {
			session_say(x, "%s", a->err);
			return -1;
		}
		x->built = true;
	}
	fflush(x->out);
	{
		char *dot = NULL;
		size_t dlen = 0;
		FILE *mf = open_memstream(&dot, &dlen);

		/* a followed timeline's network as it starts (without the
		 * lightpaths only later epochs light) */
		if (mf) {
			if (plan_dot(x->tl ? x->tl->e[0].plan : p, mf)) {
				/* the picture is optional; the run is not */
			}
			fclose(mf);
		}
		e = results_begin_run(x->res, p, x->scenario_path,
				      x->scenario_text, x->json_text, dot,
				      x->lo.prefix, x->fo.rounds, a->err,
				      sizeof(a->err));
		free(dot);
	}
	if (e) {
		session_say(x, "%s", a->err);
		return -1;
	}
	a->run_open = true;
	/* each task's trees, drawn from the plan that runs (report) */
	for (int t = 0; t < p->ntasks; t++) {
		char *dot = NULL;
		size_t dlen = 0;
		FILE *mf;

		if (story_line_of(x->set, t) !=
		    t) /* its line's first is drawn */
			continue;
		mf = open_memstream(&dot, &dlen);
		if (!mf)
			break;
		e = plan_dot_task(p, t, mf);
		if (fclose(mf) || e ||
		    results_picture(x->res, p->tasks[t].task->name, dot))
			session_say(x, "warning: task '%s': its picture is not stored",
			    p->tasks[t].task->name);
		free(dot);
	}
	return 0;
}

/* The counters, the monitor, the per-task state, the workers' options. */
static int att_prepare(struct attempt *a)
{
	ATT_LOCALS;
	int e;

	if (x->agents_via) {
		char why[512];

		e = counters_agents(p, x->agents_via, x->lo.prefix,
				    x->deployed, x->stop, &a->ag, why,
				    sizeof(why));
		if (e) {
			session_say(x, "%s", why);
			return -1;
		}
		a->am.a = a->ag;
		fprintf(x->out, "run: the nodes' counters are read by agents "
			"started by '%s'\n", x->agents_via[0]);
	}
	e = counters_open(p, x->set, x->lo.prefix, a->ag, false, &a->ctr,
			  &a->nctr, &a->nsc, &a->nnsc);
	if (!e && x->deployed) {
		char why[512];

		e = counters_deployed(p, lab_digest(p, x->a, NULL), a->ag,
				      a->ctr, a->nctr, n, why, sizeof(why));
		if (e) {
			session_say(x, "%s", why);
			return -1;
		}
	}
	if (!e)
		e = servers_monitor(p, x->lo.prefix, a->ag ? &a->am : NULL,
				    &a->mon);
	if (e) {
		session_say(x, "cannot open the link counters: %s", strerror(-e));
		return -1;
	}
	a->rr = calloc((size_t)p->ntasks + 1, sizeof(*a->rr));
	a->ls = calloc((size_t)a->nctr + 1, sizeof(*a->ls));
	a->meas = calloc((size_t)p->ntasks + 1, sizeof(*a->meas));
	a->pm = calloc((size_t)p->ntasks + 1, sizeof(*a->pm));
	a->quiet = calloc((size_t)p->ntasks + 1, sizeof(*a->quiet));
	a->frac = calloc((size_t)p->ntasks + 1, sizeof(*a->frac));
	a->interr = calloc((size_t)p->sc->nevents + 1, sizeof(*a->interr));
	a->first = malloc(((size_t)(x->set ? x->set->nepochs : 0) + 1) *
			  sizeof(*a->first));
	for (int k = 0; a->first && x->set && k < x->set->nepochs; k++)
		a->first[k] = NAN;
	a->busy = calloc((size_t)plan_nlinks(p) + 1, sizeof(*a->busy));
	a->acc0 = calloc((size_t)p->ntasks + 1, sizeof(*a->acc0));
	a->acc1 = calloc((size_t)p->ntasks + 1, sizeof(*a->acc1));
	a->done = calloc((size_t)p->ntasks + 1, sizeof(*a->done));
	a->cmp = calloc((size_t)p->ntasks + 1, sizeof(*a->cmp));
	a->checks = calloc((size_t)p->ntasks + 1, sizeof(*a->checks));
	a->ran = calloc((size_t)p->ntasks + 1, sizeof(*a->ran));
	a->told = calloc((size_t)p->ntasks + 1, sizeof(*a->told));
	a->joined = calloc((size_t)p->ntasks + 1, sizeof(*a->joined));
	a->absent = calloc((size_t)p->ntasks + 1, sizeof(*a->absent));
	a->carried = calloc((size_t)p->ntasks + 1, sizeof(*a->carried));
	a->leave = calloc((size_t)p->ntasks + 1, sizeof(*a->leave));
	a->lost_why = calloc((size_t)p->ntasks + 1, sizeof(*a->lost_why));
	if (p->sc->nevents)
		a->nmo = scn_moments(p->sc, &a->mo);
	if (!a->rr || !a->ls || !a->meas || !a->pm || !a->busy || !a->acc0 ||
	    !a->acc1 || !a->done || !a->cmp || !a->checks || !a->ran || !a->told ||
	    !a->joined || !a->absent || !a->carried || !a->leave ||
	    !a->lost_why || !a->quiet || !a->frac || !a->interr ||
	    !a->first ||
	    a->nmo < 0) {
		session_say(x, "out of memory");
		return -1;
	}
	for (int t = 0; t < p->ntasks; t++) {
		a->checks[t] = true;
		a->ran[t] = !p->tasks[t].blocked;
		a->carried[t] = !session_slot_at_end(x->set, t);
		atomic_init(&a->leave[t], 0);
		if (x->set)
			lpset_lost_why(x->set, t, a->lost_why[t],
				       sizeof(a->lost_why[t]));
	}
	{
		bool in;

		a->page_seen = view_srv_changes(x->view, &in);
	}
	x->fo.leave = x->set ? a->leave : NULL;
	x->fo.lost_why = x->set ? a->lost_why : NULL;
	x->fo.carried = x->set ? a->carried : NULL;
	x->fo.dilation = n;
	x->fo.stop = x->stop;
	x->fo.halt = &x->replan;
	/* a task over a cut fibre waits for its repair, not past it */
	x->fo.timeout_s = 60 + 2 * n + a->outage * n;
	/*
	 * The delay line is watched: if its supervisor ends, every task
	 * fails at once, naming it (not after the workers' timeout); if the
	 * line itself restarts during a round, that round is degraded.
	 */
	x->fo.watch = false;
	if (!x->deployed && !lab_delay_pid(x->lo.prefix, &a->sup)) {
		a->watch_fd = (int)syscall(SYS_pidfd_open, a->sup, 0);
		snprintf(a->watch_what, sizeof(a->watch_what),
			 "the delay line's "
			 "supervisor (pid %d) ended: packets would no longer "
			 "be delayed ('twinlab down --prefix %s' and run "
			 "again)",
			 (int)a->sup, x->lo.prefix);
		x->fo.watch = a->watch_fd >= 0;
		x->fo.watch_fd = a->watch_fd;
		x->fo.watch_what = a->watch_what;
		/* how late it lets packets go, round by round */
		e = lab_delay_live_open(x->lo.prefix, &a->dlc);
		if (e)
			session_say(x, "warning: the delay line's counters in %s/%s "
			    "cannot be read (%s): its lateness is not judged",
			    LAB_STATE_DIR, x->lo.prefix, strerror(-e));
		else
			monitor_watch_delay(a->mon, a->dlc);
	} else {
		/* not this host's: the routers' own, through their agents */
		a->am.delay = a->ag != NULL;
	}
	a->drain_ns = (uint64_t)(drain_s(p, n) * 1e9);
	return 0;
}

/* The workers, and the background traffic's generator. */
static int att_start(struct attempt *a)
{
	ATT_LOCALS;
	int e;

	fprintf(x->out, "run: starting the workers\n");
	fflush(x->out);
	/*
	 * Their handshakes cross the delay line at once: before the first
	 * round nothing else moves, and a handshake over the dilated
	 * network cost a round trip of the longest path, N times over
	 * (3 s of NSFNET's 4.6 s start at N 64). What a connection keeps
	 * of it is its first RTT sample: the next is a round's, and the
	 * routes' least RTO is the dilated one whatever the sample.
	 */
	lab_delay_at_once(a->dlc, SESSION_AT_ONCE_S);
	e = fleet_start(p, x->a, &x->fo, &a->f, a->err, sizeof(a->err));
	lab_delay_at_once(a->dlc, 0);
	if (e) {
		session_say(x, "%s", a->err);
		return -1;
	}
	if (x->fo.via)
		fprintf(x->out, "run: workers started by '%s', their clocks "
			"matched to this host's within %.1f us\n",
			x->fo.via[0], (double)fleet_clock_error_ns(a->f) / 1e3);
	/* background traffic: its generator, ready before the first round */
	if (p->nbg) {
		e = lab_traffic_start(p, x->set, x->a, x->lo.prefix, n, &a->tg,
				      a->err, sizeof(a->err));
		if (e) {
			session_say(x, "%s", a->err);
			return -1;
		}
	}
	return 0;
}

/*
 * auto means a faithful run: one degraded after its calibration round
 * (the host slowed later, or round 1 was faithful by a hair) is run again
 * at the dilation the monitor names, twice at most (what came now and
 * then: at the same N once, see monitor_next). Whether it is.
 */
static bool run_again(struct attempt *a)
{
	ATT_LOCALS;
	double next = a->degraded && x->auto_n && x->built &&
			      !strcmp(x->status, "ok") &&
			      x->late_retries < SESSION_LATE_RETRIES ?
			      monitor_next(n, x->suggest, !a->not_passing,
					   &x->same_rerun) : 0;

	if (!(next > 0 && next <= LAB_DILATION_MAX))
		return false;
	x->suggest = next;
	x->late_retries++;
	x->retry = true;
	results_end_run(x->res, "recalibrated");
	a->run_open = false;
	fprintf(x->out,
		"run: dilation %g was not faithful in %u of %u rounds (%s); "
		"running again at %g%s\n",
		n, a->degraded, a->rounds_run, a->first_why, next,
		next == n ? " (it came now and then; a second run may not "
			    "meet it)" : "");
	a->rc = ATTEMPT_RETRY;
	return true;
}

/* The run's summaries, verdict and status: a->rc. */
static void att_finish(struct attempt *a)
{
	ATT_LOCALS;

	for (int t = 0; t < p->ntasks; t++) {
		const char *why;

		if (a->ran[t] && fleet_failed(a->f, t, &why)) {
			a->failed++;
			results_task_failed(x->res, t, why);
		} else if (a->ran[t] && !a->checks[t]) {
			a->failed++;
			results_task_failed(x->res, t,
					    "correctness check failed");
		}
	}
	if (a->ll) {
		long lost, stored = linkload_stop(a->ll, x->res, &lost);

		a->ll = NULL;
		if (stored < 0)
			session_say(x, "warning: the links' load is not stored");
		else
			fprintf(x->out,
				"links: %ld readings of their load over "
				"%.6f s of scenario time%s\n",
				stored, a->t_end,
				lost ? " (more were not kept)" : "");
	}
	if (p->sc->nevents)
		story_say_events(x->out, p, x->set, a->mo, a->nmo, &a->said,
				 a->t_end);
	story_say_moves(x->out, x->set, a->pl, &a->shown);
	if (a->pl && x->set) {
		char why[320];

		story_follow_summary(x->out, x->res, x->set, a->pl, a->first,
				     a->interr, a->t_end, &a->unstored_events);
		if (play_stop(a->pl, why, sizeof(why)) < 0)
			session_say(x, "%s", why);
		a->pl = NULL;
		if (a->unstored_events)
			session_say(x, "warning: the events are not stored");
	} else if (a->pl) {
		char why[320];
		int played = play_stop(a->pl, why, sizeof(why));

		a->pl = NULL;
		if (played < 0)
			session_say(x, "%s", why);
		story_cut_summary(x->out, p, a->t_end, a->interr);
		if (story_store_cuts(x->res, p, a->t_end, a->interr))
			session_say(x, "warning: the cuts are not stored");
	}
	if (p->nbg) {
		story_tg_summary(x->out, p, x->set, a->tg, a->t_end);
		/* a followed timeline stores them as its epochs */
		if (!x->set && story_store_traffic(x->res, p, a->t_end))
			session_say(x, "warning: the traffic's events are not stored");
	}
	story_summary(x->out, p, x->set, a->f, a->meas, a->pm, a->done, a->cmp,
		      a->acc0, a->acc1, a->checks, a->ran);
	fprintf(x->out, "prediction: the twin's %s model\n", p->predictor);
	if (a->compared && a->link_pred > 0)
		fprintf(x->out,
			"bandwidth: %.0f bytes per round sent on the IP links "
			"that carry transfers; the twin predicts %.0f bytes on "
			"the wire there (measured/predicted %.3f, %u of %u "
			"rounds compared)\n",
			a->link_meas / a->compared, a->link_pred / a->compared,
			a->link_meas / a->link_pred, a->compared,
			a->rounds_run);
	else if (a->rounds_run)
		fprintf(x->out, "bandwidth: not compared (no round had every "
			"task done in whole, or the links' counters could not "
			"be read)\n");
	if (a->page_rounds)
		fprintf(x->out, "live view: %u of %u rounds touched by a cut, "
			"repair or traffic from the page, which no prediction "
			"has: not judged on the host's retransmissions or "
			"compared with the twin\n", a->page_rounds,
			a->rounds_run);
	/* a round that failed (no task completed it) has no dilation to
	 * suggest: the monitor's judgement of pace did not degrade it */
	if (a->degraded) {
		char sug[64] = "";

		if (x->suggest > 0)
			snprintf(sug, sizeof(sug), "; about dilation %g would "
				 "be faithful", x->suggest);
		snprintf(x->verdict, sizeof(x->verdict),
			 "degraded: %u of %u rounds; %.150s%s", a->degraded,
			 a->rounds_run, a->first_why, sug);
	}
	if (a->rounds_run)
		fprintf(x->out,
			"host: the delay line held %" PRIu64 " packets, "
			"late %.2f us on average, %.2f us at worst; runnable "
			"threads %.1f on average, %" PRIu64 " at most; the "
			"CPUs taken away %.3f %% of the time (%.3f %% beyond "
			"the shapers' buckets), %.2f us at once at worst "
			"(scenario time)\n",
			a->dl_pk,
			a->dl_pk ? a->dl_late / (double)a->dl_pk * 1e6 : 0,
			a->dl_max * 1e6, a->rq_sum / a->rounds_run, a->rq_max,
			a->wall_s > 0 ? a->stall_s / a->wall_s * 100 : 0,
			a->wall_s > 0 ? a->stall_over / a->wall_s * 100 : 0,
			a->stall_max * 1e6);
	fprintf(x->out, "fidelity: dilation %g, %s\n", n, x->verdict);
	results_verdict(x->res, n, x->verdict);
	/*
	 * What happened, in one word: aborted (stopped by a signal), failed
	 * (a task failed), partial (rounds ran but not all were stored),
	 * ok. Only ok runs are results; `report` leaves the others out.
	 */
	x->status = *x->stop	  ? "aborted"
		    : a->failed	  ? "failed"
		    : a->unstored ? "partial"
				  : "ok";
	if (run_again(a))
		return;
	if (a->unstored)
		session_say(x, "stored %u of %u rounds in %s: the run is partial",
		    a->rounds_run - a->unstored, a->rounds_run, x->db);
	a->run_open = false;
	if (results_end_run(x->res, x->status)) {
		session_say(x, "cannot store the run's status in %s", x->db);
		x->status = "partial";
	}
	fprintf(x->out, "results: %s (run %lld, %s)\n", x->db,
		(long long)results_run_id(x->res), x->status);
	a->rc = strcmp(x->status, "ok") ? ATTEMPT_FAILED : ATTEMPT_DONE;
	if (*x->stop)
		session_say(x, "interrupted");
}

/* What the attempt holds, released; the emulation down unless kept. */
static void att_release(struct attempt *a)
{
	ATT_LOCALS;

	/*
	 * The monitor first: its threads that keep the CPUs awake would
	 * spin on through the teardown, taking the CPU from every worker's
	 * exit, and at SCHED_IDLE they are the threads that cannot run
	 * while this process reaps the workers beside a busy process.
	 */
	monitor_free(a->mon);
	a->mon = NULL;
	if (a->pl) {
		char why[320];

		play_stop(a->pl, why, sizeof(why));
	}
	if (a->ll) {
		long lost;

		linkload_stop(a->ll, NULL, &lost);
	}
	tg_stop(a->tg);
	fleet_stop(a->f);
	if (a->watch_fd >= 0)
		close(a->watch_fd);
	lab_delay_live_close(a->dlc);
	counters_close(a->ctr, a->nsc, a->nnsc);
	agents_mon_free(&a->am);
	agents_stop(a->ag);
	a->ag = NULL;
	lab_free(a->lab);
	if (x->built && (!x->keep || a->rc == ATTEMPT_RETRY ||
			  a->rc == ATTEMPT_REPLAN))
		lab_down(x->lo.prefix, NULL, NULL);
	else if (x->built)
		fprintf(x->out,
			"kept: the emulation stays up under prefix '%s' "
			"('twinlab down --prefix %s' removes it)\n",
			x->lo.prefix, x->lo.prefix);
	free(a->rr);
	free(a->ls);
	free(a->meas);
	free(a->pm);
	free(a->quiet);
	free(a->frac);
	free(a->interr);
	free(a->first);
	free(a->mo);
	free(a->busy);
	free(a->acc0);
	free(a->acc1);
	free(a->done);
	free(a->cmp);
	free(a->checks);
	free(a->ran);
	free(a->told);
	free(a->joined);
	free(a->absent);
	free(a->carried);
	plan_free(a->own);
	free(a->leave);
	free(a->lost_why);
	x->fo.leave = NULL;
	x->fo.lost_why = NULL;
	x->fo.carried = NULL;
}

/*
 * Where an attempt's wall time went: building the emulation, starting the
 * workers (until every one is connected and ready), the rounds (with
 * storing them and the summary), tearing down.
 */
static void say_phases(struct run_ctx *x, const uint64_t at[5])
{
	double s[4], all = (double)(at[4] - at[0]) / 1e9;

	for (int k = 0; k < 4; k++)
		s[k] = (double)(at[k + 1] - at[k]) / 1e9;
	fprintf(x->out, "host time: %.1f s: build %.1f s, workers %.1f s, "
			"rounds %.1f s (%.0f %%), teardown %.1f s\n",
		all, s[0], s[1], s[2], all > 0 ? 100 * s[2] / all : 0, s[3]);
	fflush(x->out);
}

/*
 * A cut or repair from the live view (its thread, view_replan_fn): one the
 * run's story can take is its story from then on, and the run is planned
 * again (checked on a copy here, so sc is only read).
 */
static int page_change(void *ctx, int fibre, bool cut, double at_s, bool dry,
		       char *why, size_t len)
{
	struct run_ctx *x = ctx;
	struct scn_error se;
	int e;

	if (!dry) {
		x->page.fibre = fibre;
		x->page.cut = cut;
		x->page.at_s = at_s;
		atomic_store(&x->replan, true);
		return 0;
	}
	if (atomic_load(&x->replan)) {
		snprintf(why, len, "the run is being planned again for the "
			 "last change from the page: wait for it to start "
			 "again");
		return -EBUSY;
	}
	if (x->replans >= SESSION_REPLANS_MAX) {
		snprintf(why, len, "this run was planned again %d times for "
			 "the page's changes, its most", x->replans);
		return -EBUSY;
	}
	e = scenario_add_fibre_event(x->sc, fibre, cut, at_s, true, &se);
	if (e)
		snprintf(why, len, "the run's story cannot take it: %s",
			 se.msg);
	return e;
}

/* One run at x->lo.dilation: build, start, rounds, verdict, tear down. */
static int attempt(struct run_ctx *x)
{
	struct attempt a = {
		.x = x,
		.p = x->p,
		.n = x->lo.dilation,
		.watch_fd = -1,
		.rc = ATTEMPT_FAILED,
	};

	/* host time of each phase: build, workers, rounds, teardown */
	uint64_t at[5] = { mono_ns() };
	int ph = 0;

	if (!att_begin(&a) && !att_prepare(&a)) {
		at[++ph] = mono_ns();
		if (!att_start(&a)) {
			at[++ph] = mono_ns();
			/* the view (run or experiment --view) shows it */
			if (view_srv_show(x->view, x->lo.prefix, x->p, x->a,
					  a.n))
				fprintf(x->out, "run: warning: the view cannot "
						"show this run\n");
			else if (x->follow)
				view_srv_replan(x->view, page_change, x);
			if (!session_rounds(&a))
				att_finish(&a);
			at[++ph] = mono_ns();
		}
	}
	view_srv_show(x->view, NULL, NULL, NULL, 0);
	/* begun and not ended: refused or failed before its rounds ended */
	if (a.run_open)
		results_end_run(x->res, *x->stop ? "aborted" : "failed");
	att_release(&a);
	at[++ph] = mono_ns();
	if (ph == 4)
		say_phases(x, at);
	return a.rc;
}

/*
 * A run that follows its timeline: every epoch scheduled by the policy
 * (timeline.h), the set of their lightpaths (lpset.h: a task whose trees
 * change is carried on by another of its own), the first epoch's plan the
 * one that runs, every epoch's predicted as scheduled. (A task that would
 * wait for ever, a cut never repaired with no way round, is followed: it
 * fails at the cut.) 0 or an exit code.
 */
static int follow(struct run_ctx *x, const struct scenario *sc,
		  enum resched policy)
{
	char why[320];
	int e = lpset_follow(sc, x->ops, policy, x->predict, &x->tl, &x->set,
			     why, sizeof(why));

	if (e) {
		session_say(x, "%s", why);
		return e == -ENOMEM ? 1 : EXIT_USAGE;
	}
	x->p = x->set->plan[0];
	for (int k = 0; k < x->set->nepochs; k++) {
		e = x->predict(x->set->plan[k]);
		if (e) {
			session_say(x, "cannot predict '%s': %s", sc->name,
			    predict_strerror(e));
			return EXIT_USAGE;
		}
	}
	x->lo.set = x->set;
	return 0;
}

/* x->scenario_text: sc as the run plays it, events and all. 0, or 1 said. */
static int story_text(struct run_ctx *x, const struct scenario *sc)
{
	size_t tlen = 0;
	FILE *tf;

	free(x->scenario_text);
	x->scenario_text = NULL;
	tf = open_memstream(&x->scenario_text, &tlen);
	if (!tf || scenario_write(sc, tf) || fclose(tf)) {
		session_say(x, "out of memory");
		free(x->scenario_text);
		x->scenario_text = NULL;
		return 1;
	}
	return 0;
}

/* What plan_run made, released (x->p with its set when there is one). */
static void plans_release(struct run_ctx *x)
{
	free(x->json_text);
	x->json_text = NULL;
	addressing_free(x->a);
	x->a = NULL;
	if (x->set)
		lpset_free(x->set);	/* and x->p, its first epoch's */
	else
		plan_free(x->p);
	x->set = NULL;
	x->lo.set = NULL;
	x->p = NULL;
	timeline_free(x->tl);
	x->tl = NULL;
}

/*
 * A run's scenario, its events added (the text the run stores then holds
 * them, in x->scenario_text), refused where the run could not play it
 * (said on x->out). 0 and *out, or the exit status.
 */
static int run_scenario(struct run_ctx *x, const struct session_opts *o,
			struct scenario **out)
{
	struct scn_error se;
	struct scenario *sc;

	sc = scenario_load(o->scenario, &se);
	if (!sc) {
		print_scn_error(x->out, &se);
		return EXIT_USAGE;
	}
	if (o->events) {
		if (scenario_load_events(sc, o->events, &se)) {
			print_scn_error(x->out, &se);
			scenario_free(sc);
			return EXIT_USAGE;
		}
		/* the run's record holds the events it played */
		if (story_text(x, sc)) {
			scenario_free(sc);
			return 1;
		}
	}
	if (refuse_relay(sc, o->scenario, x->out, o->predict) ||
	    refuse_events(sc, o->events ? o->events : o->scenario, x->out,
			  o->follow)) {
		free(x->scenario_text);
		x->scenario_text = NULL;
		scenario_free(sc);
		return EXIT_USAGE;
	}
	note_loss(sc, x->out);
	if (sc->nevents && scenario_traffic_all(sc)) {
		session_say(x, "out of memory");
		free(x->scenario_text);
		x->scenario_text = NULL;
		scenario_free(sc);
		return 1;
	}
	*out = sc;
	return 0;
}

/*
 * The emulation up under the run's prefix, used as it is where it is
 * the network of this run's plan (the same scenario file and scheduler,
 * and the digest it recorded), at the dilation it was built with. 0, or
 * -1 after saying why not.
 */
static int use_up(struct run_ctx *x, const char *scenario)
{
	char was[512] = "", how[64] = "", dv[64] = "", err[512];
	double was_n = 0;

	/* an emulation of the same plan (same scenario file and
	 * scheduler: the plan is deterministic) is used as it is,
	 * at the dilation it was built with */
	if (lab_state_get(x->lo.prefix, "scenario", was, sizeof(was)) ||
	    lab_state_get(x->lo.prefix, "scheduler", how, sizeof(how)) ||
	    strcmp(was, scenario) || strcmp(how, x->ops->name)) {
		session_say(x,
		    "prefix '%s' is up with another plan (scenario "
		    "'%s', scheduler '%s'): take it down first or "
		    "choose another --prefix",
		    x->lo.prefix, was[0] ? was : "?", how[0] ? how : "?");
		return -1;
	}
	if (lab_state_get(x->lo.prefix, "dilation", dv, sizeof(dv)) ||
	    sscanf(dv, "%lf", &was_n) != 1 ||
	    !(was_n >= 1 && was_n <= LAB_DILATION_MAX)) {
		session_say(x,
		    "prefix '%s' records no valid dilation: take it "
		    "down first",
		    x->lo.prefix);
		return -1;
	}
	if (!x->auto_n && x->lo.dilation != was_n) {
		session_say(x, "prefix '%s' is up at dilation %g, not %g", x->lo.prefix,
		    was_n, x->lo.dilation);
		return -1;
	}
	/* the same file may have been edited since: the network it
	 * built must be the one this run plans, or nothing measured
	 * on it is this plan's */
	if (lab_same(x->lo.prefix, x->p, x->a, NULL, was_n, err, sizeof(err))) {
		session_say(x, "%s", err);
		return -1;
	}
	x->lo.dilation = was_n;
	return 0;
}

/*
 * Whether a run can play sc on a deployment of parts: the parts' prefixes
 * fit, and nothing is to be played in namespaces of this host (said).
 */
static bool deployable(const struct run_ctx *x, const struct scenario *sc)
{
	char longest[LAB_PREFIX_MAX + 16];

	lab_part_prefix(x->lo.prefix, sc->nnodes - 1, longest,
			sizeof(longest));
	if (!lab_prefix_ok(longest)) {
		session_say(x, "prefix '%s' cannot name %s's parts: '%s' is "
		    "longer than %d characters", x->lo.prefix, sc->name,
		    longest, LAB_PREFIX_MAX);
		return false;
	}
	if (sc->nevents || sc->nbg) {
		session_say(x, "'%s' has events or background traffic, which "
		    "a run plays in namespaces of its own host: not on a "
		    "deployment of other hosts' nodes yet", sc->name);
		return false;
	}
	return true;
}

/*
 * The run's plan of sc: every epoch of its timeline (o->follow) or the
 * plan alone, predicted and addressed, and its JSON for the record. 0,
 * or the exit status after saying why (what was made is x's, freed with
 * it).
 */
static int plan_run(struct run_ctx *x, struct scenario *sc,
		    const struct session_opts *o)
{
	char err[512];
	int e = 0;

	if (o->follow) {
		e = follow(x, sc, o->resched);
		if (e)
			return e;
	} else {
		x->p = sched_plan(sc, x->ops);
		if (!x->p)
			e = -errno;
		if (!e)
			e = plan_traffic_windows(x->p, 0);
		if (!e)
			e = plan_cut_windows(x->p, 0);
		if (e) {
			session_say(x, "cannot schedule '%s': %s", sc->name,
				    strerror(-e));
			return EXIT_USAGE;
		}
		e = x->predict(x->p);
		if (e) {
			session_say(x, "cannot predict a round of '%s': %s",
				    sc->name, predict_strerror(e));
			return EXIT_USAGE;
		}
	}
	story_print_traffic(x->out, x->p, x->set);
	for (int t = 0; t < x->p->ntasks; t++) {
		struct wire_msg wm;

		if (!x->p->tasks[t].blocked &&
		    !wire_message(sc, x->p->tasks[t].task, &wm) &&
		    (!x->min_segments || wm.segments < x->min_segments))
			x->min_segments = wm.segments;
	}
	if (fleet_check_memory(x->p, x->fo.samples_per_local, !o->deployed,
			       err, sizeof(err))) {
		session_say(x, "%s", err);
		return EXIT_USAGE;
	}
	x->a = addressing_new(x->p);
	if (!x->a) {
		session_say(x, "cannot address '%s': %s", sc->name,
			    strerror(errno));
		return 1;
	}
	{
		struct json_object *j = plan_json(x->tl ? x->tl->e[0].plan :
							  x->p);

		x->json_text = j ? strdup(json_object_to_json_string(j)) :
				   NULL;
		json_object_put(j);
	}
	return 0;
}

/*
 * The page's cut or repair (x->page) added to the run's story, and the
 * story planned again as plan_run first did: the next attempt plays it
 * from the start, the change a scripted one at its time. 0 or the exit
 * status after saying why.
 */
static int replan(struct run_ctx *x, struct scenario *sc,
		  const struct session_opts *o)
{
	const struct scn_fibre *f = &sc->fibres[x->page.fibre];
	struct scn_error se;
	int e;

	atomic_store(&x->replan, false);
	x->replans++;
	e = scenario_add_fibre_event(sc, x->page.fibre, x->page.cut,
				     x->page.at_s, false, &se);
	if (!e)
		e = scenario_traffic_all(sc);
	if (e) {
		session_say(x, "cannot add the page's %s to the story: %s",
			    x->page.cut ? "cut" : "repair",
			    e == -ENOMEM ? "out of memory" : se.msg);
		return 1;
	}
	fprintf(x->out, "run: %s of fibre %s-%s at %.3f s from the live "
		"view: planning the run again with it in the story (%d of "
		"at most %d)\n", x->page.cut ? "cut" : "repair",
		sc->nodes[f->a].name, sc->nodes[f->b].name, x->page.at_s,
		x->replans, SESSION_REPLANS_MAX);
	/* the run's record holds the story it played */
	if (story_text(x, sc))
		return 1;
	plans_release(x);
	x->min_segments = 0;
	return plan_run(x, sc, o);
}

int session_run(const struct session_opts *o, struct session_result *res)
{
	struct run_ctx x = {
		.ops = o->ops,
		.auto_n = o->auto_n,
		.predict = o->predict,
		.keep = o->keep,
		.view = o->view,
		.out = o->out,
		.stop = o->stop,
		.db = o->db,
		.lo = {.prefix = o->prefix,
		       .delay = true,
		       .dilation = o->dilation,
		       .hosts = o->hosts},
		.fo = {.timeout_s = 60, .cgroups = !o->via, .via = o->via,
		       .parts = o->deployed},
		.agents_via = o->agents_via,
		.deployed = o->deployed,
	};
	struct scenario *sc;
	int rc = 1;
	char err[512] = "";
	unsigned rounds = o->rounds;

	memset(res, 0, sizeof(*res));
	x.scenario_path = x.lo.scenario_path = o->scenario;
	rc = run_scenario(&x, o, &sc);
	if (rc)
		return rc;
	x.sc = sc;
	x.follow = o->follow && o->page_replans && !o->deployed &&
		   o->hosts <= 1;
	atomic_init(&x.replan, false);
	rc = 1;
	if (o->deployed && !deployable(&x, sc)) {
		rc = EXIT_USAGE;
		goto out;
	}
	x.fo.prefix = x.lo.prefix;
	if (!rounds)
		for (int t = 0; t < sc->ntasks; t++)
			rounds = sc->tasks[t].rounds > rounds ?
					 sc->tasks[t].rounds : rounds;
	x.fo.rounds = rounds ? rounds : 1;
	/* every task plays them all: the twin counts as many */
	set_rounds(sc, x.fo.rounds);
	{
		char why[256];

		if (sched_fits(x.ops, sc, why, sizeof(why))) {
			session_say(&x, "%s", why);
			rc = EXIT_USAGE;
			goto out;
		}
	}
	rc = plan_run(&x, sc, o);
	if (rc)
		goto out;
	rc = 1;
	if (!x.deployed && (x.set || o->hosts > 1) &&
	    lab_exists(x.lo.prefix)) {
		session_say(&x, "prefix '%s' is up: a run %s builds its own "
		    "emulation%s; take it down first or choose another "
		    "--prefix", x.lo.prefix, x.set ? "that re-places tasks" :
		    "split over hosts", x.set ? " (with every lightpath of its "
		    "epochs)" : "");
		goto out;
	}
	if (!x.deployed && lab_exists(x.lo.prefix) && use_up(&x, o->scenario))
		goto out;
	/* opened once the emulation to use is known good: a refused run
	 * leaves no database behind */
	x.res = results_open(o->db, err, sizeof(err));
	if (!x.res || !x.json_text) {
		session_say(&x, "%s", x.json_text ? err : "out of memory");
		goto out;
	}
	if (!(x.lo.dilation >= 1))
		x.lo.dilation = 1;
	for (;;) {
		int a = attempt(&x);

		if (x.res && results_run_id(x.res) > 0) {
			res->run = results_run_id(x.res);
			res->dilation = x.lo.dilation;
			res->status = x.status;
			snprintf(res->verdict, sizeof(res->verdict), "%s",
				 x.verdict);
		}
		if (a == ATTEMPT_REPLAN && !*x.stop) {
			rc = replan(&x, sc, o);
			if (rc)
				break;
			continue;
		}
		if (a != ATTEMPT_RETRY || *x.stop) {
			rc = a == ATTEMPT_DONE && !*x.stop ? 0 : 1;
			break;
		}
		x.lo.dilation = x.suggest;
	}
out:
	results_close(x.res);
	free(x.scenario_text);
	plans_release(&x);
	scenario_free(sc);
	return rc;
}
