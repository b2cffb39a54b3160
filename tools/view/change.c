// SPDX-License-Identifier: MIT
/*
 * What the live view's page changes (srv_impl.h): a fibre cut or repaired
 * as 'twinlab cut' does, offered to a run that re-plans for it first;
 * background traffic back along a task's first transfer; each said to the
 * page as JSON and kept for its timeline.
 */
#include "tools/view/srv_impl.h"
#include "tools/twinlab.h"
#include "tools/json.h"
#include "tools/view/route.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/lab.h"
#include "emu/traffic.h"
#include "twin/clock.h"
#include "twin/plan.h"

/* What the page changed, for its timeline (shown held). */
static void __attribute__((format(printf, 2, 3)))
log_add(struct view *v, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&v->mu);
	if (v->nlog == VIEW_LOG)
		memmove(v->log, v->log + 1, sizeof(v->log[0]) * (VIEW_LOG - 1));
	v->nlog -= v->nlog == VIEW_LOG;
	v->log[v->nlog].t = view_scenario_now(v, mono_s());
	va_start(ap, fmt);
	vsnprintf(v->log[v->nlog].what, sizeof(v->log[v->nlog].what), fmt,
		  ap);
	va_end(ap);
	v->nlog++;
	pthread_mutex_unlock(&v->mu);
}

/* A query's number in [lo, hi], or NAN. */
static double query_num(struct MHD_Connection *c, const char *key, double lo,
			double hi)
{
	const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						    key);
	char *end;
	double x;

	if (!s || !*s)
		return NAN;
	errno = 0;
	x = strtod(s, &end);
	return *end || errno || !(x >= lo && x <= hi) ? NAN : x;
}

/*
 * Background traffic from the page: ?task=T&gbps=G&for_s=S sends G
 * Gbit/s for S scenario seconds from the receiving end of T's first
 * broadcast transfer back to its sender (lab_traffic_reverse), holding the
 * prefix's lock as it starts, one flow at a time. 0 and msg, or an exit
 * status with the reason in msg (by the sampler, shown held).
 */
static int traffic_start(struct view *v, const char *name, double gbps,
			 double for_s, char *msg, size_t len)
{
	char err[512];
	int t = -1, lock, e;

	if (!v->p) {
		snprintf(msg, len, "nothing is shown yet");
		return 1;
	}
	/* the task of that name that runs now (a followed timeline's plan
	 * lists a task again, blocked, where it runs over new trees) */
	for (int i = 0; name && i < v->p->ntasks; i++)
		if (!strcmp(v->p->tasks[i].task->name, name) &&
		    (t < 0 || v->p->tasks[t].blocked))
			t = i;
	if (t < 0 || isnan(gbps) || isnan(for_s) ||
	    for_s * v->dilation > 600) {
		snprintf(msg, len, "name a task and the traffic: ?task=T&gbps=G"
			 "&for_s=S (G in (0, 10000] Gbit/s; S scenario "
			 "seconds, at most 600 s of this host's time at "
			 "dilation %g)", v->dilation);
		return EXIT_USAGE;
	}
	if (v->tg && tg_wait_done(v->tg)) {
		tg_stop(v->tg);
		v->tg = NULL;
	}
	if (v->tg) {
		snprintf(msg, len, "traffic from the page is still running "
			 "(one flow at a time)");
		return 1;
	}
	lock = v->owner ? -1 :
			  lab_lock(v->prefix, "twinlab view", err, sizeof(err));
	if (!v->owner && lock < 0) {
		snprintf(msg, len, "%s", err);
		return 1;
	}
	e = lab_traffic_reverse(v->p, v->a, v->prefix, t, gbps, for_s,
				v->dilation, &v->tg, err, sizeof(err));
	if (!e && (e = tg_go(v->tg, mono_ns()))) {
		snprintf(err, sizeof(err), "cannot start it: %s",
			 strerror(-e));
		tg_stop(v->tg);
		v->tg = NULL;
	}
	lab_unlock(v->prefix, lock);	/* -1 (owner): nothing */
	if (e) {
		snprintf(msg, len, "traffic: %.480s", err);
		return 1;
	}
	{
		const struct ppath *pp = &v->p->tasks[t].bcast.path[1];
		const char *from = v->sc->nodes[pp->to].name;
		const char *to = v->sc->nodes[pp->from].name;

		snprintf(msg, len, "traffic: %s -> %s (back along %s's first "
			 "transfer), %g Gbit/s for %g s", from, to, name, gbps,
			 for_s);
		log_add(v, "traffic %s -> %s, %g Gbit/s for %g s from the page",
			from, to, gbps, for_s);
		v->changes++;
	}
	return 0;
}

/*
 * The page asks for traffic: the sampler starts it at its next sample
 * (traffic_start), the request suspended meanwhile (-EINPROGRESS: no
 * answer yet); called again once resumed, 0 and msg, or an exit status
 * with the reason in msg.
 */
static int traffic(struct view *v, struct MHD_Connection *c, char *msg,
		   size_t len)
{
	const char *name = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						       "task");
	int rc;

	pthread_mutex_lock(&v->mu);
	if (v->treq.pending && v->treq.asker == c) {
		if (!v->treq.done && !v->stop) {	/* not yet */
			MHD_suspend_connection(c);
			pthread_mutex_unlock(&v->mu);
			return -EINPROGRESS;
		}
		rc = v->treq.done ? v->treq.rc : 1;
		snprintf(msg, len, "%s",
			 v->treq.done ? v->treq.msg : "the view ends");
		v->treq.pending = false;
		v->treq.asker = NULL;
		pthread_mutex_unlock(&v->mu);
		return rc;
	}
	if (v->treq.pending || !v->sampling || v->stop) {
		snprintf(msg, len, "%s", v->treq.pending ?
			 "traffic is being started already" :
			 "the view is not sampling: nothing can start traffic");
		pthread_mutex_unlock(&v->mu);
		return 1;
	}
	snprintf(v->treq.task, sizeof(v->treq.task), "%s", name ? name : "");
	v->treq.gbps = query_num(c, "gbps", 1e-6, 1e4);
	v->treq.for_s = query_num(c, "for_s", 1e-6, 3600);
	v->treq.pending = true;
	v->treq.done = false;
	v->treq.asker = c;
	MHD_suspend_connection(c);
	pthread_mutex_unlock(&v->mu);
	return -EINPROGRESS;
}

