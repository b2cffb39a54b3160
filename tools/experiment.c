// SPDX-License-Identifier: MIT
/*
 * twinlab experiment FILE [--db FILE]: a sweep over numbers of local
 * models, seeds and schedulers on one topology. Each point is a scenario
 * made from the base file's network with generated tasks (the same tasks
 * for every scheduler at a given point), run as `twinlab run` in a child
 * process, and recorded in the results database's `points` table.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>
#include <yaml.h>

#include "emu/lab.h"
#include "twin/fl.h"
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
		char *end;

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
		out[*n] = strtol(s, &end, 10);
		if (*end || out[*n] < 1) {
			fprintf(stderr, "%s:%zu:%zu: '%s': bad number '%s'\n",
				file, x->start_mark.line + 1,
				x->start_mark.column + 1, key, s);
			return -EINVAL;
		}
		(*n)++;
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
		const char *key = (const char *)k->data.scalar.value, *s;
		size_t i;
		char *end;

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
			x->work = strtod(s, &end);
			if (*end || x->work < 0)
				err = -EINVAL;
			break;
		default: {
			/* the scenario's own limits (twin/scenario.c); tasks:
			 * a point's file stays well under SCN_FILE_MAX */
			static const long max[] = { [4] = EXP_TASKS_MAX,
						    [6] = 1000000,
						    [7] = 1000000000000L,
						    [8] = 16 };
			long n = strtol(s, &end, 10);

			if (*end || end == s || n < 1 || errno ||
			    (i < 9 && max[i] && n > max[i])) {
				err = -EINVAL;
				fprintf(stderr, "%s:%zu:%zu: '%s' must be a whole "
					"number in [1, %ld]\n", file,
					v->start_mark.line + 1,
					v->start_mark.column + 1, key,
					i < 9 && max[i] ? max[i] : LONG_MAX);
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
			fprintf(stderr, "%s:%zu:%zu: bad value '%s' for '%s'\n",
				file, v->start_mark.line + 1,
				v->start_mark.column + 1, s, key);
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
static volatile pid_t point_pid;

static void on_signal(int sig)
{
	pid_t p = point_pid;

	stop_sig = sig;
	if (p > 0)
		kill(p, sig == SIGPIPE ? SIGTERM : sig);
}

/* Run `twinlab run` on one point; its output goes to the log. */
static int run_point(const char *path, const char *sched, long rounds,
		     const char *db, const char *prefix, const char *dilation,
		     const char *predictor, int logfd)
{
	char r[24], self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;
	int status;

	if (n <= 0)
		return -errno;
	self[n] = '\0';
	snprintf(r, sizeof(r), "%ld", rounds);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char *argv[] = { self, "run", (char *)path, "--scheduler",
				 (char *)sched, "--rounds", r, "--db",
				 (char *)db, "--prefix", (char *)prefix,
				 "--dilation", (char *)dilation, "--predictor",
				 (char *)predictor, NULL };

		dup2(logfd, 1);
		dup2(logfd, 2);
		/* this very binary, even if it was replaced meanwhile */
		execv("/proc/self/exe", argv);
		dprintf(2, "%s: cannot run '%s run': %s\n", prog, self,
			strerror(errno));
		_exit(127);
	}
	point_pid = pid;
	if (stop_sig)		/* came between fork and here */
		kill(pid, stop_sig == SIGPIPE ? SIGTERM : stop_sig);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			point_pid = 0;
			return -errno;
		}
	point_pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * The dilation and verdict of the run a point made (the newest run after
 * `before` that finished, not one abandoned to recalibrate). 0 if none.
 */
