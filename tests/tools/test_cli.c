// SPDX-License-Identifier: MIT
/*
 * The twinlab command as a user runs it: exit statuses, messages, and the
 * JSON and DOT it writes. The binary comes from $TWINLAB (set by make).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <ftw.h>
#include <json-c/json.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/tlrun.h"

extern char **environ;

/* Run args, which must exit 0 printing JSON: that JSON (put it). */
static json_object *run_json(const char *const *args)
{
	struct tl_run r = tl_run(args);
	json_object *o;

	cr_assert_eq(tl_code(&r), 0, "stderr: %s", r.err);
	o = json_tokener_parse(r.out);
	cr_assert_not_null(o, "not JSON: %s", r.out);
	tl_run_free(&r);
	return o;
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
		json_object *o, *tasks, *t0, *v;

		o = run_json(a);
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
	}
	cr_assert_lt(bytes[1], bytes[0], "mst %g !< spff %g", bytes[1],
		     bytes[0]);
}

/*
 * plan --json gives each transfer the addresses up gives it: every path
 * of every tree has a src and a dst, the 20 addresses of the teaching ring's
 * ten transfers all different, a transfer's src and dst a /31 pair (the
 * addresses a teacher's ping -I uses).
 */
Test(cli, plan_json_gives_each_transfer_its_addresses)
{
	const char *a[] = { "plan", "scenarios/teaching-ring.yaml", "--json",
			    NULL };
	char seen[20][32];
	json_object *o, *tasks;
	int n = 0;

	o = run_json(a);
	cr_assert(json_object_object_get_ex(o, "tasks", &tasks));
	for (size_t t = 0; t < json_object_array_length(tasks); t++)
		for (int k = 0; k < 2; k++) {
			json_object *tree, *x, *v;

			cr_assert(json_object_object_get_ex(
				json_object_array_get_idx(tasks, t),
				k ? "upload" : "broadcast", &tree));
			for (size_t i = 0; i < json_object_array_length(tree);
			     i++) {
				unsigned s[4], d[4];

				x = json_object_array_get_idx(tree, i);
				cr_assert(json_object_object_get_ex(x, "src",
								    &v));
				cr_assert_lt(n, 20);
				snprintf(seen[n++], 32, "%s",
					 json_object_get_string(v));
				cr_assert_eq(sscanf(seen[n - 1], "%u.%u.%u.%u",
						    &s[0], &s[1], &s[2], &s[3]),
					     4, "%s", seen[n - 1]);
				cr_assert(json_object_object_get_ex(x, "dst",
								    &v));
				snprintf(seen[n++], 32, "%s",
					 json_object_get_string(v));
				cr_assert_eq(sscanf(seen[n - 1], "%u.%u.%u.%u",
						    &d[0], &d[1], &d[2], &d[3]),
					     4, "%s", seen[n - 1]);
				cr_expect(s[3] % 2 == 0 && d[3] == s[3] + 1 &&
					  !memcmp(s, d, 3 * sizeof(*s)),
					  "%s -> %s is not a /31 pair",
					  seen[n - 2], seen[n - 1]);
			}
		}
	cr_assert_eq(n, 20, "ten transfers, two addresses each");
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			cr_expect_str_neq(seen[i], seen[j]);
	json_object_put(o);
}

/*
 * plan --hosts: the split and the naive one in the JSON, each host's
 * nodes listed once over all hosts; an impossible count refused.
 */
Test(cli, plan_splits_over_hosts)
{
	const char *a[] = { "plan", "scenarios/nsfnet.yaml", "--scheduler",
			    "spff", "--hosts", "2", "--json", NULL };
	const char *zero[] = { "plan", "scenarios/nsfnet.yaml", "--hosts", "0",
			       NULL };
	const char *many[] = { "plan", "scenarios/teaching-ring.yaml",
			       "--hosts", "9", NULL };
	const char *text[] = { "plan", "scenarios/nsfnet.yaml", "--hosts", "2",
			       NULL };
	json_object *o, *split, *hosts, *naive, *v;
	size_t nodes = 0;

	o = run_json(a);
	cr_assert(json_object_object_get_ex(o, "split", &split));
	cr_assert(json_object_object_get_ex(split, "hosts", &hosts));
	cr_assert_eq(json_object_array_length(hosts), 2);
	for (size_t h = 0; h < 2; h++) {
		cr_assert(json_object_object_get_ex(
			json_object_array_get_idx(hosts, h), "nodes", &v));
		nodes += json_object_array_length(v);
	}
	cr_assert_eq(nodes, 56, "NSFNET's 14 ROADMs, routers and 28 servers");
	cr_assert(json_object_object_get_ex(split, "balance", &v));
	cr_assert_leq(json_object_get_double(v), 1.1);
	cr_assert(json_object_object_get_ex(split, "naive", &naive));
	cr_assert(json_object_object_get_ex(naive, "tunnels", &v));
	json_object_put(o);
	tl_refused(zero, 2, "--hosts");
	tl_refused(many, 2, "cannot be split over 9 hosts");
	tl_says(text, 0, "naive split (sites in file order)");
}

Test(cli, bad_scenario_exit_2_with_position)
{
	char path[] = "/tmp/tl-cli-bad-XXXXXX";
	static const char y[] = "name: x\nwavelength_gbps: 10\nwavelengths: 2\n"
				"demand_gbps: 1\nroadms: [A]\nbogus: 1\n";
	const char *a[] = { "plan", path, NULL };
	struct tl_run r;
	char want[128];

	tl_tmpfile(path, y);
	r = tl_run(a);
	unlink(path);
	cr_assert_eq(tl_code(&r), 2);
	snprintf(want, sizeof(want), "%s:6:1: unknown key 'bogus'", path);
	cr_assert(strstr(r.err, want), "stderr: %s", r.err);
	cr_assert_eq(r.out[0], '\0');
	tl_run_free(&r);
}

/*
 * An experiment's numbers are bounded, with the range in the error, and
 * refused before anything is written (tasks: 2000000000 wrote a 1 GB
 * point file; rounds: 4294967297 ran one round); its name cannot leave
 * its directory; its base is found beside it.
 */
