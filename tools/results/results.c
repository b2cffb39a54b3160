// SPDX-License-Identifier: MIT
#include "tools/results/results.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>

#include "emu/lab.h"
#include "emu/proc.h"

struct results {
	sqlite3 *db;
	int64_t run;
	/*
	 * Per task of the run's plan: the task it is stored as, the first of
	 * its name (a task that carries another on over new trees,
	 * twin/lpset.h, is the same task: its rounds go on under it)
	 */
	int *as;
	int nas;
};

/* Task t of the run's plan as stored. */
static int stored_as(const struct results *r, int t)
{
	return t >= 0 && t < r->nas ? r->as[t] : t;
}

static const char schema[] =
	"PRAGMA journal_mode=WAL;"
	"CREATE TABLE IF NOT EXISTS runs ("
	" id INTEGER PRIMARY KEY, started TEXT, scenario TEXT,"
	" scenario_file TEXT, scenario_yaml TEXT, scheduler TEXT,"
	" prefix TEXT, rounds INTEGER, scale REAL, plan_json TEXT,"
	" pred_mean_round_s REAL, pred_bytes_links REAL,"
	" wavelength_links INTEGER, status TEXT, plan_dot TEXT);"
	"CREATE TABLE IF NOT EXISTS points ("
	" run INTEGER PRIMARY KEY, experiment TEXT, base TEXT,"
	" scheduler TEXT, nlocals INTEGER, seed INTEGER);"
	"CREATE TABLE IF NOT EXISTS tasks ("
	" run INTEGER, task INTEGER, name TEXT, nlocals INTEGER,"
	" model_bytes INTEGER, blocked INTEGER, failed INTEGER, why TEXT,"
	" pred_round_s REAL, pred_bcast_s REAL, pred_compute_s REAL,"
	" pred_upload_s REAL, bytes_links REAL, wavelength_links INTEGER,"
	" PRIMARY KEY (run, task));"
	"CREATE TABLE IF NOT EXISTS rounds ("
	" run INTEGER, task INTEGER, round INTEGER, round_s REAL,"
	" bcast_s REAL, compute_s REAL, upload_s REAL, accuracy REAL,"
	" loss REAL, cpu_s REAL, check_ok INTEGER, check_err REAL,"
	" check_tol REAL, global_digest TEXT, global_proj TEXT,"
	" PRIMARY KEY (run, task, round));"
	"CREATE TABLE IF NOT EXISTS transfers ("
	" run INTEGER, task INTEGER, round INTEGER, tree TEXT,"
	" src_model INTEGER, dst_model INTEGER, start_ns INTEGER,"
	" end_ns INTEGER, bytes INTEGER);"
	"CREATE TABLE IF NOT EXISTS links ("
	" run INTEGER, round INTEGER, link TEXT, bytes INTEGER,"
	" pred_bytes REAL, PRIMARY KEY (run, round, link));"
	"CREATE TABLE IF NOT EXISTS pictures ("
	" run INTEGER, name TEXT, dot TEXT, PRIMARY KEY (run, name));"
	"CREATE TABLE IF NOT EXISTS fidelity ("
	" run INTEGER, round INTEGER, dilation REAL, wall_s REAL,"
	" psi REAL, cpu REAL, retrans INTEGER, out_segs INTEGER,"
	" drops INTEGER, overruns INTEGER, phases INTEGER,"
	" overrun_max_s REAL, skew_max_s REAL, verdict TEXT,"
	" PRIMARY KEY (run, round));"
	/* the orchestrator's view: when each round ran, what happened to
	 * the network, and every link's load over time (scenario time) */
	"CREATE TABLE IF NOT EXISTS round_times ("
	" run INTEGER, round INTEGER, start_s REAL, end_s REAL,"
	" PRIMARY KEY (run, round));"
	"CREATE TABLE IF NOT EXISTS events ("
	" run INTEGER, at_s REAL, kind TEXT, detail TEXT, tasks TEXT,"
	" interruption_s REAL);"
	"CREATE TABLE IF NOT EXISTS link_samples ("
	" run INTEGER, t_s REAL, link TEXT, gbps REAL, cap_gbps REAL);"
	/* blocking under offered load: the twin alone, no run */
	"CREATE TABLE IF NOT EXISTS blocking ("
	" experiment TEXT, base TEXT, scheduler TEXT, nlocals INTEGER,"
	" seed INTEGER, load INTEGER, blocked INTEGER, wl_used INTEGER,"
	" wl_total INTEGER, bytes_links REAL);"
	/* optimality gap: one task per instance, the twin alone, no run */
	"CREATE TABLE IF NOT EXISTS gap ("
	" experiment TEXT, base TEXT, scheduler TEXT, nlocals INTEGER,"
	" seed INTEGER, blocked INTEGER, weight REAL, opt_weight REAL,"
	" seconds REAL, opt_seconds REAL);";

/* Columns added after the first schema: added to older databases. */
static const char *const added[] = {
	"ALTER TABLE runs ADD COLUMN dilation REAL",
	"ALTER TABLE runs ADD COLUMN verdict TEXT",
	"ALTER TABLE fidelity ADD COLUMN late_max_s REAL",
	"ALTER TABLE runs ADD COLUMN predictor TEXT",
	"ALTER TABLE runs ADD COLUMN owner_pid INTEGER",
	"ALTER TABLE runs ADD COLUMN owner_start INTEGER",
	"ALTER TABLE fidelity ADD COLUMN dl_packets INTEGER",
	"ALTER TABLE fidelity ADD COLUMN dl_late_mean_s REAL",
	"ALTER TABLE fidelity ADD COLUMN dl_late_max_s REAL",
	"ALTER TABLE fidelity ADD COLUMN runq_mean REAL",
	"ALTER TABLE fidelity ADD COLUMN runq_max INTEGER",
	"ALTER TABLE rounds ADD COLUMN pred_round_s REAL",
	/* a cut answered by re-placement: the policy, when its moves were
	 * live and when the first round on the new paths ended */
	"ALTER TABLE events ADD COLUMN policy TEXT",
	"ALTER TABLE events ADD COLUMN live_s REAL",
	"ALTER TABLE events ADD COLUMN first_round_s REAL",
	/* the twin's byte-links of each task-round, as placed then */
	"ALTER TABLE rounds ADD COLUMN pred_bytes_links REAL",
};

static int db_err(struct results *r, char *err, size_t len, const char *what)
{
	snprintf(err, len, "results database: cannot %s: %s", what,
		 sqlite3_errmsg(r->db));
	return -EIO;
}

bool results_owner_alive(int64_t pid, int64_t start)
{
	return pid > 1 && pid <= INT32_MAX && start > 0 &&
	       proc_start((pid_t)pid) == (unsigned long long)start;
}

/*
 * Runs still 'running' whose process is gone (killed, or the machine
 * went down) are marked 'aborted' as soon as they are found. Best effort:
 * a database another process holds busy is left for the next opener.
 */
