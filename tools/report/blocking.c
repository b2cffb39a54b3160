// SPDX-License-Identifier: MIT
/*
 * The report's blocking under offered load (experiments of kind
 * blocking, the twin alone): per experiment and local-model count, the
 * share of tasks blocked and of wavelength-links lit against the number of
 * tasks offered, per scheduler (mean, min and max over the seeds) — one
 * figure of two panels and a table.
 */
#include "tools/report/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/twinlab.h"

struct blk {
	char *experiment, *scheduler;
	long nlocals, load;
	int n;				/* seeds */
	double b_sum, b_min, b_max;	/* blocked share */
	double u_sum;			/* wavelength-links lit, share */
};

static int on_row(void *ctx, const struct results_blocking_row *row)
{
	struct report *r = ctx;
	struct blk *b = r->nblk ? &r->blk[r->nblk - 1] : NULL;
	double share = row->load > 0 ? (double)row->blocked / row->load : 0;
	double use = row->wl_total > 0 ?
			     (double)row->wl_used / row->wl_total : 0;

	if (!b || strcmp(b->experiment, row->experiment) ||
	    strcmp(b->scheduler, row->scheduler) ||
	    b->nlocals != row->nlocals || b->load != row->load) {
		struct blk *m = realloc(r->blk, (size_t)(r->nblk + 1) *
						       sizeof(*m));

		if (!m)
			return -ENOMEM;
		r->blk = m;
		b = &r->blk[r->nblk++];
		memset(b, 0, sizeof(*b));
		b->experiment = strdup(row->experiment);
		b->scheduler = strdup(row->scheduler);
		if (!b->experiment || !b->scheduler)
			return -ENOMEM;
		b->nlocals = row->nlocals;
		b->load = row->load;
		b->b_min = INFINITY;
		b->b_max = -INFINITY;
	}
	b->n++;
	b->b_sum += share;
	b->b_min = fmin(b->b_min, share);
	b->b_max = fmax(b->b_max, share);
	b->u_sum += use;
	return 0;
}

/* By experiment, local models, scheduler in the ops table's order, load. */
static int blk_cmp(const void *a, const void *b)
{
	const struct blk *x = a, *y = b;
	int c = strcmp(x->experiment, y->experiment);

	if (c)
		return c;
	if (x->nlocals != y->nlocals)
		return x->nlocals < y->nlocals ? -1 : 1;
	c = rp_sched_cmp(x->scheduler, y->scheduler);
	if (c)
		return c;
	return x->load < y->load ? -1 : x->load > y->load;
}

int load_blocking(struct report *r)
{
	char err[256];
	int e = rp_read_said(results_read_blocking(r->rd, on_row, r, err,
						   sizeof(err)), err);

	if (!e && r->nblk)
		qsort(r->blk, (size_t)r->nblk, sizeof(*r->blk), blk_cmp);
	return e;
}

void release_blocking(struct report *r)
{
	for (int i = 0; i < r->nblk; i++) {
		free(r->blk[i].experiment);
		free(r->blk[i].scheduler);
	}
	free(r->blk);
}

/* Whether rows a and b are of one figure (experiment, local models). */
static bool same_fig(const struct blk *a, const struct blk *b)
{
	return !strcmp(a->experiment, b->experiment) &&
	       a->nlocals == b->nlocals;
}

static const char *blk_sched(const struct report *r, int i)
{
	return r->blk[i].scheduler;
}

/* A load's line: its seeds, blocked (mean, min, max) and links lit. */
static void blk_row(FILE *f, const struct report *r, int i)
{
	const struct blk *b = &r->blk[i];

	fprintf(f, "%ld %d", b->load, b->n);
	dat_num(f, 100 * b->b_sum / b->n);
	dat_num(f, 100 * b->b_min);
	dat_num(f, 100 * b->b_max);
	dat_num(f, 100 * b->u_sum / b->n);
	fputc('\n', f);
}

/* One figure: rows [f0, f1) of r->blk (sorted by scheduler, then load). */
static void figure(struct report *r, FILE *md, int f0, int f1)
{
	const struct blk *b0 = &r->blk[f0];
	char stem[160], part[48], title[240], about[DAT_NAME + 64];
	char e[DAT_NAME];
	const char *sched[16];
	struct sched_fig fig = {
		.stem = stem,
		.about = about,
		.columns = "tasks seeds blocked_pct min_pct max_pct "
			   "wavelength_links_pct",
		.what = "blocking and wavelength use against offered load",
		.xlabel = "tasks offered",
		.title = title,
		.panel = {
			{ "tasks blocked", "% of tasks offered", "0:100",
			  "using 1:3:4:5 with yerrorlines" },
			{ "wavelength-links lit", "% of all wavelength-links",
			  "0:100", "using 1:6 with linespoints" } },
		.sched_of = blk_sched,
		.row = blk_row,
	};
	int ns;

	fname_part(part, sizeof(part), b0->experiment);
	snprintf(stem, sizeof(stem), "fig-blocking-%s-l%ld", part,
		 b0->nlocals);
	snprintf(about, sizeof(about), "blocking under load, %s, %ld local "
		 "models", dat_safe(b0->experiment, e, sizeof(e)),
		 b0->nlocals);
	snprintf(title, sizeof(title), "blocking under load: %s, %ld local "
		 "models per task", b0->experiment, b0->nlocals);
	ns = sched_figure(r, &fig, f0, f1, sched, 16);
	/* the table: one row per load, a column per scheduler */
	fprintf(md, "\n### %s, %ld local models per task\n\n",
		b0->experiment, b0->nlocals);
	md_sched_header(md, "tasks", sched, ns);
	for (int i = f0; i < f1; i++) {
		const struct blk *b = &r->blk[i];

		if (strcmp(b->scheduler, sched[0]))
			continue;
		fprintf(md, "\n| %ld |", b->load);
		for (int k = 0; k < ns; k++)
			for (int j = f0; j < f1; j++)
				if (r->blk[j].load == b->load &&
				    !strcmp(r->blk[j].scheduler, sched[k]))
					fprintf(md, " %.1f %% (%.1f %%) |",
						100 * r->blk[j].b_sum /
							r->blk[j].n,
						100 * r->blk[j].u_sum /
							r->blk[j].n);
	}
	md_sched_link(r, md, "blocking under load", stem);
}

void write_blocking(struct report *r, FILE *md)
{
	if (!r->nblk)
		return;
	fputs("\n## Blocking under load\n\nExperiments of kind blocking: "
	      "each number of tasks offered scheduled by the twin alone, "
	      "tasks of the same seed the same whatever the load (each load "
	      "adds tasks to the last). Cells: tasks blocked (wavelength-"
	      "links lit, of all the fibres carry), means over the seeds.\n",
	      md);
	for (int i = 0; i < r->nblk;) {
		int j = i;

		while (j < r->nblk && same_fig(&r->blk[i], &r->blk[j]))
			j++;
		figure(r, md, i, j);
		i = j;
	}
}