Test(cli, experiment_fields_are_checked)
{
	static const char *const bad[][2] = {
		{ "tasks: 2000000000", ":5:8: 'tasks' must be <= 10000, got "
				       "'2000000000'" },
		{ "rounds: 4294967297", ":7:9: 'rounds' must be <= 1000000, "
					"got '4294967297'" },
		{ "rounds: 2abc", ":7:9: 'rounds' must be a non-negative "
				  "integer, got '2abc'" },
		{ "name: ../../x", ":1:7: 'name' must be 1-64 characters of "
				   "[A-Za-z0-9_.-], not starting with '.' or "
				   "'-', got '../../x'" },
		/* relative to the experiment's directory, not the caller's */
		{ "base: scenarios/poster-testbed.yaml",
		  "/tmp/scenarios/poster-testbed.yaml: cannot open" },
		{ "work_core_s: nan", ":10:14: 'work_core_s' must be a finite "
				      "number, got 'nan'" },
		{ "locals: [3, 0x10]", ":4:13: 'locals': a whole number in "
				       "[1, 1000000], got '0x10'" },
		{ "? [a]\n: 1", ":10:3: keys of an experiment must be "
				"scalars" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char path[] = "/tmp/tl-cli-exp-XXXXXX", y[512], db[64];
		const char *a[] = { "experiment", path, "--db", db, NULL };
		struct tl_run r;

		snprintf(y, sizeof(y),
			 "%s\n%s\n"
			 "schedulers: [spff]\n%s\n%s\nseeds: [1]\n"
			 "%s\nparameters: 500000\nbytes_per_parameter: 4\n"
			 "%s\n",
			 i == 3 ? bad[i][0] : "name: x",
			 i == 4 ? bad[i][0] : "base: /nonexistent.yaml",
			 i == 6 ? bad[i][0] : "locals: [3]",
			 i == 0 ? bad[i][0] : "tasks: 3",
			 i == 1 || i == 2 ? bad[i][0] : "rounds: 1",
			 i == 5 || i == 7 ? bad[i][0] : "work_core_s: 0.001");
		tl_tmpfile(path, y);
		snprintf(db, sizeof(db), "%s.db", path);
		r = tl_run(a);
		unlink(path);
		cr_expect_eq(tl_code(&r), 2, "%s", bad[i][0]);
		cr_expect(strstr(r.err, bad[i][1]), "%s: stderr: %s",
			  bad[i][0], r.err);
		cr_expect(access(db, F_OK) != 0, "%s made %s", bad[i][0], db);
		tl_run_free(&r);
	}
}

/*
 * A dynamics experiment's events are checked against its base, and what
 * a live run could not follow under any of its schedulers and policies
 * is refused, before anything is built or written (no root needed).
 */
Test(cli, a_dynamics_experiment_refuses_what_it_cannot_follow)
{
	static const struct {
		const char *sched, *events, *want;
	} cases[] = {
		{ "spff", "events:\n  - {at_s: 1, cut: {a: A, b: Z}}\n",
		  ":2:30: 'b' names unknown node 'Z'" },
		{ "mst", "events:\n  - {at_s: -1, leave: t1}\n",
		  ":2:12: 'at_s' must be >= 0, got '-1'" },
	};
	char cwd[512];

	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char ev[] = "/tmp/tl-cli-dev-XXXXXX", path[64], db[64], y[1024];
		const char *a[] = { "experiment", path, "--db", db, NULL };
		struct tl_run r;

		tl_tmpfile(ev, cases[i].events);
		snprintf(path, sizeof(path), "%s.yaml", ev);
		snprintf(db, sizeof(db), "%s.db", ev);
		snprintf(y, sizeof(y), "name: d\nkind: dynamics\nbase: "
			 "%s/scenarios/teaching-ring.yaml\nevents: %s\n"
			 "schedulers: [%s]\npolicies: [none, full]\n", cwd,
			 strrchr(ev, '/') + 1, cases[i].sched);
		tl_write(path, y);
		r = tl_run(a);
		unlink(path);
		unlink(ev);
		cr_expect_eq(tl_code(&r), 2, "%s", cases[i].events);
		cr_expect(strstr(r.err, cases[i].want), "%s: stderr: %s",
			  cases[i].events, r.err);
		cr_expect(access(db, F_OK) != 0, "%s made", db);
		tl_run_free(&r);
	}
}

Test(cli, usage_errors)
{
	const char *a1[] = { "plan", "scenarios/teaching-ring.yaml",
			     "--scheduler", "nope", NULL };
	const char *a2[] = { "frobnicate", NULL };
	const char *a3[] = { "plan", "/nonexistent/x.yaml", NULL };

	tl_refused(a1, 2, "unknown scheduler 'nope'");
	tl_refused(a2, 2, "unknown command 'frobnicate'");
	tl_refused(a3, 2, "/nonexistent/x.yaml: cannot open");
}

static void renders(const char *dot, const char *svg)
{
	pid_t pid;
	int status;
	char *argv[] = { "dot", "-Tsvg", "-o", (char *)svg, (char *)dot, NULL };

	if (access("/usr/bin/dot", X_OK) != 0)
		return;
	cr_assert_eq(posix_spawn(&pid, "/usr/bin/dot", NULL, NULL, argv,
				 environ), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "dot rejected %s", dot);
	cr_assert_eq(access(svg, F_OK), 0);
	unlink(svg);
}

/* Without positions in the scenario, Graphviz lays the network out. */
Test(cli, dot_without_positions_is_laid_out)
{
	char dir[] = "/tmp/tl-cli-dotXXXXXX", dot[128], *text;
	const char *a[] = { "plan", "scenarios/poster-testbed.yaml", "--dot",
			    dot, NULL };
	struct tl_run r;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(dot, sizeof(dot), "%s/p.dot", dir);
	r = tl_run(a);
	cr_assert_eq(tl_code(&r), 0, "%s", r.err);
	tl_run_free(&r);
	text = tl_read(dot);
	cr_assert_not_null(text);
	cr_expect(strstr(text, "layout=neato"), "%s", text);
	cr_expect(!strstr(text, "pos="), "%s", text);
	free(text);
	unlink(dot);
	rmdir(dir);
}

/*
 * --json-file writes what --json prints, and the text on standard output
 * is the plan's as without it: one plan for both (make demo's). It
 * writes only a regular file, and leaves none where it cannot write.
 */
