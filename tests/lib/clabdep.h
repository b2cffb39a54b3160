/* SPDX-License-Identifier: MIT */
/*
 * Deploying the topology files `twinlab export` writes the way
 * containerlab would, with namespaces for containers: each node a
 * namespace "<its --prefix>-<node>" (the name `up --node` looks for),
 * each veth link a veth pair of the two interface names, each
 * vxlan-stitch link a veth from the node to its host's namespace stitched
 * by tc to a VXLAN interface there (containerlab's own stitch), the hosts'
 * namespaces "<stem>h<k>" joined by an underlay veth; then every node's
 * exec command, run from the root namespace with twinlab and the scenario
 * from this tree. For tests: every step asserts.
 */
#ifndef TESTS_LIB_CLABDEP_H
#define TESTS_LIB_CLABDEP_H

#include <stdint.h>

#define CLABDEP_NODES_MAX 64
#define CLABDEP_LINKS_MAX 256

struct clabdep_node {
	char name[64], prefix[16], ns[96];
	char exec[512];
};

struct clabdep_link {
	char type[16];		/* veth or vxlan-stitch */
	char node[2][64], ifname[2][16];
	char remote[16];
	unsigned vni, port, mtu;
};

struct clabdep_host {
	char file[512];
	struct clabdep_node node[CLABDEP_NODES_MAX];
	int nnodes;
	struct clabdep_link link[CLABDEP_LINKS_MAX];
	int nlinks;
};

/* The nodes and links of a topology file (asserts it parses). */
void clabdep_load(const char *path, struct clabdep_host *h);

/*
 * Deploy hosts h[0..n) (their underlay addresses 192.0.2.<k+1>, as
 * export gives them by default) under stem, then start every node.
 */
void clabdep_up(struct clabdep_host *h, int n, const char *stem,
		const char *scenario);

/* Remove it all: every node's part (twinlab down), every namespace. */
void clabdep_down(struct clabdep_host *h, int n, const char *stem);

/* The namespace of node `name`, or NULL. */
const char *clabdep_ns(const struct clabdep_host *h, int n, const char *name);

#endif
