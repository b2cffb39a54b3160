/* SPDX-License-Identifier: MIT */
/*
 * The hop-by-hop routes that carry every tree edge (addr.h has the
 * addresses they lead to). Servers route everything through their
 * router. Each router on a transfer's path gets a /32 route to the
 * destination address towards the next hop, and one to the source address
 * back towards the previous hop; every transfer has its own pair of
 * addresses, so destination-based routes never conflict.
 */
#ifndef TWIN_ROUTE_H
#define TWIN_ROUTE_H

#include "addr.h"

/*
 * routes_compute - a->routes for every transfer of every placed task of
 * p, in task, tree (broadcast, upload) and model order, then for each
 * routed background flow (from or to a router too: its own routes are
 * there), once a's addresses are assigned. 0 or -ENOMEM.
 */
int routes_compute(const struct plan *p, struct addressing *a)
	__attribute__((warn_unused_result));

#endif
