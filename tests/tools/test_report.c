// SPDX-License-Identifier: MIT
/*
 * twinlab report on a results database written here by hand: synthetic
 * test data (2 schedulers x 2 numbers of local models x 2 seeds, 2 tasks
 * of 2 rounds each), chosen so the medians can be worked out on paper.
 * None of these numbers is a measurement. The binary comes from $TWINLAB.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/tlrun.h"


/* The tables of tools/results/results.c, as `twinlab run` and `experiment` make
 * them. */
static const char schema[] =
	"CREATE TABLE runs ("
	" id INTEGER PRIMARY KEY, started TEXT, scenario TEXT,"
	" scenario_file TEXT, scenario_yaml TEXT, scheduler TEXT,"
	" prefix TEXT, rounds INTEGER, scale REAL, plan_json TEXT,"
	" pred_mean_round_s REAL, pred_bytes_links REAL,"
	" wavelength_links INTEGER, status TEXT, plan_dot TEXT);"
	"CREATE TABLE points ("
	" run INTEGER PRIMARY KEY, experiment TEXT, base TEXT,"
	" scheduler TEXT, nlocals INTEGER, seed INTEGER);"
	"CREATE TABLE tasks ("
	" run INTEGER, task INTEGER, name TEXT, nlocals INTEGER,"
	" model_bytes INTEGER, blocked INTEGER, failed INTEGER, why TEXT,"
	" pred_round_s REAL, pred_bcast_s REAL, pred_compute_s REAL,"
	" pred_upload_s REAL, bytes_links REAL, wavelength_links INTEGER,"
	" PRIMARY KEY (run, task));"
	"CREATE TABLE rounds ("
	" run INTEGER, task INTEGER, round INTEGER, round_s REAL,"
	" bcast_s REAL, compute_s REAL, upload_s REAL, accuracy REAL,"
	" loss REAL, cpu_s REAL, check_ok INTEGER, check_err REAL,"
	" check_tol REAL, global_digest TEXT, global_proj TEXT,"
	" PRIMARY KEY (run, task, round));"
	"CREATE TABLE transfers ("
	" run INTEGER, task INTEGER, round INTEGER, tree TEXT,"
	" src_model INTEGER, dst_model INTEGER, start_ns INTEGER,"
	" end_ns INTEGER, bytes INTEGER);"
	"CREATE TABLE links ("
	" run INTEGER, round INTEGER, link TEXT, bytes INTEGER,"
	" pred_bytes REAL, PRIMARY KEY (run, round, link));";

static void exec_sql(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK,
		     "%s: %s", sql, msg ? msg : "?");
}

/*
 * The synthetic sweep. Run latency (ms) = base + 0.5 with base = 4 (spff)
 * or 3 (mst), + 2 at 5 local models, + 1 for seed 2: task 0's rounds are
 * base - 1 and base + 1, task 1's both base + 1. Predicted: 4 or 3, + 2 at
 * 5 local models. Link lp0 spans 2 fibres and carries 1000 x nlocals
 * emulated bytes a round, access link s1>r1 500; scale 1000. Run 8 (mst,
 * 5 locals, seed 2) has task t1 failed and its round 2 check failed.
 */
