// SPDX-License-Identifier: MIT
/*
 * twinlab status: how the emulation that is up keeps its promises while
 * someone else sends the traffic (a teacher's ping or iperf3): over an
 * interval, the delay line's lateness, the shapers' drops and TCP's
 * retransmissions in the servers' namespaces, judged by the monitor a
 * run uses, with the tolerance a round of this plan would get.
 */
#include "tools/twinlab.h"
#include "tools/args.h"
#include "tools/json.h"
#include "tools/session/counters.h"
#include "tools/uplan.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu/delayline.h"
#include "emu/lab.h"
#include "emu/monitor.h"
#include "twin/addr.h"
#include "twin/predict.h"

#define STATUS_INTERVAL_MAX 3600
/* The exit status of a look judged degraded (0: faithful). */
#define STATUS_DEGRADED 3

#define STATUS_HELP \
	"usage: %s status [--prefix P] [--interval S] [--watch] [--json]\n\n" \
	"How the emulation that is up keeps its promises under the traffic it " \
	"carries:\nover S seconds of wall time, how late the delay line let " \
	"packets go, how long the\nhost took the CPUs away, what the shapers " \
	"dropped and what TCP retransmitted\nin the servers' namespaces, and " \
	"the verdict of the monitor a run uses\n(faithful, or degraded and " \
	"why), with the tolerance a round of this plan gets.\nThe worst " \
	"lateness counts since the last look by anyone (a run, or status).\n" \
	"Exits 0 when the (last) look is faithful, %d when it is degraded. " \
	"Needs root.\n\n" \
	CLI_PREFIX_HELP \
	"  -i, --interval S  seconds between the two looks (0.1 to %d, " \
	"default 1)\n" \
	"  -w, --watch       look again every S seconds until stopped\n" \
	"  -j, --json        each look as one JSON object\n"

/* What status watches: the plan's servers, links and delay line. */
struct watch {
	struct monitor *mon;
	struct dl_live *dl;
	struct counter *ctr;
	struct nscache *nsc;
	int nctr, nnsc;
	pid_t sup;
	double round_min_s, n;
	bool lossy;
};

static int watch_open(struct watch *w, const struct plan *p,
		      const char *prefix)
{
	int e = servers_monitor(p, prefix, NULL, &w->mon);

	if (!e)
		e = counters_open(p, NULL, prefix, NULL, false, &w->ctr, &w->nctr,
				  &w->nsc, &w->nnsc);
	if (!e && !lab_delay_pid(prefix, &w->sup) &&
	    !lab_delay_live_open(prefix, &w->dl))
		monitor_watch_delay(w->mon, w->dl);
	w->round_min_s = INFINITY;
	for (int t = 0; t < p->ntasks; t++)
		if (!p->tasks[t].blocked)
			w->round_min_s = fmin(w->round_min_s,
					      p->tasks[t].round_s);
	if (!isfinite(w->round_min_s))
		w->round_min_s = 0;
	w->lossy = scenario_has_loss(p->sc);
	return e;
}

static void watch_close(struct watch *w)
{
	monitor_free(w->mon);
	lab_delay_live_close(w->dl);
	counters_close(w->ctr, w->nsc, w->nnsc);
}

/* One look: the interval's figures in r; 0, or -errno (-EINTR: stopped). */
static int look(struct watch *w, double interval, struct mon_round *r)
{
	struct mon_sample a, b;
	struct timespec ts = { .tv_sec = (time_t)interval,
			       .tv_nsec = (long)((interval - floor(interval)) *
						 1e9) };
	uint64_t *before = calloc((size_t)w->nctr + 1, sizeof(*before));
	int e;

	if (!before)
		return -ENOMEM;
	*r = (struct mon_round){ .dilation = w->n,
				 .round_min_s = w->round_min_s,
				 .lossy = w->lossy };
	for (int i = 0; i < w->nctr; i++)
		before[i] = counters_read(&w->ctr[i]).drops;
	e = monitor_sample(w->mon, &a);
	/* the worst since the last look by anyone, not lost at ours */
	uint64_t late0 = a.dl_late_ns_max;

	while (!e && nanosleep(&ts, &ts) && errno == EINTR)
		if (stop_signal)
			e = -EINTR;
	if (!e)
		e = monitor_sample(w->mon, &b);
	if (!e) {
		if (late0 > b.dl_late_ns_max)
			b.dl_late_ns_max = late0;
		monitor_diff(&a, &b, r);
		for (int i = 0; i < w->nctr; i++)
			r->drops += counters_read(&w->ctr[i]).drops -
				    before[i];
	}
	free(before);
	return e;
}

