// SPDX-License-Identifier: MIT
/*
 * The fidelity benchmark (root): runs an experiment (default the demo's
 * sweep, scenarios/experiments/poster-quick.yaml) with --dilation auto
 * into a fresh database and reports, per point, the dilation N that was
 * found faithful, the attempts it took, the CPU its workers used per
 * worker and round (cgroup accounting: training, TCP, the event loops),
 * and how the measured rounds compare with the twin: per-task median of
 * measured / predicted, the p95 of |error|, and the phases' medians.
 * Then, over the faithful points together, the targets: per-task median
 * of measured / predicted within [0.95, 1.05] and p95 of |error| at most
 * 10 %; broadcast, compute and upload medians within 10 %; bytes per link
 * within 2 % of the twin's; and at every number of local models (and
 * seed) the measured mst / spff latency ratio within 0.05 of the
 * predicted one. Degraded points are listed and left out.
 *
 *   bench-fidelity TWINLAB [EXPERIMENT] [PREFIX]
 *   bench-fidelity --read DATABASE     judge a sweep already run
 *
 * FIDELITY_PREDICTOR=packet predicts with the twin's packet model;
 * FIDELITY_DB=path keeps the database there (otherwise it is removed).
 */
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/nettest.h"
#include <sqlite3.h>

extern char **environ;

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* nearest-rank quantile of v[0..n), sorts v */
static double quant(double *v, int n, double q)
{
	int k;

	if (n <= 0)
		return NAN;
	qsort(v, (size_t)n, sizeof(*v), cmp);
	k = (int)ceil(q * n) - 1;
	return v[k < 0 ? 0 : k];
}

/* One column of a query over the point's tasks, as an array. */
static int column(sqlite3 *db, const char *sql, long run, double *v, int max)
{
	sqlite3_stmt *st;
	int n = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, run);
	while (sqlite3_step(st) == SQLITE_ROW && n < max)
		if (sqlite3_column_type(st, 0) != SQLITE_NULL)
			v[n++] = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return n;
}

/* The faithful points' rows, as one column over all of them. */
#define FAITHFUL " JOIN runs r ON r.id = x.run JOIN points p ON p.run = r.id" \
		 " WHERE r.status = 'ok' AND r.verdict = 'faithful'"

static int pooled(sqlite3 *db, const char *sql, double *v, int max)
{
	return column(db, sql, 0, v, max);
}

static void target(const char *what, double got, double lo, double hi,
		   int prec, const char *unit, int *missed)
{
	bool ok = got >= lo && got <= hi;

	printf("  %-44s %8.*f%-1s  %s\n", what, prec, got, unit,
	       ok ? "met" : "MISSED");
	*missed += !ok;
}

/*
 * The targets over every faithful point together. The mst/spff
 * ratio pairs the two schedulers' points of one number of local models
 * and seed: mean measured round over their tasks, against the same of the
 * predictions.
 */