static void make_db(const char *path, bool with_points)
{
	static const char *const sched[2] = { "spff", "mst" };
	static const int nl[2] = { 3, 5 };
	/*
	 * The plans' shapes: spff's two tasks are stars; mst relays one
	 * task's broadcast over L1 (depth 2, two models aggregate), and its
	 * busiest link carries 2 MB a round against spff's 3.
	 */
#define STAR(agg) "{\"global\": \"G\", \"blocked\": false, " \
		"\"broadcast\": [{\"from\": \"G\", \"to\": \"L1\"}, " \
		"{\"from\": \"G\", \"to\": \"L2\"}], \"aggregation\": " agg "}"
#define CHAIN "{\"global\": \"G\", \"blocked\": false, " \
		"\"broadcast\": [{\"from\": \"G\", \"to\": \"L1\"}, " \
		"{\"from\": \"L1\", \"to\": \"L2\"}], \"aggregation\": " \
		"[\"G\", \"L1\"]}"
	static const char *const shape[2] = {
		"\"tasks\": [" STAR("[\"G\"]") ", " STAR("[\"G\"]") "], "
		"\"links\": [{\"bytes\": 3e6}, {\"bytes\": 1000}]",
		"\"tasks\": [" CHAIN ", " STAR("[\"G\"]") "], "
		"\"links\": [{\"bytes\": 2e6}, {\"bytes\": 1000}]",
	};
#undef STAR
#undef CHAIN
	sqlite3 *db;
	int id = 0;

	unlink(path);
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	exec_sql(db, schema);
	if (!with_points)
		exec_sql(db, "DROP TABLE points;"
			     "ALTER TABLE runs DROP COLUMN plan_dot;");
	exec_sql(db, "BEGIN");
	for (int s = 0; s < 2; s++)
		for (int n = 0; n < 2; n++)
			for (int seed = 1; seed <= 2; seed++) {
				double base = (s ? 3 : 4) + (n ? 2 : 0) +
					      (seed == 2 ? 1 : 0);
				double pred = (s ? 3 : 4) + (n ? 2 : 0);
				bool bad = s == 1 && n == 1 && seed == 2;
				char sql[2048];

				id++;
				snprintf(sql, sizeof(sql),
					 "INSERT INTO runs (id, scenario, "
					 "scheduler, rounds, scale, plan_json,"
					 " pred_mean_round_s, pred_bytes_links,"
					 " wavelength_links, status%s) VALUES "
					 "(%d, 'synthetic-test', '%s', 2, 1000,"
					 " '{\"lightpaths\": [{\"id\": 0, "
					 "\"roadms\": [\"A\", \"B\", \"C\"]}], "
					 "%s}',"
					 " %g, %g, %d, '%s'%s)",
					 with_points ? ", plan_dot" : "", id,
					 sched[s], shape[s], pred / 1e3,
					 nl[n] * 2e6,
					 nl[n] + (s ? 0 : 1),
					 bad ? "failed" : "ok",
					 with_points ?
						 ", 'digraph plan { G -> L1 }'" :
						 "");
				exec_sql(db, sql);
				if (with_points) {
					snprintf(sql, sizeof(sql),
						 "INSERT INTO points VALUES "
						 "(%d, 'synthetic', 'none.yaml',"
						 " '%s', %d, %d)", id, sched[s],
						 nl[n], seed);
					exec_sql(db, sql);
				}
				for (int t = 0; t < 2; t++) {
					snprintf(sql, sizeof(sql),
						 "INSERT INTO tasks VALUES (%d,"
						 " %d, 't%d', %d, 1000000, 0, "
						 "%d, '%s', %g, %g, %g, %g, %g,"
						 " 2)", id, t, t, nl[n],
						 bad && t == 1,
						 bad && t == 1 ?
							 "synthetic failure" :
							 "",
						 pred / 1e3, pred / 4e3,
						 pred / 2e3, pred / 4e3,
						 nl[n] * 1e6);
					exec_sql(db, sql);
					for (int k = 1; k <= 2; k++) {
						double ms = t == 0 && k == 1 ?
								    base - 1 :
								    base + 1;

						snprintf(sql, sizeof(sql),
							 "INSERT INTO rounds "
							 "VALUES (%d, %d, %d,"
							 " %g, %g, %g, %g, 0.5,"
							 " 1, 0.01, %d, 1e-7, "
							 "1e-4, 'x', 'x')", id,
							 t, k, ms / 1e3,
							 ms / 4e3, ms / 2e3,
							 ms / 4e3,
							 !(bad && t == 1 &&
							   k == 2));
						exec_sql(db, sql);
					}
				}
				for (int k = 1; k <= 2; k++) {
					snprintf(sql, sizeof(sql),
						 "INSERT INTO links VALUES "
						 "(%d, %d, 'lp0:r1>r2', %d, %d);"
						 "INSERT INTO links VALUES "
						 "(%d, %d, 's1>r1', 500, 480)",
						 id, k, 1000 * nl[n],
						 960 * nl[n], id, k);
					exec_sql(db, sql);
				}
			}
	exec_sql(db, "COMMIT");
	sqlite3_close(db);
}

/* Each test's own folder (made and removed around it): the database and
 * the folder the report writes. */
static struct {
	char dir[64], db[128], out[128];
} tmp;

static void tmp_init(void)
{
	snprintf(tmp.dir, sizeof(tmp.dir), "/tmp/tl-report-XXXXXX");
	cr_assert_not_null(mkdtemp(tmp.dir));
	snprintf(tmp.db, sizeof(tmp.db), "%s/synthetic.db", tmp.dir);
	snprintf(tmp.out, sizeof(tmp.out), "%s/out", tmp.dir);
}

static void tmp_fini(void)
{
	tl_rm_tree(tmp.dir);
}

/* Run sql on the test's database (sqlite makes the file if need be). */
static void db_exec(const char *sql)
{
	sqlite3 *db;

	cr_assert_eq(sqlite3_open(tmp.db, &db), SQLITE_OK);
	exec_sql(db, sql);
	sqlite3_close(db);
}

/*
 * Expect the one row sql gives on the test's database to hold the n
 * integers of want; a column that differs is named as the query names it.
 */