Test(cli, plan_json_file_is_what_json_prints)
{
	char dir[] = "/tmp/tl-cli-jfXXXXXX", file[128], bad[160], *text;
	const char *js[] = { "plan", "scenarios/poster-testbed.yaml",
			     "--scheduler", "mst", "--json", NULL };
	const char *txt[] = { "plan", "scenarios/poster-testbed.yaml",
			      "--scheduler", "mst", NULL };
	const char *both[] = { "plan", "scenarios/poster-testbed.yaml",
			       "--scheduler", "mst", "--json-file", file,
			       NULL };
	const char *dev[] = { "plan", "scenarios/poster-testbed.yaml",
			      "--json-file", "/dev/null", NULL };
	const char *gone[] = { "plan", "scenarios/poster-testbed.yaml",
			       "--json-file", bad, NULL };
	struct tl_run a, b, c;
	struct stat st;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/p.json", dir);
	snprintf(bad, sizeof(bad), "%s/no/p.json", dir);
	a = tl_run(js);
	b = tl_run(txt);
	c = tl_run(both);
	cr_assert_eq(tl_code(&a), 0, "%s", a.err);
	cr_assert_eq(tl_code(&b), 0, "%s", b.err);
	cr_assert_eq(tl_code(&c), 0, "%s", c.err);
	text = tl_read(file);
	cr_assert_str_eq(text, a.out);
	cr_assert_str_eq(c.out, b.out);
	cr_assert(strstr(c.out, "tasks"), "%s", c.out);
	free(text);
	tl_run_free(&a);
	tl_run_free(&b);
	tl_run_free(&c);
	tl_refused(dev, 1, "cannot create '/dev/null': not a regular file");
	tl_refused(gone, 1, "cannot create");
	cr_assert_neq(stat(bad, &st), 0, "a file left at %s", bad);
	unlink(file);
	cr_assert_eq(rmdir(dir), 0, "%s not empty", dir);
}

/*
 * The network drawn once (every fibre once, with its lit wavelengths), and
 * a task's two trees alone (--task), both drawn by Graphviz; an unknown
 * task is a usage error.
 */
Test(cli, dot_renders_with_graphviz)
{
	char dir[] = "/tmp/tl-cli-dotXXXXXX", dot[128], svg[128], *text;
	const char *a[] = { "plan", "scenarios/teaching-ring.yaml", "--dot",
			    dot, NULL, NULL, NULL };
	struct tl_run r;
	struct stat st;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(dot, sizeof(dot), "%s/ring.dot", dir);
	snprintf(svg, sizeof(svg), "%s/ring.svg", dir);
	r = tl_run(a);
	cr_assert_eq(tl_code(&r), 0, "%s", r.err);
	tl_run_free(&r);
	cr_assert_eq(stat(dot, &st), 0);
	text = tl_read(dot);
	cr_assert_eq((off_t)strlen(text), st.st_size);
	/* 4 fibres, each once; t1 and t2 light one wavelength on three */
	cr_expect(strstr(text, "\"A\" -- \"B\" [len=2.5, penwidth=2.5, "
			       "color=\"#6baed6\", label=\"40 km\\n1/4 λ\"]"),
		  "%s", text);
	cr_expect(strstr(text, "\"D\" -- \"C\"") || strstr(text, "\"C\" -- \"D\""),
		  "%s", text);
	cr_expect(strstr(text, "label=\"120 km\\n0/4 λ\""), "%s", text);
	cr_expect(!strstr(text, "->"), "trees drawn on the network: %s", text);
	/* the scenario's positions, 9 inches across; each router beside its
	 * ROADM away from the middle (A is top left: r1 up and left of it) */
	cr_expect(strstr(text, "\"A\" [shape=box, style=filled, fillcolor="
			       "\"#dddddd\", fontsize=14, pos=\"0.00,9.00!\"]"),
		  "%s", text);
	cr_expect(strstr(text, "pos=\"9.00,9.00!\""), "%s", text);
	cr_expect(strstr(text, "pos=\"9.00,0.00!\""), "%s", text);
	cr_expect(strstr(text, "pos=\"0.00,0.00!\""), "%s", text);
	cr_expect(strstr(text, "\"r1\" [shape=ellipse, fontsize=9, width=0.3, "
			       "height=0.2, margin=0.02, pos=\"-0.53,9.53!\"]"),
		  "%s", text);
	free(text);
	renders(dot, svg);
	a[4] = "--task";
	a[5] = "t2";
	r = tl_run(a);
	cr_assert_eq(tl_code(&r), 0, "%s", r.err);
	tl_run_free(&r);
	renders(dot, svg);
	a[5] = "nope";
	r = tl_run(a);
	cr_expect_eq(tl_code(&r), 2);
	cr_expect(strstr(r.err, "no task 'nope' in 'teaching-ring'"), "%s",
		  r.err);
	tl_run_free(&r);
	unlink(dot);
	rmdir(dir);
}

/* doctor --json: one object; its exit status says what "ready" says. */
Test(cli, doctor_json)
{
	const char *a[] = { "doctor", "--json", NULL };
	struct json_object *o, *v, *found, *u;
	struct tl_run r = tl_run(a);
	bool ready;

	o = json_tokener_parse(r.out);
	cr_assert_not_null(o, "not JSON: %s", r.out);
	cr_assert(json_object_object_get_ex(o, "kernel", &v));
	cr_expect(json_object_is_type(v, json_type_string));
	cr_assert(json_object_object_get_ex(o, "ready", &v));
	ready = json_object_get_boolean(v);
	cr_expect_eq(tl_code(&r), ready ? 0 : 1, "%s", r.err);
	cr_assert(json_object_object_get_ex(o, "root", &v));
	if (json_object_get_boolean(v)) {
		cr_assert(json_object_object_get_ex(o, "found", &found));
		cr_expect(json_object_object_get_ex(found, "nfqueue", &v));
		cr_expect(json_object_is_type(v, json_type_boolean));
		/* the loss impairment's path, probed like the rest */
		cr_expect(json_object_object_get_ex(found, "loss", &v));
		cr_expect(json_object_is_type(v, json_type_boolean));
		cr_assert(json_object_object_get_ex(o, "uses", &u));
		cr_expect(json_object_object_get_ex(u, "loss", &v));
	}
	json_object_put(o);
	tl_run_free(&r);
}

