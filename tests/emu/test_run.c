// SPDX-License-Identifier: MIT
/*
 * `twinlab run` end to end, as a user runs it: real workers over the
 * emulation, results read back from the SQLite database. Root only; each
 * test has its own prefix and database and removes them even on failure.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <json-c/json.h>
#include <libgen.h>
#include <sqlite3.h>

#include "emu/fleet.h"
#include "emu/lab.h"
#include "emu/monitor.h"
#include "tests/lib/clabdep.h"
#include "tests/lib/nettest.h"
#include "tests/lib/tlrun.h"
#include "emu/netns.h"
#include "emu/worker.h"
#include "twin/addr.h"
#include "twin/predict.h"
#include "twin/sched.h"
#include "twin/select.h"

extern char **environ;

static char prefix[LAB_PREFIX_MAX + 1];
static char db[NT_RUN_PATH], yaml[NT_RUN_PATH], out[NT_RUN_PATH];

static void setup(void)
{
	if (!nt_run_files("tr", "run", prefix, sizeof(prefix), db, yaml, out))
		cr_skip_test("needs root");
	lab_down(prefix, NULL, NULL);
	unlink(db);
}

static void teardown(void)
{
	char path[PATH_MAX];

	if (!prefix[0])
		return;
	nt_run_files_remove(prefix, db, yaml, out);
	for (int k = 0; k < 3; k++) {
		static const char *const which[] = { "all", "selected",
						     "random" };

		snprintf(path, sizeof(path), "%s-subset-%s.yaml", yaml,
			 which[k]);
		unlink(path);
	}
}

TestSuite(run, .init = setup, .fini = teardown, .timeout = 240);

/* A `twinlab run` command line and the strings it holds. */
struct run_cmd {
	char *argv[24];
	char rounds[16], dil[32];
};

/*
 * `twinlab run scenario --scheduler sched --rounds rounds` on the test's
 * database and prefix, at `dilation` (NULL: the default, auto), then the
 * options that follow `dilation` up to a NULL. Its argv, in c.
 */
__attribute__((sentinel))
static char **run_cmd(struct run_cmd *c, const char *scenario,
		      const char *sched, int rounds, const char *dilation, ...)
{
	char *bin = getenv("TWINLAB");
	const char *opt;
	va_list ap;
	int n = 0;

	cr_assert_not_null(bin, "TWINLAB is not set");
	snprintf(c->rounds, sizeof(c->rounds), "%d", rounds);
	snprintf(c->dil, sizeof(c->dil), "%s", dilation ? dilation : "");
	for (const char *const *a = (const char *const[]){
		     bin, "run", scenario, "--scheduler", sched, "--rounds",
		     c->rounds, "--db", db, "--prefix", prefix, NULL };
	     *a; a++)
		c->argv[n++] = (char *)*a;
	if (dilation) {
		c->argv[n++] = "--dilation";
		c->argv[n++] = c->dil;
	}
	va_start(ap, dilation);
	while ((opt = va_arg(ap, const char *))) {
		cr_assert_lt(n, 23, "too many options");
		c->argv[n++] = (char *)opt;
	}
	va_end(ap);
	c->argv[n] = NULL;
	return c->argv;
}

/* Start argv with stdout and stderr into `out`. */
static pid_t spawn_run(char *const argv[])
{
	pid_t pid = nt_spawn_to(argv, out);

	cr_assert_gt(pid, 0, "cannot start twinlab: %s", strerror(-pid));
	return pid;
}

/*
 * Start `twinlab run` with stdout and stderr into `out`, at `dilation`
 * (NULL: the default, auto).
 */
static pid_t start_run_at(const char *scenario, const char *sched,
			  int rounds, const char *dilation)
{
	struct run_cmd c;

	return spawn_run(run_cmd(&c, scenario, sched, rounds, dilation, NULL));
}

static pid_t start_run(const char *scenario, const char *sched, int rounds)
{
	return start_run_at(scenario, sched, rounds, NULL);
}

static int wait_run(pid_t pid)
{
	int status;

	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "twinlab run died");
	return WEXITSTATUS(status);
}

/*
 * A command whose stdout and stderr come through a pipe, read line by
 * line as it runs (its lines are the events a test waits for), each line
 * read copied into `out`.
 */
struct piped {
	pid_t pid;
	FILE *rd, *copy;
	char line[512];
};

static void start_piped(struct piped *pp, char *const argv[])
{
	posix_spawn_file_actions_t fa;
	int fds[2];

	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
	cr_assert_eq(posix_spawn(&pp->pid, argv[0], &fa, NULL, argv, environ),
		     0);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	pp->rd = fdopen(fds[0], "r");
	pp->copy = fopen(out, "w");
	cr_assert(pp->rd && pp->copy);
}

/* Its next line into pp->line, and into `out` (output() has it at once);
 * false at the end of its output. */
static bool piped_line(struct piped *pp)
{
	if (!fgets(pp->line, sizeof(pp->line), pp->rd))
		return false;
	fputs(pp->line, pp->copy);
	fflush(pp->copy);
	return true;
}

/* The rest of its output, then its end: its wait status. */
static int piped_wait(struct piped *pp)
{
	int status;

	while (piped_line(pp))
		;
	fclose(pp->rd);
	fclose(pp->copy);
	cr_assert_eq(waitpid(pp->pid, &status, 0), pp->pid);
	return status;
}

static char *output(void)
{
	static char buf[16384];

	return nt_read_file(out, buf, sizeof(buf));
}

/* Column col of the first row of sql: NAN without a row, `null` for NULL. */
static double q1_at(sqlite3 *h, const char *sql, int col, double null)
{
	sqlite3_stmt *st;
	double v = NAN;

	cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK,
		     "%s: %s", sql, sqlite3_errmsg(h));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_type(st, col) == SQLITE_NULL ? null :
		    sqlite3_column_double(st, col);
	sqlite3_finalize(st);
	return v;
}

static double q1(sqlite3 *h, const char *sql)
{
	return q1_at(h, sql, 0, 0);
}

/* The SQL condition on a table's run: the last run, the one a test made. */
#define THIS_RUN "run = (SELECT max(id) FROM runs)"

/* Every check of the last run's rounds held. */
static void checks_held(sqlite3 *h)
{
	cr_assert_eq(q1(h, "SELECT min(check_ok) FROM rounds WHERE " THIS_RUN),
		     1, "a check failed");
}

/*
 * Each task-round of the last run stored how late the host let its
 * workers act, and the round's verdict judged them: the fidelity row's
 * worst path is the largest of its tasks', its worst task the largest of
 * their lateness over their rounds along the way that ended them.
 */
static void lateness_stored(sqlite3 *h)
{
	cr_assert_eq(q1(h, "SELECT count(*) FROM rounds WHERE " THIS_RUN
			   " AND (late_max_s IS NULL OR late_last_s IS NULL OR "
			   "skew_s IS NULL OR overrun_max_s IS NULL OR "
			   "min(late_max_s, late_last_s, skew_s, "
			   "overrun_max_s) < 0)"), 0,
		     "a task-round without its lateness");
	cr_assert_eq(q1(h, "SELECT count(*) FROM fidelity f WHERE f." THIS_RUN
			   " AND f.late_max_s != (SELECT max(x.late_max_s) "
			   "FROM rounds x WHERE x.run = f.run AND x.round = "
			   "f.round)"), 0,
		     "a round judged on another lateness than its tasks'");
	cr_assert_eq(q1(h, "SELECT count(*) FROM fidelity f WHERE f." THIS_RUN
			   " AND f.late_frac_worst != (SELECT max(x.late_last_s"
			   " / x.round_s) FROM rounds x WHERE x.run = f.run AND "
			   "x.round = f.round AND x.round_s > 0)"), 0,
		     "a round judged on another task's lateness than its "
		     "tasks'");
}

/* No task of the last run failed. */
static void no_task_failed(sqlite3 *h)
{
	cr_assert_eq(q1(h, "SELECT count(*) FROM tasks WHERE " THIS_RUN
			   " AND failed"), 0, "no task failed");
}

/* The mean of col over the rounds of run `run` (0: the last run). */
static double rounds_avg(sqlite3 *h, const char *col, long run)
{
	char sql[200];

	if (run)
		snprintf(sql, sizeof(sql), "SELECT avg(%s) FROM rounds WHERE "
			 "run = %ld", col, run);
	else
		snprintf(sql, sizeof(sql), "SELECT avg(%s) FROM rounds WHERE "
			 THIS_RUN, col);
	return q1(h, sql);
}

/*
 * Run c until the monitor judges the whole run faithful: from the
 * dilation c names (auto), and a run degraded in a later round (auto
 * recalibrates on round 1 only) again at the dilation it names, up to
 * three times; each must exit 0. The claims the callers check hold for a
 * faithful run; the tool finds one itself. Returns the output of the
 * faithful run.
 */
static char *until_faithful(struct run_cmd *c)
{
	char *o = NULL;

	for (int attempt = 0; attempt < 3; attempt++) {
		const char *about;

		cr_assert_eq(wait_run(spawn_run(c->argv)), 0, "%s", output());
		o = output();
		if (strstr(o, ", faithful\nresults: "))
			return o;
		about = strstr(o, "about dilation ");
		cr_assert_not_null(about, "%s", o);
		snprintf(c->dil, sizeof(c->dil), "auto:%d",
			 atoi(about + strlen("about dilation ")));
		cr_log_info("degraded; again at %s", c->dil);
	}
	cr_assert(strstr(o, ", faithful\nresults: "), "never faithful: %s", o);
	return o;
}

/* until_faithful for scenario, sched and rounds from dilation `from`. */
static char *run_faithful(const char *scenario, const char *sched,
			  int rounds, const char *from)
{
	struct run_cmd c;

	run_cmd(&c, scenario, sched, rounds, from, NULL);
	return until_faithful(&c);
}

static void nothing_left(void)
{
	char path[128];
	struct stat st;
	DIR *d = opendir(NETNS_RUN_DIR);
	struct dirent *de;
	size_t n = strlen(prefix);

	while (d && (de = readdir(d)))
		cr_assert(strncmp(de->d_name, prefix, n) || de->d_name[n] != '-',
			  "namespace %s left", de->d_name);
	if (d)
		closedir(d);
	snprintf(path, sizeof(path), "/sys/fs/cgroup/cpu/twinlab/%s", prefix);
	cr_assert_neq(stat(path, &st), 0, "cgroup %s left", path);
	snprintf(path, sizeof(path), "/sys/fs/cgroup/twinlab/%s", prefix);
	cr_assert_neq(stat(path, &st), 0, "cgroup %s left", path);
	snprintf(path, sizeof(path), LAB_STATE_DIR "/%s", prefix);
	cr_assert_neq(stat(path, &st), 0, "state %s left", path);
	snprintf(path, sizeof(path), LAB_STATE_DIR "/%s.lock", prefix);
	cr_assert_neq(stat(path, &st), 0, "lock %s left", path);
}

/* What nothing_left checks but the lock file, which a holder keeps. */
static void nothing_left_but_the_lock(void)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), NETNS_RUN_DIR "/%s-A", prefix);
	cr_assert_neq(stat(path, &st), 0, "namespace %s made", path);
	snprintf(path, sizeof(path), LAB_STATE_DIR "/%s", prefix);
	cr_assert_neq(stat(path, &st), 0, "state %s made", path);
	cr_assert_neq(stat(db, &st), 0, "database %s made", db);
}

/*
 * A subset of a task's local models, chosen by twinlab select and written
 * as a scenario (its locals keeping the shares of the data they held):
 * run on the emulation, it learns what the twin computed, round by round.
 */
Test(run, a_selected_subset_learns_what_the_twin_computed)
{
	char *bin = getenv("TWINLAB"), stem[256], path[300];
	char *argv[] = { bin, "select", "scenarios/teaching-ring.yaml",
			 "--task", "t1", "--k", "2", "--write", stem, NULL };
	struct scn_error err;
	struct scenario *sc;
	struct sel_learning l;
	int shares[16];
	double acc[3];
	sqlite3 *h;

	cr_assert_not_null(bin, "TWINLAB is not set");
	snprintf(stem, sizeof(stem), "%s-subset", yaml);
	cr_assert_eq(run_argv_output(argv, path, sizeof(path)), 0, "%s", path);
	snprintf(path, sizeof(path), "%s-selected.yaml", stem);
	sc = scenario_load(path, &err);
	cr_assert_not_null(sc, "%s", err.msg);
	cr_assert_eq(sc->tasks[0].nlocals, 2);
	cr_assert_eq(sc->tasks[0].split_over, 3);
	cr_assert_eq(wait_run(start_run(path, "mst", 3)), 0, "%s", output());
	nothing_left();
	cr_assert_eq(fleet_learning(sc, 0, 0, &l), 0);
	for (int i = 0; i < 2; i++)
		shares[i] = scenario_task_share(&sc->tasks[0], i);
	cr_assert_eq(sel_learn(&l, 3, shares, 2, 3, acc), 0);
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	for (int r = 0; r < 3; r++) {
		char sql[256];
		double m;

		snprintf(sql, sizeof(sql), "SELECT accuracy FROM rounds WHERE "
			 "run = (SELECT max(id) FROM runs WHERE status = 'ok') "
			 "AND task = 0 AND round = %d", r + 1);
		m = q1(h, sql);
		cr_assert(fabs(m - acc[r]) <= 0.0015, "round %d: measured %.3f, "
			  "twin %.3f", r + 1, m, acc[r]);
	}
	sqlite3_close(h);
	scenario_free(sc);
	/* the three written: teardown removes them */
	for (int k = 0; k < 3; k++) {
		static const char *const which[] = { "all", "selected",
						     "random" };

		snprintf(path, sizeof(path), "%s-%s.yaml", stem, which[k]);
		cr_assert_eq(access(path, R_OK), 0, "%s", path);
	}
}

/*
 * Both schedulers on the teaching ring: every round's check holds, the
 * model learns, the global model is the same whatever the tree, and its
 * accuracy each round is what the twin computes for those workers
 * (twin/select.h: twinlab select's figures).
 */
Test(run, both_schedulers_learn_the_same_model)
{
	sqlite3 *h;
	char sql[512];
	int ok[2];

	cr_assert_eq(wait_run(start_run("scenarios/teaching-ring.yaml", "mst",
					4)), 0, "%s", output());
	cr_assert_eq(wait_run(start_run("scenarios/teaching-ring.yaml",
					"spff", 4)), 0, "%s", output());
	nothing_left();
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	cr_assert_eq(q1(h, "SELECT count(*) FROM runs WHERE status = 'ok'"),
		     2);
	/* --dilation auto may have recalibrated first: those runs are kept */
	ok[0] = (int)q1(h, "SELECT min(id) FROM runs WHERE status = 'ok'");
	ok[1] = (int)q1(h, "SELECT max(id) FROM runs WHERE status = 'ok'");
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM rounds WHERE run IN "
		 "(%d, %d)", ok[0], ok[1]);
	cr_assert_eq(q1(h, sql), 2 * 2 * 4);
	cr_assert_eq(q1(h, "SELECT count(*) FROM rounds WHERE check_ok = 0"),
		     0);
	for (int t = 0; t < 2; t++)
		for (int i = 0; i < 2; i++) {
			int run = ok[i];
			double a1, a4, l1, l4;

			snprintf(sql, sizeof(sql), "SELECT accuracy FROM rounds "
				 "WHERE run = %d AND task = %d AND round = 1",
				 run, t);
			a1 = q1(h, sql);
			snprintf(sql, sizeof(sql), "SELECT accuracy FROM rounds "
				 "WHERE run = %d AND task = %d AND round = 4",
				 run, t);
			a4 = q1(h, sql);
			snprintf(sql, sizeof(sql), "SELECT loss FROM rounds WHERE "
				 "run = %d AND task = %d AND round = 1", run, t);
			l1 = q1(h, sql);
			snprintf(sql, sizeof(sql), "SELECT loss FROM rounds WHERE "
				 "run = %d AND task = %d AND round = 4", run, t);
			l4 = q1(h, sql);
			cr_assert_gt(a4, a1, "task %d run %d: accuracy %.3f -> "
				     "%.3f", t, run, a1, a4);
			cr_assert_lt(l4, l1, "task %d run %d: loss %.3f -> %.3f",
				     t, run, l1, l4);
			/* ten classes: chance is 0.1; 624 features learn
			 * slower than small models (twin/fl.h, fl_lr_for) */
			cr_assert_gt(a4, 0.4, "task %d run %d: accuracy %.3f",
				     t, run, a4);
		}
	/* the twin's FedAvg over all the locals: the same accuracy (one
	 * test sample either way: the trees sum in another order) */
	{
		struct scn_error err;
		struct scenario *sc = scenario_load(
			"scenarios/teaching-ring.yaml", &err);

		cr_assert_not_null(sc);
		for (int t = 0; t < 2; t++) {
			struct sel_learning l;
			int all[16];
			double acc[4];

			cr_assert_eq(fleet_learning(sc, t, 0, &l), 0);
			for (int i = 0; i < sc->tasks[t].nlocals; i++)
				all[i] = i;
			cr_assert_eq(sel_learn(&l, sc->tasks[t].nlocals, all,
					       sc->tasks[t].nlocals, 4, acc), 0);
			for (int i = 0; i < 2; i++)
				for (int r = 0; r < 4; r++) {
					double m;

					snprintf(sql, sizeof(sql), "SELECT "
						 "accuracy FROM rounds WHERE "
						 "run = %d AND task = %d AND "
						 "round = %d", ok[i], t, r + 1);
					m = q1(h, sql);
					cr_assert(fabs(m - acc[r]) <= 0.0015,
						  "task %d run %d round %d: "
						  "measured %.3f, twin %.3f", t,
						  ok[i], r + 1, m, acc[r]);
				}
		}
		scenario_free(sc);
	}
	/* the global models of the two runs, projection by projection */
	{
		sqlite3_stmt *st;
		int rows = 0;

		cr_assert_eq(sqlite3_prepare_v2(h,
			"SELECT a.global_proj, b.global_proj FROM rounds a "
			"JOIN rounds b ON a.task = b.task AND a.round = b.round "
			"WHERE a.run = ?1 AND b.run = ?2", -1, &st, NULL),
			SQLITE_OK);
		sqlite3_bind_int(st, 1, ok[0]);
		sqlite3_bind_int(st, 2, ok[1]);
		while (sqlite3_step(st) == SQLITE_ROW && ++rows) {
			const char *x = (const char *)sqlite3_column_text(st, 0);
			const char *y = (const char *)sqlite3_column_text(st, 1);
			char *ex, *ey;

			for (int k = 0; k < 8; k++) {
				double u = strtod(x, &ex), v = strtod(y, &ey);

				cr_assert(fabs(u - v) <= 1e-5 * (1 + fabs(u)),
					  "projection %d: %.9g vs %.9g", k, u, v);
				x = ex;
				y = ey;
			}
		}
		sqlite3_finalize(st);
		cr_assert_eq(rows, 2 * 4, "%d rounds compared", rows);
	}
	sqlite3_close(h);
}

