// SPDX-License-Identifier: MIT
/*
 * The report's figures: each is a description in figs[] below — its data
 * file per scheduler, its panels and lines — drawn by one gnuplot writer
 * (fig_write) into a script kept next to its data, so a figure can be
 * re-plotted by hand. Also runs.csv.
 */
#include "tools/report/report.h"

#include <limits.h>
#include <string.h>

/* One line of a panel, drawn for every scheduler from its data file. */
struct fig_line {
	const char *cols;		/* gnuplot's `using` */
	const char *style;		/* "with ..." */
	const char *what;		/* after the scheduler in the key */
};

struct fig_panel {
	const char *title;		/* of a panel of several */
	const char *ylabel;
	bool unit;			/* the ylabel after the byte unit */
	const char *first;		/* drawn before the lines, or NULL */
	struct fig_line line[3];
};

struct fig_desc {
	const char *stem;		/* + "-<experiment>" when several */
	const char *file;		/* "<file><sfx>-<scheduler>.dat" */
	const char *what;		/* the script's first comment */
	const char *title;		/* the figure's (experiment appended) */
	const char *xlabel;
	const char *setup;		/* settings before the terminal */
	bool per_experiment;		/* one figure each; else one in all */
	int width, height;
	int npanels;
	struct fig_panel panel[2];
	/* the data file of one scheduler: header and rows; rows counted */
	void (*rows)(struct report *r, FILE *f, const char *exp,
		     const char *sched, struct unit u, int *rows);
	/* axis ranges from the data (after the setup), or NULL */
	void (*ranges)(struct report *r, FILE *f);
};

void gp_terminal_loop(FILE *f, const char *stem, int w, int h)
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

void gp_sched_panels(struct report *r, const char *stem, const char *what,
		     const char *xlabel, const char *title,
		     const char *const *sched, int ns,
		     const struct sched_panel panel[2])
{
	char name[240], part[48];
	FILE *f;

	snprintf(name, sizeof(name), "%s.gp", stem);
	f = out_open(r, name);
	if (!f)
		return;
	gp_head(f, what);
	fputs("set key below\nset offsets graph 0.03, graph 0.03, 0, 0\n", f);
	gp_terminal_loop(f, stem, 1400, 640);
	fputs("set multiplot layout 1,2 title '", f);
	gp_text(f, title);
	fputs("'\n", f);
	for (int i = 0; i < 2; i++) {
		fputs("set title '", f);
		gp_text(f, panel[i].title);
		fputs("'\nset xlabel '", f);
		gp_text(f, panel[i].xlabel ? panel[i].xlabel : xlabel);
		fputs("'\nset ylabel '", f);
		gp_text(f, panel[i].ylabel);
		fprintf(f, "'\nset yrange [%s]\nplot ", panel[i].yrange);
		for (int k = 0; k < ns; k++) {
			fname_part(part, sizeof(part), sched[k]);
			fprintf(f, "%s'%s-%s.dat' %s lw 2 pt 7 lc rgb '%s' "
				   "title '", k ? ", \\\n  " : "", stem, part,
				panel[i].plot, rp_sched_colour(sched[k], k));
			gp_text(f, rp_sched_label(sched[k]));
			fputc('\'', f);
		}
		fputc('\n', f);
	}
	fputs("unset multiplot\nunset output\n}\n", f);
	if (!out_close(r, f, name))
		gp_run(r, name, stem);
}

FILE *out_open_sched(struct report *r, const char *stem, const char *sched,
		     char *name, size_t len)
{
	char part[48];

	fname_part(part, sizeof(part), sched);
	snprintf(name, len, "%s-%s.dat", stem, part);
	return out_open(r, name);
}

void md_sched_header(FILE *md, const char *first, const char *const *sched,
		     int ns)
{
	fprintf(md, "| %s |", first);
	for (int k = 0; k < ns; k++) {
		fputc(' ', md);
		md_text(md, rp_sched_label(sched[k]));
		fputs(" |", md);
	}
	fputs("\n|---:|", md);
	for (int k = 0; k < ns; k++)
		fputs("---:|", md);
}