static void mark_stale(struct results *r)
{
	sqlite3_stmt *st, *up;

	if (sqlite3_prepare_v2(r->db, "SELECT id, owner_pid, owner_start FROM "
			       "runs WHERE status = 'running'", -1, &st,
			       NULL) != SQLITE_OK)
		return;
	if (sqlite3_prepare_v2(r->db, "UPDATE runs SET status = 'aborted' "
			       "WHERE id = ? AND status = 'running'", -1, &up,
			       NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (results_owner_alive(sqlite3_column_int64(st, 1),
					sqlite3_column_int64(st, 2)))
			continue;
		sqlite3_reset(up);
		sqlite3_bind_int64(up, 1, sqlite3_column_int64(st, 0));
		sqlite3_step(up);
	}
	sqlite3_finalize(up);
	sqlite3_finalize(st);
}

static bool has_table(sqlite3 *db, const char *name, int *rc);

/* The tables a database must have to be read as twinlab's results. */
static const char *const need[] = { "runs", "tasks", "rounds", "links" };

/*
 * What is at a database's path: 0 a regular file, 1 nothing, -1 anything
 * else or an error (why in err). follow: a symbolic link is what it names
 * (reading), else refused (writing).
 */
static int db_path_kind(const char *path, bool follow, char *err, size_t len)
{
	struct stat sb;

	if (follow ? stat(path, &sb) : lstat(path, &sb)) {
		if (errno == ENOENT && !follow)
			return 1;
		snprintf(err, len, "cannot open results database '%s': %s",
			 path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(err, len, "cannot open results database '%s': not a "
			 "regular file", path);
		return -1;
	}
	return 0;
}

/*
 * Whether the database at path may be written: a new path, or a regular
 * file (not a device, whose journal would be made beside it, a FIFO or a
 * symbolic link) that is empty or already twinlab's results. Else why in
 * err.
 */
static bool writable_results(sqlite3 *db, const char *path, char *err,
			     size_t len)
{
	int kind = db_path_kind(path, false, err, len), rc;
	sqlite3_stmt *st;
	bool any = false;

	if (kind)
		return kind > 0;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master", -1, &st,
			       NULL) != SQLITE_OK) {
		snprintf(err, len, "'%s' is not a twinlab results database: "
			 "%s", path, sqlite3_errmsg(db));
		return false;
	}
	rc = sqlite3_step(st);
	any = rc == SQLITE_ROW;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		snprintf(err, len, "cannot read results database '%s': %s",
			 path, sqlite3_errmsg(db));
		return false;
	}
	for (size_t i = 0; any && i < sizeof(need) / sizeof(need[0]); i++) {
		if (has_table(db, need[i], &rc))
			continue;
		if (rc != SQLITE_OK)
			snprintf(err, len, "cannot read results database "
				 "'%s': %s", path, sqlite3_errmsg(db));
		else
			snprintf(err, len, "'%s' is not a twinlab results "
				 "database (no table '%s'): name a new file or "
				 "one twinlab wrote", path, need[i]);
		return false;
	}
	return true;
}

struct results *results_open(const char *path, char *err, size_t len)
{
	struct results *r = calloc(1, sizeof(*r));
	char *msg = NULL;

	if (!r) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	/* nothing is made at a path that is not a regular file */
	if (db_path_kind(path, false, err, len) < 0) {
		results_close(r);
		return NULL;
	}
	if (sqlite3_open(path, &r->db) != SQLITE_OK) {
		snprintf(err, len, "cannot open results database '%s': %s",
			 path, r->db ? sqlite3_errmsg(r->db) : "out of memory");
		results_close(r);
		return NULL;
	}
	sqlite3_busy_timeout(r->db, 5000);
	if (!writable_results(r->db, path, err, len)) {
		results_close(r);
		return NULL;
	}
	if (sqlite3_exec(r->db, schema, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(err, len, "cannot set up results database '%s': %s",
			 path, msg ? msg : "?");
		sqlite3_free(msg);
		results_close(r);
		return NULL;
	}
	for (size_t i = 0; i < sizeof(added) / sizeof(added[0]); i++)
		if (sqlite3_exec(r->db, added[i], NULL, NULL, &msg) != SQLITE_OK) {
			bool had = msg && strstr(msg, "duplicate column");

			if (!had)
				snprintf(err, len, "cannot update results "
					 "database '%s': %s", path,
					 msg ? msg : "?");
			sqlite3_free(msg);
			msg = NULL;
			if (!had) {
				results_close(r);
				return NULL;
			}
		}
	mark_stale(r);
	return r;
}

void results_close(struct results *r)
{
	if (!r)
		return;
	sqlite3_close(r->db);
	free(r->as);
	free(r);
}

int64_t results_run_id(const struct results *r)
{
	return r->run;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
		if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		} else {
			buf[n] = '\0';
		}
	}
	fclose(f);
	return buf;
}

