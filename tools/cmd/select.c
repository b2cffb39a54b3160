// SPDX-License-Identifier: MIT
/*
 * twinlab select SCENARIO --task NAME --k K: which k of a task's local
 * models to train with (twin/select.h), and what it buys, in the twin:
 * for all n, the k selected and k drawn at random, the label mix's
 * distance from the pool's, the round the predictor gives the task placed
 * alone on the empty network with those locals, its byte-links, and the
 * held-out accuracy after each round of FedAvg over them — the workers'
 * own arithmetic with their seeds, their data split over all n locals.
 */
#include "tools/twinlab.h"
#include "tools/json.h"

#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/args.h"
#include "emu/fleet.h"
#include "twin/predict.h"
#include "twin/sched.h"
#include "twin/select.h"

#define SEL_ROUNDS_MAX 100

struct subset {
	const char *name;
	int k, *chosen;
	double tv, round_s, bytes_links;
	double acc[SEL_ROUNDS_MAX];
	char why[160];		/* not placed: why */
};

/* A whole number in [min, max], or a message naming the option. */
static int whole(const char *s, const char *opt, uint64_t min, uint64_t max,
		 long *out)
{
	uint64_t v;

	if (parse_uint(s, min, max, &v)) {
		p_err("%s: a whole number in [%llu, %llu], got '%s'", opt,
		      (unsigned long long)min, (unsigned long long)max, s);
		return -EINVAL;
	}
	*out = (long)v;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: %s select SCENARIO --task NAME [--k K] "
		   "[--max-round-ms X] [--max-byte-links B]\n"
		   "       [--lambda X] [--rounds R] [--scheduler NAME] "
		   "[--seed S] [--json]\n       [--write PREFIX]\n\nChooses K of a task's local models by the "
		   "usefulness of their data (how close\ntheir pooled label mix "
		   "comes to the whole pool's) against their network cost\n"
		   "(--lambda times their distance from the global model, "
		   "default 0.5; 0: data\nalone), and compares all of them, the "
		   "K chosen and K drawn at random (--seed,\ndefault 1): label "
		   "distance, the predicted round and byte-links of the task\n"
		   "placed alone (--scheduler, default mst), and held-out "
		   "accuracy after each of\n--rounds (default 5, at most %d) "
		   "rounds of FedAvg, computed here as the workers\ncompute it. "
		   "The twin alone: no root. --write PREFIX writes the three as\n"
		   "scenarios, PREFIX-all.yaml, PREFIX-selected.yaml and "
		   "PREFIX-random.yaml (the\nsubset's locals keeping the shares "
		   "of the data they hold), for 'twinlab run'.\nA budget instead "
		   "of (or as well as) K: --max-round-ms and --max-byte-links\n"
		   "bound the task's predicted round and byte-links, placed alone; "
		   "each step adds\nthe best local that keeps it within, as many "
		   "as fit (at most K).\n", prog, SEL_ROUNDS_MAX);
}

/*
 * tk with only the subset's locals, each keeping the share of the data it
 * holds (st): locals and shares malloc'd into out. 0 or -ENOMEM.
 */
static int subset_task(const struct scn_task *tk, const struct sel_task *st,
		       const struct subset *s, struct scn_task *out)
{
	*out = *tk;
	out->nlocals = s->k;
	out->split_over = st->split;
	out->locals = malloc((size_t)s->k * sizeof(*out->locals));
	out->share = malloc((size_t)s->k * sizeof(*out->share));
	if (!out->locals || !out->share) {
		free(out->locals);
		free(out->share);
		return -ENOMEM;
	}
	for (int i = 0; i < s->k; i++) {
		out->locals[i] = tk->locals[s->chosen[i]];
		out->share[i] = st->share[s->chosen[i]];
	}
	return 0;
}

/* The subset's task alone on the empty network, planned and predicted. */
static void place(const struct scenario *sc, const struct scn_task *tk,
		  const struct sel_task *st, const struct sched_ops *ops,
		  struct subset *s)
{
	struct scenario one = *sc;
	struct scn_task t;
	struct plan *p = NULL;