int sched_figure(struct report *r, const struct sched_fig *fig, int f0,
		 int f1, const char **sched, int max)
{
	char name[240], e[DAT_NAME];
	int ns = 0;
	FILE *f;

	for (int i = f0; i < f1; i++) {
		const char *s = fig->sched_of(r, i);

		if ((!ns || strcmp(sched[ns - 1], s)) && ns < max)
			sched[ns++] = s;
	}
	for (int k = 0; k < ns; k++) {
		f = out_open_sched(r, fig->stem, sched[k], name, sizeof(name));
		if (!f)
			continue;
		fprintf(f, "# twinlab report: %s, scheduler %s\n# %s\n",
			fig->about, dat_safe(sched[k], e, sizeof(e)),
			fig->columns);
		for (int i = f0; i < f1; i++)
			if (!strcmp(fig->sched_of(r, i), sched[k]))
				fig->row(f, r, i);
		out_close(r, f, name);
	}
	gp_sched_panels(r, fig->stem, fig->what, fig->xlabel, fig->title,
			sched, ns, fig->panel);
	return ns;
}

void md_sched_link(const struct report *r, FILE *md, const char *alt,
		   const char *stem)
{
	if (r->gnuplot)
		fprintf(md, "\n\n![%s](%s.png) ([SVG](%s.svg))\n", alt, stem,
			stem);
	else
		fputc('\n', md);
}

void gp_head(FILE *f, const char *what)
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
void gp_run(struct report *r, const char *script, const char *stem)
{
	char log[PATH_MAX], path[PATH_MAX];
	char *argv[] = { "gnuplot", (char *)script, NULL };
	struct spawn_result res;
	int err;

	if (!r->gnuplot)
		return;
	snprintf(path, sizeof(path), "%s.png", stem);
	if (out_clear(r, path))
		return;
	snprintf(path, sizeof(path), "%s.svg", stem);
	if (out_clear(r, path))
		return;
	snprintf(log, sizeof(log), "%s/gnuplot.log", r->dir);
	err = report_exec(r, GNUPLOT, argv, log, &res);
	if (err || !spawn_ok(&res)) {
		snprintf(path, sizeof(path), "%s/%s", r->dir, script);
		report_exec_fail(r, GNUPLOT, err, &res, path, log);
		return;
	}
	snprintf(path, sizeof(path), "%s.png", stem);
	made(r, path);
	snprintf(path, sizeof(path), "%s.svg", stem);
	made(r, path);
}

/* ---- data files: one per figure and scheduler ----------------------------- */

static void latency_data(struct report *r, FILE *f, const char *exp,
			 const char *sc, struct unit u, int *rows)
{
	const struct point *p;
	char e1[DAT_NAME], e2[DAT_NAME];

	(void)u;
	fprintf(f, "# twinlab report: figure (a), scheduler %s, "
		   "experiment %s\n"
		   "# latency of a run: mean over its tasks of the "
		   "task's mean round_s over completed rounds\n"
		   "# nlocals runs measured_runs median_ms min_ms "
		   "max_ms predicted_ms bcast_ms train_ms upload_ms "
		   "pred_bcast_ms pred_train_ms pred_upload_ms\n",
		dat_safe(sc, e1, sizeof(e1)), dat_safe(exp, e2, sizeof(e2)));
	for (int i = 0; (p = exp_point(r, exp, sc, &i));) {
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
		(*rows)++;
	}
}

static void bandwidth_data(struct report *r, FILE *f, const char *exp,
			   const char *sc, struct unit u, int *rows)
{
	const struct point *p;
	char e1[DAT_NAME], e2[DAT_NAME];

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
		dat_safe(sc, e1, sizeof(e1)), dat_safe(exp, e2, sizeof(e2)),
		u.name);
	for (int i = 0; (p = exp_point(r, exp, sc, &i));) {
		fprintf(f, "%d %d", p->nlocals, p->n);
		dat_num(f, p->plan_bf / u.div);
		dat_num(f, p->bf_med / u.div);
		dat_num(f, p->bf_min / u.div);
		dat_num(f, p->bf_max / u.div);
		dat_num(f, p->ip_med / u.div);
		dat_num(f, p->wl);
		fputc('\n', f);
		(*rows)++;
	}
}

static void fidelity_data(struct report *r, FILE *f, const char *exp,
			  const char *sc, struct unit u, int *rows)
{
	char part[48], e1[DAT_NAME];

	(void)exp;
	(void)u;
	fprintf(f, "# twinlab report: twin fidelity, scheduler %s\n"
		   "# one line per task of every run: predicted "
		   "round latency vs the mean measured round_s over "
		   "its completed rounds\n"
		   "# run task name nlocals rounds predicted_ms "
		   "measured_ms\n", dat_safe(sc, e1, sizeof(e1)));
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
		(*rows)++;
	}
}

/* Square axes over every task's prediction and measurement; logarithmic
 * when they span more than a factor of 100. */