int results_begin_run(struct results *r, const struct plan *p,
		      const char *scenario_path, const char *scenario_text,
		      const char *plan_json, const char *plan_dot,
		      const char *prefix, unsigned rounds, char *err,
		      size_t len)
{
	sqlite3_stmt *st = NULL;
	char *yaml = scenario_text ? strdup(scenario_text) :
				     slurp(scenario_path), when[32];
	time_t now = time(NULL);
	int rc;

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	if (sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	if (sqlite3_prepare_v2(r->db,
			       "INSERT INTO runs (started, scenario, "
			       "scenario_file, scenario_yaml, scheduler, prefix,"
			       " rounds, scale, plan_json, pred_mean_round_s,"
			       " pred_bytes_links, wavelength_links, status,"
			       " plan_dot, predictor, owner_pid, owner_start) "
			       "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,'running',?,?,"
			       "?,?)",
			       -1, &st, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_text(st, 1, when, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, p->sc->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, scenario_path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, yaml ? yaml : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, p->scheduler, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, prefix, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 7, (int)rounds);
	sqlite3_bind_double(st, 8, p->sc->scale);
	sqlite3_bind_text(st, 9, plan_json, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 10, p->mean_round_s);
	sqlite3_bind_double(st, 11, p->bytes_links);
	sqlite3_bind_int64(st, 12, p->wavelength_links);
	sqlite3_bind_text(st, 13, plan_dot ? plan_dot : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 14, p->predictor ? p->predictor : "fluid", -1,
			  SQLITE_STATIC);
	/* whose it is: a 'running' row whose owner is gone was aborted */
	sqlite3_bind_int64(st, 15, getpid());
	sqlite3_bind_int64(st, 16, (int64_t)proc_start(getpid()));
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE)
		goto fail;
	r->run = sqlite3_last_insert_rowid(r->db);
	free(r->as);
	r->nas = 0;
	r->as = malloc(((size_t)p->ntasks + 1) * sizeof(*r->as));
	if (!r->as)
		goto fail;
	for (int t = 0; t < p->ntasks; t++)
		r->as[t] = scenario_task_first(p->sc, t);
	r->nas = p->ntasks;
	if (sqlite3_prepare_v2(r->db,
			       "INSERT INTO tasks VALUES "
			       "(?,?,?,?,?,?,0,?,?,?,?,?,?,?)", -1, &st,
			       NULL) != SQLITE_OK)
		goto fail;
	for (int t = 0; t < p->ntasks; t++) {
		const struct task_plan *tp = &p->tasks[t];

		if (r->as[t] != t)	/* stored as the first of its name */
			continue;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, r->run);
		sqlite3_bind_int(st, 2, t);
		sqlite3_bind_text(st, 3, tp->task->name, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 4, tp->task->nlocals);
		sqlite3_bind_int64(st, 5, (int64_t)scn_task_bytes(tp->task));
		sqlite3_bind_int(st, 6, tp->blocked);
		sqlite3_bind_text(st, 7, tp->blocked ? tp->why : "", -1,
				  SQLITE_STATIC);
		sqlite3_bind_double(st, 8, tp->round_s);
		sqlite3_bind_double(st, 9, tp->bcast_s);
		sqlite3_bind_double(st, 10, tp->compute_s);
		sqlite3_bind_double(st, 11, tp->upload_s);
		sqlite3_bind_double(st, 12, tp->bytes_links);
		sqlite3_bind_int64(st, 13, tp->wavelength_links);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto fail;
	}
	sqlite3_finalize(st);
	st = NULL;
	free(yaml);
	if (sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		return db_err(r, err, len, "store the run");
	return 0;
fail:
	free(yaml);
	sqlite3_finalize(st);
	db_err(r, err, len, "store the run");
	sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
	return -EIO;
}

static void hex64(uint64_t v, char *buf)
{
	snprintf(buf, 17, "%016llx", (unsigned long long)v);
}

int results_round(struct results *r, const struct plan *p, unsigned round,
		  const struct fleet_task_round *res,
		  const struct link_sample *links, int nlinks, char *err,
		  size_t len)
{
	sqlite3_stmt *rs = NULL, *ts = NULL, *ls = NULL;

	if (sqlite3_exec(r->db, "SAVEPOINT rnd", NULL, NULL, NULL) !=
		    SQLITE_OK ||
	    sqlite3_prepare_v2(r->db, "INSERT INTO rounds (run, task, round, "
			       "round_s, bcast_s, compute_s, upload_s, "
			       "accuracy, loss, cpu_s, check_ok, check_err, "
			       "check_tol, global_digest, global_proj, "
			       "pred_round_s, pred_bytes_links) VALUES "
			       "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &rs,
			       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(r->db, "INSERT INTO transfers VALUES "
			       "(?,?,?,?,?,?,?,?,?)", -1, &ts,
			       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(r->db, "INSERT INTO links VALUES (?,?,?,?,?)",
			       -1, &ls, NULL) != SQLITE_OK)
		goto fail;
	for (int t = 0; t < p->ntasks; t++) {
		const struct fleet_task_round *x = &res[t];
		const struct task_plan *tp = &p->tasks[t];
		char dig[17];

		if (!x->done)
			continue;
		hex64(x->rep[0].digest, dig);
		sqlite3_reset(rs);
		sqlite3_bind_int64(rs, 1, r->run);
		sqlite3_bind_int(rs, 2, stored_as(r, t));
		sqlite3_bind_int(rs, 3, (int)round);
		sqlite3_bind_double(rs, 4, x->round_s);
		sqlite3_bind_double(rs, 5, x->bcast_s);
		sqlite3_bind_double(rs, 6, x->compute_s);
		sqlite3_bind_double(rs, 7, x->upload_s);
		sqlite3_bind_double(rs, 8, x->rep[0].accuracy);
		sqlite3_bind_double(rs, 9, x->rep[0].loss);
		sqlite3_bind_double(rs, 10, x->cpu_s);
		sqlite3_bind_int(rs, 11, x->check_ok);
		sqlite3_bind_double(rs, 12, x->check_err);
		sqlite3_bind_double(rs, 13, x->check_tol);
		sqlite3_bind_text(rs, 14, dig, -1, SQLITE_TRANSIENT);
		/* the round's own prediction (traffic in its window) */
		sqlite3_bind_double(rs, 16, tp->round_s);
		sqlite3_bind_double(rs, 17, tp->bytes_links);
		{
			char proj[WK_NPROJ * 26] = "";
			size_t off = 0;

			for (int k = 0; k < WK_NPROJ; k++)
				off += (size_t)snprintf(proj + off,
							sizeof(proj) - off,
							"%s%.17g", k ? " " : "",
							x->rep[0].proj[k]);
			sqlite3_bind_text(rs, 15, proj, -1, SQLITE_TRANSIENT);
		}
		if (sqlite3_step(rs) != SQLITE_DONE)
			goto fail;
		/* broadcast p -> m ends when m has it; upload m -> q when q
		 * has it (q's receive time for that child) */
		for (int m = 1; m < tp->nmodels; m++) {
			int bp = tp->bcast.parent[m], up = tp->up.parent[m];
			uint64_t up_end = 0;
			int child = 0;

			for (int k = 1; k < m; k++)
				child += tp->up.parent[k] == up;
			up_end = x->rep[up].t_child[child];
			for (int tree = 0; tree < 2; tree++) {
				sqlite3_reset(ts);
				sqlite3_bind_int64(ts, 1, r->run);
				sqlite3_bind_int(ts, 2, stored_as(r, t));
				sqlite3_bind_int(ts, 3, (int)round);
				sqlite3_bind_text(ts, 4, tree ? "upload" :
							    "broadcast", -1,
						  SQLITE_STATIC);
				sqlite3_bind_int(ts, 5, tree ? m : bp);
				sqlite3_bind_int(ts, 6, tree ? up : m);
				sqlite3_bind_int64(ts, 7, (int64_t)(tree ?
					x->rep[m].t_up0 : x->rep[bp].t_send));
				sqlite3_bind_int64(ts, 8, (int64_t)(tree ?
					up_end : x->rep[m].t_start));
				sqlite3_bind_int64(ts, 9,
						   (int64_t)x->msg_bytes);
				if (sqlite3_step(ts) != SQLITE_DONE)
					goto fail;
			}
		}
	}
	for (int i = 0; i < nlinks; i++) {
		sqlite3_reset(ls);
		sqlite3_bind_int64(ls, 1, r->run);
		sqlite3_bind_int(ls, 2, (int)round);
		sqlite3_bind_text(ls, 3, links[i].name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(ls, 4, (int64_t)links[i].bytes);
		sqlite3_bind_double(ls, 5, links[i].pred_bytes);
		if (sqlite3_step(ls) != SQLITE_DONE)
			goto fail;
	}
	sqlite3_finalize(rs);
	sqlite3_finalize(ts);
	sqlite3_finalize(ls);
	if (sqlite3_exec(r->db, "RELEASE rnd", NULL, NULL, NULL) != SQLITE_OK)
		return db_err(r, err, len, "store a round");
	return 0;
fail:
	db_err(r, err, len, "store a round");
	sqlite3_finalize(rs);
	sqlite3_finalize(ts);
	sqlite3_finalize(ls);
	sqlite3_exec(r->db, "ROLLBACK TO rnd; RELEASE rnd", NULL, NULL, NULL);
	return -EIO;
}

int results_round_begin(struct results *r)
{
	return sqlite3_exec(r->db, "SAVEPOINT whole_round", NULL, NULL,
			    NULL) == SQLITE_OK ? 0 : -EIO;
}

int results_round_end(struct results *r, bool keep)
{
	if (keep && sqlite3_exec(r->db, "RELEASE whole_round", NULL, NULL,
				 NULL) == SQLITE_OK)
		return 0;
	sqlite3_exec(r->db, "ROLLBACK TO whole_round; RELEASE whole_round",
		     NULL, NULL, NULL);
	/* never leave it open: later rounds would be lost inside it */
	if (!sqlite3_get_autocommit(r->db))
		sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
	return keep ? -EIO : 0;
}

int results_task_failed(struct results *r, int task, const char *why)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->db, "UPDATE tasks SET failed = 1, why = ? "
			       "WHERE run = ? AND task = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(st, 1, why, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, r->run);
	sqlite3_bind_int(st, 3, stored_as(r, task));
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int results_end_run(struct results *r, const char *status)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->db, "UPDATE runs SET status = ? WHERE id = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(st, 1, status, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, r->run);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int results_picture(struct results *r, const char *name, const char *dot)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->db, "INSERT OR REPLACE INTO pictures (run, "
			       "name, dot) VALUES (?, ?, ?)", -1, &st,
			       NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, r->run);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, dot, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int results_point(struct results *r, int64_t run, const char *name,
		  const char *base, const char *sched, long nlocals, long seed)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->db, "INSERT OR REPLACE INTO points (run, "
			       "experiment, base, scheduler, nlocals, seed) "
			       "VALUES (?, ?, ?, ?, ?, ?)", -1, &st,
			       NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, base, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, sched, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, nlocals);
	sqlite3_bind_int64(st, 6, seed);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int results_fidelity(struct results *r, unsigned round,
		     const struct mon_round *m, const char *verdict)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->db, "INSERT OR REPLACE INTO fidelity (run, "
			       "round, dilation, wall_s, psi, cpu, retrans, "
			       "out_segs, drops, overruns, phases, "
			       "overrun_max_s, skew_max_s, verdict, "
			       "late_max_s, dl_packets, dl_late_mean_s, "
			       "dl_late_max_s, runq_mean, runq_max) VALUES "
			       "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1,
			       &st,
			       NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, r->run);
	sqlite3_bind_int(st, 2, (int)round);
	sqlite3_bind_double(st, 3, m->dilation);
	sqlite3_bind_double(st, 4, m->wall_s);
	sqlite3_bind_double(st, 5, m->psi);
	sqlite3_bind_double(st, 6, m->cpu);
	sqlite3_bind_int64(st, 7, (int64_t)m->retrans);
	sqlite3_bind_int64(st, 8, (int64_t)m->out_segs);
	sqlite3_bind_int64(st, 9, (int64_t)m->drops);
	sqlite3_bind_int(st, 10, m->overruns);
	sqlite3_bind_int(st, 11, m->phases);
	sqlite3_bind_double(st, 12, m->overrun_max_s);
	sqlite3_bind_double(st, 13, m->skew_max_s);
	sqlite3_bind_text(st, 14, verdict, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 15, m->late_max_s);
	sqlite3_bind_int64(st, 16, (int64_t)m->dl_packets);
	sqlite3_bind_double(st, 17, m->dl_late_mean_s);
	sqlite3_bind_double(st, 18, m->dl_late_max_s);
	sqlite3_bind_double(st, 19, m->runq_mean);
	sqlite3_bind_int64(st, 20, (int64_t)m->runq_max);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int results_verdict(struct results *r, double dilation, const char *verdict)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->db, "UPDATE runs SET dilation = ?, "
			       "verdict = ? WHERE id = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_double(st, 1, dilation);
	sqlite3_bind_text(st, 2, verdict, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, r->run);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int results_round_time(struct results *r, unsigned round, double start_s,
		       double end_s)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->db, "INSERT OR REPLACE INTO round_times "
			       "(run, round, start_s, end_s) VALUES "
			       "(?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, r->run);
	sqlite3_bind_int(st, 2, (int)round);
	sqlite3_bind_double(st, 3, start_s);
	sqlite3_bind_double(st, 4, end_s);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int results_event(struct results *r, double at_s, const char *kind,
		  const char *detail, const char *tasks, double interruption_s)
{
	return results_event_moved(r, at_s, kind, detail, tasks,
				   interruption_s, NULL, NAN, NAN);
}

int results_task_placed(struct results *r, const struct plan *q, int t)
{
	const struct task_plan *tp = &q->tasks[t];
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->db, "UPDATE tasks SET blocked = 0, why = '',"
			       " pred_round_s = ?, pred_bcast_s = ?,"
			       " pred_compute_s = ?, pred_upload_s = ?,"
			       " bytes_links = ?, wavelength_links = ? WHERE"
			       " run = ? AND task = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_double(st, 1, tp->round_s);
	sqlite3_bind_double(st, 2, tp->bcast_s);
	sqlite3_bind_double(st, 3, tp->compute_s);
	sqlite3_bind_double(st, 4, tp->upload_s);
	sqlite3_bind_double(st, 5, tp->bytes_links);
	sqlite3_bind_int64(st, 6, tp->wavelength_links);
	sqlite3_bind_int64(st, 7, r->run);
	sqlite3_bind_int(st, 8, stored_as(r, t));
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE && sqlite3_changes(r->db) == 1 ? 0 : -EIO;
}

int results_event_moved(struct results *r, double at_s, const char *kind,
			const char *detail, const char *tasks,
			double interruption_s, const char *policy,
			double live_s, double first_round_s)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->db, "INSERT INTO events (run, at_s, kind, "
			       "detail, tasks, interruption_s, policy, live_s, "
			       "first_round_s) VALUES (?,?,?,?,?,?,?,?,?)", -1,
			       &st, NULL) != SQLITE_OK)
		return -EIO;
	if (policy)
		sqlite3_bind_text(st, 7, policy, -1, SQLITE_STATIC);
	if (isfinite(live_s))
		sqlite3_bind_double(st, 8, live_s);
	if (isfinite(first_round_s))
		sqlite3_bind_double(st, 9, first_round_s);
	sqlite3_bind_int64(st, 1, r->run);
	sqlite3_bind_double(st, 2, at_s);
	sqlite3_bind_text(st, 3, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, detail, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, tasks, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 6, interruption_s);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int results_link_samples(struct results *r, const struct link_util *u,
			 size_t n)
{
	sqlite3_stmt *st;
	int rc = SQLITE_DONE;

	if (sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return -EIO;
	if (sqlite3_prepare_v2(r->db, "INSERT INTO link_samples (run, t_s, "
			       "link, gbps, cap_gbps) VALUES (?,?,?,?,?)", -1,
			       &st, NULL) != SQLITE_OK) {
		sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
		return -EIO;
	}
	for (size_t i = 0; i < n && rc == SQLITE_DONE; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, r->run);
		sqlite3_bind_double(st, 2, u[i].t_s);
		sqlite3_bind_text(st, 3, u[i].link, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 4, u[i].gbps);
		sqlite3_bind_double(st, 5, u[i].cap_gbps);
		rc = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
		return -EIO;
	}
	return sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ?
		       0 : -EIO;
}

int results_blocking(struct results *r, const struct results_blocking_row *b)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->db, "INSERT INTO blocking (experiment, base,"
			       " scheduler, nlocals, seed, load, blocked, "
			       "wl_used, wl_total, bytes_links) VALUES "
			       "(?,?,?,?,?,?,?,?,?,?)", -1, &st,
			       NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(st, 1, b->experiment, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, b->base, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, b->scheduler, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, b->nlocals);
	sqlite3_bind_int64(st, 5, b->seed);
	sqlite3_bind_int64(st, 6, b->load);
	sqlite3_bind_int64(st, 7, b->blocked);
	sqlite3_bind_int64(st, 8, b->wl_used);
	sqlite3_bind_int64(st, 9, b->wl_total);
	sqlite3_bind_double(st, 10, b->bytes_links);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* A real, or NULL for NAN (not known). */
static void bind_real(sqlite3_stmt *st, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_double(st, i, v);
}

int results_gap(struct results *r, const struct results_gap_row *g)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->db, "INSERT INTO gap (experiment, base, "
			       "scheduler, nlocals, seed, blocked, weight, "
			       "opt_weight, seconds, opt_seconds) VALUES "
			       "(?,?,?,?,?,?,?,?,?,?)", -1, &st,
			       NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(st, 1, g->experiment, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, g->base, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, g->scheduler, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, g->nlocals);
	sqlite3_bind_int64(st, 5, g->seed);
	sqlite3_bind_int(st, 6, g->blocked);
	bind_real(st, 7, g->weight);
	bind_real(st, 8, g->opt_weight);
	bind_real(st, 9, g->seconds);
	bind_real(st, 10, g->opt_seconds);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* ---- reading ------------------------------------------------------------ */

struct results_reader {
	sqlite3 *db;
	const char *path;
	bool has_points, has_dot, has_verdict, has_predictor, has_pictures;
	bool has_moves;		/* events: policy, live_s, first_round_s */
	bool has_round_bl;	/* rounds: pred_bytes_links */
	bool has_owner;		/* runs: owner_pid, owner_start (and the
				 * owner_alive function registered) */
};

static int read_err(struct results_reader *rd, char *err, size_t len,
		    const char *what)
{
	snprintf(err, len, "cannot read %s from '%s': %s", what, rd->path,
		 sqlite3_errmsg(rd->db));
	return -EIO;
}

/*
 * owner_alive(pid, start) in the reader's SQL: whether a run's recorded
 * owner still runs (results_owner_alive), so that a 'running' run whose
 * process is gone is said to be aborted by a report that only reads.
 */
static void sql_owner_alive(sqlite3_context *cx, int n, sqlite3_value **v)
{
	(void)n;
	sqlite3_result_int(cx, results_owner_alive(sqlite3_value_int64(v[0]),
						   sqlite3_value_int64(v[1])));
}

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

struct results_reader *results_read_open(const char *path, char *err,
					  size_t len)
{
	struct results_reader *rd;
	int rc;

	if (db_path_kind(path, true, err, len))
		return NULL;
	rd = calloc(1, sizeof(*rd));
	if (!rd) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	rd->path = path;
	/*
	 * Read-write where it may be, but only ever queried: a read-only
	 * connection to a database in WAL mode leaves its -wal and -shm
	 * files beside it when it closes; the last connection that may
	 * write removes them. Read-only where the file or its directory is.
	 */
	if (sqlite3_open_v2(path, &rd->db, SQLITE_OPEN_READWRITE, NULL) !=
	    SQLITE_OK) {
		sqlite3_close(rd->db);
		rd->db = NULL;
		if (sqlite3_open_v2(path, &rd->db, SQLITE_OPEN_READONLY,
				    NULL) != SQLITE_OK) {
			snprintf(err, len, "cannot open results database "
				 "'%s': %s", path, rd->db ?
				 sqlite3_errmsg(rd->db) : "out of memory");
			goto fail;
		}
	}
	sqlite3_busy_timeout(rd->db, 5000);
	if (sqlite3_exec(rd->db, "PRAGMA query_only = 1", NULL, NULL, NULL) !=
	    SQLITE_OK) {
		snprintf(err, len, "cannot open results database '%s': %s",
			 path, sqlite3_errmsg(rd->db));
		goto fail;
	}
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		if (has_table(rd->db, need[i], &rc))
			continue;
		if (rc != SQLITE_OK)
			snprintf(err, len, "'%s' is not a twinlab results "
				 "database: %s", path, sqlite3_errmsg(rd->db));
		else
			snprintf(err, len, "'%s' is not a twinlab results "
				 "database (no table '%s')", path, need[i]);
		goto fail;
	}
	rd->has_points = has_table(rd->db, "points", &rc);
	rd->has_dot = has_column(rd->db, "runs", "plan_dot");
	rd->has_verdict = has_column(rd->db, "runs", "verdict") &&
			  has_column(rd->db, "runs", "dilation");
	rd->has_predictor = has_column(rd->db, "runs", "predictor");
	rd->has_moves = has_column(rd->db, "events", "live_s");
	rd->has_round_bl = has_column(rd->db, "rounds", "pred_bytes_links");
	rd->has_pictures = has_column(rd->db, "pictures", "dot");
	rd->has_owner = has_column(rd->db, "runs", "owner_pid") &&
			has_column(rd->db, "runs", "owner_start");
	if (rd->has_owner &&
	    sqlite3_create_function(rd->db, "owner_alive", 2,
				    SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL,
				    sql_owner_alive, NULL, NULL) != SQLITE_OK)
		rd->has_owner = false;
	return rd;
fail:
	results_read_close(rd);
	return NULL;
}

