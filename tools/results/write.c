// SPDX-License-Identifier: MIT
/* Writing a run's results: each table's row and the columns it fills. */
#include "tools/results/impl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emu/lab.h"
#include "emu/proc.h"

/* Task t of the run's plan as stored. */
static int stored_as(const struct results *r, int t)
{
	return t >= 0 && t < r->nas ? r->as[t] : t;
}

int results_db_err(struct results *r, char *err, size_t len,
		   const char *what)
{
	snprintf(err, len, "results database: cannot %s: %s", what,
		 sqlite3_errmsg(r->db));
	return -EIO;
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


struct run_row {
	const char *started, *scenario, *scenario_file, *scenario_yaml;
	const char *scheduler, *prefix;
	int rounds;
	double scale;
	const char *plan_json;
	double pred_mean_round_s, pred_bytes_links;
	int64_t wavelength_links;
	const char *status, *plan_dot, *predictor;
	int64_t owner_pid, owner_start;
};

#define RUN(f) COL(struct run_row, f)
static const struct col run_cols[] = {
	RUN(started), RUN(scenario), RUN(scenario_file), RUN(scenario_yaml),
	RUN(scheduler), RUN(prefix), RUN(rounds), RUN(scale), RUN(plan_json),
	RUN(pred_mean_round_s), RUN(pred_bytes_links), RUN(wavelength_links),
	RUN(status), RUN(plan_dot), RUN(predictor), RUN(owner_pid),
	RUN(owner_start),
};
static const struct table runs_table = TABLE("runs", run_cols);

struct task_row {
	int64_t run;
	int task;
	const char *name;
	int nlocals;
	int64_t model_bytes;
	bool blocked, failed;
	const char *why;
	double pred_round_s, pred_bcast_s, pred_compute_s, pred_upload_s;
	double bytes_links;
	int64_t wavelength_links;
};

#define TASK(f) COL(struct task_row, f)
static const struct col task_cols[] = {
	TASK(run), TASK(task), TASK(name), TASK(nlocals), TASK(model_bytes),
	TASK(blocked), TASK(failed), TASK(why), TASK(pred_round_s),
	TASK(pred_bcast_s), TASK(pred_compute_s), TASK(pred_upload_s),
	TASK(bytes_links), TASK(wavelength_links),
};
static const struct table tasks_table = TABLE("tasks", task_cols);

/* What the run stores of each task of its plan, as first placed. */
static int store_tasks(struct results *r, const struct plan *p)
{
	sqlite3_stmt *st;
	int e = row_prepare(r->db, "INSERT", &tasks_table, &st);

	for (int t = 0; !e && t < p->ntasks; t++) {
		const struct task_plan *tp = &p->tasks[t];
		struct task_row row = {
			.run = r->run,
			.task = t,
			.name = tp->task->name,
			.nlocals = tp->task->nlocals,
			.model_bytes = (int64_t)scn_task_bytes(tp->task),
			.blocked = tp->blocked,
			.why = tp->blocked ? tp->why : "",
			.pred_round_s = tp->round_s,
			.pred_bcast_s = tp->bcast_s,
			.pred_compute_s = tp->compute_s,
			.pred_upload_s = tp->upload_s,
			.bytes_links = tp->bytes_links,
			.wavelength_links = tp->wavelength_links,
		};

		if (r->as[t] == t)	/* stored as the first of its name */
			e = row_step(st, &tasks_table, &row);
	}
	sqlite3_finalize(st);
	return e;
}

int results_begin_run(struct results *r, const struct plan *p,
		      const char *scenario_path, const char *scenario_text,
		      const char *plan_json, const char *plan_dot,
		      const char *prefix, unsigned rounds, char *err,
		      size_t len)
{
	char *yaml = scenario_text ? strdup(scenario_text) :
				     slurp(scenario_path), when[32];
	time_t now = time(NULL);
	struct run_row row = {
		.started = when,
		.scenario = p->sc->name,
		.scenario_file = scenario_path,
		.scenario_yaml = yaml ? yaml : "",
		.scheduler = p->scheduler,
		.prefix = prefix,
		.rounds = (int)rounds,
		.scale = p->sc->scale,
		.plan_json = plan_json,
		.pred_mean_round_s = p->mean_round_s,
		.pred_bytes_links = p->bytes_links,
		.wavelength_links = p->wavelength_links,
		.status = "running",
		.plan_dot = plan_dot ? plan_dot : "",
		.predictor = p->predictor ? p->predictor : "fluid",
		/* whose it is: a 'running' row whose owner is gone was
		 * aborted */
		.owner_pid = getpid(),
		.owner_start = (int64_t)proc_start(getpid()),
	};

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	if (sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    row_insert(r->db, "INSERT", &runs_table, &row))
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
	if (store_tasks(r, p))
		goto fail;
	free(yaml);
	if (sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		return results_db_err(r, err, len, "store the run");
	return 0;
fail:
	free(yaml);
	results_db_err(r, err, len, "store the run");
	sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
	return -EIO;
}

struct round_row {
	int64_t run;
	int task, round;
	double round_s, bcast_s, compute_s, upload_s, accuracy, loss, cpu_s;
	bool check_ok;
	double check_err, check_tol;
	char global_digest[17], global_proj[WK_NPROJ * 26];
	/* the round's own prediction (traffic in its window) */
	double pred_round_s, pred_bytes_links;
	/* how late the host let its workers act (fleet.h) */
	double skew_s, late_max_s, late_last_s, overrun_max_s;
};

#define ROUND(f) COL(struct round_row, f)
static const struct col round_cols[] = {
	ROUND(run), ROUND(task), ROUND(round), ROUND(round_s), ROUND(bcast_s),
	ROUND(compute_s), ROUND(upload_s), ROUND(accuracy), ROUND(loss),
	ROUND(cpu_s), ROUND(check_ok), ROUND(check_err), ROUND(check_tol),
	ROUND(global_digest), ROUND(global_proj), ROUND(pred_round_s),
	ROUND(pred_bytes_links), ROUND(skew_s), ROUND(late_max_s),
	ROUND(late_last_s), ROUND(overrun_max_s),
};
static const struct table rounds_table = TABLE("rounds", round_cols);

struct transfer_row {
	int64_t run;
	int task, round;
	const char *tree;
	int src_model, dst_model;
	uint64_t start_ns, end_ns, bytes;
};

#define TRANSFER(f) COL(struct transfer_row, f)
static const struct col transfer_cols[] = {
	TRANSFER(run), TRANSFER(task), TRANSFER(round), TRANSFER(tree),
	TRANSFER(src_model), TRANSFER(dst_model), TRANSFER(start_ns),
	TRANSFER(end_ns), TRANSFER(bytes),
};
static const struct table transfers_table =
	TABLE("transfers", transfer_cols);

struct link_row {
	int64_t run;
	int round;
	const char *link;
	uint64_t bytes;
	double pred_bytes;
};

#define LINK(f) COL(struct link_row, f)
static const struct col link_cols[] = {
	LINK(run), LINK(round), LINK(link), LINK(bytes), LINK(pred_bytes),
};
static const struct table links_table = TABLE("links", link_cols);

static void round_of(struct round_row *row, const struct fleet_task_round *x,
		     const struct task_plan *tp)
{
	size_t off = 0;

	row->round_s = x->round_s;
	row->skew_s = x->skew_s;
	row->late_max_s = x->late_max_s;
	row->late_last_s = x->late_last_s;
	row->overrun_max_s = x->overrun_max_s;
	row->bcast_s = x->bcast_s;
	row->compute_s = x->compute_s;
	row->upload_s = x->upload_s;
	row->accuracy = x->rep[0].accuracy;
	row->loss = x->rep[0].loss;
	row->cpu_s = x->cpu_s;
	row->check_ok = x->check_ok;
	row->check_err = x->check_err;
	row->check_tol = x->check_tol;
	snprintf(row->global_digest, sizeof(row->global_digest), "%016llx",
		 (unsigned long long)x->rep[0].digest);
	row->global_proj[0] = '\0';
	for (int k = 0; k < WK_NPROJ; k++)
		off += (size_t)snprintf(row->global_proj + off,
					sizeof(row->global_proj) - off,
					"%s%.17g", k ? " " : "",
					x->rep[0].proj[k]);
	row->pred_round_s = tp->round_s;
	row->pred_bytes_links = tp->bytes_links;
}

/*
 * A task's transfers of a round: broadcast p -> m ends when m has it;
 * upload m -> q when q has it (q's receive time for that child).
 */
static int store_transfers(sqlite3_stmt *ts, struct transfer_row *row,
			   const struct fleet_task_round *x,
			   const struct task_plan *tp)
{
	for (int m = 1; m < tp->nmodels; m++) {
		int bp = tp->bcast.parent[m], up = tp->up.parent[m];
		int child = tree_child_index(&tp->up, m);

		for (int tree = 0; tree < 2; tree++) {
			row->tree = tree ? "upload" : "broadcast";
			row->src_model = tree ? m : bp;
			row->dst_model = tree ? up : m;
			row->start_ns = tree ? x->rep[m].t_up0 :
					       x->rep[bp].t_send;
			row->end_ns = tree ? x->rep[up].t_child[child] :
					     x->rep[m].t_start;
			row->bytes = x->msg_bytes;
			if (row_step(ts, &transfers_table, row))
				return -EIO;
		}
	}
	return 0;
}

int results_round(struct results *r, const struct plan *p, unsigned round,
		  const struct fleet_task_round *res,
		  const struct link_sample *links, int nlinks, char *err,
		  size_t len)
{
	sqlite3_stmt *rs = NULL, *ts = NULL, *ls = NULL;

	if (sqlite3_exec(r->db, "SAVEPOINT rnd", NULL, NULL, NULL) !=
		    SQLITE_OK ||
	    row_prepare(r->db, "INSERT", &rounds_table, &rs) ||
	    row_prepare(r->db, "INSERT", &transfers_table, &ts) ||
	    row_prepare(r->db, "INSERT", &links_table, &ls))
		goto fail;
	for (int t = 0; t < p->ntasks; t++) {
		struct round_row row = { .run = r->run,
					 .task = stored_as(r, t),
					 .round = (int)round };
		struct transfer_row tr = { .run = r->run,
					   .task = stored_as(r, t),
					   .round = (int)round };

		if (!res[t].done)
			continue;
		round_of(&row, &res[t], &p->tasks[t]);
		if (row_step(rs, &rounds_table, &row) ||
		    store_transfers(ts, &tr, &res[t], &p->tasks[t]))
			goto fail;
	}
	for (int i = 0; i < nlinks; i++) {
		struct link_row row = {
			.run = r->run,
			.round = (int)round,
			.link = links[i].name,
			.bytes = links[i].bytes,
			.pred_bytes = links[i].pred_bytes,
		};

		if (row_step(ls, &links_table, &row))
			goto fail;
	}
	sqlite3_finalize(rs);
	sqlite3_finalize(ts);
	sqlite3_finalize(ls);
	if (sqlite3_exec(r->db, "RELEASE rnd", NULL, NULL, NULL) != SQLITE_OK)
		return results_db_err(r, err, len, "store a round");
	return 0;
fail:
	results_db_err(r, err, len, "store a round");
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
	return db_run(r->db, "UPDATE tasks SET failed = 1, why = ? WHERE "
		      "run = ? AND task = ?", "tIi", why, r->run,
		      stored_as(r, task));
}

int results_end_run(struct results *r, const char *status)
{
	return db_run(r->db, "UPDATE runs SET status = ? WHERE id = ?", "tI",
		      status, r->run);
}

int results_picture(struct results *r, const char *name, const char *dot)
{
	return db_run(r->db, "INSERT OR REPLACE INTO pictures (run, name, "
		      "dot) VALUES (?, ?, ?)", "Itt", r->run, name, dot);
}

int results_point(struct results *r, int64_t run, const char *name,
		  const char *base, const char *sched, long nlocals, long seed)
{
	return db_run(r->db, "INSERT OR REPLACE INTO points (run, experiment,"
		      " base, scheduler, nlocals, seed) VALUES (?, ?, ?, ?, "
		      "?, ?)", "ItttII", run, name, base, sched,
		      (int64_t)nlocals, (int64_t)seed);
}

struct fidelity_row {
	int64_t run;
	int round;
	struct mon_round m;
	const char *verdict;
	bool touched;
};

#define FID(f) COL_AS(struct fidelity_row, m.f, #f)
static const struct col fidelity_cols[] = {
	COL(struct fidelity_row, run), COL(struct fidelity_row, round),
	FID(dilation), FID(wall_s), FID(psi), FID(cpu), FID(retrans),
	FID(out_segs), FID(drops), FID(overruns), FID(phases),
	FID(overrun_max_s), FID(skew_max_s), COL(struct fidelity_row, verdict),
	FID(late_max_s), FID(dl_packets), FID(dl_late_mean_s),
	FID(dl_late_max_s), FID(runq_mean), FID(runq_max),
	COL(struct fidelity_row, touched), FID(late_frac_median),
	FID(late_frac_worst), FID(tg_dgrams), FID(tg_late_mean_s),
	FID(tg_late_max_s), FID(stall_frac), FID(stall_max_s),
	FID(stall_excess),
};
static const struct table fidelity_table = TABLE("fidelity", fidelity_cols);

int results_fidelity(struct results *r, unsigned round,
		     const struct mon_round *m, const char *verdict,
		     bool touched)
{
	struct fidelity_row row = { r->run, (int)round, *m, verdict, touched };

	return row_insert(r->db, "INSERT OR REPLACE", &fidelity_table, &row);
}

int results_verdict(struct results *r, double dilation, const char *verdict)
{
	return db_run(r->db, "UPDATE runs SET dilation = ?, verdict = ? WHERE "
		      "id = ?", "dtI", dilation, verdict, r->run);
}

int results_round_time(struct results *r, unsigned round, double start_s,
		       double end_s)
{
	return db_run(r->db, "INSERT OR REPLACE INTO round_times (run, round,"
		      " start_s, end_s) VALUES (?,?,?,?)", "Iidd", r->run,
		      (int)round, start_s, end_s);
}

int results_task_placed(struct results *r, const struct plan *q, int t)
{
	const struct task_plan *tp = &q->tasks[t];

	if (db_run(r->db, "UPDATE tasks SET blocked = 0, why = '', "
		   "pred_round_s = ?, pred_bcast_s = ?, pred_compute_s = ?, "
		   "pred_upload_s = ?, bytes_links = ?, wavelength_links = ? "
		   "WHERE run = ? AND task = ?", "dddddIIi", tp->round_s,
		   tp->bcast_s, tp->compute_s, tp->upload_s, tp->bytes_links,
		   (int64_t)tp->wavelength_links, r->run, stored_as(r, t)))
		return -EIO;
	return sqlite3_changes(r->db) == 1 ? 0 : -EIO;
}

#define EVENT(f) COL(struct results_event_row, f)
static const struct col results_event_cols[] = {
	EVENT(run), EVENT(at_s),
	COL_D(struct results_event_row, kind, "?"),
	COL_D(struct results_event_row, detail, ""),
	COL_D(struct results_event_row, tasks, ""),
	EVENT(interruption_s),
	COL_D(struct results_event_row, policy, ""),
	COL_FIN(struct results_event_row, live_s),
	COL_FIN(struct results_event_row, first_round_s),
};
const struct table results_events_table =
	TABLE("events", results_event_cols);

int results_event(struct results *r, double at_s, const char *kind,
		  const char *detail, const char *tasks, double interruption_s)
{
	return results_event_moved(r, at_s, kind, detail, tasks,
				   interruption_s, NULL, NAN, NAN);
}

int results_event_moved(struct results *r, double at_s, const char *kind,
			const char *detail, const char *tasks,
			double interruption_s, const char *policy,
			double live_s, double first_round_s)
{
	struct results_event_row row = {
		r->run, at_s, kind, detail, tasks, interruption_s, policy,
		live_s, first_round_s,
	};

	return row_insert(r->db, "INSERT", &results_events_table, &row);
}

struct sample_row {
	int64_t run;
	struct link_util u;
};

#define SAMPLE(f) COL_AS(struct sample_row, u.f, #f)
static const struct col sample_cols[] = {
	COL(struct sample_row, run),
	SAMPLE(t_s), SAMPLE(link), SAMPLE(gbps), SAMPLE(cap_gbps),
};
static const struct table samples_table = TABLE("link_samples", sample_cols);

int results_link_samples(struct results *r, const struct link_util *u,
			 size_t n)
{
	sqlite3_stmt *st;
	int e;

	if (sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return -EIO;
	e = row_prepare(r->db, "INSERT", &samples_table, &st);
	for (size_t i = 0; !e && i < n; i++) {
		struct sample_row row = { r->run, u[i] };

		e = row_step(st, &samples_table, &row);
	}
	sqlite3_finalize(st);
	if (e) {
		sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
		return -EIO;
	}
	return sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ?
		       0 : -EIO;
}

#define BLOCKING(f) COL(struct results_blocking_row, f)
static const struct col results_blocking_cols[] = {
	COL_D(struct results_blocking_row, experiment, "?"),
	COL_D(struct results_blocking_row, base, ""),
	COL_D(struct results_blocking_row, scheduler, "?"),
	BLOCKING(nlocals), BLOCKING(seed), BLOCKING(load), BLOCKING(blocked),
	BLOCKING(wl_used), BLOCKING(wl_total), BLOCKING(bytes_links),
};
const struct table results_blocking_table =
	TABLE("blocking", results_blocking_cols);

int results_blocking(struct results *r, const struct results_blocking_row *b)
{
	return row_insert(r->db, "INSERT", &results_blocking_table, b);
}

#define GAP(f) COL(struct results_gap_row, f)
static const struct col results_gap_cols[] = {
	COL_D(struct results_gap_row, experiment, "?"),
	COL_D(struct results_gap_row, base, ""),
	COL_D(struct results_gap_row, scheduler, "?"),
	GAP(nlocals), GAP(seed), GAP(blocked), GAP(weight), GAP(opt_weight),
	GAP(seconds), GAP(opt_seconds),
};
const struct table results_gap_table = TABLE("gap", results_gap_cols);

int results_gap(struct results *r, const struct results_gap_row *g)
{
	return row_insert(r->db, "INSERT", &results_gap_table, g);
}
