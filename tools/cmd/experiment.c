// SPDX-License-Identifier: MIT
/*
 * twinlab experiment FILE [--db FILE]: a sweep over numbers of local
 * models, seeds and schedulers on one topology. Each point is a scenario
 * made from the base file's network with generated tasks (the same tasks
 * for every scheduler at a given point), run as one session each (the
 * same as `twinlab run`, in this process), and recorded by its run id in
 * the results database's `points` table.
 *
 * The experiment file is read by the twin (twin/experiment.h).
 */
#include "tools/twinlab.h"
#include "tools/view/srv.h"
#include "tools/json.h"
#include "twin/clock.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "emu/lab.h"
#include "emu/monitor.h"
#include "tools/results/results.h"
#include "tools/session/session.h"
#include "twin/experiment.h"
#include "twin/fl.h"
#include "twin/lpset.h"
#include "twin/predict.h"
#include "twin/sched.h"
#include "twin/stat.h"

/* ---- scenarios of the points --------------------------------------------- */

/* A point's scenario, made by the twin, written where the run reads it. */
static int write_point(const struct experiment *x, const struct scenario *sc,
		       long nl, long seed, const char *path)
{
	struct scenario pt;
	int err = experiment_point(x, sc, nl, seed, x->tasks, &pt);
	FILE *out;

	if (err) {
		errno = -err;
		return err;
	}
	out = open_output(path, false);
	if (!out) {
		err = -errno;
		experiment_point_release(&pt);
		errno = -err;
		return err;
	}
	fprintf(out, "# experiment '%s': %ld tasks of %ld local models, seed "
		"%ld, on the network of %s\n", x->name, x->tasks, nl, seed,
		x->base);
	err = scenario_write(&pt, out);
	if (fclose(out) && !err)
		err = -errno;
	experiment_point_release(&pt);
	if (err)
		errno = -err;
	return err;
}

/* ---- a sweep in the twin alone (--twin-only) ----------------------------- */

/* One scheduler at one point: the twin's prediction of its plan. */
struct twin_pt {
	double round, bcast, compute, upload;	/* means over tasks, s */
	double bytes_links;
	long wl_links;
	int blocked, stars;
};

static int twin_point(const struct experiment *x, const struct scenario *sc,
		      long nl, long seed, const struct sched_ops *ops,
		      predict_fn predict, struct twin_pt *out)
{
	struct scenario pt;
	struct plan *p;
	int err = experiment_point(x, sc, nl, seed, x->tasks, &pt), n = 0;

	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	p = sched_plan(&pt, ops);
	err = p ? predict(p) : -errno;
	for (int t = 0; !err && t < p->ntasks; t++) {
		const struct task_plan *tp = &p->tasks[t];

		if (tp->blocked)
			continue;
		out->bcast += tp->bcast_s;
		out->compute += tp->compute_s;
		out->upload += tp->upload_s;
		out->stars += tp->shape && !strcmp(tp->shape, "star");
		n++;
	}
	if (!err) {
		out->round = p->mean_round_s;
		out->bcast /= n ? n : 1;
		out->compute /= n ? n : 1;
		out->upload /= n ? n : 1;
		out->bytes_links = p->bytes_links;
		out->wl_links = p->wavelength_links;
		out->blocked = p->blocked;
	}
	plan_free(p);
	experiment_point_release(&pt);
	return err;
}

/* A point's figures, as --json names them; the last three per seed. */
enum { TF_ROUND_VS = 6, TF_BYTES_VS, TF_N = 9 };

static const char *const tf_key[TF_N] = {
	"round_s", "broadcast_s", "compute_s", "upload_s", "bytes_links",
	"wavelength_links", "round_vs_baseline", "bytes_vs_baseline", "stars",
};

/* Figure j of point q, b the baseline's at the same seed (NULL: none). */
static double tf_figure(const struct twin_pt *q, const struct twin_pt *b,
			int j)
{
	switch (j) {
	case 0: return q->round;
	case 1: return q->bcast;
	case 2: return q->compute;
	case 3: return q->upload;
	case 4: return q->bytes_links;
	case 5: return (double)q->wl_links;
	case TF_ROUND_VS: return b ? q->round / b->round : NAN;
	case TF_BYTES_VS: return b ? q->bytes_links / b->bytes_links : NAN;
	default: return (double)q->stars;
	}
}

