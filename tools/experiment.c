// SPDX-License-Identifier: MIT
/*
 * twinlab experiment FILE [--db FILE]: a sweep over numbers of local
 * models, seeds and schedulers on one topology. Each point is a scenario
 * made from the base file's network with generated tasks (the same tasks
 * for every scheduler at a given point), run as one session each (the
 * same as `twinlab run`, in this process), and recorded by its run id in
 * the results database's `points` table.
 *
 * The experiment file:
 *
 *   name: poster-fig3
 *   base: ../poster-testbed.yaml          # network and servers (relative
 *                                          # to this file); its tasks are
 *                                          # replaced
 *   schedulers: [spff, mst]
 *   locals: [3, 6, 9, 12, 15]              # local models per task
 *   tasks: 30
 *   seeds: [1, 2, 3]
 *   rounds: 2
 *   parameters: 500000                     # per task, as in a scenario
 *   bytes_per_parameter: 4
 *   work_core_s: 0.0005
 */
#include "twinlab.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#include "args.h"
#include "emu/lab.h"
#include "results.h"
#include "session.h"
#include "twin/fl.h"
#include "twin/predict.h"
#include "twin/sched.h"

#define MAX_LIST 32

struct experiment {
	char name[65], base[512];
	char sched[MAX_LIST][16];
	int nsched;
	long locals[MAX_LIST], seeds[MAX_LIST];
	int nlocals, nseeds;
	long tasks, rounds, parameters, bpp;
	double work;
};

/* ---- the file ----------------------------------------------------------- */

#define EXP_TASKS_MAX 10000	/* tasks per point */

static int list(yaml_document_t *d, yaml_node_t *v, const char *file,
		const char *key, long *out, char (*str)[16], int *n)
{
	if (v->type != YAML_SEQUENCE_NODE) {
		fprintf(stderr, "%s:%zu:%zu: '%s' must be a list\n", file,
			v->start_mark.line + 1, v->start_mark.column + 1, key);
		return -EINVAL;
	}
	*n = 0;
	for (yaml_node_item_t *i = v->data.sequence.items.start;
	     i < v->data.sequence.items.top; i++) {
		yaml_node_t *x = yaml_document_get_node(d, *i);
		const char *s;
		uint64_t num;

		if (x->type != YAML_SCALAR_NODE || *n >= MAX_LIST) {
			fprintf(stderr, "%s:%zu:%zu: '%s': scalars only, at "
				"most %d\n", file, x->start_mark.line + 1,
				x->start_mark.column + 1, key, MAX_LIST);
			return -EINVAL;
		}
		s = (const char *)x->data.scalar.value;
		if (str) {
			snprintf(str[(*n)++], 16, "%s", s);
			continue;
		}
		if (parse_uint(s, 1, 1000000, &num)) {
			fprintf(stderr, "%s:%zu:%zu: '%s': a whole number in "
				"[1, 1000000], got '%s'\n", file,
				x->start_mark.line + 1,
				x->start_mark.column + 1, key, s);
			return -EINVAL;
		}
		out[(*n)++] = (long)num;
	}
	return *n ? 0 : -EINVAL;
}

