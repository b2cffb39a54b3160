// SPDX-License-Identifier: MIT
/*
 * The emulation benchmark: build and teardown of 50-, 100- and
 * 200-namespace topologies (teardown timed until the kernel finished),
 * side by side in one run:
 *
 *   twinlab    the real `build/bin/twinlab up SCENARIO --prefix P
 *              --no-delay` and, separately, with the delay line; teardown
 *              `twinlab down --prefix P`. Scenarios from linetopo.c,
 *              written to a temporary directory.
 *   ip/tc      the very same objects by a plain sequence of ip and tc
 *              commands (iptc.c); a census proves they are the same.
 *   bare       the minimum through emu/netns.c + emu/nl.c (bare.c).
 *   Mininet    2.3.0 on LinearTopo with Linux bridges (mnrun.c), inside
 *              its own namespace: nodes = N (k = N/2 switches and hosts),
 *              and hosts = N (k = N: as many namespaces as twinlab).
 *
 * Every case runs --reps times (default 5; Mininet --mn-reps, default 3)
 * interleaved, after --warmup unrecorded runs of the kernel variants;
 * medians are reported with the ratios against the baselines of the same
 * run and PASS/MISS against the targets. Teardown is watched as watch.h
 * explains. Every object carries the prefix "tb<pid>" and is removed at
 * the end, on error and on SIGINT/SIGTERM/SIGHUP; what a SIGKILL leaves
 * is removed by the next run (sweep_dead()). README.md has the details.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bare.h"
#include "bench.h"
#include "census.h"
#include "iptc.h"
#include "linetopo.h"
#include "mnrun.h"
#include "proc.h"
#include "watch.h"
#include "emu/lab.h"
#include "emu/netns.h"
#include "tests/lib/nettest.h"
#include "twin/addr.h"
#include "twin/sched.h"

#define MAX_SIZES 8
#define MAX_REPS 15
#define WATCH_TIMEOUT_S 120.0
#define TARGET_MN_RATIO 30.0
#define TARGET_BARE_RATIO 1.5
#define TARGET_TEARDOWN_S 0.3
#define TARGET_N 200

volatile sig_atomic_t bench_stop;
volatile pid_t bench_child;

enum variant {
	V_TL, V_TLV, V_TLD, V_IPTC, V_BARE, V_MN_NODES, V_MN_HOSTS, NVAR
};

static const struct {
	const char *name;
	char letter;		/* prefix tb<pid><letter> */
	bool mininet;
} var_info[NVAR] = {
	[V_TL] = { "twinlab up --no-delay", 't', false },
	[V_TLV] = { "  same, veth watchers (*)", 'u', false },
	[V_TLD] = { "twinlab up (delay line)", 'd', false },
	[V_IPTC] = { "ip/tc commands", 'i', false },
	[V_BARE] = { "bare netlink", 'b', false },
	[V_MN_NODES] = { "Mininet nodes=N", 'm', true },
	[V_MN_HOSTS] = { "Mininet hosts=N", 'm', true },
};

struct series {
	double v[MAX_REPS];
	int n;
};

struct vres {
	struct series build, mnstart, down, kstart, gone, done, stop;
	struct series ph[3];	/* bare: netns, veth, config */
	struct census cen;
	bool have_cen, cen_changed, failed, skipped;
	char why[512];
	int k, leftovers, hosts, switches, links;
};

struct size_run {
	int n;
	char yaml[256];
	struct scenario *sc;
	struct plan *p;
	struct addressing *a;
	double twin_s;		/* load + schedule + address, in-process */
	struct iptc up, down;
	struct vres v[NVAR];
	int diff_iptc, diff_delay;	/* lines differing from twinlab's */
	bool twinlab_rebuilt;
	int lines;
};

static struct {
	int sizes[MAX_SIZES], nsizes, reps, mn_reps, warmup;
	bool mn[NVAR];
	bool iptc;		/* the ip/tc variant (off: minutes saved) */
	const char *twinlab, *csv;
	struct mn_opts mn_opts;
} opt = {
	.sizes = { 50, 100, 200 }, .nsizes = 3, .reps = 5, .mn_reps = 3,
	.warmup = 1,
	.mn = { [V_MN_NODES] = true, [V_MN_HOSTS] = true },
	.iptc = true,
	.twinlab = "build/bin/twinlab",
	.mn_opts = { "/usr/bin/python3", "tests/bench/emu/mininet_linear.py",
		     NULL },
};

static char base[24];		/* tb<pid> */
static char tmpdir[64];
static char mn_blocked[512];
static struct watch *watcher;
static struct bare *live_bare;
static FILE *csv;
static double empty_ns_s;
static struct timespec twinlab_mtime;

/* Whether the twinlab binary changed since the start (shared machines). */
static bool twinlab_changed(void)
{
	struct stat st;

	if (stat(opt.twinlab, &st))
		return true;
	if (st.st_mtim.tv_sec == twinlab_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == twinlab_mtime.tv_nsec)
		return false;
	twinlab_mtime = st.st_mtim;
	return true;
}

/* ---- small helpers ---------------------------------------------------- */

static void on_signal(int sig)
{
	(void)sig;
	bench_stop = 1;
	if (bench_child > 0)
		kill(bench_child, SIGTERM);
}

static void prefix_of(enum variant v, char *buf, size_t len)
{
	snprintf(buf, len, "%s%c", base, var_info[v].letter);
}

