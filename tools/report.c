// SPDX-License-Identifier: MIT
/*
 * twinlab report DB [--out DIR]: figures and a markdown report made from a
 * results database alone.
 *
 * Everything is computed here from the tables `twinlab run` and `twinlab
 * experiment` write (tools/results.c); the figures are drawn by gnuplot
 * from data files and scripts written next to them, so they can be
 * re-plotted by hand, and the plan pictures by Graphviz from the DOT text
 * stored with each run. Both programs are run by fork + execve with an
 * argv; when one is missing the report and the data are still written.
 */
#include "twinlab.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sqlite3.h>

extern char **environ;

#define GNUPLOT "/usr/bin/gnuplot"
#define DOT "/usr/bin/dot"
#define MAX_BAD_CHECKS 20

/* Poster figures the reading compares against (Wang et al., SIGCOMM 2024
 * poster, arXiv 2407.04845): flexible vs fixed scheduling, ms. */
#define POSTER_FLEX_MS 1.9
#define POSTER_FIXED_MS 2.3

enum { PH_ROUND, PH_BCAST, PH_COMPUTE, PH_UPLOAD, NPH };

static const char *const phase_name[NPH] = { "round", "broadcast",
					      "training", "upload" };

struct rtask {
	int run;			/* index into report.runs */
	int task;
	char *name, *why;
	int nlocals;
	bool blocked, failed;
	double pred[NPH];		/* s */
	double meas[NPH];		/* s, mean over the task's rounds */
	int nrounds, nheld;
};

struct rrun {
	int64_t id;
	char *scenario, *scheduler, *status;
	char *verdict;			/* the fidelity monitor's; "" if none */
	char *predictor;		/* the twin's model: fluid, packet */
	double dilation;		/* NAN when not recorded */
	bool degraded;			/* kept out of figures and fits */
	double scale;
	double plan_bf;			/* runs.pred_bytes_links */
	double wl;			/* runs.wavelength_links */
	int rounds_cfg;
	bool point;
	char *experiment;
	int nlocals;
	int64_t seed;
	int *nfib;			/* lightpath id -> fibres (plan JSON) */
	int nlp;
	bool json_ok;
	/* computed from tasks, rounds and links */
	int ntasks, nblocked, nfailed, nmeasured, max_rounds;
	long nrounds, nheld;
	double meas[NPH], pred[NPH];	/* s, mean over tasks; NAN if none */
	int link_rounds;
	double ip_bytes, bf_bytes;	/* per round, physical; NAN if none */
	double link_sum, bf_sum;
	int last_round;
	bool bf_known;
};

struct point {
	const char *experiment, *scheduler;
	int nlocals;
	int first, n;			/* runs[order[first..first+n)] */
	int nmeas;
	double lat_med, lat_min, lat_max, lat_pred;
	double ph_med[NPH], ph_pred[NPH];
	double plan_bf, bf_med, bf_min, bf_max, ip_med, wl;
};

struct badcheck {
	int64_t run;
	int task, round;
	double err, tol;
};

struct report {
	const char *db_path, *dir;
	const char *want_task[64];	/* --task: only these task pictures */
	int nwant;
	sqlite3 *db;
	bool has_points, has_dot, has_verdict, has_predictor;
	int npacket;			/* runs predicted packet by packet */
	int nrecal, ndegraded, nunjudged;	/* runs: see load_runs */
	int nleft;			/* runs that did not complete */
	char left_out[1024];		/* them, by status, with their ids */
	struct rrun *runs;
	int nruns;
	struct rtask *tasks;
	int ntasks;
	int *order;			/* point runs, sorted */
	int norder;
	struct point *points;
	int npoints;
	const char **exps;
	int nexps;
	const char **scheds;
	int nscheds;
	long rounds_total, rounds_held;
	struct badcheck bad[MAX_BAD_CHECKS];
	int nbad;
	bool gnuplot, dot;
	int nfail;
	char *made[256];		/* files rendered, for the summary */
	int nmade;
};

struct unit {
	const char *name;
	double div;
};

/* ---- small helpers ------------------------------------------------------ */

static char *dup_col(sqlite3_stmt *st, int col, const char *dflt)
{
	const unsigned char *s = sqlite3_column_text(st, col);

	return strdup(s ? (const char *)s : dflt);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* median of the finite values of v[0..n) (reorders v); NAN when none */
/* The q-quantile of v[0..n) (nearest rank), NAN if empty; sorts v. */
static double quantile(double *v, int n, double q)
{
	int k;

	if (n <= 0)
		return NAN;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	k = (int)ceil(q * n) - 1;
	return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

static double median(double *v, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		if (isfinite(v[i]))
			v[k++] = v[i];
	if (!k)
		return NAN;
	qsort(v, (size_t)k, sizeof(*v), cmp_double);
	return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

static double fmin_nan(double a, double b)
{
	return isnan(a) ? b : isnan(b) ? a : fmin(a, b);
}

static double fmax_nan(double a, double b)
{
	return isnan(a) ? b : isnan(b) ? a : fmax(a, b);
}

static int sched_rank(const char *s)
{
	return !strcmp(s, "spff") ? 0 : !strcmp(s, "mst") ? 1 : 2;
}

static int sched_cmp(const char *a, const char *b)
{
	int ra = sched_rank(a), rb = sched_rank(b);

	return ra != rb ? ra - rb : strcmp(a, b);
}

static const char *sched_label(const char *s)
{
	if (!strcmp(s, "spff"))
		return "fixed (spff)";
	if (!strcmp(s, "mst"))
		return "flexible (mst)";
	return s;
}

static const char *sched_colour(const char *s, int i)
{
	static const char *const more[] = { "#7570b3", "#e7298a", "#66a61e",
					    "#e6ab02", "#a6761d" };

	if (!strcmp(s, "spff"))
		return "#d95f02";
	if (!strcmp(s, "mst"))
		return "#1b9e77";
	return more[i % 5];
}

/* A name made safe for a file name: [A-Za-z0-9_.-], at most 40 chars. */
static void fname_part(char *dst, size_t len, const char *s)
{
	size_t k = 0;

	for (; *s && k + 1 < len && k < 40; s++)
		dst[k++] = (*s >= 'a' && *s <= 'z') ||
				   (*s >= 'A' && *s <= 'Z') ||
				   (*s >= '0' && *s <= '9') || *s == '_' ||
				   *s == '.' || *s == '-' ?
			   *s :
			   '_';
	if (!k && len > 1)
		dst[k++] = 'x';
	dst[k] = '\0';
}

/* Text for a gnuplot single-quoted string: no quotes, no control chars. */
static void gp_text(FILE *f, const char *s)
{
	for (; *s; s++)
		if (*s != '\'' && *s != '"' && *s != '\\' &&
		    (unsigned char)*s >= ' ')
			fputc(*s, f);
}

/* Text for one markdown table cell. */
static void md_text(FILE *f, const char *s)
{
	if (!s || !*s) {
		fputs("-", f);
		return;
	}
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else if (*s == '\n' || *s == '\r' || *s == '\t')
			fputc(' ', f);
		else
			fputc(*s, f);
	}
}

/* v with prec digits, 'f' after the point or 'g' significant */
static void num(FILE *f, char conv, int prec, double v)
{
	if (conv == 'g')
		fprintf(f, "%.*g", prec, v);
	else
		fprintf(f, "%.*f", prec, v);
}

static void md_num(FILE *f, char conv, int prec, double v)
{
	if (isfinite(v))
		num(f, conv, prec, v);
	else
		fputs("n/a", f);
}

static void csv_num(FILE *f, char conv, int prec, double v)
{
	if (isfinite(v))
		num(f, conv, prec, v);
}

/* A value for a gnuplot data file: '?' is missing. */
static void dat_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, " %.9g", v);
	else
		fputs(" ?", f);
}

static struct unit byte_unit(double max)
{
	static const struct unit u[] = { { "TB", 1e12 }, { "GB", 1e9 },
					 { "MB", 1e6 }, { "kB", 1e3 },
					 { "B", 1 } };

	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]) - 1; i++)
		if (isfinite(max) && max >= u[i].div)
			return u[i];
	return u[sizeof(u) / sizeof(u[0]) - 1];
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static FILE *out_open(struct report *r, const char *name)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", r->dir, name);
	f = fopen(path, "w");
	if (!f) {
		p_err("cannot create '%s': %s", path, strerror(errno));
		r->nfail++;
	}
	return f;
}

static int out_close(struct report *r, FILE *f, const char *name)
{
	bool bad = ferror(f);

	if (fclose(f) || bad) {
		p_err("cannot write '%s/%s': %s", r->dir, name,
		      strerror(errno ? errno : EIO));
		r->nfail++;
		return -EIO;
	}
	return 0;
}

static void made(struct report *r, const char *name)
{
	for (int i = 0; i < r->nmade; i++)
		if (!strcmp(r->made[i], name))
			return;
	if (r->nmade < (int)(sizeof(r->made) / sizeof(r->made[0])))
		r->made[r->nmade++] = strdup(name);
}

/*
 * Run bin with argv in dir, its stdin from /dev/null and its output
 * appended to log; returns the wait status, or -errno when it could not
 * be started. No shell is involved.
 */
static int spawn(const char *bin, char *const argv[], const char *dir,
		 const char *log)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			      0644);

		if (nul < 0 || fd < 0 || dup2(nul, 0) < 0 || dup2(fd, 1) < 0 ||
		    dup2(fd, 2) < 0 || chdir(dir))
			_exit(126);
		execve(bin, argv, environ);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return status;
}

static bool spawn_ok(int status)
{
	return status >= 0 && WIFEXITED(status) && !WEXITSTATUS(status);
}

/* Say why a program run by spawn() failed, naming its log if it wrote
 * one (an empty log is removed at the end). */
static void spawn_fail(const char *bin, int status, const char *what,
		       const char *log)
{
	struct stat sb;
	char how[96];

	if (status < 0) {
		p_err("cannot run '%s': %s", bin, strerror(-status));
		return;
	}
	if (WIFSIGNALED(status))
		snprintf(how, sizeof(how), "killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(how, sizeof(how), "exit status %d",
			 WEXITSTATUS(status));
	if (!stat(log, &sb) && sb.st_size > 0)
		p_err("%s failed on '%s' (%s): see '%s'", bin, what, how, log);
	else
		p_err("%s failed on '%s' (%s)", bin, what, how);
}

/* ---- loading ------------------------------------------------------------ */

static bool has_table(sqlite3 *db, const char *name, int *rc)
{
	sqlite3_stmt *st;
	bool yes = false;

	*rc = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE "
				 "type = 'table' AND name = ?", -1, &st, NULL);
	if (*rc != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	*rc = sqlite3_step(st);
	yes = *rc == SQLITE_ROW;
	if (*rc == SQLITE_ROW || *rc == SQLITE_DONE)
		*rc = SQLITE_OK;
	sqlite3_finalize(st);
	return yes;
}

static bool has_column(sqlite3 *db, const char *table, const char *col)
{
	sqlite3_stmt *st;
	bool yes = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?) "
			       "WHERE name = ?", -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, col, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