static int load(const char *file, struct experiment *x)
{
	static const char *const keys[] = {
		"name", "base", "schedulers", "locals", "tasks", "seeds",
		"rounds", "parameters", "bytes_per_parameter", "work_core_s",
	};
	yaml_parser_t parser;
	yaml_document_t d;
	yaml_node_t *root;
	FILE *f = fopen(file, "rb");
	bool seen[10] = { 0 };
	int err = 0;

	memset(x, 0, sizeof(*x));
	x->rounds = 1;
	x->bpp = 4;
	if (!f) {
		fprintf(stderr, "%s: cannot open: %s\n", file, strerror(errno));
		return -errno;
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &d)) {
		fprintf(stderr, "%s:%zu:%zu: YAML: %s\n", file,
			parser.problem_mark.line + 1,
			parser.problem_mark.column + 1,
			parser.problem ? parser.problem : "syntax error");
		yaml_parser_delete(&parser);
		fclose(f);
		return -EINVAL;
	}
	root = yaml_document_get_root_node(&d);
	if (!root || root->type != YAML_MAPPING_NODE) {
		fprintf(stderr, "%s:1:1: an experiment is a mapping\n", file);
		err = -EINVAL;
		goto out;
	}
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top && !err; p++) {
		yaml_node_t *k = yaml_document_get_node(&d, p->key);
		yaml_node_t *v = yaml_document_get_node(&d, p->value);
		const char *key, *s;
		size_t i;

		if (k->type != YAML_SCALAR_NODE) {
			fprintf(stderr, "%s:%zu:%zu: a key must be a plain "
				"name\n", file, k->start_mark.line + 1,
				k->start_mark.column + 1);
			err = -EINVAL;
			break;
		}
		key = (const char *)k->data.scalar.value;
		for (i = 0; i < sizeof(keys) / sizeof(*keys); i++)
			if (k->type == YAML_SCALAR_NODE && !strcmp(key, keys[i]))
				break;
		if (i == sizeof(keys) / sizeof(*keys) || seen[i]) {
			fprintf(stderr, "%s:%zu:%zu: %s key '%s'\n", file,
				k->start_mark.line + 1,
				k->start_mark.column + 1,
				i == sizeof(keys) / sizeof(*keys) ? "unknown" :
								    "duplicate",
				key);
			err = -EINVAL;
			break;
		}
		seen[i] = true;
		if (i == 2) {
			err = list(&d, v, file, key, NULL, x->sched, &x->nsched);
			continue;
		}
		if (i == 3 || i == 5) {
			err = list(&d, v, file, key,
				   i == 3 ? x->locals : x->seeds, NULL,
				   i == 3 ? &x->nlocals : &x->nseeds);
			continue;
		}
		if (v->type != YAML_SCALAR_NODE) {
			fprintf(stderr, "%s:%zu:%zu: '%s' must be a scalar\n",
				file, v->start_mark.line + 1,
				v->start_mark.column + 1, key);
			err = -EINVAL;
			break;
		}
		s = (const char *)v->data.scalar.value;
		errno = 0;
		switch (i) {
		case 0:
			/* it names files: one component, nothing hidden */
			if (!scn_name_ok(s, sizeof(x->name) - 1, true)) {
				fprintf(stderr, "%s:%zu:%zu: 'name' must be 1-%zu "
					"characters of [A-Za-z0-9_.-], not "
					"starting with '.' or '-', got '%s'\n",
					file, v->start_mark.line + 1,
					v->start_mark.column + 1,
					sizeof(x->name) - 1, s);
				err = -EINVAL;
				goto out;
			}
			snprintf(x->name, sizeof(x->name), "%s", s);
			break;
		case 1: {
			/* relative to the experiment file, as an include is */
			const char *slash = strrchr(file, '/');
			int dl = s[0] != '/' && slash ?
					 (int)(slash - file + 1) : 0;

			if (!s[0] || (size_t)snprintf(x->base, sizeof(x->base),
						      "%.*s%s", dl, file, s) >=
					     sizeof(x->base)) {
				fprintf(stderr, "%s:%zu:%zu: 'base' must name a "
					"scenario file (at most %zu "
					"characters with the experiment's "
					"directory)\n", file,
					v->start_mark.line + 1,
					v->start_mark.column + 1,
					sizeof(x->base) - 1);
				err = -EINVAL;
				goto out;
			}
			break;
		}
		case 9:
			/* the scenario's bound on work_core_s */
			err = parse_real(s, 0, 1e6, &x->work);
			break;
		default: {
			/* the scenario's own limits (twin/scenario.c); tasks:
			 * a point's file stays well under SCN_FILE_MAX */
			static const long max[] = { [4] = EXP_TASKS_MAX,
						    [6] = 1000000,
						    [7] = 1000000000000L,
						    [8] = 16 };
			uint64_t n;

			if (parse_uint(s, 1, (uint64_t)max[i], &n)) {
				err = -EINVAL;
				fprintf(stderr, "%s:%zu:%zu: '%s' must be a whole "
					"number in [1, %ld]\n", file,
					v->start_mark.line + 1,
					v->start_mark.column + 1, key,
					max[i]);
				goto out;
			}
			if (i == 4)
				x->tasks = n;
			else if (i == 6)
				x->rounds = n;
			else if (i == 7)
				x->parameters = n;
			else
				x->bpp = n;
		}
		}
		if (err)
			fprintf(stderr, "%s:%zu:%zu: '%s' must be a number in "
				"[0, 1e6], got '%s'\n", file,
				v->start_mark.line + 1,
				v->start_mark.column + 1, key, s);
	}
	for (int i = 0; i < 10 && !err; i++)
		if (!seen[i] && i != 6 && i != 8) {
			fprintf(stderr, "%s: missing key '%s'\n", file, keys[i]);
			err = -EINVAL;
		}
	for (int i = 0; i < x->nsched && !err; i++)
		if (!sched_arg(x->sched[i]))
			err = -EINVAL;
out:
	yaml_document_delete(&d);
	yaml_parser_delete(&parser);
	fclose(f);
	return err;
}