/*
 * Pipelined relays: planned by the fluid model, refused by the packet
 * model (by default only a plan that relays); run takes them, but not with --predictor packet, nor with a task
 * of int8 parameters (an aggregator cannot stream a mean whose one scale
 * it knows only at the end): refused at the setting, nothing made.
 */
Test(cli, pipelined_relays_are_planned_and_refused_where_they_cannot_run)
{
	char sc[] = "/tmp/tl-cli-pipe-XXXXXX", i8[] = "/tmp/tl-cli-pi8-XXXXXX";
	char db[64], want[200], *text;
	const char *plan[] = { "plan", sc, NULL };
	const char *pkt[] = { "plan", sc, "--predictor", "packet", NULL };
	const char *pkt_default[] = { "plan", "scenarios/poster-testbed.yaml",
				      "--predictor", "packet", NULL };
	const char *pkt_spff[] = { "plan", "scenarios/poster-testbed.yaml",
				   "--predictor", "packet", "--scheduler",
				   "spff", NULL };
	const char *run_pkt[] = { "run", sc, "--predictor", "packet", "--db",
				  db, "--prefix", "tqpipe", NULL };
	const char *run_i8[] = { "run", i8, "--db", db, "--prefix", "tqpipe",
				 NULL };
	struct tl_run r;
	char *ring = tl_read("scenarios/teaching-ring.yaml"), *at;

	cr_assert_gt(asprintf(&text, "relay: pipelined\n%s", ring), 0);
	free(ring);
	tl_tmpfile(sc, text);
	at = strstr(text, "bytes_per_parameter: 4");
	cr_assert_not_null(at);
	at[strlen("bytes_per_parameter: ")] = '1';
	tl_tmpfile(i8, text);
	free(text);
	r = tl_run(plan);
	cr_assert_eq(tl_code(&r), 0, "%s", r.err);
	cr_assert(strstr(r.out, "predicted mean round"), "%s", r.out);
	tl_run_free(&r);
	r = tl_run(pkt);
	cr_assert_neq(tl_code(&r), 0);
	cr_assert(strstr(r.err, "relays that store and forward whole models "
				"only"), "%s", r.err);
	tl_run_free(&r);
	/* pipelined by default: mst's trees relay, spff's stars do not */
	tl_refused(pkt_default, 1, "add 'relay: store' to the scenario "
		   "(pipelined is the default)");
	r = tl_run(pkt_spff);
	cr_assert_eq(tl_code(&r), 0, "%s", r.err);
	cr_assert(strstr(r.out, "(packet model)"), "%s", r.out);
	tl_run_free(&r);
	if (geteuid() == 0) {
		snprintf(db, sizeof(db), "%s.db", sc);
		snprintf(want, sizeof(want), "%s:1:8: 'teaching-ring' pipelines "
			 "its relays, which the packet model does not predict",
			 sc);
		tl_says(run_pkt, 2, want);
		snprintf(want, sizeof(want), "%s:1:8: 'teaching-ring' pipelines "
			 "its relays, but task 't1' (line ", i8);
		tl_says(run_i8, 2, want);
		cr_assert_neq(access(db, F_OK), 0, "run left %s behind", db);
	}
	unlink(sc);
	unlink(i8);
}

/*
 * experiment --twin-only: every point of a sweep predicted without root,
 * each scheduler's ratio to the baseline at the same seed; the baseline's
 * own ratios are 1, and a point's figures are what the twin gives a plan
 * of it. Wrong combinations are refused.
 */
Test(cli, experiment_twin_only)
{
	const char *ok[] = { "experiment",
			     "scenarios/experiments/poster-quick.yaml",
			     "--twin-only", "--json", NULL };
	const char *text[] = { "experiment",
			       "scenarios/experiments/poster-quick.yaml",
			       "--twin-only", NULL };
	const char *gap[] = { "experiment",
			      "scenarios/experiments/poster-gap.yaml",
			      "--twin-only", NULL };
	const char *gap_json[] = { "experiment",
				   "scenarios/experiments/poster-gap.yaml",
				   "--json", NULL };
	json_object *o, *pts;
	struct tl_run r;
	int n, base = 0;

	o = run_json(ok);
	cr_assert(json_object_object_get_ex(o, "points", &pts));
	n = (int)json_object_array_length(pts);
	cr_assert_eq(n, 3 * 2, "3 local-model counts x 2 schedulers");
	for (int i = 0; i < n; i++) {
		json_object *pt = json_object_array_get_idx(pts, i), *v;
		double round, b, c, u;

		cr_assert(json_object_object_get_ex(pt, "scheduler", &v));
		if (strcmp(json_object_get_string(v), "spff"))
			continue;
		base++;
		cr_assert(json_object_object_get_ex(pt, "round_vs_baseline",
						    &v));
		cr_expect_float_eq(json_object_get_double(v), 1.0, 1e-12);
		cr_assert(json_object_object_get_ex(pt, "round_s", &v));
		round = json_object_get_double(v);
		cr_assert(json_object_object_get_ex(pt, "broadcast_s", &v));
		b = json_object_get_double(v);
		cr_assert(json_object_object_get_ex(pt, "compute_s", &v));
		c = json_object_get_double(v);
		cr_assert(json_object_object_get_ex(pt, "upload_s", &v));
		u = json_object_get_double(v);
		/* one seed: the mean round is the mean of its phases' sum */
		cr_expect_float_eq(b + c + u, round, 1e-9);
		cr_expect_gt(round, 0);
	}
	cr_expect_eq(base, 3);
	json_object_put(o);
	r = tl_run(text);
	cr_assert_eq(tl_code(&r), 0, "%s", r.err);
	cr_assert(strstr(r.out, "15 local models (medians over 1 seeds)"),
		  "%s", r.out);
	tl_run_free(&r);
	tl_refused(gap, 2, "--twin-only is for sweeps (no 'kind')");
	tl_refused(gap_json, 2, "--json is for sweeps and 'kind: dynamics'");
}

/*
 * Events: `plan --events FILE` checks and lists them after the plan at
 * t = 0 (and in its JSON); a bad one is refused at file:line:col; `run`
 * refuses a scenario with events before it opens a database or builds
 * anything, since the emulation does not play them yet.
 */