static void db_expect(const char *sql, const int *want, int n)
{
	sqlite3 *db;
	sqlite3_stmt *st;

	cr_assert_eq(sqlite3_open(tmp.db, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	for (int i = 0; i < n; i++)
		cr_expect_eq(sqlite3_column_int(st, i), want[i],
			     "%s: %d, not %d", sqlite3_column_name(st, i),
			     sqlite3_column_int(st, i), want[i]);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/* `twinlab report` on the test's database into its folder, with the
 * arguments of more (NULL-terminated) after those where more is not NULL. */
static struct tl_run report(const char *const *more)
{
	const char *a[8] = { "report", tmp.db, "--out", tmp.out };
	int n = 4;

	for (; more && *more; more++) {
		cr_assert_lt(n, 7, "too many arguments");
		a[n++] = *more;
	}
	return tl_run(a);
}

static void out_path(char *path, size_t size, const char *name)
{
	snprintf(path, size, "%s/%s", tmp.out, name);
}

/* A file the report wrote, owned. */
static char *out_file(const char *name)
{
	char path[256];

	out_path(path, sizeof(path), name);
	return tl_read(path);
}

/* Whether the report wrote name, empty or not. */
static bool present(const char *name)
{
	char path[256];

	out_path(path, sizeof(path), name);
	return access(path, F_OK) == 0;
}

/* Whether the report wrote name, and something in it. */
static bool nonempty(const char *name)
{
	char path[256];
	struct stat sb;

	out_path(path, sizeof(path), name);
	return stat(path, &sb) == 0 && sb.st_size > 0;
}

/* The report made with more arguments (exit 0 asserted): its report.md,
 * owned. */
static char *report_md(const char *const *more)
{
	struct tl_run r = report(more);

	cr_assert_eq(tl_code(&r), 0, "stderr: %s", r.err);
	tl_run_free(&r);
	return out_file("report.md");
}

/* The report of the synthetic sweep after sql: its report.md, owned. */
static char *report_of(const char *sql)
{
	make_db(tmp.db, true);
	db_exec(sql);
	return report_md(NULL);
}

/* scenarios/teaching-ring.yaml by its full path, as an experiment's base
 * must be given. */
static const char *teaching_ring(void)
{
	static char path[600];
	char cwd[512];

	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	snprintf(path, sizeof(path), "%s/scenarios/teaching-ring.yaml", cwd);
	return path;
}

/* Write the experiment fmt says into the test's folder as file and run it
 * into the test's database (exit 0 asserted); its stdout, owned. */
__attribute__((format(printf, 2, 3)))
static char *experiment(const char *file, const char *fmt, ...)
{
	char path[160], *out;
	const char *x[] = { "experiment", path, "--db", tmp.db, NULL };
	struct tl_run r;
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp.dir, file);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	cr_assert_eq(fclose(f), 0);
	r = tl_run(x);
	cr_assert_eq(tl_code(&r), 0, "%s%s", r.out, r.err);
	out = r.out;
	free(r.err);
	return out;
}

/*
 * What a run that played events stores beside its rounds (the tables of
 * tools/results): when each round started and ended, the events (with
 * what --reschedule adds where more says so) and the links' sampled load.
 */
#define PRED_ROUNDS "ALTER TABLE rounds ADD COLUMN pred_round_s REAL;"
#define ROUND_TIMES \
	"CREATE TABLE round_times (run INTEGER, round INTEGER," \
	" start_s REAL, end_s REAL);"
#define EVENTS(more) \
	"CREATE TABLE events (run INTEGER, at_s REAL, kind TEXT," \
	" detail TEXT, tasks TEXT, interruption_s REAL" more ");"
#define RESCHEDULE ", policy TEXT, live_s REAL, first_round_s REAL"
#define LINK_SAMPLES \
	"CREATE TABLE link_samples (run INTEGER, t_s REAL," \
	" link TEXT, gbps REAL, cap_gbps REAL);"
/* run 1's first two rounds: 0 to 6 ms and 20 to 26 ms */
#define RUN1_ROUNDS "(1, 1, 0, 0.006), (1, 2, 0.02, 0.026)"
/* lp0 half full 5 ms in, full 25 ms in */
#define RUN1_LP0 \
	"INSERT INTO link_samples VALUES" \
	" (1, 0.005, 'lp0:r1>r2', 5, 10)," \
	" (1, 0.025, 'lp0:r1>r2', 10, 10);"

TestSuite(report, .init = tmp_init, .fini = tmp_fini, .timeout = 60);

Test(report, synthetic_sweep)
{
	static const char *const rows[] = {
		/* (a): median, min, max of the two seeds; prediction */
		"| fixed (spff) | 3 | 2 | 5.000 | 4.500 | 5.500 | 4.000 | 1.25 |",
		"| fixed (spff) | 5 | 2 | 7.000 | 6.500 | 7.500 | 6.000 | 1.17 |",
		"| flexible (mst) | 3 | 2 | 4.000 | 3.500 | 4.500 | 3.000 "
		"| 1.33 |",
		"| flexible (mst) | 5 | 2 | 6.000 | 5.500 | 6.500 | 5.000 "
		"| 1.20 |",
		/* (b): 1000 x 5 bytes x 2 fibres x scale 1000 = 10 MB */
		"| fixed (spff) | 5 | 10 | 10 [10, 10] | 1.00 | 5.5 | 6 |",
		"| flexible (mst) | 3 | 6 | 6 [6, 6] | 1.00 | 3.5 | 3 |",
		"ratio 0.86",
		"31 of 32 completed task-rounds held",
		"synthetic failure",
		"| 8 | 1 | 2 |",
		/* by phase, against spff: medians of the per-run means */
		"| flexible (mst) | 3 | -0.250 (-0.250) | -0.500 (-0.500) | "
		"-0.250 (-0.250) | 1.50 / 1.00 | 1 / 2 | 1.50 / 1.00 | "
		"2.0 / 3.0 |",
		"broadcast trees are 1.50 levels deep on average against "
		"1.00, 1 of its tasks are stars against 2, 1.50 models "
		"aggregate a task against 1.00, and its busiest link carries "
		"2.0 MB a round against 3.0.",
	};
	static const char *const files[] = {
		"report.md", "runs.csv", "latency-spff.dat", "latency-mst.dat",
		"bandwidth-spff.dat", "bandwidth-mst.dat", "fidelity-spff.dat",
		"fidelity-mst.dat", "fig-latency.gp", "fig-bandwidth.gp",
		"fig-fidelity.gp", "plan-spff-run3.dot", "plan-mst-run7.dot",
	};
	static const char *const figs[] = {
		"fig-latency.png", "fig-latency.svg", "fig-bandwidth.png",
		"fig-bandwidth.svg", "fig-fidelity.png", "fig-fidelity.svg",
	};
	static const char *const pics[] = {
		"plan-spff-run3.svg", "plan-spff-run3.png",
		"plan-mst-run7.svg", "plan-mst-run7.png",
	};
	struct tl_run r;
	char *md, *dat;

	make_db(tmp.db, true);
	r = report(NULL);
	cr_assert_eq(tl_code(&r), 0, "stderr: %s", r.err);
	cr_assert(strstr(r.out, "report.md"), "%s", r.out);
	md = out_file("report.md");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		cr_expect(strstr(md, rows[i]), "report.md lacks '%s':\n%s",
			  rows[i], md);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		cr_expect(nonempty(files[i]), "no '%s'", files[i]);
	dat = out_file("latency-spff.dat");
	cr_expect(strstr(dat, "\n3 2 2 5 4.5 5.5 4 "), "%s", dat);
	free(dat);
	if (access("/usr/bin/gnuplot", X_OK) == 0)
		for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]); i++)
			cr_expect(nonempty(figs[i]), "no '%s'", figs[i]);
	if (access("/usr/bin/dot", X_OK) == 0)
		for (size_t i = 0; i < sizeof(pics) / sizeof(pics[0]); i++)
			cr_expect(nonempty(pics[i]), "no '%s'", pics[i]);
	free(md);
	tl_run_free(&r);
}

