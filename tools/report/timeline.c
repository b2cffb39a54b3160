// SPDX-License-Identifier: MIT
/*
 * The report's timelines: for each run that played events, what the
 * orchestrator saw (results: events, round_times, link_samples) as one
 * figure — each task's round latency when each round started, measured
 * and predicted, over the busiest links' utilisation, the events marked
 * on both — and a section with the events, the tasks they touched and
 * how the rounds under background traffic compare with the others,
 * measured and predicted.
 */
#include "tools/report/report.h"
#include "twin/grow.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/twinlab.h"

#define TL_LINKS 6		/* links drawn: the most used */
#define TL_TASKS 8		/* tasks drawn: the most slowed by traffic */

struct tl_event {
	int64_t run;
	double at_s, interruption_s;
	char *kind, *detail, *tasks;
	char *policy;		/* re-placed by it; "" if not */
	double live_s, first_round_s;
};

struct tl_round {
	int task, round;
	char name[64];
	double start_s, round_s, pred_s;
	double bytes_links;	/* the twin's, as placed then; NAN */
};

/* A run that re-placed tasks live, summed up for the policies' table. */
struct tl_policy {
	int64_t run;
	char scenario[64], scheduler[16], policy[8];
	int rounds, moves, ncost;
	double mean_s, pred_s;		/* mean measured, predicted round */
	double cost_s;			/* each moved task's cost, summed */
	double bytes_links;		/* completed rounds' (NAN: unknown) */
};

struct tl_link {
	char name[64];
	double sum_util;
	int n, first;		/* its readings: load[first .. first + n) */
};

struct tl_load {
	double t_s, gbps, cap;
};

struct tl {
	struct tl_event *ev;
	int nev, capev;
	struct tl_round *rd;
	int nrd, caprd;
	struct tl_load *ld;
	int nld, capld;
	struct tl_link *lk;
	int nlk, caplk;
};

static bool grow(void **v, int *cap, int n, size_t size)
{
	void *m = grow_array(*v, cap, n, size, 64);

	if (m)
		*v = m;
	return m;
}

static int on_event(void *ctx, const struct results_event_row *row)
{
	struct tl *t = ctx;
	struct tl_event *e;

	if (!grow((void **)&t->ev, &t->capev, t->nev, sizeof(*t->ev)))
		return -ENOMEM;
	e = &t->ev[t->nev++];
	e->run = row->run;
	e->at_s = row->at_s;
	e->interruption_s = row->interruption_s;
	e->kind = strdup(row->kind);
	e->detail = strdup(row->detail);
	e->tasks = strdup(row->tasks);
	e->policy = strdup(row->policy);
	e->live_s = row->live_s;
	e->first_round_s = row->first_round_s;
	return e->kind && e->detail && e->tasks && e->policy ? 0 : -ENOMEM;
}

static int on_round(void *ctx, const struct results_when_row *row)
{
	struct tl *t = ctx;
	struct tl_round *x;

	if (!grow((void **)&t->rd, &t->caprd, t->nrd, sizeof(*t->rd)))
		return -ENOMEM;
	x = &t->rd[t->nrd++];
	x->task = row->task;
	x->round = row->round;
	snprintf(x->name, sizeof(x->name), "%s", row->name);
	x->start_s = row->start_s;
	x->round_s = row->round_s;
	x->pred_s = row->pred_s;
	x->bytes_links = row->pred_bytes_links;
	return 0;
}

static int on_load(void *ctx, const struct results_load_row *row)
{
	struct tl *t = ctx;
	struct tl_link *l = t->nlk ? &t->lk[t->nlk - 1] : NULL;

	if (!l || strcmp(l->name, row->link)) {
		if (!grow((void **)&t->lk, &t->caplk, t->nlk, sizeof(*t->lk)))
			return -ENOMEM;
		l = &t->lk[t->nlk++];
		memset(l, 0, sizeof(*l));
		snprintf(l->name, sizeof(l->name), "%s", row->link);
		l->first = t->nld;
	}
	if (!grow((void **)&t->ld, &t->capld, t->nld, sizeof(*t->ld)))
		return -ENOMEM;
	t->ld[t->nld++] = (struct tl_load){ row->t_s, row->gbps,
					     row->cap_gbps };
	l->n++;
	if (row->cap_gbps > 0)
		l->sum_util += row->gbps / row->cap_gbps;
	return 0;
}