Test(cli, events_are_listed_by_plan_and_refused_by_run)
{
	char ev[] = "/tmp/tl-cli-ev-XXXXXX", sc[] = "/tmp/tl-cli-sc-XXXXXX";
	char db[64], want[160];
	int cut_line = 0;
	static const char evy[] =
		"events:\n  - {at_s: 2, cut: {a: A, b: B}}\n"
		"  - {at_s: 1, traffic: {from: r1, to: s3, gbps: 5, "
		"for_s: 1}}\n";
	static const char bady[] = "events:\n  - {at_s: 2, leave: t9}\n";
	const char *plan[] = { "plan", "scenarios/teaching-ring.yaml",
			       "--events", ev, NULL };
	const char *json[] = { "plan", "scenarios/teaching-ring.yaml",
			       "--events", ev, "--json", NULL };
	const char *run[] = { "run", sc, "--db", db, "--prefix", "tqev",
			      NULL };
	struct tl_run r;

	tl_tmpfile(ev, evy);
	r = tl_run(plan);
	cr_assert_eq(tl_code(&r), 0, "%s", r.err);
	cr_assert(strstr(r.out, "network at t = 0"), "%s", r.out);
	cr_assert(strstr(r.out, "1.000000 s  traffic r1 -> s3, 5 Gbit/s for "
				"1 s"), "%s", r.out);
	cr_assert(strstr(r.out, "2.000000 s  cut     fibre A-B (40 km)"), "%s",
		  r.out);
	cr_assert(strstr(r.out, "timeline, re-scheduling 'none'"), "%s",
		  r.out);
	tl_run_free(&r);
	r = tl_run(json);
	cr_assert_eq(tl_code(&r), 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"kind\":\"cut\"") ||
		  strstr(r.out, "\"kind\": \"cut\""), "%s", r.out);
	cr_assert(strstr(r.out, "\"timeline\""), "%s", r.out);
	cr_assert(strstr(r.out, "\"reschedule\":\"none\"") ||
		  strstr(r.out, "\"reschedule\": \"none\""), "%s", r.out);
	tl_run_free(&r);
	/* --compare: every policy's outcome on the same events */
	{
		const char *cmp[] = { "plan", "scenarios/teaching-ring.yaml",
				      "--events", ev, "--compare", NULL };
		const char *cmpj[] = { "plan", "scenarios/teaching-ring.yaml",
				       "--events", ev, "--compare", "--json",
				       NULL };
		const char *none[] = { "plan", "scenarios/teaching-ring.yaml",
				       "--compare", NULL };

		r = tl_run(cmp);
		cr_assert_eq(tl_code(&r), 0, "%s", r.err);
		cr_assert(strstr(r.out, "policies on these events"), "%s",
			  r.out);
		for (int k = 0; k < 3; k++)
			cr_assert(strstr(r.out, k == 0 ? "\nnone " : k == 1 ?
					 "\nfull " : "\nauto "), "%s", r.out);
		tl_run_free(&r);
		r = tl_run(cmpj);
		cr_assert_eq(tl_code(&r), 0, "%s", r.err);
		cr_assert(strstr(r.out, "\"policies\""), "%s", r.out);
		cr_assert(strstr(r.out, "\"mean_completion_s\""), "%s",
			  r.out);
		tl_run_free(&r);
		tl_refused(none, 2, "--compare compares re-scheduling "
			   "policies on the scenario's events");
	}
	/* --rounds R: every task runs R (as run --rounds R does) */
	{
		const char *r7[] = { "plan", "scenarios/teaching-ring.yaml",
				     "--events", ev, "--compare", "--rounds",
				     "7", NULL };
		const char *r0[] = { "plan", "scenarios/teaching-ring.yaml",
				     "--rounds", "0", NULL };
		long got = -1;
		char *at;

		r = tl_run(r7);
		cr_assert_eq(tl_code(&r), 0, "%s", r.err);
		at = strstr(r.out, "\nnone ");
		cr_assert_not_null(at, "%s", r.out);
		cr_assert_eq(sscanf(at, " none %*d/%*d %ld", &got), 1);
		cr_assert_eq(got, 2 * 7, "two tasks of 7 rounds: %s", r.out);
		tl_run_free(&r);
		tl_refused(r0, 2, "bad --rounds '0': a whole number in "
			   "[1, 100000]");
	}

	tl_write(ev, bady);
	r = tl_run(plan);
	cr_assert_eq(tl_code(&r), 2);
	snprintf(want, sizeof(want), "%s:2:5: leave at 2 s: task 't9' is not "
		 "in the scenario by then", ev);
	cr_assert(strstr(r.err, want), "stderr: %s", r.err);
	cr_assert_eq(r.out[0], '\0');
	tl_run_free(&r);
	unlink(ev);

	/* the teaching ring with a cut appended: run refuses it */
	{
		char *ring = tl_read("scenarios/teaching-ring.yaml"), *y;

		/* the cut's line: the file's lines, 'events:', then it */
		for (const char *c = ring; *c; c++)
			cut_line += *c == '\n';
		cut_line += 2;
		cr_assert_gt(asprintf(&y, "%sevents:\n  - {at_s: 1, cut: "
				      "{a: A, b: B}}\n", ring), 0);
		tl_tmpfile(sc, y);
		free(y);
		free(ring);
	}
	snprintf(db, sizeof(db), "/tmp/tl-cli-ev-%d.db", (int)getpid());
	if (geteuid() != 0) {
		unlink(sc);
		cr_skip_test("run needs root");
	}
	snprintf(want, sizeof(want), "%s:%d:5: the cut of A-B at 1 s is "
		 "never repaired: with nothing re-placed the tasks over it", sc,
		 cut_line);
	tl_says(run, 2, want);
	cr_assert_neq(access(db, F_OK), 0, "a database was made");
	unlink(sc);

	/* the same from an events file: refused at its position in it */
	{
		char evf[] = "/tmp/tl-cli-rv-XXXXXX";
		const char *rev[] = { "run", "scenarios/teaching-ring.yaml",
				      "--events", evf, "--db", db, "--prefix",
				      "tqev", NULL };

		tl_tmpfile(evf, "events:\n  - {at_s: 1, traffic: {from: s1, "
			   "to: s4, gbps: 1, for_s: 1}}\n  - {at_s: 2, repair: "
			   "{a: A, b: B}}\n");
		snprintf(want, sizeof(want), "%s:3:5: repair at 2 s: the fibre "
			 "A-B is not cut then", evf);
		tl_says(rev, 2, want);
		/* a good story with a departure: the file's is refused */
		tl_write(evf, "events:\n  - {at_s: 1, traffic: {from: s1, "
			 "to: s4, gbps: 1, for_s: 1}}\n  - {at_s: 2, leave: "
			 "t1}\n");
		snprintf(want, sizeof(want), "%s:3:5: 'teaching-ring' has a leave "
			 "event: the emulation starts and ends tasks only when "
			 "it follows the timeline (run --reschedule "
			 "none|full|auto)", evf);
		tl_says(rev, 2, want);
		cr_assert_neq(access(db, F_OK), 0, "a database was made");
		unlink(evf);
	}
}

