// SPDX-License-Identifier: MIT
/* twinlab plan: schedule a scenario and show the plan and its prediction. */
#include "tools/twinlab.h"
#include "tools/json.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "tools/args.h"
#include "tools/hosts.h"
#include "tools/planout.h"
#include "twin/addr.h"
#include "twin/predict.h"
#include "twin/sched.h"
#include "twin/timeline.h"

#define PLAN_HELP \
	"usage: %s plan SCENARIO [--scheduler NAME] [--json] " \
	"[--json-file FILE]\n" \
	"       [--dot FILE [--task NAME]]\n" \
	"       [--events FILE [--compare] [--rounds R] [--reschedule " \
	"POLICY]]\n" \
	"       [--predictor M] [--hosts N]\n\n" \
	"Schedules every task of SCENARIO in arrival order and predicts one " \
	"round.\n\n" \
	"  -s, --scheduler NAME  one of:\n%s" \
	"                    (default mst)\n" \
	"  -j, --json        print the plan as one JSON object\n" \
	"  --json-file FILE  write that JSON object to FILE too (the plan " \
	"made once for\n" \
	"                    both)\n" \
	"  -d, --dot FILE    write a Graphviz picture of the network (fibres " \
	"with their\n" \
	"                    lit wavelengths)\n" \
	"  --task NAME       with --dot: that task's broadcast and upload " \
	"trees instead\n" \
	"  --events FILE     the scenario's events from FILE (a mapping with " \
	"'events'),\n" \
	"                    checked; the plan is the one at t = 0, then the " \
	"timeline\n" \
	"  --compare         with events: each policy's outcome for the tasks " \
	"(finished,\n" \
	"                    rounds, completion, moves, interruption, " \
	"byte-links)\n" \
	"  --rounds R        every task runs R rounds (1 to %u, as 'twinlab " \
	"run\n" \
	"                    --rounds R' does), not its own number, in the " \
	"timeline\n" \
	"  --reschedule POLICY  how the timeline re-plans at a cut, a repair, " \
	"an\n" \
	"                    arrival or a departure: none (only what must " \
	"move: the\n" \
	"                    default), full (everything), auto (also what " \
	"gains more\n" \
	"                    than moving costs)\n" \
	"  --hosts N         split the emulation over N hosts (1 to 256), " \
	"each ROADM\n" \
	"                    site whole on one, cutting fibres only: each " \
	"host's\n" \
	"                    workers and sites and the tunnels between them " \
	"(METIS,\n" \
	"                    beside a naive split)\n" \
	CLI_PREDICTOR_HELP

/*
 * The file at path written by fill(f, arg) (0 or -errno): a regular file
 * or a new one, removed when it could not be written whole.
 */
static int write_out(const char *path, int (*fill)(FILE *f, const void *arg),
		     const void *arg)
{
	FILE *f = open_output(path, false);
	int err;

	if (!f) {
		err = -errno;
		p_err("cannot create '%s': %s", path, output_strerror(err));
		return err;
	}
	err = fill(f, arg);
	if (fclose(f) && !err)
		err = -errno;
	if (err) {
		p_err("cannot write '%s': %s", path, strerror(-err));
		remove(path);
	}
	return err;
}

struct dot_of {
	const struct plan *p;
	int task;	/* its trees alone, or -1: the network */
};

static int fill_dot(FILE *f, const void *arg)
{
	const struct dot_of *d = arg;

	return d->task < 0 ? plan_dot(d->p, f) :
			     plan_dot_task(d->p, d->task, f);
}

/* The text of a JSON object, and its line's end. */
static int fill_json(FILE *f, const void *arg)
{
	return fputs(arg, f) == EOF || fputc('\n', f) == EOF ? -errno : 0;
}

static int write_dot(const struct plan *p, const char *path, int task)
{
	return write_out(path, fill_dot, &(struct dot_of){ p, task });
}

/* The plan's JSON object o into the file at path. */
static int write_json(struct json_object *o, const char *path)
{
	const char *s = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);

	if (!s) {
		p_err("cannot build JSON: out of memory");
		return -ENOMEM;
	}
	return write_out(path, fill_json, s);
}