	s->round_s = s->bytes_links = NAN;
	if (subset_task(tk, st, s, &t)) {
		snprintf(s->why, sizeof(s->why), "out of memory");
		return;
	}
	one.tasks = &t;
	one.ntasks = 1;
	one.events = NULL;
	one.nevents = 0;
	one.bg = NULL;
	one.nbg = 0;
	p = sched_plan(&one, ops);
	if (!p)
		snprintf(s->why, sizeof(s->why), "%s", strerror(errno));
	else if (p->tasks[0].blocked)
		snprintf(s->why, sizeof(s->why), "%s", p->tasks[0].why);
	else if (predict_round(p))
		snprintf(s->why, sizeof(s->why), "cannot predict its round");
	else {
		s->round_s = p->tasks[0].round_s;
		s->bytes_links = p->tasks[0].bytes_links;
	}
	plan_free(p);
	free(t.locals);
	free(t.share);
}

/* FedAvg over the subset's locals: the shares of the data they hold. */
static int learn(const struct sel_learning *l, const struct sel_task *st,
		 struct subset *s, int rounds)
{
	int *shares = malloc((size_t)s->k * sizeof(*shares)), err;

	if (!shares)
		return -ENOMEM;
	for (int i = 0; i < s->k; i++)
		shares[i] = st->share[s->chosen[i]];
	err = sel_learn(l, st->split, shares, s->k, rounds, s->acc);
	free(shares);
	return err;
}

/*
 * '<out>-<subset>.yaml': the scenario, named '<name>-<subset>', with task
 * t's locals the subset's, holding the shares they hold now, so that a run
 * of it on the emulation learns what the twin computed here.
 */
static int write_subset(const struct scenario *sc, int t,
			const struct sel_task *st, const struct subset *s,
			const char *out)
{
	struct scenario one = *sc;
	struct scn_task *tasks = malloc((size_t)sc->ntasks * sizeof(*tasks));
	char path[4096];
	int err = 0;
	FILE *f;

	if (!tasks)
		return -ENOMEM;
	memcpy(tasks, sc->tasks, (size_t)sc->ntasks * sizeof(*tasks));
	if (subset_task(&sc->tasks[t], st, s, &tasks[t])) {
		free(tasks);
		return -ENOMEM;
	}
	one.tasks = tasks;
	snprintf(one.name, sizeof(one.name), "%.*s-%s",
		 (int)(sizeof(one.name) - 1 - strlen(s->name) - 1), sc->name,
		 s->name);
	if ((size_t)snprintf(path, sizeof(path), "%s-%s.yaml", out, s->name) >=
	    sizeof(path)) {
		err = -ENAMETOOLONG;
		goto done;
	}
	f = open_output(path, false);
	if (!f) {
		err = -errno;
		p_err("cannot write '%s': %s", path, output_strerror(err));
		goto done;
	}
	err = scenario_write(&one, f);
	if (fclose(f) && !err)
		err = -errno;
	if (err)
		p_err("cannot write '%s': %s", path, strerror(-err));
	else
		fprintf(stderr, "wrote %s\n", path);
done:
	free(tasks[t].locals);
	free(tasks[t].share);
	free(tasks);
	return err;
}

/* A budget on the task placed alone: its predicted round, its bytes. */
struct budget {
	const struct scenario *sc;
	const struct scn_task *tk;
	const struct sel_task *st;
	const struct sched_ops *ops;
	double round_ms, byte_links;	/* INFINITY: none */
};

static bool fits(void *ctx, const int *chosen, int k)
{
	const struct budget *b = ctx;
	struct subset s = { .k = k, .chosen = (int *)chosen };

	place(b->sc, b->tk, b->st, b->ops, &s);
	return !s.why[0] && s.round_s * 1e3 <= b->round_ms &&
	       s.bytes_links <= b->byte_links;
}

