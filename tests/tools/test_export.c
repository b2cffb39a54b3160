// SPDX-License-Identifier: MIT
/*
 * twinlab export: containerlab topology files that containerlab's own
 * schema takes (checked by tests/lib/clab_schema.py against the pinned
 * copy in ../shared/data/containerlab), the checks its schema cannot make
 * (tools/clab.h), files equal to the golden ones, and bad input refused
 * before anything is written.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/ring.h"
#include "tests/lib/tlrun.h"
#include "tools/clab.h"
#include "twin/experiment.h"
#include "twin/sched.h"

#define SCHEMA "../shared/data/containerlab/clab.schema.json"
#define CHECKER "tests/lib/clab_schema.py"

/* A fresh directory to export into (made, then removed: export makes it). */
static void fresh(char *tmpl)
{
	cr_assert_not_null(mkdtemp(tmpl));
	cr_assert_eq(rmdir(tmpl), 0);
}

/* The names in dir, sorted, joined by spaces. */
static void listing(const char *dir, char *buf, size_t len)
{
	struct dirent **e;
	int n = scandir(dir, &e, NULL, alphasort);
	size_t at = 0;

	cr_assert_geq(n, 0, "cannot read %s", dir);
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (e[i]->d_name[0] != '.')
			at += (size_t)snprintf(buf + at, len - at, "%s%s",
					       at ? " " : "", e[i]->d_name);
		free(e[i]);
	}
	free(e);
}

/* Nothing of a refused export in parent: no DIR, no half-written sibling. */
static void nothing_left(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *e;

	cr_assert_not_null(d);
	while ((e = readdir(d)))
		cr_assert(!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."),
			  "%s/%s was left", parent, e->d_name);
	closedir(d);
}

static void export_ok(const char *scenario, const char *dir,
		      const char *hosts, const char *sched)
{
	const char *a[] = { "export", scenario, "--containerlab", dir,
			    "--hosts", hosts, "--scheduler", sched, NULL };
	struct tl_run r = tl_run(a);

	cr_assert_eq(tl_code(&r), 0, "export %s --hosts %s: %s", scenario,
		     hosts, r.err);
	cr_assert(strstr(r.out, "exported '"), "%s", r.out);
	tl_run_free(&r);
}

/* containerlab's schema, and the stray keys it misses, on every file. */
static void schema_valid(const char *dir)
{
	struct dirent **e;
	const char *args[16] = { SCHEMA };
	char paths[12][512];
	int n = scandir(dir, &e, NULL, alphasort), k = 0;
	struct tl_run r;

	cr_assert_geq(n, 0);
	for (int i = 0; i < n; i++) {
		if (strstr(e[i]->d_name, ".clab.yml") && k < 12) {
			snprintf(paths[k], sizeof(paths[k]), "%s/%s", dir,
				 e[i]->d_name);
			args[1 + k] = paths[k];
			k++;
		}
		free(e[i]);
	}
	free(e);
	cr_assert_gt(k, 0, "no topology file in %s", dir);
	args[1 + k] = NULL;
	r = tl_run_bin(CHECKER, args);
	cr_assert_eq(tl_code(&r), 0, "%s: %s", dir, r.err);
	tl_run_free(&r);
}

static void need_schema(void)
{
	if (access(SCHEMA, R_OK))
		cr_skip_test("containerlab's schema is not at " SCHEMA);
}

Test(export, nsfnet_and_the_ring_are_valid_on_1_2_and_4_hosts,
     .timeout = 120)
{
	static const char *const scen[] = { "scenarios/nsfnet.yaml",
					    "scenarios/teaching-ring.yaml",
					    "scenarios/cost239.yaml" };
	static const char *const hosts[] = { "1", "2", "4" };

	need_schema();
	for (size_t s = 0; s < 3; s++)
		for (size_t h = 0; h < 3; h++) {
			char dir[] = "/tmp/tl-exportXXXXXX";

			fresh(dir);
			export_ok(scen[s], dir, hosts[h], h ? "mst" : "spff");
			schema_valid(dir);
			tl_rm_tree(dir);
		}
}