/* One point's medians (m, TF_N of them) on arr: 0, or 1 (said). */
static int twin_point_json(json_object *arr, long locals, const char *sched,
			   const double *m)
{
	json_object *o = json_object_new_object();

	if (!o || json_add(o, "locals", json_object_new_int64(locals)) ||
	    json_add(o, "scheduler", json_object_new_string(sched)))
		goto fail;
	for (int j = 0; j < TF_N; j++)
		if (isfinite(m[j]) &&
		    json_add(o, tf_key[j], json_object_new_double(m[j])))
			goto fail;
	if (!json_push(arr, o))
		return 0;
	o = NULL; /* json_push put it back */
fail:
	json_object_put(o);
	p_err("out of memory");
	return 1;
}

/*
 * Every local-model count x seed x scheduler of a sweep, scheduled and
 * predicted by the twin: no root, no emulation, no database. Per count
 * and scheduler the medians over seeds of the predicted mean round and
 * its phases, of bytes x fibres and of lit wavelength-links, and the
 * median over seeds of the ratio to the baseline's at the same seed.
 */
static int run_twin_sweep(const struct experiment *x,
			  const struct scenario *sc, predict_fn predict,
			  bool json)
{
	int ns = x->nseeds, base = -1, rc = 0;
	struct twin_pt *pt = calloc((size_t)x->nsched * ns + 1, sizeof(*pt));
	double *v = calloc((size_t)ns + 1, sizeof(*v));
	json_object *arr = json ? json_object_new_array() : NULL;

	if (!pt || !v || (json && !arr)) {
		p_err("out of memory");
		rc = 1;
		goto out;
	}
	for (int k = 0; k < x->nsched; k++)
		if (sched_arg(x->sched[k])->baseline)
			base = k;
	if (!json)
		printf("experiment %s in the twin: %d local-model counts x %d "
		       "seeds x %d schedulers, %ld tasks a point, %s relays, "
		       "never_slower %s (%s model)\n", x->name, x->nlocals, ns,
		       x->nsched, x->tasks,
		       sc->relay == SCN_RELAY_PIPELINED ? "pipelined" :
							  "storing",
		       sc->never_slower ? "on" : "off",
		       predict == predict_round ? "fluid" : "packet");
	for (int i = 0; i < x->nlocals && !rc; i++) {
		if (!json)
			printf("\n%ld local models (medians over %d seeds)\n"
			       "%-6s %9s %9s %9s %9s %11s %8s %8s %8s %7s\n",
			       x->locals[i], ns, "sched", "round ms",
			       "bcast ms", "train ms", "upload ms",
			       "byte-links", "wl-links", "round/b", "bytes/b",
			       "stars");
		for (int k = 0; k < x->nsched && !rc; k++)
			for (int s = 0; s < ns && !rc; s++) {
				rc = twin_point(x, sc, x->locals[i], x->seeds[s],
						sched_arg(x->sched[k]), predict,
						&pt[k * ns + s]);
				if (rc)
					p_err("cannot predict %ld locals, seed "
					      "%ld, %s: %s", x->locals[i],
					      x->seeds[s], x->sched[k],
					      predict_strerror(rc));
			}
		for (int k = 0; k < x->nsched && !rc; k++) {
			const struct twin_pt *q = &pt[k * ns];
			double m[TF_N];

			for (int j = 0; j < TF_N; j++) {
				for (int s = 0; s < ns; s++)
					v[s] = tf_figure(&q[s], base < 0 ? NULL :
							 &pt[base * ns + s], j);
				m[j] = stat_median(v, ns);
			}
			if (json) {
				rc = twin_point_json(arr, x->locals[i],
						     x->sched[k], m);
				continue;
			}
			printf("%-6s %9.3f %9.3f %9.3f %9.3f %11.4g %8.0f %8.3f "
			       "%8.3f %7.0f\n", x->sched[k], m[0] * 1e3,
			       m[1] * 1e3, m[2] * 1e3, m[3] * 1e3, m[4], m[5],
			       m[6], m[7], m[8]);
		}
	}
	if (json && !rc) {
		json_object *o = json_object_new_object();

		if (!o ||
		    json_add(o, "experiment",
			     json_object_new_string(x->name)) ||
		    json_add(o, "relay",
			     json_object_new_string(
				     sc->relay == SCN_RELAY_PIPELINED
					     ? "pipelined"
					     : "store")) ||
		    json_add(o, "never_slower",
			     json_object_new_boolean(sc->never_slower)) ||
		    json_add(o, "points", json_object_get(arr))) {
			p_err("out of memory");
			rc = 1;
		} else {
			rc = json_print(o) ? 1 : 0;
		}
		json_object_put(o);
	}
out:
	json_object_put(arr);
	free(pt);
	free(v);
	return rc ? 1 : 0;
}

/* ---- blocking under offered load: the twin alone ------------------------ */

