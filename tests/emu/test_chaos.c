// SPDX-License-Identifier: MIT
/*
 * Kill points: `up`, `run` and `experiment` are sent SIGKILL, SIGTERM,
 * SIGINT or SIGHUP at seeded random moments. After a catchable signal the
 * command must have removed everything itself (unless `up` had finished:
 * then the emulation is up by design); after any signal `twinlab clean`
 * must leave nothing of the prefix — namespace, bind mount, process,
 * cgroup, state or lock file — and nothing outside the prefix may have
 * changed (the root namespace's links, routes and firewall, other
 * namespaces, other state).
 *
 * `make check` tries TWINLAB_CHAOS_POINTS (default 12: every command with
 * every signal once); `make chaos` tries 60. TWINLAB_CHAOS_SEED picks the
 * moments (default 1). Root only; prefix "kc<pid>".
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emu/lab.h"
#include "tests/lib/nettest.h"
#include "emu/netns.h"

extern char **environ;

static char prefix[LAB_PREFIX_MAX + 1];
static char db[NT_RUN_PATH], exp_file[NT_RUN_PATH], out[NT_RUN_PATH];
static char ring_file[128];

static void setup(void)
{
	if (!nt_run_files("kc", "chaos", prefix, sizeof(prefix), db, exp_file,
			  out))
		cr_skip_test("needs root");
	snprintf(ring_file, sizeof(ring_file), "/tmp/tl-chaos-%d-ring.yaml",
		 (int)getpid());
}

static void teardown(void)
{
	if (!prefix[0])
		return;
	nt_run_files_remove(prefix, db, exp_file, out);
	unlink(ring_file);
}

TestSuite(chaos, .init = setup, .fini = teardown, .timeout = 900);

/* ---- what exists ---------------------------------------------------- */

struct text {
	char *s;
	size_t len, cap;
};

static void add(struct text *t, const char *s)
{
	size_t n = strlen(s);

	if (t->len + n + 2 > t->cap) {
		t->cap = (t->len + n + 2) * 2;
		t->s = realloc(t->s, t->cap);
		cr_assert_not_null(t->s);
	}
	memcpy(t->s + t->len, s, n);
	t->len += n;
	t->s[t->len++] = '\n';
	t->s[t->len] = '\0';
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Whether name is another test's of this suite, which runs beside this
 * one (criterion -j2) under a prefix of its own: a few letters and that
 * test's process ID ("tq2679-s1", "tc4410h1"). What those tests make and
 * remove is not "outside" this test's prefix changing.
 */
static bool a_neighbours(const char *name)
{
	size_t l = strspn(name, "abcdefghijklmnopqrstuvwxyz");
	size_t d = strspn(name + l, "0123456789");

	return l >= 1 && l <= 6 && d >= 2 && d <= 7 &&
	       atol(name + l) != (long)getpid();
}

/* A directory's entries, sorted; those of our prefix (mine) or not. */
static void dir_entries(struct text *t, const char *dir, bool mine)
{
	char *names[4096];
	size_t n = 0, pl = strlen(prefix);
	struct dirent *de;
	DIR *d = opendir(dir);
	char line[512];

	while (d && (de = readdir(d)) && n < 4096) {
		bool ours = !strncmp(de->d_name, prefix, pl) &&
			    (de->d_name[pl] == '-' || de->d_name[pl] == '.' ||
			     !de->d_name[pl]);

		if (de->d_name[0] == '.' || ours != mine ||
		    (!mine && a_neighbours(de->d_name)))
			continue;
		names[n] = strdup(de->d_name);
		cr_assert_not_null(names[n]);
		n++;
	}
	if (d)
		closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "%s/%s", dir, names[i]);
		add(t, line);
		free(names[i]);
	}
}

static void file_lines(struct text *t, const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		add(t, line);
	}
	if (f)
		fclose(f);
}

/* The output of a program (argv), for the root namespace's firewall. */
static void program_lines(struct text *t, char *const argv[])
{
	posix_spawn_file_actions_t fa;
	char tmp[160];
	pid_t pid;
	int st;

	snprintf(tmp, sizeof(tmp), "/tmp/tl-chaos-%d.cmd", (int)getpid());
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, tmp, O_WRONLY | O_CREAT |
					 O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) == 0 &&
	    waitpid(pid, &st, 0) == pid) {
		FILE *f = fopen(tmp, "r");
		char line[1024];

		/* iptables-save's comment lines carry the time */
		while (f && fgets(line, sizeof(line), f))
			if (line[0] != '#') {
				line[strcspn(line, "\n")] = '\0';
				add(t, line);
			}
		if (f)
			fclose(f);
	}
	posix_spawn_file_actions_destroy(&fa);
	unlink(tmp);
}

