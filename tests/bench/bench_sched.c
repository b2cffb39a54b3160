// SPDX-License-Identifier: MIT
/*
 * Scheduling benchmark: how long sched_plan() takes, per scheduler, on
 * synthetic networks of 100, 1,000 and 10,000 ROADM sites carrying 1,000
 * federated-learning tasks. The target is the 1,000-site case in under one
 * second on one core; the benchmark reports whether each scheduler meets
 * it and never fails because of it.
 *
 * The scenarios are built in memory, not read from YAML, so the figures
 * are the scheduler's alone. Generator, deterministic for a given N:
 *
 *   - PRNG: xorshift64* seeded with 0x9e3779b97f4a7c15 ^ N.
 *   - N sites; site i is ROADM "x<i>" (node i), router "r<i>" (node N + i)
 *     on it and server "s<i>" (node 2N + i) on the router: 3N nodes.
 *   - Fibres: a random recursive spanning tree (site i > 0 joins a site
 *     drawn uniformly from 0..i-1), then chords between two sites drawn
 *     uniformly (no loops, no second fibre on a pair) until there are
 *     round(1.5 N) fibres, i.e. an average ROADM degree of 3. Lengths are
 *     uniform in [50, 500) km; 40 wavelengths of 100 Gbit/s each.
 *   - Servers: 400 Gbit/s access, 0 km, cpu 1, memory 1024 MiB.
 *   - 1,000 tasks "t<i>", arrival i: a global model and 15 local models on
 *     16 distinct servers drawn uniformly; 1e6 parameters x 4 bytes,
 *     work_core_s 0.01, one round, demand 1 Gbit/s.
 *   - MST weights {1.0, 0.1, 0.1, 0.05}, no stretch bound, never_slower
 *     off (the defaults before pipelined relays): the tree search and its
 *     routing alone, what networkx's Steiner tree is measured against.
 *
 * Each (N, scheduler) case runs in its own child process, pinned to CPU 0,
 * so the peak RSS that wait4() returns belongs to that case alone. The
 * child builds the scenario, then times sched_plan() only (the plan is
 * freed outside the clock) over several repetitions and reports the
 * median: 5 up to 1,000 sites, 3 above; a repetition over ONE_REP_S, or
 * one that would take the case past CASE_BUDGET_S, ends it early (the
 * table says how many ran and how long the case took). A third child per
 * N times single full Dijkstra searches on the empty auxiliary graph, a
 * unit to read the schedulers' cost per task in.
 *
 * On the 1,000-site case, networkx's steiner_tree (method mehlhorn) is
 * timed on the same graph (the empty network's auxiliary graph at the MST
 * weights) and tasks by tests/bench/steiner_nx.py, when python3 has
 * networkx 3: the tree alone, no wavelengths or routing, against mst with
 * its RWA (target: 50x the throughput).
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "twin/net.h"
#include "twin/plan.h"
#include "twin/scenario.h"
#include "twin/sched_impl.h"

#define NTASKS 1000
#define NLOCALS 15
#define WAVELENGTHS 40
#define AVG_DEGREE 3.0

#define MAX_SIZES 16
#define MAX_REPS 16
#define NSEARCHES 31		/* samples for the Dijkstra baseline */

/* A repetition this long leaves the case at one repetition. */
#define ONE_REP_S 60.0
/* Stop repeating once another repetition would pass this (per case). */
#define CASE_BUDGET_S 150.0

#define TARGET_N 1000
#define TARGET_S 1.0
#define NX_TARGET 50.0	/* mst's throughput over networkx's mehlhorn */

static const char *prog = "bench-sched";

/* ---- generator ---------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in [0, n), n < 2^32. */
static int rng_below(uint64_t *s, int n)
{
	return (int)(((rng_next(s) >> 32) * (uint64_t)n) >> 32);
}

static double rng_unit(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * 0x1.0p-53;
}

/* Open-addressing set of ROADM pairs, so no pair gets a second fibre. */
struct pair_set {
	uint64_t *slot;		/* 0 = empty */
	size_t mask;
};