/*
 * Every load x seed x scheduler (x local-model count) scheduled by the
 * twin: blocked tasks and wavelength-links lit, stored in the database's
 * `blocking` table and summed up per load (means over the seeds).
 */
/*
 * The end of a sweep of the twin's alone (blocking, gap): the results
 * closed; on success (rc 0) what was done and what the report makes of
 * it. The command's exit status.
 */
static int twin_sweep_end(struct results *res, int rc,
			  const struct experiment *x, int done,
			  const char *what, const char *db, const char *report)
{
	results_close(res);
	if (rc)
		return 1;
	printf("\nexperiment %s: %d %s; results in %s ('twinlab report %s' "
	       "%s)\n", x->name, done, what, db, db, report);
	return 0;
}

static int run_blocking(const struct experiment *x, const struct scenario *sc,
			const char *db)
{
	char err[512];
	struct results *res = results_open(db, err, sizeof(err));
	int total = x->nlocals * x->nloads * x->nseeds * x->nsched, done = 0;
	int rc = 0;

	if (!res) {
		p_err("%s", err);
		return 1;
	}
	printf("experiment %s (blocking): %d points (%d local-model counts x "
	       "%d loads x %d seeds x %d schedulers), in the twin\n", x->name,
	       total, x->nlocals, x->nloads, x->nseeds, x->nsched);
	for (int i = 0; i < x->nlocals && !rc; i++) {
		printf("\n%ld local models per task: blocked tasks %% (lit "
		       "wavelength-links %%), mean over %d seeds\n%8s",
		       x->locals[i], x->nseeds, "tasks");
		for (int k = 0; k < x->nsched; k++)
			printf("  %17s", x->sched[k]);
		putchar('\n');
		for (int l = 0; l < x->nloads && !rc; l++) {
			printf("%8ld", x->loads[l]);
			for (int k = 0; k < x->nsched && !rc; k++) {
				double b = 0, u = 0;

				for (int s = 0; s < x->nseeds && !rc; s++) {
					struct scenario pt;
					struct exp_load el;
					struct results_blocking_row row;

					rc = experiment_point(x, sc, x->locals[i],
							      x->seeds[s],
							      x->loads[l], &pt);
					if (!rc) {
						rc = experiment_load_point(
							&pt, sched_arg(x->sched[k]),
							&el);
						experiment_point_release(&pt);
					}
					if (rc) {
						p_err("cannot schedule a point: "
						      "%s", strerror(-rc));
						break;
					}
					row = (struct results_blocking_row){
						x->name, x->base, x->sched[k],
						x->locals[i], x->seeds[s],
						x->loads[l], el.blocked,
						el.wl_used, el.wl_total,
						el.bytes_links };
					if (results_blocking(res, &row)) {
						p_err("cannot store a point in "
						      "'%s'", db);
						rc = -EIO;
						break;
					}
					b += (double)el.blocked / el.tasks;
					u += el.wl_total ? (double)el.wl_used /
								   el.wl_total : 0;
					done++;
				}
				if (!rc)
					printf("  %8.1f (%5.1f %%)",
					       100 * b / x->nseeds,
					       100 * u / x->nseeds);
			}
			putchar('\n');
			fflush(stdout);
		}
	}
	return twin_sweep_end(res, rc, x, done, "points", db,
			      "draws blocking against load");
}

/* ---- the optimality gap: the twin alone --------------------------------- */

/* One scheduler's plan of pt, timed. */
static int gap_point(const struct scenario *pt, const struct sched_ops *ops,
		     struct exp_gap *g, double *seconds)
{
	double t = mono_s();
	int e = experiment_gap_point(pt, ops, g);

	*seconds = mono_s() - t;
	return e;
}

/* The instance of local-model count nl and seed: its base, then its task. */
static int gap_instance(const struct experiment *x, const struct scenario *sc,
			long nl, long seed, struct scenario **rnd,
			struct scenario *pt)
{
	int e;

	*rnd = NULL;
	if (x->random_roadms) {
		e = experiment_random_base(x->random_roadms, seed, rnd);
		if (e)
			return e;
		sc = *rnd;
	}
	e = experiment_point(x, sc, nl, seed, 1, pt);
	if (e) {
		scenario_free(*rnd);
		*rnd = NULL;
	}
	return e;
}

/*
 * Every local-model count x seed: one task on the empty network, its tree
 * weight by opt and by each scheduler, stored in the database's `gap`
 * table and summed up per local-model count: mean and largest gap, and
 * how often the scheduler found the optimum.
 */
