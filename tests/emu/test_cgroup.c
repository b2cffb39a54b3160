// SPDX-License-Identifier: MIT
/*
 * Workers' cgroups on the real kernel: creation, joining and removal; the
 * CPU quota measured against a spinning child (wall time at 0.2 core vs
 * 1.0 core, and the cgroup's CPU accounting against the child's rusage);
 * the memory limit against a child that touches twice its limit (and the
 * OOM kill counted); removal
 * of a whole prefix with a live and a killed worker inside. Root only;
 * each test uses the prefix "tc<pid>" and removes it in .fini, even on
 * failure; prefixes of killed runs are swept in .init.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emu/cgroup.h"
#include "tests/lib/nettest.h"

#define MIB (1024 * 1024ull)
#define MAX_KIDS 8

static char prefix[CG_NAME_MAX + 1];
static bool boosted, boosted_v2;
static void boost_off(void);
static pid_t kids[MAX_KIDS];
static struct cg *cgs[MAX_KIDS];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* How many hierarchies, v1 or v2, have cgroup "twinlab/<rel>". */
static size_t left_over(const char *rel)
{
	char pat[2][192];
	size_t n = 0;

	snprintf(pat[0], sizeof(pat[0]), "/sys/fs/cgroup/*/" CG_ROOT "/%s",
		 rel);
	snprintf(pat[1], sizeof(pat[1]), "/sys/fs/cgroup/" CG_ROOT "/%s", rel);
	for (int i = 0; i < 2; i++) {
		glob_t g;

		if (glob(pat[i], 0, NULL, &g) == 0)
			n += g.gl_pathc;
		globfree(&g);
	}
	return n;
}

/*
 * The file setting the CPU weight of "twinlab" or "twinlab/<prefix>", and
 * the kernel's default for it.
 */
static void weight_file(bool v2, const char *p, char *buf, size_t len,
			const char **dflt)
{
	if (v2)
		snprintf(buf, len, "/sys/fs/cgroup/" CG_ROOT "%s%s/cpu.weight",
			 p ? "/" : "", p ? p : "");
	else
		snprintf(buf, len, "/sys/fs/cgroup/cpu/" CG_ROOT "%s%s/"
			 "cpu.shares", p ? "/" : "", p ? p : "");
	*dflt = v2 ? "100" : "1024";
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	int e = 0;

	if (!f)
		return -errno;
	if (fputs(text, f) == EOF)
		e = -EIO;
	if (fclose(f) && !e)
		e = -errno;
	return e;
}

/* Remove what runs killed on timeout left: "tc<pid>" whose pid is gone. */
static void sweep_stale(void)
{
	static const char *const pats[] = {
		"/sys/fs/cgroup/*/" CG_ROOT "/tc*",
		"/sys/fs/cgroup/" CG_ROOT "/tc*",
	};
	bool stale = false;

	for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		glob_t g;

		if (glob(pats[i], 0, NULL, &g))
			continue;
		for (size_t j = 0; j < g.gl_pathc; j++) {
			const char *base = strrchr(g.gl_pathv[j], '/') + 1;
			int pid = nt_stale_pid(base, "tc", NULL);
			char p[CG_NAME_MAX + 1];

			if (!pid)
				continue;
			snprintf(p, sizeof(p), "tc%d", pid);
			cg_remove_prefix(p, NULL, NULL);
			stale = true;
		}
		globfree(&g);
	}
	/* a run killed on timeout may have left "twinlab" boosted */
	for (int v2 = 0; stale && v2 < 2; v2++) {
		const char *dflt;
		char path[256];

		weight_file(v2, NULL, path, sizeof(path), &dflt);
		if (access(path, F_OK) == 0)
			write_text(path, dflt);
	}
}

static void setup(void)
{
	if (!nt_root_prefix(prefix, sizeof(prefix), "tc"))
		cr_skip_test("needs root");
	sweep_stale();
	cg_remove_prefix(prefix, NULL, NULL);
}

static void teardown(void)
{
	for (int i = 0; i < MAX_KIDS; i++) {
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
		kids[i] = 0;
		cg_free(cgs[i]);
		cgs[i] = NULL;
	}
	if (boosted)
		boost_off();
	if (prefix[0])
		cg_remove_prefix(prefix, NULL, NULL);
}