/*
 * report --json says what it wrote: report.md's path, the counts the text
 * line gives, and every figure and picture made, each a file that exists.
 */
Test(report, json_names_what_it_wrote)
{
	static const char *const js[] = { "--json", NULL };
	struct json_object *o, *v, *made;
	struct tl_run r;
	char want[160];
	struct stat st;
	int runs, points, listed = 0, svg = 0, plans = 0;
	const char *and;

	make_db(tmp.db, true);
	r = report(NULL);
	cr_assert_eq(tl_code(&r), 0, "stderr: %s", r.err);
	cr_assert_eq(sscanf(strstr(r.out, "report.md (") +
				    strlen("report.md ("),
			    "%d runs, %d experiment points", &runs, &points), 2,
		     "%s", r.out);
	/* the text names the figures and counts the rest */
	for (const char *x = r.out; (x = strstr(x, "\n  ")); x++)
		listed++;
	if ((and = strstr(r.out, "\nand ")))
		cr_assert_eq(sscanf(and, "\nand %d figure%*[^,], %d picture",
				    &svg, &plans), 2, "%s", r.out);
	cr_expect_null(strstr(r.out, "/plan-mst"), "%s", r.out);
	tl_run_free(&r);
	r = report(js);
	cr_assert_eq(tl_code(&r), 0, "stderr: %s", r.err);
	o = json_tokener_parse(r.out);
	cr_assert_not_null(o, "not JSON: %s", r.out);
	cr_assert(json_object_object_get_ex(o, "report", &v));
	snprintf(want, sizeof(want), "/report.md");
	cr_expect(strstr(json_object_get_string(v), want), "%s",
		  json_object_get_string(v));
	cr_expect_eq(stat(json_object_get_string(v), &st), 0);
	cr_assert(json_object_object_get_ex(o, "runs", &v));
	cr_expect_eq(json_object_get_int(v), runs);
	cr_assert(json_object_object_get_ex(o, "points", &v));
	cr_expect_eq(json_object_get_int(v), points);
	cr_assert(json_object_object_get_ex(o, "made", &made));
	for (size_t i = 0; i < json_object_array_length(made); i++)
		cr_expect_eq(stat(json_object_get_string(
				       json_object_array_get_idx(made, i)), &st),
			     0);
	if (access("/usr/bin/dot", X_OK) == 0)
		cr_expect_gt(json_object_array_length(made), 0);
	cr_expect_eq((int)json_object_array_length(made), listed + svg + plans,
		     "%d named, %d and %d counted", listed, svg, plans);
	json_object_put(o);
	tl_run_free(&r);
}

/*
 * A stored name with a newline (a hostile or damaged database: twinlab's
 * own names have none) cannot add a data line to a .dat file: comment
 * lines stay one line each.
 */
Test(report, a_newline_in_a_stored_name_stays_in_its_comment)
{
	char *dat, *l;

	free(report_of("UPDATE points SET experiment = experiment || char(10) "
		       "|| '999 1 1 1 1 1 1';"));
	dat = out_file("latency-spff.dat");
	for (l = dat; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 :
						       NULL)
		cr_expect(strncmp(l, "999 ", 4), "a data line from a name:\n%s",
			  dat);
	cr_expect(strstr(dat, "experiment synthetic 999 1 1 1 1 1 1\n"), "%s",
		  dat);
	free(dat);
}

/*
 * A run the fidelity monitor judged degraded is listed with its verdict
 * and kept out of the medians and the fidelity comparison; an attempt
 * that --dilation auto abandoned is counted, not listed.
 */
