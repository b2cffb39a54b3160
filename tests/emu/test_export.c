// SPDX-License-Identifier: MIT
/*
 * Exported topology files deployed as containerlab would deploy them
 * (tests/lib/clabdep.h: namespaces for containers, a VXLAN stitch for a
 * fibre cut between hosts), every node started by its own `twinlab up
 * --node`: each namespace ends up configured exactly as a whole `twinlab
 * up` configures it (addresses, routes, links, shapers, cross-connects,
 * delay-line rules, settings), and every transfer's ping goes through,
 * over the tunnel too, no faster than its fibre. Root only; each test has
 * its own prefixes and removes what it built in .fini, even on failure.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/lab.h"
#include "tests/lib/clabdep.h"
#include "tests/lib/nettest.h"
#include "tests/lib/tlrun.h"
#include "twin/net.h"

#define RING "scenarios/teaching-ring.yaml"

static char stem[16], parts[16], whole[16], dir[64];
static struct clabdep_host hosts[2];
static int nhosts;

static void setup(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root");
	snprintf(stem, sizeof(stem), "c%d", (int)getpid());
	snprintf(parts, sizeof(parts), "x%dn", (int)getpid());
	snprintf(whole, sizeof(whole), "w%d", (int)getpid());
	snprintf(dir, sizeof(dir), "/tmp/tl-clab%d", (int)getpid());
}

static void teardown(void)
{
	if (!stem[0])
		return;
	clabdep_down(hosts, nhosts, stem);
	lab_down(whole, NULL, NULL);
	tl_rm_tree(dir);
}

/* Export the ring over n hosts, deploy it, and build it whole beside. */
static void deploy(int n)
{
	char hs[8], path[128];
	char *exp[] = { getenv("TWINLAB"), "export", RING, "--containerlab",
			dir, "--hosts", hs, "--prefix", parts, NULL };
	char *up[] = { getenv("TWINLAB"), "up", RING, "--prefix", whole, NULL };
	char out[4096];

	cr_assert_not_null(exp[0], "TWINLAB is not set");
	snprintf(hs, sizeof(hs), "%d", n);
	cr_assert_eq(run_argv_output(exp, out, sizeof(out)), 0, "%s", out);
	nhosts = n;
	for (int k = 0; k < n; k++) {
		snprintf(path, sizeof(path), "%s/teaching-ring-h%d.clab.yml",
			 dir, k + 1);
		clabdep_load(path, &hosts[k]);
	}
	clabdep_up(hosts, n, stem, RING);
	cr_assert_eq(run_argv_output(up, out, sizeof(out)), 0, "%s", out);
}

static void append(char *buf, size_t len, char *const argv[])
{
	size_t at = strlen(buf);
	int r = run_argv_output(argv, buf + at, len - at);

	cr_assert_eq(r, 0, "%s %s %s %s %s: %d", argv[0], argv[1], argv[2],
		     argv[3], argv[4] ? argv[4] : "", r);
	cr_assert_lt(strlen(buf), len - 1, "a dump outgrew its buffer");
}

/* Remove every occurrence of a word that starts with `word` and its value. */
static void drop(char *s, const char *word)
{
	size_t wl = strlen(word);

	for (char *p = strstr(s, word); p; p = strstr(p, word)) {
		char *q = p + wl;

		q += strspn(q, " ");
		q += strcspn(q, " \n");
		memmove(p, q, strlen(q) + 1);
	}
}

/* Each line's leading "<ifindex>: " (ip -o) removed. */
static void drop_indices(char *s)
{
	for (char *line = s; *line;) {
		char *nl = strchr(line, '\n');
		size_t d = strspn(line, "0123456789");

		if (d && line[d] == ':' && line[d + 1] == ' ')
			memmove(line, line + d + 2, strlen(line + d + 2) + 1);
		if (!nl)
			break;
		line = strchr(line, '\n') + 1;
	}
}

