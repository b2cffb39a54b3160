// SPDX-License-Identifier: MIT
/*
 * twinlab run: one session (session.c) for one scenario, from the command
 * line: build the emulation (unless it is up), run every task's workers
 * for R rounds, measure, store, summarize, tear down.
 */
#include "twinlab.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "emu/lab.h"
#include "session.h"
#include "twin/predict.h"
#include "twin/sched.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void run_usage(FILE *f)
{
	fprintf(f, "usage: %s run SCENARIO [--scheduler NAME] [--rounds R] "
		   "[--db FILE] [--prefix P]\n           [--dilation N|auto[:N]] "
		   "[--keep]\n\n"
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
		   PREDICTOR_HELP, prog);
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
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct session_opts o = {
		.ops = &sched_mst, .predict = predict_round, .auto_n = true,
		.db = "twinlab.db", .prefix = "tl", .out = stdout,
		.stop = &interrupted,
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

			if (parse_uint(optarg, 1, 100000, &v)) {
				p_err("bad --rounds '%s': a whole number in "
				      "[1, 100000]", optarg);
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
	if (!lab_prefix_ok(o.prefix)) {
		p_err("bad prefix '%s'", o.prefix);
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
	on_stop_signals(on_signal);
	lock = lab_lock(o.prefix, "twinlab run", err, sizeof(err));
	if (lock < 0) {
		p_err("%s", err);
		return 1;
	}
	rc = session_run(&o, &res);
	lab_unlock(o.prefix, lock);
	return rc;
}