static int pair_set_init(struct pair_set *ps, size_t n)
{
	size_t size = 16;

	while (size < 4 * n)
		size *= 2;
	ps->slot = calloc(size, sizeof(*ps->slot));
	ps->mask = size - 1;
	return ps->slot ? 0 : -ENOMEM;
}

static void pair_set_release(struct pair_set *ps)
{
	free(ps->slot);
	ps->slot = NULL;
}

/* Add pair {a, b}; false if it was already there. */
static bool pair_set_add(struct pair_set *ps, int a, int b)
{
	uint64_t lo = (uint64_t)(a < b ? a : b) + 1;
	uint64_t hi = (uint64_t)(a < b ? b : a) + 1;
	uint64_t key = hi << 32 | lo;
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & ps->mask;

	while (ps->slot[i]) {
		if (ps->slot[i] == key)
			return false;
		i = (i + 1) & ps->mask;
	}
	ps->slot[i] = key;
	return true;
}

static void add_fibre(struct scenario *sc, uint64_t *rng, int a, int b)
{
	struct scn_fibre *f = &sc->fibres[sc->nfibres++];

	f->a = a;
	f->b = b;
	f->km = 50.0 + 450.0 * rng_unit(rng);
	f->wavelengths = WAVELENGTHS;
	f->line = sc->nfibres;
}

static int build_fibres(struct scenario *sc, int n, uint64_t *rng)
{
	long want = lround(AVG_DEGREE * n / 2);
	struct pair_set ps;
	int err;

	if (want > (long)n * (n - 1) / 2)
		want = (long)n * (n - 1) / 2;
	sc->fibres = calloc((size_t)want + 1, sizeof(*sc->fibres));
	if (!sc->fibres)
		return -ENOMEM;
	err = pair_set_init(&ps, (size_t)want);
	if (err)
		return err;
	for (int i = 1; i < n; i++) {
		int j = rng_below(rng, i);

		pair_set_add(&ps, i, j);
		add_fibre(sc, rng, i, j);
	}
	while (sc->nfibres < want) {
		int a = rng_below(rng, n), b = rng_below(rng, n);

		if (a == b || !pair_set_add(&ps, a, b))
			continue;
		add_fibre(sc, rng, a, b);
	}
	pair_set_release(&ps);
	return 0;
}

static int build_tasks(struct scenario *sc, int n, uint64_t *rng)
{
	sc->tasks = calloc(NTASKS, sizeof(*sc->tasks));
	if (!sc->tasks)
		return -ENOMEM;
	for (int i = 0; i < NTASKS; i++) {
		struct scn_task *t = &sc->tasks[i];
		int pick[1 + NLOCALS];

		t->locals = malloc(NLOCALS * sizeof(*t->locals));
		if (!t->locals)
			return -ENOMEM;
		sc->ntasks++;
		for (int k = 0; k < 1 + NLOCALS; k++) {
			bool dup;

			do {
				pick[k] = 2 * n + rng_below(rng, n);
				dup = false;
				for (int j = 0; j < k; j++)
					dup |= pick[j] == pick[k];
			} while (dup);
		}
		snprintf(t->name, sizeof(t->name), "t%d", i);
		t->global = pick[0];
		t->nlocals = NLOCALS;
		memcpy(t->locals, pick + 1, NLOCALS * sizeof(*t->locals));
		t->parameters = 1000000;
		t->bytes_per_parameter = 4;
		t->work_core_s = 0.01;
		t->rounds = 1;
		t->demand_gbps = 1.0;
		t->arrival = i;
		t->line = i + 1;
	}
	return 0;
}

/* "<prefix><i>"; i < 1e6 (parse_sizes), the modulo tells the compiler so. */
static void node_name(struct scn_node *x, char prefix, int i)
{
	snprintf(x->name, sizeof(x->name), "%c%d", prefix, i % 10000000);
}

/* bench_scenario - the scenario described at the top, NULL on ENOMEM. */
static struct scenario *bench_scenario(int n)
{
	struct scenario *sc = calloc(1, sizeof(*sc));
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;

