// SPDX-License-Identifier: MIT
/* twinlab up / down / clean: build and remove the emulation. */
#include "tools/twinlab.h"
#include "tools/json.h"
#include "tools/args.h"
#include "tools/planout.h"

#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "emu/lab.h"
#include "emu/netns.h"
#include "twin/addr.h"
#include "twin/partition.h"
#include "twin/sched.h"


#define UP_HELP \
	"usage: %s up SCENARIO [--scheduler NAME] [--prefix P] [--dilation N]\n" \
	"       [--no-delay] [--json] [--view] [--node NAME [--here]]\n" \
	"       [--hosts N]\n\n" \
	"Builds the scheduled network in namespaces '<P>-<node>'.\n\n" \
	"  -s, --scheduler NAME  the scheduler that places the tasks (default " \
	"mst;\n" \
	"                    'twinlab help plan' lists them)\n" \
	CLI_PREFIX_HELP \
	"  -D, --dilation N  time runs N times slower than the scenario's (1 " \
	"to %g,\n" \
	"                    default 1): rates / N, delays and TCP's clocks x " \
	"N, so\n" \
	"                    this host keeps up with fast links; a ping's RTT " \
	"is N\n" \
	"                    times the scenario's; 'twinlab run' on this " \
	"prefix runs\n" \
	"                    at N\n" \
	"  -n, --no-delay    do not start the delay line (no propagation " \
	"delay)\n" \
	"  -j, --json        say what was built as JSON: each server's " \
	"namespace and\n" \
	"                    access addresses, and each transfer's pair of " \
	"addresses\n" \
	"                    (from, to)\n" \
	"  --view            then serve its live view in a browser, as " \
	"'twinlab view'\n" \
	"                    does with its defaults, until Ctrl-C (the " \
	"emulation\n" \
	"                    stays up)\n" \
	"  --node NAME       build node NAME's part only, in namespace " \
	"'<P>-<NAME>' made\n" \
	"                    with its interfaces by a deployment of 'twinlab " \
	"export'\n" \
	"                    files: its interfaces found by name, the rest " \
	"made as a\n" \
	"                    whole 'up' makes it\n" \
	"  --here            with --node, where there is no such namespace: " \
	"in this\n" \
	"                    process's own (inside the node's container), " \
	"named so\n" \
	"  --hosts N         split over N hosts as 'export --hosts N' does " \
	"(2 to 256),\n" \
	"                    built here: each host a namespace '<P>--h<k>', " \
	"the fibres\n" \
	"                    cut between them carried by VXLAN over an " \
	"underlay\n"


/*
 * What up built, for machines and for a teacher's ping: every server's
 * namespace and access /31, and every transfer's own pair of addresses
 * (a transfer is sent from src on its sender's access interface to dst on
 * its receiver's; a ping between servers works from src to dst). NULL:
 * out of memory.
 */
static struct json_object *up_json(const struct plan *p,
				   const struct addressing *a,
				   const struct lab_opts *lo)
{
	struct json_object *o = json_object_new_object(), *srv, *tr;
	char ns[128];

	if (!o)
		return NULL;
	srv = json_object_new_array();
	if (json_add(o, "scenario", json_object_new_string(p->sc->name)) ||
	    json_add(o, "scheduler", json_object_new_string(p->scheduler)) ||
	    json_add(o, "prefix", json_object_new_string(lo->prefix)) ||
	    json_add(o, "namespaces", json_object_new_int(p->sc->nnodes)) ||
	    json_add(o, "lightpaths", json_object_new_int(p->net->nlp)) ||
	    json_add(o, "routes", json_object_new_int(a->nroutes)) ||
	    json_add(o, "delay_line", json_object_new_boolean(lo->delay)) ||
	    json_add(o, "dilation", json_object_new_double(lo->dilation)) ||
	    (lo->node ? json_add(o, "node", json_object_new_string(lo->node))
		      : json_add_null(o, "node")) ||
	    json_add(o, "servers", srv))
		goto fail;
	for (int i = 0; i < p->sc->nnodes; i++) {
		const struct scn_node *n = &p->sc->nodes[i];
		struct json_object *x;

		if (n->kind != NODE_SERVER)
			continue;
		x = json_object_new_object();
		lab_ns_name(lo->prefix, n->name, ns, sizeof(ns));
		if (json_push(srv, x) ||
		    json_add(x, "name", json_object_new_string(n->name)) ||
		    json_add(x, "namespace", json_object_new_string(ns)) ||
		    json_add(x, "router", json_object_new_string(
					      p->sc->nodes[n->attach].name)) ||
		    json_add(x, "address", json_addr(a->access[i] + 1)) ||
		    json_add(x, "router_address", json_addr(a->access[i])))
			goto fail;
	}
	tr = json_object_new_array();
	if (json_add(o, "transfers", tr))
		goto fail;
	for (int t = 0; t < p->ntasks; t++) {
		if (transfers_json(p, a, t, -1, tr))
			goto fail;
	}
	return o;
fail:
	json_object_put(o);
	return NULL;
}

