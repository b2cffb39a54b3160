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

#define SELECT_HELP \
	"usage: %s select SCENARIO --task NAME [--k K] [--max-round-ms X]\n" \
	"       [--max-byte-links B] [--lambda X] [--rounds R] " \
	"[--scheduler NAME]\n" \
	"       [--seed S] [--json] [--write PREFIX]\n\n" \
	"Chooses K of a task's local models by the usefulness of their data " \
	"(how close\ntheir pooled label mix comes to the whole pool's) " \
	"against their network cost,\nand compares all of them, the K chosen " \
	"and K drawn at random: label distance,\nthe predicted round and " \
	"byte-links of the task placed alone, and held-out\naccuracy after " \
	"each round of FedAvg, computed here as the workers compute it.\n" \
	"The twin alone: no root. Give K, a budget, or both.\n\n" \
	"  -t, --task NAME   the task whose local models are chosen from\n" \
	"  -k, --k K         how many to choose (1 to 100000; default: as " \
	"many as the\n" \
	"                    budget allows)\n" \
	"  --max-round-ms X  a budget: each step adds the best local that " \
	"keeps the\n" \
	"                    task's predicted round (placed alone) within X " \
	"ms\n" \
	"  --max-byte-links B  a budget on the task's byte-links, the same " \
	"way\n" \
	"  -l, --lambda X    the weight of network cost: X times a local's " \
	"distance from\n" \
	"                    the global model (0 to 1e6, default 0.5; 0: data " \
	"alone)\n" \
	"  -r, --rounds R    rounds of FedAvg to compare accuracy over (1 to " \
	"%d,\n" \
	"                    default 5)\n" \
	"  -s, --scheduler NAME  the scheduler that places the task (default " \
	"mst)\n" \
	"  -S, --seed S      the seed of the random draw (default 1)\n" \
	"  -j, --json        print the comparison as one JSON object\n" \
	"  -w, --write PREFIX  write the three as scenarios, PREFIX-all.yaml,\n" \
	"                    PREFIX-selected.yaml and PREFIX-random.yaml (the " \
	"subset's\n" \
	"                    locals keeping the shares of the data they hold), " \
	"for\n" \
	"                    'twinlab run'\n"

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
	const struct sched_ops *ops = &sched_mst;
	const char *task, *out;
	uint64_t k = 0, rounds = 5, seed = 1;
	double lambda = 0.5;
	struct budget bud = { .round_ms = INFINITY, .byte_links = INFINITY };
	struct cli cl = { 0 };
	bool json, budget;
	struct scenario *sc;
	struct sel_task st = { 0 };
	struct sel_learning l = { 0 };
	struct subset s[3] = { { .name = "all" }, { .name = "selected" },
			       { .name = "random" } };
	int t = -1, rc, err;

	rc = cli_parse(&cl, argc, argv, 1, 1, SELECT_HELP, prog,
		       SEL_ROUNDS_MAX);
	if (rc != CLI_GO)
		return rc;
	rc = 1;
	if (cli_uint(&cl, "k", 1, 100000, &k) ||
	    cli_uint(&cl, "rounds", 1, SEL_ROUNDS_MAX, &rounds) ||
	    cli_uint(&cl, "seed", 0, 1ULL << 40, &seed) ||
	    cli_real(&cl, "lambda", 0, 1e6, &lambda) ||
	    cli_real(&cl, "max-round-ms", 0, 1e300, &bud.round_ms) ||
	    cli_real(&cl, "max-byte-links", 0, 1e300, &bud.byte_links) ||
	    cli_sched(&cl, &ops))
		return EXIT_USAGE;
	task = cli_str(&cl, "task", NULL);
	out = cli_str(&cl, "write", NULL);
	json = cli_flag(&cl, "json");
	budget = cli_flag(&cl, "max-round-ms") ||
		 cli_flag(&cl, "max-byte-links");
	if (!task || (!k && !budget)) {
		p_err("select needs --task NAME, and --k K or a budget "
		      "(--max-round-ms, --max-byte-links)");
		return EXIT_USAGE;
	}
	sc = load_scenario(cl.argv[0]);
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
		k = (uint64_t)sc->tasks[t].nlocals;	/* as many as the budget allows */
	if (k > (uint64_t)sc->tasks[t].nlocals) {
		p_err("--k %ju: task '%s' has %d local models", (uintmax_t)k, task,
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