static void print_text(const struct scenario *sc, const struct scn_task *tk,
		       double lambda, int rounds, const struct subset *s)
{
	printf("task %s of %s: %d local models; learning: FedAvg, %d rounds, "
	       "data split over %d\n\n%-9s %8s %10s %12s  %s\n",
	       tk->name, sc->name, tk->nlocals, rounds,
	       scenario_task_split(tk), "subset",
	       "label TV", "round ms", "byte-links",
	       "accuracy after each round");
	for (int i = 0; i < 3; i++) {
		printf("%-9s %8.3f ", s[i].name, s[i].tv);
		if (s[i].why[0])
			printf("%10s %12s ", "blocked", "-");
		else
			printf("%10.3f %12.4g ", s[i].round_s * 1e3,
			       s[i].bytes_links);
		for (int r = 0; r < rounds; r++)
			printf(" %.3f", s[i].acc[r]);
		putchar('\n');
	}
	for (int i = 0; i < 3; i++) {
		printf("%s (%d):", s[i].name, s[i].k);
		for (int j = 0; j < s[i].k; j++)
			printf(" %s", sc->nodes[tk->locals[s[i].chosen[j]]].name);
		if (s[i].why[0])
			printf(" — not placed: %s", s[i].why);
		putchar('\n');
	}
	printf("(selected: greedy on label distance + %g x network cost; round "
	       "and byte-links: the task alone on the empty network)\n",
	       lambda);
}

/* Subset s (its servers, accuracy per round, round and byte-links). */
static json_object *subset_json(const struct scenario *sc,
				const struct scn_task *tk, int rounds,
				const struct subset *s)
{
	json_object *x = json_object_new_object(), *names, *acc;

	if (!x)
		return NULL;
	J(!json_add(x, "subset", json_object_new_string(s->name)));
	names = json_object_new_array();
	J(!json_add(x, "servers", names));
	for (int j = 0; j < s->k; j++)
		J(!json_push(
			names,
			json_object_new_string(
				sc->nodes[tk->locals[s->chosen[j]]].name)));
	J(!json_add(x, "label_tv", json_object_new_double(s->tv)));
	if (s->why[0]) {
		J(!json_add(x, "why", json_object_new_string(s->why)));
	} else {
		J(!json_add(x, "round_s", json_object_new_double(s->round_s)));
		J(!json_add(x, "bytes_links",
			    json_object_new_double(s->bytes_links)));
	}
	acc = json_object_new_array();
	J(!json_add(x, "accuracy", acc));
	for (int r = 0; r < rounds; r++)
		J(!json_push(acc, json_object_new_double(s->acc[r])));
	return x;
fail:
	json_object_put(x);
	return NULL;
}

static int print_json(const struct scenario *sc, const struct scn_task *tk,
		      double lambda, int rounds, const struct subset *s)
{
	json_object *o = json_object_new_object(), *subs;
	int err;

	if (!o)
		return -ENOMEM;
	J(!json_add(o, "task", json_object_new_string(tk->name)));
	J(!json_add(o, "locals", json_object_new_int(tk->nlocals)));
	J(!json_add(o, "lambda", json_object_new_double(lambda)));
	J(!json_add(o, "rounds", json_object_new_int(rounds)));
	subs = json_object_new_array();
	J(!json_add(o, "subsets", subs));
	for (int i = 0; i < 3; i++)
		J(!json_push(subs, subset_json(sc, tk, rounds, &s[i])));
	err = json_print(o);
	json_object_put(o);
	return err;
fail:
	json_object_put(o);
	return -ENOMEM;
}