TestSuite(cgroup, .init = setup, .fini = teardown, .timeout = 30);

static struct cg *make(int slot, const char *name, double cpu, uint64_t mem)
{
	char err[256];
	struct cg *cg = cg_new(prefix, name, cpu, mem, err, sizeof(err));

	cr_assert_not_null(cg, "cg_new %s: %s", name, err);
	cgs[slot] = cg;
	return cg;
}

static int read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

/*
 * A child that has joined cg (itself, if self) and waits: it reads one
 * byte from *go (EOF also starts it), then runs fn. Returns its pid; the
 * child is in kids[slot].
 */
static pid_t child(int slot, struct cg *cg, bool self, int go[2],
		   void (*fn)(void *), void *arg)
{
	int ready;
	pid_t pid = nt_fork_ready(&ready);
	char c;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(go[1]);
		if (self && cg_attach_self(cg))
			_exit(99);
		if (write(ready, "r", 1) != 1)
			_exit(98);
		if (read(go[0], &c, 1) < 0)
			_exit(97);
		fn(arg);
		_exit(0);
	}
	kids[slot] = pid;
	if (!self)
		cr_assert_eq(cg_attach(cg, pid), 0);
	cr_assert_eq(read(ready, &c, 1), 1, "child did not start");
	close(ready);
	return pid;
}

static void idle(void *arg)
{
	(void)arg;
	pause();
}

/*
 * Whether /proc/<pid>/cgroup puts pid in cgroup `name` in the hierarchy
 * of ctrl (lines "id:ctrl[,ctrl...]:/path"; v2: ctrl NULL, "0::/path").
 */
static bool in_cgroup(pid_t pid, const char *name, const char *ctrl)
{
	char path[64], buf[4096], *line, *save = NULL;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (read_text(path, buf, sizeof(buf)))
		return false;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *ctrls = strchr(line, ':'), *where, *c, *s2 = NULL;
		bool match = false;

		if (!ctrls || !(where = strchr(++ctrls, ':')))
			continue;
		*where++ = '\0';
		if (where[0] != '/' || strcmp(where + 1, name))
			continue;
		if (!ctrl)
			match = !*ctrls;
		for (c = strtok_r(ctrls, ",", &s2); ctrl && c;
		     c = strtok_r(NULL, ",", &s2))
			match |= !strcmp(c, ctrl);
		if (match)
			return true;
	}
	return false;
}