static void push(struct series *s, double x)
{
	if (s->n < MAX_REPS)
		s->v[s->n++] = x;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double med(const struct series *s)
{
	double v[MAX_REPS];

	if (s->n == 0)
		return 0;
	memcpy(v, s->v, sizeof(v));
	qsort(v, (size_t)s->n, sizeof(*v), cmp_double);
	return s->n % 2 ? v[s->n / 2] : (v[s->n / 2 - 1] + v[s->n / 2]) / 2;
}

static double smin(const struct series *s)
{
	double m = s->n ? s->v[0] : 0;

	for (int i = 1; i < s->n; i++)
		m = s->v[i] < m ? s->v[i] : m;
	return m;
}

static double smax(const struct series *s)
{
	double m = s->n ? s->v[0] : 0;

	for (int i = 1; i < s->n; i++)
		m = s->v[i] > m ? s->v[i] : m;
	return m;
}

static void loadavg(char *buf, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "re");

	buf[0] = '\0';
	if (f) {
		if (fgets(buf, (int)len, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
}

static void fail_variant(struct vres *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail_variant(struct vres *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	r->failed = true;
	fprintf(stderr, "bench-emu: %s\n", r->why);
}

/* ---- namespaces of a named variant ----------------------------------- */

typedef int ns_fn(int fd, const char *label, void *arg);

static int each_named(const struct scenario *sc, const char *prefix,
		      ns_fn *fn, void *arg)
{
	char ns[96];
	int err = 0;

	for (int i = 0; i < sc->nnodes && !err; i++) {
		int fd;

		lab_ns_name(prefix, sc->nodes[i].name, ns, sizeof(ns));
		fd = netns_open(ns);
		if (fd < 0)
			return fd;
		err = fn(fd, sc->nodes[i].name, arg);
		close(fd);	/* an open fd keeps the namespace alive */
	}
	return err;
}

static int census_one(int fd, const char *label, void *arg)
{
	return census_ns(arg, fd, label);
}

static int watch_nsid(int fd, const char *label, void *arg)
{
	(void)label;
	return watch_add(arg, fd, false);
}

static int watch_veth(int fd, const char *label, void *arg)
{
	(void)label;
	return watch_add(arg, fd, true);
}

/* Census after the first recorded build; later builds must match it. */
static int take_census(struct vres *r, const struct scenario *sc,
		       const char *prefix, bool keep)
{
	struct census c;
	int err;

	census_init(&c, keep && !r->have_cen);
	err = each_named(sc, prefix, census_one, &c);
	if (err) {
		census_release(&c);
		return err;
	}
	if (!r->have_cen) {
		r->cen = c;
		r->have_cen = true;
		return 0;
	}
	if (!census_same_counts(&r->cen, &c))
		r->cen_changed = true;
	census_release(&c);
	return 0;
}

/* ---- the kernel variants ---------------------------------------------- */

struct sample {
	double down, kstart, gone, done;	/* from the start of teardown */
};

/*
 * How a kernel variant builds its network as prefix (0, or nonzero with
 * err said) and takes it down (0 or nonzero); the Mininet variants have
 * neither.
 */
struct kernel_ops {
	int (*up)(struct size_run *s, enum variant v, const char *prefix,
		  struct bare_phases *ph, char *err, size_t len);
	int (*down)(struct size_run *s, const char *prefix);
};

static int tl_up(struct size_run *s, enum variant v, const char *prefix,
		 struct bare_phases *ph, char *err, size_t len)
{
	char *up[] = { (char *)opt.twinlab, "up", s->yaml, "--prefix",
		       (char *)prefix, v == V_TLD ? NULL : "--no-delay",
		       NULL };
	int e = proc_run(up);

	(void)ph;
	if (e)
		snprintf(err, len, "'twinlab up' exited with %d", e);
	return e;
}

static int tl_down(struct size_run *s, const char *prefix)
{
	char *down[] = { (char *)opt.twinlab, "down", "--prefix",
			 (char *)prefix, NULL };

	(void)s;
	return proc_run(down);
}

static int iptc_up(struct size_run *s, enum variant v, const char *prefix,
		   struct bare_phases *ph, char *err, size_t len)
{
	int failed = 0, e = iptc_run(&s->up, &failed);

	(void)v;
	(void)prefix;
	(void)ph;
	if (e) {
		snprintf(err, len, "command %d failed (%d): ", failed, e);
		fprintf(stderr, "bench-emu: failed: ");
		iptc_print(&s->up, failed, stderr);
	}
	return e;
}

static int iptc_down(struct size_run *s, const char *prefix)
{
	int failed = 0;

	(void)prefix;
	return iptc_run(&s->down, &failed);
}

static int bare_netlink_up(struct size_run *s, enum variant v,
			   const char *prefix, struct bare_phases *ph,
			   char *err, size_t len)
{
	(void)v;
	return bare_up(s->p, s->a, prefix, &live_bare, ph, err, len);
}

static int bare_netlink_down(struct size_run *s, const char *prefix)
{
	int e = bare_down(live_bare);

	(void)s;
	(void)prefix;
	live_bare = NULL;
	return e;
}

static const struct kernel_ops kernel_ops[NVAR] = {
	[V_TL] = { tl_up, tl_down },
	[V_TLV] = { tl_up, tl_down },
	[V_TLD] = { tl_up, tl_down },
	[V_IPTC] = { iptc_up, iptc_down },
	[V_BARE] = { bare_netlink_up, bare_netlink_down },
};

static int teardown_timed(struct size_run *s, enum variant v,
			  const char *prefix, struct sample *x, char *err,
			  size_t len)
{
	struct watch_times t;
	double t0, t1;
	int e;

	e = each_named(s->sc, prefix, v == V_TLV ? watch_veth : watch_nsid,
		       watcher);
	if (!e)
		e = watch_arm(watcher, WATCH_TIMEOUT_S);
	if (e) {
		snprintf(err, len, "cannot attach the teardown watchers: %s",
			 strerror(-e));
		return e;
	}
	t0 = now_s();
	e = kernel_ops[v].down ? kernel_ops[v].down(s, prefix) : -EINVAL;
	t1 = now_s();
	if (e) {
		snprintf(err, len, "teardown failed (%d)", e);
		watch_wait(watcher, &t);
		return e < 0 ? e : -EIO;
	}
	e = watch_wait(watcher, &t);
	proc_reap();
	if (!e && watch_resyncs(watcher))
		fprintf(stderr, "bench-emu: N=%d %s: events were lost, "
			"teardown times approximate\n", s->n,
			var_info[v].name);
	if (e) {
		snprintf(err, len, "teardown not seen to finish: %s%s",
			 strerror(-e), e == -ETIMEDOUT ? " (watch.h)" : "");
		return e;
	}
	x->down = t1 - t0;
	x->kstart = t.start - t0;
	x->gone = t.gone ? t.gone - t0 : -1;
	x->done = t.done - t0;
	return 0;
}

/* Remove whatever a failed run of v left. */
static void scrub(enum variant v)
{
	char prefix[32];

	prefix_of(v, prefix, sizeof(prefix));
	if (v == V_BARE && live_bare) {
		bare_down(live_bare);
		live_bare = NULL;
	}
	lab_down(prefix, NULL, NULL);	/* namespaces by prefix, state */
	proc_reap();
}

static int run_kernel_variant(struct size_run *s, enum variant v, bool record)
{
	struct vres *r = &s->v[v];
	char prefix[32], err[512] = "";
	struct bare_phases ph = { 0 };
	struct sample x = { 0 };
	double t0, t1;
	int e;

	if (!kernel_ops[v].up)
		return -EINVAL;
	prefix_of(v, prefix, sizeof(prefix));
	t0 = now_s();
	e = kernel_ops[v].up(s, v, prefix, &ph, err, sizeof(err));
	t1 = now_s();
	if (e)
		goto fail;
	if (record && v != V_TLV) {
		e = take_census(r, s->sc, prefix, v != V_BARE);
		if (e) {
			snprintf(err, sizeof(err), "census failed: %s",
				 strerror(-e));
			goto fail;
		}
	}
	e = teardown_timed(s, v, prefix, &x, err, sizeof(err));
	if (e)
		goto fail;
	if (!record)
		return 0;
	push(&r->build, t1 - t0);
	push(&r->down, x.down);
	push(&r->kstart, x.kstart);
	if (x.gone >= 0)
		push(&r->gone, x.gone);
	push(&r->done, x.done);
	push(&r->ph[0], ph.netns);
	push(&r->ph[1], ph.veth);
	push(&r->ph[2], ph.config);
	if (csv)
		fprintf(csv, "%d,%s,%d,%.6f,,%.6f,%.6f,%.6f,%.6f,\n", s->n,
			v == V_TLV ? "twinlab up --no-delay (veth watchers)" :
			var_info[v].name, r->build.n, t1 - t0, x.down,
			x.kstart, x.gone >= 0 ? x.gone : 0, x.done);
	return 0;
fail:
	fail_variant(r, "N=%d %s: %s", s->n, var_info[v].name, err);
	scrub(v);
	return e ? e : -EIO;
}

static int run_mininet(struct size_run *s, enum variant v)
{
	struct vres *r = &s->v[v];
	char ns[48], err[512];
	struct mn_result m;
	struct census c;
	int k = v == V_MN_NODES ? s->n / 2 : s->n, e;

	snprintf(ns, sizeof(ns), "%sm-mn", base);
	census_init(&c, false);
	r->k = k;
	e = mn_run(&opt.mn_opts, ns, k, 1, watcher, r->have_cen ? NULL : &c,
		   &m, err, sizeof(err));
	if (e) {
		census_release(&c);
		fail_variant(r, "N=%d %s (k=%d): %s", s->n, var_info[v].name,
			     k, err);
		return e;
	}
	if (!r->have_cen) {
		r->cen = c;
		r->have_cen = true;
	}
	push(&r->build, m.build + m.start);
	push(&r->mnstart, m.start);
	push(&r->stop, m.stop);
	push(&r->down, m.down);
	push(&r->kstart, m.kstart);
	push(&r->done, m.done);
	r->leftovers += m.leftovers;
	r->hosts = m.hosts;
	r->switches = m.switches;
	r->links = m.links;
	if (csv)
		fprintf(csv, "%d,%s k=%d,%d,%.6f,%.6f,%.6f,%.6f,,%.6f,%.6f\n",
			s->n, var_info[v].name, k, r->build.n, m.build, m.start,
			m.down, m.kstart, m.done, m.stop);
	return 0;
}

/* ---- reporting -------------------------------------------------------- */

static const char *mn_label(enum variant v)
{
	return v == V_MN_NODES ? "Mininet nodes=N" : "Mininet hosts=N";
}

static void print_census_row(const char *name, const struct vres *r)
{
	const struct census *c = &r->cen;

	if (!r->have_cen)
		return;
	printf("  %-26s %5d %6d %6d %6d %5d %7d %8d %7d%s\n", name, c->netns,
	       c->veth_ends / 2, c->addrs, c->routes, c->tbf, c->ingress,
	       c->redirects, c->bridges,
	       r->cen_changed ? "  (changed between runs!)" : "");
}

static void print_census(struct size_run *s)
{
	const struct vres *v = s->v;
	char name[64];

	printf("objects in the kernel after build (census; watcher veths "
	       "excluded):\n");
	printf("  %-26s %5s %6s %6s %6s %5s %7s %8s %7s\n", "variant", "netns",
	       "veths", "addrs", "routes", "tbf", "ingress", "redirect",
	       "bridges");
	for (int i = 0; i < NVAR; i++) {
		if (var_info[i].mininet)
			snprintf(name, sizeof(name), "Mininet k=%d (%d+%d)",
				 v[i].k, v[i].hosts, v[i].switches);
		print_census_row(var_info[i].mininet ? name : var_info[i].name,
				 &v[i]);
	}
	if (v[V_IPTC].have_cen && v[V_TL].have_cen)
		printf("  ip/tc vs twinlab: %s (%d object lines compared, %d "
		       "differ)%s\n", s->diff_iptc ? "DIFFERENT" : "identical",
		       s->lines, s->diff_iptc, s->diff_iptc ?
		       ": iptc.c and bare.c mirror emu/lab.c; - twinlab, "
		       "+ ip/tc:" : "");
	if (s->diff_iptc)
		census_diff(&s->v[V_TL].cen, &s->v[V_IPTC].cen, stdout, 8);
	if (v[V_TLD].have_cen && v[V_TL].have_cen)
		printf("  twinlab with delay line vs without: %s in rtnetlink "
		       "objects (plus %d iptables NFQUEUE rules and the "
		       "delay-line processes)\n",
		       s->diff_delay ? "DIFFERENT" : "identical",
		       2 * s->p->net->nlp);
	if (s->diff_delay)
		census_diff(&s->v[V_TL].cen, &s->v[V_TLD].cen, stdout, 8);
	printf("  ip/tc: %d commands to build (%d of them per-namespace "
	       "set-up), %d to tear down", s->up.n, s->up.nsetup, s->down.n);
	if (v[V_IPTC].build.n)
		printf("; %.2f ms per command", 1e3 * med(&v[V_IPTC].build) /
		       s->up.n);
	printf("\n");
	if (s->twinlab_rebuilt)
		printf("  WARNING: %s was rebuilt during this size's runs: "
		       "its samples mix two binaries\n", opt.twinlab);
}

static void print_time_row(const char *name, const struct vres *r,
			   int nodes)
{
	if (r->failed && r->build.n == 0) {
		printf("  %-26s failed: %s\n", name, r->why);
		return;
	}
	if (r->build.n == 0)
		return;
	printf("  %-26s %7.3f [%6.3f-%6.3f] %7.2f %7.3f %7.3f ", name,
	       med(&r->build), smin(&r->build), smax(&r->build),
	       1e3 * med(&r->build) / (nodes ? nodes : 1), med(&r->down),
	       med(&r->kstart));
	if (r->gone.n)
		printf("%7.3f ", med(&r->gone));
	else
		printf("%7s ", "-");
	printf("%7.3f [%6.3f-%6.3f]\n", med(&r->done), smin(&r->done),
	       smax(&r->done));
}

static void print_times(struct size_run *s)
{
	const struct vres *v = s->v;
	char name[64];

	printf("seconds, median [min-max] of %d runs (Mininet %d); per node "
	       "= build / namespaces (Mininet: / hosts+switches); teardown "
	       "from its start: down = the command returned, kstart = the "
	       "kernel began cleaning the last namespace, gone = its devices "
	       "were gone (veth rows), done = the kernel finished (upper "
	       "bound; watch.h):\n", opt.reps, opt.mn_reps);
	printf("  %-26s %7s %15s %7s %7s %7s %7s %7s\n", "variant", "build",
	       "", "ms/node", "down", "kstart", "gone", "done");
	for (int i = 0; i < NVAR; i++) {
		if (!var_info[i].mininet) {
			print_time_row(var_info[i].name, &v[i], s->n);
			continue;
		}
		if (v[i].skipped)
			continue;
		snprintf(name, sizeof(name), "%s k=%d (b+s)",
			 mn_label((enum variant)i), v[i].k);
		print_time_row(name, &v[i], v[i].hosts + v[i].switches);
	}
	if (v[V_TLV].build.n)
		printf("  (*) teardown also watched by one more veth per "
		       "namespace (peer in the watcher's namespace): a "
		       "cross-check that costs the teardown those veths\n");
	if (v[V_BARE].build.n)
		printf("  bare phases: namespaces %.3f, veths %.3f, "
		       "addresses+tbf %.3f s\n", med(&v[V_BARE].ph[0]),
		       med(&v[V_BARE].ph[1]), med(&v[V_BARE].ph[2]));
	for (int i = V_MN_NODES; i <= V_MN_HOSTS; i++) {
		const struct vres *m = &v[i];

		if (!m->build.n)
			continue;
		printf("  Mininet k=%d: build %.3f + start %.3f s; net.stop() "
		       "%.3f s; processes left after exit: %d\n", m->k,
		       med(&m->build) - med(&m->mnstart), med(&m->mnstart),
		       med(&m->stop), m->leftovers);
	}
}

static void print_ratio(const char *what, double x)
{
	printf("  %-40s %6.2fx\n", what, x);
}

static void print_ratios(struct size_run *s)
{
	const struct vres *v = s->v;
	double tl = med(&v[V_TL].build);
	char what[64];

	if (!v[V_TL].build.n)
		return;
	printf("ratios (same run, medians):\n");
	if (v[V_IPTC].build.n)
		print_ratio("ip/tc build / twinlab build",
			    med(&v[V_IPTC].build) / tl);
	if (v[V_BARE].build.n)
		print_ratio("twinlab build / bare netlink build",
			    tl / med(&v[V_BARE].build));
	if (v[V_TLD].build.n)
		print_ratio("twinlab with delay line / without",
			    med(&v[V_TLD].build) / tl);
	for (int i = V_MN_NODES; i <= V_MN_HOSTS; i++) {
		if (!v[i].build.n)
			continue;
		snprintf(what, sizeof(what),
			 "Mininet k=%d build+start / twinlab", v[i].k);
		print_ratio(what, med(&v[i].build) / tl);
		if (v[V_TLD].build.n) {
			snprintf(what, sizeof(what), "  ... / twinlab with "
				 "delay line");
			print_ratio(what, med(&v[i].build) /
					  med(&v[V_TLD].build));
		}
	}
	if (v[V_IPTC].done.n && v[V_TL].done.n)
		print_ratio("ip/tc teardown (done) / twinlab",
			    med(&v[V_IPTC].done) / med(&v[V_TL].done));
}

static void print_size(struct size_run *s)
{
	char load[128];
	int nlp = s->p->net->nlp, nfib = 0;

	for (int l = 0; l < nlp; l++)
		nfib += s->p->net->lp[l].nfib;
	loadavg(load, sizeof(load));
	printf("\n== N = %d namespaces: %d sites x (ROADM + router + %d "
	       "servers); plan: %d lightpaths over %d fibre hops, %d routes; "
	       "twin load+plan+address %.1f ms in-process; load %s\n",
	       s->n, s->n / LINE_PER_SITE, LINE_SERVERS, nlp, nfib,
	       s->a->nroutes, 1e3 * s->twin_s, load);
	print_census(s);
	print_times(s);
	print_ratios(s);
	fflush(stdout);
}

static const char *verdict(bool ok)
{
	return ok ? "PASS" : "MISS";
}

static void target_mininet(const struct size_run *s, double tl)
{
	for (int i = V_MN_NODES; i <= V_MN_HOSTS; i++) {
		const struct vres *m = &s->v[i];
		double r = med(&m->build) / tl;

		if (!m->build.n) {
			printf("  Mininet build+start >= %.0fx twinlab (%s): "
			       "not measured (%s)\n", TARGET_MN_RATIO,
			       mn_label((enum variant)i),
			       mn_blocked[0] ? mn_blocked :
			       m->skipped ? "not asked for" : m->why);
			continue;
		}
		printf("  Mininet build+start >= %.0fx twinlab (%s, k=%d): "
		       "%.2f s / %.3f s = %.1fx %s\n", TARGET_MN_RATIO,
		       mn_label((enum variant)i), m->k, med(&m->build), tl, r,
		       verdict(r >= TARGET_MN_RATIO));
	}
}

static void print_targets(struct size_run *runs, int nruns)
{
	const struct size_run *s = NULL;
	const struct vres *tl, *tlv, *tld, *bare;
	double b;

	for (int i = 0; i < nruns; i++)
		if (runs[i].n == TARGET_N)
			s = &runs[i];
	if (!s && nruns)
		s = &runs[nruns - 1];
	if (!s || !s->v[V_TL].build.n)
		return;
	tl = &s->v[V_TL];
	tlv = &s->v[V_TLV];
	tld = &s->v[V_TLD];
	bare = &s->v[V_BARE];
	printf("\n== targets at N = %d%s (twinlab = `up --no-delay`, "
	       "medians)\n", s->n,
	       s->n == TARGET_N ? "" : " (the target size was not run)");
	target_mininet(s, med(&tl->build));
	if (bare->build.n) {
		b = med(&tl->build) / med(&bare->build);
		printf("  twinlab within %.1fx of bare netlink: %.3f s / "
		       "%.3f s = %.2fx %s\n", TARGET_BARE_RATIO,
		       med(&tl->build), med(&bare->build), b,
		       verdict(b <= TARGET_BARE_RATIO));
	}
	printf("  teardown <= %.1f s until the kernel finished: done %.3f s "
	       "%s (upper bound; it includes up to ~%.3f s of the sentinel); "
	       "kernel took the last namespace at %.3f s; `twinlab down` "
	       "itself %.3f s\n", TARGET_TEARDOWN_S, med(&tl->done),
	       verdict(med(&tl->done) <= TARGET_TEARDOWN_S), empty_ns_s,
	       med(&tl->kstart), med(&tl->down));
	if (tlv->done.n)
		printf("  cross-check with a watcher veth in every namespace: "
		       "devices gone %.3f s, done %.3f s %s (the veths add "
		       "to the teardown)\n", med(&tlv->gone), med(&tlv->done),
		       verdict(med(&tlv->done) <= TARGET_TEARDOWN_S));
	if (tld->build.n)
		printf("  with the delay line: build %.3f s, teardown done "
		       "%.3f s\n", med(&tld->build), med(&tld->done));
}

/* ---- one size ---------------------------------------------------------- */

static int prepare_size(struct size_run *s, int n)
{
	struct scn_error se;
	char prefix[32];
	double t0;
	int e;

	memset(s, 0, sizeof(*s));
	s->n = n;
	snprintf(s->yaml, sizeof(s->yaml), "%s/line%d.yaml", tmpdir, n);
	e = linetopo_write(s->yaml, n);
	if (e) {
		fprintf(stderr, "bench-emu: cannot write '%s': %s\n", s->yaml,
			strerror(-e));
		return e;
	}
	t0 = now_s();
	s->sc = scenario_load(s->yaml, &se);
	if (!s->sc) {
		fprintf(stderr, "bench-emu: %s:%d:%d: %s\n", se.file, se.line,
			se.col, se.msg);
		return -EINVAL;
	}
	s->p = sched_plan(s->sc, &sched_mst);
	s->a = s->p ? addressing_new(s->p) : NULL;
	s->twin_s = now_s() - t0;
	if (!s->a || s->p->blocked) {
		fprintf(stderr, "bench-emu: cannot plan the %d-namespace line "
			"(%s)\n", n, s->p && s->p->blocked ? "a task is blocked"
			: strerror(errno));
		return -EINVAL;
	}
	prefix_of(V_IPTC, prefix, sizeof(prefix));
	e = iptc_init(&s->up);
	if (!e)
		e = iptc_init(&s->down);
	if (!e)
		e = iptc_build(&s->up, s->p, s->a, prefix);
	if (!e)
		e = iptc_teardown(&s->down, s->sc, prefix);
	if (e)
		fprintf(stderr, "bench-emu: cannot make the ip/tc script: %s\n",
			strerror(-e));
	return e;
}

static void release_size(struct size_run *s)
{
	for (int i = 0; i < NVAR; i++)
		census_release(&s->v[i].cen);
	iptc_release(&s->up);
	iptc_release(&s->down);
	addressing_free(s->a);
	plan_free(s->p);
	scenario_free(s->sc);
	if (s->yaml[0])
		unlink(s->yaml);
}

static void run_size(struct size_run *s)
{
	static const enum variant kernel[] = {
		V_TL, V_TLV, V_TLD, V_IPTC, V_BARE
	};

	fprintf(stderr, "bench-emu: N=%d: %d warm-up + %d runs per case "
		"(Mininet %d)\n", s->n, opt.warmup, opt.reps, opt.mn_reps);
	twinlab_changed();	/* what happened before this size is not ours */
	/* ip/tc takes seconds per run and warms nothing that matters */
	for (int w = 0; w < opt.warmup && !bench_stop; w++)
		for (size_t i = 0; i < sizeof(kernel) / sizeof(*kernel); i++)
			if (!s->v[kernel[i]].failed && kernel[i] != V_IPTC)
				run_kernel_variant(s, kernel[i], false);
	for (int i = V_MN_NODES; i <= V_MN_HOSTS; i++)
		s->v[i].skipped = !opt.mn[i] || mn_blocked[0];
	for (int rep = 0; (rep < opt.reps || rep < opt.mn_reps) && !bench_stop;
	     rep++) {
		for (size_t i = 0; i < sizeof(kernel) / sizeof(*kernel) &&
				   rep < opt.reps && !bench_stop; i++)
			if (!s->v[kernel[i]].failed &&
			    (kernel[i] != V_IPTC || opt.iptc))
				run_kernel_variant(s, kernel[i], true);
		for (int i = V_MN_NODES; i <= V_MN_HOSTS && !bench_stop; i++) {
			if (s->v[i].skipped || s->v[i].failed ||
			    rep >= opt.mn_reps)
				continue;
			fprintf(stderr, "bench-emu: N=%d run %d: %s\n", s->n,
				rep + 1, var_info[i].name);
			run_mininet(s, (enum variant)i);
		}
	}
	s->twinlab_rebuilt = twinlab_changed();
	if (s->v[V_TL].have_cen && s->v[V_IPTC].have_cen) {
		s->lines = s->v[V_TL].cen.nlines;
		s->diff_iptc = census_diff(&s->v[V_TL].cen, &s->v[V_IPTC].cen,
					   NULL, 0);
	}
	if (s->v[V_TL].have_cen && s->v[V_TLD].have_cen)
		s->diff_delay = census_diff(&s->v[V_TL].cen,
					    &s->v[V_TLD].cen, NULL, 0);
}

/* ---- leaving nothing behind ------------------------------------------- */

/* Whether name is one of ours: base, a variant letter, '-'. */
static bool ours(const char *name)
{
	size_t n = strlen(base);

	return !strncmp(name, base, n) && name[n] && strchr("tudibmw", name[n])
	       && name[n + 1] == '-';
}

static int sweep_netns(bool remove)
{
	DIR *d = opendir(NETNS_RUN_DIR);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (ours(de->d_name)) {
			n++;
			if (remove)
				netns_del(de->d_name);
			else
				fprintf(stderr, "bench-emu: left: netns %s\n",
					de->d_name);
		}
	closedir(d);
	return n;
}

/*
 * The pid of an earlier run that owns `name` if that run is dead, else 0.
 * Ours are "tb<pid>" + one of `marks` + `tail`: '-' and a node (a
 * namespace), '\0' (a state directory, name ends there) or '*'
 * (anything non-empty: "tb<pid>.XXXXXX").
 */
static pid_t dead_owner(const char *name, const char *marks, char tail)
{
	char *end, path[32];
	long pid;

	if (strncmp(name, "tb", 2) || name[2] < '1' || name[2] > '9')
		return 0;
	pid = strtol(name + 2, &end, 10);
	if (pid <= 0 || pid == getpid() || !*end || !strchr(marks, *end))
		return 0;
	if (tail == '*' ? end[1] == '\0' : end[1] != tail)
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld", pid);
	return access(path, F_OK) ? (pid_t)pid : 0;
}

/* Remove what earlier runs that died (SIGKILL, a crash) left behind. */
static void sweep_dead(void)
{
	struct dirent *de;
	char path[300];
	int n = 0;
	DIR *d;

	d = opendir(NETNS_RUN_DIR);
	while (d && (de = readdir(d))) {
		if (!dead_owner(de->d_name, "tudibmw", '-'))
			continue;
		if (strchr("tud", de->d_name[strcspn(de->d_name, "-") - 1])) {
			char prefix[32];

			snprintf(prefix, sizeof(prefix), "%.*s",
				 (int)strcspn(de->d_name, "-"), de->d_name);
			lab_down(prefix, NULL, NULL);	/* state, delay line */
		}
		netns_del(de->d_name);
		n++;
	}
	if (d)
		closedir(d);
	d = opendir(LAB_STATE_DIR);	/* a state file, no namespace yet */
	while (d && (de = readdir(d))) {
		if (!dead_owner(de->d_name, "tud", '\0'))
			continue;
		lab_down(de->d_name, NULL, NULL);
		n++;
	}
	if (d)
		closedir(d);
	d = opendir("/tmp");
	while (d && (de = readdir(d))) {
		if (!dead_owner(de->d_name, ".", '*'))
			continue;
		snprintf(path, sizeof(path), "/tmp/%s/", de->d_name);
		/* only our scenarios: line<N>.yaml */
		for (int i = 10; i <= 2000; i += LINE_PER_SITE) {
			char f[320];

			snprintf(f, sizeof(f), "%sline%d.yaml", path, i);
			unlink(f);
		}
		if (rmdir(path) == 0)
			n++;
	}
	if (d)
		closedir(d);
	if (n)
		fprintf(stderr, "bench-emu: removed what earlier runs that "
			"died had left (%d entries)\n", n);
}

static void cleanup(void)
{
	char prefix[32];

	if (bench_child > 0) {
		kill(bench_child, SIGKILL);
		proc_wait(bench_child);
	}
	proc_end_children(0);
	if (live_bare) {
		bare_down(live_bare);
		live_bare = NULL;
	}
	for (int v = 0; v < NVAR; v++) {
		prefix_of((enum variant)v, prefix, sizeof(prefix));
		if (lab_exists(prefix))
			lab_down(prefix, NULL, NULL);
	}
	proc_end_children(0);
	watch_free(watcher);
	watcher = NULL;
	sweep_netns(true);
	if (tmpdir[0])
		rmdir(tmpdir);
}

/* What is left of ours: namespaces, state directories, processes. */
static int leftovers(void)
{
	char prefix[32], path[256];
	int n = sweep_netns(false);

	for (int v = 0; v < NVAR; v++) {
		prefix_of((enum variant)v, prefix, sizeof(prefix));
		snprintf(path, sizeof(path), LAB_STATE_DIR "/%s", prefix);
		if (access(path, F_OK) == 0) {
			fprintf(stderr, "bench-emu: left: %s\n", path);
			n++;
		}
	}
	n += proc_end_children(0);
	if (tmpdir[0] && access(tmpdir, F_OK) == 0) {
		fprintf(stderr, "bench-emu: left: %s\n", tmpdir);
		n++;
	}
	return n;
}

/* ---- main -------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f, "usage: bench-emu [--sizes N,N,...] [--reps R] "
		   "[--mn-reps R] [--warmup W]\n"
		   "                 [--mininet both|nodes|hosts|off] "
		   "[--iptc on|off]\n"
		   "                 [--twinlab PATH] [--python PATH] "
		   "[--script PATH] [--csv FILE]\n"
		   "Sizes are namespaces, multiples of %d (default "
		   "50,100,200); needs root.\n", LINE_PER_SITE);
}

static int parse_sizes(const char *arg)
{
	char *end;

	opt.nsizes = 0;
	for (const char *p = arg; *p; p = *end ? end + 1 : end) {
		long n = strtol(p, &end, 10);

		if (end == p || (*end && *end != ',') || !linetopo_ok((int)n) ||
		    n > 2000 || opt.nsizes == MAX_SIZES)
			return -EINVAL;
		opt.sizes[opt.nsizes++] = (int)n;
	}
	return opt.nsizes ? 0 : -EINVAL;
}

static int parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "sizes", required_argument, NULL, 's' },
		{ "reps", required_argument, NULL, 'r' },
		{ "mn-reps", required_argument, NULL, 'R' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "mininet", required_argument, NULL, 'm' },
		{ "iptc", required_argument, NULL, 'i' },
		{ "twinlab", required_argument, NULL, 't' },
		{ "python", required_argument, NULL, 'p' },
		{ "script", required_argument, NULL, 'S' },
		{ "csv", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c, idx;

	while ((c = getopt_long(argc, argv, "h", lo, &idx)) != -1) {
		switch (c) {
		case 's':
			if (parse_sizes(optarg)) {
				fprintf(stderr, "bench-emu: bad sizes '%s': "
					"multiples of %d from %d to 2000\n",
					optarg, LINE_PER_SITE,
					2 * LINE_PER_SITE);
				return 2;
			}
			break;
		case 'r':
		case 'R': {
			int *reps = c == 'r' ? &opt.reps : &opt.mn_reps;

			*reps = atoi(optarg);
			if (*reps < 1 || *reps > MAX_REPS) {
				fprintf(stderr, "bench-emu: bad %s '%s'\n",
					lo[idx].name, optarg);
				return 2;
			}
			break;
		}
		case 'w':
			opt.warmup = atoi(optarg);
			break;
		case 'm':
			opt.mn[V_MN_NODES] = !strcmp(optarg, "both") ||
					     !strcmp(optarg, "nodes");
			opt.mn[V_MN_HOSTS] = !strcmp(optarg, "both") ||
					     !strcmp(optarg, "hosts");
			if (strcmp(optarg, "off") && !opt.mn[V_MN_NODES] &&
			    !opt.mn[V_MN_HOSTS]) {
				fprintf(stderr,
					"bench-emu: bad --mininet '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'i':
			if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
				fprintf(stderr, "bench-emu: bad --iptc '%s'\n",
					optarg);
				return 2;
			}
			opt.iptc = !strcmp(optarg, "on");
			break;
		case 't':
			opt.twinlab = optarg;
			break;
		case 'p':
			opt.mn_opts.python = optarg;
			break;
		case 'S':
			opt.mn_opts.script = optarg;
			break;
		case 'c':
			opt.csv = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	return 0;
}

static void print_header(void)
{
	struct utsname u;
	char load[128];

	uname(&u);
	loadavg(load, sizeof(load));
	printf("bench-emu: kernel %s %s, %ld CPUs, load %s; prefix %s; "
	       "%d runs per case (Mininet %d) after %d warm-up\n", u.sysname,
	       u.release, sysconf(_SC_NPROCESSORS_ONLN), load, base, opt.reps,
	       opt.mn_reps, opt.warmup);
	printf("  an empty namespace takes %.1f ms from its deletion to the "
	       "start of its cleanup when nothing else is torn down (median "
	       "of 5): the most the sentinel adds to 'done'\n",
	       1e3 * empty_ns_s);
	if (mn_blocked[0])
		printf("  Mininet: not run: %s\n", mn_blocked);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	static struct size_run runs[MAX_SIZES];
	int nruns = 0, rc = 0, e;
	char ipbuf[64];

	e = parse_args(argc, argv);
	if (e)
		return e;
	if (geteuid() != 0) {
		fprintf(stderr, "bench-emu: needs root (network namespaces, "
			"veth, qdiscs)\n");
		return 1;
	}
	if (access(opt.twinlab, X_OK)) {
		fprintf(stderr, "bench-emu: no twinlab at '%s': build it "
			"first (make)\n", opt.twinlab);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(base, sizeof(base), "tb%d", (int)getpid());
	sweep_dead();
	if (proc_subreaper()) {
		fprintf(stderr, "bench-emu: cannot become a subreaper: %s\n",
			strerror(errno));
		return 1;
	}
	opt.mn_opts.ip = nt_which("ip", ipbuf, sizeof(ipbuf));
	if (!opt.mn_opts.ip) {
		fprintf(stderr, "bench-emu: no 'ip' (iproute2)\n");
		return 1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/%s.XXXXXX", base);
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "bench-emu: cannot make a temporary directory: "
			"%s\n", strerror(errno));
		return 1;
	}
	if (opt.csv) {
		csv = fopen(opt.csv, "we");
		if (csv)
			fprintf(csv, "namespaces,variant,run,build_s,"
				     "mininet_start_s,down_s,kernel_start_s,"
				     "gone_s,done_s,mininet_stop_s\n");
	}
	if ((opt.mn[V_MN_NODES] || opt.mn[V_MN_HOSTS]) &&
	    mn_check(&opt.mn_opts, mn_blocked, sizeof(mn_blocked)) == 0)
		mn_blocked[0] = '\0';
	else if (!opt.mn[V_MN_NODES] && !opt.mn[V_MN_HOSTS])
		snprintf(mn_blocked, sizeof(mn_blocked), "--mininet off");
	{
		char wprefix[32];

		snprintf(wprefix, sizeof(wprefix), "%sw", base);
		watcher = watch_new(wprefix);
	}
	if (!watcher) {
		fprintf(stderr, "bench-emu: cannot make the teardown watcher: "
			"%s\n", strerror(errno));
		rc = 1;
		goto out;
	}
	empty_ns_s = watch_empty_ns(watcher, 5);
	if (empty_ns_s < 0) {
		fprintf(stderr, "bench-emu: the teardown watcher does not "
			"work: %s\n", strerror((int)-empty_ns_s));
		rc = 1;
		goto out;
	}
	print_header();
	for (int i = 0; i < opt.nsizes && !bench_stop; i++) {
		struct size_run *s = &runs[nruns++];

		if (prepare_size(s, opt.sizes[i])) {
			rc = 1;
			break;
		}
		run_size(s);
		print_size(s);
	}
	if (!bench_stop)
		print_targets(runs, nruns);
	for (int i = 0; i < nruns; i++)
		for (int v = 0; v < NVAR; v++)
			if (runs[i].v[v].failed)
				rc = 1;
out:
	for (int i = 0; i < nruns; i++)
		release_size(&runs[i]);
	if (csv)
		fclose(csv);
	cleanup();
	if (leftovers()) {
		fprintf(stderr, "bench-emu: something was left behind (above)"
			"\n");
		rc = 1;
	} else {
		printf("\nleft behind: nothing (no namespace, state or process "
		       "of prefix %s)\n", base);
	}
	if (bench_stop) {
		fprintf(stderr, "bench-emu: interrupted; cleaned up\n");
		return 130;
	}
	return rc;
}