/* The 100-ROADM network the split is measured on, exported and valid. */
Test(export, a_hundred_roadms_are_valid_on_1_2_and_4_hosts, .timeout = 120)
{
	struct scenario *base, pt;
	char yaml[] = "/tmp/tl-export100XXXXXX", dir[] = "/tmp/tl-exportXXXXXX";
	FILE *f;
	int fd;

	need_schema();
	hundred_roadms(&base, &pt);
	fd = mkstemp(yaml);
	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	cr_assert_not_null(f);
	cr_assert_eq(scenario_write(&pt, f), 0);
	cr_assert_eq(fclose(f), 0);
	for (int h = 1; h <= 4; h *= 2) {
		char hs[4];

		snprintf(hs, sizeof(hs), "%d", h);
		strcpy(dir, "/tmp/tl-exportXXXXXX");
		fresh(dir);
		export_ok(yaml, dir, hs, "spff");
		schema_valid(dir);
		tl_rm_tree(dir);
	}
	unlink(yaml);
	experiment_point_release(&pt);
	scenario_free(base);
}

/* Byte for byte the files of tests/tools/golden/. */
Test(export, the_ring_on_two_hosts_is_the_golden_one)
{
	char dir[] = "/tmp/tl-exportXXXXXX", names[512], path[600];
	static const char *const files[] = { "teaching-ring-h1.clab.yml",
					     "teaching-ring-h2.clab.yml" };

	fresh(dir);
	export_ok("scenarios/teaching-ring.yaml", dir, "2", "mst");
	listing(dir, names, sizeof(names));
	cr_assert_str_eq(names, "Containerfile README.md plan.json "
				"scenario.yaml teaching-ring-h1.clab.yml "
				"teaching-ring-h2.clab.yml");
	for (size_t i = 0; i < 2; i++) {
		char *got, *want, gold[256];

		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		snprintf(gold, sizeof(gold), "tests/tools/golden/%s", files[i]);
		got = tl_read(path);
		want = tl_read(gold);
		cr_assert_str_eq(got, want, "%s differs from %s", path, gold);
		free(got);
		free(want);
	}
	/* the scenario the nodes start from is the one exported */
	{
		char *got, *want;

		snprintf(path, sizeof(path), "%s/scenario.yaml", dir);
		got = tl_read(path);
		want = tl_read("scenarios/teaching-ring.yaml");
		cr_assert_str_eq(got, want);
		free(got);
		free(want);
	}
	tl_rm_tree(dir);
}

Test(export, json_says_what_was_written)
{
	char dir[] = "/tmp/tl-exportXXXXXX";
	const char *a[] = { "export", "scenarios/nsfnet.yaml", "--containerlab",
			    dir, "--hosts", "2", "--json", NULL };
	struct json_object *o, *files, *split, *tunnels;
	struct tl_run r;

	fresh(dir);
	r = tl_run(a);
	cr_assert_eq(tl_code(&r), 0, "%s", r.err);
	o = json_tokener_parse(r.out);
	cr_assert_not_null(o, "%s", r.out);
	cr_assert(json_object_object_get_ex(o, "files", &files));
	cr_assert_eq(json_object_array_length(files), 6);
	cr_assert(json_object_object_get_ex(o, "split", &split));
	cr_assert(json_object_object_get_ex(split, "tunnels", &tunnels));
	cr_assert_gt(json_object_array_length(tunnels), 0);
	json_object_put(o);
	tl_run_free(&r);
	tl_rm_tree(dir);
}

static char parent[] = "/tmp/tl-exportXXXXXX";

static void refused(const char *const *args, const char *dir,
		    const char *want)
{
	tl_refused(args, 2, want);
	if (dir)
		nothing_left(parent);
}