static int run_gap(const struct experiment *x, const struct scenario *sc,
		   const char *db)
{
	char err[512];
	struct results *res;
	int total = x->nlocals * x->nseeds, done = 0, rc = 0;

	if (!x->random_roadms &&
	    sched_fits(&sched_opt, sc, err, sizeof(err))) {
		p_err("%s: %s", x->base, err);
		return EXIT_USAGE;
	}
	res = results_open(db, err, sizeof(err));
	if (!res) {
		p_err("%s", err);
		return 1;
	}
	printf("experiment %s (gap): %d instances (%d local-model counts x "
	       "%d seeds) on %s, each of %d schedulers against opt, in the "
	       "twin\n", x->name, total, x->nlocals, x->nseeds,
	       x->random_roadms ? "random networks" : x->base, x->nsched);
	for (int i = 0; i < x->nlocals && !rc; i++) {
		double sum[EXP_LIST_MAX] = { 0 }, max[EXP_LIST_MAX] = { 0 };
		int opt_n[EXP_LIST_MAX] = { 0 }, n[EXP_LIST_MAX] = { 0 };
		double opt_s = 0;

		for (int s = 0; s < x->nseeds && !rc; s++) {
			struct scenario pt, *rnd;
			struct exp_gap o, g;
			double os, gs;

			rc = gap_instance(x, sc, x->locals[i], x->seeds[s], &rnd,
					  &pt);
			if (!rc)
				rc = gap_point(&pt, &sched_opt, &o, &os);
			for (int k = 0; k < x->nsched && !rc; k++) {
				struct results_gap_row row;

				rc = gap_point(&pt, sched_arg(x->sched[k]), &g,
					       &gs);
				if (rc)
					break;
				row = (struct results_gap_row){
					x->name, x->base, x->sched[k],
					x->locals[i], x->seeds[s], g.blocked,
					g.weight, o.weight, gs, os };
				if (results_gap(res, &row)) {
					p_err("cannot store an instance in "
					      "'%s'", db);
					rc = -EIO;
					break;
				}
				if (g.blocked || o.blocked)
					continue;
				n[k]++;
				sum[k] += g.weight / o.weight - 1;
				max[k] = fmax(max[k], g.weight / o.weight - 1);
				opt_n[k] += g.weight <= o.weight * (1 + 1e-9);
			}
			opt_s += os;
			experiment_point_release(&pt);
			scenario_free(rnd);
			if (rc)
				p_err("cannot schedule %ld local models, seed "
				      "%ld: %s", x->locals[i], x->seeds[s],
				      strerror(-rc));
			done++;
		}
		if (rc)
			break;
		printf("\n%ld local models (%d instances; opt %.2f s each on "
		       "average): gap to opt, mean / max, and optimal\n",
		       x->locals[i], x->nseeds, opt_s / x->nseeds);
		for (int k = 0; k < x->nsched; k++)
			if (n[k])
				printf("  %-6s %7.2f %% / %7.2f %%, optimal in %d "
				       "of %d\n", x->sched[k], 100 * sum[k] / n[k],
				       100 * max[k], opt_n[k], n[k]);
			else
				printf("  %-6s blocked in every instance\n",
				       x->sched[k]);
		fflush(stdout);
	}
	return twin_sweep_end(res, rc, x, done, "instances", db,
			      "tabulates and draws the gaps");
}

/* Record that run `run` is this point of the experiment. */
static int record_point(const char *db, int64_t run,
			const struct experiment *x, const char *sched, long nl,
			long seed)
{
	char err[256];
	struct results *r = results_open(db, err, sizeof(err));
	int e;

	if (!r)
		return -EIO;
	e = results_point(r, run, x->name, x->base, sched, nl, seed);
	results_close(r);
	return e;
}

/* A sweep of sessions on the emulation: where it stands. */
struct sweep {
	FILE *log;
	FILE *say;		/* progress: stdout, or stderr under --json */
	json_object *points;	/* --json: a record per point, else NULL */
	json_object *last;	/* the last point's record, or NULL */
	bool lost;		/* out of memory for a record */
	int total, done, failed;
	double t0;
	double n;		/* --dilation's N */
	struct mon_carry carry;	/* auto: where each scheduler's points start */
	bool auto_n;
	struct view *view;	/* --view: shows each point, or NULL */
};

/* Add k: v to the sweep's last record (none: nothing). */
static void point_add(struct sweep *w, const char *k, json_object *v)
{
	if (!w->last) {
		json_object_put(v);
		return;
	}
	if (json_add(w->last, k, v))
		w->lost = true;
}

_Static_assert(MON_CARRY_MAX >= EXP_LIST_MAX,
	       "every scheduler of a sweep carries its own dilation");