int cmd_up(int argc, char **argv)
{
	const struct sched_ops *ops = &sched_mst;
	bool json, view;
	struct lab_opts lo = { .delay = true, .dilation = 1 };
	struct cli cl = { 0 };
	struct addressing *a = NULL;
	struct scenario *sc;
	struct plan *p = NULL;
	struct lab *lab;
	char err[512];
	int rc, e, lock = -1;
	uint64_t hosts = 0;

	rc = cli_parse(&cl, argc, argv, 1, 1, UP_HELP, prog,
		       LAB_DILATION_MAX);
	if (rc != CLI_GO)
		return rc;
	if (cli_sched(&cl, &ops) || cli_prefix(&cl, &lo.prefix) ||
	    cli_real(&cl, "dilation", 1, LAB_DILATION_MAX, &lo.dilation) ||
	    cli_uint(&cl, "hosts", 2, PART_HOSTS_MAX, &hosts))
		return EXIT_USAGE;
	lo.hosts = (int)hosts;
	lo.delay = !cli_flag(&cl, "no-delay");
	json = cli_flag(&cl, "json");
	view = cli_flag(&cl, "view");
	lo.node = cli_str(&cl, "node", NULL);
	lo.here = cli_flag(&cl, "here");
	if (lo.here && !lo.node) {
		p_err("--here builds one node's part in this namespace: give "
		      "--node NAME");
		return EXIT_USAGE;
	}
	if (lo.node && view) {
		p_err("--node builds one node's part: there is no whole "
		      "network to --view");
		return EXIT_USAGE;
	}
	if (geteuid() != 0) {
		p_err("'up' needs root: it creates network namespaces, veth "
		      "pairs and qdiscs");
		return 1;
	}
	lo.scenario_path = cl.argv[0];
	rc = plan_scenario(lo.scenario_path, NULL, ops, &sc, &p);
	if (rc)
		return rc;
	rc = 1;
	/* the routes and addresses of its traffic, for a run to play */
	if (sc->nevents && (scenario_traffic_all(sc) ||
			    plan_background(p))) {
		p_err("out of memory");
		goto out;
	}
	if (sc->nevents)
		p_err("warning: '%s' has %d events: up builds the network at "
		      "t = 0, with its background traffic's routes, and plays "
		      "none of them ('twinlab run' plays the traffic)",
		      sc->name, sc->nevents);
	for (int i = 0; i < p->ntasks; i++)
		if (p->tasks[i].blocked)
			p_err("warning: task '%s' is blocked and not built: %s",
			      p->tasks[i].task->name, p->tasks[i].why);
	a = addressing_new(p);
	if (!a) {
		p_err("cannot address '%s' in %s: %s", sc->name,
		      sc->addressing, errno == ENOSPC ? "the range is too "
		      "small for this plan" : strerror(errno));
		goto out;
	}
	/*
	 * A signal while building: finish the step in hand, then remove
	 * everything built (lab_up rolls back itself if a step fails).
	 */
	on_stop_signals();
	lock = lab_lock(lo.prefix, "twinlab up", err, sizeof(err));
	if (lock < 0) {
		p_err("%s", err);
		goto out;
	}
	e = lab_up(p, a, &lo, &lab, err, sizeof(err));
	if (e) {
		p_err("%s", stop_signal ? "interrupted" : err);
		goto out;
	}
	if (stop_signal) {
		lab_free(lab);
		lab_down(lo.prefix, NULL, NULL);
		p_err("interrupted: what was built is removed");
		goto out;
	}
	if (json) {
		struct json_object *o = up_json(p, a, &lo);

		if (!o) {
			/* it is up: say so, and that the JSON is missing */
			p_err("up, but out of memory for the JSON ('%s down "
			      "--prefix %s' removes it)", prog, lo.prefix);
			lab_free(lab);
			goto out;
		}
		e = json_print(o);
		json_object_put(o);
		if (e) {
			p_err("up, but the JSON was not written ('%s down "
			      "--prefix %s' removes it)",
			      prog, lo.prefix);
			lab_free(lab);
			goto out;
		}
	} else {
		if (lo.node)
			printf("up: node %s's part of ", lo.node);
		printf("%sscenario %s, scheduler %s, prefix '%s': %d "
		       "namespaces, %d lightpaths, %d routes%s",
		       lo.node ? "" : "up: ", sc->name, ops->name, lo.prefix,
		       sc->nnodes, p->net->nlp, a->nroutes,
		       lo.delay ? "" : ", no delay line");
		if (lo.dilation != 1)
			printf(", dilation %g (time runs %g times slower)",
			       lo.dilation, lo.dilation);
		putchar('\n');
	}
	lab_free(lab);
	rc = 0;
out:
	lab_unlock(lo.prefix, lock);
	addressing_free(a);
	plan_free(p);
	scenario_free(sc);
	if (!rc && view && !stop_signal)
		rc = view_after_up(lo.prefix, json);
	return rc;
}