static int by_use(const void *a, const void *b)
{
	const struct tl_link *x = a, *y = b;
	double ux = x->n ? x->sum_util / x->n : 0;
	double uy = y->n ? y->sum_util / y->n : 0;

	return ux < uy ? 1 : ux > uy ? -1 : strcmp(x->name, y->name);
}

/* The end of the traffic event ev[i] started: its "traffic end", or inf. */
static double traffic_end(const struct tl *t, int i)
{
	for (int k = i + 1; k < t->nev; k++)
		if (t->ev[k].run == t->ev[i].run &&
		    !strcmp(t->ev[k].kind, "traffic end") &&
		    !strcmp(t->ev[k].detail, t->ev[i].detail))
			return t->ev[k].at_s;
	return INFINITY;
}

/* Whether any traffic of run flows in [a, b). */
static bool under_traffic(const struct tl *t, int64_t run, double a, double b)
{
	for (int i = 0; i < t->nev; i++)
		if (t->ev[i].run == run && !strcmp(t->ev[i].kind, "traffic") &&
		    t->ev[i].at_s < b && traffic_end(t, i) > a)
			return true;
	return false;
}

/* The repair of the cut ev[i] (same fibre, later): its time, or inf. */
/* The same fibre: details agree up to what a re-placement adds (';'). */
static bool same_fibre(const char *x, const char *y)
{
	size_t n = strcspn(x, ";");

	return n == strcspn(y, ";") && !strncmp(x, y, n);
}

static double repair_of(const struct tl *t, int i)
{
	for (int k = i + 1; k < t->nev; k++)
		if (t->ev[k].run == t->ev[i].run &&
		    !strcmp(t->ev[k].kind, "repair") &&
		    same_fibre(t->ev[k].detail, t->ev[i].detail))
			return t->ev[k].at_s;
	return INFINITY;
}

/*
 * Whether a fibre of run is cut during [a, b) with nothing answering it:
 * until its repair, or until the moves that answered it were live.
 */
static bool under_cut(const struct tl *t, int64_t run, double a, double b)
{
	for (int i = 0; i < t->nev; i++) {
		double end = isfinite(t->ev[i].live_s) ? t->ev[i].live_s :
							 repair_of(t, i);

		if (t->ev[i].run == run && !strcmp(t->ev[i].kind, "cut") &&
		    t->ev[i].at_s < b && end > a)
			return true;
	}
	return false;
}

/* Whether name is one of the comma-separated names of list. */
static bool named(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; *p; p += strcspn(p, ","), p += *p == ',')
		if (strcspn(p, ",") == n && !strncmp(p, name, n))
			return true;
	return false;
}

/*
 * A row of the re-placement table for event i of run x: the tasks it
 * moved, when the moves were live and the first round on the new paths
 * ended (after the event), what it cost each moved task (move_costs:
 * median and worst), and the rounds that started once the moves were
 * live, measured and predicted.
 */
/* The latest start of a round of t (any task's) by time at, or -inf. */
static double started_by(const struct tl *t, double at)
{
	double s = -INFINITY;

	for (int k = 0; k < t->nrd; k++)
		if (t->rd[k].start_s <= at && t->rd[k].start_s > s)
			s = t->rd[k].start_s;
	return s;
}

/*
 * What event i of t cost each task it moved, into cost (*nc of them): from
 * the start of its round in flight at the event to the end of its first
 * round completed after it, less one predicted round. A round held up on
 * the old paths counts its delay; one lost when the task moved to new
 * trees (not stored: it is run again on them) counts from its start too,
 * which is the later of the last round start by the event and the end of
 * the task's last round before it. The rounds that started once its moves
 * were live: *na, their measured and predicted sums into *m, *p.
 */