/* What a namespace is configured with, as iproute2 and iptables say it. */
static void dump(const char *ns, char *buf, size_t len)
{
	char links[4096], *save = NULL;

	buf[0] = '\0';
	{
		char *a[] = { "ip", "-n", (char *)ns, "-o", "addr", "show",
			      NULL };
		append(buf, len, a);
	}
	{
		char *a[] = { "ip", "-n", (char *)ns, "route", "show", NULL };
		append(buf, len, a);
	}
	{
		char *a[] = { "ip", "netns", "exec", (char *)ns, "iptables-save",
			      NULL };
		append(buf, len, a);
	}
	{
		char *a[] = { "ip", "netns", "exec", (char *)ns, "cat",
			      "/proc/sys/net/ipv4/ip_forward",
			      "/proc/sys/net/ipv4/tcp_congestion_control",
			      "/proc/sys/net/ipv4/tcp_early_retrans",
			      "/proc/sys/net/ipv4/tcp_slow_start_after_idle",
			      NULL };
		append(buf, len, a);
	}
	{
		char *a[] = { "ip", "-n", (char *)ns, "-br", "link", "show",
			      NULL };

		links[0] = '\0';
		append(links, sizeof(links), a);
	}
	for (char *l = strtok_r(links, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		char dev[32];

		sscanf(l, "%31[^@ ]", dev);
		{
			char *a[] = { "ip", "-d", "-n", (char *)ns, "-o",
				      "link", "show", "dev", dev, NULL };
			char line[2048] = "", *m, *g;

			append(line, sizeof(line), a);
			m = strstr(line, " mtu ");
			/* segmentation offload: a GSO packet passes a shaper
			 * whole, so the deployment's must be off as up's */
			g = strstr(line, " gso_max_segs ");
			snprintf(buf + strlen(buf), len - strlen(buf),
				 "%s%.12s %s%.*s\n", dev, m ? m : "",
				 strstr(line, "state UP") ? "UP" : "DOWN",
				 g ? (int)(strlen(" gso_max_segs ") +
					   strcspn(g + strlen(" gso_max_segs "),
						   " ")) : 0,
				 g ? g : "");
		}
		{
			char *a[] = { "tc", "-n", (char *)ns, "qdisc", "show",
				      "dev", dev, NULL };
			append(buf, len, a);
		}
		{
			char *a[] = { "tc", "-n", (char *)ns, "class", "show",
				      "dev", dev, NULL };
			append(buf, len, a);
		}
		{
			char *a[] = { "tc", "-n", (char *)ns, "filter", "show",
				      "dev", dev, "ingress", NULL };
			append(buf, len, a);
		}
	}
	drop(buf, "refcnt");
	drop(buf, "valid_lft");
	drop(buf, "preferred_lft");
	drop_indices(buf);
	/* iptables-save's comments and counters */
	for (char *p = strchr(buf, '#'); p; p = strchr(p, '#')) {
		char *e = strchr(p, '\n');

		memmove(p, e ? e + 1 : p + strlen(p),
			strlen(e ? e + 1 : p + strlen(p)) + 1);
	}
	drop(buf, "[0:0]");
}

/* Every namespace as the whole build makes it. */
static void same_as_whole(void)
{
	static char got[256 * 1024], want[256 * 1024];
	int compared = 0;

	for (int k = 0; k < nhosts; k++)
		for (int i = 0; i < hosts[k].nnodes; i++) {
			char ns[96];

			snprintf(ns, sizeof(ns), "%s-%s", whole,
				 hosts[k].node[i].name);
			dump(hosts[k].node[i].ns, got, sizeof(got));
			dump(ns, want, sizeof(want));
			cr_assert_str_eq(got, want, "node %s differs",
					 hosts[k].node[i].name);
			compared++;
		}
	cr_assert_eq(compared, 14, "the ring has 14 nodes");
}

/* The host node `name` is deployed on. */
static int host_of(const char *name)
{
	for (int k = 0; k < nhosts; k++)
		if (clabdep_ns(&hosts[k], 1, name))
			return k;
	cr_assert_fail("no node %s", name);
	return -1;
}

/*
 * Each broadcast transfer's ping: answered, no faster than its way's
 * fibre. Returns how many went from one host to another.
 */
static int pings(void)
{
	char path[128], out[4096];
	struct json_object *plan, *tasks;
	int n = 0, across = 0;

	snprintf(path, sizeof(path), "%s/plan.json", dir);
	plan = json_object_from_file(path);
	cr_assert_not_null(plan);
	cr_assert(json_object_object_get_ex(plan, "tasks", &tasks));
	for (size_t t = 0; t < json_object_array_length(tasks); t++) {
		struct json_object *task = json_object_array_get_idx(tasks, t);
		struct json_object *tr;

		cr_assert(json_object_object_get_ex(task, "broadcast", &tr));
		for (size_t i = 0; i < json_object_array_length(tr); i++) {
			struct json_object *x = json_object_array_get_idx(tr, i);
			struct json_object *from, *to, *src, *dst, *km;
			const char *ns;
			double min;
			char *a[] = { "ip", "netns", "exec", NULL, "ping", "-c",
				      "3", "-i", "0.01", "-q", "-I", NULL, NULL,
				      NULL };

			cr_assert(json_object_object_get_ex(x, "from", &from));
			cr_assert(json_object_object_get_ex(x, "to", &to));
			cr_assert(json_object_object_get_ex(x, "src", &src));
			cr_assert(json_object_object_get_ex(x, "dst", &dst));
			cr_assert(json_object_object_get_ex(x, "km", &km));
			ns = clabdep_ns(hosts, nhosts,
					json_object_get_string(from));
			cr_assert_not_null(ns);
			a[3] = (char *)ns;
			a[11] = (char *)json_object_get_string(src);
			a[12] = (char *)json_object_get_string(dst);
			cr_assert_eq(run_argv_output(a, out, sizeof(out)), 0,
				     "ping %s -> %s: %s", a[11], a[12], out);
			cr_assert(sscanf(strstr(out, "rtt ") ?
						 strstr(out, "rtt ") : "",
					 "rtt min/avg/max/mdev = %lf", &min) ==
					  1,
				  "%s", out);
			cr_assert_geq(min / 1e3,
				      2 * json_object_get_double(km) *
					      FIBRE_S_PER_KM,
				      "%s -> %s over %.0f km: %.3f ms", a[11],
				      a[12], json_object_get_double(km), min);
			across += host_of(json_object_get_string(from)) !=
				  host_of(json_object_get_string(to));
			n++;
		}
	}
	json_object_put(plan);
	cr_assert_gt(n, 0, "no transfer");
	return across;
}

TestSuite(export, .init = setup, .fini = teardown, .timeout = 180);

Test(export, one_host_is_built_node_by_node_as_up_builds_it)
{
	char out[1024], pfx[24];
	char *cut[] = { getenv("TWINLAB"), "cut", "A", "B", "--prefix", pfx,
			NULL };
	char *addr[] = { getenv("TWINLAB"), "addr", "s1", "--prefix", pfx,
			 NULL };

	deploy(1);
	same_as_whole();
	cr_assert_eq(pings(), 0);
	/* a node's part is not an emulation a command can drive */
	snprintf(pfx, sizeof(pfx), "%s0", parts);
	cr_assert_neq(run_argv_output(cut, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "holds node A's part of an emulation only"),
		  "%s", out);
	cr_assert_neq(run_argv_output(addr, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "holds node A's part of an emulation only"),
		  "%s", out);
}

/* The ring on two hosts: fibre A-B is cut, its wavelength a tunnel. */
Test(export, two_hosts_join_over_vxlan_as_one_network)
{
	int tunnels = 0;

	deploy(2);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < hosts[k].nlinks; i++)
			tunnels += !strcmp(hosts[k].link[i].type,
					   "vxlan-stitch");
	cr_assert_gt(tunnels, 0, "no fibre is cut between the hosts");
	same_as_whole();
	cr_assert_gt(pings(), 0, "no transfer between the hosts");
}

