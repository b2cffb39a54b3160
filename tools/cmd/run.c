// SPDX-License-Identifier: MIT
/*
 * twinlab run: one session (session.c) for one scenario, from the command
 * line: build the emulation (unless it is up), run every task's workers
 * for R rounds, measure, store, summarize, tear down.
 */
#include "tools/twinlab.h"
#include "tools/view/srv.h"
#include "tools/json.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <math.h>

#include "tools/args.h"
#include "emu/lab.h"
#include "tools/results/results.h"
#include "tools/session/session.h"
#include "twin/predict.h"
#include "twin/sched.h"

static void run_usage(FILE *f)
{
	fprintf(f, "usage: %s run SCENARIO [--scheduler NAME] [--rounds R] "
		   "[--db FILE] [--prefix P]\n           [--dilation N|auto[:N]] "
		   "[--keep] [--events FILE]\n           "
		   "[--reschedule none|full|auto] [--view]\n\n"
		   "Runs every task's workers on the emulation (built first "
		   "unless it is up) for R\nrounds (default: the tasks' own), "
		   "stores everything in FILE (default\ntwinlab.db) and prints "
		   "measured against predicted figures, in scenario time,\n"
		   "with a fidelity verdict per round and for the run. Needs "
		   "root.\n"
		   "  --dilation N  run the emulation N times slower than the "
		   "scenario (rates / N,\n                delays x N); auto "
		   "(the default) starts at 1 (auto:N at N) and\n"
		   "                raises N until the first round is "
		   "faithful\n"
		   "  --keep        leave the emulation up afterwards\n"
		   "  --events FILE the scenario's events from FILE (its "
		   "background traffic is\n                played; see "
		   "scenarios/README.md)\n"
		   "  --reschedule POLICY\n                re-place tasks "
		   "live as the scenario's cuts and repairs change\n"
		   "                the network (none: what a cut leaves no "
		   "way; full: all; auto:\n                where it pays, "
		   "see 'twinlab plan --compare'); without it\n"
		   "                cuts are played and nothing moves\n"
		   "  --view        serve the run's live view in a browser on "
		   "this machine (as\n                'twinlab view'; its "
		   "address is printed first)\n"
		   "  --json        print the stored run as one JSON object on "
		   "stdout (scenario\n                seconds; progress and the "
		   "summary go to stderr)\n"
		   PREDICTOR_HELP, prog);
}

/* ---- --json: the run as stored ----------------------------------------- */

/* round, broadcast, training, upload: seconds of scenario time */
static struct json_object *json_phases(const double *v)
{
	static const char *const name[RES_NPHASES] = { "round", "broadcast",
						       "training", "upload" };
	struct json_object *o = json_object_new_object();

	for (int k = 0; o && k < RES_NPHASES; k++)
		J(!json_add_num(o, name[k], v[k]));
	return o;
fail:
	json_object_put(o);
	return NULL;
}

static int json_run(void *ctx, const struct results_run_row *r)
{
	struct json_object *o = ctx;

	J(!json_add(o, "run", json_object_new_int64(r->id)));
	J(!json_add(o, "scenario", json_object_new_string(r->scenario)));
	J(!json_add(o, "scheduler", json_object_new_string(r->scheduler)));
	J(!json_add(o, "status", json_object_new_string(r->status)));
	J(!json_add(o, "rounds", json_object_new_int(r->rounds)));
	J(!json_add_num(o, "dilation", r->dilation));
	J(!json_add_str(o, "verdict", r->verdict));
	J(!json_add(o, "predictor", json_object_new_string(r->predictor)));
	J(!json_add(o, "tasks", json_object_new_array()));
	return 0;
fail:
	return -ENOMEM;
}

static int json_task(void *ctx, const struct results_task_row *t)
{
	struct json_object *o = ctx, *tasks, *x = json_object_new_object();

	if (!x || !json_object_object_get_ex(o, "tasks", &tasks))
		goto fail;
	J(!json_add(x, "name", json_object_new_string(t->name)));
	J(!json_add(x, "local_models", json_object_new_int(t->nlocals)));
	J(!json_add(x, "blocked", json_object_new_boolean(t->blocked)));
	J(!json_add(x, "failed", json_object_new_boolean(t->failed)));
	J(!json_add_str(x, "why", t->why));
	J(!json_add(x, "rounds", json_object_new_int(t->nrounds)));
	J(!json_add(x, "checks_held", json_object_new_int(t->nheld)));
	J(!json_add(x, "predicted_s", json_phases(t->pred)));
	J(!json_add(x, "measured_s", json_phases(t->meas)));
	return json_push(tasks, x);
fail:
	json_object_put(x);
	return -ENOMEM;
}