Test(report, degraded_runs_are_kept_out)
{
	char *md;

	md = report_of("ALTER TABLE runs ADD COLUMN dilation REAL;"
		       "ALTER TABLE runs ADD COLUMN verdict TEXT;"
		       "UPDATE runs SET dilation = 64, verdict = 'faithful';"
		       "UPDATE runs SET verdict = 'degraded: 1 of 2 rounds; "
		       "a worker waited 9 ms for a CPU' WHERE id = 1;"
		       /* the host's latency, 100x: must not reach a median */
		       "UPDATE rounds SET round_s = round_s * 100"
		       " WHERE run = 1;"
		       "INSERT INTO runs (id, scenario, scheduler, rounds,"
		       " scale, status, dilation, verdict) VALUES (100,"
		       " 'synthetic-test', 'spff', 2, 1000, 'recalibrated', 1,"
		       " 'degraded: x');");
	/* spff, 3 locals: only seed 2 (run 2, 5.5 ms) is measured */
	cr_expect(strstr(md, "| fixed (spff) | 3 | 1 | 5.500 | 5.500 | 5.500 "
			     "| 4.000 |"), "%s", md);
	cr_expect(strstr(md, "| 1 | synthetic-test | spff | synthetic | 3 | 1 "
			     "| ok | 64 | degraded: 1 of 2 rounds; a worker "
			     "waited 9 ms for a CPU |"), "%s", md);
	cr_expect(strstr(md, "| 2 | synthetic-test | spff | synthetic | 3 | 2 "
			     "| ok | 64 | faithful |"), "%s", md);
	cr_expect(!strstr(md, "| 1 | spff | t0 |"), "%s", md);
	cr_expect(!strstr(md, "| 100 |"), "%s", md);
	cr_expect(strstr(md, "1 attempt abandoned by --dilation auto"), "%s",
		  md);
	cr_expect(strstr(md, "1 run judged degraded"), "%s", md);
	free(md);
}

/*
 * A round touched from the live view (a cut, repair or traffic from the
 * page) is counted, but neither its times (here 100x) nor its bytes
 * (100x) reach a mean: run 1 (spff, 3 locals, seed 1) is its round 1
 * alone, task 0 at 3 ms and task 1 at 5, 4 ms.
 */
Test(report, rounds_touched_from_the_view_are_counted_not_averaged)
{
	char *md;

	md = report_of("CREATE TABLE fidelity (run INTEGER, round INTEGER,"
		       " verdict TEXT, touched INTEGER,"
		       " PRIMARY KEY (run, round));"
		       "INSERT INTO fidelity VALUES (1, 1, 'faithful', 0),"
		       " (1, 2, 'faithful (touched from the live view)', 1);"
		       "UPDATE rounds SET round_s = round_s * 100"
		       " WHERE run = 1 AND round = 2;"
		       "UPDATE links SET bytes = bytes * 100"
		       " WHERE run = 1 AND round = 2;");
	cr_expect(strstr(md, "| fixed (spff) | 3 | 2 | 4.750 | 4.000 | 5.500 "
			     "| 4.000 |"), "%s", md);
	cr_expect(strstr(md, "| fixed (spff) | 3 | 6 | 6 [6, 6] |"), "%s", md);
	cr_expect(strstr(md, "Run 1: 2 of its 4 task-rounds were touched from "
			     "the live view"), "%s", md);
	cr_expect(!strstr(md, "Run 2: "), "%s", md);
	free(md);
}

/*
 * Only complete runs (ok, failed) are results: an aborted run's rounds
 * (here 100x slower) reach no median, a run still marked running is not
 * listed; the report says what it left out, by status and run id.
 */
Test(report, incomplete_runs_are_left_out)
{
	char *md;

	md = report_of("UPDATE runs SET status = 'aborted' WHERE id = 1;"
		       "UPDATE rounds SET round_s = round_s * 100"
		       " WHERE run = 1;"
		       "INSERT INTO runs (id, scenario, scheduler, rounds,"
		       " scale, status) VALUES (101, 'synthetic-test', 'spff',"
		       " 2, 1000, 'running');");
	cr_expect(strstr(md, "| fixed (spff) | 3 | 1 | 5.500 | 5.500 | 5.500 "
			     "| 4.000 |"), "%s", md);
	cr_expect(!strstr(md, "| 1 | synthetic-test |"), "%s", md);
	cr_expect(!strstr(md, "| 101 |"), "%s", md);
	cr_expect(strstr(md, "2 runs did not complete and are left out of "
			     "this report: 1 aborted (run 1); 1 running (run "
			     "101)."), "%s", md);
	free(md);
}

/* This process's start time in clock ticks (/proc/self/stat, field 22). */
static long long self_start(void)
{
	char buf[1024], *p;
	long long start = 0;
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n;

	cr_assert_not_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	cr_assert_not_null(p);
	/* after ") S": fields 3.. ; start is the 20th of them */
	cr_assert_eq(sscanf(p + 2, "%*c %*s %*s %*s %*s %*s %*s %*s %*s %*s "
			    "%*s %*s %*s %*s %*s %*s %*s %*s %*s %lld",
			    &start), 1);
	return start;
}

/*
 * A run marked 'running' whose recorded owner is gone (here: this pid
 * with another start time) is said to be aborted; one whose owner still
 * runs (this very process) is running.
 */
Test(report, a_running_run_whose_process_is_gone_is_said_aborted)
{
	char *md, sql[512];

	snprintf(sql, sizeof(sql),
		 "ALTER TABLE runs ADD COLUMN owner_pid INTEGER;"
		 "ALTER TABLE runs ADD COLUMN owner_start INTEGER;"
		 "INSERT INTO runs (id, scenario, scheduler, rounds, scale,"
		 " status, owner_pid, owner_start) VALUES"
		 " (101, 'synthetic-test', 'spff', 2, 1000, 'running', %d, 1),"
		 " (102, 'synthetic-test', 'spff', 2, 1000, 'running', %d, %lld);",
		 (int)getpid(), (int)getpid(), self_start());
	md = report_of(sql);
	cr_expect(strstr(md, "2 runs did not complete and are left out of "
			     "this report: 1 aborted (its process is gone) "
			     "(run 101); 1 running (run 102)."), "%s", md);
	free(md);
}

