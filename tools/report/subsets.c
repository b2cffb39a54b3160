// SPDX-License-Identifier: MIT
/*
 * The report's local-model subsets: runs of the scenarios `twinlab select
 * --write` makes (names ending in -all, -selected and -random), side by
 * side per scenario and scheduler — the measured round, the plan's
 * byte-links per round, and each task's held-out accuracy after each
 * round: what training fewer local models costs in learning and saves in
 * latency and bandwidth.
 */
#include "tools/report/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/twinlab.h"

static const char *const subset_name[] = { "all", "selected", "random" };
#define NSUB 3
#define SUB_TASKS 64		/* tasks shown per run */
#define SUB_ROUNDS 32		/* rounds shown per task */

/* Which subset a scenario name is (its stem's length in *stem), or -1. */
static int subset_of(const char *name, size_t *stem)
{
	size_t n = strlen(name);

	for (int k = 0; k < NSUB; k++) {
		size_t m = strlen(subset_name[k]);

		if (n > m + 1 && name[n - m - 1] == '-' &&
		    !strcmp(name + n - m, subset_name[k])) {
			*stem = n - m - 1;
			return k;
		}
	}
	return -1;
}

/* One run's accuracy, task by task, round by round. */
struct acc {
	int ntasks, nrounds;
	double v[SUB_TASKS][SUB_ROUNDS];
};

static int on_accuracy(void *ctx, int task, int round, double a)
{
	struct acc *x = ctx;

	if (task < 0 || task >= SUB_TASKS || round < 1 || round > SUB_ROUNDS)
		return 0;	/* beyond what the section shows */
	if (task >= x->ntasks)
		x->ntasks = task + 1;
	if (round > x->nrounds)
		x->nrounds = round;
	x->v[task][round - 1] = a;
	return 0;
}

/* The first task whose accuracy differs between two subsets' runs. */
static int differing_task(const struct acc *acc, const int *last)
{
	for (int t = 0; t < SUB_TASKS; t++)
		for (int q = 1; q < NSUB; q++)
			for (int r = 0; r < SUB_ROUNDS; r++)
				if (last[0] >= 0 && last[q] >= 0 &&
				    t < acc[0].ntasks && t < acc[q].ntasks &&
				    acc[0].v[t][r] != acc[q].v[t][r])
					return t;
	return 0;
}

/* accuracy against time spent and bytes moved, for task t of the group */
static void figure(struct report *r, FILE *md, const struct rrun *x,
		   size_t stem, const int *last, const struct acc *acc, int t)
{
	char name[240], part[96], fig[200], title[200];
	char e1[DAT_NAME], e2[DAT_NAME];
	const char *names[NSUB];
	int ns = 0;

	snprintf(title, sizeof(title), "%.*s-%s", (int)stem, x->scenario,
		 x->scheduler);
	fname_part(part, sizeof(part), title);
	snprintf(fig, sizeof(fig), "fig-subsets-%s", part);
	for (int q = 0; q < NSUB; q++) {
		const struct rrun *y = last[q] >= 0 ? &r->runs[last[q]] : NULL;
		FILE *f;

		if (!y)
			continue;
		names[ns++] = subset_name[q];
		f = out_open_sched(r, fig, subset_name[q], name, sizeof(name));
		if (!f)
			continue;
		fprintf(f, "# twinlab report: local-model subset %s of %.*s "
			   "(%s), run %" PRId64 ", task %d\n# round time_ms "
			   "byte_links accuracy\n", subset_name[q], (int)stem,
			dat_safe(x->scenario, e1, sizeof(e1)),
			dat_safe(x->scheduler, e2, sizeof(e2)), y->id, t);
		for (int k = 0; k < acc[q].nrounds; k++) {
			fprintf(f, "%d", k + 1);
			dat_num(f, (k + 1) * y->meas[PH_ROUND] * 1e3);
			dat_num(f, (k + 1) * y->plan_bf);
			dat_num(f, acc[q].v[t][k]);
			fputc('\n', f);
		}
		out_close(r, f, name);
	}
	snprintf(title, sizeof(title), "held-out accuracy of task %d: %.*s, "
		 "%s", t, (int)stem, x->scenario, x->scheduler);
	gp_sched_panels(r, fig, "local-model subsets: accuracy against time "
			"and bytes", "", title, names, ns,
			(const struct sched_panel[2]){
				{ .title = "against the time of the measured rounds",
				  .ylabel = "accuracy", .yrange = "0:1",
				  .plot = "using 2:4 with linespoints",
				  .xlabel = "ms, measured" },
				{ .title = "against the bytes the plan moves",
				  .ylabel = "accuracy", .yrange = "0:1",
				  .plot = "using 3:4 with linespoints",
				  .xlabel = "byte-links, plan" } });
	if (r->gnuplot)
		fprintf(md, "\n![task %d's accuracy](%s.png) ([SVG](%s.svg))\n",
			t, fig, fig);
}

