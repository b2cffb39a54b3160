/* SPDX-License-Identifier: MIT */
/*
 * Deterministic IPv4 addressing of a plan, and (route.h) the hop-by-hop
 * routes that carry every tree edge: computed in the twin so the
 * emulation only applies them.
 *
 * From the scenario's range (default 198.18.0.0/15, RFC 2544), in order:
 * - one /31 per IP link: first the access link of every server (in node
 *   order), then every lightpath (by id). The router (access) or the
 *   lightpath's end a takes the even address, the server or end b the odd.
 * - two /32 per transfer of a round: for every task, for the broadcast
 *   then the upload tree, for every local model m, the address the
 *   transfer is sent from and the one it is sent to. Both sit on the
 *   access interface of their server. Every transfer has its own pair, so
 *   destination-based routes never conflict, whatever the trees; replies
 *   go back along the same path. A blocked task has its addresses too
 *   (and no routes): a task placed in one plan and not in another, over
 *   time (twin/lpset.h), shifts nobody's addresses.
 * - two /32 per background flow (plan.h, struct bg_flow), its source
 *   and destination, after the transfers', so the transfers' addresses
 *   are the same with traffic or without. A flow no path joins has its
 *   addresses too (and no routes), as a blocked task has: a flow routed
 *   in one plan and not in another shifts nobody's.
 */
#ifndef TWIN_ADDR_H
#define TWIN_ADDR_H

#include <stdint.h>

#include "plan.h"

struct endpoint {
	uint32_t src, dst;	/* host order */
};

struct route {
	int node;		/* router node index */
	uint32_t dst;		/* /32, host order */
	uint32_t via;		/* next-hop address */
	int link;		/* outgoing directed link, see plan_link */
};

struct addressing {
	uint32_t base;
	int prefix;
	/* per server node: its access /31 (router = even, server = odd) */
	uint32_t *access;	/* indexed by node; 0 for non-servers */
	uint32_t *lightpath;	/* per lightpath: end a; end b is +1 */
	/* per task, per model (1..n): [0] broadcast, [1] upload */
	int ntasks;
	struct endpoint **ep;	/* ep[task][2 * model + up] */
	/* per background flow of the plan (plan_background): its pair, on
	 * the interface of a server or the loopback of a router */
	int nbg;
	struct endpoint *bg;
	int nroutes;
	struct route *routes;
	uint32_t used;		/* addresses allocated */
};

/*
 * addressing_new - address every link and transfer of p and compute the
 * routes (routes_compute). NULL with errno: ENOSPC when the range is too small, ENOMEM.
 */
struct addressing *addressing_new(const struct plan *p)
	__attribute__((warn_unused_result));
void addressing_free(struct addressing *a);

/*
 * addr_each_transfer - fn(ctx, path, endpoints) for every transfer of every
 * placed task: by task, broadcast tree then upload tree, by local model.
 * Stops at the first nonzero fn returns, and returns it.
 */
int addr_each_transfer(const struct plan *p, const struct addressing *a,
		       int (*fn)(void *ctx, const struct ppath *pp,
				 const struct endpoint *ep),
		       void *ctx);

/* addr_task_transfers - the same for task t of p alone (none if blocked). */
int addr_task_transfers(const struct plan *p, const struct addressing *a,
			int t, int (*fn)(void *ctx, const struct ppath *pp,
					 const struct endpoint *ep),
			void *ctx);

/* The address of node `node` on directed link `link`'s near end. */
uint32_t addr_on_link(const struct plan *p, const struct addressing *a,
		      int link, int node);

/* Dotted quad into buf (at least 16 bytes). */
const char *addr_str(uint32_t a, char *buf);

#endif
