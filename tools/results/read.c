// SPDX-License-Identifier: MIT
/* Reading results back: each table's rows, for report and experiment. */
#include "tools/results/impl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_err(struct results_reader *rd, char *err, size_t len,
		    const char *what)
{
	snprintf(err, len, "cannot read %s from '%s': %s", what, rd->path,
		 sqlite3_errmsg(rd->db));
	return -EIO;
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
		.ntouched = (int)sqlite3_column_double(st, 17),
	};

	for (int k = 0; k < RES_NPHASES; k++) {
		row.pred[k] = col_real(st, 7 + k, NAN);
		row.meas[k] = col_real(st, 12 + k, NAN);
	}
	return f(ctx, &row);
}

/*
 * A round touched from the live view (a cut, repair or flow no prediction
 * has) is counted but not averaged, as the run itself does; a database
 * from before the mark has none (0).
 */
#define TOUCHED "coalesce((SELECT f.touched FROM fidelity f WHERE " \
		"f.run = x.run AND f.round = x.round), 0)"
#define UNTOUCHED(col) "avg(CASE WHEN %1$s THEN NULL ELSE " col " END)"

/* The tasks query: `where` picks them (it may bind "?1"). */
static int tasks_query(struct results_reader *rd, const char *where,
		       sqlite3_stmt **st)
{
	char sql[2048];

	snprintf(sql, sizeof(sql),
		 "SELECT t.run, t.task, t.name, t.nlocals, t.blocked,"
		 " t.failed, t.why, t.pred_round_s, t.pred_bcast_s,"
		 " t.pred_compute_s, t.pred_upload_s, count(x.round), "
		 UNTOUCHED("x.round_s") ", " UNTOUCHED("x.bcast_s") ", "
		 UNTOUCHED("x.compute_s") ", " UNTOUCHED("x.upload_s")
		 ", total(x.check_ok), total(%1$s != 0) FROM tasks t LEFT JOIN"
		 " rounds x ON x.run = t.run AND x.task = t.task WHERE %2$s "
		 "GROUP BY t.run, t.task ORDER BY t.run, t.task",
		 rd->has_touched ? TOUCHED : "0", where);
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
	char sql[512];

	/* a round touched from the live view has no prediction to meet */
	snprintf(sql, sizeof(sql), "SELECT run, round, link, bytes FROM links "
		 "l %s ORDER BY run, round", rd->has_touched ?
		 "WHERE NOT EXISTS (SELECT 1 FROM fidelity f WHERE f.run = "
		 "l.run AND f.round = l.round AND f.touched)" : "");
	if (sqlite3_prepare_v2(rd->db, sql, -1, &st, NULL) != SQLITE_OK)
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

/* view_query over table t's columns, in its row's order */
static int table_query(struct results_reader *rd, const struct table *t,
		       const char *tail, sqlite3_stmt **st, char *err,
		       size_t len)
{
	char sql[1024];

	*st = NULL;
	if (table_select(t, tail, sql, sizeof(sql)))
		return -ENOSPC;
	return view_query(rd, t->name, sql, st, err, len);
}

static int each_event(sqlite3_stmt *st, void *fn, void *ctx)
{
	int (*f)(void *, const struct results_event_row *) = fn;
	struct results_event_row row;

	row_read(st, &results_events_table, &row);
	if (isnan(row.interruption_s))
		row.interruption_s = 0;
	return f(ctx, &row);
}

int results_read_events(struct results_reader *rd,
			int (*fn)(void *ctx,
				  const struct results_event_row *row),
			void *ctx, char *err, size_t len)
{
	sqlite3_stmt *st;
	/* a database from before the moves has NULL for them */
	int e = rd->has_moves ?
		table_query(rd, &results_events_table, "ORDER BY run, at_s, "
			    "rowid", &st, err, len) :
		view_query(rd, "events", "SELECT run, at_s, kind, detail, "
			   "tasks, interruption_s, NULL, NULL, NULL FROM events "
			   "ORDER BY run, at_s, rowid", &st, err, len);

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
	struct results_blocking_row row;

	row_read(st, &results_blocking_table, &row);
	return f(ctx, &row);
}

int results_read_blocking(struct results_reader *rd,
			  int (*fn)(void *ctx,
				    const struct results_blocking_row *row),
			  void *ctx, char *err, size_t len)
{
	sqlite3_stmt *st;
	int e = table_query(rd, &results_blocking_table, "ORDER BY experiment, "
			    "nlocals, scheduler, load, seed, rowid", &st,
			    err, len);

	if (e || !st)
		return e;
	return each_row(rd, st, each_blocking, (void *)fn, ctx, "the "
			"blocking points", err, len);
}

static int each_gap(sqlite3_stmt *st, void *fn, void *ctx)
{
	int (*f)(void *, const struct results_gap_row *) = fn;
	struct results_gap_row row;

	row_read(st, &results_gap_table, &row);
	return f(ctx, &row);
}

int results_read_gap(struct results_reader *rd,
		     int (*fn)(void *ctx, const struct results_gap_row *row),
		     void *ctx, char *err, size_t len)
{
	sqlite3_stmt *st;
	int e = table_query(rd, &results_gap_table, "ORDER BY experiment, "
			    "scheduler, nlocals, seed, rowid", &st,
			    err, len);

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
