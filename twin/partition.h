/* SPDX-License-Identifier: MIT */
/*
 * A plan's emulation split over several hosts, for a network too big for
 * one machine: each ROADM site (the ROADM, its routers, their servers
 * and delay lines) stays whole on one host, and only ROADM–ROADM fibres
 * are cut. A wavelength lit over a cut fibre becomes, per direction, one
 * tunnel between the two hosts (VXLAN: a VNI each). The split balances
 * the workers (the models placed on each site's servers: CPU) and cuts
 * as few lit wavelengths as it can: METIS's k-way partitioner on the
 * graph of sites (weights: workers) and fibres (weights: lit
 * wavelengths), several runs, the best kept: within PART_BALANCE the
 * fewest tunnels, else the best balance.
 */
#ifndef TWIN_PARTITION_H
#define TWIN_PARTITION_H

#include <stdbool.h>
#include <stddef.h>

#include "plan.h"

/* Hosts a plan may be split over. */
#define PART_HOSTS_MAX 256
/* The balance a split aims at: the most loaded host's workers at most
 * this much over the mean. */
#define PART_BALANCE 1.1

/* One direction of a lit wavelength over a cut fibre: a tunnel. */
struct part_tunnel {
	int fibre, lambda;
	int dir;		/* 0: the fibre's a -> b, 1: b -> a */
	int from, to;		/* hosts */
	unsigned vni;		/* partition_vni */
};

struct partition {
	int nhosts;
	int *host;		/* per scenario node: its host */
	long *workers;		/* per host: models placed on its servers */
	int *namespaces;	/* per host: ROADMs, routers and servers */
	int ncut_fibres;	/* fibres between two hosts */
	int ntunnels;		/* lit wavelength directions over them */
	struct part_tunnel *tunnel;
	double balance;		/* the most loaded host's workers / mean */
	int wmax;		/* the most wavelengths a fibre has */
};

/* The VNI of wavelength lambda of fibre `fibre`, direction dir (0: a -> b):
 * 1 + 2 (fibre x wmax + lambda) + dir. */
unsigned partition_vni(const struct partition *pt, int fibre, int lambda,
		       int dir);

/*
 * partition_plan - split plan p over nhosts hosts: by METIS (naive
 * false) or naively (naive true: the sites in file order, filled host by
 * host up to an equal share of the workers — what the split is compared
 * with). 0, or -EINVAL with why (fewer ROADM sites than hosts, a host
 * count out of 1..PART_HOSTS_MAX), -ENOMEM, -EIO (METIS failed).
 * Deterministic.
 */
int partition_plan(const struct plan *p, int nhosts, bool naive,
		   struct partition *out, char *why, size_t len)
	__attribute__((warn_unused_result));

void partition_release(struct partition *pt);

#endif
