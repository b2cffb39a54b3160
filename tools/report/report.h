/* SPDX-License-Identifier: MIT */
/*
 * twinlab report, in parts, called one way: the command and the data
 * (report.c: the runs, tasks, links and checks read through
 * tools/results/results.h) call the parts; the parts call the output
 * helpers (out.c: safe names, numbers per format, the directory's files,
 * the renderers run through emu/spawn.h) and the statistics (stats.c),
 * never the command. The parts: the figures from a table of figure
 * descriptions, drawn by one gnuplot writer, with their data files and
 * runs.csv (fig.c); the plan pictures (pic.c); report.md (md.c); and the
 * sections after the runs' own, an ops table (sections.c: blocking.c,
 * gap.c, subsets.c, timeline.c). Schedulers are known by the twin's ops
 * table (twin/sched.h): its order, role and baseline, never by name.
 */
#ifndef TOOLS_REPORT_H
#define TOOLS_REPORT_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "emu/spawn.h"
#include "tools/results/results.h"

#define MAX_BAD_CHECKS 20
#define GNUPLOT "/usr/bin/gnuplot"
#define DOT "/usr/bin/dot"

enum {
	PH_ROUND = RES_ROUND, PH_BCAST = RES_BCAST, PH_COMPUTE = RES_COMPUTE,
	PH_UPLOAD = RES_UPLOAD, NPH = RES_NPHASES
};

extern const char *const phase_name[NPH];

struct rtask {
	int run;			/* index into report.runs */
	int task;
	char *name, *why;
	int nlocals;
	bool blocked, failed;
	double pred[NPH];		/* s */
	double meas[NPH];		/* s, mean over the task's rounds
					 * not touched from the live view */
	int nrounds, nheld;
	int ntouched;			/* of nrounds: not in meas */
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
	/* the plan's shape (plan JSON; NAN if unknown): its placed tasks'
	 * broadcast depth, mean; tasks whose broadcast is a star; models
	 * that aggregate, mean a task; bytes a round on its busiest link */
	double depth, stars, aggs, busiest;
	/* computed from tasks, rounds and links */
	int ntasks, nblocked, nfailed, nmeasured, max_rounds;
	long nrounds, nheld, ntouched;
	double meas[NPH], pred[NPH];	/* s, mean over tasks; NAN if none */
	int link_rounds;
	double ip_bytes, bf_bytes;	/* per round, physical; NAN if none */
	double link_sum, bf_sum;
	int last_round;
	bool bf_known;
};

/* The runs of one experiment, scheduler and number of local models. */
struct point {
	const char *experiment, *scheduler;
	int nlocals;
	int first, n;			/* runs[order[first..first+n)] */
	int nmeas;
	double lat_med, lat_min, lat_max, lat_pred;
	double ph_med[NPH], ph_pred[NPH];
	double plan_bf, bf_med, bf_min, bf_max, ip_med, wl;
	double depth, stars, aggs, busiest;	/* the runs' (rrun), mean */
};

struct badcheck {
	int64_t run;
	int task, round;
	double err, tol;
};

struct picture {
	int64_t run;
	char stem[160];
	bool dot, rendered;
	bool straight;			/* drawn with -Gsplines=false */
	char task[40];			/* "" for the network */
	struct picture *tasks;		/* each task's trees, alone */
	int ntasks;
};

struct report {
	const char *db_path, *dir;
	const char *want_task[64];	/* --task: only these task pictures */
	int nwant;
	struct results_reader *rd;
	int npacket;			/* runs predicted packet by packet */
	int nrecal, ndegraded, nunjudged;	/* runs: see report_load */
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
	const char **scheds;		/* in the ops table's order */
	int nscheds;
	long rounds_total, rounds_held;
	struct badcheck bad[MAX_BAD_CHECKS];
	int nbad;
	bool gnuplot, dot;
	int nfail;
	struct blk *blk;		/* blocking points, by figure */
	int nblk;
	struct gapr *gap;		/* gap instances, by experiment */
	int ngap;
	char *section_md[8];		/* each section's markdown, or NULL,
					 * by its place in report_sections */
	char *made[256];		/* files rendered, for the summary */
	int nmade;
};

struct unit {
	const char *name;
	double div;
};

/* Fidelity of one scheduler's tasks: measured / predicted round. */
struct fid {
	int n, within;
	double med, min, max, r, p95;
};

static inline double fmin_nan(double a, double b)
{
	return isnan(a) ? b : isnan(b) ? a : fmin(a, b);
}