/* cut and repair: their usage, and a prefix that is not up. */
Test(cli, cut_and_repair_say_what_is_wrong)
{
	const char *one[] = { "cut", "A", NULL };
	const char *bad[] = { "repair", "A", "B", "--prefix", "Bad!", NULL };
	const char *none[] = { "cut", "A", "B", "--prefix", "tqnotup", NULL };

	tl_refused(one, 2, "usage: twinlab cut ROADM ROADM");
	tl_refused(bad, 2, "bad prefix 'Bad!'");
	tl_refused(none, 1, geteuid() ? "'cut' needs root" :
			    "prefix 'tqnotup' is not up");
}

/*
 * twinlab select: the three subsets, k of them chosen, their accuracy per
 * round and the network's figures in JSON; bad arguments exit 2 with what
 * is wrong.
 */
Test(cli, select_compares_all_chosen_and_random)
{
	const char *ok[] = { "select", "scenarios/teaching-ring.yaml", "--task",
			     "t1", "--k", "2", "--rounds", "3", "--json",
			     NULL };
	const char *big[] = { "select", "scenarios/teaching-ring.yaml",
			      "--task", "t1", "--k", "4", NULL };
	const char *none[] = { "select", "scenarios/teaching-ring.yaml",
			       "--task", "nope", "--k", "1", NULL };
	const char *lam[] = { "select", "scenarios/teaching-ring.yaml",
			      "--task", "t1", "--k", "1", "--lambda", "-1",
			      NULL };
	json_object *o, *subs;

	o = run_json(ok);
	cr_assert(json_object_object_get_ex(o, "subsets", &subs));
	cr_assert_eq(json_object_array_length(subs), 3);
	for (int i = 0; i < 3; i++) {
		json_object *x = json_object_array_get_idx(subs, i), *v;

		cr_assert(json_object_object_get_ex(x, "servers", &v));
		cr_assert_eq(json_object_array_length(v), i ? 2 : 3);
		cr_assert(json_object_object_get_ex(x, "accuracy", &v));
		cr_assert_eq(json_object_array_length(v), 3);
		cr_assert(json_object_object_get_ex(x, "round_s", &v));
		cr_assert_gt(json_object_get_double(v), 0);
		cr_assert(json_object_object_get_ex(x, "label_tv", &v));
		cr_assert(i || json_object_get_double(v) < 1e-9);
	}
	json_object_put(o);
	tl_refused(big, 2, "--k 4: task 't1' has 3 local models");
	tl_refused(none, 2, "no task 'nope'");
	tl_refused(lam, 2, "bad --lambda '-1': a number in [0, 1000000]");
}

/* A latency budget instead of k: the chosen subset's round within it. */
Test(cli, select_within_a_round_budget)
{
	const char *ok[] = { "select", "scenarios/nsfnet.yaml", "--task", "t05",
			     "--max-round-ms", "25", "--rounds", "1", "--json",
			     NULL };
	const char *none[] = { "select", "scenarios/nsfnet.yaml", "--task",
			       "t05", "--max-round-ms", "1", NULL };
	json_object *o, *subs, *x, *v;

	o = run_json(ok);
	cr_assert(json_object_object_get_ex(o, "subsets", &subs));
	x = json_object_array_get_idx(subs, 1);
	cr_assert(json_object_object_get_ex(x, "round_s", &v));
	cr_assert_leq(json_object_get_double(v), 0.025);
	cr_assert(json_object_object_get_ex(x, "servers", &v));
	cr_assert_geq(json_object_array_length(v), 1);
	cr_assert_lt(json_object_array_length(v), 15);
	json_object_put(o);
	tl_refused(none, 2, "not even one local model");
}

/*
 * run --reschedule: a bad policy is refused as a usage error; bad events
 * before anything is made (no database, no namespace). (Trees that change
 * are followed: run/trees_that_change_are_followed_live; a cut never
 * repaired that leaves a task no way round fails that task,
 * run/a_task_cut_off_fails_and_the_others_go_on.)
 */
Test(cli, run_reschedule_refuses_bad_input)
{
	static const struct {
		const char *sched, *policy, *events, *want;
	} cases[] = {
		{ "mst", "full", "events:\n  - {at_s: 1, cut: {a: A, b: Z}}\n",
		  ":2:30: 'b' names unknown node 'Z'" },
		{ "spff", "auto", "events:\n  - {at_s: 1, leave: t9}\n",
		  ":2:5: leave at 1 s: task 't9' is not in the scenario by then" },
	};
	const char *bad[] = { "run", "scenarios/teaching-ring.yaml",
			      "--reschedule", "sometimes", NULL };
	char db[64];

	tl_refused(bad, 2, "unknown re-scheduling policy 'sometimes': "
		   "none, full or auto");
	if (geteuid() != 0)
		cr_skip_test("run needs root");
	snprintf(db, sizeof(db), "/tmp/tl-cli-rs-%d.db", (int)getpid());
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char evf[] = "/tmp/tl-cli-rs-XXXXXX";
		const char *args[] = { "run", "scenarios/teaching-ring.yaml",
				       "--events", evf, "--scheduler",
				       cases[i].sched, "--reschedule",
				       cases[i].policy, "--db", db, "--prefix",
				       "tqrs", NULL };

		tl_tmpfile(evf, cases[i].events);
		tl_says(args, 2, cases[i].want);
		unlink(evf);
		cr_assert_neq(access(db, F_OK), 0, "a database was made");
		cr_assert_neq(access("/run/netns/tqrs-A", F_OK), 0);
	}
}

