// SPDX-License-Identifier: MIT
/*
 * report.md: the reading (computed sentences, causes stated as hypotheses
 * only), the tables of figures (a) and (b), the twin's fidelity, the
 * pictures, the runs, failures and correctness checks.
 */
#include "tools/report/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "twin/sched.h"

/* Poster figures the reading compares against (Wang et al., SIGCOMM 2024
 * poster, arXiv 2407.04845): flexible vs fixed scheduling, ms. */
#define POSTER_FLEX_MS 1.9
#define POSTER_FIXED_MS 2.3

const char *const phase_name[NPH] = { "round", "broadcast", "training",
				      "upload" };

static const char *pic_name(const struct picture *pic, const char *ext,
			    char *buf, size_t len)
{
	snprintf(buf, len, "%s.%s", pic->stem, ext);
	return buf;
}

/* One scheduler against the baseline; returns whether they were compared. */
static bool reading_experiment(const struct report *r, FILE *f,
			       const char *exp, const struct sched_ops *fo,
			       const struct sched_ops *xo)
{
	const char *flex = fo->name, *fixed = xo->name;
	const char *frole = fo->role, *xrole = xo->role;
	const struct point *a, *b, *p, *q;
	int n = common_max_n(r, exp, flex, fixed), faster = 0, pfaster = 0;
	int both = 0;
	double gap = -1;
	int gk = -1;

	if (n < 0) {
		fprintf(f, "- The experiment does not have measured latencies "
			   "for both the %s (%s) and the %s (%s) scheduler at "
			   "one number of local models, so they are not "
			   "compared.\n", xrole, fixed, frole, flex);
		return false;
	}
	a = find_point(r, exp, flex, n);
	b = find_point(r, exp, fixed, n);
	fprintf(f, "- At %d local models per task the %s scheduler's "
		   "measured latency is %.3f ms vs %.3f ms for the %s one "
		   "(ratio %.2f; medians over %d and %d seeds). The poster "
		   "reports %.1f vs %.1f ms (ratio %.2f).", n, frole,
		a->lat_med * 1e3, b->lat_med * 1e3, xrole,
		ratio(a->lat_med, b->lat_med), a->nmeas, b->nmeas,
		POSTER_FLEX_MS, POSTER_FIXED_MS,
		POSTER_FLEX_MS / POSTER_FIXED_MS);
	if (a->lat_med < b->lat_med)
		fprintf(f, " Same direction as the poster: %s is faster "
			   "(%.0f%% less latency here, %.0f%% in the poster)",
			frole, (1 - ratio(a->lat_med, b->lat_med)) * 100,
			(1 - POSTER_FLEX_MS / POSTER_FIXED_MS) * 100);
	else
		fprintf(f, " This differs from the poster: %s is not faster "
			   "here", frole);
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
	fprintf(f, "- The twin predicts %.3f ms (%s) vs %.3f ms "
		   "(%s) at %d local models (ratio %.2f).\n",
		a->lat_pred * 1e3, frole, b->lat_pred * 1e3, xrole, n,
		ratio(a->lat_pred, b->lat_pred));
	for (int i = 0; (p = exp_point(r, exp, flex, &i));) {
		q = find_point(r, exp, fixed, p->nlocals);
		if (!q || !isfinite(p->lat_med) || !isfinite(q->lat_med))
			continue;
		both++;
		faster += p->lat_med < q->lat_med;
		pfaster += p->lat_pred < q->lat_pred;
	}
	fprintf(f, "- Over the %d numbers of local models measured with "
		   "both schedulers, %s has the lower measured median "
		   "at %d and the lower prediction at %d.\n", both, frole,
		faster, pfaster);
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
			   "%s: %.3f ms %s vs %.3f ms %s (predicted "
			   "%.3f vs %.3f ms).\n", n, phase_name[gk],
			a->ph_med[gk] * 1e3, frole, b->ph_med[gk] * 1e3, xrole,
			a->ph_pred[gk] * 1e3, b->ph_pred[gk] * 1e3);
	if (isfinite(a->depth) && isfinite(b->depth)) {
		double db = a->ph_med[PH_BCAST] - b->ph_med[PH_BCAST];
		bool lighter = a->busiest < b->busiest;

		fprintf(f, "- Why, at %d local models (the plans' shapes; "
			   "table below): the %s plan's broadcast trees are "
			   "%.2f levels deep on average against %.2f, %.0f "
			   "of its tasks are stars against %.0f, %.2f models "
			   "aggregate a task against %.2f, and its busiest "
			   "link carries %.1f MB a round against %.1f. ",
			n, frole, a->depth, b->depth, a->stars, b->stars,
			a->aggs, b->aggs, a->busiest / 1e6, b->busiest / 1e6);
		if (isfinite(db) && db < 0 && lighter)
			fputs("Hypothesis: less sharing on the busiest links "
			      "gains more in the broadcast than the extra "
			      "levels cost", f);
		else if (isfinite(db) && db > 0 && a->depth > b->depth)
			fputs("Hypothesis: each extra level costs the "
			      "broadcast more than the sharing it saves", f);
		else
			fputs("The broadcast differs little", f);
		fprintf(f, "; training differs by %+.3f ms (where the "
			   "aggregations are and the CPU they share), the "
			   "upload by %+.3f ms.\n",
			(a->ph_med[PH_COMPUTE] - b->ph_med[PH_COMPUTE]) * 1e3,
			(a->ph_med[PH_UPLOAD] - b->ph_med[PH_UPLOAD]) * 1e3);
	}
	if (isfinite(a->plan_bf) && isfinite(b->plan_bf))
		fprintf(f, "- Bandwidth at %d local models: the %s plan "
			   "uses %.2f times the %s plan's bytes x fibres "
			   "and %.0f vs %.0f wavelength-links; measured bytes "
			   "x fibres are %.2f times the %s scheduler's.\n",
			n, frole, ratio(a->plan_bf, b->plan_bf), xrole, a->wl,
			b->wl, ratio(a->bf_med, b->bf_med), xrole);
	return true;
}