static void move_costs(const struct tl *t, int i, double *cost, int *nc,
		       double *m, double *p, int *na)
{
	const struct tl_event *e = &t->ev[i];
	double flight = started_by(t, e->at_s);

	*nc = *na = 0;
	*m = *p = 0;
	for (int k = 0; k < t->nrd; k++) {
		const struct tl_round *q = &t->rd[k];
		const struct tl_round *b = k ? &t->rd[k - 1] : NULL;

		if (!isfinite(q->round_s) || !isfinite(q->pred_s))
			continue;
		if (b && b->task != q->task)
			b = NULL;	/* rounds by task, then round */
		if (named(e->tasks, q->name) &&
		    q->start_s + q->round_s > e->at_s &&
		    (!b || b->start_s + b->round_s <= e->at_s)) {
			double from = fmin(q->start_s, b ? fmax(flight,
					   b->start_s + b->round_s) : flight);

			if (!isfinite(from))
				from = q->start_s;
			cost[(*nc)++] = q->start_s + q->round_s - from -
					q->pred_s;
		}
		if (isfinite(e->live_s) && q->start_s >= e->live_s) {
			*m += q->round_s;
			*p += q->pred_s;
			(*na)++;
		}
	}
}

static void moves_row(FILE *md, const struct rrun *x, const struct tl *t,
		      int i)
{
	const struct tl_event *e = &t->ev[i];
	double *cost = calloc((size_t)t->nrd + 1, sizeof(*cost));
	double m, p;
	int nc, na;

	if (!cost)
		return;
	move_costs(t, i, cost, &nc, &m, &p, &na);
	fprintf(md, "| %lld | ", (long long)x->id);
	md_text(md, x->scenario);
	fputs(" | ", md);
	md_text(md, x->scheduler);
	fputs(" | ", md);
	md_text(md, e->policy);
	fprintf(md, " | %s at %.3f ms | ", e->kind, e->at_s * 1e3);
	md_text(md, e->tasks[0] ? e->tasks : "none");
	fprintf(md, " | %.1f | %.1f | ", (e->live_s - e->at_s) * 1e3,
		(e->first_round_s - e->at_s) * 1e3);
	if (nc)
		fprintf(md, "%.1f / %.1f | ", rp_median(cost, nc) * 1e3,
			rp_quantile(cost, nc, 1) * 1e3);
	else
		fputs("- | ", md);
	if (na)
		fprintf(md, "%d: %.3f / %.3f |\n", na, m / na * 1e3,
			p / na * 1e3);
	else
		fputs("- |\n", md);
	free(cost);
}

/*
 * Run x, which re-placed tasks live (its events i0 .. i1 of t), summed up
 * as one row of the policies' table. -ENOMEM or 0.
 */
static int policy_sum(const struct rrun *x, const struct tl *t, int i0,
		      int i1, struct tl_policy *out)
{
	double *cost = calloc((size_t)t->nrd + 1, sizeof(*cost));

	if (!cost)
		return -ENOMEM;
	memset(out, 0, sizeof(*out));
	out->run = x->id;
	snprintf(out->scenario, sizeof(out->scenario), "%s", x->scenario);
	snprintf(out->scheduler, sizeof(out->scheduler), "%s", x->scheduler);
	for (int k = 0; k < t->nrd; k++) {
		const struct tl_round *q = &t->rd[k];

		if (!isfinite(q->round_s))
			continue;
		out->rounds++;
		out->mean_s += q->round_s;
		out->pred_s += q->pred_s;
		out->bytes_links += q->bytes_links;
	}
	if (out->rounds) {
		out->mean_s /= out->rounds;
		out->pred_s /= out->rounds;
	}
	for (int i = i0; i < i1; i++) {
		const struct tl_event *e = &t->ev[i];
		double m, p;
		int nc, na;

		if (!e->policy[0])
			continue;
		snprintf(out->policy, sizeof(out->policy), "%s", e->policy);
		for (const char *c = e->tasks; *c; c += strcspn(c, ","),
		     c += *c == ',')
			out->moves++;
		move_costs(t, i, cost, &nc, &m, &p, &na);
		for (int k = 0; k < nc; k++)
			out->cost_s += cost[k];
		out->ncost += nc;
	}
	free(cost);
	return 0;
}

/* Policies' rows by scenario, scheduler, then policy as run. */
static int by_scenario(const void *a, const void *b)
{
	const struct tl_policy *x = a, *y = b;
	int c = strcmp(x->scenario, y->scenario);

	if (!c)
		c = strcmp(x->scheduler, y->scheduler);
	return c ? c : x->run < y->run ? -1 : x->run > y->run;
}

/*
 * The policies side by side (rows sorted by_scenario), and a reading of
 * each scenario and scheduler run under more than one.
 */
