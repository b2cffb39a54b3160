// SPDX-License-Identifier: MIT
/*
 * The twinlab command as a user runs it: exit statuses, messages, and the
 * JSON and DOT it writes. The binary comes from $TWINLAB (set by make).
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct run {
	int status;
	char *out, *err;
};

static char *slurp(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	ssize_t n;

	cr_assert_not_null(buf);
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 2) {
			buf = realloc(buf, cap *= 2);
			cr_assert_not_null(buf);
		}
	}
	buf[len] = '\0';
	return buf;
}

/* Run argv with stdout and stderr into temporary files. */
static struct run run(const char *const *args)
{
	const char *bin = getenv("TWINLAB");
	char *argv[16];
	char o[] = "/tmp/tl-cli-outXXXXXX", e[] = "/tmp/tl-cli-errXXXXXX";
	int fo = mkstemp(o), fe = mkstemp(e), n = 0;
	posix_spawn_file_actions_t fa;
	struct run r = { 0 };
	pid_t pid;

	cr_assert_not_null(bin, "TWINLAB is not set: run through 'make check'");
	cr_assert(fo >= 0 && fe >= 0);
	argv[n++] = (char *)bin;
	for (int i = 0; args[i]; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fo, 1);
	posix_spawn_file_actions_adddup2(&fa, fe, 2);
	cr_assert_eq(posix_spawn(&pid, bin, &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	cr_assert_eq(waitpid(pid, &r.status, 0), pid);
	lseek(fo, 0, SEEK_SET);
	lseek(fe, 0, SEEK_SET);
	r.out = slurp(fo);
	r.err = slurp(fe);
	close(fo);
	close(fe);
	unlink(o);
	unlink(e);
	return r;
}

static int code(const struct run *r)
{
	cr_assert(WIFEXITED(r->status));
	return WEXITSTATUS(r->status);
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

static double summary(json_object *o, const char *key)
{
	json_object *s, *v;

	cr_assert(json_object_object_get_ex(o, "summary", &s));
	cr_assert(json_object_object_get_ex(s, key, &v), "no summary.%s", key);
	return json_object_get_double(v);
}

Test(cli, nsfnet_json_both_schedulers)
{
	double bytes[2];
	const char *sched[2] = { "spff", "mst" };

	for (int i = 0; i < 2; i++) {
		const char *a[] = { "plan", "scenarios/nsfnet.yaml",
				    "--scheduler", sched[i], "--json", NULL };
		struct run r = run(a);
		json_object *o, *tasks, *t0, *v;

		cr_assert_eq(code(&r), 0, "stderr: %s", r.err);
		o = json_tokener_parse(r.out);
		cr_assert_not_null(o, "not JSON");
		cr_assert_eq(summary(o, "tasks"), 30);
		cr_assert_eq(summary(o, "blocked"), 0);
		cr_assert_gt(summary(o, "wavelength_links"), 0);
		cr_assert_gt(summary(o, "mean_round_s"), 0);
		bytes[i] = summary(o, "bytes_links");
		cr_assert(json_object_object_get_ex(o, "tasks", &tasks));
		cr_assert_eq(json_object_array_length(tasks), 30);
		t0 = json_object_array_get_idx(tasks, 0);
		for (const char **k = (const char *[]){ "round_s", "broadcast_s",
							"compute_s", "upload_s",
							"broadcast", "upload",
							"aggregation", NULL };
		     *k; k++)
			cr_assert(json_object_object_get_ex(t0, *k, &v),
				  "task lacks '%s'", *k);
		json_object_put(o);
		run_free(&r);
	}
	cr_assert_lt(bytes[1], bytes[0], "mst %g !< spff %g", bytes[1],
		     bytes[0]);
}

Test(cli, bad_scenario_exit_2_with_position)
{
	char path[] = "/tmp/tl-cli-bad-XXXXXX";
	int fd = mkstemp(path);
	static const char y[] = "name: x\nwavelength_gbps: 10\nwavelengths: 2\n"
				"demand_gbps: 1\nroadms: [A]\nbogus: 1\n";
	const char *a[] = { "plan", path, NULL };
	struct run r;
	char want[128];

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, y, sizeof(y) - 1), (ssize_t)sizeof(y) - 1);
	close(fd);
	r = run(a);
	unlink(path);
	cr_assert_eq(code(&r), 2);
	snprintf(want, sizeof(want), "%s:6:1: unknown key 'bogus'", path);
	cr_assert(strstr(r.err, want), "stderr: %s", r.err);
	cr_assert_eq(r.out[0], '\0');
	run_free(&r);
}

Test(cli, usage_errors)
{
	const char *a1[] = { "plan", "scenarios/teaching-ring.yaml",
			     "--scheduler", "nope", NULL };
	const char *a2[] = { "frobnicate", NULL };
	const char *a3[] = { "plan", "/nonexistent/x.yaml", NULL };
	struct run r = run(a1);

	cr_assert_eq(code(&r), 2);
	cr_assert(strstr(r.err, "unknown scheduler 'nope'"), "%s", r.err);
	run_free(&r);
	r = run(a2);
	cr_assert_eq(code(&r), 2);
	cr_assert(strstr(r.err, "unknown command 'frobnicate'"), "%s", r.err);
	run_free(&r);
	r = run(a3);
	cr_assert_eq(code(&r), 2);
	cr_assert(strstr(r.err, "/nonexistent/x.yaml: cannot open"), "%s",
		  r.err);
	run_free(&r);
}

Test(cli, dot_renders_with_graphviz)
{
	char dir[] = "/tmp/tl-cli-dotXXXXXX", dot[128], svg[128];
	const char *a[] = { "plan", "scenarios/teaching-ring.yaml", "--dot",
			    dot, NULL };
	struct run r;
	struct stat st;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(dot, sizeof(dot), "%s/ring.dot", dir);
	snprintf(svg, sizeof(svg), "%s/ring.svg", dir);
	r = run(a);
	cr_assert_eq(code(&r), 0, "%s", r.err);
	run_free(&r);
	cr_assert_eq(stat(dot, &st), 0);
	cr_assert_gt(st.st_size, 100);
	if (access("/usr/bin/dot", X_OK) == 0) {
		pid_t pid;
		int status;
		char *argv[] = { "dot", "-Tsvg", "-o", svg, dot, NULL };

		cr_assert_eq(posix_spawn(&pid, "/usr/bin/dot", NULL, NULL, argv,
					 environ), 0);
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			  "dot rejected the file");
		cr_assert_eq(stat(svg, &st), 0);
		unlink(svg);
	}
	unlink(dot);
	rmdir(dir);
}
