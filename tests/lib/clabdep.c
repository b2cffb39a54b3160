// SPDX-License-Identifier: MIT
/* Deploying exported topology files with namespaces; see clabdep.h. */
#include "tests/lib/clabdep.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "tests/lib/nettest.h"

static yaml_node_t *get(yaml_document_t *d, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(d, p->key);

		if (k && k->type == YAML_SCALAR_NODE &&
		    !strcmp((char *)k->data.scalar.value, key))
			return yaml_document_get_node(d, p->value);
	}
	return NULL;
}

static void str(yaml_node_t *n, char *buf, size_t len, const char *what)
{
	cr_assert(n && n->type == YAML_SCALAR_NODE, "%s is not a string", what);
	cr_assert_lt(n->data.scalar.length, len, "%s is too long", what);
	snprintf(buf, len, "%s", (char *)n->data.scalar.value);
}

static unsigned num(yaml_node_t *n, const char *what)
{
	char b[32];

	str(n, b, sizeof(b), what);
	return (unsigned)strtoul(b, NULL, 10);
}

static void end(yaml_document_t *d, yaml_node_t *e, struct clabdep_link *l,
		int i)
{
	str(get(d, e, "node"), l->node[i], sizeof(l->node[i]), "node");
	str(get(d, e, "interface"), l->ifname[i], sizeof(l->ifname[i]),
	    "interface");
}

static void load_link(yaml_document_t *d, yaml_node_t *m,
		      struct clabdep_link *l)
{
	yaml_node_t *eps;

	str(get(d, m, "type"), l->type, sizeof(l->type), "type");
	l->mtu = get(d, m, "mtu") ? num(get(d, m, "mtu"), "mtu") : 0;
	if (!strcmp(l->type, "veth")) {
		eps = get(d, m, "endpoints");
		cr_assert(eps && eps->type == YAML_SEQUENCE_NODE &&
			  eps->data.sequence.items.top -
				  eps->data.sequence.items.start == 2);
		for (int i = 0; i < 2; i++)
			end(d, yaml_document_get_node(
				       d, eps->data.sequence.items.start[i]),
			    l, i);
		return;
	}
	cr_assert_str_eq(l->type, "vxlan-stitch");
	end(d, get(d, m, "endpoint"), l, 0);
	str(get(d, m, "remote"), l->remote, sizeof(l->remote), "remote");
	l->vni = num(get(d, m, "vni"), "vni");
	l->port = num(get(d, m, "dst-port"), "dst-port");
}

void clabdep_load(const char *path, struct clabdep_host *h)
{
	FILE *f = fopen(path, "r");
	yaml_parser_t p;
	yaml_document_t d;
	yaml_node_t *topo, *nodes, *links;

	memset(h, 0, sizeof(*h));
	snprintf(h->file, sizeof(h->file), "%s", path);
	cr_assert_not_null(f, "cannot open %s", path);
	cr_assert(yaml_parser_initialize(&p));
	yaml_parser_set_input_file(&p, f);
	cr_assert(yaml_parser_load(&p, &d), "%s does not parse", path);
	topo = get(&d, yaml_document_get_root_node(&d), "topology");
	nodes = get(&d, topo, "nodes");
	links = get(&d, topo, "links");
	cr_assert(nodes && nodes->type == YAML_MAPPING_NODE);
	for (yaml_node_pair_t *q = nodes->data.mapping.pairs.start;
	     q < nodes->data.mapping.pairs.top; q++) {
		struct clabdep_node *n = &h->node[h->nnodes++];
		yaml_node_t *ex = get(&d, yaml_document_get_node(&d, q->value),
				      "exec");
		char *at;

		cr_assert_leq(h->nnodes, CLABDEP_NODES_MAX);
		str(yaml_document_get_node(&d, q->key), n->name, sizeof(n->name),
		    "a node's name");
		cr_assert(ex && ex->type == YAML_SEQUENCE_NODE, "node %s has "
			  "no exec", n->name);
		str(yaml_document_get_node(&d, ex->data.sequence.items.start[0]),
		    n->exec, sizeof(n->exec), "exec");
		at = strstr(n->exec, "--prefix ");
		cr_assert_not_null(at, "%s", n->exec);
		sscanf(at + 9, "%15s", n->prefix);
		{
			char ns[sizeof(n->ns)];
			int w = snprintf(ns, sizeof(ns), "%s-%s", n->prefix,
					 n->name);

			cr_assert_lt(w, (int)sizeof(ns));
			memcpy(n->ns, ns, sizeof(ns));
		}
	}
	for (yaml_node_item_t *i = links ? links->data.sequence.items.start :
					   NULL;
	     links && i < links->data.sequence.items.top; i++) {
		cr_assert_lt(h->nlinks, CLABDEP_LINKS_MAX);
		load_link(&d, yaml_document_get_node(&d, *i),
			  &h->link[h->nlinks++]);
	}
	yaml_document_delete(&d);
	yaml_parser_delete(&p);
	fclose(f);
}