/* The events and, epoch by epoch, what the twin makes of them. */
static void print_timeline(const struct scenario *sc,
			   const struct timeline *tl)
{
	printf("\nevents (the plan above is the network at t = 0):\n");
	print_events(sc, stdout);
	printf("\ntimeline, re-scheduling '%s':\n%10s  %-8s %5s %7s %5s %9s  "
	       "%s\n",
	       resched_name(tl->policy), "at s", "event", "tasks",
	       "blocked", "moved", "lightpaths", "mean round ms");
	for (int i = 0; i < tl->n; i++) {
		const struct epoch *e = &tl->e[i];
		char lp[32];

		snprintf(lp, sizeof(lp), "%d (+%d -%d)", e->plan->net->nlp,
			 e->lit, e->unlit);
		printf("%10.6f  %-8s %5d %7d %5d %10s  %.4f\n", e->at_s,
		       epoch_name(tl, e), e->plan->ntasks, e->plan->blocked,
		       e->nmoved, lp, e->plan->mean_round_s * 1e3);
		for (int b = 0; b < e->plan->nbg; b++) {
			const struct bg_flow *f = &e->plan->bg[b];

			printf("%10s  traffic %s -> %s, %g Gbit/s: ", "",
			       sc->nodes[f->bg->from].name,
			       sc->nodes[f->bg->to].name, f->bg->gbps);
			if (f->routed)
				printf("%d hops, %g km\n", f->path.nhops,
				       f->path.km);
			else
				printf("not routed (%s)\n", f->why);
		}
		for (int t = 0; t < e->plan->ntasks; t++) {
			const struct task_plan *tp = &e->plan->tasks[t];

			if (e->moved[t])
				printf("%10s  moved   %s%s%s\n", "",
				       tp->task->name, tp->blocked ?
				       ": blocked, " : "",
				       tp->blocked ? tp->why : "");
			else if (tp->blocked && e->event >= 0)
				printf("%10s  blocked %s: %s\n", "",
				       tp->task->name, tp->why);
		}
	}
}

/*
 * Each policy's outcome on the same events (tl is the chosen policy's
 * timeline; the others are made here). 0, or -1 with errno set.
 */
static int compare_policies(const struct scenario *sc,
			    const struct sched_ops *ops, predict_fn predict,
			    const struct timeline *tl, struct tl_outcome *out)
{
	for (int k = 0; k <= RESCHED_AUTO; k++) {
		struct timeline *t = (int)tl->policy == k ? NULL :
				     timeline_new(sc, ops, (enum resched)k,
						  predict);
		int e;

		if (!t && (int)tl->policy != k)
			return -1;
		e = timeline_outcome(t ? t : tl, &out[k]);
		timeline_free(t);
		if (e) {
			errno = -e;
			return -1;
		}
	}
	return 0;
}

static void print_policies(const struct tl_outcome *out)
{
	printf("\npolicies on these events (the twin's prediction: rounds "
	       "back to back, a re-placed\ntask loses its round in flight and "
	       "waits reconfig_ms per new lightpath, on\nnew trees one round "
	       "trip for its new workers to connect, and over a cut on\nthe "
	       "same trees TCP's retransmission timer and slow start):\n"
	       "%-7s %9s %8s %14s "
	       "%6s %14s %12s\n", "policy", "finished", "rounds",
	       "completion s", "moves", "interrupted s", "byte-links");
	for (int k = 0; k <= RESCHED_AUTO; k++)
		printf("%-7s %4d/%-4d %8ld %14.6f %6d %14.6f %12.4g\n",
		       resched_name((enum resched)k), out[k].finished,
		       out[k].ntasks, out[k].rounds_done,
		       out[k].mean_completion_s, out[k].moves,
		       out[k].interrupted_s, out[k].bytes_links);
	printf("(completion: mean over the finished tasks, from their start "
	       "to their last round's end)\n");
}

/*
 * The plan as one JSON object, with each transfer's addresses (as up
 * gives them), the split when part (and naive), the timeline when tl and
 * the policies compared when out: printed when print, written to file
 * when file. 0, or -errno said.
 */
static int plan_json_out(struct plan *p, const struct partition *part,
			 const struct partition *naive,
			 const struct timeline *tl, int policy,
			 const struct tl_outcome *out, bool print,
			 const char *file)
{
	struct addressing *a = addressing_new(p);
	struct json_object *o = a ? plan_json_addressed(p, a) : NULL;
	int e = 0;

	addressing_free(a);
	if (o && part && json_add(o, "split", hosts_json(p, part, naive))) {
		json_object_put(o);
		o = NULL;
	}
	if (o && tl &&
	    (json_add(o, "reschedule",
		      json_object_new_string(resched_name(policy))) ||
	     json_add(o, "timeline", timeline_json(tl)) ||
	     (out && json_add(o, "policies",
			      policies_json(out, RESCHED_AUTO + 1))))) {
		json_object_put(o);
		o = NULL;
	}
	if (!o) {
		p_err("cannot build JSON: out of memory");
		return -ENOMEM;
	}
	if (file)
		e = write_json(o, file);
	if (!e && print)
		e = json_print(o);
	json_object_put(o);
	return e;
}