/*
 * Each task's trees, stored with its run, become their own pictures next
 * to the network's (SVG alone); --task keeps only the tasks named.
 */
Test(report, task_pictures_and_task_filter)
{
	static const char *const task[] = { "--task", "t1", NULL };
	char *md;

	make_db(tmp.db, true);
	db_exec("CREATE TABLE pictures (run INTEGER, name TEXT, dot TEXT,"
		" PRIMARY KEY (run, name));"
		"INSERT INTO pictures SELECT id, 't0', 'digraph t0 { G ->"
		" L1 }' FROM runs;"
		"INSERT INTO pictures SELECT id, 't1', 'digraph t1 { G ->"
		" L2 }' FROM runs;");
	md = report_md(task);
	cr_expect(strstr(md, "  - task t1: ") && !strstr(md, "  - task t0"),
		  "%s", md);
	cr_expect(present("plan-mst-run7-t1.dot"), "no plan-mst-run7-t1.dot");
	cr_expect(!present("plan-mst-run7-t0.dot"),
		  "plan-mst-run7-t0.dot made");
	/* a task's trees as SVG alone, shown as such; the network's as
	 * both */
	if (access("/usr/bin/dot", X_OK) == 0) {
		cr_expect(present("plan-spff-run3-t1.svg"),
			  "no plan-spff-run3-t1.svg");
		cr_expect(!present("plan-spff-run3-t1.png"),
			  "plan-spff-run3-t1.png drawn");
		cr_expect(strstr(md, "  - task t1: ![t1](plan-spff-run3-t1.svg)"
				     "\n"), "%s", md);
		cr_expect(present("plan-spff-run3.png"),
			  "no plan-spff-run3.png");
	}
	free(md);
}

/* Runs made with plain `twinlab run` in an older database: no points
 * table, no stored pictures. The fidelity part is still made. */
Test(report, runs_without_points)
{
	char *md;

	make_db(tmp.db, false);
	md = report_md(NULL);
	cr_expect(strstr(md, "No experiment points"), "%s", md);
	/* spff runs 1-4: latencies 4.5, 5.5, 6.5, 7.5 ms, median 6 */
	cr_expect(strstr(md, "| fixed (spff) | 4 | 6.000 | 4.500 | 7.500 "
			     "| 5.000 |"), "%s", md);
	cr_expect(strstr(md, "| 1 | spff | t0 | 3 | 2 | 4.000 | 4.000 "
			     "| 1.00 |"), "%s", md);
	cr_expect(nonempty("fidelity-mst.dat"));
	cr_expect(!nonempty("latency-mst.dat"));
	if (access("/usr/bin/gnuplot", X_OK) == 0)
		cr_expect(nonempty("fig-fidelity.png"));
	free(md);
}

/*
 * Runs of the subsets select --write makes, side by side: each task's
 * accuracy round by round, the group written once, the latest run of
 * each subset; runs of other scenarios are not in it.
 */
Test(report, subsets_side_by_side)
{
	char *md, *sec;

	make_db(tmp.db, false);
	db_exec("UPDATE runs SET scenario = 'ring-all' WHERE id = 1;"
		"UPDATE runs SET scenario = 'ring-selected' WHERE id = 2;"
		"UPDATE runs SET scenario = 'ring-selected' WHERE id = 3;"
		"UPDATE rounds SET accuracy = 0.25 WHERE run = 1;"
		"UPDATE rounds SET accuracy = 0.125 WHERE run = 3;");
	md = report_md(NULL);
	sec = strstr(md, "## Local-model subsets");
	cr_assert_not_null(sec, "%s", md);
	cr_expect(strstr(sec, "### ring, spff"), "%s", sec);
	cr_expect(strstr(sec, "| all | 0 | 1 | "), "%s", sec);
	cr_expect(strstr(sec, "| selected | 0 | 3 | "), "the latest: %s", sec);
	cr_expect_null(strstr(sec, "| selected | 0 | 2 | "), "%s", sec);
	cr_expect(strstr(sec, " 0.250 0.250"), "%s", sec);
	cr_expect(strstr(sec, " 0.125"), "%s", sec);
	cr_expect_null(strstr(sec + 1, "## Local-model subsets"), "once");
	free(md);
	/* the figure's data: accuracy against time and bytes, per subset */
	md = out_file("fig-subsets-ring-spff-all.dat");
	cr_expect(strstr(md, "# round time_ms byte_links accuracy\n1 "), "%s",
		  md);
	cr_expect(strstr(md, " 0.25\n"), "%s", md);
	free(md);
	cr_expect(nonempty("fig-subsets-ring-spff-selected.dat"));
	cr_expect(!nonempty("fig-subsets-ring-spff-random.dat"));
}

Test(report, missing_database)
{
	const char *a[] = { "report", "/nonexistent/tl-report.db", "--out",
			    "/tmp/tl-report-never", NULL };
	struct tl_run r = tl_run(a);
	struct stat sb;

	cr_assert_eq(tl_code(&r), 1);
	cr_assert(strstr(r.err, "cannot open results database "
				"'/nonexistent/tl-report.db': No such file"),
		  "%s", r.err);
	cr_assert_neq(stat("/tmp/tl-report-never", &sb), 0);
	tl_run_free(&r);
}

