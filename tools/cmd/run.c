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
#include "twin/partition.h"
#include "twin/predict.h"
#include "twin/sched.h"

#define RUN_HELP \
	"usage: %s run SCENARIO [--scheduler NAME] [--rounds R] [--db FILE]\n" \
	"           [--prefix P] [--dilation N|auto[:N]] [--keep] " \
	"[--events FILE]\n" \
	"           [--reschedule none|full|auto] [--predictor M] [--json] " \
	"[--view]\n" \
	"           [--hosts N] [--workers-via CMD] [--agents-via CMD] " \
	"[--deployed]\n\n" \
	"Runs every task's workers on the emulation (built first unless it is " \
	"up) for R\nrounds, stores everything in FILE and prints measured " \
	"against predicted\nfigures, in scenario time, with a fidelity " \
	"verdict per round and for the run.\nNeeds root.\n\n" \
	"  -s, --scheduler NAME  the scheduler that places the tasks (default " \
	"mst;\n" \
	"                    'twinlab help plan' lists them)\n" \
	"  -r, --rounds R    every task runs R rounds (1 to %u; default: the " \
	"tasks'\n                    own)\n" \
	"  -d, --db FILE     the results database (default twinlab.db)\n" \
	CLI_PREFIX_HELP \
	"  --dilation N|auto[:N]  run the emulation N times slower than the " \
	"scenario\n" \
	"                    (rates / N, delays x N); auto (the default) " \
	"starts at 1\n" \
	"                    (auto:N at N) and raises N until the first round " \
	"is\n" \
	"                    faithful (a round degraded by what comes now and " \
	"then\n" \
	"                    alone, the host's stalls, one overrun in 50 " \
	"phases, one\n" \
	"                    segment resent or one packet the delay line let " \
	"go late,\n" \
	"                    is first run again at the same N)\n" \
	"  -k, --keep        leave the emulation up afterwards\n" \
	"  --events FILE     the scenario's events from FILE (its background " \
	"traffic is\n" \
	"                    played; see scenarios/README.md)\n" \
	"  --reschedule POLICY  re-place tasks live as the scenario's cuts and " \
	"repairs\n" \
	"                    change the network (none: what a cut leaves no " \
	"way; full:\n" \
	"                    all; auto: where it pays, see 'twinlab plan " \
	"--compare');\n" \
	"                    without it cuts are played and nothing moves\n" \
	CLI_PREDICTOR_HELP \
	"  --json            print the stored run as one JSON object on " \
	"stdout\n" \
	"                    (scenario seconds; progress and the summary go " \
	"to stderr)\n" \
	"  --view            serve the run's live view in a browser on this " \
	"machine (as\n" \
	"                    'twinlab view'; its address is printed first); " \
	"with\n" \
	"                    --reschedule a fibre cut or repaired from the " \
	"page joins the\n" \
	"                    story at its time and the run starts again with " \
	"it\n" \
	"  --hosts N         on an emulation split over N hosts (2 to 256) " \
	"as 'export\n" \
	"                    --hosts N' splits it, built here ('up --hosts')\n" \
	"  --workers-via CMD  start each worker with CMD instead of forking " \
	"it into its\n" \
	"                    server's namespace: its words (split at spaces) " \
	"with {node}\n" \
	"                    the server's name, e.g. 'docker exec -i " \
	"clab-LAB-{node}\n" \
	"                    /twinlab/twinlab worker'; it speaks to the worker " \
	"over\n" \
	"                    CMD's stdin and stdout ('twinlab help worker')\n" \
	"  --agents-via CMD  read each router's and server's counters (shapers, " \
	"TCP,\n" \
	"                    a delay line that is not this host's) through an " \
	"agent\n" \
	"                    started by CMD ({node} as above, e.g. '... " \
	"twinlab agent')\n" \
	"                    instead of in its namespace ('twinlab help " \
	"agent')\n" \
	"  --deployed        on an exported topology deployed on other " \
	"hosts, each node\n" \
	"                    built by its own 'up --node': nothing is built " \
	"or removed\n" \
	"                    here; needs --workers-via, --agents-via (its " \
	"agent given\n" \
	"                    --prefix {prefix}), the deployment's --dilation " \
	"N and its\n" \
	"                    --prefix; {prefix} in the commands is each " \
	"node's (its exec\n" \
	"                    line's --prefix). Not with --hosts, --keep, " \
	"--view, --events\n" \
	"                    or --reschedule\n"

#define RUN_VIA_WORDS 64	/* words of --workers-via, --agents-via */

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
	J(!json_add(x, "rounds_touched", json_object_new_int(t->ntouched)));
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

/*
 * --workers-via, --agents-via (opt): the command's words, split at blanks
 * (no shell: each word is an argument as it stands), one of them naming
 * the node.
 */
