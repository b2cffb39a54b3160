// SPDX-License-Identifier: MIT
/*
 * The report's optimality gaps (experiments of kind gap, the twin alone):
 * per experiment, each scheduler's tree weight over opt's for one task on
 * the empty network, against the number of local models — mean, median,
 * 95th percentile and largest gap, and how often the scheduler found the
 * optimum — one figure of two panels and a table.
 */
#include "tools/report/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/twinlab.h"

/* One experiment x scheduler x local-model count: its instances. */
struct gapr {
	char *experiment, *scheduler, *base;
	long nlocals;
	int n, blocked, optimal;
	double *gap;			/* n gaps (fractions), sorted */
	double seconds, opt_seconds;	/* sums */
};

/* Relative slack below which a weight counts as opt's. */
#define GAP_EPS 1e-9

static int on_row(void *ctx, const struct results_gap_row *row)
{
	struct report *r = ctx;
	struct gapr *g = r->ngap ? &r->gap[r->ngap - 1] : NULL;
	double *ng;

	if (!g || strcmp(g->experiment, row->experiment) ||
	    strcmp(g->scheduler, row->scheduler) ||
	    g->nlocals != row->nlocals) {
		struct gapr *m = realloc(r->gap, (size_t)(r->ngap + 1) *
							 sizeof(*m));

		if (!m)
			return -ENOMEM;
		r->gap = m;
		g = &r->gap[r->ngap++];
		memset(g, 0, sizeof(*g));
		g->experiment = strdup(row->experiment);
		g->scheduler = strdup(row->scheduler);
		g->base = strdup(row->base);
		if (!g->experiment || !g->scheduler || !g->base)
			return -ENOMEM;
		g->nlocals = row->nlocals;
	}
	if (row->blocked || !(row->weight > 0) || !(row->opt_weight > 0)) {
		g->blocked++;
		return 0;
	}
	ng = realloc(g->gap, (size_t)(g->n + 1) * sizeof(*ng));
	if (!ng)
		return -ENOMEM;
	g->gap = ng;
	g->gap[g->n++] = row->weight / row->opt_weight - 1;
	g->optimal += row->weight <= row->opt_weight * (1 + GAP_EPS);
	g->seconds += isfinite(row->seconds) ? row->seconds : 0;
	g->opt_seconds += isfinite(row->opt_seconds) ? row->opt_seconds : 0;
	return 0;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* By experiment, scheduler in the ops table's order, local models. */
static int gap_cmp(const void *a, const void *b)
{
	const struct gapr *x = a, *y = b;
	int c = strcmp(x->experiment, y->experiment);

	if (c)
		return c;
	c = rp_sched_cmp(x->scheduler, y->scheduler);
	if (c)
		return c;
	return x->nlocals < y->nlocals ? -1 : x->nlocals > y->nlocals;
}

int load_gap(struct report *r)
{
	char err[256];
	int e = rp_read_said(results_read_gap(r->rd, on_row, r, err,
					      sizeof(err)), err);

	if (e)
		return e;
	for (int i = 0; i < r->ngap; i++)
		qsort(r->gap[i].gap, (size_t)r->gap[i].n, sizeof(double),
		      dbl_cmp);
	qsort(r->gap, (size_t)r->ngap, sizeof(*r->gap), gap_cmp);
	return 0;
}

void release_gap(struct report *r)
{
	for (int i = 0; i < r->ngap; i++) {
		free(r->gap[i].experiment);
		free(r->gap[i].scheduler);
		free(r->gap[i].base);
		free(r->gap[i].gap);
	}
	free(r->gap);
}

/* The q-quantile of g's sorted gaps (nearest rank). */
static double quantile(const struct gapr *g, double q)
{
	int k = (int)ceil(q * g->n) - 1;

	return g->n ? g->gap[k < 0 ? 0 : k] : NAN;
}

/*
 * A gap in per cent as the table shows it (one decimal): a heuristic's
 * weight can come out a rounding error under opt's, which is no gap, not
 * "-0.0 %".
 */
static double shown(double gap)
{
	return fabs(gap) < 5e-4 ? 0 : 100 * gap;
}

static double mean(const struct gapr *g)
{
	double s = 0;

	for (int i = 0; i < g->n; i++)
		s += g->gap[i];
	return g->n ? s / g->n : NAN;
}

static const char *gap_sched(const struct report *r, int i)
{
	return r->gap[i].scheduler;
}

/* A local-model count's line, when it has gaps: their mean, median, 95th
 * percentile and largest, and the share solved optimally. */
static void gap_row(FILE *f, const struct report *r, int i)
{
	const struct gapr *g = &r->gap[i];

	if (!g->n)
		return;
	fprintf(f, "%ld %d", g->nlocals, g->n);
	dat_num(f, 100 * mean(g));
	dat_num(f, 100 * quantile(g, 0.5));
	dat_num(f, 100 * quantile(g, 0.95));
	dat_num(f, 100 * g->gap[g->n - 1]);
	dat_num(f, 100.0 * g->optimal / g->n);
	fputc('\n', f);
}

/* One experiment: rows [f0, f1) of r->gap. */
static void figure(struct report *r, FILE *md, int f0, int f1)
{
	const struct gapr *g0 = &r->gap[f0];
	char stem[160], part[48], title[240], about[DAT_NAME + 64];
	char e[DAT_NAME];
	const char *sched[16];
	long nl[64];
	int ns, nn = 0, inst = 0;
	double opt_s = 0;
	struct sched_fig fig = {
		.stem = stem,
		.about = about,
		.columns = "local_models instances mean_pct median_pct "
			   "p95_pct max_pct optimal_pct",
		.what = "optimality gap against local models",
		.xlabel = "local models per task",
		.title = title,
		.panel = {
			{ "gap to opt: mean, bars to the 95th percentile",
			  "% over opt", "0:*",
			  "using 1:3:3:5 with yerrorlines" },
			{ "instances solved optimally", "% of instances",
			  "0:105", "using 1:7 with linespoints" } },
		.sched_of = gap_sched,
		.row = gap_row,
	};

	fname_part(part, sizeof(part), g0->experiment);
	snprintf(stem, sizeof(stem), "fig-gap-%s", part);
	for (int i = f0; i < f1; i++) {
		const struct gapr *g = &r->gap[i];
		bool seen = false;

		for (int k = 0; k < nn; k++)
			seen |= nl[k] == g->nlocals;
		if (!seen && nn < 64)
			nl[nn++] = g->nlocals;
		if (!strcmp(g->scheduler, g0->scheduler)) {
			inst += g->n + g->blocked;
			opt_s += g->opt_seconds;
		}
	}
	snprintf(about, sizeof(about), "optimality gap, %s",
		 dat_safe(g0->experiment, e, sizeof(e)));
	snprintf(title, sizeof(title), "tree weight over the optimum: %s",
		 g0->experiment);
	ns = sched_figure(r, &fig, f0, f1, sched, 16);
	fprintf(md, "\n### %s\n\nOn %s: %d instances; opt took %.3f s per "
		    "instance on average.\n\n", g0->experiment, g0->base, inst,
		inst ? opt_s / inst : 0);
	md_sched_header(md, "local models", sched, ns);
	for (int l = 0; l < nn; l++) {
		fprintf(md, "\n| %ld |", nl[l]);
		for (int k = 0; k < ns; k++) {
			const struct gapr *g = NULL;

			for (int i = f0; i < f1 && !g; i++)
				if (r->gap[i].nlocals == nl[l] &&
				    !strcmp(r->gap[i].scheduler, sched[k]))
					g = &r->gap[i];
			if (!g || !g->n)
				fputs(" blocked |", md);
			else
				fprintf(md, " %.1f / %.1f / %.1f %%, %d of %d "
					    "|", shown(mean(g)),
					shown(quantile(g, 0.95)),
					shown(g->gap[g->n - 1]), g->optimal,
					g->n);
		}
	}
	md_sched_link(r, md, "optimality gap", stem);
}

void write_gap(struct report *r, FILE *md)
{
	if (!r->ngap)
		return;
	fputs("\n## Optimality gap\n\nExperiments of kind gap: one task per "
	      "instance on the empty network, its tree weight (the "
	      "auxiliary-graph weight of its broadcast and upload trees, "
	      "`tree_weight`) by each scheduler over opt's, the exact minimum. "
	      "Cells: mean / 95th percentile / largest gap, and the instances "
	      "a scheduler solved optimally.\n", md);
	for (int i = 0; i < r->ngap;) {
		int j = i;

		while (j < r->ngap &&
		       !strcmp(r->gap[i].experiment, r->gap[j].experiment))
			j++;
		figure(r, md, i, j);
		i = j;
	}
}