static void targets(sqlite3 *h)
{
	static double v[4][65536], e[65536];
	int n, missed = 0, pairs = 0, bad = 0;
	double worst = 0;
	sqlite3_stmt *st;

	printf("\ntargets, over the faithful points (degraded ones left "
	       "out: ");
	if (sqlite3_prepare_v2(h, "SELECT count(*) FROM runs r JOIN points p "
			       "ON p.run = r.id WHERE r.status != 'ok' OR "
			       "r.verdict != 'faithful'", -1, &st, NULL) ==
		    SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		printf("%d", sqlite3_column_int(st, 0));
	sqlite3_finalize(st);
	printf(")\n");
	n = pooled(h, "SELECT x.round_s / t.pred_round_s FROM rounds x JOIN "
		   "tasks t ON t.run = x.run AND t.task = x.task" FAITHFUL,
		   v[0], 65536);
	if (n <= 0) {
		printf("  no faithful point: nothing to judge\n");
		return;
	}
	for (int i = 0; i < n; i++)
		e[i] = fabs(v[0][i] - 1);
	target("round, per task: median measured/predicted",
	       quant(v[0], n, 0.5), 0.95, 1.05, 3, "", &missed);
	target("round, per task: p95 of |error|", 100 * quant(e, n, 0.95), 0,
	       10, 1, "%", &missed);
	n = pooled(h, "SELECT x.bcast_s / t.pred_bcast_s FROM rounds x JOIN "
		   "tasks t ON t.run = x.run AND t.task = x.task" FAITHFUL,
		   v[1], 65536);
	target("broadcast: median measured/predicted", quant(v[1], n, 0.5),
	       0.9, 1.1, 3, "", &missed);
	n = pooled(h, "SELECT x.compute_s / t.pred_compute_s FROM rounds x "
		   "JOIN tasks t ON t.run = x.run AND t.task = x.task" FAITHFUL
		   " AND t.pred_compute_s > 0", v[2], 65536);
	target("compute: median measured/predicted", quant(v[2], n, 0.5), 0.9,
	       1.1, 3, "", &missed);
	n = pooled(h, "SELECT x.upload_s / t.pred_upload_s FROM rounds x JOIN "
		   "tasks t ON t.run = x.run AND t.task = x.task" FAITHFUL
		   " AND t.pred_upload_s > 0", v[3], 65536);
	target("upload: median measured/predicted", quant(v[3], n, 0.5), 0.9,
	       1.1, 3, "", &missed);
	n = pooled(h, "SELECT x.bytes / x.pred_bytes FROM links x" FAITHFUL
		   " AND x.pred_bytes > 0", v[0], 65536);
	for (int i = 0; i < n; i++)
		e[i] = fabs(v[0][i] - 1);
	target("bytes per link: median measured/predicted",
	       quant(v[0], n, 0.5), 0.98, 1.02, 4, "", &missed);
	target("bytes per link: worst |error|", 100 * quant(e, n, 1.0), 0, 2,
	       2, "%", &missed);
	if (sqlite3_prepare_v2(h,
		"SELECT a.nlocals, a.seed, a.m / b.m, a.p / b.p FROM"
		" (SELECT p.nlocals, p.seed, avg(x.round_s) m,"
		"  avg(t.pred_round_s) p FROM rounds x JOIN tasks t ON"
		"  t.run = x.run AND t.task = x.task" FAITHFUL
		"  AND p.scheduler = 'mst' GROUP BY p.nlocals, p.seed) a JOIN"
		" (SELECT p.nlocals, p.seed, avg(x.round_s) m,"
		"  avg(t.pred_round_s) p FROM rounds x JOIN tasks t ON"
		"  t.run = x.run AND t.task = x.task" FAITHFUL
		"  AND p.scheduler = 'spff' GROUP BY p.nlocals, p.seed) b"
		" ON a.nlocals = b.nlocals AND a.seed = b.seed"
		" ORDER BY a.nlocals, a.seed", -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			double m = sqlite3_column_double(st, 2),
			       p = sqlite3_column_double(st, 3);

			printf("  mst/spff at %2d locals, seed %d: measured "
			       "%.3f, predicted %.3f\n",
			       sqlite3_column_int(st, 0),
			       sqlite3_column_int(st, 1), m, p);
			worst = fmax(worst, fabs(m - p));
			bad += fabs(m - p) > 0.05;
			pairs++;
		}
		sqlite3_finalize(st);
	}
	if (pairs) {
		target("mst/spff ratio: worst |measured - predicted|", worst, 0,
		       0.05, 3, "", &missed);
		(void)bad;
	}
	printf("targets: %d missed\n", missed);
}

/* The per-point table and the targets, from the database db. */
static int judge(const char *db, int ran)
{
	static double v[4][8192];
	sqlite3 *h;
	sqlite3_stmt *st;

	(void)ran;
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(h,
		"SELECT r.id, r.scheduler, p.nlocals, r.dilation, r.verdict,"
		" (SELECT count(*) FROM runs a WHERE a.status = 'recalibrated'"
		"  AND a.id < r.id AND a.id > coalesce((SELECT max(b.id) FROM"
		"  runs b WHERE b.status != 'recalibrated' AND b.id < r.id),"
		"  0)),"
		" (SELECT sum(x.cpu_s) / sum(t.nlocals + 1) FROM rounds x JOIN"
		"  tasks t ON t.run = x.run AND t.task = x.task WHERE"
		"  x.run = r.id) "
		"FROM runs r JOIN points p ON p.run = r.id ORDER BY r.id", -1,
		&st, NULL) != SQLITE_OK) {
		fprintf(stderr, "bench-fidelity: no results in %s\n", db);
		return 1;
	}
	printf("\n%-5s %6s %6s %8s %12s %10s %8s %8s %8s %8s  %s\n", "sched",
	       "locals", "N", "attempts", "CPU ms/wk/rd", "meas/pred",
	       "p95|err|", "bcast", "compute", "upload", "verdict");
	while (sqlite3_step(st) == SQLITE_ROW) {
		long run = sqlite3_column_int64(st, 0);
		const char *verdict = (const char *)sqlite3_column_text(st, 4);
		int n[4];

		n[0] = column(h, "SELECT x.round_s / t.pred_round_s FROM rounds x"
			      " JOIN tasks t ON t.run = x.run AND t.task = x.task"
			      " WHERE x.run = ?1", run, v[0], 8192);
		n[1] = column(h, "SELECT x.bcast_s / t.pred_bcast_s FROM rounds x"
			      " JOIN tasks t ON t.run = x.run AND t.task = x.task"
			      " WHERE x.run = ?1", run, v[1], 8192);
		n[2] = column(h, "SELECT x.compute_s / t.pred_compute_s FROM "
			      "rounds x JOIN tasks t ON t.run = x.run AND "
			      "t.task = x.task WHERE x.run = ?1", run, v[2],
			      8192);
		n[3] = column(h, "SELECT x.upload_s / t.pred_upload_s FROM rounds"
			      " x JOIN tasks t ON t.run = x.run AND t.task = "
			      "x.task WHERE x.run = ?1 AND t.pred_upload_s > 0",
			      run, v[3], 8192);
		{
			double med = quant(v[0], n[0], 0.5);
			double e[8192];

			for (int i = 0; i < n[0]; i++)
				e[i] = fabs(v[0][i] - 1);
			printf("%-5s %6d %6g %8d %12.2f %10.3f %7.1f%% %8.3f "
			       "%8.3f %8.3f  %s\n",
			       (const char *)sqlite3_column_text(st, 1),
			       sqlite3_column_int(st, 2),
			       sqlite3_column_double(st, 3),
			       sqlite3_column_int(st, 5) + 1,
			       sqlite3_column_double(st, 6) * 1e3, med,
			       100 * quant(e, n[0], 0.95),
			       quant(v[1], n[1], 0.5), quant(v[2], n[2], 0.5),
			       quant(v[3], n[3], 0.5), verdict ? verdict : "?");
		}
	}
	sqlite3_finalize(st);
	printf("\n(N: dilation found faithful; attempts: builds --dilation "
	       "auto made for the point; CPU: the point's workers per worker "
	       "and round; ratios: per task, measured / predicted)\n");
	targets(h);
	sqlite3_close(h);
	return 0;
}