/* Per scheduler: measured latency over predicted, over an experiment's
 * points. Returns whether one is more than 10% off. */
static bool reading_ratios(const struct report *r, FILE *f, const char *exp)
{
	bool off = false;

	for (int s = 0; s < r->nscheds; s++) {
		double *v = calloc((size_t)r->npoints + 1, sizeof(*v));
		double lo = NAN, hi = NAN, med;
		const struct point *p;
		int k = 0;

		if (!v)
			return off;
		for (int i = 0; (p = exp_point(r, exp, r->scheds[s], &i));) {
			double q = ratio(p->lat_med, p->lat_pred);

			if (!isfinite(q))
				continue;
			v[k++] = q;
			lo = fmin_nan(lo, q);
			hi = fmax_nan(hi, q);
		}
		med = rp_median(v, k);
		free(v);
		if (!k)
			continue;
		fprintf(f, "- %s: measured latency is %.2f times the "
			   "prediction (median over %d numbers of local "
			   "models, range %.2f-%.2f).\n",
			rp_sched_label(r->scheds[s]), med, k, lo, hi);
		off = off || fabs(med - 1) > 0.1;
	}
	return off;
}

static void write_reading(const struct report *r, FILE *f)
{
	const struct sched_ops *base = NULL;
	bool off = false;
	int said = 0;

	fputs("\n## Reading\n\n"
	      "Computed from the tables below; causes are stated as "
	      "hypotheses only.\n\n", f);
	for (int j = 0; sched_list[j]; j++)
		if (sched_list[j]->baseline)
			base = sched_list[j];
	if (r->npoints) {
		for (int e = 0; e < r->nexps; e++) {
			if (r->nexps > 1)
				fprintf(f, "\nExperiment `%s`:\n\n",
					r->exps[e]);
			bool compared = false;

			for (int j = 0; base && sched_list[j]; j++)
				if (sched_list[j] != base)
					compared = reading_experiment(
						r, f, r->exps[e], sched_list[j],
						base) || compared;
			if (compared)
				off = reading_ratios(r, f, r->exps[e]) || off;
		}
	} else {
		fputs("- No experiment points: these runs were made with "
		      "`twinlab run`, so latency and bandwidth are not "
		      "plotted against the number of local models.\n", f);
	}
	for (int j = 0; !r->npoints && base && sched_list[j]; j++) {
		double m[2] = { NAN, NAN };
		const char *nm[2] = { sched_list[j]->name, base->name };

		if (sched_list[j] == base)
			continue;
		for (int k = 0; k < 2; k++) {
			double *v = calloc((size_t)r->nruns + 1, sizeof(*v));
			int n = 0;

			if (!v)
				return;
			for (int i = 0; i < r->nruns; i++)
				if (!strcmp(r->runs[i].scheduler, nm[k]))
					v[n++] = r->runs[i].meas[PH_ROUND];
			m[k] = rp_median(v, n);
			free(v);
		}
		if (isfinite(m[0]) && isfinite(m[1]))
			fprintf(f, "- Over the runs present (pooled, whatever "
				   "their scenario), the %s scheduler's "
				   "median measured latency is %.3f ms vs %.3f "
				   "ms %s (ratio %.2f). The poster reports "
				   "%.1f vs %.1f ms (ratio %.2f).\n",
				sched_list[j]->role, m[0] * 1e3, m[1] * 1e3,
				base->role, ratio(m[0], m[1]),
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
			rp_sched_label(r->scheds[s]), q.n, q.med, q.min, q.max,
			q.within, q.n);
		if (isfinite(q.r))
			fprintf(f, "; Pearson r = %.2f", q.r);
		fputs(".\n", f);
		off = off || fabs(q.med - 1) > 0.1;
	}
	if (off)
		fputs("- Where measurement and prediction differ by more than "
		      "10%: the twin models neither TCP dynamics nor headers, "
		      "and takes aggregation as instantaneous (twin/README.md, "
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
		med = rp_median(v, n);
		free(v);
		if (isfinite(med))
			fprintf(f, "%s %s %.2f", said++ ? "," :
				"- Measured bytes x fibres over the plan's "
				"(median over runs):",
				rp_sched_label(r->scheds[s]), med);
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
	      "fidelity: the monitor's verdict (emu/README.md, Fidelity); model: the "
	      "twin's model that predicted the run.\n", f);
	for (int i = 0; i < r->nruns; i++)
		if (r->runs[i].ntouched)
			fprintf(f, "\nRun %lld: %ld of its %ld task-rounds were "
				"touched from the live view (a cut, repair or "
				"traffic from the page, which no prediction "
				"has): counted, not in its means, bytes or "
				"comparisons with the twin.\n",
				(long long)r->runs[i].id, r->runs[i].ntouched,
				r->runs[i].nrounds);
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
		md_text(f, rp_sched_label(r->scheds[s]));
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

	snprintf(png, sizeof(png), "%s.png", stem);
	if (was_made(r, png))
		fprintf(f, "\n![%s](%s.png) ([SVG](%s.svg), script "
			   "`%s.gp`)\n", alt, stem, stem, stem);
	else
		fprintf(f, "\n(figure not rendered, %s; the script `%s.gp` "
			   "and its data are here)\n",
			r->gnuplot ? "gnuplot failed" :
				     "gnuplot is not installed (Debian "
				     "package gnuplot-nox)", stem);
}