Test(report, not_a_results_database)
{
	struct tl_run r;

	db_exec("CREATE TABLE foo (x INTEGER)");
	r = report(NULL);
	cr_assert_eq(tl_code(&r), 1);
	cr_assert(strstr(r.err, "is not a twinlab results database"), "%s",
		  r.err);
	tl_run_free(&r);
}

/*
 * A run that played background traffic gets its timeline: the events
 * with the tasks they touched, the figure's data, and its rounds under
 * the traffic against the others, measured and predicted (each round's
 * own prediction).
 */
Test(report, a_run_with_events_gets_its_timeline)
{
	char *md, *dat;

	md = report_of(PRED_ROUNDS
		       "UPDATE rounds SET pred_round_s = round_s * 1.25;"
		       ROUND_TIMES
		       "INSERT INTO round_times VALUES " RUN1_ROUNDS ";"
		       EVENTS("")
		       "INSERT INTO events VALUES (1, 0.015, 'traffic',"
		       " 's1 -> s2, 5 Gbit/s for 1 s', 't0', 0);"
		       LINK_SAMPLES RUN1_LP0);
	cr_expect(strstr(md, "## Timelines"), "%s", md);
	cr_expect(strstr(md, "### Run 1: synthetic-test, spff"), "%s", md);
	cr_expect(strstr(md, "| 15.000 | traffic | s1 -> s2, 5 Gbit/s for 1 s "
			     "| t0 | 0.000 |"), "%s", md);
	/* round 2 (both tasks 5 ms) under the traffic, round 1 (3, 5) not */
	cr_expect(strstr(md, "Rounds while background traffic flowed: 2, "
			     "measured 5.000 ms on average (the twin predicted "
			     "6.250 ms for them, ratio 0.800). Rounds with "
			     "nothing played: 2, measured 4.000 ms on average "
			     "(the twin predicted 5.000 ms for them, ratio "
			     "0.800)."), "%s", md);
	cr_expect_null(strstr(md, "Rounds a cut fell in"), "%s", md);
	cr_expect_null(strstr(md, "### Run 2:"), "no events, no timeline");
	free(md);
	dat = out_file("fig-timeline-run1-links.dat");
	cr_expect(strstr(dat, "# link lp0:r1>r2\n5.000000 50 5 10\n"
			      "25.000000 100 10 10\n"), "%s", dat);
	free(dat);
	if (access("/usr/bin/gnuplot", X_OK) == 0)
		cr_expect(present("fig-timeline-run1.png"),
			  "no fig-timeline-run1.png");
}

/*
 * A run with events but no link load sampled (it ended before the first
 * sample) still gets its timeline: the links' plot says that it is empty
 * instead of failing the figure (gnuplot cannot autoscale no point).
 */
Test(report, a_timeline_without_link_samples_says_so)
{
	struct tl_run r;
	char *gp;

	make_db(tmp.db, true);
	db_exec(PRED_ROUNDS
		ROUND_TIMES
		"INSERT INTO round_times VALUES " RUN1_ROUNDS ";"
		EVENTS("")
		"INSERT INTO events VALUES (1, 0.015, 'traffic',"
		" 's1 -> s2, 5 Gbit/s for 1 s', 't0', 0);"
		LINK_SAMPLES);
	r = report(NULL);
	cr_assert_eq(tl_code(&r), 0, "stderr: %s", r.err);
	cr_expect_null(strstr(r.err, "undefined"), "stderr: %s", r.err);
	gp = out_file("fig-timeline-run1.gp");
	cr_expect(strstr(gp, "'no link load was sampled in this run'"), "%s",
		  gp);
	free(gp);
	if (access("/usr/bin/gnuplot", X_OK) == 0)
		cr_expect(present("fig-timeline-run1.png"),
			  "no fig-timeline-run1.png: %s", r.err);
	tl_run_free(&r);
}

/*
 * A cut a run answered by re-placement (run --reschedule): the table puts
 * the policy, the moved task, when the moves were live and the first
 * round on the new paths ended, what the cut cost the moved task (its
 * round not over by the cut: 3 ms measured, 1.5 predicted) and the rounds
 * that started once the moves were live; rounds count as in the cut only
 * until the moves were live.
 */
Test(report, a_replaced_cut_is_measured_in_its_table)
{
	char *md;

	md = report_of(PRED_ROUNDS
		       "UPDATE rounds SET pred_round_s = round_s * 0.5;"
		       ROUND_TIMES
		       "INSERT INTO round_times VALUES " RUN1_ROUNDS ";"
		       EVENTS(RESCHEDULE)
		       "INSERT INTO events VALUES (1, 0.001, 'cut',"
		       " 'fibre A-B (40 km); moved t0', 't0', 0.0015, 'none',"
		       " 0.010, 0.026);"
		       LINK_SAMPLES RUN1_LP0);
	cr_expect(strstr(md, "### Re-placement, measured"), "%s", md);
	cr_expect(strstr(md, "| 1 | synthetic-test | spff | none | cut at "
			     "1.000 ms | t0 | 9.0 | 25.0 | 1.5 / 1.5 | 2: "
			     "5.000 / 2.500 |"), "%s", md);
	cr_expect(strstr(md, "Rounds a cut fell in: 2, measured 4.000 ms"),
		  "%s", md);
	free(md);
}