static int via_words(const char *opt, const char *cmd, char *buf, size_t len,
		     char **words, int max)
{
	int n = 0;

	if (strlen(cmd) >= len) {
		p_err("bad --%s: longer than %zu bytes", opt, len - 1);
		return EXIT_USAGE;
	}
	strcpy(buf, cmd);
	for (char *save = NULL, *w = strtok_r(buf, " \t", &save); w;
	     w = strtok_r(NULL, " \t", &save)) {
		if (n == max) {
			p_err("bad --%s '%s': more than %d words", opt, cmd,
			      max);
			return EXIT_USAGE;
		}
		words[n++] = w;
	}
	words[n] = NULL;
	for (int i = 0; i < n; i++)
		if (strstr(words[i], "{node}"))
			return 0;
	p_err("bad --%s '%s': no word names the node ({node}), so every "
	      "%s would start in one place", opt, cmd,
	      strcmp(opt, "workers-via") ? "agent" : "worker");
	return EXIT_USAGE;
}

/*
 * --deployed: what a run on a deployment of parts needs, and what it
 * cannot do there yet (each of those is played in namespaces of this
 * host). 0 or EXIT_USAGE, said.
 */
static int deployed_usage(const struct cli *cl, const struct session_opts *o)
{
	static const char *const not[] = { "hosts", "keep", "view", "events",
					   "reschedule" };

	if (!o->via || !o->agents_via) {
		p_err("--deployed needs --workers-via and --agents-via: the "
		      "workers and the counters are in the deployment's "
		      "containers");
		return EXIT_USAGE;
	}
	if (o->auto_n) {
		p_err("--deployed needs the deployment's --dilation N (from "
		      "its nodes' exec lines): it cannot be rebuilt at "
		      "another");
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(not) / sizeof(not[0]); i++)
		if (cli_flag(cl, not[i])) {
			p_err("--deployed with --%s: not on a deployment of "
			      "other hosts' nodes", not[i]);
			return EXIT_USAGE;
		}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct cli cl = { 0 };
	struct session_opts o = {
		.ops = &sched_mst, .predict = predict_round, .auto_n = true,
		.db = "twinlab.db", .out = stdout,
		.stop = &stop_signal,
	};
	struct session_result res;
	char err[512];
	int policy = RESCHED_NONE;
	uint64_t rounds = 0, hosts = 0;
	char via_buf[4096], *via[RUN_VIA_WORDS + 1];
	char ag_buf[4096], *ag[RUN_VIA_WORDS + 1];
	const char *via_cmd, *ag_cmd;
	int rc, lock;

	rc = cli_parse(&cl, argc, argv, 1, 1, RUN_HELP, prog, RUN_ROUNDS_MAX);
	if (rc != CLI_GO)
		return rc;
	if (cli_dilation(&cl, &o.dilation, &o.auto_n) ||
	    cli_predictor(&cl, &o.predict) || cli_sched(&cl, &o.ops) ||
	    cli_uint(&cl, "rounds", 1, RUN_ROUNDS_MAX, &rounds) ||
	    cli_uint(&cl, "hosts", 2, PART_HOSTS_MAX, &hosts) ||
	    cli_prefix(&cl, &o.prefix))
		return EXIT_USAGE;
	o.hosts = (int)hosts;
	via_cmd = cli_str(&cl, "workers-via", NULL);
	if (via_cmd && via_words("workers-via", via_cmd, via_buf,
				 sizeof(via_buf), via, RUN_VIA_WORDS))
		return EXIT_USAGE;
	o.via = via_cmd ? via : NULL;
	ag_cmd = cli_str(&cl, "agents-via", NULL);
	if (ag_cmd && via_words("agents-via", ag_cmd, ag_buf, sizeof(ag_buf),
				ag, RUN_VIA_WORDS))
		return EXIT_USAGE;
	o.agents_via = ag_cmd ? ag : NULL;
	o.rounds = (unsigned)rounds;
	o.db = cli_str(&cl, "db", o.db);
	o.keep = cli_flag(&cl, "keep");
	o.events = cli_str(&cl, "events", NULL);
	if (cli_resched(&cl, &policy))
		return EXIT_USAGE;
	o.follow = cli_flag(&cl, "reschedule");
	o.page_replans = o.follow;
	o.resched = (enum resched)policy;
	o.deployed = cli_flag(&cl, "deployed");
	if (o.deployed && deployed_usage(&cl, &o))
		return EXIT_USAGE;
	if (cli_flag(&cl, "json"))
		o.out = stderr;
	if (geteuid() != 0) {
		p_err("'run' needs root: it builds namespaces and cgroups, and "
		      "keeps its lock in " LAB_STATE_DIR);
		return 1;
	}
	o.scenario = cl.argv[0];
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
	if (cli_flag(&cl, "view") && view_for_run(o.out, &o.view)) {
		lab_unlock(o.prefix, lock);
		return 1;
	}
	rc = session_run(&o, &res);
	view_srv_stop(o.view);
	lab_unlock(o.prefix, lock);
	/* what was stored, whatever its status; nothing if nothing was */
	if (cli_flag(&cl, "json") && res.run > 0 && print_run_json(o.db, res.run) && !rc)
		rc = 1;
	return rc;
}