/* The run's workers: its children but the delay line, from /proc. */
static int children(pid_t run, pid_t *pids, int max)
{
	char path[64], buf[4096];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)run,
		 (int)run);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f)) {
		char *s = buf, *e;

		while (n < max) {
			long v = strtol(s, &e, 10);
			char comm[64] = "", want[32];
			FILE *c;

			if (e == s)
				break;
			s = e;
			/* the run's other child: its delay line's supervisor */
			snprintf(path, sizeof(path), "/proc/%ld/comm", v);
			snprintf(want, sizeof(want), "%.9s-delay\n", prefix);
			c = fopen(path, "r");
			if (c) {
				if (!fgets(comm, sizeof(comm), c))
					comm[0] = '\0';
				fclose(c);
			}
			if (strcmp(comm, want))
				pids[n++] = (pid_t)v;
		}
	}
	fclose(f);
	return n;
}

static const char two_tasks[] =
	"name: kill\nscale: 10\nwavelength_gbps: 100\nwavelengths: 4\n"
	"demand_gbps: 10\nroadms: [A, B]\nfibres: [{a: A, b: B, km: 20}]\n"
	"routers: [{name: rA, roadm: A}, {name: rB, roadm: B}]\n"
	"servers:\n"
	"  - {name: g1, router: rA, access_gbps: 100, cpu: %s, memory_mib: 256}\n"
	"  - {name: g2, router: rA, access_gbps: 100, cpu: %s, memory_mib: 256}\n"
	"  - {name: l1, router: rB, access_gbps: 100, cpu: %s, memory_mib: 256}\n"
	"  - {name: l2, router: rB, access_gbps: 100, cpu: %s, memory_mib: 256}\n"
	"tasks:\n"
	"  - {name: t1, global: g1, locals: [l1], parameters: 100000,\n"
	"     bytes_per_parameter: 4, work_core_s: %s}\n"
	"  - {name: t2, global: g2, locals: [l2], parameters: 100000,\n"
	"     bytes_per_parameter: 4, work_core_s: %s}\n";

static void write_yaml(const char *c1, const char *c2, const char *work)
{
	char y[1024];

	snprintf(y, sizeof(y), two_tasks, c1, c2, c1, c2, work, work);
	tl_write(yaml, y);
}

/*
 * A worker that cannot start says why, and that is what the run names:
 * with t1's local model's address taken (something already listens on
 * its port in its server's namespace), making its listening socket fails
 * with "cannot listen on ...: Address already in use", t1 fails and t2
 * goes on. (The run once read a worker's exit first and named only
 * "exited with status 1"; the harness makes the socket now.)
 */
Test(run, a_failed_worker_is_named_by_its_own_reason)
{
	struct lab_opts lo = { .prefix = prefix, .delay = true,
			       .dilation = 4, .scenario_path = yaml };
	struct sockaddr_in at = { .sin_family = AF_INET,
				  .sin_port = htons(WK_PORT) };
	struct scn_error err;
	struct scenario *sc;
	struct plan *p;
	struct addressing *a;
	struct lab *lab;
	char msg[512], ns[64], want[96], ip[16], *o;
	int fd, saved, code;

	write_yaml("1", "1", "0.01");
	sc = scenario_load(yaml, &err);
	cr_assert_not_null(sc, "%s", err.msg);
	p = sched_plan(sc, &sched_mst);
	cr_assert_not_null(p);
	a = addressing_new(p);
	cr_assert_not_null(a);
	cr_assert_eq(lab_up(p, a, &lo, &lab, msg, sizeof(msg)), 0, "%s", msg);
	lab_free(lab);
	/* t1's local model (model 1) listens for its broadcast here */
	at.sin_addr.s_addr = htonl(a->ep[0][2].dst);
	inet_ntop(AF_INET, &at.sin_addr, ip, sizeof(ip));
	lab_ns_name(prefix, "l1", ns, sizeof(ns));
	cr_assert_eq(netns_enter(ns, &saved), 0);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&at, sizeof(at)), 0,
		     "bind %s: %s", ip, strerror(errno));
	cr_assert_eq(listen(fd, 1), 0);
	netns_leave(saved);

	code = wait_run(start_run_at(yaml, "mst", 1, "4"));
	o = output();
	close(fd);
	cr_assert_eq(code, 1, "%s", o);
	snprintf(want, sizeof(want), "cannot listen on %s: Address already "
		 "in use", ip);
	cr_assert(strstr(o, want), "want '%s' in: %s", want, o);
	cr_assert_null(strstr(o, "exited with status"), "%s", o);
	cr_assert(strstr(o, "t2") && strstr(o, " ok"), "t2 goes on: %s", o);
	addressing_free(a);
	plan_free(p);
	scenario_free(sc);
}

/*
 * A model whose workers cannot fit the memory their server declares is
 * refused before anything is built or written, with the task's position,
 * the server and both sizes (it used to be OOM-killed mid-run and
 * reported as "signal 9").
 */
Test(run, a_model_too_large_for_its_server_is_refused_first)
{
	struct stat st;
	char *o;

	/* 10^8 parameters at scale 1: ~40 GiB of test data for the global */
	tl_write(yaml, "name: big\nwavelength_gbps: 100\nwavelengths: 4\n"
		   "demand_gbps: 10\nroadms: [A, B]\n"
		   "fibres: [{a: A, b: B, km: 20}]\n"
		   "routers: [{name: rA, roadm: A}, {name: rB, roadm: B}]\n"
		   "servers:\n"
		   "  - {name: g1, router: rA, access_gbps: 100, cpu: 1, "
		   "memory_mib: 256}\n"
		   "  - {name: l1, router: rB, access_gbps: 100, cpu: 1, "
		   "memory_mib: 256}\n"
		   "tasks:\n"
		   "  - {name: t1, global: g1, locals: [l1], parameters: "
		   "100000000,\n"
		   "     bytes_per_parameter: 4, work_core_s: 0.01}\n");
	cr_assert_eq(wait_run(start_run(yaml, "mst", 1)), 2, "%s", output());
	o = output();
	cr_expect(strstr(o, ":12:5: task 't1': its global model on server "
			    "'g1' needs about "), "%s", o);
	cr_expect(strstr(o, "more than the server's memory_mib 256"), "%s", o);
	cr_expect_neq(stat(db, &st), 0, "the database was written");
	nothing_left();
}

/*
 * Out of file descriptors (ulimit -n 64, as a user might have it): the
 * harness runs out as it makes the workers' listening sockets and pipes,
 * before any worker starts, so the run fails there, saying why with the
 * right errno ("Too many open files", where the links' counters once said
 * "No such file or directory"), runs no round, prints no bandwidth
 * ("measured/predicted 0.000") and leaves nothing behind.
 */
Test(run, too_few_file_descriptors_are_said_as_such)
{
	struct rlimit was, low = { 64, 64 };
	pid_t pid;
	char *o;

	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &was), 0);
	low.rlim_max = was.rlim_max;	/* the test's own limit comes back */
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	pid = start_run_at("scenarios/teaching-ring.yaml", "mst", 1, "1");
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &was), 0);
	cr_assert_neq(wait_run(pid), 0);
	o = output();
	cr_assert(strstr(o, "Too many open files"), "%s", o);
	cr_assert_null(strstr(o, "No such file or directory"), "%s", o);
	cr_assert_null(strstr(o, "round 1/"), "%s", o);
	cr_assert_null(strstr(o, "measured/predicted"), "%s", o);
	nothing_left();
}

/* Of the run's n workers in pids, the one in cgroup `cg` (e.g. "t1-1"). */
static pid_t worker_in(const pid_t *pids, int n, const char *cg)
{
	char want[2][40];

	snprintf(want[0], sizeof(want[0]), "/%s\n", cg);
	snprintf(want[1], sizeof(want[1]), "/%s/", cg);
	for (int i = 0; i < n; i++) {
		char path[64], line[512] = "";
		bool in = false;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pids[i]);
		f = fopen(path, "r");
		cr_assert_not_null(f, "%s", path);
		while (!in && fgets(line, sizeof(line), f))
			in = strstr(line, want[0]) || strstr(line, want[1]);
		fclose(f);
		if (in)
			return pids[i];
	}
	return 0;
}

/*
 * The run's workers once round 2 is said (they are the run's last:
 * --dilation auto rebuilds only after round 1) and wait for round 3:
 * the local models of the tasks named (cgroups "t1-1", ...) are killed.
 * The run's pipe is read on by the caller.
 */
static void kill_locals_after_round_2(struct piped *pp, pid_t *pids, int *n,
				      const char *const *cgs, int ncg)
{
	bool round2 = false;

	while (!round2 && piped_line(pp))
		round2 = !strncmp(pp->line, "round 2/", 8);
	cr_assert(round2, "no second round: %s", output());
	*n = children(pp->pid, pids, 16);
	cr_assert_eq(*n, 4, "%d workers: %s", *n, output());
	for (int i = 0; i < ncg; i++) {
		pid_t victim = worker_in(pids, *n, cgs[i]);

		cr_assert_neq(victim, 0, "no worker in %s", cgs[i]);
		cr_assert_eq(kill(victim, SIGKILL), 0);
	}
}

/*
 * Killing one worker mid-run fails its task with a message naming the
 * worker and the reason; the other task finishes; nothing is left.
 */
Test(run, a_killed_worker_fails_its_task_cleanly)
{
	pid_t pids[16];
	int n, status;
	struct run_cmd c;
	struct piped pp;
	char *o;

	write_yaml("1", "1", "0.2");
	/* the run's output through a pipe: its lines are the events */
	start_piped(&pp, run_cmd(&c, yaml, "mst", 6, NULL, NULL));
	kill_locals_after_round_2(&pp, pids, &n, (const char *const[]){ "t1-1" },
				  1);
	status = piped_wait(&pp);
	o = output();
	cr_assert(WIFEXITED(status), "twinlab run died");
	cr_assert_eq(WEXITSTATUS(status), 1, "%s", o);
	cr_assert(strstr(o, "FAILED") && strstr(o, "l1") &&
		  strstr(o, "signal 9"), "%s", o);
	cr_assert(strstr(o, "t2") && strstr(o, " ok"), "%s", o);
	for (int i = 0; i < n; i++)
		cr_assert(kill(pids[i], 0) && errno == ESRCH,
			  "worker %d still runs", pids[i]);
	nothing_left();
}

/* The pipes worker pid holds open (their inodes) into ino, but for its
 * standard streams (the run's); how many. */
static int pipes_of(pid_t pid, unsigned long *ino, int max)
{
	struct nt_fd fds[64];
	int nfd = nt_fds(pid, fds, 64), n = 0;

	cr_assert_geq(nfd, 0, "worker %d: %s", (int)pid, strerror(-nfd));
	for (int i = 0; i < nfd; i++) {
		if (fds[i].fd <= 2 || strncmp(fds[i].to, "pipe:[", 6))
			continue;
		cr_assert_lt(n, max, "worker %d: more than %d pipes", pid, max);
		ino[n++] = strtoul(fds[i].to + 6, NULL, 10);
	}
	return n;
}

/* Whether ino is among the n in set. */
static bool holds(const unsigned long *set, int n, unsigned long ino)
{
	for (int i = 0; i < n; i++)
		if (set[i] == ino)
			return true;
	return false;
}

/*
 * A worker holds only its own descriptors: of the pipes the workers hold,
 * one is held by more than one of them (the harness's, they report
 * through). Forked with all the harness had open, each held the control
 * pipes of every worker forked before it, and the later tasks' roots
 * their go pipes (the largest point of the demo: 610 open at its last).
 */
Test(run, workers_hold_only_their_own_descriptors)
{
	unsigned long ino[4][32], both[4 * 32];
	int np[4], shared = 0, n;
	pid_t pids[16];
	struct run_cmd c;
	struct piped pp;
	bool round2 = false;

	/* the run's workers for good once round 2 is said (--dilation auto
	 * rebuilds only after round 1), with four rounds to go */
	write_yaml("1", "1", "0.2");
	start_piped(&pp, run_cmd(&c, yaml, "spff", 6, NULL, NULL));
	while (!round2 && piped_line(&pp))
		round2 = !strncmp(pp.line, "round 2/", 8);
	cr_assert(round2, "no second round: %s", output());
	n = children(pp.pid, pids, 16);
	cr_assert_eq(n, 4, "%d workers: %s", n, output());
	for (int i = 0; i < n; i++)
		np[i] = pipes_of(pids[i], ino[i], 32);
	/* each pipe a worker holds that a later one holds too, once */
	for (int i = 0; i < n; i++)
		for (int k = 0; k < np[i]; k++)
			for (int j = i + 1; j < n; j++)
				if (holds(ino[j], np[j], ino[i][k]) &&
				    !holds(both, shared, ino[i][k]))
					both[shared++] = ino[i][k];
	cr_assert_eq(shared, 1, "%d pipes held by more than one worker",
		     shared);
	cr_assert_eq(WEXITSTATUS(piped_wait(&pp)), 0, "%s", output());
	nothing_left();
}

/*
 * A round that no task completed (a local model of each killed) is
 * degraded for that, said with the reason; no dilation would mend it,
 * so none is suggested. Nothing is left.
 */
Test(run, a_round_no_task_completed_suggests_no_dilation)
{
	pid_t pids[16];
	int n, status;
	struct run_cmd c;
	struct piped pp;
	bool paced = false;
	char *o, *fid, *r3;

	write_yaml("1", "1", "0.2");
	start_piped(&pp, run_cmd(&c, yaml, "mst", 6, NULL, NULL));
	kill_locals_after_round_2(&pp, pids, &n,
				  (const char *const[]){ "t1-1", "t2-1" }, 2);
	status = piped_wait(&pp);
	o = output();
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1, "%s", o);
	r3 = strstr(o, "\nround 3/6: 0 tasks done");
	cr_assert(r3 && strstr(r3, "degraded: no task completed the round ("),
		  "%s", o);
	/* rounds 1 and 2 degraded by their pace (a loaded host) would
	 * suggest a dilation, rightly */
	for (char *l = o; (l = strstr(l, "\nround ")); l++) {
		size_t len = strcspn(l + 1, "\n");
		char *d = memmem(l, len + 1, "degraded: ", 10);

		paced = paced || (d && l < r3 && !memmem(l, len + 1,
				"no task completed", 17));
	}
	fid = strstr(o, "\nfidelity: dilation ");
	cr_assert_not_null(fid, "%s", o);
	fid[strcspn(fid + 1, "\n") + 1] = '\0';
	cr_assert(strstr(fid, ", degraded: "), "%s", fid);
	cr_assert(paced || strstr(fid, "no task completed the round ("), "%s",
		  fid);
	cr_assert(paced || !strstr(fid, "would be faithful"), "%s", fid);
	cr_log_info("%s", fid + 1);
	for (int i = 0; i < n; i++)
		cr_assert(kill(pids[i], 0) && errno == ESRCH,
			  "worker %d still runs", pids[i]);
	nothing_left();
}

/*
 * The same training on a server with 0.2 of a core and on one with a
 * whole core: the compute phase ends at its deadline, work / share, so
 * the first is five times longer (in scenario time, at any dilation).
 */