/* What a node's part refuses, and leaves when it fails: nothing of its own. */
Test(export, a_node_part_refuses_what_it_cannot_build)
{
	char pfx[24], ns[64], state[128], out[4096];
	char *nonode[] = { getenv("TWINLAB"), "up", RING, "--node", "zz",
			   "--prefix", pfx, NULL };
	char *nons[] = { getenv("TWINLAB"), "up", RING, "--node", "r1",
			 "--prefix", pfx, NULL };
	char *mkns[] = { "ip", "netns", "add", ns, NULL };
	char *delns[] = { "ip", "netns", "del", ns, NULL };

	cr_assert_not_null(nonode[0]);
	snprintf(pfx, sizeof(pfx), "%s0", parts);
	snprintf(ns, sizeof(ns), "%s-r1", pfx);
	snprintf(state, sizeof(state), LAB_STATE_DIR "/%s", pfx);

	cr_assert_eq(run_argv_output(nonode, out, sizeof(out)), 1, "%s", out);
	cr_assert(strstr(out, "no node 'zz' in scenario 'teaching-ring'"),
		  "%s", out);
	/* no namespace made for it, and not asked to take its own */
	cr_assert_eq(run_argv_output(nons, out, sizeof(out)), 1, "%s", out);
	cr_assert(strstr(out, "no netns '"), "%s", out);
	cr_assert(strstr(out, "--here"), "%s", out);
	cr_assert_eq(access(state, F_OK), -1, "%s was left", state);
	/* a namespace without the interfaces: named, and left as it was */
	cr_assert_eq(run_argv_output(mkns, out, sizeof(out)), 0, "%s", out);
	cr_assert_eq(run_argv_output(nons, out, sizeof(out)), 1, "%s", out);
	cr_assert(strstr(out, "no interface '"), "%s", out);
	cr_assert(strstr(out, "the deployment did not make it"), "%s", out);
	cr_assert_eq(access(state, F_OK), -1, "%s was left", state);
	{
		char path[128];

		snprintf(path, sizeof(path), "/run/netns/%s", ns);
		cr_assert_eq(access(path, F_OK), 0, "its namespace was taken");
	}
	cr_assert_eq(run_argv_output(delns, out, sizeof(out)), 0, "%s", out);
}

