// SPDX-License-Identifier: MIT
/*
 * The report's plan pictures: per scheduler the network of one run (each
 * fibre with its lit wavelengths) and each task's two trees alone, as the
 * run stored them (DOT text), drawn by Graphviz as SVG and PNG.
 */
#include "tools/report/report.h"
#include "tools/twinlab.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* The run pictured for a scheduler: the point with the most local models,
 * first seed; without points the newest run. Only runs with a picture. */
static int picture_run(struct report *r, const char *sched)
{
	int best = -1;

	for (int i = 0; i < r->norder; i++) {
		const struct rrun *x = &r->runs[r->order[i]];

		if (strcmp(x->scheduler, sched))
			continue;
		if (best < 0 || x->nlocals > r->runs[best].nlocals ||
		    (x->nlocals == r->runs[best].nlocals &&
		     x->seed < r->runs[best].seed))
			best = r->order[i];
	}
	if (best < 0)
		for (int i = 0; i < r->nruns; i++)
			if (!strcmp(r->runs[i].scheduler, sched))
				best = i;
	return best;
}

/*
 * Render one picture as SVG and PNG, both from one layout (one Graphviz
 * process). Graphviz 2.43's neato crashes now and then routing curved
 * edges (splines=true) on our bigger plans, the same graph passing on
 * another try; a crash is tried once more, then the picture is drawn with
 * straight edges, which has not crashed.
 */
static void render_picture(struct report *r, struct picture *pc,
			   const char *name)
{
	static const char *const fmt[] = { "svg", "png" };
	char log[PATH_MAX], path[PATH_MAX], out[2][200], opt[2][16];
	char straight[] = "-Gsplines=false";
	char *argv[] = { "dot", opt[0], "-o", out[0], opt[1], "-o", out[1],
			 (char *)name, NULL, NULL };
	struct spawn_result res;
	int err = 0;

	pc->rendered = false;
	snprintf(log, sizeof(log), "%s/dot.log", r->dir);
	for (int k = 0; k < 2; k++) {
		snprintf(opt[k], sizeof(opt[k]), "-T%s", fmt[k]);
		snprintf(out[k], sizeof(out[k]), "%s.%s", pc->stem, fmt[k]);
		if (out_clear(r, out[k]))
			return;
	}
	for (int try = pc->straight ? 2 : 0; try < 3; try++) {
		if (try == 2) {
			argv[7] = straight;
			argv[8] = (char *)name;
			if (!pc->straight)
				p_err("warning: Graphviz crashed twice on "
				      "'%s/%s'; drawing it with straight "
				      "edges", r->dir, name);
			pc->straight = true;
		}
		err = report_exec(r, DOT, argv, log, &res);
		if (err || res.timed_out || !WIFSIGNALED(res.status))
			break;
	}
	if (err || !spawn_ok(&res)) {
		snprintf(path, sizeof(path), "%s/%s", r->dir, name);
		report_exec_fail(r, DOT, err, &res, path, log);
		return;
	}
	for (int k = 0; k < 2; k++)
		made(r, out[k]);
	pc->rendered = true;
}

static bool task_wanted(const struct report *r, const char *name)
{
	for (int i = 0; i < r->nwant; i++)
		if (!strcmp(r->want_task[i], name))
			return true;
	return r->nwant == 0;
}

struct task_pics {
	struct report *r;
	struct picture *pc;
	int cap;
};

static int task_picture(void *ctx, const char *task, const char *dot)
{
	struct task_pics *tx = ctx;
	struct report *r = tx->r;
	struct picture *pc = tx->pc, *tp;
	char part[48], name[200];
	FILE *f;

	if (!task_wanted(r, task))
		return 0;
	if (pc->ntasks == tx->cap) {
		struct picture *m = realloc(pc->tasks, sizeof(*m) *
						     (size_t)(tx->cap * 2 + 8));

		if (!m)
			return -ENOMEM;
		pc->tasks = m;
		tx->cap = tx->cap * 2 + 8;
	}
	tp = &pc->tasks[pc->ntasks++];
	memset(tp, 0, sizeof(*tp));
	tp->run = pc->run;
	snprintf(tp->task, sizeof(tp->task), "%s", task);
	fname_part(part, sizeof(part), task);
	snprintf(tp->stem, sizeof(tp->stem), "%.100s-%s", pc->stem, part);
	snprintf(name, sizeof(name), "%s.dot", tp->stem);
	f = out_open(r, name);
	if (!f)
		return 0;
	fputs(dot, f);
	if (out_close(r, f, name))
		return 0;
	tp->dot = true;
	if (r->dot)
		render_picture(r, tp, name);
	return 0;
}

void write_pictures(struct report *r, struct picture *pic)
{
	for (int s = 0; s < r->nscheds; s++) {
		struct picture *pc = &pic[s];
		struct task_pics tx = { r, pc, 0 };
		int i = picture_run(r, r->scheds[s]);
		char part[48], name[128];
		char *dot;
		FILE *f;

		if (i < 0)
			continue;
		pc->run = r->runs[i].id;
		dot = results_read_plan_dot(r->rd, pc->run);
		if (!dot)
			continue;
		fname_part(part, sizeof(part), r->scheds[s]);
		snprintf(pc->stem, sizeof(pc->stem), "plan-%s-run%lld", part,
			 (long long)pc->run);
		snprintf(name, sizeof(name), "%s.dot", pc->stem);
		f = out_open(r, name);
		if (!f) {
			free(dot);
			continue;
		}
		fputs(dot, f);
		free(dot);
		if (out_close(r, f, name))
			continue;
		pc->dot = true;
		if (r->dot)
			render_picture(r, pc, name);
		/* each task's trees of the run, as the run stored them */
		results_read_pictures(r->rd, pc->run, task_picture, &tx);
	}
}