const char *clabdep_ns(const struct clabdep_host *h, int n, const char *name)
{
	for (int k = 0; k < n; k++)
		for (int i = 0; i < h[k].nnodes; i++)
			if (!strcmp(h[k].node[i].name, name))
				return h[k].node[i].ns;
	return NULL;
}

/* Run argv (NULL-terminated), asserting it succeeds. */
#define RUN(...)                                                             \
	do {                                                                 \
		char *const a_[] = { __VA_ARGS__, NULL };                    \
		char out_[1024];                                             \
		int r_ = run_argv_output(a_, out_, sizeof(out_));            \
		cr_assert_eq(r_, 0, "%s %s %s %s: %d: %s", a_[0], a_[1],     \
			     a_[2], a_[3], r_, out_);                        \
	} while (0)

static void veth(const char *ns1, const char *if1, const char *ns2,
		 const char *if2, const char *mtu)
{
	RUN("ip", "-n", (char *)ns1, "link", "add", (char *)if1, "mtu",
	    (char *)mtu, "type", "veth", "peer", "name", (char *)if2, "netns",
	    (char *)ns2, "mtu", (char *)mtu);
	RUN("ip", "-n", (char *)ns1, "link", "set", (char *)if1, "up");
	RUN("ip", "-n", (char *)ns2, "link", "set", (char *)if2, "up");
}

/* Frames arriving on `from` leave by `to` (what containerlab's stitch does). */
static void redirect(const char *ns, const char *from, const char *to)
{
	RUN("tc", "-n", (char *)ns, "qdisc", "add", "dev", (char *)from,
	    "ingress");
	RUN("tc", "-n", (char *)ns, "filter", "add", "dev", (char *)from,
	    "parent", "ffff:", "protocol", "all", "u32", "match", "u32", "0",
	    "0", "action", "mirred", "egress", "redirect", "dev", (char *)to);
}

static void stitch(const char *host, int k, int i, const char *node_ns,
		   const struct clabdep_link *l)
{
	char vs[16], vx[16], vni[16], port[16], local[32], mtu[16];

	snprintf(vs, sizeof(vs), "vs%d", i);
	snprintf(vx, sizeof(vx), "vx%d", i);
	snprintf(vni, sizeof(vni), "%u", l->vni);
	snprintf(port, sizeof(port), "%u", l->port);
	snprintf(local, sizeof(local), "192.0.2.%d", k + 1);
	snprintf(mtu, sizeof(mtu), "%u", l->mtu ? l->mtu : 1500);
	veth(node_ns, l->ifname[0], host, vs, mtu);
	RUN("ip", "-n", (char *)host, "link", "add", vx, "mtu", mtu, "type",
	    "vxlan", "id", vni, "remote", (char *)l->remote, "local", local,
	    "dstport", port, "dev", "und");
	RUN("ip", "-n", (char *)host, "link", "set", vx, "up");
	redirect(host, vs, vx);
	redirect(host, vx, vs);
}