static void write_policies(FILE *md, struct tl_policy *pol, int n)
{
	qsort(pol, (size_t)n, sizeof(*pol), by_scenario);
	fputs("\n### Policies compared\n\nEach run that followed its "
	      "events live, by re-scheduling policy: the task-rounds it "
	      "completed, their mean round (measured / the twin's "
	      "prediction for each as it fell, ms), the moves of running "
	      "tasks over all its events, what they cost (for each moved "
	      "task, from the start of its round in flight at the event to "
	      "the end of its first round completed after it, less one "
	      "predicted round; summed, ms) and the byte-links of the "
	      "completed rounds (the twin's, each as its task was placed "
	      "then).\n\n| run | "
	      "scenario | scheduler | policy | task-rounds | mean round | "
	      "moves | their cost | byte-links |\n"
	      "|---:|---|---|---|---:|---:|---:|---:|---:|\n", md);
	for (int i = 0; i < n; i++) {
		const struct tl_policy *q = &pol[i];

		fprintf(md, "| %lld | ", (long long)q->run);
		md_text(md, q->scenario);
		fputs(" | ", md);
		md_text(md, q->scheduler);
		fputs(" | ", md);
		md_text(md, q->policy);
		fprintf(md, " | %d | %.3f / %.3f | %d | %.1f | ", q->rounds,
			q->mean_s * 1e3, q->pred_s * 1e3, q->moves,
			q->cost_s * 1e3);
		if (isfinite(q->bytes_links))
			fprintf(md, "%.4g |\n", q->bytes_links);
		else
			fputs("- |\n", md);
	}
	for (int i = 0, j; i < n; i = j) {
		int fast = i, few = i, most = i;

		for (j = i; j < n && !strcmp(pol[j].scenario, pol[i].scenario) &&
			    !strcmp(pol[j].scheduler, pol[i].scheduler); j++) {
			if (pol[j].mean_s < pol[fast].mean_s)
				fast = j;
			if (pol[j].cost_s < pol[few].cost_s)
				few = j;
			if (pol[j].rounds > pol[most].rounds)
				most = j;
		}
		if (j - i < 2)
			continue;
		fprintf(md, "\nOn %s with %s, %d runs: the shortest mean round "
			"was under %s (%.3f ms measured, %.3f predicted), the "
			"cheapest moves under %s (%d moves, %.1f ms), and %s "
			"completed the most task-rounds (%d).", pol[i].scenario,
			pol[i].scheduler, j - i, pol[fast].policy,
			pol[fast].mean_s * 1e3, pol[fast].pred_s * 1e3,
			pol[few].policy, pol[few].moves, pol[few].cost_s * 1e3,
			pol[most].policy, pol[most].rounds);
		for (int k = i; k < j; k++)
			if (k != fast)
				fprintf(md, " Under %s the mean round was %.3f ms "
					"(%+.1f %% against %s), its %d moves cost "
					"%.1f ms.", pol[k].policy,
					pol[k].mean_s * 1e3,
					(pol[k].mean_s / pol[fast].mean_s - 1) *
						100, pol[fast].policy,
					pol[k].moves, pol[k].cost_s * 1e3);
		fputs(" The measured saving of a policy is worth its "
		      "interruption only if it outlasts it: compare the mean "
		      "round's difference times the task-rounds with the moves' "
		      "cost.\n", md);
	}
}