Test(run, cpu_share_slows_training)
{
	sqlite3 *h;
	double fast, slow;

	write_yaml("1", "0.2", "0.1");
	run_faithful(yaml, "mst", 3, "auto");
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	/* the faithful run (auto may have recalibrated first) */
	fast = q1(h, "SELECT avg(compute_s) FROM rounds WHERE task = 0 AND "
		  "run = (SELECT max(id) FROM runs WHERE status = 'ok')");
	slow = q1(h, "SELECT avg(compute_s) FROM rounds WHERE task = 1 AND "
		  "run = (SELECT max(id) FROM runs WHERE status = 'ok')");
	sqlite3_close(h);
	cr_log_info("compute: 1.0 core %.3f ms, 0.2 core %.3f ms, ratio %.4f",
		    fast * 1e3, slow * 1e3, slow / fast);
	/* a phase may only end late (an overrun), by little */
	cr_assert(fast >= 0.1 - 1e-6 && fast <= 0.1 * 1.02, "%.6f s", fast);
	cr_assert(slow >= 0.5 - 1e-6 && slow <= 0.5 * 1.02, "%.6f s", slow);
	nothing_left();
}

/*
 * Bytes sent on every link in a round against the twin's prediction of
 * the wire (twin/wire.h): every message the plan routes over the link
 * with its segments' headers, and the ACKs, one per segment, of the
 * transfers routed the other way, as the shapers count them. The message
 * is 70 segments, D = 104,660 bytes of data and A = 4,620 of ACKs; a
 * link's prediction is i D + j A. The data are held within 2 % on every
 * link; the ACKs are the receiver's to coalesce (delayed and stretch ACKs
 * when it takes in several segments at once: on a quiet host, up to 44 of
 * 70 were missing on one link in 2 runs of 5), so a link must carry at
 * least one ACK in four segments, and the total stays within 2 %.
 */
Test(run, bytes_on_every_link_match_the_plan)
{
	FILE *in = fopen("scenarios/teaching-ring.yaml", "r"), *o;
	char line[512], sql[160];
	sqlite3 *h;
	sqlite3_stmt *st;
	int rows = 0, run;
	double sum = 0, sum_want = 0;

	cr_assert_not_null(in);
	o = fopen(yaml, "w");
	cr_assert_not_null(o);
	/* 25,000 parameters after scale 40: 100 kB per transfer */
	while (fgets(line, sizeof(line), in)) {
		char *p = strstr(line, "parameters: 250000");

		cr_assert_null(strstr(line, "scale:") &&
			       !strstr(line, "scale: 40") ? line : NULL,
			       "the test assumes scale 40: %s", line);
		if (p)
			fprintf(o, "%.*sparameters: 1000000\n",
				(int)(p - line), line);
		else
			fputs(line, o);
	}
	fclose(in);
	cr_assert_eq(fclose(o), 0);
	cr_assert_eq(wait_run(start_run(yaml, "mst", 2)), 0, "%s", output());
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	/* --dilation auto may have recalibrated: the run that finished */
	run = (int)q1(h, "SELECT max(id) FROM runs WHERE status = 'ok'");
	snprintf(sql, sizeof(sql), "SELECT link, bytes, pred_bytes FROM links "
		 "WHERE run = %d", run);
	cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *l = (const char *)sqlite3_column_text(st, 0);
		double b = sqlite3_column_double(st, 1);
		double want = sqlite3_column_double(st, 2);
		double lo = NAN;

		cr_assert_gt(want, 1e5, "%s", l);
		/* want = i D + j A: its messages' data and ACKs */
		for (int i = 0; i <= 8 && isnan(lo); i++) {
			double j = (want - i * 104660.0) / 4620.0;

			if (j >= -1e-6 && fabs(j - round(j)) < 1e-6)
				lo = 0.98 * i * 104660.0 + round(j) * 4620.0 / 4;
		}
		cr_assert(!isnan(lo), "link %s: %.0f predicted is not messages "
			  "and ACKs", l, want);
		cr_assert(b >= lo && b <= 1.02 * want,
			  "link %s: %.0f bytes, predicted %.0f (ratio %.4f), at "
			  "least %.0f", l, b, want, b / want, lo);
		sum += b;
		sum_want += want;
		rows++;
	}
	sqlite3_finalize(st);
	sqlite3_close(h);
	cr_assert_eq(rows, 2 * 18, "%d link rows", rows);
	cr_log_info("bytes on the links: %.0f, predicted %.0f (ratio %.4f)",
		    sum, sum_want, sum / sum_want);
	cr_assert(fabs(sum / sum_want - 1) <= 0.02, "total %.0f, predicted "
		  "%.0f (ratio %.4f)", sum, sum_want, sum / sum_want);
	nothing_left();
}

/*
 * One transfer each way between two servers 200 km apart over 10 Gbit/s
 * access links, at dilation 4 or more: the model is 100,040 bytes in 70
 * segments after scale 100, so 10,466,000 wire bytes at 10 Gbit/s
 * (8.373 ms) plus 0.98 ms of fibre each way; training 2 ms. Broadcast and upload are
 * measured within 3 % of the twin's prediction; training never shorter,
 * and longer by no more than a faithful round lets compute overrun its
 * deadline (1 % of the round: trainers the host let finish late made
 * three faithful rounds' training 2.048 ms on average here).
 *
 * Honesty: the emulation never reads the prediction. A twin that believes
 * the access links twice as fast predicts transfers about 45 % shorter;
 * the same measurement then disagrees with it by far more than 3 %, while
 * the verdict, which judges the host and never the twin, stays as it was.
 */
static const char one_transfer[] =
	"name: pair\nscale: 100\nwavelength_gbps: 100\nwavelengths: 4\n"
	"demand_gbps: 1\nroadms: [A, B]\nfibres: [{a: A, b: B, km: 200}]\n"
	"routers: [{name: rA, roadm: A}, {name: rB, roadm: B}]\n"
	"servers:\n"
	"  - {name: g, router: rA, access_gbps: %s, cpu: 1, memory_mib: 256}\n"
	"  - {name: l, router: rB, access_gbps: %s, cpu: 1, memory_mib: 256}\n"
	"tasks:\n"
	"  - {name: t, global: g, locals: [l], parameters: 2500000,\n"
	"     bytes_per_parameter: 4, work_core_s: 0.002}\n";

/* The pair with access links of gbps, then events ("": none), into y. */
static char *pair(char *y, size_t size, const char *gbps, const char *events)
{
	snprintf(y, size, one_transfer, gbps, gbps);
	strncat(y, events, size - strlen(y) - 1);
	return y;
}

/*
 * Scenario text (named name) planned by mst and its round predicted as
 * `twinlab run` does at t = 0: its traffic in its windows, its fibres
 * down while cut. The scenario into *scp.
 */
static struct plan *predicted(const char *text, const char *name,
			      struct scenario **scp)
{
	struct scn_error err;
	struct scenario *sc;
	struct plan *p;

	sc = scenario_parse(text, strlen(text), name, &err);
	cr_assert_not_null(sc, "%d: %s", err.line, err.msg);
	if (sc->nevents)
		cr_assert_eq(scenario_traffic_all(sc), 0);
	p = sched_plan(sc, &sched_mst);
	cr_assert_not_null(p);
	cr_assert_eq(plan_traffic_windows(p, 0), 0);
	cr_assert_eq(plan_cut_windows(p, 0), 0);
	cr_assert_eq(predict_round(p), 0);
	*scp = sc;
	return p;
}

/* The pair at 10 Gbit/s with no event, predicted. */
static struct plan *quiet_pair(struct scenario **scp)
{
	char y[1024];

	return predicted(pair(y, sizeof(y), "10", ""), "pair", scp);
}

Test(run, a_transfer_is_measured_as_the_twin_predicts)
{
	char y[1024];
	struct scenario *sc, *sc2;
	struct plan *p = quiet_pair(&sc);
	struct plan *wrong = predicted(pair(y, sizeof(y), "20", ""), "pair",
				       &sc2);
	const struct task_plan *tp = &p->tasks[0];
	double b, c, u, rnd;
	sqlite3 *h;

	tl_write(yaml, pair(y, sizeof(y), "10", ""));
	run_faithful(yaml, "mst", 3, "auto:4");
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	/* the faithful run: the last one that is not a recalibration */
	b = rounds_avg(h, "bcast_s", 0);
	c = rounds_avg(h, "compute_s", 0);
	u = rounds_avg(h, "upload_s", 0);
	rnd = rounds_avg(h, "round_s", 0);
	sqlite3_close(h);
	cr_log_info("measured / predicted: broadcast %.3f / %.3f ms, training "
		    "%.3f / %.3f ms, upload %.3f / %.3f ms, round %.3f / "
		    "%.3f ms", b * 1e3, tp->bcast_s * 1e3, c * 1e3,
		    tp->compute_s * 1e3, u * 1e3, tp->upload_s * 1e3,
		    rnd * 1e3, tp->round_s * 1e3);
	/* the hand-worked figures of the comment above */
	cr_assert(fabs(tp->bcast_s - 9.353e-3) < 0.01e-3, "%.6f",
		  tp->bcast_s);
	cr_assert(fabs(b / tp->bcast_s - 1) <= 0.03, "broadcast %.3f ms",
		  b * 1e3);
	cr_assert(fabs(u / tp->upload_s - 1) <= 0.03, "upload %.3f ms",
		  u * 1e3);
	cr_assert(c >= tp->compute_s - 1e-9 &&
		  c <= tp->compute_s + MON_TIME_TOL * tp->round_s,
		  "training %.6f s", c);
	cr_assert(fabs(rnd / tp->round_s - 1) <= 0.03, "round %.3f ms",
		  rnd * 1e3);
	/* a twin mis-set to twice the rate disagrees with the same run */
	cr_assert_gt(b / wrong->tasks[0].bcast_s, 1.3, "%.3f vs %.3f ms",
		     b * 1e3, wrong->tasks[0].bcast_s * 1e3);
	cr_assert_gt(rnd / wrong->tasks[0].round_s, 1.2);
	plan_free(p);
	plan_free(wrong);
	scenario_free(sc);
	scenario_free(sc2);
	nothing_left();
}

/*
 * A round's links are read once its last packets are in: the last ACK of
 * each transfer comes back over its path after the data arrived (0.98 ms
 * of fibre here, 63 ms of host time at dilation 64), and the harness waits
 * for it, transfer by transfer, before it reads the counters. Every link
 * of every round carries at least the bytes the twin predicts, its data
 * and ACKs (reading at once, a build missed the last ACKs: 594 and
 * 66 bytes short on the lightpath and the access link towards the local).
 */
Test(run, a_rounds_last_acks_are_counted_on_their_links)
{
	char y[1024];
	sqlite3 *h;
	sqlite3_stmt *st;
	int rows = 0;

	tl_write(yaml, pair(y, sizeof(y), "10", ""));
	cr_assert_eq(wait_run(start_run_at(yaml, "spff", 2, "64")), 0, "%s",
		     output());
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(h, "SELECT round, link, bytes, "
					"pred_bytes FROM links", -1, &st,
					NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		double b = sqlite3_column_double(st, 2);
		double want = sqlite3_column_double(st, 3);

		cr_assert_gt(want, 1e5);
		cr_assert(b >= want && b <= 1.01 * want,
			  "round %d, link %s: %.0f bytes, predicted %.0f",
			  sqlite3_column_int(st, 0),
			  (const char *)sqlite3_column_text(st, 1), b, want);
		rows++;
	}
	sqlite3_finalize(st);
	sqlite3_close(h);
	cr_assert_eq(rows, 2 * 6, "%d link rows", rows);
	nothing_left();
}

/*
 * The same pair with background traffic g -> l all run long: the
 * broadcast shares the 10 Gbit/s access links with it. At 4 Gbit/s (below
 * its fair share) the traffic takes 4 and leaves 6; at 8 it gets its
 * fair share, 5, and leaves 5: the broadcast takes 1.5 or 1.9 x as long.
 * The upload, the other way, is not slowed: within the fidelity target
 * for a single round (p95 of |error| <= 10 %, tests/README.md "Benchmarks") of the
 * twin's prediction, where the broadcast is 1.5-1.9 x as long (quiet:
 * 9.15-9.36 ms against 9.353; with another process keeping a core busy
 * 9.27-10.05 ms, up to 7.4 % over, which a 5 % bound failed once in
 * five). The broadcast is held to the 3 % of the test above times
 * the link over what the traffic leaves of it: the shaper's own error
 * (about 2 % fast there) falls whole on what the traffic leaves (at 4
 * Gbit/s 10/6 of it: 5 %; measured 3.1 % below the prediction at 4
 * Gbit/s, 2 % at 8).
 */
static void traffic_run(const char *gbps, double slower, double left)
{
	char ev[160], y[2048];
	struct scenario *sc, *quiet_sc;
	struct plan *p, *quiet = quiet_pair(&quiet_sc);
	double b, u, lmax, lmean;
	const char *line;
	sqlite3 *h;
	char *o;

	snprintf(ev, sizeof(ev), "events:\n  - {at_s: 0, traffic: {from: g,"
		 " to: l, gbps: %s, for_s: 1000}}\n", gbps);
	p = predicted(pair(y, sizeof(y), "10", ev), "pair", &sc);
	cr_assert_gt(p->tasks[0].bcast_s, slower * quiet->tasks[0].bcast_s);
	tl_write(yaml, y);
	run_faithful(yaml, "mst", 3, "auto:4");
	o = output();
	snprintf(ev, sizeof(ev), "event at 0.000000 s: traffic g -> l, %s "
		 "Gbit/s starts", gbps);
	cr_assert(strstr(o, ev), "%s", o);
	cr_assert(strstr(o, "traffic: 0 of 2 starts and ends") ||
		  strstr(o, "traffic: 1 of 2 starts and ends"), "%s", o);
	line = strstr(o, "traffic g -> l:");
	cr_assert(line, "%s", o);
	cr_log_info("%.*s", (int)strcspn(line, "\n"), line);
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	b = rounds_avg(h, "bcast_s", 0);
	u = rounds_avg(h, "upload_s", 0);
	/* the orchestrator's view: the traffic's start, the tasks it
	 * touched, and the link it shares loaded by it and by no more than
	 * the link carries: a reading covers one step (at N 4, about 16 ms
	 * of real time), in which the shaper's bucket (1 ms at rate) and a
	 * frame at each end may add up to 12 %; 25 % is allowed */
	cr_assert_eq(q1(h, "SELECT count(*) FROM events WHERE run = (SELECT "
			   "max(id) FROM runs) AND kind = 'traffic' AND at_s = 0 "
			   "AND tasks = 't'"), 1);
	cr_assert_eq(q1(h, "SELECT count(*) FROM events WHERE run = (SELECT "
			   "max(id) FROM runs)"), 1, "it ends after the run");
	cr_assert_gt(q1(h, "SELECT count(*) FROM link_samples WHERE run = "
			   "(SELECT max(id) FROM runs) AND link = 'g>rA'"), 5);
	lmax = q1(h, "SELECT max(gbps) FROM link_samples WHERE run = (SELECT "
		     "max(id) FROM runs) AND link = 'g>rA'");
	lmean = q1(h, "SELECT avg(gbps) FROM link_samples WHERE run = (SELECT "
		      "max(id) FROM runs) AND link = 'g>rA'");
	cr_assert_eq(q1(h, "SELECT count(*) FROM round_times WHERE run = "
			   "(SELECT max(id) FROM runs)"), 3);
	/* the generator judged as the run's own: every round sent some of
	 * its datagrams, their lateness within the verdict's limits */
	cr_assert_gt(q1(h, "SELECT min(tg_dgrams) FROM fidelity WHERE run = "
			   "(SELECT max(id) FROM runs)"), 0);
	cr_log_info("the generator at most %.3f ms late in a round, %.3f on "
		    "average (scenario time)",
		    q1(h, "SELECT max(tg_late_max_s) * 1e3 FROM fidelity "
			  "WHERE run = (SELECT max(id) FROM runs)"),
		    q1(h, "SELECT max(tg_late_mean_s) * 1e3 FROM fidelity "
			  "WHERE run = (SELECT max(id) FROM runs)"));
	sqlite3_close(h);
	cr_log_info("g>rA: %.2f Gbit/s on average, %.2f at most", lmean,
		    lmax);
	cr_assert_geq(lmean, atof(gbps) * 0.95, "the traffic alone");
	cr_assert_leq(lmax, 10 * 1.25, "more than the link");
	cr_log_info("broadcast %.3f ms (predicted %.3f with the traffic, "
		    "%.3f without), upload %.3f ms (%.3f)", b * 1e3,
		    p->tasks[0].bcast_s * 1e3, quiet->tasks[0].bcast_s * 1e3,
		    u * 1e3, p->tasks[0].upload_s * 1e3);
	cr_assert(fabs(b / p->tasks[0].bcast_s - 1) <= 0.03 * 10 / left,
		  "broadcast %.3f ms, predicted %.3f", b * 1e3,
		  p->tasks[0].bcast_s * 1e3);
	cr_assert(fabs(u / p->tasks[0].upload_s - 1) <= 0.10,
		  "upload %.3f ms, predicted %.3f", u * 1e3,
		  p->tasks[0].upload_s * 1e3);
	plan_free(p);
	plan_free(quiet);
	scenario_free(sc);
	scenario_free(quiet_sc);
	nothing_left();
}