void results_read_close(struct results_reader *rd)
{
	if (!rd)
		return;
	sqlite3_close(rd->db);
	free(rd);
}

static const char *col_text(sqlite3_stmt *st, int col, const char *dflt)
{
	const unsigned char *s = sqlite3_column_text(st, col);

	return s ? (const char *)s : dflt;
}

static double col_real(sqlite3_stmt *st, int col, double dflt)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ?
		       dflt :
		       sqlite3_column_double(st, col);
}

/* Step st to its end, calling each(st) per row; 0, fn's nonzero, -EIO. */
static int each_row(struct results_reader *rd, sqlite3_stmt *st,
		    int (*each)(sqlite3_stmt *st, void *fn, void *ctx),
		    void *fn, void *ctx, const char *what, char *err,
		    size_t len)
{
	int rc, ret = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if ((ret = each(st, fn, ctx)))
			break;
	if (!ret && rc != SQLITE_DONE)
		ret = read_err(rd, err, len, what);
	sqlite3_finalize(st);
	return ret;
}

static int each_run(sqlite3_stmt *st, void *fn, void *ctx)
{
	int (*f)(void *, const struct results_run_row *) = fn;
	struct results_run_row row = {
		.id = sqlite3_column_int64(st, 0),
		.scenario = col_text(st, 1, "?"),
		.scheduler = col_text(st, 2, "?"),
		.scale = col_real(st, 3, 1),
		.pred_bytes_links = col_real(st, 4, NAN),
		.wavelength_links = col_real(st, 5, NAN),
		.status = col_text(st, 6, "?"),
		.rounds = sqlite3_column_int(st, 7),
		.plan_json = col_text(st, 8, NULL),
		.experiment = col_text(st, 9, ""),
		.nlocals = sqlite3_column_int(st, 10),
		.seed = sqlite3_column_int64(st, 11),
		.point = sqlite3_column_int(st, 12) != 0,
		.verdict = col_text(st, 13, ""),
		.dilation = col_real(st, 14, NAN),
		.predictor = col_text(st, 15, "fluid"),
	};

	if (!(row.scale > 0))
		row.scale = 1;
	return f(ctx, &row);
}