/*
 * A FIFO named as any YAML input (a scenario, an events file, select's
 * scenario, an experiment's base) is refused at once as not a regular
 * file: opening one for reading used to wait for a writer for ever.
 */
Test(cli, a_fifo_is_refused_by_every_loader, .timeout = 30)
{
	char dir[] = "/tmp/tl-cli-fifoXXXXXX", fifo[64], exp[64], want[96];
	const char *plan[] = { "plan", fifo, NULL };
	const char *events[] = { "plan", "scenarios/teaching-ring.yaml",
				 "--events", fifo, NULL };
	const char *sel[] = { "select", fifo, "--task", "t1", "--k", "1",
			      NULL };
	const char *ex[] = { "experiment", exp, "--twin-only", NULL };
	const char *const *cmds[] = { plan, events, sel, ex };

	cr_assert_not_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo.yaml", dir);
	snprintf(exp, sizeof(exp), "%s/exp.yaml", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0, "%s", strerror(errno));
	tl_write(exp, "name: x\nbase: fifo.yaml\nschedulers: [spff, mst]\n"
		 "locals: [2]\ntasks: 2\nseeds: [1]\nrounds: 1\n"
		 "parameters: 1000\nbytes_per_parameter: 4\n"
		 "work_core_s: 0.001\n");
	snprintf(want, sizeof(want), "%s: not a regular file", fifo);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct tl_run r = tl_run(cmds[i]);

		cr_expect_eq(tl_code(&r), 2, "%s: %s", cmds[i][0], r.err);
		cr_expect(strstr(r.err, want), "%s %s: %s", cmds[i][0],
			  cmds[i][1], r.err);
		tl_run_free(&r);
	}
	unlink(exp);
	unlink(fifo);
	rmdir(dir);
}

/*
 * --db names where results are written: a device (whose journal SQLite
 * would make beside it), or another program's database, is refused before
 * anything is written to it; a new path or twinlab's own is taken.
 */
Test(cli, a_database_that_is_not_ours_is_refused)
{
	char dir[] = "/tmp/tl-cli-dbXXXXXX", other[64], want[160];
	const char *gap_other[] = { "experiment",
				    "scenarios/experiments/poster-gap.yaml",
				    "--db", other, NULL };
	const char *gap_null[] = { "experiment",
				   "scenarios/experiments/poster-gap.yaml",
				   "--db", "/dev/null", NULL };
	const char *run_other[] = { "run", "scenarios/teaching-ring.yaml",
				    "--db", other, "--prefix", "tqdb", NULL };
	struct tl_run r;
	sqlite3 *h;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(other, sizeof(other), "%s/other.db", dir);
	cr_assert_eq(sqlite3_open(other, &h), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(h, "CREATE TABLE theirs (x);", NULL, NULL,
				  NULL), SQLITE_OK);
	sqlite3_close(h);
	snprintf(want, sizeof(want), "'%s' is not a twinlab results database "
		 "(no table 'runs')", other);
	r = tl_run(gap_other);
	cr_expect_neq(tl_code(&r), 0);
	cr_expect(strstr(r.err, want), "%s", r.err);
	tl_run_free(&r);
	if (geteuid() == 0) {
		r = tl_run(run_other);
		cr_expect_neq(tl_code(&r), 0);
		cr_expect(strstr(r.err, want) || strstr(r.out, want),
			  "%s%s", r.out, r.err);
		tl_run_free(&r);
	}
	cr_assert_eq(sqlite3_open(other, &h), SQLITE_OK);
	{
		sqlite3_stmt *st;
		int n = -1;

		cr_assert_eq(sqlite3_prepare_v2(h, "SELECT count(*) FROM "
						"sqlite_master", -1, &st,
						NULL), SQLITE_OK);
		cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
		n = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
		cr_expect_eq(n, 1, "%d tables: twinlab's were added", n);
	}
	sqlite3_close(h);
	r = tl_run(gap_null);
	cr_expect_neq(tl_code(&r), 0);
	cr_expect(strstr(r.err, "cannot open results database '/dev/null': "
			 "not a regular file"), "%s", r.err);
	tl_run_free(&r);
	cr_expect_neq(access("/dev/null-journal", F_OK), 0,
		      "/dev/null-journal made");
	unlink(other);
	rmdir(dir);
}

/* Remove a directory tree (links removed, never followed). */
static int rm_one(const char *path, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path) ? -1 : 0;
}

static void rm_tree(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * What twinlab writes goes to regular files or new paths only: a link
 * planted at plan --dot's path, at one of select --write's files or at
 * report.md in report --out is refused and what it names is untouched; a
 * FIFO there is refused at once.
 */
Test(cli, outputs_never_follow_a_link_or_open_a_fifo, .timeout = 60)
{
	char dir[] = "/tmp/tl-cli-outXXXXXX", target[64], dot[64], fifo[64];
	char prefix[64], sel[80], rep[64], md[80], db[80], *text;
	const char *plan[] = { "plan", "scenarios/teaching-ring.yaml",
			       "--dot", dot, NULL };
	const char *plan_fifo[] = { "plan", "scenarios/teaching-ring.yaml",
				    "--dot", fifo, NULL };
	const char *select[] = { "select", "scenarios/teaching-ring.yaml",
				 "--task", "t1", "--k", "1", "--write", prefix,
				 NULL };
	const char *gap[] = { "experiment",
			      "scenarios/experiments/poster-gap.yaml",
			      "--db", db, NULL };
	const char *report[] = { "report", db, "--out", rep, NULL };
	const char *const *cmds[] = { plan, plan_fifo, select, report };
	static const char *const want[] = {
		"a symbolic link (name a regular file or a new path)",
		"not a regular file (name a regular file or a new path)",
		"a symbolic link (name a regular file or a new path)",
		"a symbolic link (name a regular file or a new path)",
	};
	struct tl_run r;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(target, sizeof(target), "%s/target", dir);
	snprintf(dot, sizeof(dot), "%s/plan.dot", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo.dot", dir);
	snprintf(prefix, sizeof(prefix), "%s/sub", dir);
	snprintf(sel, sizeof(sel), "%s-selected.yaml", prefix);
	snprintf(rep, sizeof(rep), "%s/rep", dir);
	snprintf(md, sizeof(md), "%s/report.md", rep);
	snprintf(db, sizeof(db), "%s/gap.db", dir);
	tl_write(target, "theirs\n");
	cr_assert_eq(symlink(target, dot), 0);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(symlink(target, sel), 0);
	cr_assert_eq(mkdir(rep, 0755), 0);
	cr_assert_eq(symlink(target, md), 0);
	r = tl_run(gap);
	cr_assert_eq(tl_code(&r), 0, "%s", r.err);
	tl_run_free(&r);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		r = tl_run(cmds[i]);
		cr_expect_neq(tl_code(&r), 0, "%s", cmds[i][0]);
		cr_expect(strstr(r.err, want[i]), "%s: %s", cmds[i][0],
			  r.err);
		tl_run_free(&r);
	}
	text = tl_read(target);
	cr_expect_str_eq(text, "theirs\n", "the link's target was written");
	free(text);
	/* what the test made; the links themselves, not what they name */
	{
		static const char *const made[] = {
			"plan.dot", "fifo.dot", "sub-selected.yaml",
			"sub-all.yaml", "sub-random.yaml", "gap.db",
			"gap.db.log", "target",
		};
		char path[128];

		for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, made[i]);
			unlink(path);
		}
		snprintf(path, sizeof(path), "%s/gap.db.scenarios", dir);
		rmdir(path);
	}
	rm_tree(rep);
	cr_expect_eq(rmdir(dir), 0, "%s left: %s", dir, strerror(errno));
}