/* ---- scenarios of the points --------------------------------------------- */

/*
 * The base file's text up to its `tasks:` key, then n tasks with one
 * global and `nl` local models each, on servers drawn with the seed:
 * distinct servers within a task, the same for every scheduler.
 */
static int write_point(const struct experiment *x, const struct scenario *sc,
		       long nl, long seed, const char *path)
{
	FILE *in = fopen(x->base, "r"), *out;
	int *srv, ns = 0, err = 0;
	char line[4096];
	struct fl_rng r;

	if (!in)
		return -errno;
	out = fopen(path, "w");
	if (!out) {
		err = -errno;
		fclose(in);
		return err;
	}
	while (fgets(line, sizeof(line), in) && strncmp(line, "tasks:", 6))
		fputs(line, out);
	fclose(in);
	srv = calloc((size_t)sc->nnodes, sizeof(*srv));
	if (!srv) {
		fclose(out);
		return -ENOMEM;
	}
	for (int i = 0; i < sc->nnodes; i++)
		if (sc->nodes[i].kind == NODE_SERVER)
			srv[ns++] = i;
	fl_rng_seed(&r, fl_seed_derive((uint64_t)seed, (uint64_t)nl));
	fprintf(out, "# tasks generated by twinlab experiment '%s': %ld "
		"tasks of %ld local models, seed %ld\ntasks:\n", x->name,
		x->tasks, nl, seed);
	for (long t = 0; t < x->tasks; t++) {
		/* a partial Fisher-Yates shuffle picks 1 + nl servers */
		for (int i = 0; i <= nl; i++) {
			int j = i + (int)fl_rng_below(&r, (uint32_t)(ns - i));
			int tmp = srv[i];

			srv[i] = srv[j];
			srv[j] = tmp;
		}
		fprintf(out, "  - name: t%02ld\n    global: %s\n    locals: [",
			t + 1, sc->nodes[srv[0]].name);
		for (int i = 1; i <= nl; i++)
			fprintf(out, "%s%s", i > 1 ? ", " : "",
				sc->nodes[srv[i]].name);
		fprintf(out, "]\n    parameters: %ld\n    bytes_per_parameter: "
			"%ld\n    work_core_s: %g\n    rounds: %ld\n",
			x->parameters, x->bpp, x->work, x->rounds);
	}
	free(srv);
	if (fclose(out))
		err = -errno;
	return err;
}

/*
 * A signal stops the sweep: it is passed on to the point's run, which
 * tears its emulation down and records what it measured; no further
 * point starts.
 */