/* The runs query: `where` picks the runs (it may bind "?1"). */
static int runs_query(struct results_reader *rd, const char *where,
		      sqlite3_stmt **st)
{
	char sql[1024];

	snprintf(sql, sizeof(sql),
		 "SELECT r.id, r.scenario, r.scheduler, r.scale,"
		 " r.pred_bytes_links, r.wavelength_links, r.status, r.rounds,"
		 " r.plan_json, %s, %s, %s FROM runs r %s"
		 " WHERE %s ORDER BY r.id",
		 rd->has_points ? "p.experiment, p.nlocals, p.seed,"
				  " p.run IS NOT NULL" :
				  "NULL, NULL, NULL, 0",
		 rd->has_verdict ? "r.verdict, r.dilation" : "NULL, NULL",
		 rd->has_predictor ? "r.predictor" : "NULL",
		 rd->has_points ? "LEFT JOIN points p ON p.run = r.id" : "",
		 where);
	return sqlite3_prepare_v2(rd->db, sql, -1, st, NULL);
}

int results_read_runs(struct results_reader *rd,
		      int (*fn)(void *ctx, const struct results_run_row *row),
		      void *ctx, char *err, size_t len)
{
	sqlite3_stmt *st;

	/* complete runs only: see results_read_left_out for the others */
	if (runs_query(rd, "r.status IN ('ok', 'failed')", &st) != SQLITE_OK)
		return read_err(rd, err, len, "the runs");
	return each_row(rd, st, each_run, (void *)fn, ctx, "the runs", err,
			len);
}