int cmd_select(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "task", required_argument, NULL, 't' },
		{ "k", required_argument, NULL, 'k' },
		{ "lambda", required_argument, NULL, 'l' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "scheduler", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "write", required_argument, NULL, 'w' },
		{ "max-round-ms", required_argument, NULL, 'M' },
		{ "max-byte-links", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const struct sched_ops *ops = &sched_mst;
	const char *task = NULL, *out = NULL;
	long k = 0, rounds = 5, seed = 1;
	double lambda = 0.5;
	struct budget bud = { .round_ms = INFINITY, .byte_links = INFINITY };
	bool json = false, budget = false;
	struct scenario *sc;
	struct sel_task st = { 0 };
	struct sel_learning l = { 0 };
	struct subset s[3] = { { .name = "all" }, { .name = "selected" },
			       { .name = "random" } };
	int c, t = -1, rc = 1, err;

	while ((c = getopt_long(argc, argv, "t:k:l:r:s:S:jw:h", opts, NULL)) !=
	       -1) {
		switch (c) {
		case 't':
			task = optarg;
			break;
		case 'k':
			if (whole(optarg, "--k", 1, 100000, &k))
				return EXIT_USAGE;
			break;
		case 'l':
			if (parse_real(optarg, 0, 1e6, &lambda)) {
				p_err("--lambda: a number in [0, 1e6], got "
				      "'%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'r':
			if (whole(optarg, "--rounds", 1, SEL_ROUNDS_MAX,
				  &rounds))
				return EXIT_USAGE;
			break;
		case 's':
			ops = sched_arg(optarg);
			if (!ops)
				return EXIT_USAGE;
			break;
		case 'S':
			if (whole(optarg, "--seed", 0, 1ULL << 40, &seed))
				return EXIT_USAGE;
			break;
		case 'j':
			json = true;
			break;
		case 'w':
			out = optarg;
			break;
		case 'M':
		case 'B':
			if (parse_real(optarg, 0, 1e300, c == 'M' ?
				       &bud.round_ms : &bud.byte_links)) {
				p_err("--%s: a number >= 0, got '%s'",
				      c == 'M' ? "max-round-ms" :
						 "max-byte-links", optarg);
				return EXIT_USAGE;
			}
			budget = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || !task || (!k && !budget)) {
		usage(stderr);
		return EXIT_USAGE;
	}
	sc = load_scenario(argv[optind]);
	if (!sc)
		return EXIT_USAGE;
	for (int i = 0; i < sc->ntasks; i++)
		if (!strcmp(sc->tasks[i].name, task))
			t = i;
	if (t < 0) {
		p_err("no task '%s' in '%s'", task, sc->name);
		rc = EXIT_USAGE;
		goto out;
	}
	if (!k)
		k = sc->tasks[t].nlocals;	/* as many as the budget allows */
	if (k > sc->tasks[t].nlocals) {
		p_err("--k %ld: task '%s' has %d local models", k, task,
		      sc->tasks[t].nlocals);
		rc = EXIT_USAGE;
		goto out;
	}
	if (fleet_learning(sc, t, 0, &l)) {
		p_err("task '%s': its model has no wire format", task);
		rc = EXIT_USAGE;
		goto out;
	}
	err = sel_task_init(&st, sc, t, &l);
	for (int i = 0; i < 3 && !err; i++) {
		s[i].k = i ? (int)k : st.n;
		s[i].chosen = malloc((size_t)s[i].k * sizeof(int));
		if (!s[i].chosen)
			err = -ENOMEM;
	}
	if (err) {
		p_err("cannot select: %s", strerror(-err));
		goto out;
	}
	for (int j = 0; j < st.n; j++)
		s[0].chosen[j] = j;
	bud.sc = sc;
	bud.tk = &sc->tasks[t];
	bud.st = &st;
	bud.ops = ops;
	err = sel_choose_within(&st, (int)k, lambda, budget ? fits : NULL,
				&bud, s[1].chosen);
	if (err == 0) {
		p_err("not even one local model of task '%s' fits the budget",
		      task);
		rc = EXIT_USAGE;
		goto out;
	}
	if (err > 0) {
		s[1].k = s[2].k = err;	/* random: as many as chosen */
		err = 0;
	}
	sel_random(st.n, s[2].k, (uint64_t)seed, s[2].chosen);
	for (int i = 0; i < 3 && !err; i++) {
		s[i].tv = sel_distance(&st, s[i].chosen, s[i].k);
		place(sc, &sc->tasks[t], &st, ops, &s[i]);
		err = learn(&l, &st, &s[i], (int)rounds);
		if (!err && out)
			err = write_subset(sc, t, &st, &s[i], out);
	}
	if (err) {
		p_err("cannot select: %s", strerror(-err));
		goto out;
	}
	if (json)
		rc = print_json(sc, &sc->tasks[t], lambda, (int)rounds, s) ? 1 :
									   0;
	else {
		print_text(sc, &sc->tasks[t], lambda, (int)rounds, s);
		rc = 0;
	}
out:
	for (int i = 0; i < 3; i++)
		free(s[i].chosen);
	sel_task_release(&st);
	scenario_free(sc);
	return rc;
}