/*
 * A task that moved to new trees loses its round in flight (not stored:
 * it is run again on them). What the move cost it counts from that
 * round's start (20 ms, when t1's round 2 started) to the end of its
 * first round on the new trees (43 ms), less one predicted round (1.5):
 * 21.5 ms, not nothing.
 */
Test(report, a_round_lost_to_new_trees_is_counted_in_the_cost)
{
	char *md;

	md = report_of(PRED_ROUNDS
		       "UPDATE rounds SET pred_round_s = round_s * 0.5;"
		       "CREATE TEMP TABLE again AS SELECT * FROM rounds WHERE"
		       " run = 1 AND task = 0 AND round = 1;"
		       "UPDATE again SET round = 3;"
		       "DELETE FROM rounds WHERE run = 1 AND task = 0 AND"
		       " round = 2;"
		       "INSERT INTO rounds SELECT * FROM again;"
		       ROUND_TIMES
		       "INSERT INTO round_times VALUES " RUN1_ROUNDS ","
		       " (1, 3, 0.04, 0.046);"
		       EVENTS(RESCHEDULE)
		       "INSERT INTO events VALUES (1, 0.021, 'cut',"
		       " 'fibre A-B (40 km); moved t0', 't0', 0, 'full',"
		       " 0.030, 0.043);");
	cr_expect(strstr(md, "| 1 | synthetic-test | spff | full | cut at "
			     "21.000 ms | t0 | 9.0 | 22.0 | 21.5 / 21.5 | 1: "
			     "3.000 / 1.500 |"), "%s", md);
	free(md);
}

/*
 * A gap experiment on the teaching ring and random networks: every
 * instance stored with opt's weight beside each scheduler's, none lighter
 * than opt's, and the report's section, table and figure data.
 */
Test(report, a_gap_experiment_and_its_report)
{
	static const char sweep[] = "schedulers: [spff, mst, kmb]\n"
				    "locals: [2, 3]\nseeds: [1, 2, 3]\n";
	char *out, *md;

	for (int k = 0; k < 2; k++) {
		out = k ? experiment("gap1.yaml", "name: rnd-gap\nkind: gap\n"
					"base: random\nroadms: 8\n%s", sweep) :
			  experiment("gap0.yaml", "name: ring-gap\nkind: gap\n"
				     "base: %s\n%s", teaching_ring(), sweep);
		cr_assert(strstr(out, "6 instances (2 local-model counts x "
				 "3 seeds)"), "%s", out);
		cr_assert(strstr(out, "3 local models (3 instances; opt"),
			  "%s", out);
		free(out);
	}
	db_expect("SELECT count(*), count(DISTINCT experiment), "
		  "sum(weight < opt_weight * (1 - 1e-9)) AS "
		  "\"lighter than opt\", "
		  "min(opt_weight > 0), min(opt_seconds >= 0) FROM gap",
		  (const int[]){ 36, 2, 0, 1, 1 }, 5);
	md = report_md(NULL);
	cr_expect(strstr(md, "## Optimality gap"), "%s", md);
	cr_expect(strstr(md, "### ring-gap"), "%s", md);
	cr_expect(strstr(md, "### rnd-gap\n\nOn random: 6 instances"), "%s",
		  md);
	cr_expect(strstr(md, "| local models | fixed (spff) | flexible (mst) "
			 "| Steiner heuristic (kmb) |"), "%s", md);
	cr_expect(strstr(md, "\n| 2 | "), "%s", md);
	cr_expect_null(strstr(md, "## Runs"), "no runs to list");
	free(md);
	cr_expect(present("fig-gap-rnd-gap-mst.dat"),
		  "no fig-gap-rnd-gap-mst.dat");
}

/*
 * A blocking experiment runs in the twin (no root), stores every point,
 * says what each load blocked, and its report draws blocking against load
 * from the database alone — with no run in it.
 */
Test(report, a_blocking_experiment_and_its_report)
{
	char *out, *md;

	out = experiment("blocking.yaml", "name: ring-blocking\n"
			 "kind: blocking\nbase: %s\nschedulers: [spff, mst]\n"
			 "locals: [2]\nloads: [1, 5, 40]\nseeds: [1, 2]\n",
			 teaching_ring());
	cr_assert(strstr(out, "12 points"), "%s", out);
	cr_assert(strstr(out, "2 local models per task: blocked tasks"),
		  "%s", out);
	free(out);
	db_expect("SELECT count(*), sum(load = 1 AND blocked = 0) AS "
		  "\"one task blocks\", "
		  "max(blocked <= load), min(wl_used > 0) FROM blocking",
		  (const int[]){ 12, 4, 1, 1 }, 4);
	md = report_md(NULL);
	cr_expect(strstr(md, "## Blocking under load"), "%s", md);
	cr_expect(strstr(md, "### ring-blocking, 2 local models per task"),
		  "%s", md);
	cr_expect(strstr(md, "| tasks | fixed (spff) | flexible (mst) |"),
		  "%s", md);
	cr_expect(strstr(md, "\n| 1 | 0.0 % ("), "%s", md);
	cr_expect_null(strstr(md, "## Runs"), "no runs to list");
	free(md);
	cr_expect(present("fig-blocking-ring-blocking-l2-mst.dat"),
		  "no fig-blocking-ring-blocking-l2-mst.dat");
}