static inline double fmax_nan(double a, double b)
{
	return isnan(a) ? b : isnan(b) ? a : fmax(a, b);
}

static inline double ratio(double a, double b)
{
	return isfinite(a) && isfinite(b) && b != 0 ? a / b : NAN;
}

/* ---- report.c: the data; out.c: the output helpers -------------------- */

struct blk;

/* A name made safe for a file name: [A-Za-z0-9_.-], at most 40 chars. */
void fname_part(char *dst, size_t len, const char *s);
/* Text for a gnuplot single-quoted string: no quotes, no control chars. */
void gp_text(FILE *f, const char *s);
/* Text for one markdown table cell. */
void md_text(FILE *f, const char *s);
/* A number in a table cell ("n/a" when not finite), a CSV field (empty),
 * a gnuplot data file ('?'); conv 'f' or 'g' with prec digits. */
void md_num(FILE *f, char conv, int prec, double v);
void csv_num(FILE *f, char conv, int prec, double v);
void dat_num(FILE *f, double v);
/*
 * dat_safe - s for a .dat file's comment line, control characters (a
 * stored name's newline would start a data line) made spaces; in buf.
 */
const char *dat_safe(const char *s, char *buf, size_t n);
/* a name's room in dat_safe's buffer */
#define DAT_NAME 160
/* A file of the report's directory: failures said and counted. */
FILE *out_open(struct report *r, const char *name);
/*
 * out_clear - make sure name in the output directory is a regular file a
 * program may write (out_open's refusals, said as it says them): what a
 * renderer writes is never a link planted there. 0 or -EINVAL.
 */
int out_clear(struct report *r, const char *name);
int out_close(struct report *r, FILE *f, const char *name);
/* A file rendered, for the summary. */
void made(struct report *r, const char *name);
bool was_made(const struct report *r, const char *name);
/*
 * report_exec - run bin with argv in the report's directory (emu/spawn.h,
 * a time limit of REPORT_EXEC_S), its output and standard error appended
 * to log (a path). 0 when it ran, *res telling how it ended; -errno when
 * it could not be started.
 */
#define REPORT_EXEC_S 120
int report_exec(struct report *r, const char *bin, char *const argv[],
		const char *log, struct spawn_result *res);
/* Say why bin failed on `what` (err from report_exec, else res), naming
 * its log when it wrote one; the failure is counted. */
void report_exec_fail(struct report *r, const char *bin, int err,
		      const struct spawn_result *res, const char *what,
		      const char *log);

/*
 * rp_read_said - a reader's failure e (results_read_*, its message in
 * err) said once, "out of memory" for -ENOMEM; e returned.
 */
int rp_read_said(int e, const char *err);

/* ---- tools/report/stats.c ---------------------------------------------------- */

/* The run of id among r->runs (sorted by id), its index in *idx; NULL. */
struct rrun *run_by_id(struct report *r, int64_t id, int *idx);
/* The q-quantile of v[0..n) (nearest rank), NAN if empty; sorts v. */
double rp_quantile(double *v, int n, double q);
/* The median of the finite values of v[0..n) (reorders v); NAN if none. */
double rp_median(double *v, int n);
/* Schedulers by the twin's ops table: order, "<role> (<name>)", colour;
 * the baseline's name, NULL when none of its runs is here. */
int rp_sched_cmp(const char *a, const char *b);
const char *rp_sched_label(const char *s);
const char *rp_sched_colour(const char *s, int i);
const char *rp_baseline(const struct report *r);
struct unit byte_unit(double max);
struct unit exp_byte_unit(const struct report *r, const char *exp);
void run_totals(struct report *r);
int build_points(struct report *r);
/*
 * exp_point - the next of r's points of experiment exp (and of scheduler
 * sched; any when NULL) from r->points[*i] on, with *i moved past it;
 * NULL after the last. for (i = 0; (p = exp_point(r, exp, NULL, &i));)
 * visits an experiment's points in order.
 */
const struct point *exp_point(const struct report *r, const char *exp,
			      const char *sched, int *i);
const struct point *find_point(const struct report *r, const char *exp,
			       const char *sched, int nlocals);
bool exp_has_sched(const struct report *r, const char *exp,
		   const char *sched);
/* File-name suffix of an experiment: empty when there is only one. */
void exp_suffix(const struct report *r, const char *exp, char *buf,
		size_t len);