/* What down or clean did, said as text or gathered for --json. */
struct teardown {
	const char *prefix;
	struct json_object *removed, *kept;	/* NULL: say it as text */
	bool lost;				/* out of memory gathering */
};

static void print_removed(const char *what, void *arg)
{
	struct teardown *td = arg;

	if (!td->removed)
		printf("removed %s\n", what);
	else if (json_push(td->removed, json_object_new_string(what)))
		td->lost = true;
}

/* A namespace carrying the prefix that down left: not recorded. */
static void say_kept(const char *name, void *arg)
{
	struct teardown *td = arg;

	if (td->kept && json_push(td->kept, json_object_new_string(name)))
		td->lost = true;
	fprintf(stderr, "%s: kept namespace '%s': the state of prefix '%s' "
		"does not record it ('%s clean --prefix %s' removes whatever "
		"carries the prefix)\n", prog, name, td->prefix, prog,
		td->prefix);
}

#define DOWN_HELP \
	"usage: %s %s [--prefix P] [--json]\n\n%s\n\n" \
	CLI_PREFIX_HELP \
	"  -j, --json        say what was removed (and, down, the namespaces " \
	"kept)\n" \
	"                    as JSON\n" \
	"\nNeeds root; refused while another twinlab command (a run) holds " \
	"the prefix.\n"
#define DOWN_WHAT \
	"Removes what 'up' built with that prefix (namespaces, links, delay " \
	"lines,\ncgroups), as its state file records it, and the state file; " \
	"a namespace\nnamed '<P>-*' that it does not record is kept, and named."
#define CLEAN_WHAT \
	"Removes whatever a crashed 'up' or 'run' with that prefix left: what " \
	"its state\nfile records, every namespace named '<P>-*' (made and not " \
	"yet recorded\nwhen it was killed), its cgroups, and the state file."

static int down_or_clean(int argc, char **argv, bool clean)
{
	const char *prefix = NULL;
	struct teardown td = { 0 };
	struct json_object *o = NULL;
	struct cli cl = { 0 };
	bool json;
	char err[512];
	int n, lock;

	n = cli_parse(&cl, argc, argv, 0, 0, DOWN_HELP, prog,
		      clean ? "clean" : "down", clean ? CLEAN_WHAT : DOWN_WHAT);
	if (n != CLI_GO)
		return n;
	if (cli_prefix(&cl, &prefix))
		return EXIT_USAGE;
	json = cli_flag(&cl, "json");
	if (geteuid() != 0) {
		p_err("'%s' needs root", clean ? "clean" : "down");
		return 1;
	}
	/* a signal now would leave half a teardown: it waits for the end */
	on_stop_signals();
	lock = lab_lock(prefix, clean ? "twinlab clean" : "twinlab down",
			err, sizeof(err));
	if (lock < 0) {
		p_err("%s", err);
		return 1;
	}
	if (!clean && !lab_exists(prefix)) {
		lab_unlock(prefix, lock);
		p_err("no emulation with prefix '%s' is up", prefix);
		return 1;
	}
	td.prefix = prefix;
	if (json) {
		o = json_object_new_object();
		td.removed = json_object_new_array();
		td.kept = json_object_new_array();
		if (!o || json_add(o, "removed", td.removed) ||
		    json_add(o, "kept", td.kept))
			td.lost = true;
	}
	n = clean ? lab_down(prefix, print_removed, &td) :
		    lab_down_recorded(prefix, json ? print_removed : NULL,
				      &td);
	if (!clean && n >= 0)
		netns_each(prefix, say_kept, &td);
	lab_unlock(prefix, lock);
	if (n < 0) {
		json_object_put(o);
		p_err("cannot remove everything of prefix '%s': %s", prefix,
		      strerror(-n));
		return 1;
	}
	if (json && (td.lost ||
		     json_add(o, "command", json_object_new_string(
					       clean ? "clean" : "down")) ||
		     json_add(o, "prefix", json_object_new_string(prefix)) ||
		     json_add(o, "objects", json_object_new_int(n)))) {
		json_object_put(o);
		p_err("%s: prefix '%s': %d objects removed, but out of memory "
		      "for the JSON", clean ? "clean" : "down", prefix, n);
		return 1;
	}
	if (json) {
		int e = json_print(o);

		json_object_put(o);
		if (e)
			return 1;
	} else if (clean) {
		printf("clean: prefix '%s': %d object%s removed\n", prefix, n,
		       n == 1 ? "" : "s");
	} else {
		printf("down: prefix '%s' removed (%d objects)\n", prefix, n);
	}
	return 0;
}

int cmd_down(int argc, char **argv)
{
	return down_or_clean(argc, argv, false);
}

int cmd_clean(int argc, char **argv)
{
	return down_or_clean(argc, argv, true);
}