static void fidelity_ranges(struct report *r, FILE *f)
{
	double lo = NAN, hi = NAN;
	int total = 0;

	for (int i = 0; i < r->ntasks; i++) {
		const struct rtask *t = &r->tasks[i];

		if (!task_measured(r, t))
			continue;
		lo = fmin_nan(lo, fmin(t->pred[PH_ROUND], t->meas[PH_ROUND]));
		hi = fmax_nan(hi, fmax(t->pred[PH_ROUND], t->meas[PH_ROUND]));
		total++;
	}
	if (total && lo > 0 && hi / lo > 100)
		fprintf(f, "set logscale xy\nset xrange [%.6g:%.6g]\n"
			   "set yrange [%.6g:%.6g]\n", lo * 1e3 / 1.5,
			hi * 1e3 * 1.5, lo * 1e3 / 1.5, hi * 1e3 * 1.5);
	else if (total)
		fprintf(f, "set xrange [0:%.6g]\nset yrange [0:%.6g]\n",
			hi * 1e3 * 1.05, hi * 1e3 * 1.05);
}

/* ---- the figures ----------------------------------------------------------- */

/* A figure against local models per task: key below, room at the ends. */
#define BY_LOCALS_SETUP							\
	"set key below\n"						\
	"set offsets graph 0.05, graph 0.05, graph 0.1, 0\n"		\
	"set yrange [0:*]\n"

static const struct fig_desc figs[] = {
	{
		.stem = "fig-latency",
		.file = "latency",
		.what = "figure (a), average round latency vs local models",
		.title = "(a) average round latency vs local models per task",
		.xlabel = "local models per task",
		.setup = BY_LOCALS_SETUP,
		.per_experiment = true,
		.width = 960, .height = 640,
		.npanels = 1,
		.panel = { {
			.ylabel = "round latency, training + communication "
				  "(ms)",
			.line = {
				{ "1:4:5:6", "with yerrorlines lw 2 pt 7",
				  "measured: median, min-max over seeds" },
				{ "1:7", "with linespoints dt 2 pt 6",
				  "twin prediction" },
			},
		} },
		.rows = latency_data,
	},
	{
		.stem = "fig-bandwidth",
		.file = "bandwidth",
		.what = "figure (b), consumed bandwidth vs local models",
		.title = "(b) consumed bandwidth vs local models per task",
		.xlabel = "local models per task",
		.setup = BY_LOCALS_SETUP,
		.per_experiment = true,
		.width = 1400, .height = 640,
		.npanels = 2,
		.panel = { {
			.title = "bytes per round, physical units",
			.ylabel = "x links per round",
			.unit = true,
			.line = {
				{ "1:3", "with linespoints dt 2 pt 6 lw 2",
				  "plan: model bytes x fibres" },
				{ "1:4:5:6", "with yerrorlines pt 7 lw 2",
				  "measured: bytes sent x fibres" },
				{ "1:7", "with linespoints dt 3 pt 4",
				  "measured: bytes sent x IP links" },
			},
		}, {
			.title = "wavelength-links (fibres spanned by lit "
				 "lightpaths)",
			.ylabel = "wavelength-links",
			.line = {
				{ "1:8", "with linespoints pt 5 lw 2",
				  "plan" },
			},
		} },
		.rows = bandwidth_data,
	},
	{
		.stem = "fig-fidelity",
		.file = "fidelity",
		.what = "twin fidelity, predicted vs measured round latency",
		.title = "twin fidelity: round latency per task, all runs",
		.xlabel = "predicted round latency (ms)",
		.setup = "set key below\nset size ratio -1\n",
		.width = 800, .height = 800,
		.npanels = 1,
		.panel = { {
			.ylabel = "measured round latency (ms), mean over "
				  "rounds",
			.first = "x with lines dt 2 lc rgb 'gray40' title "
				 "'y = x'",
			.line = { { "6:7", "with points pt 7 ps 1.2", NULL } },
		} },
		.rows = fidelity_data,
		.ranges = fidelity_ranges,
	},
};

/* Whether a scheduler is drawn in a figure: in an experiment's, when it
 * has points there; in a figure of all runs, always. */
static bool fig_has(const struct report *r, const struct fig_desc *d,
		    const char *exp, const char *sc)
{
	return !d->per_experiment || exp_has_sched(r, exp, sc);
}

/* The figure's title, with the experiment when there are several. */
static void fig_title(const struct report *r, const struct fig_desc *d,
		      FILE *f, const char *exp)
{
	gp_text(f, d->title);
	if (d->per_experiment && r->nexps > 1) {
		fputs(" (", f);
		gp_text(f, exp);
		fputc(')', f);
	}
	fputs("'\n", f);
}