/* Split a node's exec on spaces: this tree's twinlab and scenario. */
static void start(const struct clabdep_node *n, const char *scenario)
{
	char buf[512], *argv[24], *save = NULL, out[2048];
	int k = 0, r;

	snprintf(buf, sizeof(buf), "%s", n->exec);
	/* its namespace is made: never this process's own (--here) */
	for (char *t = strtok_r(buf, " ", &save); t && k < 23;
	     t = strtok_r(NULL, " ", &save))
		if (strcmp(t, "--here"))
			argv[k++] = t;
	argv[k] = NULL;
	cr_assert_gt(k, 2);
	argv[0] = getenv("TWINLAB");
	cr_assert_not_null(argv[0]);
	cr_assert_str_eq(argv[2], "/twinlab/scenario.yaml");
	argv[2] = (char *)scenario;
	r = run_argv_output(argv, out, sizeof(out));
	cr_assert_eq(r, 0, "node %s: %s", n->name, out);
}

void clabdep_up(struct clabdep_host *h, int n, const char *stem,
		const char *scenario)
{
	char und[64], host[64], side[16], addr[32];

	snprintf(und, sizeof(und), "%su", stem);
	if (n > 1) {
		RUN("ip", "netns", "add", und);
		RUN("ip", "-n", und, "link", "add", "br0", "type", "bridge");
		RUN("ip", "-n", und, "link", "set", "br0", "up");
	}
	for (int k = 0; k < n; k++) {
		snprintf(host, sizeof(host), "%sh%d", stem, k + 1);
		snprintf(side, sizeof(side), "h%d", k + 1);
		snprintf(addr, sizeof(addr), "192.0.2.%d/24", k + 1);
		RUN("ip", "netns", "add", host);
		RUN("ip", "-n", host, "link", "set", "lo", "up");
		if (n > 1) {
			/* VXLAN's 50 bytes over the links' 1500 */
			veth(host, "und", und, side, "1550");
			RUN("ip", "-n", und, "link", "set", side, "master",
			    "br0");
			RUN("ip", "-n", host, "addr", "add", addr, "dev", "und");
		}
		for (int i = 0; i < h[k].nnodes; i++)
			RUN("ip", "netns", "add", h[k].node[i].ns);
	}
	for (int k = 0; k < n; k++) {
		snprintf(host, sizeof(host), "%sh%d", stem, k + 1);
		for (int i = 0; i < h[k].nlinks; i++) {
			const struct clabdep_link *l = &h[k].link[i];
			const char *a = clabdep_ns(&h[k], 1, l->node[0]);
			char mtu[16];

			cr_assert_not_null(a, "%s: no node %s", h[k].file,
					   l->node[0]);
			snprintf(mtu, sizeof(mtu), "%u", l->mtu ? l->mtu : 1500);
			if (!strcmp(l->type, "veth")) {
				const char *b = clabdep_ns(&h[k], 1, l->node[1]);

				cr_assert_not_null(b, "%s: no node %s",
						   h[k].file, l->node[1]);
				veth(a, l->ifname[0], b, l->ifname[1], mtu);
			} else {
				stitch(host, k, i, a, l);
			}
		}
	}
	for (int k = 0; k < n; k++)
		for (int i = 0; i < h[k].nnodes; i++)
			start(&h[k].node[i], scenario);
}

/* Remove namespace `name` if it is there. */
static void del_ns(const char *name)
{
	char *del[] = { "ip", "netns", "del", (char *)name, NULL };
	char out[256];

	run_argv_output(del, out, sizeof(out));
}

void clabdep_down(struct clabdep_host *h, int n, const char *stem)
{
	char name[96];

	for (int k = 0; k < n; k++) {
		for (int i = 0; i < h[k].nnodes; i++) {
			char *down[] = { getenv("TWINLAB"), "down", "--prefix",
					 h[k].node[i].prefix, NULL };
			char out[1024];

			if (down[0])
				run_argv_output(down, out, sizeof(out));
			del_ns(h[k].node[i].ns);
		}
		snprintf(name, sizeof(name), "%sh%d", stem, k + 1);
		del_ns(name);
	}
	snprintf(name, sizeof(name), "%su", stem);
	del_ns(name);
}