Test(export, bad_input_is_refused_before_anything_is_written)
{
	char dir[64], full[] = "/tmp/tl-exportXXXXXX";
	char hf[] = "/tmp/tl-hostsXXXXXX", hf2[] = "/tmp/tl-hostsXXXXXX";
	char path[600];

	cr_assert_not_null(mkdtemp(parent));
	snprintf(dir, sizeof(dir), "%s/out", parent);
	{
		const char *a[] = { "export", "scenarios/teaching-ring.yaml",
				    NULL };
		refused(a, NULL, "--containerlab DIR");
	}
	{	/* 4 ROADMs: 4 hosts at most */
		const char *a[] = { "export", "scenarios/teaching-ring.yaml",
				    "--containerlab", dir, "--hosts", "5",
				    NULL };
		refused(a, dir, "cannot be split over");
	}
	{	/* 14 nodes: tl0 ... <prefix>13, at most 12 characters */
		const char *a[] = { "export", "scenarios/teaching-ring.yaml",
				    "--containerlab", dir, "--prefix",
				    "abcdefghijk", NULL };
		refused(a, dir, "abcdefghijk13");
	}
	tl_tmpfile(hf, "192.0.2.10\n# a comment\n\n10.0.0.300\n");
	{
		const char *a[] = { "export", "scenarios/teaching-ring.yaml",
				    "--containerlab", dir, "--hosts-file", hf,
				    NULL };
		char want[128];

		snprintf(want, sizeof(want), "%s:4: '10.0.0.300' is not an "
			 "IPv4 address", hf);
		refused(a, dir, want);
	}
	{	/* a node name containerlab refuses: the ring's r1 as _r1 */
		char *ring = tl_read("scenarios/teaching-ring.yaml"), *at;
		char bad[] = "/tmp/tl-badnameXXXXXX";
		const char *a[] = { "export", bad, "--containerlab", dir, NULL };
		size_t n = strlen(ring);
		char *text = malloc(2 * n + 1), *w = text;

		cr_assert_not_null(text);
		/* every "r1," and "r1}" becomes "_r1," or "_r1}" */
		for (const char *r = ring; *r;) {
			at = strstr(r, " r1");
			if (!at || (at[3] != ',' && at[3] != '}')) {
				size_t k = at ? (size_t)(at - r) + 3 : strlen(r);

				memcpy(w, r, k);
				w += k;
				r += k;
				continue;
			}
			memcpy(w, r, (size_t)(at - r) + 1);
			w += at - r + 1;
			*w++ = '_';
			r = at + 1;
		}
		*w = '\0';
		tl_tmpfile(bad, text);
		refused(a, dir, "containerlab refuses node name '_r1'");
		unlink(bad);
		free(text);
		free(ring);
	}
	tl_tmpfile(hf2, "192.0.2.10\n192.0.2.10\n");
	{
		const char *a[] = { "export", "scenarios/teaching-ring.yaml",
				    "--containerlab", dir, "--hosts-file", hf2,
				    NULL };
		refused(a, dir, "is host 1's address too");
	}
	{
		const char *a[] = { "export", "scenarios/teaching-ring.yaml",
				    "--containerlab", dir, "--hosts", "2",
				    "--hosts-file", hf2, NULL };
		refused(a, dir, "give one");
	}
	/* a directory that is not empty, and a file, are left as they are */
	cr_assert_not_null(mkdtemp(full));
	snprintf(path, sizeof(path), "%s/mine", full);
	tl_write(path, "keep me\n");
	{
		const char *a[] = { "export", "scenarios/teaching-ring.yaml",
				    "--containerlab", full, NULL };
		tl_refused(a, 2, "is not empty");
	}
	{
		const char *a[] = { "export", "scenarios/teaching-ring.yaml",
				    "--containerlab", path, NULL };
		tl_refused(a, 2, "exists and is not a directory");
	}
	{
		char *kept = tl_read(path), names[64];

		cr_assert_str_eq(kept, "keep me\n");
		free(kept);
		listing(full, names, sizeof(names));
		cr_assert_str_eq(names, "mine");
	}
	tl_rm_tree(full);
	unlink(hf);
	unlink(hf2);
	/* an empty directory is written into */
	cr_assert_eq(mkdir(dir, 0755), 0);
	export_ok("scenarios/teaching-ring.yaml", dir, "1", "mst");
	tl_rm_tree(parent);
}

/* ---- the checks the schema cannot make ------------------------------ */

struct built {
	struct scenario *sc;
	struct plan *p;
	struct partition pt;
	struct clab c;
};

static void build(struct built *b, int hosts)
{
	static const uint32_t underlay[] = { 0xc0000201, 0xc0000202,
					     0xc0000203, 0xc0000204 };
	struct scn_error err;
	char why[256];

	b->sc = scenario_load("scenarios/teaching-ring.yaml", &err);
	cr_assert_not_null(b->sc, "%s", err.msg);
	b->p = sched_plan(b->sc, &sched_mst);
	cr_assert_not_null(b->p);
	cr_assert_eq(partition_plan(b->p, hosts, false, &b->pt, why,
				    sizeof(why)), 0, "%s", why);
	cr_assert_eq(clab_build(b->p, &b->pt, underlay, &b->c), 0);
	cr_assert_eq(clab_check(&b->c, why, sizeof(why)), 0, "%s", why);
}