/*
 * up --hosts: the split built here, a cut fibre's wavelength carried by
 * its tunnel (a ping across it), down removing all of it; a host count
 * the ring's 4 sites cannot take refused before anything is built.
 */
Test(export, up_split_over_hosts_and_down_leave_nothing)
{
	char out[4096], ns[96], path[160];
	char *up[] = { getenv("TWINLAB"), "up", RING, "--prefix", whole,
		       "--hosts", "2", "--json", NULL };
	static char upout[64 * 1024];
	char *bad[] = { getenv("TWINLAB"), "up", RING, "--prefix", whole,
			"--hosts", "5", NULL };
	char *down[] = { getenv("TWINLAB"), "down", "--prefix", whole, NULL };
	char *vx[] = { "ip", "-d", "-n", ns, "-o", "link", "show", "type",
		       "vxlan", NULL };

	cr_assert_not_null(up[0]);
	cr_assert_eq(run_argv_output(bad, out, sizeof(out)), 1, "%s", out);
	cr_assert(strstr(out, "cannot be split over"), "%s", out);
	snprintf(path, sizeof(path), LAB_STATE_DIR "/%s", whole);
	cr_assert_eq(access(path, F_OK), -1, "%s was left", path);
	cr_assert_eq(run_argv_output(up, upout, sizeof(upout)), 0, "%s", upout);
	snprintf(ns, sizeof(ns), "%s--h1", whole);
	cr_assert_eq(run_argv_output(vx, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "vxlan id "), "no tunnel on host 1: %s", out);
	/* s1 -> s3 crosses fibre A-B, which the split cuts (the golden files) */
	{
		char src[32] = "", dst[32] = "", sns[96];
		char *ping[] = { "ip", "netns", "exec", sns, "ping", "-c", "3",
				 "-i", "0.01", "-q", "-I", src, dst, NULL };
		struct json_object *j = json_tokener_parse(upout), *tr;

		cr_assert_not_null(j, "%s", upout);
		cr_assert(json_object_object_get_ex(j, "transfers", &tr));
		for (size_t i = 0; i < json_object_array_length(tr); i++) {
			struct json_object *x = json_object_array_get_idx(tr, i);
			struct json_object *f, *t, *a, *b;

			if (json_object_object_get_ex(x, "from", &f) &&
			    json_object_object_get_ex(x, "to", &t) &&
			    !strcmp(json_object_get_string(f), "s1") &&
			    !strcmp(json_object_get_string(t), "s3") &&
			    json_object_object_get_ex(x, "src", &a) &&
			    json_object_object_get_ex(x, "dst", &b)) {
				snprintf(src, sizeof(src), "%s",
					 json_object_get_string(a));
				snprintf(dst, sizeof(dst), "%s",
					 json_object_get_string(b));
			}
		}
		json_object_put(j);
		cr_assert(src[0], "no transfer s1 -> s3: %s", upout);
		snprintf(sns, sizeof(sns), "%s-s1", whole);
		cr_assert_eq(run_argv_output(ping, out, sizeof(out)), 0, "%s",
			     out);
	}
	cr_assert_eq(run_argv_output(down, out, sizeof(out)), 0, "%s", out);
	{
		DIR *d = opendir("/run/netns");
		struct dirent *e;
		size_t n = strlen(whole);

		while (d && (e = readdir(d)))
			cr_assert(strncmp(e->d_name, whole, n) ||
					  e->d_name[n] != '-',
				  "namespace %s left", e->d_name);
		if (d)
			closedir(d);
	}
	cr_assert_eq(access(path, F_OK), -1, "%s was left", path);
}