void write_subsets(struct report *r, FILE *md)
{
	char err[256];
	bool any = false;
	struct acc *acc;

	for (int i = 0; i < r->nruns; i++) {
		const struct rrun *x = &r->runs[i];
		int last[NSUB] = { -1, -1, -1 }, n = 0;
		bool lead = true;
		size_t stem;

		if (subset_of(x->scenario, &stem) < 0 || x->degraded)
			continue;
		/* a group: one stem and scheduler; written at its first run,
		 * with the latest run of each subset */
		for (int j = 0; j < r->nruns && lead; j++) {
			const struct rrun *y = &r->runs[j];
			size_t s2;
			int q = subset_of(y->scenario, &s2);

			if (q < 0 || y->degraded || s2 != stem ||
			    strncmp(y->scenario, x->scenario, stem) ||
			    strcmp(y->scheduler, x->scheduler))
				continue;
			lead = j >= i;
			if (last[q] < 0 || y->id > r->runs[last[q]].id)
				last[q] = j;
		}
		for (int q = 0; q < NSUB; q++)
			n += last[q] >= 0;
		if (!lead || n < 2)
			continue;
		if (!any)
			fputs("\n## Local-model subsets\n\nRuns of the "
			      "scenarios `twinlab select --write` makes, "
			      "side by side: each task's held-out accuracy "
			      "after each round, the run's measured round "
			      "(mean over its tasks) and the plan's byte-links "
			      "per round. The subset's task trains only its "
			      "chosen local models, each on the share of the "
			      "data it held among all of them.\n", md);
		any = true;
		fprintf(md, "\n### %.*s, %s\n\n| subset | task | run | round ms "
			    "| byte-links | accuracy after each round |\n"
			    "|---|---:|---:|---:|---:|---|", (int)stem,
			x->scenario, x->scheduler);
		acc = calloc(NSUB, sizeof(*acc));
		if (!acc)
			break;
		for (int q = 0; q < NSUB; q++)
			if (last[q] >= 0 &&
			    results_read_accuracy(r->rd, r->runs[last[q]].id,
						  on_accuracy, &acc[q], err,
						  sizeof(err)))
				p_err("%s", err);
		for (int q = 0; q < NSUB; q++) {
			const struct rrun *y = last[q] >= 0 ?
						       &r->runs[last[q]] : NULL;

			for (int t = 0; y && t < acc[q].ntasks; t++) {
				fprintf(md, "\n| %s | %d | %" PRId64 " | %.3f | "
					    "%.4g | ", subset_name[q], t, y->id,
					y->meas[PH_ROUND] * 1e3, y->plan_bf);
				for (int k = 0; k < acc[q].nrounds; k++)
					if (isnan(acc[q].v[t][k]))
						fputs(" -", md);
					else
						fprintf(md, " %.3f",
							acc[q].v[t][k]);
				fputs(" |", md);
			}
		}
		fputc('\n', md);
		figure(r, md, x, stem, last, acc, differing_task(acc, last));
		free(acc);
	}
}