/*
 * One point of a sweep with the experiment's scheduler k, said as what:
 * its session (so, its dilation set here), a progress line with the time
 * left. The stored run's id, or 0.
 */
static int64_t sweep_point(struct sweep *w, struct session_opts *so, int k,
			   const char *what)
{
	struct session_result sr;
	double t1 = mono_s(), left;
	int prc;
	char nn[48] = "";

	so->dilation = w->auto_n ? mon_carry_start(&w->carry, k) : w->n;
	so->auto_n = w->auto_n;
	so->out = w->log;
	so->stop = &stop_signal;
	so->view = w->view;
	fprintf(w->log, "== point %d of %d: %s\n", w->done + 1, w->total,
		what);
	fflush(w->log);
	prc = session_run(so, &sr);
	fflush(w->log);
	w->done++;
	if (prc)
		w->failed++;
	if (sr.run > 0 && sr.dilation >= 1)
		snprintf(nn, sizeof(nn), ", dilation %g", sr.dilation);
	/* auto: the scheduler's next point calibrates from here */
	if (sr.run > 0 && sr.dilation >= 1 && w->auto_n)
		mon_carry_found(&w->carry, k, sr.dilation);
	left = (mono_s() - w->t0) / w->done * (w->total - w->done);
	fprintf(w->say, "[%d/%d] %s: %s%s%s%s in %.1f s; about %.0f s left\n",
		w->done, w->total, what, prc == 0 ? "ok" : stop_signal ?
		"interrupted" : sr.status ? sr.status : "FAILED (see the log)",
		nn, sr.verdict[0] ? ", " : "", sr.verdict, mono_s() - t1, left);
	fflush(w->say);
	w->last = NULL;
	if (w->points) {
		w->last = json_object_new_object();
		if (json_push(w->points, w->last)) {
			w->last = NULL;
			w->lost = true;
		}
		point_add(w, "status", json_object_new_string(
			prc == 0 ? "ok" : stop_signal ? "interrupted" : "failed"));
		if (sr.run > 0)
			point_add(w, "run", json_object_new_int64(sr.run));
		if (sr.run > 0 && sr.dilation >= 1)
			point_add(w, "dilation",
				  json_object_new_double(sr.dilation));
		point_add(w, "verdict", json_object_new_string(sr.verdict));
		point_add(w, "seconds", json_object_new_double(mono_s() - t1));
	}
	return sr.run;
}

/*
 * Whether every scheduler and policy of a dynamics experiment can follow
 * sc's events live (its timeline and set can be made, as run --reschedule
 * needs them): what cannot is said before anything is built.
 */
static bool dynamics_refused(const struct experiment *x, struct scenario *sc,
			     predict_fn predict)
{
	set_rounds(sc, (unsigned)x->rounds);
	for (int k = 0; k < x->nsched; k++) {
		const struct sched_ops *ops = sched_arg(x->sched[k]);
		char why[320];

		if (sched_fits(ops, sc, why, sizeof(why))) {
			p_err("%s: %s", x->base, why);
			return true;
		}
		for (int j = 0; j < x->npolicies; j++) {
			struct timeline *tl;
			struct lpset *set;
			int e = lpset_follow(sc, ops, x->policy[j], predict,
					     &tl, &set, why, sizeof(why));

			lpset_free(set);
			timeline_free(tl);
			if (e) {
				p_err("%s: '%s' under %s with %s cannot be "
				      "followed live: %s", x->events, sc->name,
				      x->sched[k], resched_name(x->policy[j]),
				      why);
				return true;
			}
		}
	}
	return false;
}