/*
 * A cut whose repair comes so late that the tasks over it would wait past
 * any reasonable time (1,000 s of scenario time, 2,000 s at dilation 2)
 * is refused before anything is built, naming the fibre, the times and
 * the wait; at dilation 1 the same cut is within the bound, and would be
 * waited out (not run here: it takes 17 minutes).
 */
Test(run, a_repair_too_late_to_wait_for_is_refused_before_building)
{
	static const char ev[] = "events:\n"
				 "  - {at_s: 0.05, cut: {a: A, b: B}}\n"
				 "  - {at_s: 1000, repair: {a: A, b: B}}\n";
	char y[2048];
	char *o;

	tl_write(yaml, pair(y, sizeof(y), "10", ev));
	cr_assert_eq(wait_run(start_run_at(yaml, "mst", 3, "2")), 1, "%s",
		     output());
	o = output();
	cr_assert(strstr(o, "fibre A-B is cut from 0.05 s to 1000 s of "
			    "scenario time: at dilation 2 the tasks over it "
			    "would wait 2000 s for the repair, more than "
			    "1800 s (repair it sooner, or run at a lower "
			    "--dilation)"),
		  "%s", o);
	cr_assert_null(strstr(o, "building"), "%s", o);
	nothing_left();
}

/*
 * A cut played during a run: the pair's only fibre is cut 5 ms into round
 * 1, mid-broadcast, and repaired 5 ms later. Nothing is re-placed; the
 * broadcast's TCP connection carries on once the fibre is back, at its
 * retransmission timeout (200 ms and its round trip, in scenario time) at
 * the earliest, then in slow start, as the twin predicts round 1 (232 ms).
 * Linux takes one timeout more here (round 1 measured 485-487 ms): the
 * segment it resends had arrived before the cut (its ACK had not), the
 * receiver says so (a D-SACK), the kernel takes the timeout for spurious
 * and undoes it, and the segments the cut did take wait for the next
 * timeout, longer by then (seen in `ss -ti` at the global model's end:
 * dsack_dups 1, cwnd back to 1024, then lost 35 and slow start a timeout
 * later). Every check holds, the rounds after are as before, the run
 * stays faithful (the cut's retransmissions are the scenario's), and the
 * events say what the cut cost the task.
 */
Test(run, a_cut_mid_round_is_waited_out_and_measured)
{
	static const char ev[] = "events:\n"
				 "  - {at_s: 0.005, cut: {a: A, b: B}}\n"
				 "  - {at_s: 0.010, repair: {a: A, b: B}}\n";
	char y[2048];
	struct scenario *sc, *quiet_sc;
	struct plan *p, *quiet = quiet_pair(&quiet_sc);
	double r1, p1, rest, cost;
	sqlite3 *h;
	char *o;

	p = predicted(pair(y, sizeof(y), "10", ev), "pair", &sc);
	cr_assert_gt(p->tasks[0].round_s, quiet->tasks[0].round_s + 0.2,
		     "the twin waits for TCP's timer");
	tl_write(yaml, y);
	run_faithful(yaml, "mst", 3, "auto:4");
	o = output();
	cr_assert(strstr(o, "event at 0.005000 s: fibre A-B cut"), "%s", o);
	cr_assert(strstr(o, "event at 0.010000 s: fibre A-B repaired"), "%s",
		  o);
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	r1 = q1(h, "SELECT round_s FROM rounds WHERE run = (SELECT max(id) "
		   "FROM runs) AND round = 1");
	p1 = q1(h, "SELECT pred_round_s FROM rounds WHERE run = (SELECT "
		   "max(id) FROM runs) AND round = 1");
	rest = q1(h, "SELECT avg(round_s) FROM rounds WHERE run = (SELECT "
		     "max(id) FROM runs) AND round > 1");
	checks_held(h);
	lateness_stored(h);
	/* what the rounds after were made of, and what the host did then */
	cr_log_info("rounds after: broadcast %.3f ms (%.3f), training %.3f "
		    "(%.3f), upload %.3f (%.3f) at dilation %g; the host: "
		    "workers late %.2f %% of a round at worst, delay line "
		    "%.3f ms late at worst, %g retransmissions",
		    q1(h, "SELECT avg(bcast_s) * 1e3 FROM rounds WHERE run = "
			  "(SELECT max(id) FROM runs) AND round > 1"),
		    quiet->tasks[0].bcast_s * 1e3,
		    q1(h, "SELECT avg(compute_s) * 1e3 FROM rounds WHERE run "
			  "= (SELECT max(id) FROM runs) AND round > 1"),
		    quiet->tasks[0].compute_s * 1e3,
		    q1(h, "SELECT avg(upload_s) * 1e3 FROM rounds WHERE run = "
			  "(SELECT max(id) FROM runs) AND round > 1"),
		    quiet->tasks[0].upload_s * 1e3,
		    q1(h, "SELECT dilation FROM runs WHERE id = (SELECT "
			  "max(id) FROM runs)"),
		    q1(h, "SELECT max(late_frac_worst) * 100 FROM fidelity "
			  "WHERE run = (SELECT max(id) FROM runs) AND round > 1"),
		    q1(h, "SELECT max(dl_late_max_s) * 1e3 FROM fidelity WHERE "
			  "run = (SELECT max(id) FROM runs) AND round > 1"),
		    q1(h, "SELECT sum(retrans) FROM fidelity WHERE run = "
			  "(SELECT max(id) FROM runs) AND round > 1"));
	cost = q1(h, "SELECT interruption_s FROM events WHERE run = (SELECT "
		     "max(id) FROM runs) AND kind = 'cut' AND tasks = 't'");
	cr_assert_eq(q1(h, "SELECT count(*) FROM events WHERE run = (SELECT "
			   "max(id) FROM runs) AND kind = 'repair'"), 1);
	sqlite3_close(h);
	cr_log_info("round 1 %.3f ms (predicted %.3f with the cut, %.3f "
		    "without), rounds after %.3f ms; the cut cost %.3f ms",
		    r1 * 1e3, p1 * 1e3, quiet->tasks[0].round_s * 1e3,
		    rest * 1e3, cost * 1e3);
	cr_assert_float_eq(p1, p->tasks[0].round_s, 1e-6);
	cr_assert_geq(r1, 0.97 * p1, "round 1 %.3f ms, shorter than TCP "
		      "allows (%.3f)", r1 * 1e3, p1 * 1e3);
	/*
	 * The rounds after the repair as the twin predicts them without the
	 * cut, within what fidelity allows a single round (p95 of |error|
	 * <= 10 %, the targets in tests/README.md "Benchmarks"): TCP leaves its
	 * recovery with a smaller window, and with another process keeping
	 * a core busy the two rounds after measured 6.8 % over (quiet:
	 * 0.6-1.5 % under).
	 */
	cr_assert(fabs(rest / quiet->tasks[0].round_s - 1) <= 0.10,
		  "rounds after the repair: %.3f ms", rest * 1e3);
	cr_assert_geq(cost, 0.004, "the cut cost %.3f ms", cost * 1e3);
	plan_free(p);
	plan_free(quiet);
	scenario_free(sc);
	scenario_free(quiet_sc);
	nothing_left();
}

Test(run, background_traffic_below_its_fair_share)
{
	traffic_run("4", 1.45, 6);
}

Test(run, background_traffic_above_its_fair_share)
{
	traffic_run("8", 1.8, 5);
}

/*
 * A host taken by busy processes: the trainers, which run behind every
 * other process, cannot finish by their deadlines and the event loops
 * wait for a CPU. At a fixed dilation of 1 the run must say degraded, and
 * name a dilation that would do better. Three rounds: a trainer gets its
 * cgroup's share beside the busy processes now and then (in 7 of 36
 * phases here, of the previous build as of this one) and finishes in time;
 * with one round, both trainers did so once in a CI run, which was then
 * called faithful (its transfers 4.5 times as long as the twin's: the
 * monitor does not see shapers held up by busy processes).
 */
Test(run, a_loaded_host_is_reported_degraded)
{
	pid_t hog[2];
	char *o;
	int code;

	write_yaml("1", "1", "0.05");
	for (int i = 0; i < 2; i++) {
		hog[i] = fork();
		cr_assert_geq(hog[i], 0);
		if (hog[i] == 0) {
			volatile unsigned long x = 0;

			/* ends with the test, whatever happens to it */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(0);
			for (;;)
				x++;
		}
	}
	code = wait_run(start_run_at(yaml, "mst", 3, "1"));
	for (int i = 0; i < 2; i++) {
		kill(hog[i], SIGKILL);
		waitpid(hog[i], NULL, 0);
	}
	o = output();
	cr_assert_eq(code, 0, "%s", o);
	cr_assert(strstr(o, "fidelity: dilation 1, degraded: "), "%s", o);
	cr_assert(strstr(o, "would be faithful"), "%s", o);
	cr_log_info("%.*s", (int)strcspn(strstr(o, "fidelity:"), "\n"),
		    strstr(o, "fidelity:"));
	nothing_left();
}

/*
 * `twinlab run ... | head -1`: the reader goes away after one line. The
 * run takes SIGPIPE as a stop: it tears the emulation down and records
 * itself as aborted. (Waiting for the first line, then closing, is
 * the whole synchronisation.)
 */
Test(run, a_closed_stdout_tears_down)
{
	char *bin = getenv("TWINLAB"), line[512];
	char *argv[] = { bin, "run", "scenarios/teaching-ring.yaml",
			 "--rounds", "50", "--db", db, "--prefix", prefix,
			 NULL };
	posix_spawn_file_actions_t fa;
	sqlite3 *h;
	FILE *rd;
	pid_t pid;
	int fds[2], status;

	cr_assert_not_null(bin, "TWINLAB is not set");
	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, out, O_WRONLY | O_CREAT |
					 O_TRUNC, 0644);
	cr_assert_eq(posix_spawn(&pid, bin, &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	rd = fdopen(fds[0], "r");
	cr_assert_not_null(rd);
	cr_assert_not_null(fgets(line, sizeof(line), rd), "%s", output());
	fclose(rd);		/* the next write raises SIGPIPE */
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1,
		  "status %#x: %s", status, output());
	nothing_left();
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	cr_assert_eq(q1(h, "SELECT count(*) FROM runs WHERE status = "
			"'aborted'"), 1);
	sqlite3_close(h);
}

/*
 * One prefix, one owner: while another process holds the prefix, `run`,
 * `up`, `down`, `clean`, `cut` and `repair` refuse at once, naming it,
 * and touch nothing;
 * when it ends (as a crash would end it), the prefix is free again and
 * the lock file goes with its next owner.
 */