Test(cgroup, create_attach_remove)
{
	char err[256], path[512], buf[128];
	struct cg *cg, *dup;
	int go[2], e;
	bool v1, v2;
	pid_t a, b;
	double t;

	cr_assert_eq(cg_probe(&v1, &v2), 0);
	cr_assert(v1 || v2, "no usable cgroup hierarchy");
	cr_log_info("cgroup v1 %s, v2 %s", v1 ? "usable" : "no",
		    v2 ? "usable" : "no");
	cg = make(0, "w", 0.5, 64 * MIB);
	snprintf(buf, sizeof(buf), CG_ROOT "/%s/w", prefix);
	cr_assert_str_eq(cg_name(cg), buf);

	/* the limits as the kernel holds them */
	if (!cg_is_v2(cg)) {
		snprintf(path, sizeof(path), "/sys/fs/cgroup/cpu/%s/"
			 "cpu.cfs_quota_us", cg_name(cg));
		cr_assert_eq(read_text(path, buf, sizeof(buf)), 0);
		cr_expect_eq(atol(buf), CG_PERIOD_US / 2, "quota %s", buf);
		snprintf(path, sizeof(path), "/sys/fs/cgroup/memory/%s/"
			 "memory.limit_in_bytes", cg_name(cg));
		cr_assert_eq(read_text(path, buf, sizeof(buf)), 0);
		cr_expect_eq(strtoull(buf, NULL, 10), 64 * MIB, "limit %s", buf);
	} else {
		snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/cpu.max",
			 cg_name(cg));
		cr_assert_eq(read_text(path, buf, sizeof(buf)), 0);
		cr_expect_str_eq(buf, "50000 100000\n");
	}

	/* refused: a second one, bad names, a quota the kernel refuses */
	dup = cg_new(prefix, "w", 1, 0, err, sizeof(err));
	cr_expect_null(dup);
	cr_expect_eq(errno, EEXIST);
	cr_expect(strstr(err, cg_name(cg)), "message: %s", err);
	cr_expect_null(cg_new(prefix, "../w", 1, 0, err, sizeof(err)));
	cr_expect_eq(errno, EINVAL);
	cr_expect_null(cg_new(prefix, "..", 1, 0, err, sizeof(err)));
	cr_expect_eq(errno, EINVAL);
	cr_expect_null(cg_new(prefix, "x", -1, 0, err, sizeof(err)));
	cr_expect_eq(errno, EINVAL);
	/* 1 ms per second is the least: a smaller share cannot be set */
	cr_expect_null(cg_new(prefix, "tiny", 0.0001, 0, err, sizeof(err)));
	cr_expect_eq(errno, EINVAL);
	cr_expect(strstr(err, "tiny") && strstr(err, "cpu"), "message: %s",
		  err);
	cr_log_info("the kernel's refusal: %s", err);
	snprintf(path, sizeof(path), "%s/tiny", prefix);
	cr_expect_eq(left_over(path), 0, "failed cgroup left behind");

	/* joined by the parent, and by the child itself */
	cr_assert_eq(pipe(go), 0);
	a = child(1, cg, false, go, idle, NULL);
	b = child(2, cg, true, go, idle, NULL);
	for (int i = 0; i < 2; i++) {
		pid_t p = i ? b : a;

		if (cg_is_v2(cg)) {
			cr_expect(in_cgroup(p, cg_name(cg), NULL), "pid %d", p);
			continue;
		}
		cr_expect(in_cgroup(p, cg_name(cg), "cpu"), "pid %d", p);
		cr_expect(in_cgroup(p, cg_name(cg), "cpuacct"), "pid %d", p);
		cr_expect(in_cgroup(p, cg_name(cg), "memory"), "pid %d", p);
	}
	cr_expect_eq(cg_attach(cg, 999999999), -ESRCH);

	/* busy while they live; gone once they are */
	t = now();
	e = cg_remove(prefix, "w");
	cr_expect_eq(e, -EBUSY, "cg_remove with processes inside: %d", e);
	cr_log_info("cg_remove gave up on a busy cgroup after %.2f s",
		    now() - t);
	for (int i = 1; i <= 2; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
		kids[i] = 0;
	}
	cr_expect_eq(cg_remove(prefix, "w"), 0);
	snprintf(path, sizeof(path), "%s/w", prefix);
	cr_expect_eq(left_over(path), 0, "%s still there", cg_name(cg));
	cr_expect_eq(cg_remove(prefix, "w"), 0, "removing twice");
	close(go[0]);
	close(go[1]);
}

/* ---- CPU quota ---------------------------------------------------- */

static void spin(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		__asm__ volatile("" ::: "memory");
}

struct spin_job {
	uint64_t n;
	int id;
	int out;		/* where the child writes its spin_done */
	int cpu;		/* pinned to this CPU, or -1 */
};