/* Open read-only and check the schema; says what is wrong. */
static int db_open(struct report *r)
{
	static const char *const need[] = { "runs", "tasks", "rounds",
					    "links" };
	struct stat sb;
	int rc;

	if (stat(r->db_path, &sb)) {
		p_err("cannot open results database '%s': %s", r->db_path,
		      strerror(errno));
		return -errno;
	}
	if (!S_ISREG(sb.st_mode)) {
		p_err("cannot open results database '%s': not a regular file",
		      r->db_path);
		return -EINVAL;
	}
	if (sqlite3_open_v2(r->db_path, &r->db, SQLITE_OPEN_READONLY,
			    NULL) != SQLITE_OK) {
		p_err("cannot open results database '%s': %s", r->db_path,
		      r->db ? sqlite3_errmsg(r->db) : "out of memory");
		return -EIO;
	}
	sqlite3_busy_timeout(r->db, 5000);
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		if (has_table(r->db, need[i], &rc))
			continue;
		if (rc != SQLITE_OK)
			p_err("'%s' is not a twinlab results database: %s",
			      r->db_path, sqlite3_errmsg(r->db));
		else
			p_err("'%s' is not a twinlab results database (no "
			      "table '%s')", r->db_path, need[i]);
		return -EINVAL;
	}
	r->has_points = has_table(r->db, "points", &rc);
	r->has_dot = has_column(r->db, "runs", "plan_dot");
	r->has_verdict = has_column(r->db, "runs", "verdict") &&
			 has_column(r->db, "runs", "dilation");
	r->has_predictor = has_column(r->db, "runs", "predictor");
	return 0;
}

static int db_fail(struct report *r, const char *what)
{
	p_err("cannot read %s from '%s': %s", what, r->db_path,
	      sqlite3_errmsg(r->db));
	return -EIO;
}

/* Fibres of every lightpath, from the plan JSON (lightpaths[].roadms). */
static void parse_fibres(struct rrun *x, const char *json)
{
	struct json_object *o = json ? json_tokener_parse(json) : NULL;
	struct json_object *lps, *lp, *v;
	size_t n;
	int max = -1;

	if (!o || !json_object_object_get_ex(o, "lightpaths", &lps) ||
	    !json_object_is_type(lps, json_type_array))
		goto out;
	n = json_object_array_length(lps);
	for (size_t i = 0; i < n; i++) {
		lp = json_object_array_get_idx(lps, i);
		if (json_object_object_get_ex(lp, "id", &v) &&
		    json_object_get_int(v) > max)
			max = json_object_get_int(v);
	}
	if (max > 1000000)
		goto out;
	x->nfib = calloc((size_t)max + 2, sizeof(*x->nfib));
	if (!x->nfib)
		goto out;
	x->nlp = max + 1;
	for (size_t i = 0; i < n; i++) {
		struct json_object *roadms;
		int id;

		lp = json_object_array_get_idx(lps, i);
		if (!json_object_object_get_ex(lp, "id", &v))
			continue;
		id = json_object_get_int(v);
		if (id >= 0 && id < x->nlp &&
		    json_object_object_get_ex(lp, "roadms", &roadms) &&
		    json_object_array_length(roadms) > 0)
			x->nfib[id] = (int)json_object_array_length(roadms) - 1;
	}
	x->json_ok = true;
out:
	json_object_put(o);
}

static int load_runs(struct report *r)
{
	char sql[1024];
	sqlite3_stmt *st;
	int n = 0, cap = 16, rc;

	/*
	 * Only complete runs are results: ok, or failed (some task failed;
	 * the others ran every round). Attempts --dilation auto abandoned to
	 * recalibrate, and runs aborted, partial or still running are
	 * counted (left_out), not loaded.
	 */
	snprintf(sql, sizeof(sql),
		 "SELECT r.id, r.scenario, r.scheduler, r.scale,"
		 " r.pred_bytes_links, r.wavelength_links, r.status, r.rounds,"
		 " r.plan_json, %s, %s, %s FROM runs r %s"
		 " WHERE r.status IN ('ok', 'failed') ORDER BY r.id",
		 r->has_points ? "p.experiment, p.nlocals, p.seed,"
				 " p.run IS NOT NULL" :
				 "NULL, NULL, NULL, 0",
		 r->has_verdict ? "r.verdict, r.dilation" : "NULL, NULL",
		 r->has_predictor ? "r.predictor" : "NULL",
		 r->has_points ? "LEFT JOIN points p ON p.run = r.id" : "");
	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_fail(r, "the runs");
	r->runs = calloc((size_t)cap, sizeof(*r->runs));
	if (!r->runs)
		goto nomem;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rrun *x;

		if (n == cap) {
			struct rrun *m = realloc(r->runs, sizeof(*m) *
							 (size_t)cap * 2);

			if (!m)
				goto nomem;
			r->runs = m;
			memset(m + cap, 0, sizeof(*m) * (size_t)cap);
			cap *= 2;
		}
		x = &r->runs[n++];
		r->nruns = n;
		x->id = sqlite3_column_int64(st, 0);
		x->scenario = dup_col(st, 1, "?");
		x->scheduler = dup_col(st, 2, "?");
		x->scale = sqlite3_column_type(st, 3) == SQLITE_NULL ?
				   1 :
				   sqlite3_column_double(st, 3);
		if (!(x->scale > 0))
			x->scale = 1;
		x->plan_bf = sqlite3_column_type(st, 4) == SQLITE_NULL ?
				     NAN :
				     sqlite3_column_double(st, 4);
		x->wl = sqlite3_column_type(st, 5) == SQLITE_NULL ?
				NAN :
				sqlite3_column_double(st, 5);
		x->status = dup_col(st, 6, "?");
		x->rounds_cfg = sqlite3_column_int(st, 7);
		parse_fibres(x, (const char *)sqlite3_column_text(st, 8));
		x->experiment = dup_col(st, 9, "");
		x->nlocals = sqlite3_column_int(st, 10);
		x->seed = sqlite3_column_int64(st, 11);
		x->point = sqlite3_column_int(st, 12) != 0;
		x->verdict = dup_col(st, 13, "");
		x->dilation = sqlite3_column_type(st, 14) == SQLITE_NULL ?
				      NAN :
				      sqlite3_column_double(st, 14);
		x->predictor = dup_col(st, 15, "fluid");
		if (!x->scenario || !x->scheduler || !x->status ||
		    !x->experiment || !x->verdict || !x->predictor)
			goto nomem;
		r->npacket += !strcmp(x->predictor, "packet");
		x->degraded = x->verdict[0] &&
			      strncmp(x->verdict, "faithful", 8) != 0;
		r->ndegraded += x->degraded;
		r->nunjudged += !x->verdict[0];
		for (int k = 0; k < NPH; k++)
			x->meas[k] = x->pred[k] = NAN;
		x->ip_bytes = x->bf_bytes = NAN;
		x->last_round = INT_MIN;
		x->bf_known = x->json_ok;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(r, "the runs");
	if (sqlite3_prepare_v2(r->db, "SELECT count(*) FROM runs WHERE "
			       "status = 'recalibrated'", -1, &st,
			       NULL) != SQLITE_OK)
		return db_fail(r, "the runs");
	if (sqlite3_step(st) == SQLITE_ROW)
		r->nrecal = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	/* the others left out, by status, with their ids */
	if (sqlite3_prepare_v2(r->db, "SELECT coalesce(status, 'unknown'), "
			       "count(*), group_concat(id, ', ') FROM runs "
			       "WHERE status IS NULL OR status NOT IN ('ok', "
			       "'failed', 'recalibrated') GROUP BY 1 ORDER BY "
			       "1", -1, &st, NULL) != SQLITE_OK)
		return db_fail(r, "the runs");
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *what = (const char *)sqlite3_column_text(st, 0);
		const char *ids = (const char *)sqlite3_column_text(st, 2);
		size_t used = strlen(r->left_out);

		r->nleft += sqlite3_column_int(st, 1);
		snprintf(r->left_out + used, sizeof(r->left_out) - used,
			 "%s%d %s (run%s %.200s)", used ? "; " : "",
			 sqlite3_column_int(st, 1), what ? what : "?",
			 sqlite3_column_int(st, 1) == 1 ? "" : "s",
			 ids ? ids : "?");
	}
	sqlite3_finalize(st);
	return 0;
nomem:
	sqlite3_finalize(st);
	p_err("out of memory");
	return -ENOMEM;
}

static struct rrun *run_by_id(struct report *r, int64_t id, int *idx)
{
	int lo = 0, hi = r->nruns - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (r->runs[mid].id == id) {
			if (idx)
				*idx = mid;
			return &r->runs[mid];
		}
		if (r->runs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

static int load_tasks(struct report *r)
{
	static const char sql[] =
		"SELECT t.run, t.task, t.name, t.nlocals, t.blocked, t.failed,"
		" t.why, t.pred_round_s, t.pred_bcast_s, t.pred_compute_s,"
		" t.pred_upload_s, count(x.round), avg(x.round_s),"
		" avg(x.bcast_s), avg(x.compute_s), avg(x.upload_s),"
		" total(x.check_ok) "
		"FROM tasks t LEFT JOIN rounds x"
		" ON x.run = t.run AND x.task = t.task "
		"GROUP BY t.run, t.task ORDER BY t.run, t.task";
	sqlite3_stmt *st;
	int n = 0, cap = 64, rc, idx;

	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_fail(r, "the tasks");
	r->tasks = calloc((size_t)cap, sizeof(*r->tasks));
	if (!r->tasks)
		goto nomem;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rtask *t;

		if (!run_by_id(r, sqlite3_column_int64(st, 0), &idx))
			continue;
		if (n == cap) {
			struct rtask *m = realloc(r->tasks, sizeof(*m) *
							  (size_t)cap * 2);

			if (!m)
				goto nomem;
			r->tasks = m;
			memset(m + cap, 0, sizeof(*m) * (size_t)cap);
			cap *= 2;
		}
		t = &r->tasks[n++];
		r->ntasks = n;
		t->run = idx;
		t->task = sqlite3_column_int(st, 1);
		t->name = dup_col(st, 2, "?");
		t->nlocals = sqlite3_column_int(st, 3);
		t->blocked = sqlite3_column_int(st, 4) != 0;
		t->failed = sqlite3_column_int(st, 5) != 0;
		t->why = dup_col(st, 6, "");
		if (!t->name || !t->why)
			goto nomem;
		for (int k = 0; k < NPH; k++) {
			t->pred[k] = sqlite3_column_type(st, 7 + k) ==
						     SQLITE_NULL ?
					     NAN :
					     sqlite3_column_double(st, 7 + k);
			t->meas[k] = sqlite3_column_type(st, 12 + k) ==
						     SQLITE_NULL ?
					     NAN :
					     sqlite3_column_double(st, 12 + k);
		}
		t->nrounds = sqlite3_column_int(st, 11);
		t->nheld = (int)sqlite3_column_double(st, 16);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(r, "the tasks");
	return 0;
nomem:
	sqlite3_finalize(st);
	p_err("out of memory");
	return -ENOMEM;
}

/* Bytes sent per round on the links, and times the lightpaths' fibres. */
static int load_links(struct report *r)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->db, "SELECT run, round, link, bytes "
			       "FROM links ORDER BY run, round", -1, &st,
			       NULL) != SQLITE_OK)
		return db_fail(r, "the links");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rrun *x = run_by_id(r, sqlite3_column_int64(st, 0),
					   NULL);
		const char *name = (const char *)sqlite3_column_text(st, 2);
		double bytes = sqlite3_column_double(st, 3);
		int round = sqlite3_column_int(st, 1), lp, end = 0;

		if (!x)
			continue;
		if (round != x->last_round) {
			x->link_rounds++;
			x->last_round = round;
		}
		x->link_sum += bytes;
		/* "lp3:r1>r2" is lightpath 3; "s1>r1" an access link */
		if (name && sscanf(name, "lp%d:%n", &lp, &end) == 1 && end) {
			if (x->json_ok && lp >= 0 && lp < x->nlp &&
			    x->nfib[lp] > 0)
				x->bf_sum += bytes * x->nfib[lp];
			else
				x->bf_known = false;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(r, "the links");
	return 0;
}