Test(run, a_prefix_has_one_owner)
{
	char *bin = getenv("TWINLAB"), err[512], path[160], want[128];
	static const char *const cmd[][3] = {
		{ "run", "scenarios/teaching-ring.yaml", NULL },
		{ "up", "scenarios/teaching-ring.yaml", NULL },
		{ "down", NULL, NULL },
		{ "clean", NULL, NULL },
		{ "cut", "A", "B" },
		{ "repair", "A", "B" },
	};
	int ready, hold[2], fd, st;
	struct stat sb;
	pid_t holder;
	char c;

	cr_assert_not_null(bin, "TWINLAB is not set");
	cr_assert_eq(pipe(hold), 0);
	holder = nt_fork_ready(&ready);
	cr_assert_geq(holder, 0);
	if (holder == 0) {
		close(hold[1]);
		fd = lab_lock(prefix, "a test holder", err, sizeof(err));
		c = fd >= 0 ? 'y' : 'n';
		if (write(ready, &c, 1) != 1)
			_exit(2);
		while (read(hold[0], &c, 1) > 0)
			;
		_exit(fd >= 0 ? 0 : 1);
	}
	close(hold[0]);
	cr_assert_eq(read(ready, &c, 1), 1);
	cr_assert_eq(c, 'y', "the holder could not lock");
	snprintf(want, sizeof(want), "prefix '%s' is in use by a test holder, "
		 "pid %d", prefix, (int)holder);

	cr_expect_eq(lab_lock(prefix, "twinlab run", err, sizeof(err)),
		     -EBUSY);
	cr_expect(strstr(err, want), "%s", err);
	for (size_t i = 0; i < sizeof(cmd) / sizeof(cmd[0]); i++) {
		char *argv[] = { bin, (char *)cmd[i][0], "--prefix", prefix,
				 (char *)cmd[i][1], (char *)cmd[i][2], NULL };
		pid_t pid = nt_spawn_to(argv, out);

		cr_assert_gt(pid, 0, "%s: %s", cmd[i][0], strerror(-pid));
		cr_expect_eq(wait_run(pid), 1, "%s: %s", cmd[i][0], output());
		cr_expect(strstr(output(), want), "%s: %s", cmd[i][0],
			  output());
		nothing_left_but_the_lock();
	}

	close(hold[1]);		/* the holder ends */
	cr_assert_eq(waitpid(holder, &st, 0), holder);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	fd = lab_lock(prefix, "twinlab run", err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	snprintf(path, sizeof(path), LAB_STATE_DIR "/%s.lock", prefix);
	cr_expect_eq(stat(path, &sb), 0, "no lock file while held");
	lab_unlock(prefix, fd);
	nothing_left();
	close(ready);
}

/*
 * A round the database cannot take (another process holds its write lock
 * past the busy timeout) is not silently lost: the run says which round,
 * ends 'partial' and exits 1 (it used to end 'ok' and exit 0). A run
 * left 'running' by a process that is gone is marked 'aborted' by the
 * next opener.
 */
Test(run, a_round_not_stored_makes_the_run_partial)
{
	char *bin = getenv("TWINLAB");
	char *argv[] = { bin, "run", "scenarios/teaching-ring.yaml",
			 "--rounds", "3", "--dilation", "1", "--db", db,
			 "--prefix", prefix, NULL };
	bool locked = false, failed_seen = false;
	sqlite3 *h, *w;
	struct piped pp;
	int status;

	cr_assert_not_null(bin, "TWINLAB is not set");
	start_piped(&pp, argv);
	while (piped_line(&pp)) {
		if (!locked && !strncmp(pp.line, "round 1/3", 9)) {
			/* round 2 will find the database locked */
			cr_assert_eq(sqlite3_open(db, &w), SQLITE_OK);
			cr_assert_eq(sqlite3_exec(w, "BEGIN EXCLUSIVE", NULL,
						  NULL, NULL), SQLITE_OK);
			locked = true;
		} else if (locked && !failed_seen &&
			   strstr(pp.line, "round 2 not stored")) {
			failed_seen = true;
			sqlite3_exec(w, "ROLLBACK", NULL, NULL, NULL);
			sqlite3_close(w);
		}
	}
	status = piped_wait(&pp);
	if (locked && !failed_seen)
		sqlite3_close(w);
	cr_assert(failed_seen, "%s", output());
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1,
		  "status %#x: %s", status, output());
	cr_expect(strstr(output(), "stored 2 of 3 rounds in "), "%s",
		  output());
	nothing_left();
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	cr_expect_eq(q1(h, "SELECT count(*) FROM runs WHERE status = "
			"'partial'"), 1);
	/* what is stored of a round is all of it: rounds 1 and 3 */
	cr_expect_eq(q1(h, "SELECT count(DISTINCT round) FROM rounds"), 2);
	cr_expect_eq(q1(h, "SELECT count(*) FROM fidelity"), 2);
	cr_expect_eq(q1(h, "SELECT count(*) FROM round_times"), 2);
	cr_expect_eq(q1(h, "SELECT count(*) FROM rounds WHERE round = 2"), 0);
	/* a stale 'running' row: no process has its pid and start time */
	cr_assert_eq(sqlite3_exec(h, "INSERT INTO runs (id, status, owner_pid,"
				  " owner_start) VALUES (77, 'running', 1, 1)",
				  NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	cr_assert_eq(wait_run(start_run_at("scenarios/teaching-ring.yaml",
					   "mst", 1, "1")), 0, "%s", output());
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	cr_expect_eq(q1(h, "SELECT count(*) FROM runs WHERE id = 77 AND "
			"status = 'aborted'"), 1);
	sqlite3_close(h);
}

/*
 * Killing the delay line's supervisor mid-run fails the run at once with
 * a message naming it (it used to stall 60 s and blame a worker's
 * timeout), and leaves nothing.
 */
Test(run, a_dead_delay_line_is_named_at_once)
{
	char *bin = getenv("TWINLAB"), line[512];
	char *argv[] = { bin, "run", "scenarios/teaching-ring.yaml",
			 "--rounds", "1000", "--dilation", "1", "--db", db,
			 "--prefix", prefix, NULL };
	bool killed = false;
	pid_t sup = 0;
	struct piped pp;
	int status;
	struct timespec t0, t1;

	cr_assert_not_null(bin, "TWINLAB is not set");
	start_piped(&pp, argv);
	while (piped_line(&pp))
		if (!killed && !strncmp(pp.line, "round 2/", 8)) {
			cr_assert_eq(lab_delay_pid(prefix, &sup), 0);
			clock_gettime(CLOCK_MONOTONIC, &t0);
			cr_assert_eq(kill(sup, SIGKILL), 0);
			killed = true;
		}
	status = piped_wait(&pp);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert(killed, "%s", output());
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1,
		  "status %#x: %s", status, output());
	snprintf(line, sizeof(line), "the delay line's supervisor (pid %d) "
		 "ended", (int)sup);
	cr_expect(strstr(output(), line), "%s", output());
	cr_expect(!strstr(output(), "timed out"), "%s", output());
	cr_log_info("failed %.2f s after the kill",
		    (double)(t1.tv_sec - t0.tv_sec) +
			    (t1.tv_nsec - t0.tv_nsec) * 1e-9);
	nothing_left();
}

/*
 * --json: one JSON object on stdout, the run as stored (its id, status,
 * dilation, verdict, and every task's predicted and measured phases in
 * scenario seconds); progress and the summary on stderr.
 */
Test(run, json_is_the_run_as_stored)
{
	char *bin = getenv("TWINLAB"), errp[160], sql[160];
	char *argv[] = { bin, "run", "scenarios/teaching-ring.yaml",
			 "--rounds", "2", "--db", db, "--prefix", prefix,
			 "--json", NULL };
	posix_spawn_file_actions_t fa;
	struct json_object *o, *v, *tasks;
	sqlite3 *h;
	pid_t pid;

	cr_assert_not_null(bin, "TWINLAB is not set");
	snprintf(errp, sizeof(errp), "%s.err", out);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT |
					 O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, errp, O_WRONLY | O_CREAT |
					 O_TRUNC, 0644);
	cr_assert_eq(posix_spawn(&pid, bin, &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	cr_assert_eq(wait_run(pid), 0, "%s", output());
	nothing_left();
	o = json_object_from_file(out);
	unlink(errp);
	cr_assert_not_null(o, "stdout is not one JSON object: %s", output());
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	cr_assert(json_object_object_get_ex(o, "run", &v));
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM runs WHERE id = %lld "
		 "AND status = 'ok'", (long long)json_object_get_int64(v));
	cr_expect_eq(q1(h, sql), 1, "%s", output());
	cr_assert(json_object_object_get_ex(o, "status", &v));
	cr_expect_str_eq(json_object_get_string(v), "ok");
	cr_assert(json_object_object_get_ex(o, "dilation", &v));
	cr_expect_geq(json_object_get_double(v), 1);
	cr_assert(json_object_object_get_ex(o, "verdict", &v));
	cr_expect_not_null(json_object_get_string(v));
	cr_assert(json_object_object_get_ex(o, "tasks", &tasks));
	cr_assert_eq(json_object_array_length(tasks), 2);
	for (size_t i = 0; i < 2; i++) {
		struct json_object *t = json_object_array_get_idx(tasks, i);
		struct json_object *m, *p, *r;

		cr_assert(json_object_object_get_ex(t, "rounds", &r));
		cr_expect_eq(json_object_get_int(r), 2);
		cr_assert(json_object_object_get_ex(t, "checks_held", &r));
		cr_expect_eq(json_object_get_int(r), 2);
		cr_assert(json_object_object_get_ex(t, "measured_s", &m));
		cr_assert(json_object_object_get_ex(t, "predicted_s", &p));
		cr_assert(json_object_object_get_ex(m, "round", &r));
		cr_expect_gt(json_object_get_double(r), 0);
		cr_assert(json_object_object_get_ex(p, "round", &r));
		cr_expect_gt(json_object_get_double(r), 0);
	}
	/* stdout held nothing but the object */
	cr_expect_eq(output()[0], '{', "%s", output());
	json_object_put(o);
	sqlite3_close(h);
}


/*
 * The shipped teaching example at three rounds' worth of events: each
 * move's set-up (reconfig_ms a new lightpath) outlasts the events that
 * follow, so t1 leaves while the workers of its move are still starting.
 * Leaving is no failure: nobody is said not to have started, and the run
 * goes on with the others.
 */
Test(run, a_task_that_leaves_while_its_move_starts_has_not_failed)
{
	struct run_cmd c;
	char *o;

	run_cmd(&c, "scenarios/teaching-ring.yaml", "mst", 6, "4", "--events",
		"scenarios/events/teaching-ring-cut.yaml", "--reschedule",
		"full", NULL);
	cr_assert_eq(wait_run(spawn_run(c.argv)), 0, "%s", output());
	o = output();
	cr_assert(strstr(o, "task 't1' carries on over its new trees (the cut "
			    "at 0.05 s)"), "%s", o);
	cr_expect(!strstr(o, "did not start"), "%s", o);
	cr_expect(!strstr(o, "FAILED"), "%s", o);
}

/*
 * Re-placement live (--reschedule none): a ring of four 500 km fibres,
 * t1 (sA -> sB) over A-B, t2 (sC -> sD) over C-D; A-B is cut 0.1 s in
 * and never repaired. The run moves t1 the long way round (A-D-C-B) once
 * its new lightpaths are set up, live, and every round completes: once
 * its first round on the new paths is over, its rounds measure what the
 * twin predicts for them (within a single round's fidelity bound), the
 * checks hold, t2 never moves, and the cut is stored with the task it
 * moved, when the move was live and when that first round ended.
 */
static const char ring4[] =
	"name: ring4\nscale: 10\n" NT_RING4_NETWORK("256")
	NT_RING4_TASKS("250000", "0.01")
	"events:\n"
	"  - {at_s: 0.1, cut: {a: A, b: B}}\n";

Test(run, a_cut_never_repaired_is_rescheduled_live)
{
	double after, pred_after, pred_before, live, first, n;
	struct run_cmd c;
	int nafter;
	char sql[512], *o;
	sqlite3 *h;

	tl_write(yaml, ring4);
	run_cmd(&c, yaml, "spff", 10, "auto:4", "--reschedule", "none", NULL);
	o = until_faithful(&c);
	cr_assert(strstr(o, "the cut at 0.1 s (--reschedule none): moved t1;"),
		  "%s", o);
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	n = q1(h, "SELECT dilation FROM runs WHERE id = (SELECT max(id) "
		  "FROM runs)");
	cr_assert_eq(q1(h, "SELECT count(*) FROM rounds WHERE run = (SELECT "
			   "max(id) FROM runs) AND task = 0"), 10,
		     "t1 did not complete every round");
	checks_held(h);
	lateness_stored(h);
	/* when the move was live, as stored with the cut */
	live = q1(h, "SELECT live_s FROM events WHERE run = (SELECT max(id) "
		     "FROM runs) AND kind = 'cut' AND tasks = 't1'");
	cr_assert(live > 0.1 && live < 1, "the move: %s", o);
	pred_before = q1(h, "SELECT pred_round_s FROM rounds r JOIN "
			    "round_times t ON t.run = r.run AND t.round = "
			    "r.round WHERE r.run = (SELECT max(id) FROM runs) "
			    "AND task = 0 AND r.round = 1");
	/* once the first round on the new paths is over (TCP has left
	 * its recovery from the cut) */
	first = q1(h, "SELECT first_round_s FROM events WHERE run = (SELECT "
		      "max(id) FROM runs) AND kind = 'cut' AND policy = 'none'");
	cr_assert(first > live, "the first round on the new paths");
	/*
	 * Their median: TCP may still be recovering in the round after
	 * (a cut that fell while data was in flight halves the window,
	 * which then grows back a segment per round trip); the twin does
	 * not model that recovery, and one such round must not stand for
	 * the path the task moved to.
	 */
	snprintf(sql, sizeof(sql), "SELECT count(*), avg(pred_round_s) FROM "
		 "rounds r JOIN round_times t ON t.run = r.run AND t.round = "
		 "r.round WHERE r.run = (SELECT max(id) FROM runs) AND task = 0 "
		 "AND t.start_s >= %.9f", first);
	nafter = (int)q1(h, sql);
	pred_after = q1_at(h, sql, 1, NAN);
	cr_assert_geq(nafter, 2, "rounds after the move");
	snprintf(sql, sizeof(sql), "SELECT round_s FROM rounds r JOIN "
		 "round_times t ON t.run = r.run AND t.round = r.round WHERE "
		 "r.run = (SELECT max(id) FROM runs) AND task = 0 AND "
		 "t.start_s >= %.9f ORDER BY round_s LIMIT 1 OFFSET %d", first,
		 (nafter - 1) / 2);
	after = q1(h, sql);
	if (nafter % 2 == 0) {
		snprintf(sql, sizeof(sql), "SELECT round_s FROM rounds r JOIN "
			 "round_times t ON t.run = r.run AND t.round = r.round "
			 "WHERE r.run = (SELECT max(id) FROM runs) AND task = 0 "
			 "AND t.start_s >= %.9f ORDER BY round_s LIMIT 1 "
			 "OFFSET %d", first, nafter / 2);
		after = (after + q1(h, sql)) / 2;
	}
	sqlite3_close(h);
	cr_log_info("dilation %g; t1 before the cut predicted %.3f ms; after "
		    "the move %.3f ms measured (median of %d), %.3f predicted; "
		    "live %.3f s", n, pred_before * 1e3, after * 1e3, nafter,
		    pred_after * 1e3, live);
	cr_assert(pred_after > pred_before + 0.004, "the long way is longer");
	/* a single round's fidelity bound (tests/README.md "Benchmarks") */
	cr_assert(fabs(after / pred_after - 1) <= 0.10,
		  "after the move: %.3f ms measured, %.3f predicted",
		  after * 1e3, pred_after * 1e3);
	nothing_left();
}

/*
 * Tasks that come and go, followed live: t3 arrives at 20 ms and its
 * workers start at the first round after its network is in (round 4, at
 * 46 ms, quiet); t1 leaves at 120 ms (at 80 ms, under sanitizers beside
 * a second suite, the host's time between rounds once put t1's leave
 * before any round it shared with t3), its workers ended before its routes go (its round in flight is
 * lost, not failed). Servers have one core: while t3's global shares sB
 * with t1's local, that local trains twice as long (2 ms before t3's first
 * round, 4 from it on), as the epoch's plan predicts. Every completed round is checked; the rounds are
 * held to the twin like any other's; nothing is left behind.
 */
/* ring4 as the live tests run it (4 MB models, 2 ms of training), before
 * its events; and the events of tasks that come and go */
#define RING4_LIVE \
	"name: ring4\nscale: 100\n" NT_RING4_NETWORK("256")		\
	NT_RING4_TASKS("1000000", "0.002")
#define RING4_ARRIVE \
	"events:\n" \
	"  - {at_s: 0.02, arrive: {name: t3, global: sB, locals: [sC],\n" \
	"     parameters: 1000000, bytes_per_parameter: 4," \
	" work_core_s: 0.002}}\n"
#define RING4_COMINGS RING4_ARRIVE "  - {at_s: 0.08, leave: t1}\n"
static const char ring4_comings[] = RING4_LIVE RING4_ARRIVE
	"  - {at_s: 0.12, leave: t1}\n";

/*
 * Run scenario text under --reschedule policy, 10 rounds of sched, until
 * faithful (auto dilation, from 16, three tries at most): its output.
 */
static const char *live_predictor = "fluid";
static int live_rounds = 10;

static char *run_live_as(const char *text, const char *sched,
			 const char *policy)
{
	struct run_cmd c;

	tl_write(yaml, text);
	run_cmd(&c, yaml, sched, live_rounds, "auto:16", "--reschedule",
		policy, "--predictor", live_predictor, NULL);
	return until_faithful(&c);
}

static char *run_live(const char *text, const char *policy)
{
	return run_live_as(text, "spff", policy);
}

Test(run, tasks_that_arrive_and_leave_are_run_live)
{
	double m3, p3, first3;
	sqlite3 *h;
	char *o = run_live(ring4_comings, "none");

	cr_assert(strstr(o, "run: task 't3' is placed (the arrive at 0.02 s): "
			    "its workers start, at round "), "%s", o);
	cr_assert(strstr(o, "run: task 't1' has left") ||
		  strstr(o, "leave at 0.12 s: task 't1' leaves; nothing "
			    "moved; live"), "%s", o);
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	checks_held(h);
	lateness_stored(h);
	cr_assert_eq(q1(h, "SELECT count(*) FROM rounds WHERE " THIS_RUN
			   " AND task = 1"), 10, "t2 ran every round");
	cr_assert_eq(q1(h, "SELECT blocked FROM tasks WHERE " THIS_RUN
			   " AND name = 't3'"), 0, "t3 stored as placed");
	/* t3 from its arrival on, t1 until it left */
	cr_assert_geq(q1(h, "SELECT min(t.start_s) FROM rounds r JOIN "
			    "round_times t ON t.run = r.run AND t.round = "
			    "r.round WHERE r." THIS_RUN " AND task = 2"), 0.02);
	cr_assert_lt(q1(h, "SELECT max(t.start_s) FROM rounds r JOIN "
			   "round_times t ON t.run = r.run AND t.round = "
			   "r.round WHERE r." THIS_RUN " AND task = 0"), 0.12);
	cr_assert_geq(q1(h, "SELECT count(*) FROM rounds WHERE " THIS_RUN
			    " AND task = 2"), 3, "t3's rounds");
	cr_assert_lt(q1(h, "SELECT max(round) FROM rounds WHERE " THIS_RUN
			   " AND task = 0"), 10, "t1 left");
	no_task_failed(h);
	/*
	 * t1's local: one core, shared with t3's global from t3's first
	 * round on. Which round the leave cuts short is the host's timing;
	 * each completed round must train as long as its epoch says.
	 */
	first3 = q1(h, "SELECT min(round) FROM rounds WHERE " THIS_RUN
		       " AND task = 2");
	cr_log_info("t3's first round %g, from %.4f s; t1's last %g, "
		    "from %.4f s", first3,
		    q1(h, "SELECT min(t.start_s) FROM rounds r JOIN "
			  "round_times t ON t.run = r.run AND t.round = "
			  "r.round WHERE r." THIS_RUN " AND task = 2"),
		    q1(h, "SELECT max(round) FROM rounds WHERE " THIS_RUN
			  " AND task = 0"),
		    q1(h, "SELECT max(t.start_s) FROM rounds r JOIN "
			  "round_times t ON t.run = r.run AND t.round = "
			  "r.round WHERE r." THIS_RUN " AND task = 0"));
	cr_assert_geq(q1(h, "SELECT count(*) FROM rounds WHERE " THIS_RUN
			    " AND task = 0 AND round < (SELECT min(round) FROM "
			    "rounds WHERE " THIS_RUN " AND task = 2)"), 1,
		      "t1 trained alone (t3's first round %g)", first3);
	cr_assert_geq(q1(h, "SELECT count(*) FROM rounds WHERE " THIS_RUN
			    " AND task = 0 AND round >= (SELECT min(round) FROM "
			    "rounds WHERE " THIS_RUN " AND task = 2)"), 1,
		      "t1 trained with t3 (t3's first round %g)", first3);
	cr_assert_lt(q1(h, "SELECT max(abs(compute_s - 0.002)) FROM rounds "
			   "WHERE " THIS_RUN " AND task = 0 AND round < (SELECT "
			   "min(round) FROM rounds WHERE " THIS_RUN
			   " AND task = 2)"), 2e-5, "t1's training alone");
	cr_assert_lt(q1(h, "SELECT max(abs(compute_s - 0.004)) FROM rounds "
			   "WHERE " THIS_RUN " AND task = 0 AND round >= (SELECT "
			   "min(round) FROM rounds WHERE " THIS_RUN
			   " AND task = 2)"), 4e-5,
		     "t1's training with t3 on its server");
	cr_assert_lt(q1(h, "SELECT max(abs(round_s / pred_round_s - 1)) FROM "
			   "rounds WHERE " THIS_RUN), 0.10, "a round off the "
		     "twin's by more than 10 %%");
	m3 = q1(h, "SELECT avg(round_s) FROM rounds WHERE " THIS_RUN
		   " AND task = 2");
	p3 = q1(h, "SELECT avg(pred_round_s) FROM rounds WHERE " THIS_RUN
		   " AND task = 2");
	sqlite3_close(h);
	cr_log_info("t3: %.3f ms measured, %.3f predicted", m3 * 1e3,
		    p3 * 1e3);
	/* a single round's fidelity bound (tests/README.md "Benchmarks") */
	cr_assert(fabs(m3 / p3 - 1) <= 0.10, "t3: %.3f ms, predicted %.3f",
		  m3 * 1e3, p3 * 1e3);
	nothing_left();
}

/*
 * Background traffic among tasks that come and go, followed live: sC ->
 * sD at 50 Gbit/s from 40 to 100 ms, beside t2's broadcast (sC -> sD)
 * and t3's upload out of sC. Its routes come and go with its epochs; t2's
 * rounds inside its window are predicted with it by the packet model
 * (its datagrams served in turn with t2's segments) and measured slower,
 * though by less than predicted (below); its generator delivers its rate.
 *
 * Where rounds fall in scenario time depends on the host: between two
 * rounds the run stores and judges, then starts the next 40 ms of host
 * time ahead, and a loaded host takes longer (a second suite beside
 * this one once left no round of t2 inside a 50 ms window from 30 ms).
 * So the window is placed where the rounds' own length puts them, not
 * the gaps: t2's round takes 7.6 ms, so 15 rounds end past 100 ms
 * whatever the gaps; two end before 40 ms unless the host stalled 0.4 s
 * of its time (at N = 16, the least) between them, and one falls in the
 * 60 ms window unless it stalled 0.8 s.
 */
Test(run, background_traffic_is_followed_live)
{
	char sql[512];
	double b, pb, d, pd, got = 0;
	const char *g;
	sqlite3 *h;
	char *o;

	live_predictor = "packet";
	live_rounds = 15;
	o = run_live(RING4_LIVE RING4_COMINGS "  - {at_s: 0.04, traffic: "
		     "{from: sC, to: sD, gbps: 50, for_s: 0.06}}\n", "none");
	cr_assert(strstr(o, "event at 0.040000 s: traffic sC -> sD, 50 Gbit/s "
			    "starts\n"), "%s", o);
	cr_assert(strstr(o, "traffic at 0.04 s: traffic sC -> sD, 50 Gbit/s "
			    "starts, beside t2,t3; nothing moved; live"), "%s",
		  o);
	cr_assert(strstr(o, "traffic end at 0.1 s: traffic sC -> sD, 50 "
			    "Gbit/s ends"), "%s", o);
	g = strstr(o, "traffic sC -> sD: ");
	cr_assert_not_null(g, "%s", o);
	g = strstr(g, " received: ");
	cr_assert_not_null(g, "%s", o);
	got = atof(g + strlen(" received: "));
	cr_assert_geq(got, 45, "the generator delivered %g of 50 Gbit/s", got);
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
#define T2_ROUNDS "SELECT avg(round_s), avg(pred_round_s), count(*) FROM " \
	"rounds r JOIN round_times t ON t.run = r.run AND t.round = r.round " \
	"WHERE r." THIS_RUN " AND task = 1 AND "
	checks_held(h);
	lateness_stored(h);
	cr_assert_eq(q1(h, "SELECT count(*) FROM runs WHERE id = (SELECT "
			   "max(id) FROM runs) AND predictor = 'packet'"), 1);
	cr_assert_eq(q1(h, "SELECT count(*) FROM events WHERE " THIS_RUN
			   " AND kind IN ('traffic', 'traffic end') AND "
			   "policy = 'none'"), 2);
	b = q1(h, T2_ROUNDS "t.start_s + r.round_s < 0.04");
	pb = q1_at(h, T2_ROUNDS "t.start_s + r.round_s < 0.04", 1, NAN);
	cr_assert_geq(q1_at(h, T2_ROUNDS "t.start_s + r.round_s < 0.04", 2,
			    NAN), 2, "t2's rounds before the traffic");
	/*
	 * A round is predicted by the epoch in force at its start, chosen
	 * two go margins (40 ms of host time) ahead: one that starts just
	 * after the traffic's start is predicted with it (it was not, when
	 * the epoch was the one in force as the start was chosen: seen under
	 * the sanitizers, t2's round from 31.2 ms predicted 7.570, measured
	 * 7.722).
	 */
	snprintf(sql, sizeof(sql), T2_ROUNDS "t.start_s >= 0.04 AND "
		 "t.start_s + r.round_s < 0.1");
	d = q1(h, sql);
	pd = q1_at(h, sql, 1, NAN);
	cr_assert_geq(q1_at(h, sql, 2, NAN), 1, "t2's rounds in the traffic");
	/*
	 * Every round the run judged faithful within 10 % of the twin (a
	 * round the host let down says so in its verdict, and is no measure
	 * of the twin), and most of them faithful.
	 */
#define FAITHFUL_ROUNDS "FROM rounds r JOIN fidelity f ON f.run = r.run AND " \
	"f.round = r.round WHERE r." THIS_RUN " AND f.verdict LIKE 'faithful%'"
	cr_assert_geq(q1(h, "SELECT count(DISTINCT r.round) " FAITHFUL_ROUNDS),
		      10, "fewer than 10 of 15 rounds faithful");
	{
		static const char worst[] = "SELECT abs(round_s / pred_round_s"
			" - 1), r.round, r.task, round_s, pred_round_s "
			FAITHFUL_ROUNDS " ORDER BY 1 DESC LIMIT 1";

		cr_assert_lt(q1(h, worst), 0.10, "a faithful round off the "
			     "twin's by more than 10 %%: round %g, task %g, "
			     "%.3f ms, predicted %.3f ms", q1_at(h, worst, 1,
			     NAN), q1_at(h, worst, 2, NAN), 1e3 * q1_at(h,
			     worst, 3, NAN), 1e3 * q1_at(h, worst, 4, NAN));
	}
#undef FAITHFUL_ROUNDS
#undef T2_ROUNDS
	sqlite3_close(h);
	cr_log_info("t2: %.3f ms before the traffic (predicted %.3f), %.3f "
		    "in it (predicted %.3f); generator %g of 50 Gbit/s",
		    b * 1e3, pb * 1e3, d * 1e3, pd * 1e3, got);
	cr_assert_gt(pd, 1.03 * pb, "the twin has the traffic slow t2");
	/*
	 * The traffic slows t2, measurably, and not more than the twin has
	 * it. How much of that it measures is an open gap between the two,
	 * not a bound this test can hold: 67-79 % of the packet model's
	 * 0.321 ms in three quiet runs (60-87 % of the fluid model's 0.335
	 * over twenty), 45 % and 46 % of the fluid model's in two runs with
	 * a core kept busy. A quarter says the flow competes; the figure is
	 * logged. With the window from 40 ms (more rounds of t3 beside it
	 * before) it measured 95 % and 106 %.
	 *
	 * Not more than the twin has it: a difference of two means of
	 * rounds, each of which a faithful run holds to what the twin
	 * claims, MON_TIME_TOL of a round, so each mean may be off by that
	 * much; over the twin's slowdown, at most twice that (a second suite
	 * beside this one measured 0.389 ms against 0.321, a round off by
	 * 0.9 %).
	 */
	cr_assert_geq(d - b, 0.25 * (pd - pb), "t2 slowed by %.3f ms, "
		      "predicted %.3f", (d - b) * 1e3, (pd - pb) * 1e3);
	cr_assert_leq(d - b, pd - pb + 2 * MON_TIME_TOL * pd, "t2 slowed by "
		      "%.3f ms, predicted %.3f (+ %.3f)", (d - b) * 1e3,
		      (pd - pb) * 1e3, 2 * MON_TIME_TOL * pd * 1e3);
	nothing_left();
}

/*
 * A dynamics experiment: ring4's tasks through an arrival, background
 * traffic and a departure, run live under two policies, one after the
 * other under the experiment's prefix; each run stores its events with
 * its policy and each task-round its byte-links, and the report sets the
 * policies side by side with a reading; --json ends with a record per
 * run. Nothing is left behind.
 */
Test(run, a_dynamics_experiment_compares_the_policies)
{
	char *bin = getenv("TWINLAB"), base[160], ev[160], exp[160], rep[160];
	char *a[] = { bin, "experiment", exp, "--db", db, "--prefix", prefix,
		      "--dilation", "auto:16", "--json", NULL };
	char *r[] = { bin, "report", db, "--out", rep, NULL };
	struct json_object *j, *pts, *v;
	int last = 0;
	char buf[65536], *o;
	sqlite3 *h;

	cr_assert_not_null(bin);
	snprintf(base, sizeof(base), "%s-base.yaml", yaml);
	snprintf(ev, sizeof(ev), "%s-events.yaml", yaml);
	snprintf(exp, sizeof(exp), "%s-exp.yaml", yaml);
	snprintf(rep, sizeof(rep), "%s-report", yaml);
	tl_write(base, RING4_LIVE);
	tl_write(ev, RING4_COMINGS "  - {at_s: 0.03, traffic: {from: sC, "
		   "to: sD, gbps: 50, for_s: 0.05}}\n");
	/* the files beside it, named relative to it */
	snprintf(buf, sizeof(buf), "name: r4\nkind: dynamics\nbase: %s\n"
		 "events: %s\nschedulers: [spff]\npolicies: [none, auto]\n"
		 "rounds: 6\n", strrchr(base, '/') + 1, strrchr(ev, '/') + 1);
	tl_write(exp, buf);
	cr_assert_eq(wait_run(nt_spawn_to(a, out)), 0, "%s", output());
	o = output();
	cr_assert(strstr(o, "experiment r4 (dynamics): 2 runs (1 schedulers x "
			    "2 policies)"), "%s", o);
	cr_assert(strstr(o, "[1/2] spff, --reschedule none: ok"), "%s", o);
	cr_assert(strstr(o, "[2/2] spff, --reschedule auto: ok"), "%s", o);
	/* --json: progress on stderr, then one record per run on stdout */
	cr_assert_not_null(strstr(o, "\n{\n"), "%s", o);
	j = json_tokener_parse(strstr(o, "\n{\n") + 1);
	cr_assert_not_null(j, "%s", o);
	cr_assert(json_object_object_get_ex(j, "points", &pts), "%s", o);
	cr_assert_eq(json_object_array_length(pts), 2);
	for (size_t i = 0; i < 2; i++) {
		struct json_object *pt = json_object_array_get_idx(pts, i);

		cr_assert(json_object_object_get_ex(pt, "status", &v));
		cr_expect_str_eq(json_object_get_string(v), "ok");
		cr_assert(json_object_object_get_ex(pt, "reschedule", &v));
		cr_expect_str_eq(json_object_get_string(v),
				 i ? "auto" : "none");
		/* its stored run: the last of the point's attempts */
		cr_assert(json_object_object_get_ex(pt, "run", &v));
		cr_expect_gt(json_object_get_int(v), last);
		last = json_object_get_int(v);
	}
	json_object_put(j);
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	cr_assert_eq(q1(h, "SELECT count(DISTINCT e.run) FROM events e JOIN "
			   "runs r ON r.id = e.run WHERE r.status = 'ok' AND "
			   "e.policy = 'none'"), 1);
	cr_assert_eq(q1(h, "SELECT count(DISTINCT e.run) FROM events e JOIN "
			   "runs r ON r.id = e.run WHERE r.status = 'ok' AND "
			   "e.policy = 'auto'"), 1);
	cr_assert_eq(q1(h, "SELECT min(check_ok) FROM rounds"), 1);
	/* t1's one fibre each way: 4 MB x 2 byte-links a round */
	cr_assert_float_eq(q1(h, "SELECT min(pred_bytes_links) FROM rounds "
				 "WHERE task = 0"), 8e6, 1, "t1's byte-links");
	sqlite3_close(h);
	cr_assert_eq(wait_run(nt_spawn_to(r, out)), 0, "%s", output());
	snprintf(buf, sizeof(buf), "%s/report.md", rep);
	o = nt_read_file(buf, buf, sizeof(buf));
	cr_assert_not_null(o);
	cr_assert(strstr(o, "### Policies compared"), "%s", o);
	cr_assert(strstr(o, "On ring4 with spff, 2 runs: the shortest mean "
			    "round was under "), "%s", o);
	nt_rm_flat(rep);
	unlink(base);
	unlink(ev);
	unlink(exp);
	nothing_left();
}

/*
 * An arrival whose path is cut before its workers start: t3 arrives at
 * 25 ms over B-C, which is cut at the same moment and re-placed the long
 * way 20 ms later (reconfig_ms). Its workers never try the dark path
 * (they wait for the move, saying so, or start on the new path when the
 * move came first); the task runs, every check holds.
 */
Test(run, an_arrival_whose_path_is_cut_waits_for_its_move)
{
	sqlite3 *h;
	char *o;

	o = run_live(RING4_LIVE "reconfig_ms: 20\nevents:\n"
		     "  - {at_s: 0.025, arrive: {name: t3, global: sB, "
		     "locals: [sC], parameters: 1000000, "
		     "bytes_per_parameter: 4, work_core_s: 0.002}}\n"
		     "  - {at_s: 0.025, cut: {a: B, b: C}}\n", "none");
	cr_assert(strstr(o, "run: task 't3' is placed"), "%s", o);
	cr_assert_null(strstr(o, "did not start"), "%s", o);
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	no_task_failed(h);
	cr_assert_geq(q1(h, "SELECT count(*) FROM rounds WHERE " THIS_RUN
			    " AND task = 2"), 2, "t3's rounds");
	checks_held(h);
	lateness_stored(h);
	sqlite3_close(h);
	cr_log_info("t3 %s", strstr(o, "'t3' waits to start") ?
		    "waited for its move" : "started on its new path");
	nothing_left();
}

/*
 * A departure during a set-up is not held up by it: A-B is cut at 25 ms
 * and t1 re-placed the long way, lit 40 ms per lightpath later; t1 leaves
 * at 35 ms, inside that set-up. Its workers end at its departure, so the
 * round it held up ends and t2 goes on with its rounds while the set-up
 * still runs (before, a departure waited for the epochs before it, and t2
 * with it); t1's routes go with its epoch, after the cut's (epochs come in
 * one after another); every check holds.
 */
Test(run, a_departure_during_a_set_up_is_not_held_up)
{
	double cut_live, leave_live, last1;
	char sql[512];
	sqlite3 *h;
	char *o;

	o = run_live(RING4_LIVE "reconfig_ms: 40\nevents:\n"
		     "  - {at_s: 0.025, cut: {a: A, b: B}}\n"
		     "  - {at_s: 0.035, leave: t1}\n", "none");
	cr_assert(strstr(o, "the cut at 0.025 s (--reschedule none): moved "
			    "t1;"), "%s", o);
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	cut_live = q1(h, "SELECT live_s FROM events WHERE " THIS_RUN
			 " AND kind = 'cut'");
	leave_live = q1(h, "SELECT live_s FROM events WHERE " THIS_RUN
			   " AND kind = 'leave'");
	last1 = q1(h, "SELECT max(t.start_s) FROM rounds r JOIN round_times t"
		      " ON t.run = r.run AND t.round = r.round WHERE r."
		      THIS_RUN " AND task = 0");
	cr_assert_geq(cut_live, 0.025 + 0.04, "the cut's set-up: %s", o);
	cr_assert_geq(leave_live, cut_live, "epochs in order");
	cr_assert_lt(last1, 0.025, "t1 completed a round it began after the "
		     "cut: %s", o);
	/* t2's rounds went on while t1's move was being set up */
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM rounds r JOIN "
		 "round_times t ON t.run = r.run AND t.round = r.round WHERE "
		 "r." THIS_RUN " AND task = 1 AND t.start_s > 0.035 AND "
		 "t.start_s < %.9f", cut_live);
	cr_assert_geq(q1(h, sql), 1, "t2 waited for a set-up that was not "
		      "its own (the cut live at %.3f s): %s", cut_live, o);
	cr_assert_eq(q1(h, "SELECT count(*) FROM rounds WHERE " THIS_RUN
			   " AND task = 1"), 10, "t2 completed every round");
	no_task_failed(h);
	checks_held(h);
	lateness_stored(h);
	cr_log_info("cut live at %.3f s, t1's departure live at %.3f s; t2's "
		    "rounds begun inside the set-up: %g", cut_live, leave_live,
		    q1(h, sql));
	sqlite3_close(h);
	nothing_left();
}