static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
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

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int cmd_experiment(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "prefix", required_argument, NULL, 'p' },
		{ "dilation", required_argument, NULL, 'D' },
		{ "predictor", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *db = "twinlab.db", *prefix = "tle";
	predict_fn predict = predict_round;
	struct experiment x;
	struct scenario *sc;
	char dir[600], log[700], path[800], why[512];
	int c, total, done = 0, failed = 0, lock = -1, rc = 1;
	double t0, n = 0;
	bool auto_n = true;
	FILE *logf = NULL;

	while ((c = getopt_long(argc, argv, "d:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			db = optarg;
			break;
		case 'p':
			prefix = optarg;
			break;
		case 'D':
			if (dilation_arg(optarg, &n, &auto_n))
				return EXIT_USAGE;
			break;
		case 'P':
			predict = predictor_arg(optarg);
			if (!predict)
				return EXIT_USAGE;
			break;
		case 'h':
			printf("usage: %s experiment FILE [--db FILE] "
			       "[--prefix P] [--dilation N|auto[:N]]\n"
			       "       [--predictor fluid|packet]\n\nRuns every "
			       "point of the sweep in FILE on the emulation and "
			       "stores it in the\nresults database (default "
			       "twinlab.db); each point as 'twinlab run' with the "
			       "same\n--dilation; with auto, each point starts from "
			       "the dilation the last one\nfound faithful. Needs "
			       "root.\n", prog);
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		p_err("usage: %s experiment FILE [--db FILE] [--prefix P]",
		      prog);
		return EXIT_USAGE;
	}
	if (load(argv[optind], &x))
		return EXIT_USAGE;
	sc = load_scenario(x.base);
	if (!sc)
		return EXIT_USAGE;
	for (int i = 0; i < x.nlocals; i++) {
		int servers = 0;

		for (int k = 0; k < sc->nnodes; k++)
			servers += sc->nodes[k].kind == NODE_SERVER;
		if (x.locals[i] + 1 > servers) {
			p_err("%s: %ld local models need %ld servers; '%s' has "
			      "%d", argv[optind], x.locals[i],
			      x.locals[i] + 1, x.base, servers);
			scenario_free(sc);
			return EXIT_USAGE;
		}
	}
	if (!lab_prefix_ok(prefix)) {
		p_err("bad prefix '%s': use 1-%d characters of [a-z0-9] "
		      "starting with a letter", prefix, LAB_PREFIX_MAX);
		scenario_free(sc);
		return EXIT_USAGE;
	}
	if (geteuid() != 0) {
		p_err("'experiment' needs root: it runs the emulation");
		scenario_free(sc);
		return 1;
	}
	/* the prefix is the experiment's for the whole sweep */
	lock = lab_lock(prefix, "twinlab experiment", why, sizeof(why));
	if (lock < 0) {
		p_err("%s", why);
		goto out;
	}
	snprintf(dir, sizeof(dir), "%s.scenarios", db);
	snprintf(log, sizeof(log), "%s.log", db);
	if (mkdir(dir, 0755) && errno != EEXIST) {
		p_err("cannot create '%s': %s", dir, strerror(errno));
		goto out;
	}
	logf = fopen(log, "ae");
	if (!logf) {
		p_err("cannot open '%s': %s", log, strerror(errno));
		goto out;
	}
	total = x.nlocals * x.nseeds * x.nsched;
	printf("experiment %s: %d points (%d local-model counts x %d seeds x "
	       "%d schedulers), %ld tasks, %ld rounds; log %s\n", x.name,
	       total, x.nlocals, x.nseeds, x.nsched, x.tasks, x.rounds, log);
	fflush(stdout);
	t0 = now_s();
	on_stop_signals(on_signal);
	for (int i = 0; i < x.nlocals && !stop_sig; i++)
		for (int s = 0; s < x.nseeds && !stop_sig; s++) {
			snprintf(path, sizeof(path), "%s/%s-l%ld-s%ld.yaml", dir,
				 x.name, x.locals[i], x.seeds[s]);
			if (write_point(&x, sc, x.locals[i], x.seeds[s], path)) {
				p_err("cannot write '%s': %s", path,
				      strerror(errno));
				goto out;
			}
			for (int k = 0; k < x.nsched && !stop_sig; k++) {
				struct session_opts so = {
					.scenario = path,
					.ops = sched_arg(x.sched[k]),
					.predict = predict,
					.rounds = (unsigned)x.rounds,
					.db = db, .prefix = prefix,
					.dilation = n, .auto_n = auto_n,
					.out = logf, .stop = &stop_sig,
				};
				struct session_result sr;
				double t1 = now_s(), left;
				int prc;
				char nn[48] = "";

				fprintf(logf, "== point %d of %d: %s, %s\n",
					done + 1, total, path, x.sched[k]);
				fflush(logf);
				prc = session_run(&so, &sr);
				fflush(logf);
				done++;
				if (sr.run > 0 &&
				    record_point(db, sr.run, &x, x.sched[k],
						 x.locals[i], x.seeds[s]))
					fprintf(logf, "%s: cannot record run %lld "
						"as this point\n", prog,
						(long long)sr.run);
				if (prc)
					failed++;
				if (sr.run > 0 && sr.dilation >= 1)
					snprintf(nn, sizeof(nn), ", dilation %g",
						 sr.dilation);
				/* auto: the next point calibrates from here */
				if (sr.run > 0 && sr.dilation >= 1 && auto_n)
					n = sr.dilation;
				left = (now_s() - t0) / done * (total - done);
				printf("[%d/%d] %ld locals, seed %ld, %s: %s%s%s%s "
				       "in %.1f s; about %.0f s left\n", done,
				       total, x.locals[i], x.seeds[s],
				       x.sched[k], prc == 0 ? "ok" :
				       stop_sig ? "interrupted" :
				       sr.status ? sr.status :
						   "FAILED (see the log)", nn,
				       sr.verdict[0] ? ", " : "", sr.verdict,
				       now_s() - t1, left);
				fflush(stdout);
			}
		}
	if (stop_sig) {
		printf("experiment %s: stopped by signal %d after %d of %d "
		       "points; results so far in %s\n", x.name, (int)stop_sig,
		       done, total, db);
		goto out;
	}
	printf("experiment %s: %d points in %.0f s, %d with failures; "
	       "results in %s ('twinlab report %s' makes the figures)\n",
	       x.name, total, now_s() - t0, failed, db, db);
	rc = failed ? 1 : 0;
out:
	if (logf)
		fclose(logf);
	lab_unlock(prefix, lock);
	scenario_free(sc);
	return rc;
}