#define EXPERIMENT_HELP \
	"usage: %s experiment FILE [--db FILE] [--prefix P] " \
	"[--dilation N|auto[:N]]\n" \
	"       [--predictor M] [--json] [--view]\n" \
	"       %s experiment FILE --twin-only [--predictor M] [--json]\n\n" \
	"Runs every point of the sweep in FILE on the emulation and stores it " \
	"in the\nresults database; each point as 'twinlab run' with the same " \
	"--dilation. Needs\nroot. With 'kind: blocking' the twin alone " \
	"schedules each load (no root):\nblocked tasks and lit " \
	"wavelength-links per scheduler. With 'kind: gap' it\nschedules one " \
	"task per instance (no root): each scheduler's tree weight " \
	"against\nopt's. With 'kind: dynamics' it runs the base's tasks " \
	"through a file of events\nonce per scheduler and re-scheduling " \
	"policy, live (as 'twinlab run\n--reschedule'); the report compares " \
	"the policies.\n\n" \
	"  -d, --db FILE     the results database (default twinlab.db)\n" \
	"  -p, --prefix P    the emulation's prefix (default 'tle'): its " \
	"namespaces are\n" \
	"                    '<P>-<node>', for the whole sweep\n" \
	"  --dilation N|auto[:N]  as 'twinlab run --dilation'; with auto " \
	"(the default),\n" \
	"                    each point starts from the dilation the last " \
	"point of its\n" \
	"                    scheduler was found faithful at (a scheduler's " \
	"first, from\n" \
	"                    the last point's)\n" \
	CLI_PREDICTOR_HELP \
	"  --twin-only       schedule and predict a sweep by the twin alone " \
	"(no root, no\n" \
	"                    database): per local-model count and scheduler " \
	"the medians\n" \
	"                    over seeds of the predicted round, its phases " \
	"and\n" \
	"                    bandwidth, and their ratios to the baseline's\n" \
	"  --json            for machines: a sweep or dynamics run on the " \
	"emulation ends\n" \
	"                    with a record per point (its run, dilation, " \
	"verdict), its\n" \
	"                    progress on stderr; with --twin-only, the " \
	"medians\n" \
	"  --view            serve the sweep's live view in a browser on this " \
	"machine (as\n" \
	"                    'twinlab view'; each point shown in turn at the " \
	"address\n" \
	"                    printed first)\n"

/*
 * The experiment's base scenario, as its points will run it (its relays
 * as the sweep's tasks need, a dynamics run's events added), or NULL
 * after saying why it cannot serve.
 */
static struct scenario *experiment_base(struct experiment *x, const char *file,
					predict_fn predict)
{
	struct scenario *sc;

	sc = load_scenario(x->base);
	if (!sc)
		return NULL;
	/* the base's default, as if its tasks sent what the sweep's do */
	if (x->bpp == 1 && !sc->relay_line)
		sc->relay = SCN_RELAY_STORE;
	if (x->kind == EXP_DYNAMICS) {
		if (sc->nevents) {
			p_err("%s: a dynamics experiment's events are those of "
			      "'%s': its base has its own",
			      x->base, x->events);
			scenario_free(sc);
			return NULL;
		}
		if (load_events(sc, x->events) ||
		    dynamics_refused(x, sc, predict)) {
			scenario_free(sc);
			return NULL;
		}
	} else if (refuse_events(sc, x->base, stderr, false)) {
		scenario_free(sc);
		return NULL;
	}
	for (int i = 0; i < x->nlocals; i++) {
		int servers = 0;

		for (int k = 0; k < sc->nnodes; k++)
			servers += sc->nodes[k].kind == NODE_SERVER;
		if (x->locals[i] + 1 > servers) {
			p_err("%s: %ld local models need %ld servers; '%s' has "
			      "%d",
			      file, x->locals[i], x->locals[i] + 1, x->base,
			      servers);
			scenario_free(sc);
			return NULL;
		}
	}
	return sc;
}

/* A dynamics experiment's runs: each scheduler with each policy. */
static void dynamics_points(struct sweep *w, const struct experiment *x,
			    const char *db, const char *prefix,
			    predict_fn predict)
{
	for (int k = 0; k < x->nsched && !stop_signal; k++)
		for (int j = 0; j < x->npolicies && !stop_signal; j++) {
			struct session_opts so = {
				.scenario = x->base,
				.events = x->events,
				.ops = sched_arg(x->sched[k]),
				.predict = predict,
				.rounds = (unsigned)x->rounds,
				.db = db,
				.prefix = prefix,
				.follow = true,
				.resched = x->policy[j],
			};
			char what[64];

			snprintf(what, sizeof(what), "%s, --reschedule %s",
				 x->sched[k], resched_name(x->policy[j]));
			sweep_point(w, &so, k, what);
			point_add(w, "scheduler",
				  json_object_new_string(x->sched[k]));
			point_add(w, "reschedule",
				  json_object_new_string(
					  resched_name(x->policy[j])));
		}
}

/*
 * A sweep's points: each (local-model count, seed) written as a scenario
 * in dir, run with each scheduler and recorded as its point. 0, or -1
 * when a point's scenario cannot be written (said).
 */
