// SPDX-License-Identifier: MIT
/* The results database: its schema, opening it to write or to read. */
#include "tools/results/impl.h"

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
	/* a round touched from the live view: kept, not averaged */
	"ALTER TABLE fidelity ADD COLUMN touched INTEGER",
	/* each task-round's own share of the host's lateness */
	"ALTER TABLE rounds ADD COLUMN skew_s REAL",
	"ALTER TABLE rounds ADD COLUMN late_max_s REAL",
	"ALTER TABLE rounds ADD COLUMN late_last_s REAL",
	"ALTER TABLE rounds ADD COLUMN overrun_max_s REAL",
	/* what the verdict judges of them (emu/monitor.h) */
	"ALTER TABLE fidelity ADD COLUMN late_frac_median REAL",
	"ALTER TABLE fidelity ADD COLUMN late_frac_worst REAL",
	/* the traffic generator's lateness (emu/monitor.h) */
	"ALTER TABLE fidelity ADD COLUMN tg_dgrams INTEGER",
	"ALTER TABLE fidelity ADD COLUMN tg_late_mean_s REAL",
	"ALTER TABLE fidelity ADD COLUMN tg_late_max_s REAL",
	/* the CPU time the host took away (emu/awake.h) */
	"ALTER TABLE fidelity ADD COLUMN stall_frac REAL",
	"ALTER TABLE fidelity ADD COLUMN stall_max_s REAL",
	"ALTER TABLE fidelity ADD COLUMN stall_excess REAL",
};

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

bool has_table(sqlite3 *db, const char *name, int *rc)
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
	rd->has_touched = has_column(rd->db, "fidelity", "touched");
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