/* Everything outside the prefix a run might touch. */
static struct text outside(void)
{
	struct text t = { 0 };
	char *ipt[] = { "iptables-save", NULL };

	add(&t, "[netns]");
	dir_entries(&t, NETNS_RUN_DIR, false);
	add(&t, "[state]");
	dir_entries(&t, LAB_STATE_DIR, false);
	add(&t, "[cgroups]");
	dir_entries(&t, "/sys/fs/cgroup/twinlab", false);
	add(&t, "[links]");
	dir_entries(&t, "/sys/class/net", false);
	add(&t, "[routes]");
	file_lines(&t, "/proc/net/route");
	add(&t, "[ipv6 routes]");
	file_lines(&t, "/proc/net/ipv6_route");
	add(&t, "[firewall]");
	program_lines(&t, ipt);
	return t;
}

/* What is left of the prefix: "" when nothing. */
static struct text leftovers(void)
{
	struct text t = { 0 };
	char path[256], line[1024], want[32], traf[32];
	size_t pl = strlen(prefix);
	struct dirent *de;
	DIR *d;
	FILE *f;

	add(&t, "");
	t.len = 0;
	t.s[0] = '\0';
	dir_entries(&t, NETNS_RUN_DIR, true);
	dir_entries(&t, LAB_STATE_DIR, true);
	dir_entries(&t, "/sys/fs/cgroup/twinlab", true);
	for (const char *const *c = (const char *const[]){ "cpu", "memory",
							    "cpuacct", NULL };
	     *c; c++) {
		snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/twinlab", *c);
		dir_entries(&t, path, true);
	}
	/* bind mounts of namespaces */
	f = fopen("/proc/self/mountinfo", "r");
	snprintf(want, sizeof(want), "/%s-", prefix);
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, want) && strstr(line, NETNS_RUN_DIR))
			add(&t, line);
	if (f)
		fclose(f);
	/* processes: the delay line and the traffic generator by their
	 * names, workers by their cgroup */
	snprintf(want, sizeof(want), "%.9s-delay", prefix);
	snprintf(traf, sizeof(traf), "%.9s-traf", prefix);
	d = opendir("/proc");
	while (d && (de = readdir(d))) {
		char comm[64] = "", cg[1024];
		FILE *c;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.32s/comm", de->d_name);
		c = fopen(path, "r");
		if (c) {
			if (fgets(comm, sizeof(comm), c))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(c);
		}
		snprintf(path, sizeof(path), "/proc/%.32s/stat", de->d_name);
		c = fopen(path, "r");
		if (c) {
			char st[512] = "", *q;

			if (!fgets(st, sizeof(st), c))
				st[0] = '\0';
			fclose(c);
			q = strrchr(st, ')');
			if (q && q[1] == ' ' && q[2] == 'Z')
				continue;	/* ended, not yet reaped */
		}
		if (!strcmp(comm, want) || !strcmp(comm, traf)) {
			snprintf(line, sizeof(line), "process %s (%s)",
				 de->d_name, comm);
			add(&t, line);
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%.32s/cgroup", de->d_name);
		c = fopen(path, "r");
		while (c && fgets(cg, sizeof(cg), c)) {
			char *p = strstr(cg, "/twinlab/");

			if (p && !strncmp(p + 9, prefix, pl) &&
			    (p[9 + pl] == '/' || p[9 + pl] == '\n')) {
				snprintf(line, sizeof(line), "process %s in "
					 "%s", de->d_name, p);
				add(&t, line);
				break;
			}
		}
		if (c)
			fclose(c);
	}
	if (d)
		closedir(d);
	return t;
}

/* ---- the commands --------------------------------------------------- */

enum cmd { C_UP, C_RUN, C_EXPERIMENT, NCMD };

static const char *const cmd_name[] = { "up", "run", "experiment" };
/* the longest a kill waits: about the command's own length here */
static const double cmd_span_s[] = { 0.5, 3.0, 4.0 };
static const int sigs[] = { SIGKILL, SIGTERM, SIGINT, SIGHUP };