static void write_data(struct report *r, struct tl *t, int64_t id,
		       const char *stem)
{
	char name[200], e1[DAT_NAME];
	FILE *f;

	snprintf(name, sizeof(name), "%s-rounds.dat", stem);
	f = out_open(r, name);
	if (f) {
		fprintf(f, "# twinlab report: run %lld, each task's rounds "
			   "(one block per task)\n# start_ms round_ms "
			   "predicted_ms\n", (long long)id);
		for (int i = 0; i < t->nrd; i++) {
			if (i && t->rd[i].task != t->rd[i - 1].task)
				fputs("\n\n", f);
			if (!i || t->rd[i].task != t->rd[i - 1].task)
				fprintf(f, "# task %s\n",
					dat_safe(t->rd[i].name, e1,
						 sizeof(e1)));
			fprintf(f, "%.6f", t->rd[i].start_s * 1e3);
			dat_num(f, t->rd[i].round_s * 1e3);
			dat_num(f, t->rd[i].pred_s * 1e3);
			fputc('\n', f);
		}
		out_close(r, f, name);
	}
	snprintf(name, sizeof(name), "%s-links.dat", stem);
	f = out_open(r, name);
	if (!f)
		return;
	fprintf(f, "# twinlab report: run %lld, the %d most used links "
		   "(one block each), scenario time\n# t_ms utilisation_pct "
		   "gbps cap_gbps\n", (long long)id, TL_LINKS);
	for (int k = 0; k < t->nlk && k < TL_LINKS; k++) {
		const struct tl_link *l = &t->lk[k];

		fprintf(f, "%s# link %s\n", k ? "\n\n" : "",
			dat_safe(l->name, e1, sizeof(e1)));
		for (int j = l->first; j < l->first + l->n; j++) {
			const struct tl_load *x = &t->ld[j];

			fprintf(f, "%.6f", x->t_s * 1e3);
			dat_num(f, x->cap > 0 ? 100 * x->gbps / x->cap : NAN);
			dat_num(f, x->gbps);
			dat_num(f, x->cap);
			fputc('\n', f);
		}
	}
	out_close(r, f, name);
}

/*
 * The tasks to draw, by block index of the rounds file: all when few,
 * else the TL_TASKS whose rounds under traffic are longest against their
 * others (mean), then by order. Returns how many, in pick[].
 */
static int pick_tasks(const struct tl *t, int64_t run, int *pick)
{
	double gain[1024];
	int n = 0, np = 0;

	for (int i = 0; i < t->nrd && n < 1024; n++) {
		double m[2] = { 0 };
		int c[2] = { 0 }, j = i;

		for (; j < t->nrd && t->rd[j].task == t->rd[i].task; j++) {
			int k = under_traffic(t, run, t->rd[j].start_s,
					      t->rd[j].start_s +
						      t->rd[j].round_s);

			if (isfinite(t->rd[j].round_s)) {
				m[k] += t->rd[j].round_s;
				c[k]++;
			}
		}
		gain[n] = c[0] && c[1] ? m[1] / c[1] - m[0] / c[0] : -INFINITY;
		i = j;
	}
	for (int k = 0; k < n && np < TL_TASKS; k++) {
		int best = -1;

		for (int x = 0; x < n; x++) {
			bool taken = false;

			for (int y = 0; y < np && !taken; y++)
				taken = pick[y] == x;
			if (!taken && (best < 0 || gain[x] > gain[best]))
				best = x;
		}
		pick[np++] = best;
	}
	/* in task order, for a stable legend */
	for (int a = 1; a < np; a++)
		for (int b = a; b > 0 && pick[b] < pick[b - 1]; b--) {
			int tmp = pick[b];

			pick[b] = pick[b - 1];
			pick[b - 1] = tmp;
		}
	return np;
}

/* The name of the rounds file's block k. */
static const char *block_name(const struct tl *t, int k)
{
	for (int i = 0, b = 0; i < t->nrd; i++) {
		if (i && t->rd[i].task == t->rd[i - 1].task)
			continue;
		if (b++ == k)
			return t->rd[i].name;
	}
	return "?";
}

/*
 * An empty plot that says why: gnuplot refuses to autoscale a plot with
 * no point ("all points y value undefined"), so the range is fixed.
 */
static void gp_nothing(FILE *f, const char *why)
{
	fputs("set yrange [0:1]\nset label 1 '", f);
	gp_text(f, why);
	fputs("' at graph 0.5, graph 0.5 center\nplot NaN notitle\n"
	      "unset label 1", f);
}