/* A point's row of a table starts with its scheduler and local models. */
static void row_head(FILE *f, const struct point *p)
{
	fputs("| ", f);
	md_text(f, rp_sched_label(p->scheduler));
	fprintf(f, " | %d", p->nlocals);
}

/*
 * A figure's section: its heading, naming exp when there are more, and
 * in stem (len bytes) the figure's file stem, "fig-<name>" and exp's
 * suffix.
 */
static void fig_section(const struct report *r, FILE *f, const char *exp,
			const char *name, const char *heading, char *stem,
			size_t len)
{
	char sfx[64];

	exp_suffix(r, exp, sfx, sizeof(sfx));
	snprintf(stem, len, "fig-%s%s", name, sfx);
	fprintf(f, "\n## %s", heading);
	if (r->nexps > 1)
		fprintf(f, ": experiment `%s`", exp);
}

static void write_latency_table(const struct report *r, FILE *f,
				const char *exp)
{
	const struct point *p;
	char stem[96];

	fig_section(r, f, exp, "latency",
		    "(a) Average latency vs number of local models", stem,
		    sizeof(stem));
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
	for (int i = 0; (p = exp_point(r, exp, NULL, &i));) {
		row_head(f, p);
		fprintf(f, " | %d | ", p->nmeas);
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
	for (int i = 0; (p = exp_point(r, exp, NULL, &i));) {
		row_head(f, p);
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

/* A table cell "a / b". */
static void pair_cell(FILE *f, int prec, double a, double b)
{
	fputs(" | ", f);
	md_num(f, 'f', prec, a);
	fputs(" / ", f);
	md_num(f, 'f', prec, b);
}

/*
 * Each scheduler against the baseline, local-model count by count: what
 * each phase gains or loses, measured and predicted, beside the plans'
 * shapes that make it (depth, stars, aggregators, the busiest link).
 */
static void write_phase_diff(const struct report *r, FILE *f, const char *exp,
			     const struct sched_ops *base)
{
	const struct point *p, *q;
	bool head = false;

	for (int i = 0; base && (p = exp_point(r, exp, NULL, &i));) {
		if (!strcmp(p->scheduler, base->name))
			continue;
		q = find_point(r, exp, base->name, p->nlocals);
		if (!q)
			continue;
		if (!head)
			fprintf(f, "\nWhere each scheduler gains (-) or loses "
				   "(+) against `%s`, by phase: measured "
				   "median difference, ms (predicted in "
				   "brackets), and the plans' shapes, the "
				   "scheduler's / `%s`'s: broadcast depth "
				   "(levels, mean over tasks), tasks whose "
				   "broadcast is a star, models that aggregate "
				   "(mean a task), the busiest link's MB a "
				   "round:\n\n"
				   "| scheduler | local models | broadcast | "
				   "training | upload | depth | stars | "
				   "aggregating | busiest link |\n"
				   "|---|---:|---:|---:|---:|---:|---:|---:|"
				   "---:|\n", base->name, base->name);
		head = true;
		row_head(f, p);
		for (int k = PH_BCAST; k < NPH; k++) {
			fputs(" | ", f);
			md_num(f, '+', 3, (p->ph_med[k] - q->ph_med[k]) * 1e3);
			fputs(" (", f);
			md_num(f, '+', 3,
			       (p->ph_pred[k] - q->ph_pred[k]) * 1e3);
			fputc(')', f);
		}
		pair_cell(f, 2, p->depth, q->depth);
		pair_cell(f, 0, p->stars, q->stars);
		pair_cell(f, 2, p->aggs, q->aggs);
		pair_cell(f, 1, p->busiest / 1e6, q->busiest / 1e6);
		fputs(" |\n", f);
	}
}

static void write_bandwidth_table(const struct report *r, FILE *f,
				  const char *exp)
{
	struct unit u = exp_byte_unit(r, exp);
	const struct point *p;
	char stem[96];

	fig_section(r, f, exp, "bandwidth",
		    "(b) Consumed bandwidth vs number of local models", stem,
		    sizeof(stem));
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
	for (int i = 0; (p = exp_point(r, exp, NULL, &i));) {
		row_head(f, p);
		fputs(" | ", f);
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
		md_text(f, rp_sched_label(r->scheds[s]));
		fprintf(f, " | %d | ", n);
		md_num(f, 'f', 3, rp_median(w[0], n) * 1e3);
		fputs(" | ", f);
		md_num(f, 'f', 3, lo * 1e3);
		fputs(" | ", f);
		md_num(f, 'f', 3, hi * 1e3);
		fputs(" | ", f);
		md_num(f, 'f', 3, rp_median(w[1], n) * 1e3);
		for (int k = 2; k < 5; k++) {
			fputs(" | ", f);
			md_num(f, 'g', 4, rp_median(w[k], n) / u.div);
		}
		fputs(" | ", f);
		md_num(f, 'g', 4, rp_median(w[5], n));
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
		md_text(f, rp_sched_label(r->scheds[s]));
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
		md_text(f, rp_sched_label(r->scheds[s]));
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
				fprintf(f, ": ![%s](%s)\n", tp->task,
					pic_name(tp, "svg", buf, sizeof(buf)));
			else if (tp->dot)
				fprintf(f, ": `%s.dot` (not rendered)\n",
					tp->stem);
			else
				fputs(": not written\n", f);
		}
	}
}

int write_md(struct report *r, const struct picture *pic, int nfid)
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
	fputs(". Latencies are measured wall-clock milliseconds per round; ",
	      f);
	for (int i = 0; sched_list[i]; i++)
		fprintf(f, "%s%s = `%s`", i ? ", " : "", sched_list[i]->role,
			sched_list[i]->name);
	fputs(". Data files (`.dat`, `runs.csv`) and gnuplot scripts (`.gp`) "
	      "are next to this file.\n", f);
	if (r->nruns)
		write_reading(r, f);
	for (int e = 0; e < r->nexps; e++) {
		const struct sched_ops *base = NULL;

		for (int j = 0; sched_list[j]; j++)
			if (sched_list[j]->baseline)
				base = sched_list[j];
		write_latency_table(r, f, r->exps[e]);
		write_phase_diff(r, f, r->exps[e], base);
		write_bandwidth_table(r, f, r->exps[e]);
	}
	if (!r->npoints && r->nruns)
		write_sched_table(r, f);
	if (r->nruns)
		write_fidelity_table(r, f, nfid);
	for (int i = 0; i < report_nsections; i++)
		if (r->section_md[i])
			fputs(r->section_md[i], f);
	/* a database of blocking points or gaps alone has no runs to list */
	if (r->nruns) {
		write_pictures_md(r, f, pic);
		write_runs_table(r, f);
		write_failures(r, f);
		write_checks(r, f);
	}
	return out_close(r, f, "report.md");
}