static int say_json(const char *prefix, const struct plan *p,
		    const struct watch *w, double interval,
		    const struct mon_round *r, bool fine, const char *why)
{
	struct json_object *o = json_object_new_object(), *d;
	int e;

	if (!o)
		goto fail;
	J(!json_add(o, "prefix", json_object_new_string(prefix)));
	J(!json_add(o, "scenario", json_object_new_string(p->sc->name)));
	J(!json_add(o, "scheduler", json_object_new_string(p->scheduler)));
	J(!json_add(o, "dilation", json_object_new_double(w->n)));
	J(!json_add(o, "interval_s", json_object_new_double(interval)));
	d = json_object_new_object();
	J(!json_add(o, "delay_line", d));
	J(!json_add(d, "running", json_object_new_boolean(w->sup > 0)));
	J(!json_add(d, "packets", json_object_new_int64(
					  (int64_t)r->dl_packets)));
	J(!json_add(d, "late_mean_s", json_object_new_double(
					      r->dl_late_mean_s)));
	J(!json_add(d, "late_max_s",
		    json_object_new_double(r->dl_late_max_s)));
	d = json_object_new_object();
	J(!json_add(o, "cpus_taken_away", d));
	J(!json_add(d, "fraction", json_object_new_double(r->stall_frac)));
	J(!json_add(d, "max_s", json_object_new_double(r->stall_max_s)));
	J(!json_add(d, "beyond_buckets",
		    json_object_new_double(r->stall_excess)));
	J(!json_add(o, "shaper_drops",
		    json_object_new_int64((int64_t)r->drops)));
	J(!json_add(o, "tcp_retransmitted",
		    json_object_new_int64((int64_t)r->retrans)));
	J(!json_add(o, "tcp_segments",
		    json_object_new_int64((int64_t)r->out_segs)));
	J(!json_add(o, "tolerance_s", json_object_new_double(
					      MON_TIME_TOL * w->round_min_s)));
	J(!json_add(o, "worst_tolerance_s", json_object_new_double(
					      MON_TASK_WORST * w->round_min_s)));
	J(!json_add(o, "verdict", json_object_new_string(
					  fine ? "faithful" : "degraded")));
	J(!json_add_str(o, "why", fine ? NULL : why));
	e = json_print(o);
	json_object_put(o);
	return e;
fail:
	json_object_put(o);
	p_err("out of memory");
	return -ENOMEM;
}

static int say_text(const char *prefix, const struct plan *p,
		    const struct watch *w, double interval,
		    const struct mon_round *r, bool fine, const char *why)
{
	printf("status: prefix '%s': scenario %s, scheduler %s, dilation %g; "
	       "over %g s:\n", prefix, p->sc->name, p->scheduler, w->n,
	       interval);
	if (w->sup > 0)
		printf("  delay line (pid %d): %" PRIu64 " packets, late "
		       "%.3f ms on average, %.3f ms at worst since the last "
		       "look (scenario time)\n", (int)w->sup, r->dl_packets,
		       r->dl_late_mean_s * 1e3, r->dl_late_max_s * 1e3);
	else
		printf("  no delay line: no propagation delay\n");
	printf("  the host took the CPUs away %.3f %% of the time (%.3f %% "
	       "beyond the shapers' buckets), %.3f ms at once at worst "
	       "(scenario time)\n", r->stall_frac * 100,
	       r->stall_excess * 100, r->stall_max_s * 1e3);
	printf("  shapers dropped %" PRIu64 " packets; TCP retransmitted "
	       "%" PRIu64 " of %" PRIu64 " segments\n", r->drops, r->retrans,
	       r->out_segs);
	printf("  %s%s (tolerance %.3f ms on average, %.3f ms at worst: %g "
	       "and %g of the plan's shortest round)\n",
	       fine ? "faithful" : "degraded: ", fine ? "" : why,
	       MON_TIME_TOL * w->round_min_s * 1e3,
	       MON_TASK_WORST * w->round_min_s * 1e3, MON_TIME_TOL,
	       MON_TASK_WORST);
	return fflush(stdout) ? -EIO : 0;
}

int cmd_status(int argc, char **argv)
{
	const char *prefix = NULL;
	double interval = 1;
	struct cli cl = { 0 };
	bool json, watch;
	struct scenario *sc = NULL;
	struct plan *p = NULL;
	struct addressing *a = NULL;
	struct watch w = { 0 };
	int e, rc, looks = 0;

	rc = cli_parse(&cl, argc, argv, 0, 0, STATUS_HELP, prog,
		       STATUS_DEGRADED, STATUS_INTERVAL_MAX);
	if (rc != CLI_GO)
		return rc;
	rc = 1;
	if (cli_prefix(&cl, &prefix) ||
	    cli_real(&cl, "interval", 0.1, STATUS_INTERVAL_MAX, &interval))
		return EXIT_USAGE;
	json = cli_flag(&cl, "json");
	watch = cli_flag(&cl, "watch");
	if (geteuid() != 0) {
		p_err("'status' needs root: it reads the namespaces' counters");
		return 1;
	}
	on_stop_signals();
	if (up_plan(prefix, &sc, &p, &a, &w.n))
		goto out;
	e = predict_round(p);
	if (!e)
		e = watch_open(&w, p, prefix);
	if (e) {
		p_err("cannot watch prefix '%s': %s", prefix, strerror(-e));
		goto out;
	}
	do {
		struct mon_round r;
		char why[200];
		double sug;
		bool fine;

		e = look(&w, interval, &r);
		if (e == -EINTR)
			break;
		if (e) {
			p_err("cannot read the counters of prefix '%s': %s",
			      prefix, strerror(-e));
			goto out;
		}
		fine = monitor_verdict(&r, why, sizeof(why), &sug);
		e = json ? say_json(prefix, p, &w, interval, &r, fine, why) :
			   say_text(prefix, p, &w, interval, &r, fine, why);
		if (e)
			goto out;
		rc = fine ? 0 : STATUS_DEGRADED;
		looks++;
	} while (watch && !stop_signal);
	if (!looks) {
		p_err("interrupted before a look was over");
		rc = 1;
	}
out:
	watch_close(&w);
	addressing_free(a);
	plan_free(p);
	scenario_free(sc);
	return rc;
}