static void unbuild(struct built *b)
{
	clab_release(&b->c);
	partition_release(&b->pt);
	plan_free(b->p);
	scenario_free(b->sc);
}

static void faulty(struct built *b, const char *want)
{
	char why[256] = "";

	cr_assert_eq(clab_check(&b->c, why, sizeof(why)), -EINVAL,
		     "not refused: %s", want);
	cr_assert(strstr(why, want), "'%s' does not say '%s'", why, want);
}

/* The first link of kind vxlan (or not), and of a line (or not). */
static struct clab_link *first(struct clab *c, bool vxlan, bool line)
{
	for (int i = 0; i < c->nlinks; i++)
		if (c->link[i].vxlan == vxlan &&
		    (c->link[i].fibre >= 0) == line)
			return &c->link[i];
	cr_assert_fail("no such link");
	return NULL;
}

Test(clab, every_fault_the_schema_misses_is_found)
{
	struct built b;
	struct clab_link *l, save;
	char name[64];

	build(&b, 2);
	cr_assert_gt(b.pt.ntunnels, 0, "the ring's split cuts no fibre");

	/* an interface in two links */
	l = first(&b.c, false, false);
	save = *l;
	strcpy(l->end[0].ifname, b.c.link[1].end[0].ifname);
	l->end[0].node = b.c.link[1].end[0].node;
	faulty(&b, "is in two links");
	*l = save;

	/* a name longer than an interface's 15 bytes */
	memset(l->end[1].ifname, 'x', sizeof(l->end[1].ifname));
	faulty(&b, "an interface name of 16 bytes");
	*l = save;

	/* a link whose end is on another host */
	l->host = 1 - l->host;
	faulty(&b, "which is on host");
	*l = save;

	/* a tunnel with no mirror: its VNI changed at one end */
	l = first(&b.c, true, true);
	save = *l;
	l->vni += 1000;
	faulty(&b, "has no mirror at host");
	*l = save;

	/* a VNI out of VXLAN's range */
	l->vni = 1u << 24;
	faulty(&b, "(1 to 16777215)");
	*l = save;

	/* a lightpath broken: a wavelength's port renamed at one ROADM */
	l = first(&b.c, false, true);
	save = *l;
	strcpy(l->end[1].ifname, "f99w9");
	faulty(&b, "lightpath ");
	*l = save;

	/* a router's lightpath port not on its ROADM's add/drop port */
	for (int i = 0; i < b.c.nlinks; i++)
		if (!strncmp(b.c.link[i].end[0].ifname, "lp", 2)) {
			save = b.c.link[i];
			strcpy(b.c.link[i].end[1].ifname, "ad77");
			faulty(&b, "does not reach its ROADM's");
			b.c.link[i] = save;
			break;
		}

	/* a node name containerlab refuses */
	strcpy(name, b.sc->nodes[0].name);
	strcpy(b.sc->nodes[0].name, "_A");
	faulty(&b, "containerlab refuses node name '_A'");
	strcpy(b.sc->nodes[0].name, name);

	cr_assert_eq(clab_check(&b.c, name, sizeof(name)), 0, "%s", name);
	unbuild(&b);
}

/* Every ROADM on a host of its own: two tunnels of one host, one VNI. */
Test(clab, a_vni_twice_on_a_host_is_found)
{
	struct built b;
	bool done = false;

	build(&b, 4);
	for (int i = 0; i < b.c.nlinks && !done; i++)
		for (int j = i + 1; j < b.c.nlinks && !done; j++) {
			struct clab_link *x = &b.c.link[i], *y = &b.c.link[j];
			unsigned v = y->vni;

			if (!x->vxlan || !y->vxlan || x->host != y->host)
				continue;
			y->vni = x->vni;
			faulty(&b, "is used twice on host");
			y->vni = v;
			done = true;
		}
	cr_assert(done, "no host with two tunnels");
	unbuild(&b);
}

/* One host: no tunnel; every lit wavelength a veth of its own. */
Test(clab, one_host_has_no_tunnel)
{
	struct built b;
	int lines = 0;

	build(&b, 1);
	for (int i = 0; i < b.c.nlinks; i++) {
		cr_assert(!b.c.link[i].vxlan);
		lines += b.c.link[i].fibre >= 0;
	}
	cr_assert_gt(lines, 0);
	unbuild(&b);
}