	if (!sc)
		return NULL;
	snprintf(sc->file, sizeof(sc->file), "<bench-sched>");
	snprintf(sc->name, sizeof(sc->name), "bench-%d", n);
	sc->seed = 1;
	sc->scale = 1;
	snprintf(sc->addressing, sizeof(sc->addressing), "198.18.0.0/15");
	sc->wavelength_gbps = 100;
	sc->demand_gbps = 1;
	sc->weights = (struct scn_weights){ 1.0, 0.1, 0.1, 0.05 };

	sc->nodes = calloc((size_t)3 * n, sizeof(*sc->nodes));
	if (!sc->nodes)
		goto fail;
	sc->nnodes = 3 * n;
	for (int i = 0; i < n; i++) {
		struct scn_node *x = &sc->nodes[i];
		struct scn_node *r = &sc->nodes[n + i];
		struct scn_node *s = &sc->nodes[2 * n + i];

		node_name(x, 'x', i);
		x->kind = NODE_ROADM;
		x->attach = -1;
		x->router = n + i;
		node_name(r, 'r', i);
		r->kind = NODE_ROUTER;
		r->attach = i;
		r->router = -1;
		node_name(s, 's', i);
		s->kind = NODE_SERVER;
		s->attach = n + i;
		s->router = -1;
		s->access_gbps = 400;
		s->access_km = 0;
		s->cpu = 1;
		s->memory_mib = 1024;
		x->line = r->line = s->line = i + 1;
	}
	if (build_fibres(sc, n, &rng) || build_tasks(sc, n, &rng))
		goto fail;
	return sc;
fail:
	scenario_free(sc);
	errno = ENOMEM;
	return NULL;
}

/* ---- one case, in a child ---------------------------------------------- */

/* What a child sends back through its pipe (well under PIPE_BUF). */
struct result {
	int err;		/* 0 or an errno */
	bool pinned;
	bool consistent;	/* every repetition gave the same plan */
	int nsamples;
	double t[NSEARCHES > MAX_REPS ? NSEARCHES : MAX_REPS];
	double cpu[MAX_REPS];	/* CPU time of each repetition */
	double build_s;
	double case_s;		/* build and all repetitions */
	long build_rss_kib;	/* peak RSS once the scenario is built */
	int blocked, lightpaths;
	long wavelength_links;
	double bytes_links;
	long peak_rss_kib;	/* filled in by the parent, from wait4 */
};