static pid_t start(enum cmd c)
{
	char *bin = getenv("TWINLAB");
	/* NSFNET: 58 objects, ~0.4 s to build; the ring takes 30 ms */
	char *up[] = { bin, "up", "scenarios/nsfnet.yaml", "--prefix",
		       prefix, NULL };
	/* the ring with background traffic all along (its generator runs)
	 * and a cut half a second long (the thread playing it runs) */
	char *run[] = { bin, "run", ring_file,
			"--rounds", "1000", "--dilation", "1", "--db", db,
			"--prefix", prefix, NULL };
	char *exp[] = { bin, "experiment", exp_file, "--dilation", "1",
			"--db", db, "--prefix", prefix, NULL };
	char **argv = c == C_UP ? up : c == C_RUN ? run : exp;
	pid_t pid;

	cr_assert_not_null(bin, "TWINLAB is not set");
	pid = nt_spawn_to(argv, out);
	cr_assert_gt(pid, 0, "cannot start twinlab: %s", strerror(-pid));
	return pid;
}

static int clean(void)
{
	char *bin = getenv("TWINLAB");
	char *argv[] = { bin, "clean", "--prefix", prefix, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	cr_assert_eq(posix_spawn(&pid, bin, &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static uint64_t rng;

static double uniform(void)
{
	/* xorshift64*: seeded, the same moments on every machine */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (double)((rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static char *output(void)
{
	static char buf[8192];

	return nt_read_file(out, buf, sizeof(buf));
}

Test(chaos, kill_points_leave_nothing)
{
	const char *np = getenv("TWINLAB_CHAOS_POINTS");
	const char *sp = getenv("TWINLAB_CHAOS_SEED");
	int points = np ? atoi(np) : 12, self_clean = 0;
	struct text before, after;
	FILE *f;

	rng = sp ? strtoull(sp, NULL, 10) : 1;
	rng = rng * 0x9e3779b97f4a7c15ull + 1;
	f = fopen(exp_file, "w");
	cr_assert_not_null(f);
	fprintf(f, "name: chaos\nbase: %s/scenarios/teaching-ring.yaml\n"
		"schedulers: [spff, mst]\nlocals: [2, 3]\ntasks: 2\n"
		"seeds: [1]\nrounds: 20\nparameters: 250000\n"
		"bytes_per_parameter: 4\nwork_core_s: 0.01\n",
		getcwd((char[512]){ 0 }, 512));
	cr_assert_eq(fclose(f), 0);
	{
		char ring[8192];

		nt_read_file("scenarios/teaching-ring.yaml", ring, sizeof(ring));
		cr_assert(ring[0], "cannot read scenarios/teaching-ring.yaml");
		f = fopen(ring_file, "w");
		cr_assert_not_null(f);
		fputs(ring, f);
	}
	fputs("events:\n  - {at_s: 0, traffic: {from: s1, to: s4, gbps: 2, "
	      "for_s: 1000}}\n  - {at_s: 0.05, cut: {a: A, b: B}}\n"
	      "  - {at_s: 0.5, repair: {a: A, b: B}}\n", f);
	cr_assert_eq(fclose(f), 0);
	before = outside();
	for (int i = 0; i < points; i++) {
		enum cmd c = (enum cmd)(i % NCMD);
		int sig = sigs[(i / NCMD) % 4], st, rc;
		double at = uniform() * cmd_span_s[c];
		struct timespec ts = { (time_t)at,
				       (long)((at - (time_t)at) * 1e9) };
		struct text left;
		pid_t pid;

		nt_rm_results(db);
		pid = start(c);
		nanosleep(&ts, NULL);	/* the random moment, not a sync */
		kill(pid, sig);
		cr_assert_eq(waitpid(pid, &st, 0), pid);
		/* what a killed command left to us (a subreaper): reaped */
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		cr_log_info("%d: %s, %s after %.3f s: %s %d", i, cmd_name[c],
			    strsignal(sig), at,
			    WIFEXITED(st) ? "exit" : "signal",
			    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		/* a caught signal: the command cleaned up itself */
		if (sig != SIGKILL && WIFEXITED(st) &&
		    !(c == C_UP && WEXITSTATUS(st) == 0)) {
			left = leftovers();
			cr_expect_str_eq(left.s, "", "%d: %s after %s at %.3f "
					 "s left:\n%s\n%s", i, cmd_name[c],
					 strsignal(sig), at, left.s, output());
			self_clean += !left.s[0];
			free(left.s);
		}
		rc = clean();
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		cr_expect_eq(rc, 0, "%d: clean exited %d", i, rc);
		left = leftovers();
		cr_expect_str_eq(left.s, "", "%d: %s after %s at %.3f s: clean "
				 "left:\n%s", i, cmd_name[c], strsignal(sig),
				 at, left.s);
		free(left.s);
	}
	after = outside();
	cr_expect_str_eq(after.s, before.s, "something outside the prefix "
			 "changed; before:\n%s\nafter:\n%s", before.s, after.s);
	cr_log_info("%d kill points; %d cleaned up by the command itself",
		    points, self_clean);
	free(before.s);
	free(after.s);
}
