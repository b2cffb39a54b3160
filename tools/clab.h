/* SPDX-License-Identifier: MIT */
/*
 * A plan's emulation as containerlab topology files, one per host of a
 * split (twin/partition.h): every ROADM, router and server a `linux`
 * node, every veth of `twinlab up` a link of the same two interface
 * names, and each lit wavelength over a fibre between two hosts a
 * `vxlan-stitch` link at each end, one VNI for both directions (a VXLAN
 * interface sends and receives on one VNI). Each node's start command is
 * `twinlab up --node`: the same code as a whole `up` makes its addresses,
 * shapers, routes, cross-connects and delay line, in the container.
 */
#ifndef TOOLS_CLAB_H
#define TOOLS_CLAB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "twin/partition.h"

/* The MTU of every link: what `twinlab up`'s veths carry. */
#define CLAB_MTU 1500
/* VXLAN's own headers over IPv4 (outer IP, UDP, VXLAN, inner Ethernet). */
#define CLAB_VXLAN_OVERHEAD 50
#define CLAB_VXLAN_PORT 4789

struct clab_end {
	int node;
	char ifname[16];
};

struct clab_link {
	int host;
	bool vxlan;		/* vxlan-stitch: end[0] only, towards `remote` */
	struct clab_end end[2];
	unsigned vni;
	int remote;		/* vxlan: the host at the other end */
	int fibre, lambda;	/* a line link's, else -1 */
};

struct clab {
	const struct plan *p;
	const struct partition *pt;
	uint32_t *underlay;	/* per host: its IPv4 address (host order) */
	struct clab_link *link;
	int nlinks;
};

/*
 * clab_build - the links of p split as pt says, hosts reached at
 * underlay[h] (copied). 0, or -ENOMEM.
 */
int clab_build(const struct plan *p, const struct partition *pt,
	       const uint32_t *underlay, struct clab *out)
	__attribute__((warn_unused_result));

void clab_release(struct clab *c);

/*
 * clab_check - what containerlab's schema cannot check: node names
 * containerlab takes, interface names of at most 15 bytes, every link's
 * ends on nodes of its host, each interface in one link, VNIs unique per
 * host and mirrored (each tunnel end's VNI at the host it names, naming
 * this one back), and every lightpath a contiguous chain across hosts:
 * router lp<l> - ROADM ad<l> - f<fibre>w<lambda> ... - ad<l> - router.
 * 0, or -EINVAL with the first fault in why.
 */
int clab_check(const struct clab *c, char *why, size_t len);

struct clab_opts {
	const char *lab;	/* the topology's name (a host's: <lab>-h<k>) */
	const char *prefix;	/* nodes' prefixes: <prefix><node index> */
	const char *image;	/* every node's */
	const char *scheduler;
	const char *twinlab;	/* the twinlab binary bound into the nodes */
	double dilation;
};

/*
 * clab_write - host h's topology file to f (YAML, through libyaml's
 * emitter: every string quoted as YAML needs). 0, or -EIO / -ENOMEM.
 */
int clab_write(const struct clab *c, int host, const struct clab_opts *o,
	       FILE *f) __attribute__((warn_unused_result));

#endif