static void write_script(struct report *r, struct tl *t, int64_t id,
			 const char *stem, int e0, int e1)
{
	char name[200];
	int pick[TL_TASKS], np = pick_tasks(t, id, pick), ntask = 0;
	FILE *f;

	for (int i = 0; i < t->nrd; i++)
		ntask += !i || t->rd[i].task != t->rd[i - 1].task;
	snprintf(name, sizeof(name), "%s.gp", stem);
	f = out_open(r, name);
	if (!f)
		return;
	gp_head(f, "timeline of a run: rounds and links over scenario time");
	for (int i = e0; i < e1; i++)
		fprintf(f, "set arrow from %.6f, graph 0 to %.6f, graph 1 "
			   "nohead dt 2 lc rgb '%s'\n", t->ev[i].at_s * 1e3,
			t->ev[i].at_s * 1e3,
			strstr(t->ev[i].kind, "end") ? "gray60" : "gray20");
	fputs("set xlabel 'scenario time (ms)'\nset key outside right\n", f);
	gp_terminal_loop(f, stem, 1200, 900);
	fprintf(f, "set multiplot layout 2,1 title 'run %lld: rounds and "
		   "links over time (dashed: events)'\n", (long long)id);
	if (np < ntask)
		fprintf(f, "set title 'round latency at the start of each "
			   "round: the %d of %d tasks most slowed by "
			   "traffic'\n", np, ntask);
	else
		fputs("set title 'round latency of each task, at the start of "
		      "each round'\n", f);
	fputs("set ylabel 'round (ms)'\n", f);
	if (!np)
		gp_nothing(f, "no round of this run was stored");
	else
		fputs("set yrange [0:*]\nplot ", f);
	for (int k = 0; k < np; k++) {
		fprintf(f, "%s'%s-rounds.dat' index %d using 1:2 with "
			   "linespoints lt %d pt 7 title '", k ? ", \\\n  " : "",
			stem, pick[k], k + 1);
		gp_text(f, block_name(t, pick[k]));
		fprintf(f, "', '%s-rounds.dat' index %d using 1:3 with lines "
			   "lt %d dt 2 %s", stem, pick[k], k + 1,
			k ? "notitle" : "title 'dashed: predicted'");
	}
	fputs("\nset title 'utilisation of the most used links'\n"
	      "set ylabel 'utilisation (%)'\n", f);
	if (!t->nlk)
		gp_nothing(f, "no link load was sampled in this run");
	else
		fputs("set yrange [0:*]\nplot ", f);
	for (int k = 0; k < t->nlk && k < TL_LINKS; k++) {
		fprintf(f, "%s'%s-links.dat' index %d using 1:2 with lines "
			   "lw 2 title '", k ? ", \\\n  " : "", stem, k);
		gp_text(f, t->lk[k].name);
		fputc('\'', f);
	}
	fputs("\nunset multiplot\nunset output\n}\n", f);
	if (!out_close(r, f, name))
		gp_run(r, name, stem);
}

/* The run's section: its events, the figure, rounds under traffic. */
static void write_section(struct report *r, FILE *md, const struct rrun *x,
			  struct tl *t, const char *stem, int e0, int e1)
{
	double m[3] = { 0 }, p[3] = { 0 };
	int n[3] = { 0 }, np[3] = { 0 };

	fprintf(md, "\n### Run %lld: %s, %s\n\n| at (ms) | event | what | "
		    "tasks touched | interruption (ms) |\n|---:|---|---|---|"
		    "---:|\n", (long long)x->id, x->scenario, x->scheduler);
	for (int i = e0; i < e1; i++) {
		fprintf(md, "| %.3f | %s | ", t->ev[i].at_s * 1e3,
			t->ev[i].kind);
		md_text(md, t->ev[i].detail);
		fputs(" | ", md);
		md_text(md, t->ev[i].tasks[0] ? t->ev[i].tasks : "none");
		fprintf(md, " | %.3f |\n", t->ev[i].interruption_s * 1e3);
	}
	if (r->gnuplot)
		fprintf(md, "\n![timeline of run %lld](%s.png) ([SVG](%s.svg); "
			    "data `%s-rounds.dat`, `%s-links.dat`)\n",
			(long long)x->id, stem, stem, stem, stem);
	/* rounds in a cut, else under traffic, else the others */
	for (int i = 0; i < t->nrd; i++) {
		const struct tl_round *q = &t->rd[i];
		double end = q->start_s + q->round_s;
		int k = under_cut(t, x->id, q->start_s, end) ? 2 :
			under_traffic(t, x->id, q->start_s, end) ? 1 : 0;

		if (!isfinite(q->round_s))
			continue;
		m[k] += q->round_s;
		n[k]++;
		if (isfinite(q->pred_s)) {
			p[k] += q->pred_s;
			np[k]++;
		}
	}
	fputc('\n', md);
	for (int k = 2; k >= 0; k--) {
		static const char *const what[] = {
			"Rounds with nothing played", "Rounds while background "
			"traffic flowed", "Rounds a cut fell in",
		};

		if (!n[k])
			continue;
		fprintf(md, "%s: %d, measured %.3f ms on average (the twin "
			    "predicted %.3f ms for them, ratio %.3f). ", what[k],
			n[k], m[k] / n[k] * 1e3,
			np[k] ? p[k] / np[k] * 1e3 : NAN,
			np[k] ? (m[k] / n[k]) / (p[k] / np[k]) : NAN);
	}
	if (n[2])
		fputs("The twin's round with a cut waits for the repair (or, "
		      "where the run re-placed the tasks over it, for their "
		      "moves: rounds that start after are counted with the "
		      "others, predicted on the new paths); TCP also waits for "
		      "its retransmission timer, which the emulation measures "
		      "and the fluid model does not.", md);
	fputc('\n', md);
}

