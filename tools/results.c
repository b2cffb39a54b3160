// SPDX-License-Identifier: MIT
#include "results.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>

#include "emu/lab.h"

struct results {
	sqlite3 *db;
	int64_t run;
};

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
	" PRIMARY KEY (run, round));";

/* Columns added after the first schema: added to older databases. */
static const char *const added[] = {
	"ALTER TABLE runs ADD COLUMN dilation REAL",
	"ALTER TABLE runs ADD COLUMN verdict TEXT",
	"ALTER TABLE fidelity ADD COLUMN late_max_s REAL",
	"ALTER TABLE runs ADD COLUMN predictor TEXT",
	"ALTER TABLE runs ADD COLUMN owner_pid INTEGER",
	"ALTER TABLE runs ADD COLUMN owner_start INTEGER",
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
	       lab_proc_start((pid_t)pid) == (unsigned long long)start;
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

struct results *results_open(const char *path, char *err, size_t len)
{
	struct results *r = calloc(1, sizeof(*r));
	char *msg = NULL;

	if (!r) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	if (sqlite3_open(path, &r->db) != SQLITE_OK) {
		snprintf(err, len, "cannot open results database '%s': %s",
			 path, r->db ? sqlite3_errmsg(r->db) : "out of memory");
		results_close(r);
		return NULL;
	}
	sqlite3_busy_timeout(r->db, 5000);
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
		      const char *scenario_path, const char *plan_json,
		      const char *plan_dot, const char *prefix, unsigned rounds,
		      char *err, size_t len)
{
	sqlite3_stmt *st = NULL;
	char *yaml = slurp(scenario_path), when[32];
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
	sqlite3_bind_int64(st, 16, (int64_t)lab_proc_start(getpid()));
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE)
		goto fail;
	r->run = sqlite3_last_insert_rowid(r->db);
	if (sqlite3_prepare_v2(r->db,
			       "INSERT INTO tasks VALUES "
			       "(?,?,?,?,?,?,0,?,?,?,?,?,?,?)", -1, &st,
			       NULL) != SQLITE_OK)
		goto fail;
	for (int t = 0; t < p->ntasks; t++) {
		const struct task_plan *tp = &p->tasks[t];

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

	if (sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(r->db, "INSERT INTO rounds VALUES "
			       "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &rs,
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
		sqlite3_bind_int(rs, 2, t);
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
				sqlite3_bind_int(ts, 2, t);
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
	if (sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		return db_err(r, err, len, "store a round");
	return 0;
fail:
	db_err(r, err, len, "store a round");
	sqlite3_finalize(rs);
	sqlite3_finalize(ts);
	sqlite3_finalize(ls);
	sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
	return -EIO;
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
	sqlite3_bind_int(st, 3, task);
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
			       "late_max_s) VALUES "
			       "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st,
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
