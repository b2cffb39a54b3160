// SPDX-License-Identifier: MIT
/*
 * The report's plan pictures: per scheduler the network of one run (each
 * fibre with its lit wavelengths) and each task's two trees alone, as the
 * run stored them (DOT text), drawn by Graphviz: the network as SVG and
 * PNG, each task's trees as SVG alone (a page of them took two thirds of
 * the demo's report in PNG; markdown shows SVG as it shows PNG).
 */
#include "tools/report/report.h"
#include "tools/twinlab.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
 * Each picture is drawn as SVG and PNG from one layout (one Graphviz
 * process), the pictures several at a time, one per CPU: threads that do
 * nothing but run Graphviz; what is made, said and counted is done after,
 * in order. Graphviz 2.43's neato crashes now and then routing curved
 * edges (splines=true) on our bigger plans, the same graph passing on
 * another try; a crash is tried once more, then the picture is drawn with
 * straight edges, which has not crashed.
 */
struct render_job {
	struct picture *pc;
	int nfmt;			/* SVG, then PNG: 1 or 2 */
	char name[200], out[2][200];
	bool cleared, went_straight;
	int err;
	struct spawn_result res;
};

struct render_pool {
	struct report *r;
	struct render_job *job;
	int n;
	atomic_int next;
};

static const char *const pic_fmt[] = { "svg", "png" };

static void render_one(struct report *r, struct render_job *j)
{
	char log[PATH_MAX], opt[2][16], straight[] = "-Gsplines=false";
	char *argv[10];
	int n = 0;

	snprintf(log, sizeof(log), "%s/dot.log", r->dir);
	argv[n++] = "dot";
	for (int k = 0; k < j->nfmt; k++) {
		snprintf(opt[k], sizeof(opt[k]), "-T%s", pic_fmt[k]);
		argv[n++] = opt[k];
		argv[n++] = "-o";
		argv[n++] = j->out[k];
	}
	argv[n] = j->name;
	argv[n + 1] = NULL;
	for (int try = j->pc->straight ? 2 : 0; try < 3; try++) {
		if (try == 2) {
			argv[n] = straight;
			argv[n + 1] = j->name;
			argv[n + 2] = NULL;
			j->went_straight = !j->pc->straight;
		}
		j->err = report_exec(r, DOT, argv, log, &j->res);
		if (j->err || j->res.timed_out || !WIFSIGNALED(j->res.status))
			break;
	}
}

static void *render_thread(void *arg)
{
	struct render_pool *p = arg;
	int i;

	while ((i = atomic_fetch_add(&p->next, 1)) < p->n)
		if (p->job[i].cleared)
			render_one(p->r, &p->job[i]);
	return NULL;
}

static int count_jobs(struct report *r, struct picture *pic)
{
	int n = 0;

	for (int s = 0; s < r->nscheds; s++) {
		n += pic[s].dot;
		for (int t = 0; t < pic[s].ntasks; t++)
			n += pic[s].tasks[t].dot;
	}
	return n;
}

static void add_job(struct report *r, struct render_job *j,
		    struct picture *pc, int nfmt)
{
	j->pc = pc;
	j->nfmt = nfmt;
	snprintf(j->name, sizeof(j->name), "%s.dot", pc->stem);
	j->cleared = true;
	for (int k = 0; k < nfmt; k++) {
		snprintf(j->out[k], sizeof(j->out[k]), "%s.%s", pc->stem,
			 pic_fmt[k]);
		if (out_clear(r, j->out[k]))
			j->cleared = false;
	}
}

static void render_pictures(struct report *r, struct picture *pic)
{
	struct render_pool p = { .r = r };
	pthread_t th[8];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int nth = 0, k = 0;

	p.n = count_jobs(r, pic);
	if (!p.n)
		return;
	p.job = calloc((size_t)p.n, sizeof(*p.job));
	if (!p.job) {
		p_err("cannot draw the plan pictures: %s", strerror(ENOMEM));
		r->nfail++;
		return;
	}
	for (int s = 0; s < r->nscheds; s++) {
		if (pic[s].dot)
			add_job(r, &p.job[k++], &pic[s], 2);
		for (int t = 0; t < pic[s].ntasks; t++)
			if (pic[s].tasks[t].dot)
				add_job(r, &p.job[k++], &pic[s].tasks[t], 1);
	}
	atomic_init(&p.next, 0);
	if (cpus > 8)
		cpus = 8;
	while (nth < cpus - 1 && nth < p.n - 1 &&
	       !pthread_create(&th[nth], NULL, render_thread, &p))
		nth++;
	render_thread(&p);
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < p.n; i++) {
		struct render_job *j = &p.job[i];
		char path[PATH_MAX], log[PATH_MAX];

		if (!j->cleared)
			continue;
		if (j->went_straight) {
			p_err("warning: Graphviz crashed twice on '%s/%s'; "
			      "drawing it with straight edges", r->dir,
			      j->name);
			j->pc->straight = true;
		}
		if (j->err || !spawn_ok(&j->res)) {
			snprintf(path, sizeof(path), "%s/%s", r->dir, j->name);
			snprintf(log, sizeof(log), "%s/dot.log", r->dir);
			report_exec_fail(r, DOT, j->err, &j->res, path, log);
			continue;
		}
		for (int f = 0; f < j->nfmt; f++)
			made(r, j->out[f]);
		j->pc->rendered = true;
	}
	free(p.job);
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
		/* each task's trees of the run, as the run stored them */
		results_read_pictures(r->rd, pc->run, task_picture, &tx);
	}
	if (r->dot)
		render_pictures(r, pic);
}