int main(int argc, char **argv)
{
	const char *bin = argc > 1 ? argv[1] : NULL;
	const char *exp = argc > 2 ? argv[2] :
				     "scenarios/experiments/poster-quick.yaml";
	const char *prefix = argc > 3 ? argv[3] : "tbf0";
	const char *pred = getenv("FIDELITY_PREDICTOR");
	const char *keep = getenv("FIDELITY_DB");
	char db[256];
	char *av[] = { (char *)bin, "experiment", (char *)exp, "--db", db,
		       "--prefix", (char *)prefix, "--predictor",
		       (char *)(pred && *pred ? pred : "fluid"), NULL };
	pid_t pid;
	int status;

	if (!bin) {
		fprintf(stderr, "usage: %s TWINLAB [EXPERIMENT] [PREFIX]\n"
			"       %s --read DATABASE\n", argv[0], argv[0]);
		return 2;
	}
	if (!strcmp(bin, "--read") && argc == 3)
		return judge(argv[2], 0);
	if (geteuid() != 0) {
		fprintf(stderr, "bench-fidelity: needs root\n");
		return 2;
	}
	if (keep && *keep)
		snprintf(db, sizeof(db), "%s", keep);
	else
		snprintf(db, sizeof(db), "/tmp/twinlab-bench-fidelity-%d.db",
			 (int)getpid());
	printf("fidelity: %s with --dilation auto, the twin's %s model "
	       "(progress below)\n", exp, av[8]);
	fflush(stdout);
	if (posix_spawn(&pid, bin, NULL, NULL, av, environ)) {
		perror("bench-fidelity: cannot run twinlab");
		return 1;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	if (judge(db, 1))
		return 1;
	if (keep && *keep) {
		printf("database kept: %s\n", db);
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	nt_rm_results(db);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