static int each_task(sqlite3_stmt *st, void *fn, void *ctx)
{
	int (*f)(void *, const struct results_task_row *) = fn;
	struct results_task_row row = {
		.run = sqlite3_column_int64(st, 0),
		.task = sqlite3_column_int(st, 1),
		.name = col_text(st, 2, "?"),
		.nlocals = sqlite3_column_int(st, 3),
		.blocked = sqlite3_column_int(st, 4) != 0,
		.failed = sqlite3_column_int(st, 5) != 0,
		.why = col_text(st, 6, ""),
		.nrounds = sqlite3_column_int(st, 11),
		.nheld = (int)sqlite3_column_double(st, 16),
	};

	for (int k = 0; k < RES_NPHASES; k++) {
		row.pred[k] = col_real(st, 7 + k, NAN);
		row.meas[k] = col_real(st, 12 + k, NAN);
	}
	return f(ctx, &row);
}

/* The tasks query: `where` picks them (it may bind "?1"). */
static int tasks_query(struct results_reader *rd, const char *where,
		       sqlite3_stmt **st)
{
	char sql[1024];

	snprintf(sql, sizeof(sql),
		 "SELECT t.run, t.task, t.name, t.nlocals, t.blocked, t.failed,"
		 " t.why, t.pred_round_s, t.pred_bcast_s, t.pred_compute_s,"
		 " t.pred_upload_s, count(x.round), avg(x.round_s),"
		 " avg(x.bcast_s), avg(x.compute_s), avg(x.upload_s),"
		 " total(x.check_ok) "
		 "FROM tasks t LEFT JOIN rounds x"
		 " ON x.run = t.run AND x.task = t.task WHERE %s "
		 "GROUP BY t.run, t.task ORDER BY t.run, t.task", where);
	return sqlite3_prepare_v2(rd->db, sql, -1, st, NULL);
}

int results_read_tasks(struct results_reader *rd,
		       int (*fn)(void *ctx, const struct results_task_row *row),
		       void *ctx, char *err, size_t len)
{
	sqlite3_stmt *st;

	if (tasks_query(rd, "1", &st) != SQLITE_OK)
		return read_err(rd, err, len, "the tasks");
	return each_row(rd, st, each_task, (void *)fn, ctx, "the tasks", err,
			len);
}

int results_read_one(struct results_reader *rd, int64_t id,
		     int (*run_fn)(void *ctx, const struct results_run_row *row),
		     int (*task_fn)(void *ctx,
				    const struct results_task_row *row),
		     void *ctx, char *err, size_t len)
{
	sqlite3_stmt *st;
	int e;

	if (runs_query(rd, "r.id = ?1", &st) != SQLITE_OK)
		return read_err(rd, err, len, "the run");
	sqlite3_bind_int64(st, 1, id);
	e = sqlite3_step(st);
	if (e == SQLITE_DONE) {
		sqlite3_finalize(st);
		snprintf(err, len, "no run %lld in '%s'", (long long)id,
			 rd->path);
		return -ENOENT;
	}
	if (e != SQLITE_ROW) {
		sqlite3_finalize(st);
		return read_err(rd, err, len, "the run");
	}
	e = each_run(st, (void *)run_fn, ctx);
	sqlite3_finalize(st);
	if (e)
		return e;
	if (tasks_query(rd, "t.run = ?1", &st) != SQLITE_OK)
		return read_err(rd, err, len, "the tasks");
	sqlite3_bind_int64(st, 1, id);
	return each_row(rd, st, each_task, (void *)task_fn, ctx, "the tasks",
			err, len);
}

