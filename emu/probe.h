/* SPDX-License-Identifier: MIT */
/*
 * What this kernel offers the emulation, found by trying it in a throwaway
 * network namespace (a child process that unshares one), never assumed.
 */
#ifndef EMU_PROBE_H
#define EMU_PROBE_H

#include <stdbool.h>

struct probe {
	bool root;
	bool netns;
	bool veth;
	bool tbf, htb, ingress, clsact;		/* qdiscs */
	bool fair;		/* tbf over htb classes, bfifo leaves, u32 */
	bool u32, mirred;			/* classifier, action */
	bool netem;		/* a netem qdisc with a delay can be made */
	bool nfqueue;		/* a packet reaches a queue by an iptables rule */
	bool loss;		/* an iptables statistic rule drops packets */
	bool cgroup_v1, cgroup_v2;		/* controllers mounted */
	char kernel[400];
};

/* probe_run - fill *pr. 0 or -errno (the probe itself could not run). */
int probe_run(struct probe *pr) __attribute__((warn_unused_result));

#endif