void write_timelines(struct report *r, FILE *md)
{
	struct tl t = { 0 };
	char err[256], stem[96];
	char *mtext = NULL;
	size_t mlen = 0;
	FILE *mv = open_memstream(&mtext, &mlen);
	int any = 0, moves = 0, npol = 0;
	struct tl_policy *pol = NULL;

	if (!mv)
		return;
	if (results_read_events(r->rd, on_event, &t, err, sizeof(err)))
		p_err("warning: report: %s", err);
	for (int i = 0; i < t.nev;) {
		int64_t id = t.ev[i].run;
		const struct rrun *x = run_by_id(r, id, NULL);
		int e1 = i;

		while (e1 < t.nev && t.ev[e1].run == id)
			e1++;
		if (x) {
			bool followed = false;

			t.nrd = t.nld = t.nlk = 0;
			if (results_read_when(r->rd, id, on_round, &t, err,
					      sizeof(err)) ||
			    results_read_load(r->rd, id, on_load, &t, err,
					      sizeof(err)))
				p_err("warning: report: %s", err);
			qsort(t.lk, (size_t)t.nlk, sizeof(*t.lk), by_use);
			snprintf(stem, sizeof(stem), "fig-timeline-run%lld",
				 (long long)id);
			if (!any++)
				fputs("\n## Timelines\n\nRuns that played "
				      "events, in scenario time from the first "
				      "round's start: what happened, the tasks "
				      "each event touched (they share a link "
				      "with it), and the rounds.\n", md);
			write_data(r, &t, id, stem);
			write_script(r, &t, id, stem, i, e1);
			write_section(r, md, x, &t, stem, i, e1);
			for (int k = i; k < e1; k++)
				if (t.ev[k].policy[0]) {
					moves_row(mv, x, &t, k);
					moves++;
					followed = true;
				}
			/* a run that followed its events: one row each */
			if (followed) {
				struct tl_policy *g = realloc(pol,
					(size_t)(npol + 1) * sizeof(*pol));

				if (g && !policy_sum(x, &t, i, e1, &g[npol]))
					npol++;
				pol = g ? g : pol;
			}
		}
		i = e1;
	}
	fclose(mv);
	if (moves)
		fprintf(md, "\n### Re-placement, measured\n\nEach event a run "
			"followed live (`run --reschedule`: cuts, repairs, "
			"arrivals, departures, traffic), policies side by side: "
			"the tasks it moved, when the moves "
			"were live and when the first round on the new paths "
			"ended (ms after the event), what the event cost each moved "
			"task (from the start of its round in flight at the event "
			"to the end of its first round completed after it, less "
			"one predicted round: a round held up counts its delay, "
			"one lost to new trees and run again on them counts "
			"whole; median / worst, ms) and the task-rounds that started "
			"once the moves were live (how many: measured / "
			"predicted mean, ms).\n\n| run | scenario | scheduler | "
			"policy | event | moved | live after | first round "
			"after | cost per moved task | rounds after |\n"
			"|---:|---|---|---|---|---|---:|---:|---:|---:|\n%s",
			mtext);
	free(mtext);
	if (npol)
		write_policies(md, pol, npol);
	free(pol);
	for (int i = 0; i < t.nev; i++) {
		free(t.ev[i].kind);
		free(t.ev[i].detail);
		free(t.ev[i].tasks);
		free(t.ev[i].policy);
	}
	free(t.ev);
	free(t.rd);
	free(t.ld);
	free(t.lk);
}