static int sweep_points(struct sweep *w, const struct experiment *x,
			const struct scenario *sc, const char *dir,
			const char *db, const char *prefix, predict_fn predict)
{
	char path[800];

	for (int i = 0; i < x->nlocals && !stop_signal; i++)
		for (int s = 0; s < x->nseeds && !stop_signal; s++) {
			snprintf(path, sizeof(path), "%s/%s-l%ld-s%ld.yaml",
				 dir, x->name, x->locals[i], x->seeds[s]);
			if (write_point(x, sc, x->locals[i], x->seeds[s],
					path)) {
				p_err("cannot write '%s': %s", path,
				      strerror(errno));
				return -1;
			}
			for (int k = 0; k < x->nsched && !stop_signal; k++) {
				struct session_opts so = {
					.scenario = path,
					.ops = sched_arg(x->sched[k]),
					.predict = predict,
					.rounds = (unsigned)x->rounds,
					.db = db,
					.prefix = prefix,
				};
				char what[160];
				int64_t run;

				snprintf(what, sizeof(what),
					 "%ld locals, seed "
					 "%ld, %s",
					 x->locals[i], x->seeds[s],
					 x->sched[k]);
				run = sweep_point(w, &so, k, what);
				point_add(w, "locals",
					  json_object_new_int64(x->locals[i]));
				point_add(w, "seed",
					  json_object_new_int64(x->seeds[s]));
				point_add(w, "scheduler",
					  json_object_new_string(x->sched[k]));
				if (run > 0 &&
				    record_point(db, run, x, x->sched[k],
						 x->locals[i], x->seeds[s]))
					fprintf(w->log,
						"%s: cannot record run %lld "
						"as this point\n",
						prog, (long long)run);
			}
		}
	return 0;
}

/*
 * Whether the experiment cannot run on the emulation as it stands
 * (said): relays it cannot pipeline, a predictor that cannot follow
 * them, a bad prefix, no root. 0, or the exit status.
 */
static int emulation_refused(const struct experiment *x,
			     const struct scenario *sc, const char *prefix,
			     predict_fn predict)
{
	if (sc->relay == SCN_RELAY_PIPELINED && x->bpp == 1) {
		p_err("%s:%d:%d: '%s' pipelines its relays, but the experiment "
		      "sends int8 parameters (bytes_per_parameter: 1), whose "
		      "one scale for the whole model an aggregator knows only "
		      "at the end: use 2, 4 or 8 bytes per parameter, or "
		      "'relay: store'",
		      x->base, sc->relay_line, sc->relay_col, sc->name);
		return EXIT_USAGE;
	}
	if (refuse_relay(sc, x->base, stderr, predict) || !prefix_arg(prefix))
		return EXIT_USAGE;
	if (geteuid() != 0) {
		p_err("'experiment' needs root: it runs the emulation");
		return 1;
	}
	return 0;
}

/* The sweep's record on stdout: 0, or -1 (said). */
static int print_sweep_json(const struct sweep *w, const struct experiment *x,
			    const char *db)
{
	json_object *o = json_object_new_object();
	int err = 0;

	if (!o || w->lost ||
	    json_add(o, "experiment", json_object_new_string(x->name)) ||
	    json_add(o, "db", json_object_new_string(db)) ||
	    json_add(o, "failed", json_object_new_int(w->failed)) ||
	    json_add(o, "seconds", json_object_new_double(mono_s() - w->t0)) ||
	    json_add(o, "points", json_object_get(w->points))) {
		p_err("out of memory for the JSON; the results are in "
		      "%s",
		      db);
		err = -1;
	} else if (json_print(o)) {
		err = -1;
	}
	json_object_put(o);
	return err;
}