void view_request_over(struct view *v, struct MHD_Connection *c)
{
	/* one that asked for traffic and went before its answer: the next
	 * may ask (the traffic, if started, runs its time) */
	pthread_mutex_lock(&v->mu);
	if (v->treq.pending && v->treq.asker == c) {
		v->treq.pending = false;
		v->treq.asker = NULL;
	}
	pthread_mutex_unlock(&v->mu);
}

/* The sampler: traffic the page asked for, if any (shown held). */
void view_traffic_asked(struct view *v)
{
	char task[64], msg[512];
	double gbps, for_s;
	int rc;

	pthread_mutex_lock(&v->mu);
	if (!v->treq.pending || v->treq.done) {
		pthread_mutex_unlock(&v->mu);
		return;
	}
	memcpy(task, v->treq.task, sizeof(task));
	gbps = v->treq.gbps;
	for_s = v->treq.for_s;
	pthread_mutex_unlock(&v->mu);
	rc = traffic_start(v, task, gbps, for_s, msg, sizeof(msg));
	pthread_mutex_lock(&v->mu);
	v->treq.rc = rc;
	memcpy(v->treq.msg, msg, sizeof(msg));
	v->treq.done = true;
	if (v->treq.asker) {
		MHD_resume_connection(v->treq.asker);
		view_kick(v);
	}
	pthread_mutex_unlock(&v->mu);
}

/*
 * Fibre a-b cut (or repaired: up) from the page, under shown: offered to
 * the run first when it re-plans for them (view_srv_replan), then made.
 * 0, EXIT_USAGE or 1 with msg.
 */
static int page_fibre(struct view *v, const char *a, const char *b, bool up,
		      struct fibre_done *d, char *msg, size_t len)
{
	int f = scenario_fibre(v->sc, scenario_find(v->sc, a),
			       scenario_find(v->sc, b));
	double at = -1;
	int rc;

	if (v->replan && f >= 0) {
		at = view_run_clock(v, mono_s());
		if (at < 0) {
			snprintf(msg, len, "the run's rounds have not started: "
				 "nothing to re-plan yet");
			return 1;
		}
		if (v->replan(v->replan_ctx, f, !up, at, true, msg, len))
			return 1;
	}
	rc = fibre_apply(v->prefix, a, b, up, "twinlab view", v->owner, d,
			 msg, len);
	if (rc)
		return rc;
	if (f >= 0)
		v->down[f] = !up;
	if (at >= 0) {
		size_t n = strlen(msg);

		/* the run's story now: planned again, not the teacher's */
		v->replan(v->replan_ctx, f, !up, at, false, NULL, 0);
		snprintf(msg + n, len - n, "; at %.3f s of the run's story, "
			 "which starts again with it", at);
		log_add(v, "%s fibre %s-%s from the page at %.3f s: the run "
			"is planned again with it", up ? "repaired" : "cut",
			d->a, d->b, at);
		return 0;
	}
	if (f >= 0)
		v->page_cut[f] = !up;
	v->changes++;
	log_add(v, "%s fibre %s-%s from the page", up ? "repaired" : "cut",
		d->a, d->b);
	return 0;
}

/* POST /cut or /repair?a=A&b=B: as 'twinlab cut A B' would, said as JSON;
 * POST /traffic?task=T&gbps=G&for_s=S (traffic()). */
enum MHD_Result view_change(struct view *v, struct MHD_Connection *c, int what)
{
	bool up = what == VIEW_REPAIR;
	const char *a =
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "a");
	const char *b =
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "b");
	struct json_object *o = json_object_new_object();
	struct fibre_done d;
	char msg[1024];
	enum MHD_Result ret;
	const char *s;
	int rc, status;

	if (!o)
		return MHD_NO;
	if (what == VIEW_TRAFFIC) {
		rc = traffic(v, c, msg, sizeof(msg));
		if (rc == -EINPROGRESS) {	/* answered when resumed */
			json_object_put(o);
			return MHD_YES;
		}
	} else if (!a || !b) {
		rc = EXIT_USAGE;
		snprintf(msg, sizeof(msg), "name the fibre's ROADMs: ?a=A&b=B");
	} else {
		pthread_mutex_lock(&v->shown);
		if (v->p) {
			rc = page_fibre(v, a, b, up, &d, msg, sizeof(msg));
		} else {
			rc = 1;
			snprintf(msg, sizeof(msg), "nothing is shown yet");
		}
		pthread_mutex_unlock(&v->shown);
	}
	status = !rc ? 200 : rc == EXIT_USAGE ? 400 : 409;
	if (json_add(o, "ok", json_object_new_boolean(!rc)) ||
	    json_add_str(o, "message", msg)) {
		json_object_put(o);
		return MHD_NO;
	}
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	ret = view_answer(c, status, "application/json", s, strlen(s),
		     MHD_RESPMEM_MUST_COPY, NULL);
	json_object_put(o);
	return ret;
}