/*
 * fig_write - one figure: the data file of each scheduler, the script,
 * and gnuplot run on it when some data file has a row. exp is NULL for a
 * figure of all runs. Returns the rows written.
 */
static int fig_write(struct report *r, const struct fig_desc *d,
		     const char *exp)
{
	struct unit u = exp ? exp_byte_unit(r, exp) : byte_unit(NAN);
	char sfx[64] = "", name[160], stem[128], part[48];
	int rows = 0, ns = 0;
	FILE *f;

	if (d->per_experiment)
		exp_suffix(r, exp, sfx, sizeof(sfx));
	for (int s = 0; s < r->nscheds; s++) {
		const char *sc = r->scheds[s];

		if (!fig_has(r, d, exp, sc))
			continue;
		fname_part(part, sizeof(part), sc);
		snprintf(name, sizeof(name), "%s%s-%s.dat", d->file, sfx,
			 part);
		f = out_open(r, name);
		if (!f)
			continue;
		d->rows(r, f, exp ? exp : "", sc, u, &rows);
		out_close(r, f, name);
	}
	snprintf(stem, sizeof(stem), "%s%s", d->stem, sfx);
	snprintf(name, sizeof(name), "%s.gp", stem);
	f = out_open(r, name);
	if (!f)
		return rows;
	gp_head(f, d->what);
	if (d->npanels == 1) {
		fputs("set title '", f);
		fig_title(r, d, f, exp);
	}
	fprintf(f, "set xlabel '%s'\n", d->xlabel);
	if (d->npanels == 1)
		fprintf(f, "set ylabel '%s'\n", d->panel[0].ylabel);
	fputs(d->setup, f);
	if (d->per_experiment)
		gp_xtics(f, r, exp);
	if (d->ranges)
		d->ranges(r, f);
	gp_terminal_loop(f, stem, d->width, d->height);
	if (d->npanels > 1) {
		fprintf(f, "set multiplot layout 1,%d title '", d->npanels);
		fig_title(r, d, f, exp);
	}
	for (int k = 0; k < d->npanels; k++) {
		const struct fig_panel *pn = &d->panel[k];
		bool first = true;

		if (d->npanels > 1)
			fprintf(f, "set title '%s'\nset ylabel '%s%s%s'\n",
				pn->title, pn->unit ? u.name : "",
				pn->unit ? " " : "", pn->ylabel);
		if (pn->first) {
			fprintf(f, "plot %s", pn->first);
			first = false;
		} else {
			fputs("plot \\\n", f);
		}
		ns = 0;
		for (int s = 0; s < r->nscheds; s++) {
			const char *sc = r->scheds[s];
			const char *c = rp_sched_colour(sc, s);

			if (!fig_has(r, d, exp, sc))
				continue;
			fname_part(part, sizeof(part), sc);
			snprintf(name, sizeof(name), "%s%s-%s.dat", d->file,
				 sfx, part);
			for (int l = 0; l < 3 && pn->line[l].cols; l++) {
				const struct fig_line *ln = &pn->line[l];

				fprintf(f, "%s'%s' using %s %s lc rgb '%s' "
					   "title '", first ? "" : ", \\\n",
					name, ln->cols, ln->style, c);
				gp_text(f, rp_sched_label(sc));
				if (ln->what)
					fprintf(f, ", %s", ln->what);
				fputc('\'', f);
				first = false;
			}
			ns++;
		}
		fputc('\n', f);
	}
	if (d->npanels > 1)
		fputs("unset multiplot\n", f);
	fputs("unset output\n}\n", f);
	snprintf(name, sizeof(name), "%s.gp", stem);
	if (!out_close(r, f, name) && ns && (d->per_experiment || rows))
		gp_run(r, name, stem);
	return rows;
}

int write_figures(struct report *r)
{
	size_t nfigs = sizeof(figs) / sizeof(figs[0]);
	int nfid = 0;

	/* an experiment's figures together, then those of all runs */
	for (int i = 0; i < r->nexps; i++)
		for (size_t k = 0; k < nfigs; k++)
			if (figs[k].per_experiment)
				fig_write(r, &figs[k], r->exps[i]);
	for (size_t k = 0; k < nfigs; k++)
		if (!figs[k].per_experiment)
			nfid += fig_write(r, &figs[k], NULL);
	return nfid;
}

void write_runs_csv(struct report *r)
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