/* Measured, by a run not judged degraded: fit to compare with the twin. */
bool task_measured(const struct report *r, const struct rtask *t);
struct fid fidelity_stats(const struct report *r, const char *sched);
/* The largest number of local models measured for both a and b. */
int common_max_n(const struct report *r, const char *exp, const char *a,
		 const char *b);

/* ---- tools/report/fig.c, tools/report/pic.c, tools/report/md.c --------------------------- */

/* Every figure with its data files; returns the tasks on the fidelity
 * figure. */
/* gnuplot scaffolding (tools/report/fig.c): a script's head, its png and svg
 * outputs, and running it (the files it made are listed). */
void gp_head(FILE *f, const char *what);
void gp_terminal_loop(FILE *f, const char *stem, int w, int h);
void gp_run(struct report *r, const char *script, const char *stem);

/* One panel of a figure over schedulers (gp_sched_panels). */
struct sched_panel {
	const char *title, *ylabel;
	const char *yrange;	/* gnuplot's, e.g. "0:100" or "0:*" */
	const char *plot;	/* "using ... with ..." for each .dat */
	const char *xlabel;	/* NULL: the figure's */
};

/*
 * gp_sched_panels - '<stem>.gp': two panels side by side under title, a
 * line per scheduler sched[0..ns) from '<stem>-<name>.dat', against
 * xlabel; run, so the pictures are made where gnuplot is.
 */
void gp_sched_panels(struct report *r, const char *stem, const char *what,
		     const char *xlabel, const char *title,
		     const char *const *sched, int ns,
		     const struct sched_panel panel[2]);

/* out_open_sched - '<stem>-<sched>.dat' (its name in name), as out_open. */
FILE *out_open_sched(struct report *r, const char *stem, const char *sched,
		     char *name, size_t len);

/* md_sched_header - a table's head: first, then a column per scheduler. */
void md_sched_header(FILE *md, const char *first, const char *const *sched,
		     int ns);

/*
 * A figure over schedulers drawn from consecutive rows of a section's
 * table (blocking.c, gap.c): a data file per scheduler, then the two
 * panels. The rows are the section's, known to it by index only.
 */
struct sched_fig {
	const char *stem;
	const char *about;	/* the data files' subject, dat_safe'd */
	const char *columns;	/* the data files' column names */
	const char *what, *xlabel, *title;	/* as gp_sched_panels */
	struct sched_panel panel[2];
	const char *(*sched_of)(const struct report *r, int i);
	/* row i's data line on f (nothing when it has none) */
	void (*row)(FILE *f, const struct report *r, int i);
};

/*
 * sched_figure - fig from rows [f0, f1), grouped by scheduler: their
 * schedulers in order of first appearance in sched (at most max; how many
 * returned), '<stem>-<sched>.dat' each with "# twinlab report: <about>,
 * scheduler <name>" and the columns over its rows, and '<stem>.gp'.
 */
int sched_figure(struct report *r, const struct sched_fig *fig, int f0,
		 int f1, const char **sched, int max);

/* md_sched_link - a scheduler figure's picture in report.md, if drawn. */
void md_sched_link(const struct report *r, FILE *md, const char *alt,
		   const char *stem);

int write_figures(struct report *r);

/*
 * The sections of report.md after the runs' own, each a file of its own:
 * load reads its rows from the database (NULL: it needs only what every
 * section has, the runs); write draws its figures and writes its
 * markdown on md (nothing, when it has nothing to say), which the command
 * keeps in r->section_md[i];
 * release frees what load read (NULL: nothing; section_md is freed by
 * the command). report.md holds them in this order. A new section is a
 * new file and a line in the table (sections.c).
 */
struct report_section {
	const char *name;
	int (*load)(struct report *r);
	void (*write)(struct report *r, FILE *md);
	void (*release)(struct report *r);
};

extern const struct report_section report_sections[];
extern const int report_nsections;

/* blocking under load (blocking.c), optimality gaps (gap.c), select's
 * subsets side by side (subsets.c), the runs' timelines (timeline.c) */
int load_blocking(struct report *r);
void write_blocking(struct report *r, FILE *md);
void release_blocking(struct report *r);
int load_gap(struct report *r);
void write_gap(struct report *r, FILE *md);
void release_gap(struct report *r);
void write_subsets(struct report *r, FILE *md);
void write_timelines(struct report *r, FILE *md);

void write_runs_csv(struct report *r);
/* pic[] has one picture per scheduler of r->scheds. */
void write_pictures(struct report *r, struct picture *pic);
int write_md(struct report *r, const struct picture *pic, int nfid);

#endif