static int each_link(sqlite3_stmt *st, void *fn, void *ctx)
{
	int (*f)(void *, const struct results_link_row *) = fn;
	struct results_link_row row = {
		.run = sqlite3_column_int64(st, 0),
		.round = sqlite3_column_int(st, 1),
		.link = col_text(st, 2, NULL),
		.bytes = sqlite3_column_double(st, 3),
	};

	return f(ctx, &row);
}

int results_read_links(struct results_reader *rd,
		       int (*fn)(void *ctx, const struct results_link_row *row),
		       void *ctx, char *err, size_t len)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(rd->db, "SELECT run, round, link, bytes "
			       "FROM links ORDER BY run, round", -1, &st,
			       NULL) != SQLITE_OK)
		return read_err(rd, err, len, "the links");
	return each_row(rd, st, each_link, (void *)fn, ctx, "the links", err,
			len);
}

/* A query over the orchestrator's tables, or none when a table is not
 * there (a database from before them). 0 and *st (NULL: no rows). */
static int view_query(struct results_reader *rd, const char *table,
		      const char *sql, sqlite3_stmt **st, char *err,
		      size_t len)
{
	int rc;

	*st = NULL;
	if (!has_table(rd->db, table, &rc))
		return rc == SQLITE_OK ? 0 : read_err(rd, err, len, table);
	if (sqlite3_prepare_v2(rd->db, sql, -1, st, NULL) != SQLITE_OK)
		return read_err(rd, err, len, table);
	return 0;
}

static int each_event(sqlite3_stmt *st, void *fn, void *ctx)
{
	int (*f)(void *, const struct results_event_row *) = fn;
	struct results_event_row row = {
		.run = sqlite3_column_int64(st, 0),
		.at_s = col_real(st, 1, NAN),
		.kind = col_text(st, 2, "?"),
		.detail = col_text(st, 3, ""),
		.tasks = col_text(st, 4, ""),
		.interruption_s = col_real(st, 5, 0),
		.policy = col_text(st, 6, ""),
		.live_s = col_real(st, 7, NAN),
		.first_round_s = col_real(st, 8, NAN),
	};

	return f(ctx, &row);
}

int results_read_events(struct results_reader *rd,
			int (*fn)(void *ctx,
				  const struct results_event_row *row),
			void *ctx, char *err, size_t len)
{
	sqlite3_stmt *st;
	int e = view_query(rd, "events", rd->has_moves ?
			   "SELECT run, at_s, kind, detail, tasks, "
			   "interruption_s, policy, live_s, first_round_s FROM "
			   "events ORDER BY run, at_s, rowid" :
			   "SELECT run, at_s, kind, detail, tasks, "
			   "interruption_s, NULL, NULL, NULL FROM events ORDER "
			   "BY run, at_s, rowid", &st, err, len);

	if (e || !st)
		return e;
	return each_row(rd, st, each_event, (void *)fn, ctx, "the events",
			err, len);
}

static int each_when(sqlite3_stmt *st, void *fn, void *ctx)
{
	int (*f)(void *, const struct results_when_row *) = fn;
	struct results_when_row row = {
		.task = sqlite3_column_int(st, 0),
		.round = sqlite3_column_int(st, 1),
		.name = col_text(st, 2, "?"),
		.start_s = col_real(st, 3, NAN),
		.round_s = col_real(st, 4, NAN),
		.pred_s = col_real(st, 5, NAN),
		.pred_bytes_links = col_real(st, 6, NAN),
	};

	return f(ctx, &row);
}

int results_read_when(struct results_reader *rd, int64_t id,
		      int (*fn)(void *ctx, const struct results_when_row *row),
		      void *ctx, char *err, size_t len)
{
	sqlite3_stmt *st;
	int e = view_query(rd, "round_times", rd->has_round_bl ?
			   "SELECT r.task, r.round, t.name, w.start_s, "
			   "r.round_s, r.pred_round_s, r.pred_bytes_links FROM "
			   "rounds r JOIN "
			   "round_times w ON w.run = r.run AND w.round = "
			   "r.round JOIN tasks t ON t.run = r.run AND t.task = "
			   "r.task WHERE r.run = ? ORDER BY r.task, r.round" :
			   "SELECT r.task, r.round, t.name, w.start_s, "
			   "r.round_s, r.pred_round_s, NULL FROM rounds r JOIN "
			   "round_times w ON w.run = r.run AND w.round = "
			   "r.round JOIN tasks t ON t.run = r.run AND t.task = "
			   "r.task WHERE r.run = ? ORDER BY r.task, r.round",
			   &st, err, len);

	if (e || !st)
		return e;
	sqlite3_bind_int64(st, 1, id);
	return each_row(rd, st, each_when, (void *)fn, ctx, "the rounds' "
			"times", err, len);
}

static int each_load(sqlite3_stmt *st, void *fn, void *ctx)
{
	int (*f)(void *, const struct results_load_row *) = fn;
	struct results_load_row row = {
		.t_s = col_real(st, 0, NAN),
		.link = col_text(st, 1, "?"),
		.gbps = col_real(st, 2, NAN),
		.cap_gbps = col_real(st, 3, NAN),
	};

	return f(ctx, &row);
}

int results_read_load(struct results_reader *rd, int64_t id,
		      int (*fn)(void *ctx, const struct results_load_row *row),
		      void *ctx, char *err, size_t len)
{
	sqlite3_stmt *st;
	int e = view_query(rd, "link_samples", "SELECT t_s, link, gbps, "
			   "cap_gbps FROM link_samples WHERE run = ? ORDER BY "
			   "link, t_s, rowid", &st, err, len);

	if (e || !st)
		return e;
	sqlite3_bind_int64(st, 1, id);
	return each_row(rd, st, each_load, (void *)fn, ctx, "the links' load",
			err, len);
}

static int each_blocking(sqlite3_stmt *st, void *fn, void *ctx)
{
	int (*f)(void *, const struct results_blocking_row *) = fn;
	struct results_blocking_row row = {
		.experiment = col_text(st, 0, "?"),
		.base = col_text(st, 1, ""),
		.scheduler = col_text(st, 2, "?"),
		.nlocals = sqlite3_column_int64(st, 3),
		.seed = sqlite3_column_int64(st, 4),
		.load = sqlite3_column_int64(st, 5),
		.blocked = sqlite3_column_int64(st, 6),
		.wl_used = sqlite3_column_int64(st, 7),
		.wl_total = sqlite3_column_int64(st, 8),
		.bytes_links = col_real(st, 9, NAN),
	};

	return f(ctx, &row);
}

int results_read_blocking(struct results_reader *rd,
			  int (*fn)(void *ctx,
				    const struct results_blocking_row *row),
			  void *ctx, char *err, size_t len)
{
	sqlite3_stmt *st;
	int e = view_query(rd, "blocking", "SELECT experiment, base, "
			   "scheduler, nlocals, seed, load, blocked, wl_used, "
			   "wl_total, bytes_links FROM blocking ORDER BY "
			   "experiment, nlocals, scheduler, load, seed, rowid",
			   &st, err, len);

	if (e || !st)
		return e;
	return each_row(rd, st, each_blocking, (void *)fn, ctx, "the "
			"blocking points", err, len);
}