/*
 * A cut that leaves a task no way round, never repaired, fails that task
 * at the cut, clearly, and the others go on: B-C and C-D cut at 30 ms
 * isolate C; t2 (sC -> sD) fails with the reason at once (not at the
 * fleet's time-out); t1 (sA -> sB, over A-B) completes every round and
 * every check holds; the run says it failed (exit 1); nothing is left.
 */
Test(run, a_task_cut_off_fails_and_the_others_go_on)
{
	struct run_cmd c;
	sqlite3 *h;
	char *o;
	int rc;

	tl_write(yaml, RING4_LIVE "events:\n"
		   "  - {at_s: 0.03, cut: {a: B, b: C}}\n"
		   "  - {at_s: 0.03, cut: {a: C, b: D}}\n");
	run_cmd(&c, yaml, "spff", 10, "32", "--reschedule", "none", NULL);
	rc = wait_run(spawn_run(c.argv));
	o = output();
	cr_assert_eq(rc, 1, "%s", o);
	cr_assert(strstr(o, "task 't2' has no way round the cut at 0.03 s, "
			    "which is never repaired: its servers are cut off"),
		  "%s", o);
	cr_assert(strstr(o, ", no way round ever for t2 (it fails);"), "%s",
		  o);
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	cr_assert_eq(q1(h, "SELECT failed FROM tasks WHERE " THIS_RUN
			   " AND name = 't2'"), 1, "%s", o);
	cr_assert_eq(q1(h, "SELECT failed FROM tasks WHERE " THIS_RUN
			   " AND name = 't1'"), 0, "%s", o);
	cr_assert_eq(q1(h, "SELECT count(*) FROM rounds WHERE " THIS_RUN
			   " AND task = 0"), 10, "t1 completed every round");
	cr_assert_lt(q1(h, "SELECT count(*) FROM rounds WHERE " THIS_RUN
			   " AND task = 1"), 10, "t2 failed");
	checks_held(h);
	lateness_stored(h);
	/* at once: the run took about its ten rounds, not a time-out */
	cr_assert_lt(q1(h, "SELECT max(end_s) FROM round_times WHERE "
			   THIS_RUN), 0.5, "%s", o);
	sqlite3_close(h);
	nothing_left();
}