struct spin_done {
	int id;
	double wall, cpu;	/* of the spinning alone */
};

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void spin_child(void *arg)
{
	struct spin_job *j = arg;
	struct spin_done d = { j->id, 0, 0 };
	cpu_set_t set;

	if (j->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(j->cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	d.wall = now();
	d.cpu = cpu_now();
	spin(j->n);
	d.cpu = cpu_now() - d.cpu;
	d.wall = now() - d.wall;
	if (write(j->out, &d, sizeof(d)) != sizeof(d))
		_exit(96);
}

/*
 * A quota caps a cgroup; it does not reserve anything. On a machine
 * shared with other work, the group "twinlab" competes with every process
 * of the root cgroup at one default weight, and the 1.0-core spinner got
 * ~55 % of a core here (ratio ~2.6 instead of 5). For the measurement the
 * test gives "twinlab" and its prefix the highest weight for a moment and
 * puts the kernel default back afterwards (the default, not what it
 * read: two runs of this test at once must not leave it raised).
 */
static void boost(bool v2, bool on)
{
	const char *dflt, *val;
	char path[256];

	for (int i = 0; i < 2; i++) {
		weight_file(v2, i ? prefix : NULL, path, sizeof(path), &dflt);
		val = on ? (v2 ? "10000" : "262144") : dflt;
		if (i == 1 && !on)
			continue;	/* goes with the prefix */
		cr_expect_eq(write_text(path, val), 0, "%s", path);
	}
	boosted = on;
}

static double cpu_s(const struct rusage *ru)
{
	return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) +
	       (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e6;
}

/*
 * Iterations of spin() per second at full speed, measured as the 1.0-core
 * spinner will run: in cg, on `cpu`. Best of three.
 */
static double spin_rate(struct cg *cg, int res[2], int cpu)
{
	double best = 0;

	for (int i = 0; i < 3; i++) {
		struct spin_job j = { 1u << 23, 0, res[1], cpu };
		struct spin_done d;
		int go[2];

		cr_assert_eq(pipe(go), 0);
		child(7, cg, true, go, spin_child, &j);
		close(go[1]);
		close(go[0]);
		cr_assert_eq(waitpid(kids[7], NULL, 0), kids[7]);
		kids[7] = 0;
		cr_assert_eq(read(res[0], &d, sizeof(d)), (ssize_t)sizeof(d));
		if ((double)j.n / d.wall > best)
			best = (double)j.n / d.wall;
	}
	return best;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void boost_off(void)
{
	boost(boosted_v2, false);
}

#define RUNS 3

/* The first two CPUs we may run on, or -1s. */
static void two_cpus(int cpu[2])
{
	cpu_set_t set;
	int n = 0;

	cpu[0] = cpu[1] = -1;
	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	for (int i = 0; i < CPU_SETSIZE && n < 2; i++)
		if (CPU_ISSET(i, &set))
			cpu[n++] = i;
	if (n < 2)
		cpu[0] = -1;
}

/*
 * Two children spin the same number of iterations (~0.3 s of CPU) at the
 * same time, one in a 1.0-core cgroup and one in a 0.2-core cgroup, each
 * pinned to a CPU of its own. What the quota promises is asserted from
 * what each child and the kernel count, not from how long the work took:
 * the 0.2-core child gets 0.2 of a core over its wall time; its cgroup
 * used no more than its quota in each of the periods the kernel counted,
 * and was held back in most of them; the 1.0-core child got more than
 * such a cap would allow. Each cgroup's CPU time must match what wait4()
 * reports for its child.
 *
 * The ratio of the two wall times (~5) is logged, not asserted: the same
 * iterations took 0.16 to 0.53 s of CPU on this machine's cores from one
 * run to the next while the 0.2-core child's share stayed 0.200-0.203,
 * so the ratio measured the cores as much as the quota (3.75-7.64 in
 * three runs of three; 8.13 once, which failed a run of the suite).
 */
Test(cgroup, cpu_quota_throttles, .timeout = 40)
{
	static const double cores[2] = { 1.0, 0.2 };
	double ratio[RUNS], share[RUNS], full[RUNS], err_max = 0;
	uint64_t n;
	int res[2], cpu[2];

	two_cpus(cpu);
	if (cpu[0] < 0)
		cr_log_warn("one CPU only: the two spinners share it");
	cr_assert_eq(pipe(res), 0);
	n = 0;
	for (int r = 0; r < RUNS; r++) {
		struct spin_job job[2];
		double wall[2] = { 0, 0 }, spun[2] = { 0, 0 }, used[2], acct[2];
		uint64_t base[2] = { 0, 0 }, per0 = 0, thr0 = 0, per, thr;
		struct cg *cg[2];
		int go[2];

		cr_assert_eq(pipe(go), 0);
		for (int k = 0; k < 2; k++) {
			char name[16];

			snprintf(name, sizeof(name), "%s%d", k ? "slow" : "full",
				 r);
			cg[k] = make(k, name, cores[k], 0);
			if (r == 0 && k == 0) {
				boosted_v2 = cg_is_v2(cg[0]);
				boost(boosted_v2, true);
				n = spin_rate(cg[0], res, cpu[0]) * 0.3;
			}
			job[k] = (struct spin_job){ n, k, res[1],
						    cpu[0] < 0 ? -1 :
						    cpu[(k + r) % 2] };
			/* the calibration ran in cg[0] too: count from here */
			cr_assert_eq(cg_cpu_ns(cg[k], &base[k]), 0);
			if (k == 1)
				cr_assert_eq(cg_cpu_throttled(cg[1], &per0,
							      &thr0), 0);
			child(k, cg[k], true, go, spin_child, &job[k]);
		}
		close(go[1]);	/* both start now */
		close(go[0]);
		for (int k = 0; k < 2; k++) {
			struct spin_done d;
			struct rusage ru;
			uint64_t ns;
			int st;

			cr_assert_eq(wait4(kids[k], &st, 0, &ru), kids[k]);
			kids[k] = 0;
			cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
				  "spinner %d: status %#x", k, st);
			cr_assert_eq(read(res[0], &d, sizeof(d)),
				     (ssize_t)sizeof(d));
			wall[d.id] = d.wall;
			spun[d.id] = d.cpu;
			cr_assert_eq(cg_cpu_ns(cg[k], &ns), 0);
			used[k] = cpu_s(&ru);
			acct[k] = (double)(ns - base[k]) / 1e9;
			if (fabs(acct[k] - used[k]) / used[k] > err_max)
				err_max = fabs(acct[k] - used[k]) / used[k];
			cr_expect_lt(fabs(acct[k] - used[k]), 0.1 * used[k],
				     "%.1f core: cgroup %.3f s, rusage %.3f s",
				     cores[k], acct[k], used[k]);
		}
		ratio[r] = wall[1] / wall[0];
		share[r] = spun[1] / wall[1];
		full[r] = spun[0] / wall[0];
		/*
		 * A group that overran its quota within a period pays it
		 * back from the next one, so over P periods it can use no
		 * more than P + 1 quotas and one tick's overrun (10 ms at
		 * HZ 100); 10 % more for the counters read a moment apart.
		 */
		cr_assert_eq(cg_cpu_throttled(cg[1], &per, &thr), 0);
		per -= per0;
		thr -= thr0;
		cr_log_info("run %d: the 0.2-core group ran in %" PRIu64
			    " periods, held back in %" PRIu64, r, per, thr);
		cr_expect_leq(acct[1], 1.1 * (0.2 * CG_PERIOD_US / 1e6 *
					      (double)(per + 1) + 0.01),
			      "0.2-core group: %.3f s of CPU in %" PRIu64
			      " periods of %d us", acct[1], per, CG_PERIOD_US);
		cr_expect_geq(2 * thr, per, "0.2-core group held back in %"
			      PRIu64 " of %" PRIu64 " periods", thr, per);
		cr_log_info("run %d: 1.0 core %.3f s wall (cpu %.3f s, cgroup "
			    "%.3f s), 0.2 core %.3f s wall (cpu %.3f s, cgroup "
			    "%.3f s): ratio %.2f", r, wall[0], used[0],
			    acct[0], wall[1], used[1], acct[1], ratio[r]);
		for (int k = 0; k < 2; k++) {
			cg_free(cgs[k]);
			cgs[k] = NULL;
		}
	}
	boost_off();
	qsort(ratio, RUNS, sizeof(double), cmp_double);
	qsort(share, RUNS, sizeof(double), cmp_double);
	qsort(full, RUNS, sizeof(double), cmp_double);
	cr_log_info("throttling: the 0.2-core child had %.3f of a core, the "
		    "1.0-core child %.3f (medians); wall-time ratio %.2f "
		    "(min %.2f, max %.2f), not asserted; worst CPU accounting "
		    "error %.1f %%", share[RUNS / 2], full[RUNS / 2],
		    ratio[RUNS / 2], ratio[0], ratio[RUNS - 1], 100 * err_max);
	cr_expect(share[RUNS / 2] > 0.15 && share[RUNS / 2] < 0.25,
		  "the 0.2-core child had %.3f of a core", share[RUNS / 2]);
	cr_expect_gt(full[RUNS / 2], 0.5, "the 1.0-core child had %.3f of "
		     "a core", full[RUNS / 2]);
	close(res[0]);
	close(res[1]);
}

/* ---- memory limit ------------------------------------------------- */

/* Touch every page of 2 x the limit, then report survival by exit 0. */
static void hog(void *arg)
{
	size_t len = *(const size_t *)arg;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(2);
	for (size_t i = 0; i < len; i += 4096)
		p[i] = (char)i;
	_exit(0);
}

Test(cgroup, memory_limit_is_enforced)
{
	const uint64_t limit = 32 * MIB;
	size_t len = 2 * limit;
	struct cg *cg = make(0, "mem", 0, limit);
	uint64_t peak = 0, ooms = 99;
	int go[2], st;
	double t;

	cr_assert_eq(cg_oom_kills(cg, &ooms), 0);
	cr_expect_eq(ooms, 0, "a new cgroup counts %" PRIu64 " OOM kills",
		     ooms);
	cr_assert_eq(pipe(go), 0);
	child(0, cg, true, go, hog, &len);
	t = now();
	close(go[1]);
	close(go[0]);
	cr_assert_eq(waitpid(kids[0], &st, 0), kids[0]);
	kids[0] = 0;
	t = now() - t;
	cr_assert(!(WIFEXITED(st) && WEXITSTATUS(st) == 0),
		  "a child touching %zu MiB survived a %" PRIu64 " MiB limit",
		  len >> 20, limit >> 20);
	cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		  "status %#x: expected the OOM killer's SIGKILL", st);
	/* what names the death "killed by the OOM killer" in a run */
	cr_assert_eq(cg_oom_kills(cg, &ooms), 0);
	cr_expect_geq(ooms, 1, "the OOM kill was not counted");
	cr_assert_eq(cg_mem_peak(cg, &peak), 0);
	cr_expect(peak <= limit && peak > limit / 2,
		  "peak %" PRIu64 " bytes, limit %" PRIu64, peak, limit);
	cr_log_info("touching %zu MiB under a %" PRIu64 " MiB limit: %s %d "
		    "after %.3f s, peak %.1f MiB", len >> 20, limit >> 20,
		    WIFSIGNALED(st) ? "killed by signal" : "exit status",
		    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), t,
		    (double)peak / MIB);
}