static double point_dilation(const char *db, int64_t before, char *verdict,
			     size_t len)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	double n = 0;

	verdict[0] = '\0';
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(h, "SELECT dilation, verdict FROM runs WHERE "
			       "id > ?1 AND status != 'recalibrated' ORDER BY "
			       "id DESC LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, before);
		if (sqlite3_step(st) == SQLITE_ROW) {
			const unsigned char *v = sqlite3_column_text(st, 1);

			n = sqlite3_column_double(st, 0);
			snprintf(verdict, len, "%s", v ? (const char *)v : "");
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(h);
	return n;
}

/* The newest run's id, 0 when there is none (or no database yet). */
static int64_t last_run(const char *db)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	int64_t id = 0;

	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(h, "SELECT max(id) FROM runs", -1, &st,
			       NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			id = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(h);
	return id;
}

/* Record the point of the run `twinlab run` just stored, if it did. */
static int record_point(const char *db, int64_t before,
			const struct experiment *x, const char *sched, long nl,
			long seed)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	int rc = -EIO;

	if (last_run(db) <= before)
		return -ENOENT;
	if (sqlite3_open(db, &h) != SQLITE_OK)
		goto out;
	sqlite3_busy_timeout(h, 5000);
	if (sqlite3_prepare_v2(h, "INSERT OR REPLACE INTO points "
			       "SELECT max(id), ?, ?, ?, ?, ? FROM runs", -1,
			       &st, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_text(st, 1, x->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, x->base, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, sched, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, nl);
	sqlite3_bind_int64(st, 5, seed);
	if (sqlite3_step(st) == SQLITE_DONE)
		rc = 0;
	sqlite3_finalize(st);
out:
	sqlite3_close(h);
	return rc;
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
	const char *db = "twinlab.db", *prefix = "tle", *dilation = "auto";
	const char *predictor = "fluid";
	struct experiment x;
	struct scenario *sc;
	char dir[600], log[700], path[800], dil[48];
	int c, total, done = 0, failed = 0, logfd;
	double t0;

	while ((c = getopt_long(argc, argv, "d:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			db = optarg;
			break;
		case 'p':
			prefix = optarg;
			break;
		case 'D': {
			double n;
			bool a;

			if (dilation_arg(optarg, &n, &a))
				return EXIT_USAGE;
			dilation = optarg;
			break;
		}
		case 'P':
			if (!predictor_arg(optarg))
				return EXIT_USAGE;
			predictor = optarg;
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
	{
		/* each point's run takes the prefix; one in use fails now */
		char why[512];
		int lock = lab_lock(prefix, "twinlab experiment", why,
				    sizeof(why));

		if (lock < 0) {
			p_err("%s", why);
			scenario_free(sc);
			return 1;
		}
		lab_unlock(prefix, lock);
	}
	snprintf(dir, sizeof(dir), "%s.scenarios", db);
	snprintf(log, sizeof(log), "%s.log", db);
	if (mkdir(dir, 0755) && errno != EEXIST) {
		p_err("cannot create '%s': %s", dir, strerror(errno));
		scenario_free(sc);
		return 1;
	}
	logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0) {
		p_err("cannot open '%s': %s", log, strerror(errno));
		scenario_free(sc);
		return 1;
	}
	total = x.nlocals * x.nseeds * x.nsched;
	printf("experiment %s: %d points (%d local-model counts x %d seeds x "
	       "%d schedulers), %ld tasks, %ld rounds; log %s\n", x.name,
	       total, x.nlocals, x.nseeds, x.nsched, x.tasks, x.rounds, log);
	fflush(stdout);
	t0 = now_s();
	snprintf(dil, sizeof(dil), "%s", dilation);
	on_stop_signals(on_signal);
	for (int i = 0; i < x.nlocals && !stop_sig; i++)
		for (int s = 0; s < x.nseeds && !stop_sig; s++) {
			snprintf(path, sizeof(path), "%s/%s-l%ld-s%ld.yaml", dir,
				 x.name, x.locals[i], x.seeds[s]);
			if (write_point(&x, sc, x.locals[i], x.seeds[s], path)) {
				p_err("cannot write '%s': %s", path,
				      strerror(errno));
				close(logfd);
				scenario_free(sc);
				return 1;
			}
			for (int k = 0; k < x.nsched && !stop_sig; k++) {
				double t1 = now_s(), left, n;
				int64_t before = last_run(db);
				int rc = run_point(path, x.sched[k], x.rounds, db,
						   prefix, dil, predictor, logfd);
				char verdict[256], nn[48] = "";

				done++;
				record_point(db, before, &x, x.sched[k],
					     x.locals[i], x.seeds[s]);
				if (rc)
					failed++;
				n = point_dilation(db, before, verdict,
						   sizeof(verdict));
				if (n >= 1)
					snprintf(nn, sizeof(nn), ", dilation %g",
						 n);
				/* auto: the next point calibrates from here */
				if (n >= 1 && !strncmp(dilation, "auto", 4))
					snprintf(dil, sizeof(dil), "auto:%g", n);
				left = (now_s() - t0) / done * (total - done);
				printf("[%d/%d] %ld locals, seed %ld, %s: %s%s%s%s "
				       "in %.1f s; about %.0f s left\n", done,
				       total, x.locals[i], x.seeds[s],
				       x.sched[k], rc == 0 ? "ok" :
				       stop_sig ? "interrupted" :
				       rc == 1 ? "done with failed tasks" :
						 "FAILED (see the log)", nn,
				       verdict[0] ? ", " : "", verdict,
				       now_s() - t1, left);
				fflush(stdout);
			}
		}
	close(logfd);
	scenario_free(sc);
	if (stop_sig) {
		printf("experiment %s: stopped by signal %d after %d of %d "
		       "points; results so far in %s\n", x.name, (int)stop_sig,
		       done, total, db);
		return 1;
	}
	printf("experiment %s: %d points in %.0f s, %d with failures; "
	       "results in %s ('twinlab report %s' makes the figures)\n",
	       x.name, total, now_s() - t0, failed, db, db);
	return failed ? 1 : 0;
}