/*
 * Trees that change, followed live: on the teaching ring mst re-plans
 * both tasks from scratch after the A-B cut at 0.1 s (--reschedule full),
 * and both get new trees. Each carries on as new workers over them once
 * the cut's epoch is live: the round in flight at the cut is run again,
 * from the global model its root kept, so the k-th round a task completes
 * learns exactly what the twin's FedAvg learns in round k (nothing lost,
 * nothing counted twice), every check holds, each task is one task in the
 * database, and the rounds on the new trees are held to the twin.
 */
Test(run, trees_that_change_are_followed_live)
{
	static char text[8192];
	struct scn_error se;
	struct scenario *sc;
	double live, first, m, pm;
	char sql[512], *o;
	sqlite3 *h;

	cr_assert_not_null(nt_read_file("scenarios/teaching-ring.yaml", text,
					sizeof(text) - 128));
	strcat(text, "\nevents:\n  - {at_s: 0.1, cut: {a: A, b: B}}\n");
	o = run_live_as(text, "mst", "full");
	cr_assert(strstr(o, "the cut at 0.1 s (--reschedule full): moved "
			    "t1,t2;"), "%s", o);
	cr_assert(strstr(o, "run: task 't1' carries on over its new trees (the "
			    "cut at 0.1 s): its workers start, at round "),
		  "%s", o);
	cr_assert(strstr(o, "run: task 't2' carries on over its new trees (the "
			    "cut at 0.1 s): its workers start, at round "),
		  "%s", o);
	sc = scenario_load("scenarios/teaching-ring.yaml", &se);
	cr_assert_not_null(sc);
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	cr_assert_eq(q1(h, "SELECT count(*) FROM tasks WHERE " THIS_RUN), 2,
		     "a task stored twice");
	cr_assert_eq(q1(h, "SELECT count(*) FROM tasks WHERE " THIS_RUN
			   " AND (failed OR blocked)"), 0, "a task failed");
	checks_held(h);
	lateness_stored(h);
	for (int t = 0; t < 2; t++) {
		struct sel_learning l;
		int all[16], k = 0;
		double acc[10];
		sqlite3_stmt *st;

		/* the round in flight at the cut is lost, and run again */
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM rounds WHERE "
			 THIS_RUN " AND task = %d", t);
		cr_assert_eq(q1(h, sql), 9, "task %d: %s", t, o);
		cr_assert_eq(fleet_learning(sc, t, 0, &l), 0);
		for (int i = 0; i < sc->tasks[t].nlocals; i++)
			all[i] = i;
		cr_assert_eq(sel_learn(&l, sc->tasks[t].nlocals, all,
				       sc->tasks[t].nlocals, 9, acc), 0);
		snprintf(sql, sizeof(sql), "SELECT round, accuracy FROM rounds "
			 "WHERE " THIS_RUN " AND task = %d ORDER BY round", t);
		cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL),
			     SQLITE_OK);
		/* (one test sample either way: the trees sum in another
		 * order than the twin's) */
		for (; sqlite3_step(st) == SQLITE_ROW; k++)
			cr_assert(fabs(sqlite3_column_double(st, 1) - acc[k]) <=
					  0.0015,
				  "task %d, its round %d (the run's %d): "
				  "accuracy %.4f, the twin's %.4f", t, k + 1,
				  sqlite3_column_int(st, 0),
				  sqlite3_column_double(st, 1), acc[k]);
		sqlite3_finalize(st);
		cr_assert_eq(k, 9);
	}
	scenario_free(sc);
	live = q1(h, "SELECT live_s FROM events WHERE " THIS_RUN
		     " AND kind = 'cut'");
	first = q1(h, "SELECT first_round_s FROM events WHERE " THIS_RUN
		      " AND kind = 'cut'");
	cr_assert(live > 0.1 && first > live, "live %g, first round %g", live,
		  first);
	snprintf(sql, sizeof(sql), "SELECT avg(round_s), avg(pred_round_s) "
		 "FROM rounds r JOIN round_times t ON t.run = r.run AND "
		 "t.round = r.round WHERE r." THIS_RUN " AND t.start_s >= %.9f",
		 live);
	m = q1(h, sql);
	pm = q1_at(h, sql, 1, NAN);
	sqlite3_close(h);
	cr_log_info("new trees live %.3f s after the start, the first round "
		    "on them over %.3f s after it; rounds on them %.3f ms "
		    "measured, %.3f predicted", live, first, m * 1e3,
		    pm * 1e3);
	/* a single round's fidelity bound (tests/README.md "Benchmarks") */
	cr_assert(fabs(m / pm - 1) <= 0.10, "on the new trees: %.3f ms "
		  "measured, %.3f predicted", m * 1e3, pm * 1e3);
	nothing_left();
}

/*
 * Relays pipelined: a chain g -> l1 -> l2 -> l3 (mst's own unbounded tree over a
 * line of 100 km fibres, 10 Gbit/s access links), three levels both
 * ways, a 100,040-byte model after scale 100 in chunks of 10,000 (1 MB
 * physical). The twin predicts a broadcast of 11.44 ms pipelined against
 * 26.59 storing; the emulation measures it, the upload and the round
 * within the demo's 5 % of the prediction, and each round's global model
 * is bit for bit the one relays that store make (the aggregators stream
 * their means chunk by chunk).
 */
static const char chain[] =
	"name: chain\nscale: 100\nnever_slower: false\nrelay: %s\n"
	"weights: {stretch: 0}\n"
	"chunk_kb: 1000\nwavelength_gbps: 100\nwavelengths: 4\n"
	"demand_gbps: 1\nroadms: [A, B, C, D]\n"
	"fibres: [{a: A, b: B, km: 100}, {a: B, b: C, km: 100},"
	" {a: C, b: D, km: 100}]\n"
	"routers: [{name: rA, roadm: A}, {name: rB, roadm: B},"
	" {name: rC, roadm: C}, {name: rD, roadm: D}]\n"
	"servers:\n"
	"  - {name: g, router: rA, access_gbps: 10, cpu: 1, memory_mib: 256}\n"
	"  - {name: l1, router: rB, access_gbps: 10, cpu: 1, memory_mib: 256}\n"
	"  - {name: l2, router: rC, access_gbps: 10, cpu: 1, memory_mib: 256}\n"
	"  - {name: l3, router: rD, access_gbps: 10, cpu: 1, memory_mib: 256}\n"
	"tasks:\n"
	"  - {name: t, global: g, locals: [l1, l2, l3], parameters: 2500000,\n"
	"     bytes_per_parameter: 4, work_core_s: 0.002, agg_core_s: %s}\n";

/*
 * Run the chain with relay, agg seconds of folding per child; its
 * faithful run's id and prediction.
 */
static long chain_run(const char *relay, const char *agg, struct plan **pp,
		      struct scenario **scp)
{
	char y[2048];
	sqlite3 *h;
	long id;

	snprintf(y, sizeof(y), chain, relay, agg);
	*pp = predicted(y, "chain", scp);
	for (int m = 1; m < 4; m++) {
		cr_assert_eq((*pp)->tasks[0].bcast.parent[m], m - 1);
		cr_assert_eq((*pp)->tasks[0].up.parent[m], m - 1);
	}
	tl_write(yaml, y);
	/*
	 * From 32. Below, relays woken late forward their chunks behind
	 * time (the pipelined broadcast measured 13.3 ms against 11.4 at
	 * N = 4); the monitor now sees that and raises N. But at 16, under
	 * the sanitizers with another core busy, the upload measured up to
	 * 12.09 ms (5.7 % over) in a run the monitor found faithful: host
	 * time it does not judge yet (the kernel's packet work under load is
	 * the suspect). At 32 the same measured 11.71-11.73.
	 */
	run_faithful(yaml, "mst", 3, "auto:32");
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	id = (long)q1(h, "SELECT max(id) FROM runs");
	sqlite3_close(h);
	return id;
}

/*
 * Run pid's bcast, upload and round, measured within 5 % of plan pp's;
 * every round's global model the same as run sid's.
 */
static void chain_check(sqlite3 *h, long pid, const struct plan *pp,
			long sid, const char *what)
{
	static const char *const col[] = { "bcast_s", "upload_s", "round_s" };
	const struct task_plan *tp = &pp->tasks[0];
	const double want[] = { tp->bcast_s, tp->upload_s, tp->round_s };

	for (int k = 0; k < 3; k++) {
		double got = rounds_avg(h, col[k], pid);

		cr_log_info("%s %s: measured %.3f ms, predicted %.3f ms", what,
			    col[k], got * 1e3, want[k] * 1e3);
		cr_expect(fabs(got / want[k] - 1) <= 0.05, "%s %s: %.3f ms "
			  "against %.3f", what, col[k], got * 1e3,
			  want[k] * 1e3);
	}
	for (int r = 1; r <= 3; r++) {
		char sql[200], d[2][32];
		sqlite3_stmt *st;

		for (int k = 0; k < 2; k++) {
			const unsigned char *t;

			snprintf(sql, sizeof(sql), "SELECT global_digest FROM "
				 "rounds WHERE run = %ld AND round = %d",
				 k ? pid : sid, r);
			cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL),
				     SQLITE_OK);
			cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
			t = sqlite3_column_text(st, 0);
			cr_assert(t && strlen((const char *)t) == 16, "%s", sql);
			snprintf(d[k], sizeof(d[k]), "%s", (const char *)t);
			sqlite3_finalize(st);
		}
		cr_expect_str_eq(d[0], d[1], "%s, round %d: global model %s "
				 "against %s", what, r, d[1], d[0]);
	}
}

Test(run, pipelined_relays_are_measured_as_predicted_and_average_the_same)
{
	struct scenario *ssc, *psc;
	struct plan *sp, *pp;
	long sid = chain_run("store", "0", &sp, &ssc);
	long pid = chain_run("pipelined", "0", &pp, &psc);
	sqlite3 *h;

	cr_assert_lt(pp->tasks[0].bcast_s, 0.5 * sp->tasks[0].bcast_s);
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	chain_check(h, pid, pp, sid, "pipelined");
	cr_expect_lt(rounds_avg(h, "bcast_s", pid),
		     0.5 * rounds_avg(h, "bcast_s", sid),
		     "pipelined %.3f ms, storing %.3f ms",
		     rounds_avg(h, "bcast_s", pid) * 1e3,
		     rounds_avg(h, "bcast_s", sid) * 1e3);
	sqlite3_close(h);
	plan_free(sp);
	plan_free(pp);
	scenario_free(ssc);
	scenario_free(psc);
	nothing_left();
}

/*
 * Folding the children in takes its time (agg_core_s, 1 ms per child:
 * two relays and the global model fold one each): measured as the twin
 * predicts it, storing and pipelined (a chunk at a time), and the same
 * global models as when folding is instant.
 */
Test(run, aggregating_is_paced_as_predicted)
{
	struct scenario *sc[3];
	struct plan *p[3];
	long id0 = chain_run("store", "0", &p[0], &sc[0]);
	long ids = chain_run("store", "0.001", &p[1], &sc[1]);
	long idp = chain_run("pipelined", "0.001", &p[2], &sc[2]);
	sqlite3 *h;

	cr_assert_float_eq(p[1]->tasks[0].round_s - p[0]->tasks[0].round_s,
			   3e-3, 1e-9, "three folds, one after the other");
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	chain_check(h, ids, p[1], id0, "storing, folding");
	chain_check(h, idp, p[2], id0, "pipelined, folding");
	sqlite3_close(h);
	for (int i = 0; i < 3; i++) {
		plan_free(p[i]);
		scenario_free(sc[i]);
	}
	nothing_left();
}

/*
 * An emulation that is up is used only for the network it is: `up` the
 * teaching ring, edit a fibre's length in the same file, and `run` it on
 * that prefix: refused, saying so, before a database is made, and the
 * emulation is left as it was (the same file unedited runs on it).
 */
Test(run, an_emulation_edited_since_up_is_not_measured)
{
	char *bin = getenv("TWINLAB"), text[16384], *at;
	char *up[] = { bin, "up", yaml, "--prefix", prefix, NULL };
	char want[512];
	struct stat sb;
	char *o;

	cr_assert_not_null(bin, "TWINLAB is not set");
	cr_assert_not_null(nt_read_file("scenarios/teaching-ring.yaml", text,
					sizeof(text)));
	tl_write(yaml, text);
	cr_assert_eq(wait_run(nt_spawn_to(up, out)), 0, "%s", output());
	/* the A-B fibre, 40 km, made 400 */
	at = strstr(text, "km: 40}");
	cr_assert_not_null(at);
	memmove(at + 6, at + 5, strlen(at + 5) + 1);
	at[5] = '0';
	tl_write(yaml, text);
	cr_assert_neq(wait_run(start_run_at(yaml, "mst", 1, "1")), 0);
	o = output();
	snprintf(want, sizeof(want), "the emulation up under prefix '%s' is "
		 "not the network this run plans (it was built from '%s' "
		 "with scheduler mst at dilation 1; its network differs)",
		 prefix, yaml);
	cr_assert(strstr(o, want), "%s", o);
	cr_assert_neq(stat(db, &sb), 0, "a database was made");
	cr_assert(lab_exists(prefix), "the emulation was taken down");
	/* the file as it was built runs on it */
	memmove(at + 5, at + 6, strlen(at + 6) + 1);
	tl_write(yaml, text);
	cr_assert_eq(wait_run(start_run_at(yaml, "mst", 1, "1")), 0, "%s",
		     output());
	cr_assert(strstr(output(), "using the emulation that is up"), "%s",
		  output());
	lab_down(prefix, NULL, NULL);
	nothing_left();
}

/*
 * Workers' cgroups are named after their task and model; a task carried
 * on over new trees (the same name) adds its index after a '+', which no
 * task name may hold: task "t1.3"'s first worker and the first worker of
 * task 3 carrying "t1" on no longer share "t1.3-0".
 */
Test(fleet, cgroup_names_of_carried_tasks_cannot_collide)
{
	char a[64], b[64], c[64];

	fleet_cgroup_name("t1.3", 0, false, 0, a, sizeof(a));
	fleet_cgroup_name("t1", 3, true, 0, b, sizeof(b));
	fleet_cgroup_name("t1", 0, false, 0, c, sizeof(c));
	cr_expect_str_eq(a, "t1.3-0");
	cr_expect_str_eq(b, "t1+3-0");
	cr_expect_str_eq(c, "t1-0");
	cr_expect_str_neq(a, b);
	/* and '+' is not a task name's */
	cr_expect_not(scn_name_ok("t1+3", SCN_TASK_NAME_MAX, true));
}

/*
 * Each row of sql (a name, a ratio, and optionally a tolerance of its
 * own): the ratio within tol of 1, or of its own tolerance where that is
 * larger; how many rows there were.
 */
static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int ratios_near_one(sqlite3 *h, const char *sql, double tol)
{
	static double r[4096], e[4096];
	sqlite3_stmt *st;
	int n = 0;

	cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK,
		     "%s: %s", sql, sqlite3_errmsg(h));
	while (sqlite3_step(st) == SQLITE_ROW) {
		cr_assert_lt(n, 4096);
		double t = sqlite3_column_count(st) > 2 ?
				   fmax(tol, sqlite3_column_double(st, 2)) : tol;

		r[n] = sqlite3_column_double(st, 1);
		e[n] = fabs(r[n] - 1);
		cr_log_info("%s: %.4f", sqlite3_column_text(st, 0), r[n]);
		cr_expect(e[n] <= t, "%s: %.4f (tolerance %.4f)",
			  sqlite3_column_text(st, 0), r[n], t);
		n++;
	}
	sqlite3_finalize(st);
	if (n) {	/* the figures a benchmark quotes */
		qsort(r, (size_t)n, sizeof(*r), by_value);
		qsort(e, (size_t)n, sizeof(*e), by_value);
		cr_log_info("%d ratios: median %.4f, p95 of |r - 1| %.2f %%, "
			    "worst %.2f %%", n,
			    n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2,
			    100 * e[(int)(0.95 * (n - 1) + 0.5)],
			    100 * e[n - 1]);
	}
	return n;
}

/* Per task, run two's mean round over run one's within tol; how many. */
static int rounds_near(sqlite3 *h, long one, long two, double tol)
{
	char sql[300];

	snprintf(sql, sizeof(sql),
		 "SELECT 'task ' || a.task, avg(b.round_s) / avg(a.round_s) "
		 "FROM rounds a JOIN rounds b ON b.task = a.task AND "
		 "b.round = a.round WHERE a.run = %ld AND b.run = %ld "
		 "GROUP BY a.task", one, two);
	return ratios_near_one(h, sql, tol);
}

/*
 * Per link, run two's bytes over run one's within tol, or within
 * LINK_ACKS ACK frames a round where that is more: how many ACKs a
 * receiver sends follows the host's timing (a window update when the
 * application reads), and on a small link of the ring, 27 kB a round,
 * four runs differed by up to 5 of them in a round (330 B) and one pair
 * by 2.01 % over three rounds, about 8 a round. A data segment is a
 * 1,514-byte frame: one too many or too few in every round is still
 * beyond 16 ACKs a round (1,056 B); the slack is over the rounds
 * together, so a segment or two in one round of three is not.
 * On a loaded host the count strays further (beside a second suite, the
 * ring's three runs sent 955-1,067 TCP segments, none of them again, and
 * a link of the two-host run once carried 2.9 % more than the one-host
 * run's): the slack is then as many ACKs as TCP's own count of segments
 * sent (OutSegs, every server's) differs between the two runs, where
 * that is more; a segment sent again, or a data segment more, is still
 * beyond it (1,514 B against 66).
 * How many links, asserted to be every link of run one.
 */