/* ---- removal of a prefix ------------------------------------------ */

struct seen {
	char what[8][256];
	int n;
};

static void note(const char *what, void *arg)
{
	struct seen *s = arg;

	if (s->n < 8)
		snprintf(s->what[s->n++], sizeof(s->what[0]), "%s", what);
}

static bool seen_has(const struct seen *s, const char *text)
{
	for (int i = 0; i < s->n; i++)
		if (strstr(s->what[i], text))
			return true;
	return false;
}

/*
 * Three workers' cgroups: w0's process SIGKILLed (and reaped) while
 * inside, w1's still running (as after a crash of the run), w2 empty.
 * cg_remove_prefix kills w1's process and removes all four cgroups;
 * nothing is left in any hierarchy.
 */
Test(cgroup, remove_prefix_leaves_nothing)
{
	struct seen s = { .n = 0 };
	char want[128];
	int go[2], st, n;
	pid_t live;

	cr_assert_eq(pipe(go), 0);
	for (int i = 0; i < 3; i++) {
		char name[8];

		snprintf(name, sizeof(name), "w%d", i);
		make(i, name, 0.5, 64 * MIB);
	}
	child(0, cgs[0], true, go, idle, NULL);
	live = child(1, cgs[1], false, go, idle, NULL);
	kill(kids[0], SIGKILL);
	cr_assert_eq(waitpid(kids[0], &st, 0), kids[0]);
	kids[0] = 0;
	cr_assert(left_over(prefix) > 0);

	n = cg_remove_prefix(prefix, note, &s);
	for (int i = 0; i < s.n; i++)
		cr_log_info("removed: %s", s.what[i]);
	cr_expect_eq(n, 5, "cg_remove_prefix: %d", n);
	snprintf(want, sizeof(want), "process %d in cgroup", (int)live);
	cr_expect(seen_has(&s, want), "live process not reported");
	for (int i = 0; i < 3; i++) {
		snprintf(want, sizeof(want), "cgroup " CG_ROOT "/%s/w%d", prefix,
			 i);
		cr_expect(seen_has(&s, want), "%s not reported", want);
	}
	cr_assert_eq(waitpid(live, &st, 0), live);
	kids[1] = 0;
	cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	cr_expect_eq(left_over(prefix), 0, "cgroups left under prefix %s",
		     prefix);
	cr_expect_eq(cg_remove_prefix(prefix, note, &s), 0, "second call");
	cr_expect_eq(cg_remove(prefix, "w0"), 0);
	close(go[0]);
	close(go[1]);
}