/* ops == NULL: the Dijkstra baseline instead of a scheduler. */
struct bench_case {
	int n;
	const struct sched_ops *ops;
	int reps;
	struct result r;
	bool skipped;		/* not asked for (--sched) */
	bool failed;
	char why[96];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long maxrss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static int run_sched(const struct scenario *sc, const struct sched_ops *ops,
		     int reps, double t0, struct result *r)
{
	for (int i = 0; i < reps && i < MAX_REPS; i++) {
		struct plan *p;
		double start, took, cpu0;

		cpu0 = cpu_s();
		start = now_s();
		p = sched_plan(sc, ops);
		took = now_s() - start;
		if (!p)
			return -errno;
		r->cpu[r->nsamples] = cpu_s() - cpu0;
		r->t[r->nsamples++] = took;
		if (i == 0) {
			r->blocked = p->blocked;
			r->lightpaths = p->net->nlp;
			r->wavelength_links = p->wavelength_links;
			r->bytes_links = p->bytes_links;
		} else if (r->blocked != p->blocked ||
			   r->lightpaths != p->net->nlp ||
			   r->wavelength_links != p->wavelength_links ||
			   r->bytes_links != p->bytes_links) {
			r->consistent = false;
		}
		plan_free(p);
		/* a slow case keeps to what the time budget allows */
		if (took > ONE_REP_S || now_s() - t0 + took > CASE_BUDGET_S)
			break;
	}
	return 0;
}

/*
 * The unit for the schedulers' cost: one search() of the whole auxiliary
 * graph (undirected room, no target) from a random server on the empty
 * network, as terminal_mst() runs twice per task.
 */
static int run_dijkstra(const struct scenario *sc, struct result *r)
{
	struct plan *p = plan_new(sc, "baseline");
	uint64_t rng = 0x5eed;
	struct sched s;
	int err;

	if (!p)
		return -errno;
	err = sched_init(&s, p);
	if (err)
		goto out_plan;
	for (int i = 0; i < NSEARCHES && !err; i++) {
		int nsites = sc->nnodes / 3;
		int src = 2 * nsites + rng_below(&rng, nsites);
		double start = now_s();

		err = search(&s, &src, 1, -1, S_AUX, false, -1,
			     sc->demand_gbps);
		r->t[r->nsamples++] = now_s() - start;
	}
	sched_release(&s);
out_plan:
	plan_free(p);
	return err;
}

static void child(const struct bench_case *c, int fd)
{
	struct result r = { .consistent = true };
	struct scenario *sc;
	cpu_set_t set;
	double t0 = now_s();
	ssize_t w;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	r.pinned = sched_setaffinity(0, sizeof(set), &set) == 0;
	sc = bench_scenario(c->n);
	if (!sc) {
		r.err = errno;
	} else {
		r.build_s = now_s() - t0;
		r.build_rss_kib = maxrss_kib();
		r.err = -(c->ops ? run_sched(sc, c->ops, c->reps, t0, &r)
				 : run_dijkstra(sc, &r));
		scenario_free(sc);
	}
	r.case_s = now_s() - t0;
	w = write(fd, &r, sizeof(r));
	_exit(w == (ssize_t)sizeof(r) ? 0 : 1);
}

/* Run case c in a child; fills c->r, or c->failed and c->why. */
static void run_case(struct bench_case *c)
{
	struct rusage ru;
	size_t got = 0;
	int fd[2], status;
	pid_t pid;

	c->failed = true;
	if (pipe(fd)) {
		snprintf(c->why, sizeof(c->why), "pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL);		/* or the child would print our buffer again */
	pid = fork();
	if (pid < 0) {
		snprintf(c->why, sizeof(c->why), "fork: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return;
	}
	if (pid == 0) {
		close(fd[0]);
		child(c, fd[1]);
	}
	close(fd[1]);
	while (got < sizeof(c->r)) {
		ssize_t n = read(fd[0], (char *)&c->r + got,
				 sizeof(c->r) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd[0]);
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			snprintf(c->why, sizeof(c->why), "wait4: %s",
				 strerror(errno));
			return;
		}
	if (WIFSIGNALED(status)) {
		snprintf(c->why, sizeof(c->why),
			 "child killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
		return;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) || got < sizeof(c->r)) {
		snprintf(c->why, sizeof(c->why), "child exited with status %d",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return;
	}
	if (c->r.err) {
		snprintf(c->why, sizeof(c->why), "%s", strerror(c->r.err));
		return;
	}
	c->r.peak_rss_kib = ru.ru_maxrss;
	c->failed = false;
}

/* ---- report ------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *t, int n)
{
	double v[NSEARCHES > MAX_REPS ? NSEARCHES : MAX_REPS];

	if (n <= 0)
		return NAN;
	memcpy(v, t, (size_t)n * sizeof(*v));
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double min_of(const double *t, int n)
{
	double m = INFINITY;

	for (int i = 0; i < n; i++)
		m = fmin(m, t[i]);
	return m;
}

static double max_of(const double *t, int n)
{
	double m = -INFINITY;

	for (int i = 0; i < n; i++)
		m = fmax(m, t[i]);
	return m;
}

static void print_header(void)
{
	printf("%6s %-5s %4s %9s %9s %9s %9s %8s %8s %7s %6s %8s %11s %7s "
	       "%7s %7s\n",
	       "sites", "sched", "reps", "median_s", "min_s", "max_s", "cpu_s",
	       "tasks/s", "ms/task", "blocked", "lps", "wl_links",
	       "bytes_links", "scn_MiB", "rss_MiB", "case_s");
}

static void print_case(const struct bench_case *c)
{
	const struct result *r = &c->r;
	double med, cpu;

	if (c->failed) {
		printf("%6d %-5s  failed: %s\n", c->n, c->ops->name, c->why);
		return;
	}
	med = median(r->t, r->nsamples);
	cpu = median(r->cpu, r->nsamples);
	printf("%6d %-5s %4d %9.4f %9.4f %9.4f %9.4f %8.0f %8.3f %7d %6d "
	       "%8ld %11.4e %7.1f %7.1f %7.2f%s%s%s\n",
	       c->n, c->ops->name, r->nsamples, med,
	       min_of(r->t, r->nsamples), max_of(r->t, r->nsamples), cpu,
	       NTASKS / med, med * 1e3 / NTASKS, r->blocked, r->lightpaths,
	       r->wavelength_links, r->bytes_links,
	       r->build_rss_kib / 1024.0, r->peak_rss_kib / 1024.0, r->case_s,
	       r->consistent ? "" : "  (repetitions disagree!)",
	       r->pinned ? "" : "  (not pinned)",
	       /* CPU time stops while another process has the core */
	       med > 1.05 * cpu ? "  (core shared: wall > cpu)" : "");
}

static void print_baseline(const struct bench_case *spff,
			   const struct bench_case *mst,
			   const struct bench_case *dij)
{
	double dj = NAN, ts = NAN, tm = NAN;

	if (!dij->failed)
		dj = median(dij->r.t, dij->r.nsamples);
	if (!spff->failed && !spff->skipped)
		ts = median(spff->r.t, spff->r.nsamples) / NTASKS;
	if (!mst->failed && !mst->skipped)
		tm = median(mst->r.t, mst->r.nsamples) / NTASKS;
	printf("%6d  full aux Dijkstra (%d nodes, %d samples) %8.1f us | "
	       "per task: spff %8.3f ms, mst %8.3f ms, mst/spff %6.1fx | "
	       "mst per task = %6.1f full Dijkstras\n",
	       dij->n, 3 * dij->n, dij->r.nsamples, dj * 1e6, ts * 1e3,
	       tm * 1e3, tm / ts, tm / dj);
}

static void print_target(const struct bench_case *cases, int ncases)
{
	const struct sched_ops *const ops[] = { &sched_spff, &sched_mst };

	printf("\ntarget: %d,%03d-node case under %.0f s on one core:",
	       TARGET_N / 1000, TARGET_N % 1000, TARGET_S);
	for (int i = 0; i < 2; i++) {
		const struct bench_case *c = NULL;

		for (int j = 0; j < ncases; j++)
			if (cases[j].n == TARGET_N && cases[j].ops == ops[i] &&
			    !cases[j].skipped)
				c = &cases[j];
		if (!c) {
			printf(" %s not measured;", ops[i]->name);
		} else if (c->failed) {
			printf(" %s FAILED (%s);", ops[i]->name, c->why);
		} else {
			double med = median(c->r.t, c->r.nsamples);

			printf(" %s %s (%.3f s)%s", ops[i]->name,
			       med < TARGET_S ? "PASS" : "MISS", med,
			       i ? "" : ";");
		}
	}
	printf("\n");
}

/* ---- networkx, side by side -------------------------------------------- */

/*
 * The case's graph (the auxiliary graph of the empty network: fibres,
 * add/drops and access links at their MST weights) and its tasks, for
 * steiner_nx.py. 0 or -errno.
 */
static int export_graph(const struct scenario *sc, int n, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fprintf(f, "nodes %d\n", sc->nnodes);
	for (int i = 0; i < sc->nfibres; i++)
		fprintf(f, "e %d %d %.17g\n", sc->fibres[i].a, sc->fibres[i].b,
			weight_fibre(sc, i));
	for (int i = 0; i < n; i++) {
		fprintf(f, "e %d %d %.17g\n", n + i, i, weight_adddrop(sc));
		fprintf(f, "e %d %d %.17g\n", 2 * n + i, n + i,
			weight_access(sc, 2 * n + i));
	}
	for (int t = 0; t < sc->ntasks; t++) {
		fprintf(f, "t %d", sc->tasks[t].global);
		for (int l = 0; l < sc->tasks[t].nlocals; l++)
			fprintf(f, " %d", sc->tasks[t].locals[l]);
		fputc('\n', f);
	}
	return fclose(f) ? -errno : 0;
}

/*
 * networkx's steiner_tree (mehlhorn) on the n-site case's graph, pinned to
 * CPU 0 as the schedulers are: its median seconds for all the tasks, or
 * NAN with why set (networkx missing, too old, or the script failed).
 */
static double run_networkx(int n, int reps, char *why, size_t len)
{
	char path[] = "/tmp/bench-sched-nx-XXXXXX", line[512] = "";
	const char *script = "tests/bench/steiner_nx.py";
	struct scenario *sc = bench_scenario(n);
	int fd = mkstemp(path), pfd[2] = { -1, -1 }, status = 0;
	double med = NAN;
	pid_t pid;
	FILE *out;

	snprintf(why, len, "could not run %s", script);
	if (fd < 0 || !sc)
		goto out;
	close(fd);
	if (export_graph(sc, n, path) || pipe(pfd))
		goto out;
	pid = fork();
	if (pid == 0) {
		char reps_s[16];
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(0, &set);
		sched_setaffinity(0, sizeof(set), &set);
		dup2(pfd[1], STDOUT_FILENO);
		close(pfd[0]);
		close(pfd[1]);
		snprintf(reps_s, sizeof(reps_s), "%d", reps);
		execlp("python3", "python3", script, path, "--reps", reps_s,
		       (char *)NULL);
		fprintf(stderr, "%s: python3: %s\n", prog, strerror(errno));
		_exit(3);
	}
	close(pfd[1]);
	pfd[1] = -1;
	if (pid < 0)
		goto out;
	out = fdopen(pfd[0], "r");
	if (out) {
		if (!fgets(line, sizeof(line), out))
			line[0] = 0;
		fclose(out);
		pfd[0] = -1;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
		snprintf(why, len, "networkx with steiner_tree "
			 "method='mehlhorn' (3.0 or later) is not installed");
	else if (WIFEXITED(status) && !WEXITSTATUS(status) &&
		 sscanf(line, "networkx %*s reps %*d tasks %*d median_s %lf",
			&med) == 1)
		snprintf(why, len, "%.*s", (int)strcspn(line, "\n"), line);
out:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	unlink(path);
	scenario_free(sc);
	return med;
}

static void print_networkx(const struct bench_case *cases, int ncases,
			   int reps)
{
	for (int i = 0; i < ncases; i++) {
		const struct bench_case *c = &cases[i];
		char why[512];
		double nx, mst;

		if (c->ops != &sched_mst || c->skipped || c->failed ||
		    c->n != TARGET_N)
			continue;
		mst = median(c->r.t, c->r.nsamples);
		printf("\nnetworkx, measured in the same run on the same %d-site "
		       "graph and tasks (tree only, no RWA):\n", c->n);
		fflush(stdout);
		nx = run_networkx(c->n, reps, why, sizeof(why));
		if (isnan(nx)) {
			printf("  not measured: %s\n", why);
			continue;
		}
		printf("  %s\n  steiner_tree mehlhorn %8.0f tasks/s; mst with "
		       "RWA %8.0f tasks/s: %.1fx (target >= %.0fx: %s)\n", why,
		       NTASKS / nx, NTASKS / mst, nx / mst, NX_TARGET,
		       nx / mst >= NX_TARGET ? "PASS" : "MISS");
	}
}

/* ---- command line ------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [--quick] [--sizes N[,N...]] [--reps R] "
		"[--sched NAME]\n"
		"  --quick        sites 100 and 1000, one repetition\n"
		"  --sizes LIST   ROADM sites per case "
		"(default 100,1000,10000)\n"
		"  --reps R       repetitions per case (default 5, 3 above "
		"1000 sites;\n"
		"                 fewer when one takes over %.0f s)\n"
		"  --sched NAME   only this scheduler (spff or mst)\n"
		"  --no-networkx  leave out networkx's steiner_tree, otherwise\n"
		"                 timed on the 1,000-site case when python3 has\n"
		"                 networkx 3 (tests/bench/steiner_nx.py)\n",
		prog, ONE_REP_S);
}

static int parse_sizes(const char *arg, int *sizes, int *nsizes)
{
	const char *p = arg;

	*nsizes = 0;
	for (;;) {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || errno || v < 1 + NLOCALS || v > 1000000 ||
		    (*end && *end != ',') || *nsizes == MAX_SIZES) {
			fprintf(stderr, "%s: bad --sizes '%s' (each from %d to "
				"1000000, at most %d)\n", prog, arg,
				1 + NLOCALS, MAX_SIZES);
			return -EINVAL;
		}
		sizes[(*nsizes)++] = (int)v;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

int main(int argc, char **argv)
{
	int sizes[MAX_SIZES] = { 100, 1000, 10000 }, nsizes = 3, reps = 0;
	const struct sched_ops *only = NULL;
	struct bench_case *cases;
	int ncases = 0, nfailed = 0;
	bool quick = false, no_nx = false;
	double t0 = now_s();

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			quick = true;
		} else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
			if (parse_sizes(argv[++i], sizes, &nsizes))
				return 2;
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			char *end;

			reps = (int)strtol(argv[++i], &end, 10);
			if (*end || reps < 1 || reps > MAX_REPS) {
				fprintf(stderr,
					"%s: bad --reps '%s' (1 to %d)\n",
					prog, argv[i], MAX_REPS);
				return 2;
			}
		} else if (!strcmp(argv[i], "--sched") && i + 1 < argc) {
			only = sched_find(argv[++i]);
			if (!only) {
				fprintf(stderr, "%s: unknown scheduler '%s'\n",
					prog, argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--no-networkx")) {
			no_nx = true;
		} else if (!strcmp(argv[i], "-h") ||
			   !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "%s: unknown argument '%s'\n", prog,
				argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (quick) {
		int keep = 0;

		for (int i = 0; i < nsizes; i++)
			if (sizes[i] <= 1000)
				sizes[keep++] = sizes[i];
		nsizes = keep;
		if (!reps)
			reps = 1;
	}
	cases = calloc((size_t)nsizes * 3, sizeof(*cases));
	if (!cases) {
		fprintf(stderr, "%s: %s\n", prog, strerror(ENOMEM));
		return 1;
	}

	printf("bench-sched: %d tasks x (1 global + %d locals), 3 nodes per "
	       "site, average ROADM degree %.0f, %d wavelengths x 100 Gbit/s, "
	       "demand 1 Gbit/s\n", NTASKS, NLOCALS, AVG_DEGREE, WAVELENGTHS);
	printf("time: sched_plan() only, median of the repetitions (cpu_s: "
	       "its CPU time), one process per case pinned to CPU 0; "
	       "rss_MiB: the case's peak (wait4), scn_MiB: peak after "
	       "building the scenario\n\n");
	print_header();
	for (int i = 0; i < nsizes; i++) {
		struct bench_case *c = &cases[ncases];

		for (int k = 0; k < 3; k++) {
			c[k].n = sizes[i];
			c[k].ops = k == 0 ? &sched_spff :
				   k == 1 ? &sched_mst : NULL;
			c[k].reps = reps ? reps : sizes[i] > 1000 ? 3 : 5;
			if (only && c[k].ops && c[k].ops != only) {
				c[k].skipped = true;
				continue;
			}
			run_case(&c[k]);
			if (c[k].failed)
				nfailed++;
			if (c[k].ops)
				print_case(&c[k]);
			fflush(stdout);
		}
		ncases += 3;
	}
	printf("\nbaseline, measured in the same run:\n");
	for (int i = 0; i < ncases; i += 3) {
		if (cases[i + 2].failed)
			printf("%6d  Dijkstra baseline failed: %s\n",
			       cases[i + 2].n, cases[i + 2].why);
		else
			print_baseline(&cases[i], &cases[i + 1], &cases[i + 2]);
	}
	printf("(a blocked task stops at its first missing wavelength and is "
	       "rolled back, so a scheduler that blocks many tasks does less "
	       "work per task)\n");
	print_target(cases, ncases);
	if (!no_nx)
		print_networkx(cases, ncases, reps ? reps : 3);
	printf("total bench time %.1f s\n", now_s() - t0);
	free(cases);
	/* a missed target is a finding, not a failure; a broken case is */
	return nfailed ? 1 : 0;
}