static int load_checks(struct report *r)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->db, "SELECT run, task, round, check_err,"
			       " check_tol FROM rounds WHERE check_ok = 0 "
			       "ORDER BY run, task, round LIMIT ?", -1, &st,
			       NULL) != SQLITE_OK)
		return db_fail(r, "the rounds");
	sqlite3_bind_int(st, 1, MAX_BAD_CHECKS);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct badcheck *b = &r->bad[r->nbad++];

		b->run = sqlite3_column_int64(st, 0);
		b->task = sqlite3_column_int(st, 1);
		b->round = sqlite3_column_int(st, 2);
		b->err = sqlite3_column_double(st, 3);
		b->tol = sqlite3_column_double(st, 4);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(r, "the rounds");
	return 0;
}

/* ---- computing ---------------------------------------------------------- */

static void run_totals(struct report *r)
{
	for (int i = 0; i < r->ntasks; i++) {
		const struct rtask *t = &r->tasks[i];
		struct rrun *x = &r->runs[t->run];

		x->ntasks++;
		x->nblocked += t->blocked;
		x->nfailed += t->failed;
		x->nrounds += t->nrounds;
		x->nheld += t->nheld;
		if (t->nrounds > x->max_rounds)
			x->max_rounds = t->nrounds;
	}
	for (int j = 0; j < r->nruns; j++) {
		struct rrun *x = &r->runs[j];
		double ms[NPH] = { 0 }, ps[NPH] = { 0 };
		int nm = 0, np = 0;

		for (int i = 0; i < r->ntasks; i++) {
			const struct rtask *t = &r->tasks[i];

			if (t->run != j)
				continue;
			if (!t->blocked) {
				np++;
				for (int k = 0; k < NPH; k++)
					ps[k] += t->pred[k];
			}
			if (t->nrounds > 0) {
				nm++;
				for (int k = 0; k < NPH; k++)
					ms[k] += t->meas[k];
			}
		}
		x->nmeasured = nm;
		for (int k = 0; k < NPH; k++) {
			x->meas[k] = nm ? ms[k] / nm : NAN;
			x->pred[k] = np ? ps[k] / np : NAN;
		}
		if (x->link_rounds) {
			x->ip_bytes = x->link_sum / x->link_rounds * x->scale;
			x->bf_bytes = x->bf_known ? x->bf_sum / x->link_rounds *
							    x->scale :
						    NAN;
		}
		r->rounds_total += x->nrounds;
		r->rounds_held += x->nheld;
	}
}

static int cmp_point_run(const void *a, const void *b, void *ctx)
{
	const struct rrun *runs = ctx;
	const struct rrun *x = &runs[*(const int *)a];
	const struct rrun *y = &runs[*(const int *)b];
	int c = strcmp(x->experiment, y->experiment);

	if (!c)
		c = sched_cmp(x->scheduler, y->scheduler);
	if (!c)
		c = x->nlocals - y->nlocals;
	if (!c)
		c = (x->seed > y->seed) - (x->seed < y->seed);
	if (!c)
		c = (x->id > y->id) - (x->id < y->id);
	return c;
}

static void point_stats(struct report *r, struct point *p)
{
	double *v = calloc((size_t)p->n * 4 + 1, sizeof(*v)), *w, *u, *z;
	double psum[NPH] = { 0 }, bfp = 0, wl = 0;
	int np = 0, nb = 0, nw = 0;

	if (!v) {
		p->lat_med = NAN;
		return;
	}
	w = v + p->n;
	u = w + p->n;
	z = u + p->n;
	p->lat_min = p->lat_max = p->bf_min = p->bf_max = NAN;
	for (int i = 0; i < p->n; i++) {
		const struct rrun *x = &r->runs[r->order[p->first + i]];

		/* a degraded run's latency is the host's, not the network's */
		double lat = x->degraded ? NAN : x->meas[PH_ROUND];

		v[i] = lat;
		w[i] = x->bf_bytes;
		u[i] = x->ip_bytes;
		p->nmeas += isfinite(lat);
		p->lat_min = fmin_nan(p->lat_min, lat);
		p->lat_max = fmax_nan(p->lat_max, lat);
		p->bf_min = fmin_nan(p->bf_min, x->bf_bytes);
		p->bf_max = fmax_nan(p->bf_max, x->bf_bytes);
		if (isfinite(x->pred[PH_ROUND])) {
			np++;
			for (int k = 0; k < NPH; k++)
				psum[k] += x->pred[k];
		}
		if (isfinite(x->plan_bf)) {
			bfp += x->plan_bf;
			nb++;
		}
		if (isfinite(x->wl)) {
			wl += x->wl;
			nw++;
		}
	}
	p->lat_med = median(v, p->n);
	p->bf_med = median(w, p->n);
	p->ip_med = median(u, p->n);
	for (int k = 0; k < NPH; k++) {
		for (int i = 0; i < p->n; i++)
			z[i] = r->runs[r->order[p->first + i]].meas[k];
		p->ph_med[k] = median(z, p->n);
		p->ph_pred[k] = np ? psum[k] / np : NAN;
	}
	p->lat_pred = p->ph_pred[PH_ROUND];
	p->plan_bf = nb ? bfp / nb : NAN;
	p->wl = nw ? wl / nw : NAN;
	free(v);
}

