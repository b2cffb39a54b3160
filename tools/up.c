// SPDX-License-Identifier: MIT
/* twinlab up / down / clean: build and remove the emulation. */
#include "twinlab.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "emu/lab.h"
#include "emu/netns.h"
#include "twin/addr.h"
#include "twin/sched.h"

#define DEFAULT_PREFIX "tl"

static void up_usage(FILE *f)
{
	fprintf(f, "usage: %s up SCENARIO [--scheduler NAME] [--prefix P] "
		   "[--no-delay]\n\n"
		   "Builds the scheduled network in namespaces '<P>-<node>' "
		   "(default prefix '%s').\n"
		   "  --no-delay   do not start the delay line (no propagation "
		   "delay)\n", prog, DEFAULT_PREFIX);
}

static volatile sig_atomic_t stopped;

static void on_signal(int sig)
{
	(void)sig;
	stopped = 1;
}

int cmd_up(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "scheduler", required_argument, NULL, 's' },
		{ "prefix", required_argument, NULL, 'p' },
		{ "no-delay", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const struct sched_ops *ops = &sched_mst;
	struct lab_opts lo = { .prefix = DEFAULT_PREFIX, .delay = true };
	struct addressing *a = NULL;
	struct scenario *sc;
	struct plan *p = NULL;
	struct lab *lab;
	char err[512];
	int c, rc = 1, e, lock = -1;

	while ((c = getopt_long(argc, argv, "s:p:nh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			ops = sched_arg(optarg);
			if (!ops)
				return EXIT_USAGE;
			break;
		case 'p':
			lo.prefix = optarg;
			break;
		case 'n':
			lo.delay = false;
			break;
		case 'h':
			up_usage(stdout);
			return 0;
		default:
			up_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		up_usage(stderr);
		return EXIT_USAGE;
	}
	if (!lab_prefix_ok(lo.prefix)) {
		p_err("bad prefix '%s': use 1-%d characters of [a-z0-9] "
		      "starting with a letter", lo.prefix, LAB_PREFIX_MAX);
		return EXIT_USAGE;
	}
	if (geteuid() != 0) {
		p_err("'up' needs root: it creates network namespaces, veth "
		      "pairs and qdiscs");
		return 1;
	}
	lo.scenario_path = argv[optind];
	rc = plan_scenario(argv[optind], NULL, ops, &sc, &p);
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
	on_stop_signals(on_signal);
	lock = lab_lock(lo.prefix, "twinlab up", err, sizeof(err));
	if (lock < 0) {
		p_err("%s", err);
		goto out;
	}
	e = lab_up(p, a, &lo, &lab, err, sizeof(err));
	if (e) {
		p_err("%s", stopped ? "interrupted" : err);
		goto out;
	}
	if (stopped) {
		lab_free(lab);
		lab_down(lo.prefix, NULL, NULL);
		p_err("interrupted: what was built is removed");
		goto out;
	}
	printf("up: scenario %s, scheduler %s, prefix '%s': %d namespaces, "
	       "%d lightpaths, %d routes%s\n", sc->name, ops->name, lo.prefix,
	       sc->nnodes, p->net->nlp, a->nroutes,
	       lo.delay ? "" : ", no delay line");
	lab_free(lab);
	rc = 0;
out:
	lab_unlock(lo.prefix, lock);
	addressing_free(a);
	plan_free(p);
	scenario_free(sc);
	return rc;
}

static void print_removed(const char *what, void *arg)
{
	(void)arg;
	printf("removed %s\n", what);
}

/* A namespace carrying the prefix that down left: not recorded. */
static void say_kept(const char *name, void *arg)
{
	const char *prefix = arg;

	fprintf(stderr, "%s: kept namespace '%s': the state of prefix '%s' "
		"does not record it ('%s clean --prefix %s' removes whatever "
		"carries the prefix)\n", prog, name, prefix, prog, prefix);
}

static int down_or_clean(int argc, char **argv, bool clean)
{
	static const struct option opts[] = {
		{ "prefix", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *prefix = DEFAULT_PREFIX;
	char err[512];
	int c, n, lock;

	while ((c = getopt_long(argc, argv, "p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			prefix = optarg;
			break;
		case 'h':
			printf("usage: %s %s [--prefix P]\n\n%s\n\n"
			       "  --prefix P  the emulation's prefix (default "
			       "'%s'): its namespaces\n"
			       "              are '<P>-<node>'\n"
			       "\nNeeds root; refused while another twinlab "
			       "command (a run) holds the prefix.\n", prog,
			       clean ? "clean" : "down",
			       clean ? "Removes whatever a crashed 'up' or 'run' "
				       "with that prefix left: what its state\n"
				       "file records, every namespace named "
				       "'<P>-*' (made and not yet recorded\n"
				       "when it was killed), its cgroups, and "
				       "the state file."
				     : "Removes what 'up' built with that prefix "
				       "(namespaces, links, delay lines,\n"
				       "cgroups), as its state file records it, "
				       "and the state file; a namespace\n"
				       "named '<P>-*' that it does not record is "
				       "kept, and named.",
			       DEFAULT_PREFIX);
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		p_err("unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (!lab_prefix_ok(prefix)) {
		p_err("bad prefix '%s'", prefix);
		return EXIT_USAGE;
	}
	if (geteuid() != 0) {
		p_err("'%s' needs root", clean ? "clean" : "down");
		return 1;
	}
	/* a signal now would leave half a teardown: it waits for the end */
	on_stop_signals(on_signal);
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
	n = clean ? lab_down(prefix, print_removed, NULL) :
		    lab_down_recorded(prefix, NULL, NULL);
	if (!clean && n >= 0)
		netns_each(prefix, say_kept, (void *)prefix);
	lab_unlock(prefix, lock);
	if (n < 0) {
		p_err("cannot remove everything of prefix '%s': %s", prefix,
		      strerror(-n));
		return 1;
	}
	if (clean)
		printf("clean: prefix '%s': %d object%s removed\n", prefix, n,
		       n == 1 ? "" : "s");
	else
		printf("down: prefix '%s' removed (%d objects)\n", prefix, n);
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