/*
 * A command's options are declared by its help (tools/cli.h): each line
 * "  [-x, ]--name[ ARG]  ..." of what 'twinlab CMD --help' prints. Read
 * them the way a user reads them, then check each one the parser takes
 * (with a value where the line shows one), each is named in the synopsis,
 * 'twinlab help CMD' prints the same help, and the command list names
 * every command.
 */
static int declared(const char *help, char names[][32], bool *arg, int max)
{
	int n = 0;

	for (const char *l = help; l && *l && n < max;
	     l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *q = l + 2;

		if (strncmp(l, "  -", 3))
			continue;
		if (q[1] != '-')
			q += 4;		/* "-x, " */
		if (sscanf(q, "--%31[a-z0-9-]", names[n]) != 1)
			continue;
		q += 2 + strlen(names[n]);
		arg[n++] = q[0] == ' ' && q[1] >= 'A' && q[1] <= 'Z';
	}
	return n;
}

Test(cli, help_declares_every_option_each_command_takes)
{
	static const char *const cmds[] = {
		"plan", "up", "down", "clean", "run", "experiment", "report",
		"exec", "addr", "status", "view", "cut", "repair", "select",
		"doctor",
	};
	const char *list[] = { "help", NULL };
	struct tl_run all = tl_run(list);

	cr_assert_eq(tl_code(&all), 0);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const char *a[] = { cmds[i], "--help", NULL };
		const char *h[] = { "help", cmds[i], NULL };
		char names[32][32], want[48], usage[64], *blank;
		bool arg[32];
		struct tl_run r = tl_run(a), r2 = tl_run(h);
		int n;

		cr_assert_eq(tl_code(&r), 0, "%s --help", cmds[i]);
		snprintf(usage, sizeof(usage), "usage: twinlab %s", cmds[i]);
		cr_assert(!strncmp(r.out, usage, strlen(usage)), "%s", r.out);
		n = declared(r.out, names, arg, 32);
		cr_assert_gt(n, 0, "'%s --help' declares no option", cmds[i]);
		blank = strstr(r.out, "\n\n");
		cr_assert_not_null(blank);
		for (int k = 0; k < n; k++) {
			/* accepted, with its value: the help comes after */
			const char *o[] = { cmds[i], want, "1", "--help",
					    NULL };
			struct tl_run r3;

			snprintf(want, sizeof(want), "--%.31s", names[k]);
			if (!arg[k])
				o[2] = "--help", o[3] = NULL;
			r3 = tl_run(o);
			cr_expect_eq(tl_code(&r3), 0, "'%s %s' refused: %s",
				     cmds[i], want, r3.err);
			cr_expect_str_eq(r3.out, r.out);
			tl_run_free(&r3);
			*blank = '\0';
			cr_expect(strstr(r.out, want), "the synopsis of %s "
				  "does not name %s", cmds[i], want);
			*blank = '\n';
		}
		cr_assert_eq(tl_code(&r2), 0);
		cr_assert_str_eq(r2.out, r.out, "help %s", cmds[i]);
		snprintf(want, sizeof(want), "\n  %s ", cmds[i]);
		cr_assert(strstr(all.out, want), "'twinlab help' lacks %s",
			  cmds[i]);
		tl_run_free(&r);
		tl_run_free(&r2);
	}
	tl_run_free(&all);
}

/* An option the help does not declare is refused, with the help. */
Test(cli, an_undeclared_option_is_refused)
{
	const char *a[] = { "plan", "scenarios/poster-testbed.yaml",
			    "--prefix", "x", NULL };
	const char *b[] = { "status", "--interval", "0.01", NULL };
	struct tl_run r = tl_run(a);

	cr_assert_eq(tl_code(&r), 2);
	cr_expect(strstr(r.err, "unrecognized option '--prefix'"), "%s",
		  r.err);
	cr_expect(strstr(r.err, "usage: twinlab plan"), "%s", r.err);
	cr_expect_str_empty(r.out);
	tl_run_free(&r);
	tl_refused(b, 2, "bad --interval '0.01': a number in [0.1, 3600]");
}

Test(cli, version_and_help_of_help)
{
	const char *v1[] = { "--version", NULL };
	const char *v2[] = { "version", NULL };
	const char *bad[] = { "help", "frobnicate", NULL };
	struct tl_run r = tl_run(v1), r2 = tl_run(v2);

	cr_assert_eq(tl_code(&r), 0);
	cr_assert(!strncmp(r.out, "twinlab ", 8) && strlen(r.out) > 9 &&
		  r.out[strlen(r.out) - 1] == '\n', "'%s'", r.out);
	cr_assert_eq(tl_code(&r2), 0);
	cr_assert_str_eq(r.out, r2.out);
	tl_run_free(&r);
	tl_run_free(&r2);
	tl_refused(bad, 2, "no command 'frobnicate'");
}