/* Print run id of db as stored: 0, or 1 after saying why not. */
static int print_run_json(const char *db, int64_t id)
{
	struct json_object *o = json_object_new_object();
	struct results_reader *rd;
	char err[512];
	int e = -ENOMEM;

	rd = results_read_open(db, err, sizeof(err));
	if (!rd) {
		p_err("%s", err);
		json_object_put(o);
		return 1;
	}
	if (o && !json_add(o, "db", json_object_new_string(db)))
		e = results_read_one(rd, id, json_run, json_task, o, err,
				     sizeof(err));
	results_read_close(rd);
	if (e) {
		p_err("%s", e == -ENOMEM ? "out of memory" : err);
		json_object_put(o);
		return 1;
	}
	e = json_print(o);
	json_object_put(o);
	return e ? 1 : 0;
}

int dilation_arg(const char *arg, double *n, bool *auto_n)
{
	if (parse_dilation(arg, LAB_DILATION_MAX, n, auto_n)) {
		p_err("bad --dilation '%s': 'auto', 'auto:N' or N, with N a "
		      "number in [1, %g]", arg, LAB_DILATION_MAX);
		return -EINVAL;
	}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "scheduler", required_argument, NULL, 's' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "db", required_argument, NULL, 'd' },
		{ "prefix", required_argument, NULL, 'p' },
		{ "keep", no_argument, NULL, 'k' },
		{ "dilation", required_argument, NULL, 'D' },
		{ "predictor", required_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ "events", required_argument, NULL, 'e' },
		{ "reschedule", required_argument, NULL, 'R' },
		{ "view", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool json = false, view = false;
	struct session_opts o = {
		.ops = &sched_mst, .predict = predict_round, .auto_n = true,
		.db = "twinlab.db", .prefix = "tl", .out = stdout,
		.stop = &stop_signal,
	};
	struct session_result res;
	char err[512];
	int c, rc, lock;

	while ((c = getopt_long(argc, argv, "s:r:d:p:kh", opts, NULL)) != -1) {
		switch (c) {
		case 'D':
			if (dilation_arg(optarg, &o.dilation, &o.auto_n))
				return EXIT_USAGE;
			break;
		case 'P':
			o.predict = predictor_arg(optarg);
			if (!o.predict)
				return EXIT_USAGE;
			break;
		case 's':
			o.ops = sched_arg(optarg);
			if (!o.ops)
				return EXIT_USAGE;
			break;
		case 'r': {
			uint64_t v;

			if (parse_uint(optarg, 1, RUN_ROUNDS_MAX, &v)) {
				p_err("bad --rounds '%s': a whole number in "
				      "[1, %u]", optarg, RUN_ROUNDS_MAX);
				return EXIT_USAGE;
			}
			o.rounds = (unsigned)v;
			break;
		}
		case 'd':
			o.db = optarg;
			break;
		case 'p':
			o.prefix = optarg;
			break;
		case 'k':
			o.keep = true;
			break;
		case 'e':
			o.events = optarg;
			break;
		case 'R': {
			int k = resched_find(optarg);

			if (k < 0) {
				p_err("unknown re-scheduling policy '%s': "
				      "none, full or auto", optarg);
				return EXIT_USAGE;
			}
			o.follow = true;
			o.resched = (enum resched)k;
			break;
		}
		case 'j':
			json = true;
			o.out = stderr;
			break;
		case 'v':
			view = true;
			break;
		case 'h':
			run_usage(stdout);
			return 0;
		default:
			run_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		run_usage(stderr);
		return EXIT_USAGE;
	}
	if (!prefix_arg(o.prefix)) {
		return EXIT_USAGE;
	}
	if (geteuid() != 0) {
		p_err("'run' needs root: it builds namespaces and cgroups");
		return 1;
	}
	o.scenario = argv[optind];
	/*
	 * Every signal a user sends ends the run the same way: the round in
	 * progress is abandoned, the emulation torn down. A closed stdout
	 * (SIGPIPE, `twinlab run ... | head -1`) too.
	 */
	on_stop_signals();
	lock = lab_lock(o.prefix, "twinlab run", err, sizeof(err));
	if (lock < 0) {
		p_err("%s", err);
		return 1;
	}
	if (view && view_for_run(o.out, &o.view)) {
		lab_unlock(o.prefix, lock);
		return 1;
	}
	rc = session_run(&o, &res);
	view_srv_stop(o.view);
	lab_unlock(o.prefix, lock);
	/* what was stored, whatever its status; nothing if nothing was */
	if (json && res.run > 0 && print_run_json(o.db, res.run) && !rc)
		rc = 1;
	return rc;
}