#define LINK_ACKS 16
#define ACK_FRAME 66	/* Ethernet, IPv4, TCP with timestamps */

static int links_near(sqlite3 *h, long one, long two, double tol)
{
	char sql[600];
	double segs[2];
	int links;

	for (int k = 0; k < 2; k++) {
		snprintf(sql, sizeof(sql), "SELECT sum(out_segs) FROM fidelity "
			 "WHERE run = %ld", k ? two : one);
		segs[k] = q1(h, sql);
	}
	cr_log_info("TCP segments sent: %.0f in run %ld, %.0f in run %ld",
		    segs[0], one, segs[1], two);
	snprintf(sql, sizeof(sql),
		 "SELECT a.link, sum(b.bytes) * 1.0 / sum(a.bytes), "
		 "max(%d.0 * count(*), %.0f) * %d / sum(a.bytes) FROM links a "
		 "JOIN links b ON b.link = a.link AND b.round = a.round "
		 "WHERE a.run = %ld AND b.run = %ld GROUP BY a.link",
		 LINK_ACKS, fabs(segs[1] - segs[0]), ACK_FRAME, one, two);
	links = ratios_near_one(h, sql, tol);
	snprintf(sql, sizeof(sql),
		 "SELECT count(DISTINCT link) FROM links WHERE run = %ld", one);
	cr_assert_eq(links, (int)q1(h, sql), "a link of one run is missing "
		     "from the other");
	cr_assert_gt(links, 0);
	return links;
}

/* The same models in runs one and two, round by round: how many rounds. */
static int same_models(sqlite3 *h, long one, long two)
{
	char sql[400];

	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM rounds a JOIN rounds b ON b.task = "
		 "a.task AND b.round = a.round AND b.global_digest = "
		 "a.global_digest WHERE a.run = %ld AND b.run = %ld", one, two);
	return (int)q1(h, sql);
}

/*
 * The ring split over two hosts as `export --hosts 2` splits it, built
 * here (`run --hosts 2`: each host's namespace, the cut fibre's wavelength
 * a VXLAN tunnel over an underlay), measures as on one host: each task's
 * mean round within 5 % of the one-host run's, the bytes of every link
 * within 2 %, both faithful; and nothing of the split is left.
 */
Test(run, a_run_split_over_two_hosts_measures_as_on_one, .timeout = 300)
{
	struct run_cmd c;
	sqlite3 *h;
	long one, two;

	run_faithful("scenarios/teaching-ring.yaml", "mst", 3, "auto:8");
	/* the one-host run: the last so far (the split run's own degraded
	 * attempts, at each dilation auto tries, come after it) */
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	one = (long)q1(h, "SELECT max(id) FROM runs");
	sqlite3_close(h);
	run_cmd(&c, "scenarios/teaching-ring.yaml", "mst", 3, "auto:8",
		"--hosts", "2", NULL);
	cr_assert(strstr(until_faithful(&c), "fidelity: dilation "));
	nothing_left();
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	two = (long)q1(h, "SELECT max(id) FROM runs");
	cr_assert_gt(one, 0);
	cr_assert_gt(two, one);
	/* per task: the split run's mean round over the one-host run's */
	cr_assert_eq(rounds_near(h, one, two, 0.05), 2);
	links_near(h, one, two, 0.02);
	sqlite3_close(h);
}

/* How many processes run `bin word ...`. */
static int count_procs(const char *bin, const char *word)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(d);
	while ((de = readdir(d))) {
		char path[64], line[512];
		ssize_t k;
		int fd;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.32s/cmdline", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;	/* it ended meanwhile */
		k = read(fd, line, sizeof(line) - 1);
		close(fd);
		if (k <= 0)
			continue;
		line[k] = '\0';
		if (!strcmp(line, bin) && (size_t)k > strlen(bin) + 1 &&
		    !strcmp(line + strlen(bin) + 1, word))
			n++;
	}
	closedir(d);
	return n;
}

/*
 * Workers started by a command (`run --workers-via`, as the head host of
 * an exported emulation starts them in the servers' containers), here
 * `twinlab exec` into each server's namespace of a run split over two
 * hosts: they learn exactly what forked workers learn (the same global
 * model, digest for digest, every round), each task's mean round within
 * 5 % of the forked one-host run's, both faithful; and no worker is left
 * when the run has ended. Its counters are read by agents started the
 * same way: every link's bytes read, the run's within 2 % of those read in
 * the namespaces, and no agent left.
 */
Test(run, workers_started_by_a_command_learn_and_measure_as_forked_ones,
     .timeout = 300)
{
	char *bin = getenv("TWINLAB"), via[600], ag[600];
	struct run_cmd c;
	long one, two;
	sqlite3 *h;

	cr_assert_not_null(bin, "TWINLAB is not set");
	/*
	 * Through a wrapper that passes no SIGKILL on, as a container
	 * runtime's exec client does not: the workers must end because
	 * their links do, not because their commands are killed.
	 */
	snprintf(via, sizeof(via), "/usr/bin/timeout 600 %s exec --prefix %s "
		 "{node} -- %s worker", bin, prefix, bin);
	snprintf(ag, sizeof(ag), "/usr/bin/timeout 600 %s exec --prefix %s "
		 "{node} -- %s agent", bin, prefix, bin);
	run_faithful("scenarios/teaching-ring.yaml", "mst", 3, "auto:8");
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	one = (long)q1(h, "SELECT max(id) FROM runs");	/* forked */
	sqlite3_close(h);
	run_cmd(&c, "scenarios/teaching-ring.yaml", "mst", 3, "auto:8",
		"--hosts", "2", "--workers-via", via, "--agents-via", ag, NULL);
	cr_assert(strstr(until_faithful(&c), "fidelity: dilation "));
	cr_assert(strstr(output(), "the nodes' counters are read by agents"),
		  "%s", output());
	nothing_left();
	cr_assert_eq(count_procs(bin, "worker"), 0, "a worker was left");
	cr_assert_eq(count_procs(bin, "agent"), 0, "an agent was left");
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	two = (long)q1(h, "SELECT max(id) FROM runs");
	cr_assert_gt(two, one);
	cr_assert_eq(same_models(h, one, two), 2 * 3,
		     "the models learnt differ");
	cr_assert_eq(rounds_near(h, one, two, 0.05), 2);
	links_near(h, one, two, 0.02);
	sqlite3_close(h);
}

static struct clabdep_host dep[2];
static char stem[16], whole[16], dep_dir[64];

static void deployed_up(void)
{
	setup();
	snprintf(stem, sizeof(stem), "d%d", (int)getpid());
	snprintf(whole, sizeof(whole), "tw%d", (int)getpid());
	snprintf(dep_dir, sizeof(dep_dir), "/tmp/tl-dep%d", (int)getpid());
}

static void deployed_down(void)
{
	if (stem[0])
		clabdep_down(dep, 2, stem);
	if (whole[0])
		nt_prefix_down(whole);
	if (dep_dir[0])
		tl_rm_tree(dep_dir);
	teardown();
}

TestSuite(deployed, .init = deployed_up, .fini = deployed_down,
	  .timeout = 300);

/* sc exported for two hosts at dilation n (dep_dir/name-h<k>) and
 * deployed there under stem. */
static void deploy_at(const char *sc, const char *n, const char *name)
{
	char *exp[] = { getenv("TWINLAB"), "export", (char *)sc,
			"--containerlab", dep_dir, "--hosts", "2", "--prefix",
			prefix, "--dilation", (char *)n, NULL };
	char o[4096];

	cr_assert_eq(run_argv_output(exp, o, sizeof(o)), 0, "%s", o);
	for (int k = 0; k < 2; k++) {
		char path[160];

		snprintf(path, sizeof(path), "%s/%s-h%d.clab.yml", dep_dir,
			 name, k + 1);
		clabdep_load(path, &dep[k]);
	}
	clabdep_up(dep, 2, stem, sc);
}

/* A fixed-dilation run's output: 0 when faithful, else the dilation it
 * names as likely faithful. */
static int named_dilation(const char *o)
{
	const char *about = strstr(o, "about dilation ");

	if (strstr(o, ", faithful\nresults: "))
		return 0;
	cr_assert_not_null(about, "neither faithful nor a dilation: %s", o);
	return atoi(about + strlen("about dilation "));
}

/*
 * A run on a deployment of parts — the ring exported for two hosts, each
 * node built by its own `up --node` in a namespace standing for its
 * container, the hosts joined by VXLAN (tests/lib/clabdep.h) — whose
 * workers and counters it reaches only through commands into the nodes,
 * measures as a run of the same network built whole here: the same
 * models, each task's mean round within 5 %, every link's bytes within
 * 2 %, both faithful at the deployment's dilation (on a loaded host,
 * deployed again at the one a degraded pair names); the run builds and
 * leaves nothing. Refused, naming why, with nothing started left: a
 * dilation other than the deployment's, another scheduler's plan, agents
 * that read another node's part.
 * Interrupted in a round (SIGINT), it ends every worker and agent it
 * started and leaves the deployment as it was.
 * TWINLAB_DEPLOYED="SCENARIO DILATION ROUNDS" runs another network the
 * same way (make bench-deployed).
 */
Test(deployed, a_run_on_a_deployment_of_parts_measures_as_on_the_whole)
{
	char *bin = getenv("TWINLAB"), via[600], ag[600];
	char sc[128] = "scenarios/teaching-ring.yaml", n[16] = "32", r[8] = "3";
	const char *held, *env = getenv("TWINLAB_DEPLOYED");
	char want[64], name[64];
	unsigned long held_n;
	struct run_cmd c;
	int rounds;
	long one, two;
	sqlite3 *h;

	cr_assert_not_null(bin, "TWINLAB is not set");
	if (env)
		cr_assert_eq(sscanf(env, "%127s %15s %7s", sc, n, r), 3,
			     "TWINLAB_DEPLOYED='%s': SCENARIO DILATION ROUNDS",
			     env);
	rounds = atoi(r);
	cr_assert_gt(rounds, 0);
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(basename(sc), "."),
		 basename(sc));
	deploy_at(sc, n, name);
	snprintf(via, sizeof(via), "/usr/bin/timeout 600 %s exec --prefix "
		 "{prefix} {node} -- %s worker", bin, bin);
	snprintf(ag, sizeof(ag), "/usr/bin/timeout 600 %s exec --prefix "
		 "{prefix} {node} -- %s agent --prefix {prefix}", bin, bin);
	/* another dilation than the deployment's: refused, said */
	run_cmd(&c, sc, "mst", 1, "1.5", "--deployed", "--workers-via", via,
		"--agents-via", ag, NULL);
	cr_assert_eq(wait_run(spawn_run(c.argv)), 1, "%s", output());
	snprintf(want, sizeof(want), "was deployed at dilation %s, not 1.5",
		 n);
	cr_assert(strstr(output(), want), "%s", output());
	cr_assert_eq(count_procs(bin, "agent"), 0, "an agent was left");
	if (!env) {
		char wrong[600];

		run_cmd(&c, sc, "spff", 1, n, "--deployed", "--workers-via",
			via, "--agents-via", ag, NULL);
		cr_assert_eq(wait_run(spawn_run(c.argv)), 1, "%s", output());
		cr_assert(strstr(output(), "part was built from another plan "
				 "than this run's"), "%s", output());
		/* every agent told to read ROADM A's part (node 0) */
		snprintf(wrong, sizeof(wrong), "/usr/bin/timeout 600 %s exec "
			 "--prefix {prefix} {node} -- %s agent --prefix %s0",
			 bin, bin, prefix);
		run_cmd(&c, sc, "mst", 1, n, "--deployed", "--workers-via",
			via, "--agents-via", wrong, NULL);
		cr_assert_eq(wait_run(spawn_run(c.argv)), 1, "%s", output());
		cr_assert(strstr(output(), "reads another node's part"), "%s",
			  output());
		cr_assert_eq(count_procs(bin, "agent"), 0,
			     "an agent was left");
	}
	/*
	 * The whole network, built here by the run, then the deployment, at
	 * its dilation; both degraded or either (a loaded host: beside a
	 * second suite, the deployed run's first round at N 32 once), both
	 * again on a deployment at the dilation they name, up to three times
	 */
	for (int attempt = 0;; attempt++) {
		int whole_n, dep_n;

		run_cmd(&c, sc, "mst", rounds, n, "--prefix", whole, NULL);
		cr_assert_eq(wait_run(spawn_run(c.argv)), 0, "%s", output());
		cr_log_info("whole: %s", strstr(output(), "host time:"));
		whole_n = named_dilation(output());
		run_cmd(&c, sc, "mst", rounds, n, "--deployed", "--workers-via",
			via, "--agents-via", ag, NULL);
		cr_assert_eq(wait_run(spawn_run(c.argv)), 0, "%s", output());
		cr_assert(strstr(output(), "on its deployment, node by node"),
			  "%s", output());
		cr_log_info("deployed: %s", strstr(output(), "host time:"));
		dep_n = named_dilation(output());
		if (!whole_n && !dep_n)
			break;
		cr_assert_lt(attempt, 2, "degraded at dilation %s: %s", n,
			     output());
		snprintf(n, sizeof(n), "%d", whole_n > dep_n ? whole_n : dep_n);
		cr_log_info("degraded; both again at dilation %s", n);
		clabdep_down(dep, 2, stem);
		tl_rm_tree(dep_dir);
		deploy_at(sc, n, name);
	}
	snprintf(want, sizeof(want), "fidelity: dilation %s, faithful", n);
	cr_assert(strstr(output(), want), "%s", output());
	/* the routers' own delay lines, read by their agents */
	held = strstr(output(), "the delay line held ");
	cr_assert(held &&
		  sscanf(held, "the delay line held %lu", &held_n) == 1 &&
		  held_n > 0, "the delay lines were not read: %s", output());
	nothing_left();
	cr_assert_eq(count_procs(bin, "worker"), 0, "a worker was left");
	cr_assert_eq(count_procs(bin, "agent"), 0, "an agent was left");
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	two = (long)q1(h, "SELECT max(id) FROM runs");
	one = (long)q1(h, "SELECT max(id) FROM runs WHERE id < (SELECT "
		       "max(id) FROM runs)");
	snprintf(want, sizeof(want), "SELECT count(*) FROM rounds WHERE run = "
		 "%ld", one);
	cr_assert_eq(same_models(h, one, two), (int)q1(h, want),
		     "the models differ");
	snprintf(want, sizeof(want), "SELECT count(DISTINCT task) FROM rounds "
		 "WHERE run = %ld", one);
	cr_assert_eq(rounds_near(h, one, two, 0.05), (int)q1(h, want));
	/* a refused run's row is ended, not left running */
	cr_assert_eq(q1(h, "SELECT count(*) FROM runs WHERE status = "
			"'running'"), 0);
	links_near(h, one, two, 0.02);
	sqlite3_close(h);
	if (env)
		return;
	{
		struct piped pp;
		bool round1 = false;
		int st;

		start_piped(&pp, run_cmd(&c, sc, "mst", 100, n, "--deployed",
					 "--workers-via", via, "--agents-via",
					 ag, NULL));
		while (!round1 && piped_line(&pp))
			round1 = !strncmp(pp.line, "round 1/", 8);
		cr_assert(round1, "no first round: %s", output());
		cr_assert_eq(kill(pp.pid, SIGINT), 0);
		st = piped_wait(&pp);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st), "%s", output());
		cr_assert_eq(count_procs(bin, "worker"), 0, "a worker was left");
		cr_assert_eq(count_procs(bin, "agent"), 0, "an agent was left");
		nothing_left();
		for (int k = 0; k < 2; k++)
			for (int i = 0; i < dep[k].nnodes; i++)
				cr_assert(netns_exists(dep[k].node[i].ns),
					  "the run removed %s",
					  dep[k].node[i].ns);
	}
	/* and the deployment still runs */
	run_cmd(&c, sc, "mst", 1, n, "--deployed", "--workers-via", via,
		"--agents-via", ag, NULL);
	cr_assert_eq(wait_run(spawn_run(c.argv)), 0, "%s", output());
}

/* A command that starts no worker: the run says which node and which
 * command, and leaves nothing. */
Test(run, a_command_that_starts_no_worker_is_named)
{
	struct run_cmd c;
	char *o;

	run_cmd(&c, "scenarios/teaching-ring.yaml", "mst", 1, "10",
		"--workers-via", "/nonexistent/twinlab {node} worker", NULL);
	cr_assert_eq(wait_run(spawn_run(c.argv)), 1, "%s", output());
	o = output();
	cr_assert(strstr(o, "the worker on 's") &&
		  strstr(o, "(started by '/nonexistent/twinlab') did not "
			 "answer: it ended"), "%s", o);
	nothing_left();
}
