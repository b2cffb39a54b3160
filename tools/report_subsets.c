// SPDX-License-Identifier: MIT
/*
 * The report's local-model subsets: runs of the scenarios `twinlab select
 * --write` makes (names ending in -all, -selected and -random), side by
 * side per scenario and scheduler — the measured round, the plan's
 * byte-links per round, and each task's held-out accuracy after each
 * round: what training fewer local models costs in learning and saves in
 * latency and bandwidth.
 */
#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twinlab.h"

static const char *const subset_name[] = { "all", "selected", "random" };
#define NSUB 3

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

struct acc_rows {
	FILE *md;
	const char *subset;
	const struct rrun *run;
	int task;		/* the row being written, or -1 */
};

static int on_accuracy(void *ctx, int task, int round, double acc)
{
	struct acc_rows *a = ctx;

	(void)round;
	if (task != a->task) {
		fprintf(a->md, "%s\n| %s | %d | %" PRId64 " | %.3f | %.4g | ",
			a->task < 0 ? "" : " |", a->subset, task, a->run->id,
			a->run->meas[PH_ROUND] * 1e3, a->run->plan_bf);
		a->task = task;
	}
	if (isnan(acc))
		fputs(" -", a->md);
	else
		fprintf(a->md, " %.3f", acc);
	return 0;
}

void write_subsets(struct report *r)
{
	char *text = NULL, err[256];
	size_t len = 0;
	FILE *md;
	bool any = false;

	md = open_memstream(&text, &len);
	if (!md)
		return;
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
		for (int q = 0; q < NSUB; q++) {
			struct acc_rows a = { md, subset_name[q],
					      last[q] >= 0 ? &r->runs[last[q]] :
							     NULL, -1 };

			if (!a.run)
				continue;
			if (results_read_accuracy(r->rd, a.run->id, on_accuracy,
						  &a, err, sizeof(err)))
				p_err("%s", err);
			if (a.task >= 0)
				fputs(" |", md);
		}
		fputc('\n', md);
	}
	fclose(md);
	if (any)
		r->subsets_md = text;
	else
		free(text);
}
