// SPDX-License-Identifier: MIT
/*
 * twinlab report DB [--out DIR]: figures and a markdown report made from a
 * results database alone.
 *
 * Everything is computed from the tables `twinlab run` and `twinlab
 * experiment` write, read through tools/results/results.h; the figures are
 * drawn by gnuplot from data files and scripts written next to them, so they
 * can be re-plotted by hand, and the plan pictures by Graphviz from the
 * DOT text stored with each run. Both programs run through emu/spawn.h;
 * when one is missing the report and the data are still written. The
 * parts: report.h. Here: the command and the data; the output helpers
 * every part writes with are out.c's.
 */
#include "tools/twinlab.h"
#include "twin/grow.h"
#include "tools/json.h"
#include "tools/report/report.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the output directory ------------------------------------------- */

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* ---- the data ------------------------------------------------------------ */

/* Fibres of every lightpath, from the plan JSON (lightpaths[].roadms). */
/* Edge indices sorted by the model each edge goes to. */
static const char *const *cmp_names;

static int cmp_to(const void *x, const void *y)
{
	return strcmp(cmp_names[*(const int *)x], cmp_names[*(const int *)y]);
}

/*
 * A task's broadcast depth from its edges (JSON), or -1: each edge's
 * parent edge found by a binary search over the edges sorted by where
 * they go, each depth once (O(n log n)); a loop or a broken edge is -1.
 */