int cmd_plan(int argc, char **argv)
{
	const struct sched_ops *ops = &sched_mst;
	const char *dot, *task, *events, *json_file;
	predict_fn predict = predict_round;
	struct scenario *sc;
	struct plan *p;
	struct timeline *tl = NULL;
	struct tl_outcome out[RESCHED_AUTO + 1] = { 0 };
	bool json, compare, compared = false;
	int err, rc = 1, ti = -1, policy = RESCHED_NONE;
	uint64_t rounds = 0, hosts = 0;
	struct partition part = { 0 }, naive = { 0 };
	struct cli cl = { 0 };
	char list[4096];

	if (cli_sched_list(list, sizeof(list)))
		abort();	/* the schedulers' help outgrew the buffer */
	rc = cli_parse(&cl, argc, argv, 1, 1, PLAN_HELP, prog, list,
		       RUN_ROUNDS_MAX);
	if (rc != CLI_GO)
		return rc;
	if (cli_sched(&cl, &ops) || cli_predictor(&cl, &predict) ||
	    cli_uint(&cl, "rounds", 1, RUN_ROUNDS_MAX, &rounds) ||
	    cli_uint(&cl, "hosts", 1, PART_HOSTS_MAX, &hosts) ||
	    cli_resched(&cl, &policy))
		return EXIT_USAGE;
	json = cli_flag(&cl, "json");
	json_file = cli_str(&cl, "json-file", NULL);
	compare = cli_flag(&cl, "compare");
	dot = cli_str(&cl, "dot", NULL);
	task = cli_str(&cl, "task", NULL);
	events = cli_str(&cl, "events", NULL);
	if (task && !dot) {
		p_err("--task says which task's trees --dot draws: give --dot "
		      "FILE too");
		return EXIT_USAGE;
	}
	rc = plan_scenario(cl.argv[0], events, ops, &sc, &p);
	if (rc)
		return rc;
	rc = 1;
	if (rounds)
		set_rounds(sc, (unsigned)rounds);
	err = predict(p);
	if (err) {
		p_err("cannot predict a round of '%s': %s", sc->name,
		      predict_strerror(err));
		goto out_plan;
	}
	for (int t = 0; task && t < p->ntasks; t++)
		if (!strcmp(p->tasks[t].task->name, task))
			ti = t;
	if (task && ti < 0) {
		p_err("no task '%s' in '%s'", task, sc->name);
		rc = EXIT_USAGE;
		goto out_plan;
	}
	if (dot && write_dot(p, dot, ti))
		goto out_plan;
	if (hosts) {
		char why[256];

		err = partition_plan(p, (int)hosts, false, &part, why,
				     sizeof(why));
		if (!err)
			err = partition_plan(p, (int)hosts, true, &naive, why,
					     sizeof(why));
		if (err) {
			p_err("cannot split the plan of '%s': %s", sc->name,
			      why);
			rc = err == -EINVAL ? EXIT_USAGE : 1;
			goto out_plan;
		}
	}
	if (sc->nevents) {
		tl = timeline_new(sc, ops, policy, predict);
		if (!tl) {
			p_err("cannot follow the events of '%s': %s", sc->name,
			      predict_strerror(errno));
			goto out_plan;
		}
	}
	if (compare && !tl) {
		p_err("--compare compares re-scheduling policies on the "
		      "scenario's events: '%s' has none (--events FILE)",
		      sc->name);
		rc = EXIT_USAGE;
		goto out_plan;
	}
	if (compare) {
		if (compare_policies(sc, ops, predict, tl, out)) {
			p_err("cannot compare the policies on '%s': %s",
			      sc->name, strerror(errno));
			goto out_plan;
		}
		compared = true;
	}
	if ((json || json_file) &&
	    plan_json_out(p, hosts ? &part : NULL, &naive, tl, policy,
			  compared ? out : NULL, json, json_file))
		goto out_plan;
	if (!json) {
		plan_summary(p, stdout);
		if (hosts)
			hosts_print(p, &part, &naive, stdout);
		if (tl)
			print_timeline(sc, tl);
		if (compared)
			print_policies(out);
	}
	rc = fflush(stdout) ? 1 : 0;
out_plan:
	partition_release(&part);
	partition_release(&naive);
	for (int k = 0; k <= RESCHED_AUTO; k++)
		tl_outcome_release(&out[k]);
	timeline_free(tl);
	plan_free(p);
	scenario_free(sc);
	return rc;
}