int cmd_experiment(int argc, char **argv)
{
	const char *db, *prefix = "tle", *file;
	predict_fn predict = predict_round;
	struct experiment x;
	struct scenario *sc;
	char dir[600], log[700], why[512];
	int lock = -1, rc;
	double n = 0;
	struct sweep w = { 0 };
	struct cli cl = { 0 };
	bool auto_n = true, twin_only, json;
	FILE *logf = NULL;

	rc = cli_parse(&cl, argc, argv, 1, 1, EXPERIMENT_HELP, prog, prog);
	if (rc != CLI_GO)
		return rc;
	rc = 1;
	if (cli_dilation(&cl, &n, &auto_n) || cli_predictor(&cl, &predict) ||
	    cli_prefix(&cl, &prefix))
		return EXIT_USAGE;
	db = cli_str(&cl, "db", "twinlab.db");
	twin_only = cli_flag(&cl, "twin-only");
	json = cli_flag(&cl, "json");
	file = cl.argv[0];
	{
		struct scn_error se;

		if (experiment_load(file, &x, &se)) {
			print_scn_error(stderr, &se);
			return EXIT_USAGE;
		}
	}
	if (x.random_roadms) {
		/* every instance draws its network: a server per ROADM */
		for (int i = 0; i < x.nlocals; i++)
			if (x.locals[i] + 1 > x.random_roadms) {
				p_err("%s: %ld local models need %ld servers; a "
				      "random network of %ld ROADMs has %ld",
				      file, x.locals[i],
				      x.locals[i] + 1, x.random_roadms,
				      x.random_roadms);
				return EXIT_USAGE;
			}
		return run_gap(&x, NULL, db);
	}
	if (twin_only && x.kind != EXP_EMULATION) {
		p_err("%s: --twin-only is for sweeps (no 'kind'): 'blocking' "
		      "and 'gap' run in the twin already", file);
		return EXIT_USAGE;
	}
	if (json && x.kind != EXP_EMULATION && x.kind != EXP_DYNAMICS) {
		p_err("%s: --json is for sweeps and 'kind: dynamics' ('twinlab "
		      "report' reads what 'blocking' and 'gap' store)",
		      file);
		return EXIT_USAGE;
	}
	sc = experiment_base(&x, file, predict);
	if (!sc)
		return EXIT_USAGE;
	if (x.kind == EXP_BLOCKING || x.kind == EXP_GAP || twin_only) {
		rc = twin_only ? run_twin_sweep(&x, sc, predict, json) :
		     x.kind == EXP_GAP ? run_gap(&x, sc, db) :
					 run_blocking(&x, sc, db);
		scenario_free(sc);
		return rc;
	}
	rc = emulation_refused(&x, sc, prefix, predict);
	if (rc) {
		scenario_free(sc);
		return rc;
	}
	rc = 1;
	/* the prefix is the experiment's for the whole sweep */
	lock = lab_lock(prefix, "twinlab experiment", why, sizeof(why));
	if (lock < 0) {
		p_err("%s", why);
		goto out;
	}
	snprintf(dir, sizeof(dir), "%s.scenarios", db);
	snprintf(log, sizeof(log), "%s.log", db);
	if (x.kind != EXP_DYNAMICS && mkdir(dir, 0755) && errno != EEXIST) {
		p_err("cannot create '%s': %s", dir, strerror(errno));
		goto out;
	}
	logf = open_output(log, true);
	if (!logf) {
		p_err("cannot open '%s': %s", log, output_strerror(errno));
		goto out;
	}
	w = (struct sweep){ .log = logf, .n = n, .auto_n = auto_n,
			    .t0 = mono_s(), .say = json ? stderr : stdout };
	mon_carry_init(&w.carry, n);
	if (json) {
		w.points = json_object_new_array();
		if (!w.points) {
			p_err("out of memory");
			goto out;
		}
	}
	on_stop_signals();
	/* one view for the sweep: each point shown in turn, same address */
	if (cli_flag(&cl, "view") && view_for_run(w.say, &w.view))
		goto out;
	if (x.kind == EXP_DYNAMICS) {
		w.total = x.nsched * x.npolicies;
		fprintf(w.say, "experiment %s (dynamics): %d runs (%d "
			"schedulers x %d policies) of '%s' through %s, %ld "
			"rounds; log %s\n", x.name, w.total, x.nsched,
			x.npolicies, sc->name, x.events, x.rounds, log);
		fflush(w.say);
	}
	if (x.kind == EXP_DYNAMICS)
		dynamics_points(&w, &x, db, prefix, predict);
	if (x.kind != EXP_DYNAMICS) {
		w.total = x.nlocals * x.nseeds * x.nsched;
		fprintf(w.say, "experiment %s: %d points (%d local-model "
			"counts x %d seeds x %d schedulers), %ld tasks, %ld "
			"rounds; log %s\n", x.name, w.total, x.nlocals,
			x.nseeds, x.nsched, x.tasks, x.rounds, log);
		fflush(w.say);
	}
	if (x.kind != EXP_DYNAMICS &&
	    sweep_points(&w, &x, sc, dir, db, prefix, predict))
		goto out;
	if (stop_signal) {
		fprintf(w.say, "experiment %s: stopped by signal %d after %d "
			"of %d points; results so far in %s\n", x.name,
			(int)stop_signal, w.done, w.total, db);
		goto out;
	}
	fprintf(w.say, "experiment %s: %d points in %.0f s, %d with "
		"failures; results in %s ('twinlab report %s' makes the "
		"figures)\n", x.name, w.total, mono_s() - w.t0, w.failed, db,
		db);
	rc = w.failed ? 1 : 0;
	if (json && print_sweep_json(&w, &x, db))
		rc = 1;
out:
	view_srv_stop(w.view);
	json_object_put(w.points);
	if (logf)
		fclose(logf);
	lab_unlock(prefix, lock);
	scenario_free(sc);
	return rc;
}