static int bcast_depth(struct json_object *task)
{
	struct json_object *edges, *g, *v;
	const char *root, **from = NULL, **to = NULL;
	int *by = NULL, *up = NULL, *d = NULL, n, depth = -1;

	if (!json_object_object_get_ex(task, "broadcast", &edges) ||
	    !json_object_is_type(edges, json_type_array) ||
	    !json_object_object_get_ex(task, "global", &g) ||
	    !(root = json_object_get_string(g)))
		return -1;
	n = (int)json_object_array_length(edges);
	if (n > 100000)
		return -1;
	from = calloc((size_t)n + 1, sizeof(*from));
	to = calloc((size_t)n + 1, sizeof(*to));
	by = calloc((size_t)n + 1, sizeof(*by));
	up = calloc((size_t)n + 1, sizeof(*up));
	d = calloc((size_t)n + 1, sizeof(*d));
	if (!from || !to || !by || !up || !d)
		goto out;
	for (int i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(edges, i);

		if (!json_object_object_get_ex(e, "from", &v) ||
		    !(from[i] = json_object_get_string(v)) ||
		    !json_object_object_get_ex(e, "to", &v) ||
		    !(to[i] = json_object_get_string(v)))
			goto out;
		by[i] = i;
	}
	cmp_names = to;
	qsort(by, (size_t)n, sizeof(*by), cmp_to);
	for (int i = 0; i < n; i++) {
		int lo = 0, hi = n;

		up[i] = -1;
		if (!strcmp(from[i], root))
			continue;
		while (lo < hi) {
			int mid = lo + (hi - lo) / 2;

			if (strcmp(to[by[mid]], from[i]) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == n || strcmp(to[by[lo]], from[i]))
			goto out;	/* from a model no edge reaches */
		up[i] = by[lo];
	}
	depth = 0;
	for (int i = 0; i < n && depth >= 0; i++) {
		int k = 0, at = i, base;

		/* up to an edge of known depth (or the root's), at most n */
		while (at >= 0 && !d[at] && k <= n) {
			at = up[at];
			k++;
		}
		if (k > n) {
			depth = -1;	/* a loop */
			break;
		}
		base = at >= 0 ? d[at] : 0;
		/* then down again, each edge's depth once */
		for (int j = i, m = k; m > 0; m--) {
			d[j] = base + m;
			j = up[j];
		}
		depth = d[i] > depth ? d[i] : depth;
	}
out:
	FREE_ALL(from, to, by, up, d);
	return depth;
}

/* The plan's shape: struct rrun's depth, stars, aggs and busiest. */
static void parse_shape(struct rrun *x, struct json_object *o)
{
	struct json_object *tasks, *links, *v, *agg;
	int placed = 0, n;
	double depth = 0, aggs = 0;

	x->depth = x->stars = x->aggs = x->busiest = NAN;
	if (!json_object_object_get_ex(o, "tasks", &tasks) ||
	    !json_object_is_type(tasks, json_type_array))
		return;
	x->stars = 0;
	n = (int)json_object_array_length(tasks);
	for (int i = 0; i < n && n <= 1000000; i++) {
		struct json_object *t = json_object_array_get_idx(tasks, i);
		int d;

		if (json_object_object_get_ex(t, "blocked", &v) &&
		    json_object_get_boolean(v))
			continue;
		d = bcast_depth(t);
		if (d < 1)
			continue;
		placed++;
		depth += d;
		x->stars += d == 1;
		if (json_object_object_get_ex(t, "aggregation", &agg) &&
		    json_object_is_type(agg, json_type_array))
			aggs += (double)json_object_array_length(agg);
	}
	if (placed) {
		x->depth = depth / placed;
		x->aggs = aggs / placed;
	}
	if (!json_object_object_get_ex(o, "links", &links) ||
	    !json_object_is_type(links, json_type_array))
		return;
	x->busiest = 0;
	n = (int)json_object_array_length(links);
	for (int i = 0; i < n; i++)
		if (json_object_object_get_ex(
			    json_object_array_get_idx(links, i), "bytes", &v))
			x->busiest = fmax(x->busiest,
					  json_object_get_double(v));
}

static void parse_fibres(struct rrun *x, const char *json)
{
	struct json_object *o = json ? json_tokener_parse(json) : NULL;
	struct json_object *lps, *lp, *v;
	size_t n;
	int max = -1;

	x->depth = x->stars = x->aggs = x->busiest = NAN;
	if (o)
		parse_shape(x, o);
	if (!o || !json_object_object_get_ex(o, "lightpaths", &lps) ||
	    !json_object_is_type(lps, json_type_array))
		goto out;
	n = json_object_array_length(lps);
	for (size_t i = 0; i < n; i++) {
		lp = json_object_array_get_idx(lps, i);
		if (json_object_object_get_ex(lp, "id", &v) &&
		    json_object_get_int(v) > max)
			max = json_object_get_int(v);
	}
	if (max > 1000000)
		goto out;
	x->nfib = calloc((size_t)max + 2, sizeof(*x->nfib));
	if (!x->nfib)
		goto out;
	x->nlp = max + 1;
	for (size_t i = 0; i < n; i++) {
		struct json_object *roadms;
		int id;

		lp = json_object_array_get_idx(lps, i);
		if (!json_object_object_get_ex(lp, "id", &v))
			continue;
		id = json_object_get_int(v);
		if (id >= 0 && id < x->nlp &&
		    json_object_object_get_ex(lp, "roadms", &roadms) &&
		    json_object_array_length(roadms) > 0)
			x->nfib[id] = (int)json_object_array_length(roadms) - 1;
	}
	x->json_ok = true;
out:
	json_object_put(o);
}

static int grow(void **v, int n, int *cap, size_t size)
{
	void *m = grow_array(*v, cap, n, size, 16);

	if (!m)
		return -ENOMEM;
	*v = m;
	return 0;
}

static char *dup_or(const char *s, const char *dflt)
{
	return strdup(s ? s : dflt);
}

/*
 * A run's texts, copied from its row (a missing one as dflt): one table,
 * so that load_run copies, checks and report_release frees each of them.
 */
#define RUN_TEXT(f, dflt)						\
	{ offsetof(struct rrun, f), offsetof(struct results_run_row, f), dflt }
static const struct {
	size_t run, row;
	const char *dflt;
} run_texts[] = {
	RUN_TEXT(scenario, "?"),	RUN_TEXT(scheduler, "?"),
	RUN_TEXT(status, "?"),		RUN_TEXT(experiment, ""),
	RUN_TEXT(verdict, ""),		RUN_TEXT(predictor, "fluid"),
};
#define NRUN_TEXTS (sizeof(run_texts) / sizeof(run_texts[0]))

static char **run_text(struct rrun *x, size_t k)
{
	return (char **)((char *)x + run_texts[k].run);
}

struct loading {
	struct report *r;
	int cap;
};

static int load_run(void *ctx, const struct results_run_row *row)
{
	struct loading *ld = ctx;
	struct report *r = ld->r;
	struct rrun *x;

	if (grow((void **)&r->runs, r->nruns, &ld->cap, sizeof(*r->runs)))
		return -ENOMEM;
	x = &r->runs[r->nruns++];
	x->id = row->id;
	x->scale = row->scale;
	x->plan_bf = row->pred_bytes_links;
	x->wl = row->wavelength_links;
	x->rounds_cfg = row->rounds;
	parse_fibres(x, row->plan_json);
	x->nlocals = row->nlocals;
	x->seed = row->seed;
	x->point = row->point;
	x->dilation = row->dilation;
	/* all copied before any is checked: report_release frees them all */
	for (size_t k = 0; k < NRUN_TEXTS; k++)
		*run_text(x, k) = dup_or(*(const char *const *)
					 ((const char *)row + run_texts[k].row),
					 run_texts[k].dflt);
	for (size_t k = 0; k < NRUN_TEXTS; k++)
		if (!*run_text(x, k))
			return -ENOMEM;
	r->npacket += !strcmp(x->predictor, "packet");
	x->degraded = x->verdict[0] && strncmp(x->verdict, "faithful", 8) != 0;
	r->ndegraded += x->degraded;
	r->nunjudged += !x->verdict[0];
	for (int k = 0; k < NPH; k++)
		x->meas[k] = x->pred[k] = NAN;
	x->ip_bytes = x->bf_bytes = NAN;
	x->last_round = INT_MIN;
	x->bf_known = x->json_ok;
	return 0;
}

static int load_task(void *ctx, const struct results_task_row *row)
{
	struct loading *ld = ctx;
	struct report *r = ld->r;
	struct rtask *t;
	int idx;

	if (!run_by_id(r, row->run, &idx))
		return 0;
	if (grow((void **)&r->tasks, r->ntasks, &ld->cap, sizeof(*r->tasks)))
		return -ENOMEM;
	t = &r->tasks[r->ntasks++];
	t->run = idx;
	t->task = row->task;
	t->name = dup_or(row->name, "?");
	t->nlocals = row->nlocals;
	t->blocked = row->blocked;
	t->failed = row->failed;
	t->why = dup_or(row->why, "");
	if (!t->name || !t->why)
		return -ENOMEM;
	for (int k = 0; k < NPH; k++) {
		t->pred[k] = row->pred[k];
		t->meas[k] = row->meas[k];
	}
	t->nrounds = row->nrounds;
	t->nheld = row->nheld;
	t->ntouched = row->ntouched;
	return 0;
}

/* Bytes sent per round on the links, and times the lightpaths' fibres. */
static int load_link(void *ctx, const struct results_link_row *row)
{
	struct report *r = ((struct loading *)ctx)->r;
	struct rrun *x = run_by_id(r, row->run, NULL);
	int lp, end = 0;

	if (!x)
		return 0;
	if (row->round != x->last_round) {
		x->link_rounds++;
		x->last_round = row->round;
	}
	x->link_sum += row->bytes;
	/* "lp3:r1>r2" is lightpath 3; "s1>r1" an access link */
	if (row->link && sscanf(row->link, "lp%d:%n", &lp, &end) == 1 && end) {
		if (x->json_ok && lp >= 0 && lp < x->nlp && x->nfib[lp] > 0)
			x->bf_sum += row->bytes * x->nfib[lp];
		else
			x->bf_known = false;
	}
	return 0;
}

static int load_check(void *ctx, const struct results_check_row *row)
{
	struct report *r = ((struct loading *)ctx)->r;
	struct badcheck *b = &r->bad[r->nbad++];

	b->run = row->run;
	b->task = row->task;
	b->round = row->round;
	b->err = row->err;
	b->tol = row->tol;
	return r->nbad == MAX_BAD_CHECKS;
}

/*
 * Only complete runs are results: ok, or failed (some task failed; the
 * others ran every round). Attempts --dilation auto abandoned to
 * recalibrate, and runs aborted, partial or still running are counted
 * (left_out), not loaded.
 */
static int report_load(struct report *r)
{
	struct loading ld = { r, 0 };
	char err[512];
	int e;

	e = results_read_runs(r->rd, load_run, &ld, err, sizeof(err));
	if (!e)
		e = results_read_left_out(r->rd, &r->nrecal, &r->nleft,
					  r->left_out, sizeof(r->left_out),
					  err, sizeof(err));
	if (!e) {
		ld.cap = 0;
		e = results_read_tasks(r->rd, load_task, &ld, err,
				       sizeof(err));
	}
	if (!e)
		e = results_read_links(r->rd, load_link, &ld, err,
				       sizeof(err));
	if (!e)
		e = results_read_failed_checks(r->rd, MAX_BAD_CHECKS,
					       load_check, &ld, err,
					       sizeof(err));
	return e < 0 ? rp_read_said(e, err) : 0;
}

int rp_read_said(int e, const char *err)
{
	if (e == -ENOMEM)
		p_err("out of memory");
	else if (e)
		p_err("%s", err);
	return e;
}

/* ---- the command --------------------------------------------------------- */

static void report_release(struct report *r)
{
	for (int i = 0; i < report_nsections; i++) {
		if (report_sections[i].release)
			report_sections[i].release(r);
		free(r->section_md[i]);
	}
	for (int i = 0; i < r->nruns; i++) {
		for (size_t k = 0; k < NRUN_TEXTS; k++)
			free(*run_text(&r->runs[i], k));
		free(r->runs[i].nfib);
	}
	for (int i = 0; i < r->ntasks; i++) {
		free(r->tasks[i].name);
		free(r->tasks[i].why);
	}
	for (int i = 0; i < r->nmade; i++)
		free(r->made[i]);
	FREE_ALL(r->runs, r->tasks, r->order, r->points, r->exps, r->scheds);
	results_read_close(r->rd);
}

/* What the report wrote, as one JSON object on stdout: 0, or -1. */
static int report_json(const struct report *r, const char *abs)
{
	json_object *o = json_object_new_object();
	json_object *made = json_object_new_array();
	char path[PATH_MAX + 16];
	bool err;

	snprintf(path, sizeof(path), "%s/report.md", abs);
	err = !o || json_add(o, "report", json_object_new_string(path)) ||
	      json_add(o, "dir", json_object_new_string(abs)) ||
	      json_add(o, "runs", json_object_new_int(r->nruns)) ||
	      json_add(o, "points", json_object_new_int(r->npoints)) ||
	      json_add(o, "not_written", json_object_new_int(r->nfail));
	if (err)
		json_object_put(made);
	else
		err = json_add(o, "made", made);
	for (int i = 0; !err && i < r->nmade; i++) {
		snprintf(path, sizeof(path), "%s/%s", abs, r->made[i]);
		err = json_push(made, json_object_new_string(path));
	}
	if (err)
		p_err("report written in %s, but out of memory for the JSON",
		      abs);
	else
		err = json_print(o);
	json_object_put(o);
	return err ? -1 : 0;
}

#define REPORT_HELP \
	"usage: %s report DB [--out DIR] [--task NAME]... [--json]\n\n" \
	"Makes figures and report.md from the results database DB alone: " \
	"latency and\nbandwidth against the number of local models per " \
	"scheduler (from 'twinlab\nexperiment' points), the twin's predicted " \
	"against measured latency per task,\nthe plans' Graphviz pictures, " \
	"the runs, failures and correctness checks.\n\n" \
	"  -o, --out DIR     where to write (default: DB without '.db', plus " \
	"'-report')\n" \
	"  -t, --task NAME   draw only this task's trees (repeatable, at most " \
	"%d;\n" \
	"                    default: every task's)\n" \
	"  -j, --json        say what was written as JSON: report.md, the " \
	"figures and\n" \
	"                    pictures, the data, and how many runs and " \
	"points\n\n" \
	"Figures need gnuplot (Debian package gnuplot-nox), pictures Graphviz " \
	"(graphviz).\n"

/* What section s writes, or NULL when it has nothing to say. */
static char *section_text(struct report *r, const struct report_section *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *md = open_memstream(&text, &len);

	if (!md)
		return NULL;
	s->write(r, md);
	if (fclose(md) || !len) {
		free(text);
		return NULL;
	}
	return text;
}

int cmd_report(int argc, char **argv)
{
	struct report r = { 0 };
	const int most = sizeof(r.want_task) / sizeof(r.want_task[0]);
	struct cli cl = { 0 };
	bool json;
	struct picture *pic = NULL;
	char dflt[PATH_MAX], abs[PATH_MAX], err[512];
	const char *task;
	int e, nfid, rc, at = 0;

	rc = cli_parse(&cl, argc, argv, 1, 1, REPORT_HELP, prog, most);
	if (rc != CLI_GO)
		return rc;
	rc = 1;
	while ((task = cli_next(&cl, "task", &at))) {
		if (r.nwant == most) {
			p_err("at most %d --task options", most);
			return EXIT_USAGE;
		}
		r.want_task[r.nwant++] = task;
	}
	r.dir = cli_str(&cl, "out", NULL);
	json = cli_flag(&cl, "json");
	r.db_path = cl.argv[0];
	if (!r.dir) {
		size_t n = strlen(r.db_path);

		if (n > 3 && !strcmp(r.db_path + n - 3, ".db"))
			n -= 3;
		snprintf(dflt, sizeof(dflt), "%.*s-report", (int)n, r.db_path);
		r.dir = dflt;
	}
	r.rd = results_read_open(r.db_path, err, sizeof(err));
	if (!r.rd) {
		p_err("%s", err);
		goto out;
	}
	e = report_load(&r);
	for (int i = 0; !e && i < report_nsections; i++)
		if (report_sections[i].load)
			e = report_sections[i].load(&r);
	if (e)
		goto out;
	if (!r.nruns && !r.nblk && !r.ngap) {
		if (r.nleft)
			p_err("no complete runs in '%s': nothing to report "
			      "(%s)", r.db_path, r.left_out);
		else
			p_err("no runs in '%s': nothing to report", r.db_path);
		goto out;
	}
	run_totals(&r);
	if (build_points(&r))
		goto out;
	e = mkdir_p(r.dir);
	if (e) {
		p_err("cannot create '%s': %s", r.dir, strerror(-e));
		goto out;
	}
	r.gnuplot = access(GNUPLOT, X_OK) == 0;
	r.dot = access(DOT, X_OK) == 0;
	if (!r.gnuplot)
		p_err("warning: no '%s': install the Debian package "
		      "'gnuplot-nox' for the figures; writing the report and "
		      "the data without them", GNUPLOT);
	if (!r.dot)
		p_err("warning: no '%s': install the Debian package "
		      "'graphviz' for the plan pictures", DOT);
	/* a fresh log per report */
	for (int k = 0; k < 2; k++) {
		char log[PATH_MAX];

		snprintf(log, sizeof(log), "%s/%s", r.dir,
			 k ? "dot.log" : "gnuplot.log");
		unlink(log);
	}
	nfid = write_figures(&r);
	for (int i = 0; i < report_nsections; i++)
		r.section_md[i] = section_text(&r, &report_sections[i]);
	pic = calloc((size_t)r.nscheds + 1, sizeof(*pic));
	if (!pic) {
		p_err("out of memory");
		goto out;
	}
	write_pictures(&r, pic);
	write_runs_csv(&r);
	if (write_md(&r, pic, nfid))
		goto out;
	/* the programs' logs are kept only when they said something */
	for (int k = 0; k < 2; k++) {
		char log[PATH_MAX];
		struct stat sb;

		snprintf(log, sizeof(log), "%s/%s", r.dir,
			 k ? "dot.log" : "gnuplot.log");
		if (!stat(log, &sb) && sb.st_size == 0)
			unlink(log);
	}
	if (!realpath(r.dir, abs))
		snprintf(abs, sizeof(abs), "%s", r.dir);
	rc = r.nfail ? 1 : 0;
	if (json) {
		if (report_json(&r, abs))
			rc = 1;
		goto out;
	}
	printf("report: %s/report.md (%d runs, %d experiment points)\n", abs,
	       r.nruns, r.npoints);
	/* the figures by name; the rest (each figure's .svg, the plans'
	 * pictures) counted, as --json lists them all */
	for (int i = 0, figs = 0; i < r.nmade; i++) {
		const char *m = r.made[i];
		size_t n = strlen(m);

		if (strncmp(m, "fig-", 4) || n < 4 || strcmp(m + n - 4, ".png"))
			continue;
		if (!figs++)
			printf("figures:\n");
		printf("  %s/%s\n", abs, m);
	}
	{
		int svg = 0, plans = 0;

		for (int i = 0; i < r.nmade; i++) {
			svg += !strncmp(r.made[i], "fig-", 4) &&
			       strstr(r.made[i], ".svg");
			plans += !strncmp(r.made[i], "plan-", 5);
		}
		if (svg || plans)
			printf("and %d figure%s as SVG (%s/fig-*.svg), %d "
			       "picture%s of the plans (%s/plan-*)\n", svg,
			       svg == 1 ? "" : "s", abs, plans,
			       plans == 1 ? "" : "s", abs);
	}
	printf("data: %s/{runs.csv,*.dat}, gnuplot scripts %s/*.gp\n", abs,
	       abs);
out:
	for (int i = 0; pic && i < r.nscheds; i++)
		free(pic[i].tasks);
	free(pic);
	report_release(&r);
	return rc;
}