static int build_points(struct report *r)
{
	r->order = calloc((size_t)r->nruns + 1, sizeof(*r->order));
	r->points = calloc((size_t)r->nruns + 1, sizeof(*r->points));
	r->exps = calloc((size_t)r->nruns + 1, sizeof(*r->exps));
	r->scheds = calloc((size_t)r->nruns + 1, sizeof(*r->scheds));
	if (!r->order || !r->points || !r->exps || !r->scheds) {
		p_err("out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < r->nruns; i++) {
		int k;

		if (r->runs[i].point)
			r->order[r->norder++] = i;
		for (k = 0; k < r->nscheds; k++)
			if (!strcmp(r->scheds[k], r->runs[i].scheduler))
				break;
		if (k == r->nscheds)
			r->scheds[r->nscheds++] = r->runs[i].scheduler;
	}
	for (int i = 1; i < r->nscheds; i++)
		for (int j = i; j > 0 &&
				sched_cmp(r->scheds[j - 1], r->scheds[j]) > 0;
		     j--) {
			const char *t = r->scheds[j];

			r->scheds[j] = r->scheds[j - 1];
			r->scheds[j - 1] = t;
		}
	qsort_r(r->order, (size_t)r->norder, sizeof(*r->order),
		cmp_point_run, r->runs);
	for (int i = 0; i < r->norder; i++) {
		const struct rrun *x = &r->runs[r->order[i]];
		struct point *p = r->npoints ? &r->points[r->npoints - 1] :
					       NULL;

		if (p && !strcmp(p->experiment, x->experiment) &&
		    !strcmp(p->scheduler, x->scheduler) &&
		    p->nlocals == x->nlocals) {
			p->n++;
			continue;
		}
		p = &r->points[r->npoints++];
		p->experiment = x->experiment;
		p->scheduler = x->scheduler;
		p->nlocals = x->nlocals;
		p->first = i;
		p->n = 1;
		if (!r->nexps ||
		    strcmp(r->exps[r->nexps - 1], x->experiment))
			r->exps[r->nexps++] = x->experiment;
	}
	for (int i = 0; i < r->npoints; i++)
		point_stats(r, &r->points[i]);
	return 0;
}

static const struct point *find_point(const struct report *r,
				      const char *exp, const char *sched,
				      int nlocals)
{
	for (int i = 0; i < r->npoints; i++) {
		const struct point *p = &r->points[i];

		if (!strcmp(p->experiment, exp) &&
		    !strcmp(p->scheduler, sched) && p->nlocals == nlocals)
			return p;
	}
	return NULL;
}

static bool exp_has_sched(const struct report *r, const char *exp,
			  const char *sched)
{
	for (int i = 0; i < r->npoints; i++)
		if (!strcmp(r->points[i].experiment, exp) &&
		    !strcmp(r->points[i].scheduler, sched))
			return true;
	return false;
}

/* File-name suffix of an experiment: empty when there is only one. */
static void exp_suffix(const struct report *r, const char *exp, char *buf,
		       size_t len)
{
	char part[48];

	if (r->nexps <= 1) {
		buf[0] = '\0';
		return;
	}
	fname_part(part, sizeof(part), exp);
	snprintf(buf, len, "-%s", part);
}

/* ---- data files and figures --------------------------------------------- */

static void gp_terminal_loop(FILE *f, const char *stem, int w, int h)
{
	fprintf(f,
		"do for [fmt in \"png svg\"] {\n"
		"if (fmt eq \"svg\") {\n"
		"\tset terminal svg size %d,%d dynamic noenhanced "
		"font \"sans,11\"\n"
		"} else {\n"
		"\tif (strstrt(GPVAL_TERMINALS, \" pngcairo \") > 0) {\n"
		"\t\tset terminal pngcairo size %d,%d noenhanced "
		"font \"sans,11\"\n"
		"\t} else {\n"
		"\t\tset terminal png size %d,%d noenhanced\n"
		"\t}\n"
		"}\n"
		"set output \"%s.\" . fmt\n",
		w, h, w, h, w, h, stem);
}

static void gp_head(FILE *f, const char *what)
{
	fprintf(f, "# twinlab report: %s\n"
		   "# re-plot: cd to this directory and run "
		   "'gnuplot <this file>'\n"
		   "set datafile missing '?'\n"
		   "set grid\n"
		   "set border 3\n"
		   "set tics nomirror\n", what);
}

static void gp_xtics(FILE *f, const struct report *r, const char *exp)
{
	int last = INT_MIN;
	bool first = true;

	/* the numbers of local models measured, in order */
	fputs("set xtics (", f);
	for (;;) {
		int next = INT_MAX;

		for (int i = 0; i < r->npoints; i++)
			if (!strcmp(r->points[i].experiment, exp) &&
			    r->points[i].nlocals > last &&
			    r->points[i].nlocals < next)
				next = r->points[i].nlocals;
		if (next == INT_MAX)
			break;
		fprintf(f, "%s%d", first ? "" : ", ", next);
		first = false;
		last = next;
	}
	fputs(")\n", f);
}

/* Run one gnuplot script in the output directory. */
static void gnuplot(struct report *r, const char *script, const char *stem)
{
	char log[PATH_MAX], path[PATH_MAX];
	char *argv[] = { "gnuplot", (char *)script, NULL };
	int rc;

	if (!r->gnuplot)
		return;
	snprintf(log, sizeof(log), "%s/gnuplot.log", r->dir);
	rc = spawn(GNUPLOT, argv, r->dir, log);
	if (!spawn_ok(rc)) {
		snprintf(path, sizeof(path), "%s/%s", r->dir, script);
		spawn_fail(GNUPLOT, rc, path, log);
		r->nfail++;
		return;
	}
	snprintf(path, sizeof(path), "%s.png", stem);
	made(r, path);
	snprintf(path, sizeof(path), "%s.svg", stem);
	made(r, path);
}

static void write_latency(struct report *r, const char *exp)
{
	char sfx[64], name[128], stem[96], part[48];
	FILE *f;
	int ns = 0;

	exp_suffix(r, exp, sfx, sizeof(sfx));
	for (int s = 0; s < r->nscheds; s++) {
		const char *sc = r->scheds[s];

		if (!exp_has_sched(r, exp, sc))
			continue;
		fname_part(part, sizeof(part), sc);
		snprintf(name, sizeof(name), "latency%s-%s.dat", sfx, part);
		f = out_open(r, name);
		if (!f)
			continue;
		fprintf(f, "# twinlab report: figure (a), scheduler %s, "
			   "experiment %s\n"
			   "# latency of a run: mean over its tasks of the "
			   "task's mean round_s over completed rounds\n"
			   "# nlocals runs measured_runs median_ms min_ms "
			   "max_ms predicted_ms bcast_ms train_ms upload_ms "
			   "pred_bcast_ms pred_train_ms pred_upload_ms\n",
			sc, exp);
		for (int i = 0; i < r->npoints; i++) {
			const struct point *p = &r->points[i];

			if (strcmp(p->experiment, exp) ||
			    strcmp(p->scheduler, sc))
				continue;
			fprintf(f, "%d %d %d", p->nlocals, p->n, p->nmeas);
			dat_num(f, p->lat_med * 1e3);
			dat_num(f, p->lat_min * 1e3);
			dat_num(f, p->lat_max * 1e3);
			dat_num(f, p->lat_pred * 1e3);
			for (int k = PH_BCAST; k < NPH; k++)
				dat_num(f, p->ph_med[k] * 1e3);
			for (int k = PH_BCAST; k < NPH; k++)
				dat_num(f, p->ph_pred[k] * 1e3);
			fputc('\n', f);
		}
		out_close(r, f, name);
	}
	snprintf(stem, sizeof(stem), "fig-latency%s", sfx);
	snprintf(name, sizeof(name), "%s.gp", stem);
	f = out_open(r, name);
	if (!f)
		return;
	gp_head(f, "figure (a), average round latency vs local models");
	fputs("set title '(a) average round latency vs local models per "
	      "task", f);
	if (r->nexps > 1) {
		fputs(" (", f);
		gp_text(f, exp);
		fputc(')', f);
	}
	fputs("'\nset xlabel 'local models per task'\n"
	      "set ylabel 'round latency, training + communication (ms)'\n"
	      "set key below\n"
	      "set offsets graph 0.05, graph 0.05, graph 0.1, 0\n"
	      "set yrange [0:*]\n", f);
	gp_xtics(f, r, exp);
	gp_terminal_loop(f, stem, 960, 640);
	fputs("plot \\\n", f);
	for (int s = 0; s < r->nscheds; s++) {
		const char *sc = r->scheds[s];
		const char *c = sched_colour(sc, s);

		if (!exp_has_sched(r, exp, sc))
			continue;
		fname_part(part, sizeof(part), sc);
		snprintf(name, sizeof(name), "latency%s-%s.dat", sfx, part);
		fprintf(f, "%s'%s' using 1:4:5:6 with yerrorlines lw 2 pt 7 "
			   "lc rgb '%s' title '", ns ? ", \\\n" : "", name, c);
		gp_text(f, sched_label(sc));
		fprintf(f, ", measured: median, min-max over seeds', \\\n"
			   "'%s' using 1:7 with linespoints dt 2 pt 6 "
			   "lc rgb '%s' title '", name, c);
		gp_text(f, sched_label(sc));
		fputs(", twin prediction'", f);
		ns++;
	}
	fputs("\nunset output\n}\n", f);
	snprintf(name, sizeof(name), "%s.gp", stem);
	if (!out_close(r, f, name) && ns)
		gnuplot(r, name, stem);
}

static struct unit exp_byte_unit(const struct report *r, const char *exp)
{
	double max = NAN;

	for (int i = 0; i < r->npoints; i++) {
		const struct point *p = &r->points[i];

		if (strcmp(p->experiment, exp))
			continue;
		max = fmax_nan(max, p->plan_bf);
		max = fmax_nan(max, p->bf_max);
		max = fmax_nan(max, p->ip_med);
	}
	return byte_unit(max);
}

static void write_bandwidth(struct report *r, const char *exp)
{
	struct unit u = exp_byte_unit(r, exp);
	char sfx[64], name[128], stem[96], part[48];
	FILE *f;
	int ns;

	exp_suffix(r, exp, sfx, sizeof(sfx));
	for (int s = 0; s < r->nscheds; s++) {
		const char *sc = r->scheds[s];

		if (!exp_has_sched(r, exp, sc))
			continue;
		fname_part(part, sizeof(part), sc);
		snprintf(name, sizeof(name), "bandwidth%s-%s.dat", sfx, part);
		f = out_open(r, name);
		if (!f)
			continue;
		fprintf(f, "# twinlab report: figure (b), scheduler %s, "
			   "experiment %s; bytes per round in %s, physical "
			   "(emulated x scale)\n"
			   "# plan_bytes_fibres: runs.pred_bytes_links (model "
			   "bytes x fibres crossed, all transfers of a round)\n"
			   "# measured_bytes_fibres: bytes sent on lightpath "
			   "interfaces x the lightpath's fibres (median, min, "
			   "max over seeds)\n"
			   "# measured_bytes_ip_links: bytes sent on every IP "
			   "link that carries a transfer (median over seeds)\n"
			   "# nlocals runs plan_bytes_fibres "
			   "measured_bytes_fibres min max "
			   "measured_bytes_ip_links wavelength_links\n",
			sc, exp, u.name);
		for (int i = 0; i < r->npoints; i++) {
			const struct point *p = &r->points[i];

			if (strcmp(p->experiment, exp) ||
			    strcmp(p->scheduler, sc))
				continue;
			fprintf(f, "%d %d", p->nlocals, p->n);
			dat_num(f, p->plan_bf / u.div);
			dat_num(f, p->bf_med / u.div);
			dat_num(f, p->bf_min / u.div);
			dat_num(f, p->bf_max / u.div);
			dat_num(f, p->ip_med / u.div);
			dat_num(f, p->wl);
			fputc('\n', f);
		}
		out_close(r, f, name);
	}
	snprintf(stem, sizeof(stem), "fig-bandwidth%s", sfx);
	snprintf(name, sizeof(name), "%s.gp", stem);
	f = out_open(r, name);
	if (!f)
		return;
	gp_head(f, "figure (b), consumed bandwidth vs local models");
	fputs("set xlabel 'local models per task'\n"
	      "set key below\n"
	      "set offsets graph 0.05, graph 0.05, graph 0.1, 0\n"
	      "set yrange [0:*]\n", f);
	gp_xtics(f, r, exp);
	gp_terminal_loop(f, stem, 1400, 640);
	fputs("set multiplot layout 1,2 title '(b) consumed bandwidth vs "
	      "local models per task", f);
	if (r->nexps > 1) {
		fputs(" (", f);
		gp_text(f, exp);
		fputc(')', f);
	}
	fprintf(f, "'\nset title 'bytes per round, physical units'\n"
		   "set ylabel '%s x links per round'\n"
		   "plot \\\n", u.name);
	ns = 0;
	for (int s = 0; s < r->nscheds; s++) {
		const char *sc = r->scheds[s];
		const char *c = sched_colour(sc, s);

		if (!exp_has_sched(r, exp, sc))
			continue;
		fname_part(part, sizeof(part), sc);
		snprintf(name, sizeof(name), "bandwidth%s-%s.dat", sfx, part);
		fprintf(f, "%s'%s' using 1:3 with linespoints dt 2 pt 6 lw 2 "
			   "lc rgb '%s' title '", ns ? ", \\\n" : "", name, c);
		gp_text(f, sched_label(sc));
		fprintf(f, ", plan: model bytes x fibres', \\\n"
			   "'%s' using 1:4:5:6 with yerrorlines pt 7 lw 2 "
			   "lc rgb '%s' title '", name, c);
		gp_text(f, sched_label(sc));
		fprintf(f, ", measured: bytes sent x fibres', \\\n"
			   "'%s' using 1:7 with linespoints dt 3 pt 4 "
			   "lc rgb '%s' title '", name, c);
		gp_text(f, sched_label(sc));
		fputs(", measured: bytes sent x IP links'", f);
		ns++;
	}
	fputs("\nset title 'wavelength-links (fibres spanned by lit "
	      "lightpaths)'\nset ylabel 'wavelength-links'\nplot \\\n", f);
	ns = 0;
	for (int s = 0; s < r->nscheds; s++) {
		const char *sc = r->scheds[s];

		if (!exp_has_sched(r, exp, sc))
			continue;
		fname_part(part, sizeof(part), sc);
		snprintf(name, sizeof(name), "bandwidth%s-%s.dat", sfx, part);
		fprintf(f, "%s'%s' using 1:8 with linespoints pt 5 lw 2 "
			   "lc rgb '%s' title '", ns ? ", \\\n" : "", name,
			sched_colour(sc, s));
		gp_text(f, sched_label(sc));
		fputs(", plan'", f);
		ns++;
	}
	fputs("\nunset multiplot\nunset output\n}\n", f);
	snprintf(name, sizeof(name), "%s.gp", stem);
	if (!out_close(r, f, name) && ns)
		gnuplot(r, name, stem);
}

/* Measured, by a run not judged degraded: fit to compare with the twin. */
static bool task_measured(const struct report *r, const struct rtask *t)
{
	return !t->blocked && t->nrounds > 0 && isfinite(t->meas[PH_ROUND]) &&
	       isfinite(t->pred[PH_ROUND]) && !r->runs[t->run].degraded;
}

/* Returns the number of tasks plotted. */
static int write_fidelity(struct report *r)
{
	double lo = NAN, hi = NAN;
	char name[128], part[48];
	int total = 0, ns = 0;
	FILE *f;

	for (int s = 0; s < r->nscheds; s++) {
		const char *sc = r->scheds[s];

		fname_part(part, sizeof(part), sc);
		snprintf(name, sizeof(name), "fidelity-%s.dat", part);
		f = out_open(r, name);
		if (!f)
			continue;
		fprintf(f, "# twinlab report: twin fidelity, scheduler %s\n"
			   "# one line per task of every run: predicted "
			   "round latency vs the mean measured round_s over "
			   "its completed rounds\n"
			   "# run task name nlocals rounds predicted_ms "
			   "measured_ms\n", sc);
		for (int i = 0; i < r->ntasks; i++) {
			const struct rtask *t = &r->tasks[i];
			const struct rrun *x = &r->runs[t->run];

			if (strcmp(x->scheduler, sc) || !task_measured(r, t))
				continue;
			fprintf(f, "%lld %d ", (long long)x->id, t->task);
			fname_part(part, sizeof(part), t->name);
			fprintf(f, "%s %d %d", part, t->nlocals, t->nrounds);
			dat_num(f, t->pred[PH_ROUND] * 1e3);
			dat_num(f, t->meas[PH_ROUND] * 1e3);
			fputc('\n', f);
			lo = fmin_nan(lo, fmin(t->pred[PH_ROUND],
					       t->meas[PH_ROUND]));
			hi = fmax_nan(hi, fmax(t->pred[PH_ROUND],
					       t->meas[PH_ROUND]));
			total++;
		}
		out_close(r, f, name);
	}
	f = out_open(r, "fig-fidelity.gp");
	if (!f)
		return total;
	gp_head(f, "twin fidelity, predicted vs measured round latency");
	fputs("set title 'twin fidelity: round latency per task, all "
	      "runs'\n"
	      "set xlabel 'predicted round latency (ms)'\n"
	      "set ylabel 'measured round latency (ms), mean over rounds'\n"
	      "set key below\n"
	      "set size ratio -1\n", f);
	if (total && lo > 0 && hi / lo > 100)
		fprintf(f, "set logscale xy\nset xrange [%.6g:%.6g]\n"
			   "set yrange [%.6g:%.6g]\n", lo * 1e3 / 1.5,
			hi * 1e3 * 1.5, lo * 1e3 / 1.5, hi * 1e3 * 1.5);
	else if (total)
		fprintf(f, "set xrange [0:%.6g]\nset yrange [0:%.6g]\n",
			hi * 1e3 * 1.05, hi * 1e3 * 1.05);
	gp_terminal_loop(f, "fig-fidelity", 800, 800);
	fputs("plot x with lines dt 2 lc rgb 'gray40' title 'y = x'", f);
	for (int s = 0; s < r->nscheds; s++) {
		const char *sc = r->scheds[s];

		fname_part(part, sizeof(part), sc);
		fprintf(f, ", \\\n'fidelity-%s.dat' using 6:7 with points "
			   "pt 7 ps 1.2 lc rgb '%s' title '", part,
			sched_colour(sc, s));
		gp_text(f, sched_label(sc));
		fputc('\'', f);
		ns++;
	}
	fputs("\nunset output\n}\n", f);
	if (!out_close(r, f, "fig-fidelity.gp") && ns && total)
		gnuplot(r, "fig-fidelity.gp", "fig-fidelity");
	return total;
}

/* The run pictured for a scheduler: the point with the most local models,
 * first seed; without points the newest run. Only runs with a picture. */
static int picture_run(struct report *r, const char *sched)
{
	int best = -1;

	for (int i = 0; i < r->norder; i++) {
		const struct rrun *x = &r->runs[r->order[i]];

		if (strcmp(x->scheduler, sched))
			continue;
		if (best < 0 || x->nlocals > r->runs[best].nlocals ||
		    (x->nlocals == r->runs[best].nlocals &&
		     x->seed < r->runs[best].seed))
			best = r->order[i];
	}
	if (best < 0)
		for (int i = 0; i < r->nruns; i++)
			if (!strcmp(r->runs[i].scheduler, sched))
				best = i;
	return best;
}

static char *plan_dot_of(struct report *r, int64_t id)
{
	sqlite3_stmt *st;
	char *dot = NULL;

	if (!r->has_dot ||
	    sqlite3_prepare_v2(r->db, "SELECT plan_dot FROM runs WHERE id = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_bytes(st, 0) > 0)
		dot = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return dot;
}

struct picture {
	int64_t run;
	char stem[160];
	bool dot, rendered;
	bool straight;			/* drawn with -Gsplines=false */
	char task[40];			/* "" for the network */
	struct picture *tasks;		/* each task's trees, alone */
	int ntasks;
};

/*
 * Render one picture as SVG and PNG. Graphviz 2.43's neato crashes now
 * and then routing curved edges (splines=true) on our bigger plans, the
 * same graph passing on another try; a crash is tried once more, then the
 * picture is drawn with straight edges, which has not crashed.
 */
static void render_picture(struct report *r, struct picture *pc,
			   const char *name)
{
	static const char *const fmt[] = { "svg", "png" };
	char log[PATH_MAX], path[PATH_MAX];
	bool ok = true;

	snprintf(log, sizeof(log), "%s/dot.log", r->dir);
	for (int k = 0; k < 2; k++) {
		bool was = pc->straight;
		char out[200], opt[16], straight[] = "-Gsplines=false";
		char *argv[] = { "dot", opt, "-o", out, (char *)name, NULL,
				 NULL };
		int rc = -1;

		snprintf(opt, sizeof(opt), "-T%s", fmt[k]);
		snprintf(out, sizeof(out), "%s.%s", pc->stem, fmt[k]);
		for (int try = pc->straight ? 2 : 0; try < 3; try++) {
			if (try == 2) {
				argv[4] = straight;
				argv[5] = (char *)name;
				if (!pc->straight)
					p_err("warning: Graphviz crashed "
					      "twice on '%s/%s'; drawing it "
					      "with straight edges", r->dir,
					      name);
				pc->straight = true;
			}
			rc = spawn(DOT, argv, r->dir, log);
			if (rc < 0 || !WIFSIGNALED(rc))
				break;
		}
		if (!spawn_ok(rc)) {
			snprintf(path, sizeof(path), "%s/%s", r->dir, name);
			spawn_fail(DOT, rc, path, log);
			r->nfail++;
			ok = false;
			continue;
		}
		made(r, out);
		/* both formats the same picture */
		if (k == 1 && !was && pc->straight)
			k = -1;
	}
	pc->rendered = ok;
}

static bool task_wanted(const struct report *r, const char *name)
{
	for (int i = 0; i < r->nwant; i++)
		if (!strcmp(r->want_task[i], name))
			return true;
	return r->nwant == 0;
}

/* Each task's trees of run pc->run, as the run stored them. */
static void write_task_pictures(struct report *r, struct picture *pc)
{
	sqlite3_stmt *st;
	int cap = 0;

	if (!has_column(r->db, "pictures", "dot") ||
	    sqlite3_prepare_v2(r->db, "SELECT name, dot FROM pictures WHERE "
			       "run = ? ORDER BY rowid", -1, &st,
			       NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, pc->run);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *task = (const char *)sqlite3_column_text(st, 0);
		const char *dot = (const char *)sqlite3_column_text(st, 1);
		char part[48], name[200];
		struct picture *tp;
		FILE *f;

		if (!task || !dot || !task_wanted(r, task))
			continue;
		if (pc->ntasks == cap) {
			struct picture *m = realloc(pc->tasks, sizeof(*m) *
							     (size_t)(cap * 2 + 8));

			if (!m)
				break;
			pc->tasks = m;
			cap = cap * 2 + 8;
		}
		tp = &pc->tasks[pc->ntasks++];
		memset(tp, 0, sizeof(*tp));
		tp->run = pc->run;
		snprintf(tp->task, sizeof(tp->task), "%s", task);
		fname_part(part, sizeof(part), task);
		snprintf(tp->stem, sizeof(tp->stem), "%.100s-%s", pc->stem,
			 part);
		snprintf(name, sizeof(name), "%s.dot", tp->stem);
		f = out_open(r, name);
		if (!f)
			continue;
		fputs(dot, f);
		if (out_close(r, f, name))
			continue;
		tp->dot = true;
		if (r->dot)
			render_picture(r, tp, name);
	}
	sqlite3_finalize(st);
}

static void write_pictures(struct report *r, struct picture *pic)
{
	for (int s = 0; s < r->nscheds; s++) {
		struct picture *pc = &pic[s];
		int i = picture_run(r, r->scheds[s]);
		char part[48], name[128];
		char *dot;
		FILE *f;

		if (i < 0)
			continue;
		pc->run = r->runs[i].id;
		dot = plan_dot_of(r, pc->run);
		if (!dot)
			continue;
		fname_part(part, sizeof(part), r->scheds[s]);
		snprintf(pc->stem, sizeof(pc->stem), "plan-%s-run%lld", part,
			 (long long)pc->run);
		snprintf(name, sizeof(name), "%s.dot", pc->stem);
		f = out_open(r, name);
		if (!f) {
			free(dot);
			continue;
		}
		fputs(dot, f);
		free(dot);
		if (out_close(r, f, name))
			continue;
		pc->dot = true;
		if (r->dot)
			render_picture(r, pc, name);
		write_task_pictures(r, pc);
	}
}

static void write_runs_csv(struct report *r)
{
	FILE *f = out_open(r, "runs.csv");

	if (!f)
		return;
	fputs("run,scenario,scheduler,experiment,nlocals,seed,status,scale,"
	      "tasks,blocked,failed,measured_tasks,rounds,checks_held,"
	      "measured_ms,predicted_ms,plan_bytes_fibres,"
	      "measured_bytes_fibres,measured_bytes_ip_links,"
	      "wavelength_links\n", f);
	for (int i = 0; i < r->nruns; i++) {
		const struct rrun *x = &r->runs[i];
		char scn[48], sch[48], exp[48];

		fname_part(scn, sizeof(scn), x->scenario);
		fname_part(sch, sizeof(sch), x->scheduler);
		fname_part(exp, sizeof(exp), x->experiment);
		fprintf(f, "%lld,%s,%s,", (long long)x->id, scn, sch);
		if (x->point)
			fprintf(f, "%s,%d,%lld,", exp, x->nlocals,
				(long long)x->seed);
		else
			fputs(",,,", f);
		fname_part(scn, sizeof(scn), x->status);
		fprintf(f, "%s,%g,%d,%d,%d,%d,%ld,%ld,", scn, x->scale,
			x->ntasks, x->nblocked, x->nfailed, x->nmeasured,
			x->nrounds, x->nheld);
		csv_num(f, 'f', 6, x->meas[PH_ROUND] * 1e3);
		fputc(',', f);
		csv_num(f, 'f', 6, x->pred[PH_ROUND] * 1e3);
		fputc(',', f);
		csv_num(f, 'f', 0, x->plan_bf);
		fputc(',', f);
		csv_num(f, 'f', 0, x->bf_bytes);
		fputc(',', f);
		csv_num(f, 'f', 0, x->ip_bytes);
		fputc(',', f);
		csv_num(f, 'f', 0, x->wl);
		fputc('\n', f);
	}
	out_close(r, f, "runs.csv");
}

/* ---- report.md ---------------------------------------------------------- */

static double ratio(double a, double b)
{
	return isfinite(a) && isfinite(b) && b != 0 ? a / b : NAN;
}

struct fid {
	int n, within;
	double med, min, max, r, p95;
};

static struct fid fidelity_stats(const struct report *r, const char *sched)
{
	struct fid s = { .med = NAN, .min = NAN, .max = NAN, .r = NAN,
			 .p95 = NAN };
	double *v = calloc(2 * (size_t)r->ntasks + 2, sizeof(*v)), *e;
	double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;

	if (!v)
		return s;
	e = v + r->ntasks + 1;
	for (int i = 0; i < r->ntasks; i++) {
		const struct rtask *t = &r->tasks[i];
		double q, x = t->pred[PH_ROUND], y = t->meas[PH_ROUND];

		if (strcmp(r->runs[t->run].scheduler, sched) ||
		    !task_measured(r, t) || !(x > 0))
			continue;
		q = y / x;
		v[s.n++] = q;
		s.min = fmin_nan(s.min, q);
		s.max = fmax_nan(s.max, q);
		s.within += fabs(q - 1) <= 0.25;
		sx += x;
		sy += y;
		sxx += x * x;
		syy += y * y;
		sxy += x * y;
	}
	for (int i = 0; i < s.n; i++)
		e[i] = fabs(v[i] - 1);
	s.p95 = quantile(e, s.n, 0.95);
	s.med = median(v, s.n);
	if (s.n >= 3) {
		double cov = sxy - sx * sy / s.n;
		double vx = sxx - sx * sx / s.n, vy = syy - sy * sy / s.n;

		if (vx > 0 && vy > 0)
			s.r = cov / sqrt(vx * vy);
	}
	free(v);
	return s;
}

static const char *pic_name(const struct picture *pic, const char *ext,
			    char *buf, size_t len)
{
	snprintf(buf, len, "%s.%s", pic->stem, ext);
	return buf;
}

/* The largest number of local models measured for both a and b. */
static int common_max_n(const struct report *r, const char *exp,
			const char *a, const char *b)
{
	int best = -1;

	for (int i = 0; i < r->npoints; i++) {
		const struct point *p = &r->points[i], *q;

		if (strcmp(p->experiment, exp) || strcmp(p->scheduler, a) ||
		    !isfinite(p->lat_med))
			continue;
		q = find_point(r, exp, b, p->nlocals);
		if (q && isfinite(q->lat_med) && p->nlocals > best)
			best = p->nlocals;
	}
	return best;
}

/* Returns whether a measured/predicted gap beyond 10% was reported. */
static bool reading_experiment(const struct report *r, FILE *f,
			       const char *exp)
{
	const char *flex = "mst", *fixed = "spff";
	const struct point *a, *b;
	int n = common_max_n(r, exp, flex, fixed), faster = 0, pfaster = 0;
	int both = 0;
	double gap = -1;
	int gk = -1;
	bool off = false;

	if (r->nexps > 1)
		fprintf(f, "\nExperiment `%s`:\n\n", exp);
	if (n < 0) {
		fputs("- The experiment does not have measured latencies for "
		      "both the fixed (spff) and the flexible (mst) scheduler "
		      "at one number of local models, so they are not "
		      "compared.\n", f);
		return false;
	}
	a = find_point(r, exp, flex, n);
	b = find_point(r, exp, fixed, n);
	fprintf(f, "- At %d local models per task the flexible scheduler's "
		   "measured latency is %.3f ms vs %.3f ms for the fixed one "
		   "(ratio %.2f; medians over %d and %d seeds). The poster "
		   "reports %.1f vs %.1f ms (ratio %.2f).", n,
		a->lat_med * 1e3, b->lat_med * 1e3,
		ratio(a->lat_med, b->lat_med), a->nmeas, b->nmeas,
		POSTER_FLEX_MS, POSTER_FIXED_MS,
		POSTER_FLEX_MS / POSTER_FIXED_MS);
	if (a->lat_med < b->lat_med)
		fprintf(f, " Same direction as the poster: flexible is faster "
			   "(%.0f%% less latency here, %.0f%% in the poster)",
			(1 - ratio(a->lat_med, b->lat_med)) * 100,
			(1 - POSTER_FLEX_MS / POSTER_FIXED_MS) * 100);
	else
		fputs(" This differs from the poster: flexible is not faster "
		      "here", f);
	if (a->nmeas < 2 || b->nmeas < 2)
		fputs("; with a single seed there is no seed-to-seed spread "
		      "to judge the difference against.\n", f);
	else if (a->lat_max >= b->lat_min && b->lat_max >= a->lat_min)
		fputs(", but the min-max ranges over seeds overlap, so the "
		      "difference is within the seed-to-seed spread.\n", f);
	else
		fputs("; the min-max ranges over seeds do not overlap.\n", f);
	fputs("  Absolute values are not comparable with the poster's: "
	      "ours is not its testbed but an emulation on one machine.\n",
	      f);
	fprintf(f, "- The twin predicts %.3f ms (flexible) vs %.3f ms "
		   "(fixed) at %d local models (ratio %.2f).\n",
		a->lat_pred * 1e3, b->lat_pred * 1e3, n,
		ratio(a->lat_pred, b->lat_pred));
	for (int i = 0; i < r->npoints; i++) {
		const struct point *p = &r->points[i], *q;

		if (strcmp(p->experiment, exp) || strcmp(p->scheduler, flex))
			continue;
		q = find_point(r, exp, fixed, p->nlocals);
		if (!q || !isfinite(p->lat_med) || !isfinite(q->lat_med))
			continue;
		both++;
		faster += p->lat_med < q->lat_med;
		pfaster += p->lat_pred < q->lat_pred;
	}
	fprintf(f, "- Over the %d numbers of local models measured with "
		   "both schedulers, flexible has the lower measured median "
		   "at %d and the lower prediction at %d.\n", both, faster,
		pfaster);
	for (int k = PH_BCAST; k < NPH; k++) {
		double d = fabs(a->ph_med[k] - b->ph_med[k]);

		if (isfinite(d) && d > gap) {
			gap = d;
			gk = k;
		}
	}
	if (gk > 0)
		fprintf(f, "- Of the phases at %d local models, the largest "
			   "measured difference between the schedulers is in "
			   "%s: %.3f ms flexible vs %.3f ms fixed (predicted "
			   "%.3f vs %.3f ms).\n", n, phase_name[gk],
			a->ph_med[gk] * 1e3, b->ph_med[gk] * 1e3,
			a->ph_pred[gk] * 1e3, b->ph_pred[gk] * 1e3);
	if (isfinite(a->plan_bf) && isfinite(b->plan_bf))
		fprintf(f, "- Bandwidth at %d local models: the flexible plan "
			   "uses %.2f times the fixed plan's bytes x fibres "
			   "and %.0f vs %.0f wavelength-links; measured bytes "
			   "x fibres are %.2f times the fixed scheduler's.\n",
			n, ratio(a->plan_bf, b->plan_bf), a->wl, b->wl,
			ratio(a->bf_med, b->bf_med));
	for (int s = 0; s < r->nscheds; s++) {
		double *v = calloc((size_t)r->npoints + 1, sizeof(*v));
		double lo = NAN, hi = NAN, med;
		int k = 0;

		if (!v)
			return off;
		for (int i = 0; i < r->npoints; i++) {
			const struct point *p = &r->points[i];
			double q = ratio(p->lat_med, p->lat_pred);

			if (strcmp(p->experiment, exp) ||
			    strcmp(p->scheduler, r->scheds[s]) ||
			    !isfinite(q))
				continue;
			v[k++] = q;
			lo = fmin_nan(lo, q);
			hi = fmax_nan(hi, q);
		}
		med = median(v, k);
		free(v);
		if (!k)
			continue;
		fprintf(f, "- %s: measured latency is %.2f times the "
			   "prediction (median over %d numbers of local "
			   "models, range %.2f-%.2f).\n",
			sched_label(r->scheds[s]), med, k, lo, hi);
		off = off || fabs(med - 1) > 0.1;
	}
	return off;
}

static void write_reading(const struct report *r, FILE *f)
{
	bool off = false;
	int said = 0;

	fputs("\n## Reading\n\n"
	      "Computed from the tables below; causes are stated as "
	      "hypotheses only.\n\n", f);
	if (r->npoints) {
		for (int e = 0; e < r->nexps; e++)
			off = reading_experiment(r, f, r->exps[e]) || off;
	} else {
		double m[2] = { NAN, NAN };
		const char *nm[2] = { "mst", "spff" };

		for (int k = 0; k < 2; k++) {
			double *v = calloc((size_t)r->nruns + 1, sizeof(*v));
			int n = 0;

			if (!v)
				return;
			for (int i = 0; i < r->nruns; i++)
				if (!strcmp(r->runs[i].scheduler, nm[k]))
					v[n++] = r->runs[i].meas[PH_ROUND];
			m[k] = median(v, n);
			free(v);
		}
		fputs("- No experiment points: these runs were made with "
		      "`twinlab run`, so latency and bandwidth are not "
		      "plotted against the number of local models.\n", f);
		if (isfinite(m[0]) && isfinite(m[1]))
			fprintf(f, "- Over the runs present (pooled, whatever "
				   "their scenario), the flexible scheduler's "
				   "median measured latency is %.3f ms vs %.3f "
				   "ms fixed (ratio %.2f). The poster reports "
				   "%.1f vs %.1f ms (ratio %.2f).\n",
				m[0] * 1e3, m[1] * 1e3, ratio(m[0], m[1]),
				POSTER_FLEX_MS, POSTER_FIXED_MS,
				POSTER_FLEX_MS / POSTER_FIXED_MS);
	}
	for (int s = 0; s < r->nscheds; s++) {
		struct fid q = fidelity_stats(r, r->scheds[s]);

		if (!q.n)
			continue;
		fprintf(f, "- Twin fidelity, %s: over %d tasks the measured "
			   "round latency is %.2f times the predicted one "
			   "(median; range %.2f-%.2f); %d of %d within 25%%",
			sched_label(r->scheds[s]), q.n, q.med, q.min, q.max,
			q.within, q.n);
		if (isfinite(q.r))
			fprintf(f, "; Pearson r = %.2f", q.r);
		fputs(".\n", f);
		off = off || fabs(q.med - 1) > 0.1;
	}
	if (off)
		fputs("- Where measurement and prediction differ by more than "
		      "10%: the twin models neither TCP dynamics nor headers, "
		      "and takes aggregation as instantaneous (README, "
		      "Prediction). These are hypotheses for the gap, not "
		      "tested here.\n", f);
	for (int s = 0; s < r->nscheds; s++) {
		double *v = calloc((size_t)r->nruns + 1, sizeof(*v));
		double med;
		int n = 0;

		if (!v)
			return;
		for (int i = 0; i < r->nruns; i++)
			if (!strcmp(r->runs[i].scheduler, r->scheds[s]))
				v[n++] = ratio(r->runs[i].bf_bytes,
					       r->runs[i].plan_bf);
		med = median(v, n);
		free(v);
		if (isfinite(med))
			fprintf(f, "%s %s %.2f", said++ ? "," :
				"- Measured bytes x fibres over the plan's "
				"(median over runs):",
				sched_label(r->scheds[s]), med);
	}
	if (said)
		fputs(". The counters include TCP/IP headers, ACKs and "
		      "twinlab's 40-byte message header (which the x scale "
		      "conversion inflates); the plan counts model bytes "
		      "only.\n", f);
	fprintf(f, "- Correctness check: %ld of %ld completed task-rounds "
		   "held.\n", r->rounds_held, r->rounds_total);
}

static void write_runs_table(const struct report *r, FILE *f)
{
	fputs("\n## Runs\n\n"
	      "| run | scenario | scheduler | experiment | local models "
	      "| seed | status | dilation | fidelity | model | tasks "
	      "| blocked | failed | rounds | checks held |\n"
	      "|---:|---|---|---|---:|---:|---|---:|---|---|---:|---:|---:"
	      "|---:|---:|\n",
	      f);
	for (int i = 0; i < r->nruns; i++) {
		const struct rrun *x = &r->runs[i];

		fprintf(f, "| %lld | ", (long long)x->id);
		md_text(f, x->scenario);
		fputs(" | ", f);
		md_text(f, x->scheduler);
		fputs(" | ", f);
		if (x->point) {
			md_text(f, x->experiment);
			fprintf(f, " | %d | %lld | ", x->nlocals,
				(long long)x->seed);
		} else {
			fputs("- | - | - | ", f);
		}
		md_text(f, x->status);
		fputs(" | ", f);
		md_num(f, 'g', 6, x->dilation);
		fputs(" | ", f);
		md_text(f, x->verdict[0] ? x->verdict : "not judged");
		fputs(" | ", f);
		md_text(f, x->predictor);
		fprintf(f, " | %d | %d | %d | %d/%d | %ld/%ld |\n", x->ntasks,
			x->nblocked, x->nfailed, x->max_rounds, x->rounds_cfg,
			x->nheld, x->nrounds);
	}
	fputs("\nrounds: most completed by a task / asked for; checks held: "
	      "completed task-rounds whose correctness check held; dilation: "
	      "the emulation ran this many times slower than the scenario; "
	      "fidelity: the monitor's verdict (README, Fidelity); model: the "
	      "twin's model that predicted the run.\n", f);
	if (r->nleft)
		fprintf(f, "\n%d run%s did not complete and %s left out of "
			"this report: %s. Status: aborted (stopped before its "
			"end, or its process is gone), partial (not every "
			"round was stored), running (still going).\n",
			r->nleft, r->nleft == 1 ? "" : "s",
			r->nleft == 1 ? "is" : "are", r->left_out);
	if (r->nrecal)
		fprintf(f, "\n%d attempt%s abandoned by --dilation auto to "
			"recalibrate %s not listed.\n", r->nrecal,
			r->nrecal == 1 ? "" : "s",
			r->nrecal == 1 ? "is" : "are");
	if (r->ndegraded)
		fprintf(f, "\n%d run%s judged degraded: %s measured latency "
			"is kept out of every figure, fit and median.\n",
			r->ndegraded, r->ndegraded == 1 ? "" : "s",
			r->ndegraded == 1 ? "its" : "their");
	if (r->nunjudged)
		fprintf(f, "\n%d run%s recorded before the fidelity monitor: "
			"not judged, shown as measured.\n", r->nunjudged,
			r->nunjudged == 1 ? "" : "s");
}

static void write_failures(const struct report *r, FILE *f)
{
	int n = 0;

	fputs("\n## Failed and blocked tasks\n\n", f);
	for (int i = 0; i < r->ntasks; i++) {
		const struct rtask *t = &r->tasks[i];
		const struct rrun *x = &r->runs[t->run];

		if (!t->blocked && !t->failed)
			continue;
		if (!n++)
			fputs("| run | scheduler | task | local models | what "
			      "| rounds completed | reason |\n"
			      "|---:|---|---|---:|---|---:|---|\n", f);
		fprintf(f, "| %lld | ", (long long)x->id);
		md_text(f, x->scheduler);
		fputs(" | ", f);
		md_text(f, t->name);
		fprintf(f, " | %d | %s | %d | ", t->nlocals,
			t->blocked ? "blocked" : "failed", t->nrounds);
		md_text(f, t->why);
		fputs(" |\n", f);
	}
	if (!n)
		fputs("None.\n", f);
}

static void write_checks(const struct report *r, FILE *f)
{
	fprintf(f, "\n## Correctness checks\n\n"
		   "%ld of %ld completed task-rounds held the check (the "
		   "global model's weight equals the sum of the locals' and "
		   "its projections the weighted mean of theirs within "
		   "float32 rounding).\n\n", r->rounds_held, r->rounds_total);
	fputs("| scheduler | runs | task-rounds | held | failed |\n"
	      "|---|---:|---:|---:|---:|\n", f);
	for (int s = 0; s < r->nscheds; s++) {
		long tot = 0, held = 0;
		int n = 0;

		for (int i = 0; i < r->nruns; i++)
			if (!strcmp(r->runs[i].scheduler, r->scheds[s])) {
				n++;
				tot += r->runs[i].nrounds;
				held += r->runs[i].nheld;
			}
		fputs("| ", f);
		md_text(f, sched_label(r->scheds[s]));
		fprintf(f, " | %d | %ld | %ld | %ld |\n", n, tot, held,
			tot - held);
	}
	if (!r->nbad)
		return;
	fprintf(f, "\nRounds that failed the check%s:\n\n"
		   "| run | task | round | error | tolerance |\n"
		   "|---:|---:|---:|---:|---:|\n",
		r->nbad == MAX_BAD_CHECKS ? " (the first 20)" : "");
	for (int i = 0; i < r->nbad; i++)
		fprintf(f, "| %lld | %d | %d | %.3g | %.3g |\n",
			(long long)r->bad[i].run, r->bad[i].task,
			r->bad[i].round, r->bad[i].err, r->bad[i].tol);
}

static void fig_link(const struct report *r, FILE *f, const char *stem,
		     const char *alt)
{
	char png[128];
	bool have = false;

	snprintf(png, sizeof(png), "%s.png", stem);
	for (int i = 0; i < r->nmade; i++)
		have = have || !strcmp(r->made[i], png);
	if (have)
		fprintf(f, "\n![%s](%s.png) ([SVG](%s.svg), script "
			   "`%s.gp`)\n", alt, stem, stem, stem);
	else
		fprintf(f, "\n(figure not rendered, %s; the script `%s.gp` "
			   "and its data are here)\n",
			r->gnuplot ? "gnuplot failed" :
				     "gnuplot is not installed (Debian "
				     "package gnuplot-nox)", stem);
}

static void write_latency_table(const struct report *r, FILE *f,
				const char *exp)
{
	char stem[96], sfx[64];

	exp_suffix(r, exp, sfx, sizeof(sfx));
	snprintf(stem, sizeof(stem), "fig-latency%s", sfx);
	fputs("\n## (a) Average latency vs number of local models", f);
	if (r->nexps > 1)
		fprintf(f, ": experiment `%s`", exp);
	fputs("\n\nLatency of a run: the mean over its tasks of each task's "
	      "mean round latency (training + communication) over its "
	      "completed rounds. Measured: median and min-max over seeds. "
	      "Predicted: the twin's round latency, mean over the placed "
	      "tasks, mean over seeds.\n", f);
	fig_link(r, f, stem, "(a) latency vs local models");
	fputs("\n| scheduler | local models | seeds | measured median (ms) "
	      "| min (ms) | max (ms) | predicted (ms) "
	      "| measured / predicted |\n"
	      "|---|---:|---:|---:|---:|---:|---:|---:|\n", f);
	for (int i = 0; i < r->npoints; i++) {
		const struct point *p = &r->points[i];

		if (strcmp(p->experiment, exp))
			continue;
		fputs("| ", f);
		md_text(f, sched_label(p->scheduler));
		fprintf(f, " | %d | %d | ", p->nlocals, p->nmeas);
		md_num(f, 'f', 3, p->lat_med * 1e3);
		fputs(" | ", f);
		md_num(f, 'f', 3, p->lat_min * 1e3);
		fputs(" | ", f);
		md_num(f, 'f', 3, p->lat_max * 1e3);
		fputs(" | ", f);
		md_num(f, 'f', 3, p->lat_pred * 1e3);
		fputs(" | ", f);
		md_num(f, 'f', 2, ratio(p->lat_med, p->lat_pred));
		fputs(" |\n", f);
	}
	fputs("\nPhases (median over seeds of the per-run mean; predicted in "
	      "brackets), ms:\n\n"
	      "| scheduler | local models | broadcast | training "
	      "| upload |\n|---|---:|---:|---:|---:|\n", f);
	for (int i = 0; i < r->npoints; i++) {
		const struct point *p = &r->points[i];

		if (strcmp(p->experiment, exp))
			continue;
		fputs("| ", f);
		md_text(f, sched_label(p->scheduler));
		fprintf(f, " | %d", p->nlocals);
		for (int k = PH_BCAST; k < NPH; k++) {
			fputs(" | ", f);
			md_num(f, 'f', 3, p->ph_med[k] * 1e3);
			fputs(" (", f);
			md_num(f, 'f', 3, p->ph_pred[k] * 1e3);
			fputc(')', f);
		}
		fputs(" |\n", f);
	}
}

static void write_bandwidth_table(const struct report *r, FILE *f,
				  const char *exp)
{
	struct unit u = exp_byte_unit(r, exp);
	char stem[96], sfx[64];

	exp_suffix(r, exp, sfx, sizeof(sfx));
	snprintf(stem, sizeof(stem), "fig-bandwidth%s", sfx);
	fputs("\n## (b) Consumed bandwidth vs number of local models", f);
	if (r->nexps > 1)
		fprintf(f, ": experiment `%s`", exp);
	fprintf(f, "\n\nPer round, physical units (%s; emulated bytes x the "
		   "scenario's `scale`).\n"
		   "Plan: model bytes x fibres crossed, summed over every "
		   "transfer of a round (`runs.pred_bytes_links`). "
		   "Measured x fibres: bytes sent on each lightpath interface "
		   "times that lightpath's fibres (the plan's measure, with "
		   "headers and ACKs). Measured x IP links: bytes sent on "
		   "every IP link that carries a transfer, access links "
		   "included, counted once per IP hop. Wavelength-links: "
		   "fibres spanned by the lit lightpaths (a count). Medians "
		   "over seeds, [min, max] for the measured x fibres.\n",
		u.name);
	fig_link(r, f, stem, "(b) bandwidth vs local models");
	fprintf(f, "\n| scheduler | local models | plan bytes x fibres (%s) "
		   "| measured bytes x fibres (%s) | measured / plan "
		   "| measured bytes x IP links (%s) | wavelength-links |\n"
		   "|---|---:|---:|---:|---:|---:|---:|\n",
		u.name, u.name, u.name);
	for (int i = 0; i < r->npoints; i++) {
		const struct point *p = &r->points[i];

		if (strcmp(p->experiment, exp))
			continue;
		fputs("| ", f);
		md_text(f, sched_label(p->scheduler));
		fprintf(f, " | %d | ", p->nlocals);
		md_num(f, 'g', 4, p->plan_bf / u.div);
		fputs(" | ", f);
		md_num(f, 'g', 4, p->bf_med / u.div);
		fputs(" [", f);
		md_num(f, 'g', 4, p->bf_min / u.div);
		fputs(", ", f);
		md_num(f, 'g', 4, p->bf_max / u.div);
		fputs("] | ", f);
		md_num(f, 'f', 2, ratio(p->bf_med, p->plan_bf));
		fputs(" | ", f);
		md_num(f, 'g', 4, p->ip_med / u.div);
		fputs(" | ", f);
		md_num(f, 'g', 4, p->wl);
		fputs(" |\n", f);
	}
}

/* Without experiment points: one line per scheduler over its runs. */
static void write_sched_table(const struct report *r, FILE *f)
{
	double max = NAN;
	struct unit u;

	for (int i = 0; i < r->nruns; i++) {
		max = fmax_nan(max, r->runs[i].plan_bf);
		max = fmax_nan(max, r->runs[i].bf_bytes);
		max = fmax_nan(max, r->runs[i].ip_bytes);
	}
	u = byte_unit(max);
	fprintf(f, "\n## Runs by scheduler\n\n"
		   "No experiment points in this database (runs made with "
		   "`twinlab run`), so there are no figures (a) and (b); the "
		   "runs are grouped by scheduler, whatever their scenario. "
		   "Latency of a run: the mean over its tasks of each task's "
		   "mean round latency; medians over runs. Bytes per round, "
		   "physical (%s): plan bytes x fibres, measured bytes x "
		   "fibres (lightpath interfaces, with headers and ACKs), "
		   "measured bytes x IP links.\n\n"
		   "| scheduler | runs | measured median (ms) | min (ms) "
		   "| max (ms) | predicted (ms) | plan bytes x fibres (%s) "
		   "| measured bytes x fibres (%s) | measured bytes x IP "
		   "links (%s) | wavelength-links |\n"
		   "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
		u.name, u.name, u.name, u.name);
	for (int s = 0; s < r->nscheds; s++) {
		double *v = calloc((size_t)r->nruns * 6 + 1, sizeof(*v));
		double *w[6], lo = NAN, hi = NAN;
		int n = 0;

		if (!v)
			return;
		for (int k = 0; k < 6; k++)
			w[k] = v + (size_t)k * r->nruns;
		for (int i = 0; i < r->nruns; i++) {
			const struct rrun *x = &r->runs[i];

			if (strcmp(x->scheduler, r->scheds[s]))
				continue;
			w[0][n] = x->meas[PH_ROUND];
			w[1][n] = x->pred[PH_ROUND];
			w[2][n] = x->plan_bf;
			w[3][n] = x->bf_bytes;
			w[4][n] = x->ip_bytes;
			w[5][n] = x->wl;
			lo = fmin_nan(lo, x->meas[PH_ROUND]);
			hi = fmax_nan(hi, x->meas[PH_ROUND]);
			n++;
		}
		fputs("| ", f);
		md_text(f, sched_label(r->scheds[s]));
		fprintf(f, " | %d | ", n);
		md_num(f, 'f', 3, median(w[0], n) * 1e3);
		fputs(" | ", f);
		md_num(f, 'f', 3, lo * 1e3);
		fputs(" | ", f);
		md_num(f, 'f', 3, hi * 1e3);
		fputs(" | ", f);
		md_num(f, 'f', 3, median(w[1], n) * 1e3);
		for (int k = 2; k < 5; k++) {
			fputs(" | ", f);
			md_num(f, 'g', 4, median(w[k], n) / u.div);
		}
		fputs(" | ", f);
		md_num(f, 'g', 4, median(w[5], n));
		fputs(" |\n", f);
		free(v);
	}
}

static void write_fidelity_table(const struct report *r, FILE *f, int n)
{
	fputs("\n## Twin fidelity: predicted vs measured round latency\n\n"
	      "One point per task of every run: the twin's predicted round "
	      "latency against the mean measured round latency over the "
	      "task's completed rounds; the dashed line is y = x. Runs the "
	      "fidelity monitor judged degraded are left out. ", f);
	if (!r->npacket)
		fputs("Every prediction is the twin's fluid model "
		      "(`twin/predict.h`: transfers share every link max-min "
		      "fairly; sizes are wire bytes as in `twin/wire.h`).\n", f);
	else if (r->npacket == r->nruns)
		fputs("Every prediction is the twin's packet model "
		      "(`twin/predict.h`, `predict_round_packets`: every TCP "
		      "segment, links serving the transfers in turn).\n", f);
	else
		fprintf(f, "%d run%s predicted by the twin's packet model "
			"(`predict_round_packets`), the others by its fluid "
			"model (`predict_round`); the runs table says which.\n",
			r->npacket, r->npacket == 1 ? " was" : "s were");
	if (!n) {
		fputs("\nNo task completed a round: nothing to compare.\n", f);
		return;
	}
	fig_link(r, f, "fig-fidelity", "twin fidelity");
	fputs("\n| scheduler | tasks | measured / predicted, median "
	      "| min | max | p95 of abs(error) | within 25% | Pearson r |\n"
	      "|---|---:|---:|---:|---:|---:|---:|---:|\n", f);
	for (int s = 0; s < r->nscheds; s++) {
		struct fid q = fidelity_stats(r, r->scheds[s]);

		fputs("| ", f);
		md_text(f, sched_label(r->scheds[s]));
		fprintf(f, " | %d | ", q.n);
		md_num(f, 'f', 2, q.med);
		fputs(" | ", f);
		md_num(f, 'f', 2, q.min);
		fputs(" | ", f);
		md_num(f, 'f', 2, q.max);
		fputs(" | ", f);
		md_num(f, 'f', 3, q.p95);
		fprintf(f, " | %d | ", q.within);
		md_num(f, 'f', 2, q.r);
		fputs(" |\n", f);
	}
	fputs("\nPer task:\n\n"
	      "| run | scheduler | task | local models | rounds "
	      "| predicted (ms) | measured (ms) | measured / predicted |\n"
	      "|---:|---|---|---:|---:|---:|---:|---:|\n", f);
	for (int i = 0; i < r->ntasks; i++) {
		const struct rtask *t = &r->tasks[i];
		const struct rrun *x = &r->runs[t->run];

		if (!task_measured(r, t))
			continue;
		fprintf(f, "| %lld | ", (long long)x->id);
		md_text(f, x->scheduler);
		fputs(" | ", f);
		md_text(f, t->name);
		fprintf(f, " | %d | %d | %.3f | %.3f | ", t->nlocals,
			t->nrounds, t->pred[PH_ROUND] * 1e3,
			t->meas[PH_ROUND] * 1e3);
		md_num(f, 'f', 2, ratio(t->meas[PH_ROUND], t->pred[PH_ROUND]));
		fputs(" |\n", f);
	}
}

static void write_pictures_md(struct report *r, FILE *f,
			      const struct picture *pic)
{
	char buf[200];

	fputs("\n## Plan pictures\n\n", f);
	for (int s = 0; s < r->nscheds; s++) {
		const struct picture *pc = &pic[s];
		const struct rrun *x = pc->run ? run_by_id(r, pc->run, NULL) :
						 NULL;

		fputs("- ", f);
		md_text(f, sched_label(r->scheds[s]));
		if (!x) {
			fputs(": no run.\n", f);
			continue;
		}
		fprintf(f, ", run %lld", (long long)x->id);
		if (x->point)
			fprintf(f, " (%d local models, seed %lld)", x->nlocals,
				(long long)x->seed);
		if (!pc->dot) {
			fputs(": no picture stored with the run (made before "
			      "runs kept their plan's DOT text).\n", f);
			continue;
		}
		if (pc->rendered)
			fprintf(f, ": ![plan](%s) ([SVG](%s.svg), DOT "
				   "`%s.dot`)%s\n",
				pic_name(pc, "png", buf, sizeof(buf)),
				pc->stem, pc->stem,
				pc->straight ? " (edges drawn straight: "
					       "Graphviz crashed routing "
					       "curved ones)" : "");
		else
			fprintf(f, ": `%s.dot` (not rendered, %s)\n", pc->stem,
				r->dot ? "Graphviz failed" :
					 "Graphviz is not installed (Debian "
					 "package graphviz)");
		for (int k = 0; k < pc->ntasks; k++) {
			const struct picture *tp = &pc->tasks[k];

			fputs("  - task ", f);
			md_text(f, tp->task);
			if (tp->rendered)
				fprintf(f, ": ![%s](%s) ([SVG](%s.svg))\n",
					tp->task,
					pic_name(tp, "png", buf, sizeof(buf)),
					tp->stem);
			else if (tp->dot)
				fprintf(f, ": `%s.dot` (not rendered)\n",
					tp->stem);
			else
				fputs(": not written\n", f);
		}
	}
}

static int write_md(struct report *r, const struct picture *pic, int nfid)
{
	FILE *f = out_open(r, "report.md");

	if (!f)
		return -EIO;
	fprintf(f, "# twinlab report\n\n"
		   "Made by `twinlab report` from the results database `%s` "
		   "alone: %d runs, %d of them experiment points",
		r->db_path, r->nruns, r->norder);
	if (r->nexps) {
		fputs(" (experiment", f);
		fputs(r->nexps > 1 ? "s " : " ", f);
		for (int e = 0; e < r->nexps; e++)
			fprintf(f, "%s`%s`", e ? ", " : "", r->exps[e]);
		fputc(')', f);
	}
	fputs(". Latencies are measured wall-clock milliseconds per round; "
	      "fixed = `spff`, flexible = `mst`. Data files (`.dat`, "
	      "`runs.csv`) and gnuplot scripts (`.gp`) are next to this "
	      "file.\n", f);
	write_reading(r, f);
	for (int e = 0; e < r->nexps; e++) {
		write_latency_table(r, f, r->exps[e]);
		write_bandwidth_table(r, f, r->exps[e]);
	}
	if (!r->npoints)
		write_sched_table(r, f);
	write_fidelity_table(r, f, nfid);
	write_pictures_md(r, f, pic);
	write_runs_table(r, f);
	write_failures(r, f);
	write_checks(r, f);
	return out_close(r, f, "report.md");
}

/* ---- the command -------------------------------------------------------- */

static void report_release(struct report *r)
{
	for (int i = 0; i < r->nruns; i++) {
		free(r->runs[i].scenario);
		free(r->runs[i].scheduler);
		free(r->runs[i].status);
		free(r->runs[i].verdict);
		free(r->runs[i].predictor);
		free(r->runs[i].experiment);
		free(r->runs[i].nfib);
	}
	for (int i = 0; i < r->ntasks; i++) {
		free(r->tasks[i].name);
		free(r->tasks[i].why);
	}
	for (int i = 0; i < r->nmade; i++)
		free(r->made[i]);
	free(r->runs);
	free(r->tasks);
	free(r->order);
	free(r->points);
	free(r->exps);
	free(r->scheds);
	sqlite3_close(r->db);
}

static void report_usage(FILE *f)
{
	fprintf(f, "usage: %s report DB [--out DIR] [--task NAME]...\n\n"
		   "Makes figures and report.md from the results database DB "
		   "alone: latency and\nbandwidth against the number of local "
		   "models per scheduler (from 'twinlab\nexperiment' points), "
		   "the twin's predicted against measured latency per task,\n"
		   "the plans' Graphviz pictures, the runs, failures and "
		   "correctness checks.\n"
		   "  --out DIR    where to write (default: DB without '.db', "
		   "plus '-report')\n"
		   "  --task NAME  draw only this task's trees (repeatable; "
		   "default: every task's)\n"
		   "Figures need gnuplot (Debian package gnuplot-nox), "
		   "pictures Graphviz (graphviz).\n", prog);
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "task", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct report r = { 0 };
	struct picture *pic = NULL;
	char dflt[PATH_MAX], abs[PATH_MAX];
	int c, e, nfid, rc = 1;

	while ((c = getopt_long(argc, argv, "o:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			r.dir = optarg;
			break;
		case 't':
			if (r.nwant == (int)(sizeof(r.want_task) /
					     sizeof(r.want_task[0]))) {
				p_err("at most %zu --task options",
				      sizeof(r.want_task) /
					      sizeof(r.want_task[0]));
				return EXIT_USAGE;
			}
			r.want_task[r.nwant++] = optarg;
			break;
		case 'h':
			report_usage(stdout);
			return 0;
		default:
			report_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		report_usage(stderr);
		return EXIT_USAGE;
	}
	r.db_path = argv[optind];
	if (!r.dir) {
		size_t n = strlen(r.db_path);

		if (n > 3 && !strcmp(r.db_path + n - 3, ".db"))
			n -= 3;
		snprintf(dflt, sizeof(dflt), "%.*s-report", (int)n, r.db_path);
		r.dir = dflt;
	}
	if (db_open(&r))
		goto out;
	if (load_runs(&r) || load_tasks(&r) || load_links(&r) ||
	    load_checks(&r))
		goto out;
	if (!r.nruns) {
		if (r.nleft)
			p_err("no complete runs in '%s': nothing to report "
			      "(%s)", r.db_path, r.left_out);
		else
			p_err("no runs in '%s': nothing to report", r.db_path);
		goto out;
	}
	run_totals(&r);
	if (build_points(&r))
		goto out;
	e = mkdir_p(r.dir);
	if (e) {
		p_err("cannot create '%s': %s", r.dir, strerror(-e));
		goto out;
	}
	r.gnuplot = access(GNUPLOT, X_OK) == 0;
	r.dot = access(DOT, X_OK) == 0;
	if (!r.gnuplot)
		p_err("warning: no '%s': install the Debian package "
		      "'gnuplot-nox' for the figures; writing the report and "
		      "the data without them", GNUPLOT);
	if (!r.dot)
		p_err("warning: no '%s': install the Debian package "
		      "'graphviz' for the plan pictures", DOT);
	/* a fresh log per report */
	for (int k = 0; k < 2; k++) {
		char log[PATH_MAX];

		snprintf(log, sizeof(log), "%s/%s", r.dir,
			 k ? "dot.log" : "gnuplot.log");
		unlink(log);
	}
	for (int i = 0; i < r.nexps; i++) {
		write_latency(&r, r.exps[i]);
		write_bandwidth(&r, r.exps[i]);
	}
	nfid = write_fidelity(&r);
	pic = calloc((size_t)r.nscheds + 1, sizeof(*pic));
	if (!pic) {
		p_err("out of memory");
		goto out;
	}
	write_pictures(&r, pic);
	write_runs_csv(&r);
	if (write_md(&r, pic, nfid))
		goto out;
	/* the programs' logs are kept only when they said something */
	for (int k = 0; k < 2; k++) {
		char log[PATH_MAX];
		struct stat sb;

		snprintf(log, sizeof(log), "%s/%s", r.dir,
			 k ? "dot.log" : "gnuplot.log");
		if (!stat(log, &sb) && sb.st_size == 0)
			unlink(log);
	}
	if (!realpath(r.dir, abs))
		snprintf(abs, sizeof(abs), "%s", r.dir);
	printf("report: %s/report.md (%d runs, %d experiment points)\n", abs,
	       r.nruns, r.npoints);
	if (r.nmade) {
		printf("figures and pictures:\n");
		for (int i = 0; i < r.nmade; i++)
			printf("  %s/%s\n", abs, r.made[i]);
	}
	printf("data: %s/{runs.csv,*.dat}, gnuplot scripts %s/*.gp\n", abs,
	       abs);
	rc = r.nfail ? 1 : 0;
out:
	for (int i = 0; pic && i < r.nscheds; i++)
		free(pic[i].tasks);
	free(pic);
	report_release(&r);
	return rc;
}
