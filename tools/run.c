// SPDX-License-Identifier: MIT
/*
 * twinlab run: build the emulation (unless it is up), run every task's
 * workers for R rounds, measure, store, summarize, tear down.
 */
#include "twinlab.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/fleet.h"
#include "emu/lab.h"
#include "emu/netns.h"
#include "emu/nl.h"
#include "planout.h"
#include "results.h"
#include "twin/addr.h"
#include "twin/predict.h"
#include "twin/sched.h"

struct counter {
	int link;
	char ns[64], ifname[16];
	int ifindex;
	struct nl *nl;		/* borrowed from the namespace cache */
	uint64_t before;
};

struct nscache {
	char ns[64];
	struct nl *nl;
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void run_usage(FILE *f)
{
	fprintf(f, "usage: %s run SCENARIO [--scheduler NAME] [--rounds R] "
		   "[--db FILE] [--prefix P] [--keep]\n\n"
		   "Runs every task's workers on the emulation (built first "
		   "unless it is up) for R\nrounds (default: the tasks' own), "
		   "stores everything in FILE (default\ntwinlab.db) and prints "
		   "measured against predicted figures. Needs root.\n"
		   "  --keep   leave the emulation up afterwards\n", prog);
}

/* Where a directed link's bytes leave: namespace and interface. */
static void link_end(const struct plan *p, const char *prefix, int link,
		     char *ns, char *ifname)
{
	const struct scenario *sc = p->sc;
	int n2 = 2 * sc->nnodes;

	if (link < n2) {
		int s = link / 2;

		if (link % 2 == 0) {
			lab_ns_name(prefix, sc->nodes[s].name, ns, 64);
			snprintf(ifname, 16, "up0");
		} else {
			lab_ns_name(prefix, sc->nodes[sc->nodes[s].attach].name,
				    ns, 64);
			snprintf(ifname, 16, "acc%d", s);
		}
	} else {
		int l = (link - n2) / 2;
		const struct lightpath *lp = &p->net->lp[l];

		lab_ns_name(prefix,
			    sc->nodes[link % 2 ? lp->b : lp->a].name, ns, 64);
		snprintf(ifname, 16, "lp%d", l);
	}
}

static int open_counters(const struct plan *p, const char *prefix,
			 struct counter **out, int *n, struct nscache **cache,
			 int *ncache)
{
	struct counter *c = calloc((size_t)plan_nlinks(p) + 1, sizeof(*c));
	struct nscache *nc = calloc((size_t)p->sc->nnodes + 1, sizeof(*nc));
	int k = 0, m = 0;

	*out = c;
	*cache = nc;
	if (!c || !nc)
		return -ENOMEM;
	for (int l = 0; l < plan_nlinks(p); l++) {
		struct counter *x = &c[k];
		int saved, j;

		if (p->link_bytes[l] <= 0)
			continue;
		x->link = l;
		link_end(p, prefix, l, x->ns, x->ifname);
		for (j = 0; j < m && strcmp(nc[j].ns, x->ns); j++)
			;
		if (j == m) {
			snprintf(nc[m].ns, sizeof(nc[m].ns), "%s", x->ns);
			nc[m].nl = nl_open(x->ns);
			if (!nc[m].nl)
				return -errno;
			m++;
		}
		x->nl = nc[j].nl;
		if (netns_enter(x->ns, &saved))
			return -ENOENT;
		x->ifindex = (int)if_nametoindex(x->ifname);
		netns_leave(saved);
		if (!x->ifindex)
			return -ENODEV;
		k++;
	}
	*n = k;
	*ncache = m;
	return 0;
}

static uint64_t tx_bytes(const struct counter *x)
{
	uint64_t tx = 0, rx, tp, rp;

	if (nl_link_stats(x->nl, x->ifindex, &tx, &rx, &tp, &rp))
		return 0;
	return tx;
}

static void summary(const struct plan *p, const struct fleet *f,
		    double (*meas)[4], const int *rounds_done,
		    const double *acc_first, const double *acc_last,
		    const bool *checks_ok)
{
	printf("\n%-10s %6s %7s %9s %9s  %9s %9s %9s  %6s %6s %s\n", "task",
	       "locals", "rounds", "round ms", "pred ms", "bcast ms",
	       "train ms", "upload ms", "acc0", "acc", "check");
	for (int t = 0; t < p->ntasks; t++) {
		const struct task_plan *tp = &p->tasks[t];
		const char *why;
		int n = rounds_done[t];

		if (tp->blocked) {
			printf("%-10s %6d BLOCKED: %s\n", tp->task->name,
			       tp->task->nlocals, tp->why);
			continue;
		}
		if (fleet_failed(f, t, &why)) {
			printf("%-10s %6d FAILED after %d rounds: %s\n",
			       tp->task->name, tp->task->nlocals, n, why);
			continue;
		}
		printf("%-10s %6d %7d %9.2f %9.2f  %4.1f/%4.1f %4.1f/%4.1f "
		       "%4.1f/%4.1f  %6.3f %6.3f %s\n", tp->task->name,
		       tp->task->nlocals, n, meas[t][0] / n * 1e3,
		       tp->round_s * 1e3, meas[t][1] / n * 1e3,
		       tp->bcast_s * 1e3, meas[t][2] / n * 1e3,
		       tp->compute_s * 1e3, meas[t][3] / n * 1e3,
		       tp->upload_s * 1e3, acc_first[t], acc_last[t],
		       checks_ok[t] ? "ok" : "FAILED");
	}
	printf("(measured/predicted, per round, mean over rounds; acc0: "
	       "held-out accuracy after round 1)\n");
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
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const struct sched_ops *ops = &sched_mst;
	struct lab_opts lo = { .prefix = "tl", .delay = true };
	struct fleet_opts fo = { .timeout_s = 60, .cgroups = true };
	const char *db = "twinlab.db";
	struct scenario *sc;
	struct plan *p = NULL;
	struct addressing *a = NULL;
	struct results *res = NULL;
	struct fleet *f = NULL;
	struct lab *lab = NULL;
	struct counter *ctr = NULL;
	struct nscache *nsc = NULL;
	struct fleet_task_round *rr = NULL;
	struct link_sample *ls = NULL;
	double (*meas)[4] = NULL, *acc0 = NULL, *acc1 = NULL;
	double link_meas = 0, link_pred = 0;
	unsigned rounds_run = 0;
	int *done = NULL, nctr = 0, nnsc = 0, c, rc = 1, e, failed = 0;
	bool keep = false, built = false, *checks = NULL;
	char err[512] = "";
	unsigned rounds = 0;
	char *json_text = NULL;

	while ((c = getopt_long(argc, argv, "s:r:d:p:kh", opts, NULL)) != -1) {
		switch (c) {
		case 'D': {
			char *end;

			errno = 0;
			lo.dilation = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !(lo.dilation >= 1 &&
			      lo.dilation <= LAB_DILATION_MAX)) {
				p_err("bad --dilation '%s': a number in [1, %g]",
				      optarg, LAB_DILATION_MAX);
				return EXIT_USAGE;
			}
			break;
		}
		case 's':
			ops = sched_arg(optarg);
			if (!ops)
				return EXIT_USAGE;
			break;
		case 'r':
			rounds = (unsigned)strtoul(optarg, NULL, 10);
			if (rounds < 1 || rounds > 100000) {
				p_err("bad --rounds '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'd':
			db = optarg;
			break;
		case 'p':
			lo.prefix = optarg;
			break;
		case 'k':
			keep = true;
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
	if (!lab_prefix_ok(lo.prefix)) {
		p_err("bad prefix '%s'", lo.prefix);
		return EXIT_USAGE;
	}
	if (geteuid() != 0) {
		p_err("'run' needs root: it builds namespaces and cgroups");
		return 1;
	}
	lo.scenario_path = argv[optind];
	sc = load_scenario(argv[optind]);
	if (!sc)
		return EXIT_USAGE;
	fo.prefix = lo.prefix;
	if (!rounds)
		for (int t = 0; t < sc->ntasks; t++)
			rounds = sc->tasks[t].rounds > rounds ?
					 sc->tasks[t].rounds : rounds;
	fo.rounds = rounds ? rounds : 1;
	p = sched_plan(sc, ops);
	if (!p || predict_round(p)) {
		p_err("cannot schedule '%s': %s", sc->name, strerror(errno));
		goto out;
	}
	a = addressing_new(p);
	if (!a) {
		p_err("cannot address '%s': %s", sc->name, strerror(errno));
		goto out;
	}
	{
		struct json_object *o = plan_json(p);

		json_text = o ? strdup(json_object_to_json_string(o)) : NULL;
		json_object_put(o);
	}
	res = results_open(db, err, sizeof(err));
	if (!res || !json_text) {
		p_err("%s", json_text ? err : "out of memory");
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (lab_exists(lo.prefix)) {
		char was[512] = "", how[64] = "";

		/* an emulation of the same plan (same scenario file and
		 * scheduler: the plan is deterministic) is used as it is */
		if (lab_state_get(lo.prefix, "scenario", was, sizeof(was)) ||
		    lab_state_get(lo.prefix, "scheduler", how, sizeof(how)) ||
		    strcmp(was, argv[optind]) || strcmp(how, ops->name)) {
			p_err("prefix '%s' is up with another plan (scenario "
			      "'%s', scheduler '%s'): take it down first or "
			      "choose another --prefix", lo.prefix,
			      was[0] ? was : "?", how[0] ? how : "?");
			goto out;
		}
		{
			char dv[64] = "";
			double was_n;

			if (lab_state_get(lo.prefix, "dilation", dv, sizeof(dv)) ||
			    sscanf(dv, "%lf", &was_n) != 1 || !(was_n >= 1)) {
				p_err("prefix '%s' has no valid dilation in its "
				      "state: take it down first", lo.prefix);
				goto out;
			}
			if (lo.dilation && lo.dilation != was_n) {
				p_err("prefix '%s' is up at dilation %g, not %g",
				      lo.prefix, was_n, lo.dilation);
				goto out;
			}
			lo.dilation = was_n;
		}
		printf("run: %s, scheduler %s, %u rounds, prefix '%s', dilation "
		       "%g: using the emulation that is up\n", sc->name,
		       ops->name, fo.rounds, lo.prefix, lo.dilation);
	} else {
		if (!lo.dilation)
			lo.dilation = 1;
		printf("run: %s, scheduler %s, %u rounds, prefix '%s', dilation "
		       "%g: building\n", sc->name, ops->name, fo.rounds,
		       lo.prefix, lo.dilation);
		fflush(stdout);
		e = lab_up(p, a, &lo, &lab, err, sizeof(err));
		if (e) {
			p_err("%s", err);
			goto out;
		}
		built = true;
	}
	fflush(stdout);
	{
		char *dot = NULL;
		size_t dlen = 0;
		FILE *mf = open_memstream(&dot, &dlen);

		if (mf) {
			if (plan_dot(p, mf)) {
				/* the picture is optional; the run is not */
			}
			fclose(mf);
		}
		e = results_begin_run(res, p, argv[optind], json_text, dot,
				      lo.prefix, fo.rounds, err, sizeof(err));
		free(dot);
	}
	if (e) {
		p_err("%s", err);
		goto out;
	}
	e = open_counters(p, lo.prefix, &ctr, &nctr, &nsc, &nnsc);
	if (e) {
		p_err("cannot open the link counters: %s", strerror(-e));
		goto out;
	}
	rr = calloc((size_t)p->ntasks + 1, sizeof(*rr));
	ls = calloc((size_t)nctr + 1, sizeof(*ls));
	meas = calloc((size_t)p->ntasks + 1, sizeof(*meas));
	acc0 = calloc((size_t)p->ntasks + 1, sizeof(*acc0));
	acc1 = calloc((size_t)p->ntasks + 1, sizeof(*acc1));
	done = calloc((size_t)p->ntasks + 1, sizeof(*done));
	checks = calloc((size_t)p->ntasks + 1, sizeof(*checks));
	if (!rr || !ls || !meas || !acc0 || !acc1 || !done || !checks) {
		p_err("out of memory");
		goto out;
	}
	for (int t = 0; t < p->ntasks; t++)
		checks[t] = true;
	fo.dilation = lo.dilation;
	fo.timeout_s = 60 + 2 * lo.dilation;
	printf("run: starting the workers\n");
	fflush(stdout);
	e = fleet_start(p, a, &fo, &f, err, sizeof(err));
	if (e) {
		p_err("%s", err);
		goto out;
	}
	for (unsigned r = 1; r <= fo.rounds && !interrupted; r++) {
		int ok, nt = 0, live = 0;
		double sum = 0, psum = 0, acc = 0;

		for (int t = 0; t < p->ntasks; t++)
			live += !p->tasks[t].blocked && !fleet_failed(f, t, NULL);
		for (int i = 0; i < nctr; i++)
			ctr[i].before = tx_bytes(&ctr[i]);
		ok = fleet_round(f, r, rr);
		for (int i = 0; i < nctr; i++) {
			const struct counter *x = &ctr[i];

			link_name(p, x->link, ls[i].name, sizeof(ls[i].name));
			ls[i].bytes = tx_bytes(x) - x->before;
			/* the twin's bytes on the wire, in emulated bytes;
			 * a task that failed this round sent only part */
			ls[i].pred_bytes = ok == live ? p->link_bytes[x->link] /
							      p->sc->scale : 0;
			link_meas += (double)ls[i].bytes;
			link_pred += ls[i].pred_bytes;
		}
		rounds_run++;
		for (int t = 0; t < p->ntasks; t++) {
			struct fleet_task_round *x = &rr[t];

			if (!x->done)
				continue;
			done[t]++;
			meas[t][0] += x->round_s;
			meas[t][1] += x->bcast_s;
			meas[t][2] += x->compute_s;
			meas[t][3] += x->upload_s;
			if (r == 1)
				acc0[t] = x->rep[0].accuracy;
			acc1[t] = x->rep[0].accuracy;
			checks[t] = checks[t] && x->check_ok;
			sum += x->round_s;
			psum += p->tasks[t].round_s;
			acc += x->rep[0].accuracy;
			nt++;
		}
		if (results_round(res, p, r, rr, ls, nctr, err, sizeof(err)))
			p_err("warning: %s", err);
		printf("round %u/%u: %d tasks done, mean round %.2f ms "
		       "(predicted %.2f ms), mean accuracy %.3f\n", r,
		       fo.rounds, ok, nt ? sum / nt * 1e3 : 0,
		       nt ? psum / nt * 1e3 : 0, nt ? acc / nt : 0);
		fflush(stdout);
		if (ok == 0)
			break;
	}
	for (int t = 0; t < p->ntasks; t++) {
		const char *why;

		if (!p->tasks[t].blocked && fleet_failed(f, t, &why)) {
			failed++;
			results_task_failed(res, t, why);
		} else if (!p->tasks[t].blocked && !checks[t]) {
			failed++;
			results_task_failed(res, t, "correctness check failed");
		}
	}
	summary(p, f, meas, done, acc0, acc1, checks);
	if (rounds_run)
		printf("bandwidth: %.0f bytes per round sent on the IP links "
		       "that carry transfers; the twin predicts %.0f bytes on "
		       "the wire there (measured/predicted %.3f)\n",
		       link_meas / rounds_run, link_pred / rounds_run,
		       link_pred > 0 ? link_meas / link_pred : 0);
	results_end_run(res, interrupted ? "interrupted" :
			     failed ? "failed" : "ok");
	printf("results: %s (run %lld)\n", db, (long long)results_run_id(res));
	rc = interrupted || failed ? 1 : 0;
	if (interrupted)
		p_err("interrupted");
out:
	fleet_stop(f);
	for (int i = 0; nsc && i < nnsc; i++)
		nl_close(nsc[i].nl);
	free(nsc);
	free(ctr);
	lab_free(lab);
	if (built && !keep)
		lab_down(lo.prefix, NULL, NULL);
	else if (built)
		printf("kept: the emulation stays up under prefix '%s' "
		       "('twinlab down --prefix %s' removes it)\n", lo.prefix,
		       lo.prefix);
	results_close(res);
	free(json_text);
	free(rr);
	free(ls);
	free(meas);
	free(acc0);
	free(acc1);
	free(done);
	free(checks);
	addressing_free(a);
	plan_free(p);
	scenario_free(sc);
	return rc;
}