static int each_gap(sqlite3_stmt *st, void *fn, void *ctx)
{
	int (*f)(void *, const struct results_gap_row *) = fn;
	struct results_gap_row row = {
		.experiment = col_text(st, 0, "?"),
		.base = col_text(st, 1, ""),
		.scheduler = col_text(st, 2, "?"),
		.nlocals = sqlite3_column_int64(st, 3),
		.seed = sqlite3_column_int64(st, 4),
		.blocked = sqlite3_column_int(st, 5) != 0,
		.weight = col_real(st, 6, NAN),
		.opt_weight = col_real(st, 7, NAN),
		.seconds = col_real(st, 8, NAN),
		.opt_seconds = col_real(st, 9, NAN),
	};

	return f(ctx, &row);
}

int results_read_gap(struct results_reader *rd,
		     int (*fn)(void *ctx, const struct results_gap_row *row),
		     void *ctx, char *err, size_t len)
{
	sqlite3_stmt *st;
	int e = view_query(rd, "gap", "SELECT experiment, base, scheduler, "
			   "nlocals, seed, blocked, weight, opt_weight, "
			   "seconds, opt_seconds FROM gap ORDER BY experiment, "
			   "scheduler, nlocals, seed, rowid", &st, err, len);

	if (e || !st)
		return e;
	return each_row(rd, st, each_gap, (void *)fn, ctx, "the gap "
			"instances", err, len);
}

struct acc_cb {
	int (*fn)(void *ctx, int task, int round, double accuracy);
	void *ctx;
};

static int each_accuracy(sqlite3_stmt *st, void *fn, void *ctx)
{
	const struct acc_cb *cb = fn;

	(void)ctx;
	return cb->fn(cb->ctx, sqlite3_column_int(st, 0),
		      sqlite3_column_int(st, 1), col_real(st, 2, NAN));
}

int results_read_accuracy(struct results_reader *rd, int64_t id,
			  int (*fn)(void *ctx, int task, int round,
				    double accuracy),
			  void *ctx, char *err, size_t len)
{
	struct acc_cb cb = { fn, ctx };
	sqlite3_stmt *st;
	int e = view_query(rd, "rounds", "SELECT task, round, accuracy FROM "
			   "rounds WHERE run = ? ORDER BY task, round", &st,
			   err, len);

	if (e || !st)
		return e;
	sqlite3_bind_int64(st, 1, id);
	return each_row(rd, st, each_accuracy, &cb, NULL, "the rounds' "
			"accuracy", err, len);
}

static int each_check(sqlite3_stmt *st, void *fn, void *ctx)
{
	int (*f)(void *, const struct results_check_row *) = fn;
	struct results_check_row row = {
		.run = sqlite3_column_int64(st, 0),
		.task = sqlite3_column_int(st, 1),
		.round = sqlite3_column_int(st, 2),
		.err = sqlite3_column_double(st, 3),
		.tol = sqlite3_column_double(st, 4),
	};

	return f(ctx, &row);
}

int results_read_failed_checks(struct results_reader *rd, int limit,
			       int (*fn)(void *ctx,
					 const struct results_check_row *row),
			       void *ctx, char *err, size_t len)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(rd->db, "SELECT run, task, round, check_err,"
			       " check_tol FROM rounds WHERE check_ok = 0 "
			       "ORDER BY run, task, round LIMIT ?", -1, &st,
			       NULL) != SQLITE_OK)
		return read_err(rd, err, len, "the rounds");
	sqlite3_bind_int(st, 1, limit);
	return each_row(rd, st, each_check, (void *)fn, ctx, "the rounds",
			err, len);
}

int results_read_left_out(struct results_reader *rd, int *nrecal, int *nleft,
			  char *buf, size_t buflen, char *err, size_t len)
{
	sqlite3_stmt *st;
	int rc;

	*nrecal = *nleft = 0;
	if (buflen)
		buf[0] = '\0';
	if (sqlite3_prepare_v2(rd->db, "SELECT count(*) FROM runs WHERE "
			       "status = 'recalibrated'", -1, &st,
			       NULL) != SQLITE_OK)
		return read_err(rd, err, len, "the runs");
	if (sqlite3_step(st) == SQLITE_ROW)
		*nrecal = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(rd->db, rd->has_owner ?
			       "SELECT CASE WHEN status = 'running' AND NOT "
			       "owner_alive(owner_pid, owner_start) THEN "
			       "'aborted (its process is gone)' ELSE "
			       "coalesce(status, 'unknown') END, count(*), "
			       "group_concat(id, ', ') FROM runs WHERE status "
			       "IS NULL OR status NOT IN ('ok', 'failed', "
			       "'recalibrated') GROUP BY 1 ORDER BY 1" :
			       "SELECT coalesce(status, 'unknown'), "
			       "count(*), group_concat(id, ', ') FROM runs "
			       "WHERE status IS NULL OR status NOT IN ('ok', "
			       "'failed', 'recalibrated') GROUP BY 1 ORDER BY "
			       "1", -1, &st, NULL) != SQLITE_OK)
		return read_err(rd, err, len, "the runs");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *ids = col_text(st, 2, "?");
		int n = sqlite3_column_int(st, 1);
		size_t used = strlen(buf);

		*nleft += n;
		snprintf(buf + used, buflen - used, "%s%d %s (run%s %.200s)",
			 used ? "; " : "", n, col_text(st, 0, "?"),
			 n == 1 ? "" : "s", ids);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return read_err(rd, err, len, "the runs");
	return 0;
}

char *results_read_plan_dot(struct results_reader *rd, int64_t id)
{
	sqlite3_stmt *st;
	char *dot = NULL;

	if (!rd->has_dot ||
	    sqlite3_prepare_v2(rd->db, "SELECT plan_dot FROM runs WHERE id = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_bytes(st, 0) > 0)
		dot = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return dot;
}

int results_read_pictures(struct results_reader *rd, int64_t id,
			  int (*fn)(void *ctx, const char *name,
				    const char *dot),
			  void *ctx)
{
	sqlite3_stmt *st;
	int ret = 0;

	if (!rd->has_pictures ||
	    sqlite3_prepare_v2(rd->db, "SELECT name, dot FROM pictures WHERE "
			       "run = ? ORDER BY rowid", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(st, 1, id);
	while (!ret && sqlite3_step(st) == SQLITE_ROW) {
		const char *name = col_text(st, 0, NULL);
		const char *dot = col_text(st, 1, NULL);

		if (name && dot)
			ret = fn(ctx, name, dot);
	}
	sqlite3_finalize(st);
	return ret;
}
